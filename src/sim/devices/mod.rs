//! Board-side models of every kind of board, for the deterministic simulation of whole
//! events: pure state machines in virtual time, with no I/O and no clock of their own.
//!
//! Every byte a board sends, and the reading of every command a host sends it, is written
//! here from the protocol document (`shared/protocols/eboard-protocols.md`, cited by section
//! as "protocols 1.7"), independently of the host's decoders in `wire/`: the simulation
//! checks one implementation against the other.
//!
//! A [`Device`] is given what the hands do ([`Device::physical`]), what the host writes
//! ([`Device::receive`]), the cable or radio link ([`Device::connection`]) and the power
//! ([`Device::power`]), each at a time in milliseconds since the simulation began, in
//! non-decreasing order; [`Device::transmit`] hands out what it put on the line meanwhile.
//! What every kind shares lives in one file per concept:
//!
//! * `arrangement`: the pieces on the squares and beside the board, each an object of its
//!   own (a Certabo board reads a tag per piece);
//! * `sensors`: squares sampled one by one in a sweep of one scan, so that a change shows
//!   up to a scan late, two changes of one sweep come in sampling order, and a piece lifted
//!   and put back between two samples of its square is never seen (protocols 1.7);
//! * `line`: the serial line (or radio link) with its speed, so that a long message (a DGT
//!   move log, a Certabo frame) takes its time and what follows waits behind it;
//! * `hardware`: the three together with the power switch and the board's orientation;
//! * `firmware`: what each kind's program does on that hardware, and the one [`Device`]
//!   every program makes.

mod arrangement;
mod certabo;
mod chessnut;
mod dgt;
mod dgt_clock;
mod dgt_framing;
mod eeprom;
mod firmware;
mod hardware;
mod line;
mod millennium;
mod pegasus;
mod sensors;
#[cfg(test)]
mod test_host;

use crate::board::kind::BoardKind;
use crate::board::{Millis, ObservationKind};
use crate::clock::TimeControl;

/// A board of one kind, seen from the board's side of its cable.
pub trait Device: Send {
    /// The kind of board.
    fn kind(&self) -> BoardKind;
    /// What the hands did at `t_ms`, in game coordinates: a square emptied, a piece placed
    /// (`Placed(sq, Some(piece))`: hands always place a real piece; an occupancy-only board
    /// hides the identity itself; `None` puts down the piece last taken off the board), a
    /// whole arrangement set up (`Snapshot`), a clock press (`ClockPressed`), a DGT result
    /// piece (`MagicPiece`). Kinds without a clock ignore presses; kinds other than DGT
    /// ignore result pieces. A `Snapshot` before anything else happened is the arrangement
    /// the board was switched on with.
    fn physical(&mut self, t_ms: Millis, what: &ObservationKind);
    /// Bytes the host wrote, arriving at `t_ms` (lost while the board is off or the link
    /// is closed).
    fn receive(&mut self, t_ms: Millis, bytes: &[u8]);
    /// Everything the board put on the line up to and including `t_ms`, in order, each chunk
    /// with the time its last byte left the board (scans, streamed frames, replies to
    /// commands). A message longer than a chunk is cut into several.
    fn transmit(&mut self, t_ms: Millis, out: &mut Vec<(Millis, Vec<u8>)>);
    /// The next time the board will send something (its next scan, a pending reply, a clock
    /// message), or None if it will send nothing until something happens. Never later than
    /// the next chunk; it may be a moment at which the board only samples a square again
    /// and finds the piece put back.
    fn next_transmit_ms(&self) -> Option<Millis>;
    /// The host's connection closed at `t_ms` (cable out, Bluetooth dropped) / opened again.
    /// What the board keeps across it is the board's documented behaviour; what it sends
    /// while the link is closed is lost.
    fn connection(&mut self, t_ms: Millis, open: bool);
    /// Power lost / restored at `t_ms`: volatile state (DGT update mode, Chessnut real-time
    /// mode, Pegasus key) is lost; the pieces stay where they are, and a DGT board's EEPROM
    /// move log (and a Millennium board's EEPROM registers) survive.
    fn power(&mut self, t_ms: Millis, on: bool);
    /// The arbiter sets the board's clock for a new round at `t_ms`: stopped, each side's
    /// time that of the control's start. Kinds without a clock have nothing to set.
    fn clock_set(&mut self, _t_ms: Millis) {}
}

