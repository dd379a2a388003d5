//! The board's end of its serial line (or radio link): bytes leave one after another at the
//! line's speed, so a long message takes its time and whatever follows waits behind it.
//!
//! What the board writes is cut into chunks of at most [`CHUNK_BYTES`], each leaving when its
//! last byte does, as a host reading a serial port gets it. Bytes that leave while the link
//! is closed are lost; bytes not yet sent when the power goes are lost too.

use std::collections::VecDeque;

use crate::board::Millis;

/// The longest chunk handed to the host at once.
pub const CHUNK_BYTES: usize = 256;

/// Bytes in flight and bytes that have left.
#[derive(Debug, Clone)]
pub struct Line {
    bytes_per_s: u64,
    /// When the last byte queued leaves, in microseconds.
    free_at_us: u64,
    in_flight: VecDeque<(Millis, Vec<u8>)>,
    left: Vec<(Millis, Vec<u8>)>,
    open: bool,
}

impl Line {
    /// An idle, open line carrying `bytes_per_s` (at least 1).
    pub fn new(bytes_per_s: u32) -> Line {
        Line {
            bytes_per_s: u64::from(bytes_per_s.max(1)),
            free_at_us: 0,
            in_flight: VecDeque::new(),
            left: Vec::new(),
            open: true,
        }
    }

    /// Queues `bytes`, ready to go at `ready_ms`.
    pub fn send(&mut self, ready_ms: Millis, bytes: &[u8]) {
        let mut at_us = self.free_at_us.max(ready_ms * 1000);
        for chunk in bytes.chunks(CHUNK_BYTES) {
            at_us += chunk.len() as u64 * 1_000_000 / self.bytes_per_s;
            self.in_flight
                .push_back((at_us.div_ceil(1000), chunk.to_vec()));
        }
        self.free_at_us = at_us;
    }

    /// True when nothing queued is still leaving after `t_ms`.
    pub fn idle_at(&self, t_ms: Millis) -> bool {
        self.free_at_us <= t_ms * 1000
    }

    /// Lets the bytes that leave by `t_ms` go: to the host while the link is open, nowhere
    /// while it is closed.
    pub fn advance(&mut self, t_ms: Millis) {
        while let Some(chunk) = self.in_flight.pop_front() {
            if chunk.0 > t_ms {
                self.in_flight.push_front(chunk);
                break;
            }
            if self.open {
                self.left.push(chunk);
            }
        }
    }

    /// When the next chunk has left (or already left, not yet handed out).
    pub fn next_leave(&self) -> Option<Millis> {
        self.left
            .first()
            .or(self.in_flight.front())
            .map(|(t, _)| *t)
    }

    /// Hands out the chunks that have left.
    pub fn take(&mut self, out: &mut Vec<(Millis, Vec<u8>)>) {
        out.append(&mut self.left);
    }

    /// Whether the host's end is connected.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// The host's end connected or not from now on.
    pub fn set_open(&mut self, open: bool) {
        self.open = open;
    }

    /// The power went at `t_ms`: what was still to leave never does.
    pub fn cut(&mut self, t_ms: Millis) {
        self.in_flight.clear();
        self.free_at_us = t_ms * 1000;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_leave_at_the_lines_speed_and_are_lost_while_the_link_is_closed() {
        let mut line = Line::new(960);
        line.send(0, &[0x80; 600]);
        line.send(10, &[1, 2, 3]);
        assert_eq!(line.next_leave(), Some(267));
        line.advance(300);
        line.set_open(false);
        line.advance(600);
        line.set_open(true);
        line.advance(1000);
        let mut out = Vec::new();
        line.take(&mut out);
        let times: Vec<(Millis, usize)> = out.iter().map(|(t, b)| (*t, b.len())).collect();
        assert_eq!(
            times,
            [(267, 256), (625, 88), (629, 3)],
            "the second chunk (534 ms) is lost"
        );
        assert!(line.idle_at(629) && !line.idle_at(628));
    }
}
