//! A board's sensors: squares sampled one by one, a sweep over all 64 taking one scan.
//!
//! DGT documents it for its boards (protocols 1.7): "squares are sampled one by one; a full
//! scan takes ~200–250 ms". Field `f` (in the board's own numbering, 0 = the a8 corner of the
//! hardware) is sampled at `phase + k × scan + f × scan / 64`. A sample sees the pieces as
//! they stand at that moment, so a change shows at the first sample of its field after it
//! (up to a scan late), two changes of one sweep are found in sampling order, and a piece
//! lifted and put back between two samples of its field is never seen. Boards that send
//! whole pictures send, at the end of each sweep, what the sweep found.
//!
//! Only fields changed since their last sample are sampled again: the others cannot have
//! changed.

use crate::board::Millis;

use super::arrangement::Man;

/// A change a sample found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sensed {
    /// When the field was sampled.
    pub t_ms: Millis,
    /// The field (the board's numbering).
    pub field: usize,
    /// What was sensed there before.
    pub before: Option<Man>,
    /// What is sensed there now.
    pub after: Option<Man>,
}

/// The sweep and what it has found.
#[derive(Debug, Clone)]
pub struct Sensors {
    scan_ms: Millis,
    /// When a sweep began (any sweep: they follow each other every `scan_ms`).
    phase: Millis,
    on: bool,
    physical: [Option<Man>; 64],
    sensed: [Option<Man>; 64],
    /// The next sample of each field changed since its last one.
    due: [Option<Millis>; 64],
    /// The earliest of `due`: most of the time no field waits for a sample.
    first_due: Option<Millis>,
}

impl Sensors {
    /// Sensors sweeping every `scan_ms` (at least 1), a sweep beginning at `phase`, on an
    /// empty board.
    pub fn new(scan_ms: Millis, phase: Millis) -> Sensors {
        Sensors {
            scan_ms: scan_ms.max(1),
            phase,
            on: true,
            physical: [None; 64],
            sensed: [None; 64],
            due: [None; 64],
            first_due: None,
        }
    }

    /// The time between two sweeps.
    pub fn scan_ms(&self) -> Millis {
        self.scan_ms
    }

    /// What the sensors found on each field.
    pub fn sensed(&self) -> &[Option<Man>; 64] {
        &self.sensed
    }

    /// The first sample of `field` strictly after `t_ms`.
    fn sample_after(&self, field: usize, t_ms: Millis) -> Millis {
        let first = self.phase + field as Millis * self.scan_ms / 64;
        if t_ms < first {
            first
        } else {
            first + ((t_ms - first) / self.scan_ms + 1) * self.scan_ms
        }
    }

    /// The end of the sweep under way at `t_ms` (strictly after it).
    pub fn sweep_end_after(&self, t_ms: Millis) -> Millis {
        if t_ms < self.phase {
            return self.phase;
        }
        self.phase + ((t_ms - self.phase) / self.scan_ms + 1) * self.scan_ms
    }

    /// What stands on `field` changed at `t_ms` (samples up to `t_ms` already taken).
    pub fn place(&mut self, t_ms: Millis, field: usize, man: Option<Man>) {
        self.physical[field] = man;
        if self.on && self.due[field].is_none() {
            let at = self.sample_after(field, t_ms);
            self.due[field] = Some(at);
            self.first_due = Some(self.first_due.map_or(at, |first| first.min(at)));
        }
    }

    /// The next sample that may find a change.
    pub fn next_due(&self) -> Option<Millis> {
        self.first_due
    }

    /// Takes every sample due up to `t_ms`, in time order (fields in order at equal times),
    /// appending what changed to `out`.
    pub fn sample_until(&mut self, t_ms: Millis, out: &mut Vec<Sensed>) {
        if self.first_due.is_none_or(|first| first > t_ms) {
            return;
        }
        while let Some((field, at)) = (0..64)
            .filter_map(|f| self.due[f].map(|at| (f, at)))
            .filter(|&(_, at)| at <= t_ms)
            .min_by_key(|&(f, at)| (at, f))
        {
            self.due[field] = None;
            let now = self.physical[field];
            if self.sensed[field] != now {
                out.push(Sensed {
                    t_ms: at,
                    field,
                    before: self.sensed[field],
                    after: now,
                });
                self.sensed[field] = now;
            }
        }
        self.first_due = self.due.iter().flatten().min().copied();
    }

    /// Sensors off (no samples) or on again: switched on, they read every field at once.
    pub fn set_on(&mut self, on: bool) {
        self.on = on;
        self.due = [None; 64];
        self.first_due = None;
        if on {
            self.sensed = self.physical;
        }
    }

    /// Every field read at once (the arrangement the board was switched on with).
    pub fn read_all(&mut self) {
        self.set_on(self.on);
    }

    /// The sweep takes `scan_ms` from `t_ms` on (a new sweep begins then).
    pub fn set_scan(&mut self, t_ms: Millis, scan_ms: Millis) {
        self.scan_ms = scan_ms.max(1);
        self.phase = t_ms;
        for field in 0..64 {
            if self.due[field].is_some() {
                self.due[field] = Some(self.sample_after(field, t_ms));
            }
        }
        self.first_due = self.due.iter().flatten().min().copied();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::devices::arrangement::Shape;
    use shakmaty::{Color, Role};

    fn pawn(id: u32) -> Option<Man> {
        Some(Man {
            id,
            shape: Shape::Piece(Role::Pawn.of(Color::White)),
        })
    }

    #[test]
    fn changes_are_found_in_sampling_order_and_a_quick_touch_is_not_seen() {
        // Field 52 (e2) is sampled at 203 + 250k, field 36 (e4) at 140 + 250k.
        let mut sensors = Sensors::new(250, 0);
        sensors.place(0, 52, pawn(1));
        sensors.read_all();
        sensors.place(100, 52, None);
        sensors.place(120, 36, pawn(1));
        sensors.place(300, 10, pawn(2));
        sensors.place(320, 10, None);
        let mut out = Vec::new();
        sensors.sample_until(1000, &mut out);
        let found: Vec<(Millis, usize)> = out.iter().map(|s| (s.t_ms, s.field)).collect();
        assert_eq!(found, [(140, 36), (203, 52)]);
        assert_eq!(sensors.next_due(), None);
    }

    #[test]
    fn a_sweep_ends_every_scan_and_a_new_scan_time_starts_a_sweep() {
        let mut sensors = Sensors::new(41, 7);
        assert_eq!(sensors.sweep_end_after(0), 7);
        assert_eq!(sensors.sweep_end_after(7), 48);
        sensors.set_scan(100, 31);
        assert_eq!(sensors.sweep_end_after(100), 131);
    }
}