/// How often a Certabo reader misreads.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TagNoise {
    /// The chance that an occupied square reads a wrong (random) id in one frame. No
    /// capture measures it: three real frames of a start position read all 96 occupied
    /// squares right.
    pub misread: f64,
    /// The chance that an empty square reads a random id in one frame: 24 of the 96 empty
    /// squares in the three real frames of `fixtures/certabo/start-frames.txt`.
    pub ghost: f64,
}

impl Default for TagNoise {
    fn default() -> Self {
        TagNoise {
            misread: 0.005,
            ghost: 0.25,
        }
    }
}

/// How a device is built. [`DeviceOptions::new`] gives every kind's documented defaults.
#[derive(Debug, Clone)]
pub struct DeviceOptions {
    /// Seed of everything random: the scan's phase, the order of a DGT board's power-up
    /// records, Certabo tag ids and reader noise.
    pub seed: u64,
    /// Time between two scans; `None` is the kind's ([`BoardKind::scan_period_ms`]).
    pub scan_ms: Option<Millis>,
    /// Extra delay before the board acts on and answers a host request (a late handshake).
    pub reply_delay_ms: Millis,
    /// The board is turned round (White at the far end): every field is numbered from the
    /// other corner (protocols 1.5), as the board's hardware does not know.
    pub rotated: bool,
    /// Bytes a second the line carries; `None` is the kind's (a DGT board's 9600 baud 8N1
    /// carries 960, the 38400-baud boards 3840).
    pub line_bytes_per_s: Option<u32>,
    /// DGT: the board keeps its EEPROM move log and answers its request (protocols 1.13).
    pub move_log: bool,
    /// DGT: the DGT 3000 connected to the board, set to this time control (its periods'
    /// times and Fischer increments, a period's time added when the one before reaches its
    /// move count; delays are not modelled); `None`, or a control without a time (unknown,
    /// unlimited), for a board without a clock.
    pub clock: Option<TimeControl>,
    /// DGT: White sits on the clock's left side.
    pub white_on_clock_left: bool,
    /// Certabo: how often the readers misread.
    pub tag_noise: TagNoise,
    /// Certabo: spare queens stand on d3 (White) and d6 (Black) with the arrangement the
    /// board is switched on with, so that the host can learn their tags (protocols 2.2),
    /// and are taken off at the first change of the arrangement.
    pub spare_queens: bool,
    /// Pegasus: the developer key it accepts; `None` accepts any six-byte key.
    pub developer_key: Option<[u8; 6]>,
}

impl DeviceOptions {
    /// The defaults with `seed`: the kind's scan and line, no reply delay, not turned round,
    /// a move log, a DGT 3000 set to 5 minutes + 5 seconds (the real capture's) with White on
    /// its left, Certabo's measured noise and spare queens, any Pegasus key.
    pub fn new(seed: u64) -> Self {
        DeviceOptions {
            seed,
            scan_ms: None,
            reply_delay_ms: 0,
            rotated: false,
            line_bytes_per_s: None,
            move_log: true,
            clock: TimeControl::parse("300+5").ok(),
            white_on_clock_left: true,
            tag_noise: TagNoise::default(),
            spare_queens: true,
            developer_key: None,
        }
    }
}

impl Default for DeviceOptions {
    fn default() -> Self {
        DeviceOptions::new(1)
    }
}

/// A board of `kind` built with `options`: empty, powered, its connection open.
pub fn device(kind: BoardKind, options: DeviceOptions) -> Box<dyn Device> {
    match kind {
        BoardKind::Dgt => Box::new(dgt::DgtBoard::new(&options)),
        BoardKind::Millennium => Box::new(millennium::MillenniumBoard::new(&options)),
        BoardKind::Certabo | BoardKind::Sentio => {
            Box::new(certabo::CertaboBoard::new(kind, &options))
        }
        BoardKind::Chessnut => Box::new(chessnut::ChessnutBoard::new(&options)),
        BoardKind::Pegasus => Box::new(pegasus::PegasusBoard::new(&options)),
    }
}
