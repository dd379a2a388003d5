//! What every board has: its pieces, the sensors that sample them, its line, a power switch,
//! and which way round it lies; and the requests it has yet to act on.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::Square;

use super::DeviceOptions;
use super::arrangement::Arrangement;
use super::line::Line;
use super::sensors::{Sensed, Sensors};
use crate::board::kind::BoardKind;
use crate::board::{Millis, ObservationKind};

/// What a physical change did to the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Nothing on the board changed.
    Nothing,
    /// The arrangement the board was switched on with: read at once.
    Initial,
    /// Squares changed; the sensors find them at their next samples.
    Changed,
}

/// A board's body.
#[derive(Debug, Clone)]
pub struct Hardware {
    pub arrangement: Arrangement,
    pub sensors: Sensors,
    pub line: Line,
    pub rng: ChaCha8Rng,
    rotated: bool,
    powered: bool,
    /// The arrangement has changed since the board was built.
    touched: bool,
    takes_result_pieces: bool,
}

/// The bytes a second of each kind's line when the options do not say: a DGT board's 9600
/// baud 8N1 (protocols 1.1), 38400 baud for the others (Millennium 7O1, Certabo 8N1,
/// Chessnut's USB serial: ten bits a character). No document gives a Pegasus's Bluetooth
/// throughput: it is given DGT's.
fn line_bytes_per_s(kind: BoardKind) -> u32 {
    match kind {
        BoardKind::Dgt | BoardKind::Pegasus => 960,
        _ => 3840,
    }
}

impl Hardware {
    /// The body of a board of `kind`: empty, powered, its link open.
    pub fn new(kind: BoardKind, options: &DeviceOptions) -> Hardware {
        let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
        let scan_ms = options.scan_ms.unwrap_or(kind.scan_period_ms()).max(1);
        let phase = rng.gen_range(0..scan_ms);
        let rate = options
            .line_bytes_per_s
            .unwrap_or_else(|| line_bytes_per_s(kind));
        Hardware {
            arrangement: Arrangement::new(),
            sensors: Sensors::new(scan_ms, phase),
            line: Line::new(rate),
            rng,
            rotated: options.rotated,
            powered: true,
            touched: false,
            takes_result_pieces: kind == BoardKind::Dgt,
        }
    }

    /// The board's field (0 = the a8 corner of its hardware … 63) under `square`.
    pub fn field(&self, square: Square) -> usize {
        let normal = (7 - usize::from(square.rank())) * 8 + usize::from(square.file());
        if self.rotated { 63 - normal } else { normal }
    }

    /// Applies what the hands did at `t_ms`; the caller has taken the samples up to then.
    pub fn apply(&mut self, t_ms: Millis, what: &ObservationKind) -> Applied {
        if matches!(what, ObservationKind::MagicPiece(..)) && !self.takes_result_pieces {
            return Applied::Nothing;
        }
        let changed = self.arrangement.apply(what);
        if changed.is_empty() {
            return Applied::Nothing;
        }
        for square in changed {
            let man = self.arrangement.at(square);
            let field = self.field(square);
            self.sensors.place(t_ms, field, man);
        }
        let initial = !self.touched && matches!(what, ObservationKind::Snapshot(_));
        self.touched = true;
        if initial {
            self.sensors.read_all();
            Applied::Initial
        } else {
            Applied::Changed
        }
    }

    /// Takes the samples due up to `t_ms` (none while the board is off).
    pub fn sample_until(&mut self, t_ms: Millis) -> Vec<Sensed> {
        let mut found = Vec::new();
        if self.powered {
            self.sensors.sample_until(t_ms, &mut found);
        }
        found
    }

    /// Whether the board has power.
    pub fn powered(&self) -> bool {
        self.powered
    }

    /// True when the board can hear the host: powered, its link open.
    pub fn listening(&self) -> bool {
        self.powered && self.line.is_open()
    }

    /// Power lost or restored at `t_ms`: off, nothing is sampled and what was still to leave
    /// on the line is lost; on, the sensors read every field at once.
    pub fn set_power(&mut self, t_ms: Millis, on: bool) {
        self.powered = on;
        self.sensors.set_on(on);
        if !on {
            self.line.cut(t_ms);
        }
    }
}

/// The earliest of the times given.
pub fn earliest<const N: usize>(times: [Option<Millis>; N]) -> Option<Millis> {
    times.into_iter().flatten().min()
}

/// Requests a board has yet to act on, each with the time it is due.
#[derive(Debug, Clone)]
pub struct Pending<T> {
    items: Vec<(Millis, T)>,
}

impl<T> Default for Pending<T> {
    fn default() -> Self {
        Pending { items: Vec::new() }
    }
}

impl<T> Pending<T> {
    /// `item` is due at `due_ms`.
    pub fn push(&mut self, due_ms: Millis, item: T) {
        self.items.push((due_ms, item));
    }

    /// The earliest due time.
    pub fn next_due(&self) -> Option<Millis> {
        self.items.iter().map(|(t, _)| *t).min()
    }

    /// The earliest item due by `t_ms` (the first queued among equals).
    pub fn pop_due(&mut self, t_ms: Millis) -> Option<(Millis, T)> {
        let (i, _) = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, (due, _))| *due <= t_ms)
            .min_by_key(|(i, (due, _))| (*due, *i))?;
        Some(self.items.remove(i))
    }

    /// Forgets everything (the board lost power).
    pub fn clear(&mut self) {
        self.items.clear();
    }
}
