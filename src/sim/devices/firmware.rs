//! What each kind's firmware does on the shared [`Hardware`], and the [`Device`] every
//! firmware makes: the plumbing of time (everything due is done in time order before
//! anything new happens), of the line, the link and the power switch is here once.

use super::Device;
use super::hardware::{Hardware, earliest};
use crate::board::kind::BoardKind;
use crate::board::{Millis, ObservationKind};

/// A kind's program.
pub trait Firmware: Send {
    /// The kind of board it runs.
    fn kind(&self) -> BoardKind;
    fn hardware(&self) -> &Hardware;
    fn hardware_mut(&mut self) -> &mut Hardware;
    /// The next moment it has something to do while powered (a sample it acts on, a
    /// request, the end of a scan, a clock tick).
    fn next_event(&self) -> Option<Millis>;
    /// The next moment it sends something while powered (never later than it does).
    fn next_output(&self) -> Option<Millis>;
    /// Does everything due at `at`.
    fn step(&mut self, at: Millis);
    /// The hands did `what` at `t_ms`; everything due until then is done.
    fn on_physical(&mut self, t_ms: Millis, what: &ObservationKind) {
        self.hardware_mut().apply(t_ms, what);
    }
    /// Bytes from the host arrived at `t_ms`, the board powered and its link open.
    fn on_bytes(&mut self, t_ms: Millis, bytes: &[u8]);
    /// The link closed or opened again.
    fn on_link(&mut self, _open: bool) {}
    /// The power went or came back at `t_ms` (the hardware already switched).
    fn on_power(&mut self, t_ms: Millis, on: bool);
    /// The arbiter set the clock for a new round at `t_ms` (see [`Device::clock_set`]).
    fn on_clock_set(&mut self, _t_ms: Millis) {}
}

/// Does everything due up to `t_ms`, in time order, and lets the line carry what leaves.
fn advance<F: Firmware>(firmware: &mut F, t_ms: Millis) {
    while firmware.hardware().powered()
        && let Some(at) = firmware.next_event().filter(|&at| at <= t_ms)
    {
        firmware.step(at);
    }
    // Samples nothing acts on still read the board before what happens at `t_ms`.
    let hardware = firmware.hardware_mut();
    hardware.sample_until(t_ms);
    hardware.line.advance(t_ms);
}

impl<F: Firmware> Device for F {
    fn kind(&self) -> BoardKind {
        Firmware::kind(self)
    }

    fn physical(&mut self, t_ms: Millis, what: &ObservationKind) {
        advance(self, t_ms);
        self.on_physical(t_ms, what);
    }

    fn receive(&mut self, t_ms: Millis, bytes: &[u8]) {
        advance(self, t_ms);
        if self.hardware().listening() {
            self.on_bytes(t_ms, bytes);
        }
    }

    fn transmit(&mut self, t_ms: Millis, out: &mut Vec<(Millis, Vec<u8>)>) {
        advance(self, t_ms);
        self.hardware_mut().line.take(out);
    }

    fn next_transmit_ms(&self) -> Option<Millis> {
        let output = self.hardware().powered().then(|| self.next_output());
        earliest([self.hardware().line.next_leave(), output.flatten()])
    }

    fn connection(&mut self, t_ms: Millis, open: bool) {
        advance(self, t_ms);
        self.hardware_mut().line.set_open(open);
        self.on_link(open);
    }

    fn power(&mut self, t_ms: Millis, on: bool) {
        advance(self, t_ms);
        if on != self.hardware().powered() {
            self.hardware_mut().set_power(t_ms, on);
            self.on_power(t_ms, on);
        }
    }

    fn clock_set(&mut self, t_ms: Millis) {
        advance(self, t_ms);
        self.on_clock_set(t_ms);
    }
}
