//! A DGT 3000 clock connected to a DGT board, and the clock message (BWTIME, protocols
//! 1.8–1.10) the board sends for it.
//!
//! The clock shows whole seconds, rounded up, as the real capture does (a 5 + 5 game shows
//! 0:05:05 on both sides before the start, 0:05:05 when it starts and 0:05:04 a second
//! later). It stands until the first press: pressing the lever that is down (Black starting
//! White's clock) starts the side whose lever is up; pressing the lever that is up stops
//! that side, adds its Fischer increment once the clock runs, and starts the other. A side
//! that reaches zero shows its flag and blocks the clock.

use shakmaty::Color;

use crate::board::Millis;
use crate::clock::{Bonus, TimeControl};

/// A side of the clock, as seen from its front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }

    fn index(self) -> usize {
        match self {
            Side::Left => 0,
            Side::Right => 1,
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Period {
    moves: Option<u32>,
    base_ms: u64,
    increment_ms: u64,
}

/// The clock's state.
#[derive(Debug, Clone)]
pub struct Dgt3000 {
    periods: Vec<Period>,
    /// Each side's time (left, right) as of `since`.
    remaining: [u64; 2],
    since: Millis,
    running: Option<Side>,
    /// The side whose lever is up: its time runs, or would.
    lever_up: Side,
    started: bool,
    flag: [bool; 2],
    moves: [u32; 2],
    period: [usize; 2],
    white: Side,
}

/// The longest time the display shows: 9:59:59.
const MAX_SHOWN_S: u64 = 9 * 3600 + 59 * 60 + 59;

impl Dgt3000 {
    /// A clock set to `control` with White on the left side or not; `None` for a control
    /// with no time to set (unknown, unlimited). An hourglass is set to its time only.
    pub fn new(control: &TimeControl, white_on_left: bool) -> Option<Dgt3000> {
        let mut periods: Vec<Period> = control
            .periods()
            .iter()
            .map(|p| Period {
                moves: p.moves,
                base_ms: p.base_ms,
                increment_ms: match p.bonus {
                    Bonus::Increment(ms) => ms,
                    _ => 0,
                },
            })
            .collect();
        if let TimeControl::Hourglass { base_ms } = control {
            periods.push(Period {
                moves: None,
                base_ms: *base_ms,
                increment_ms: 0,
            });
        }
        let first = *periods.first()?;
        let white = if white_on_left {
            Side::Left
        } else {
            Side::Right
        };
        let start = first.base_ms + first.increment_ms;
        Some(Dgt3000 {
            periods,
            remaining: [start; 2],
            since: 0,
            running: None,
            lever_up: white,
            started: false,
            flag: [false; 2],
            moves: [0; 2],
            period: [0; 2],
            white,
        })
    }

    /// The clock set again at `t_ms` to its control, as before its first game: stopped,
    /// each side's time full, White's lever up.
    pub fn reset(&mut self, t_ms: Millis) {
        let first = self.periods[0];
        let start = first.base_ms + first.increment_ms;
        *self = Dgt3000 {
            periods: std::mem::take(&mut self.periods),
            remaining: [start; 2],
            since: t_ms,
            running: None,
            lever_up: self.white,
            started: false,
            flag: [false; 2],
            moves: [0; 2],
            period: [0; 2],
            white: self.white,
        };
    }

    /// The side `color` sits on.
    pub fn side_of(&self, color: Color) -> Side {
        match color {
            Color::White => self.white,
            Color::Black => self.white.other(),
        }
    }

    /// Brings the running time up to `t_ms`; a side that reached zero flags and blocks.
    fn settle(&mut self, t_ms: Millis) {
        if let Some(side) = self.running {
            let elapsed = t_ms.saturating_sub(self.since);
            let left = &mut self.remaining[side.index()];
            if elapsed >= *left {
                *left = 0;
                self.flag[side.index()] = true;
                self.running = None;
            } else {
                *left -= elapsed;
            }
        }
        self.since = self.since.max(t_ms);
    }

    fn remaining_at(&self, side: Side, t_ms: Millis) -> u64 {
        let at_since = self.remaining[side.index()];
        if self.running == Some(side) {
            at_since.saturating_sub(t_ms.saturating_sub(self.since))
        } else {
            at_since
        }
    }

    /// The lever on `side` pressed at `t_ms`. Returns the side halted by a lever change and
    /// its time then (increment added), for the board's move log.
    pub fn press(&mut self, t_ms: Millis, side: Side) -> Option<(Side, u64)> {
        self.settle(t_ms);
        if self.flag.iter().any(|&f| f) {
            return None;
        }
        if side != self.lever_up {
            if !self.started {
                self.started = true;
                self.running = Some(self.lever_up);
            }
            return None;
        }
        if self.started && self.running == Some(side) {
            self.complete_move(side);
        }
        self.started = true;
        self.lever_up = side.other();
        self.running = Some(side.other());
        Some((side, self.remaining[side.index()]))
    }

    /// `side` completed a move: its increment, and the next period's time when it reached
    /// the period's move count.
    fn complete_move(&mut self, side: Side) {
        let i = side.index();
        let period = self.periods[self.period[i]];
        self.remaining[i] += period.increment_ms;
        self.moves[i] += 1;
        if period.moves.is_some_and(|n| self.moves[i] >= n)
            && let Some(next) = self.periods.get(self.period[i] + 1)
        {
            self.period[i] += 1;
            self.moves[i] = 0;
            self.remaining[i] += next.base_ms;
        }
    }

    /// The clock set by the host (set-and-run, times in milliseconds): `flags` 0x01 left
    /// runs, 0x02 right runs, 0x04 pause (protocols 1.11).
    pub fn set_and_run(&mut self, t_ms: Millis, left_ms: u64, right_ms: u64, flags: u8) {
        self.settle(t_ms);
        self.remaining = [left_ms, right_ms];
        self.flag = [false; 2];
        self.started = true;
        self.running = match flags {
            f if f & 0x04 != 0 => None,
            f if f & 0x01 != 0 => Some(Side::Left),
            f if f & 0x02 != 0 => Some(Side::Right),
            _ => None,
        };
        self.lever_up = self.running.unwrap_or(self.lever_up);
    }

    /// The next moment the display changes after `t_ms` (a second ticks, the flag falls),
    /// while the clock runs.
    pub fn next_change_after(&self, t_ms: Millis) -> Option<Millis> {
        let side = self.running?;
        let left = self.remaining_at(side, t_ms);
        let shown = left.div_ceil(1000);
        (left > 0).then(|| t_ms + left - (shown - 1) * 1000)
    }

    /// The seven data bytes of a clock message at `t_ms` (protocols 1.9): right side's
    /// hours and flags, minutes and seconds in BCD, the same for the left side, the status.
    pub fn message_data(&mut self, t_ms: Millis) -> [u8; 7] {
        self.settle(t_ms);
        let time_per_move = self.periods[0].increment_ms > 0;
        let side_bytes = |side: Side| {
            let shown = self.remaining[side.index()].div_ceil(1000).min(MAX_SHOWN_S);
            let flags = u8::from(self.flag[side.index()]) << 4 | u8::from(time_per_move) << 5;
            [
                (shown / 3600) as u8 | flags,
                bcd(shown / 60 % 60),
                bcd(shown % 60),
            ]
        };
        let [r0, r1, r2] = side_bytes(Side::Right);
        let [l0, l1, l2] = side_bytes(Side::Left);
        let right_up = self.lever_up == Side::Right;
        // Bit 3 with the left side to move, bit 4 with the right: so in the real capture,
        // whatever the headers call them (protocols 1.9).
        let status = u8::from(self.running.is_some())
            | u8::from(right_up) << 1
            | u8::from(!right_up) << 3
            | u8::from(right_up) << 4;
        [r0, r1, r2, l0, l1, l2, status]
    }

    /// A time in the move log's form (protocols 1.13): hours, then minutes and seconds
    /// each as three bits of tens and four of units.
    pub fn log_time(ms: u64) -> (u8, u8, u8) {
        let shown = ms.div_ceil(1000).min(MAX_SHOWN_S);
        ((shown / 3600) as u8, bcd(shown / 60 % 60), bcd(shown % 60))
    }
}

/// Two decimal digits, tens in the high nibble.
fn bcd(value: u64) -> u8 {
    (((value / 10) << 4) | (value % 10)) as u8
}

/// The seven data bytes of a clock acknowledgement carrying `ack` (protocols 1.10): the
/// four ack bytes spread over the data with their high bits in bytes 0 and 3, whose low
/// nibbles are 0x0A to mark an acknowledgement.
pub fn ack_data(ack: [u8; 4]) -> [u8; 7] {
    let high = |b: u8, shift: u8| (b & 0x80) >> shift;
    let d0 = 0x0A | high(ack[2], 3) | high(ack[3], 2);
    let d3 = 0x0A | high(ack[0], 3) | high(ack[1], 2);
    [
        d0,
        ack[0] & 0x7F,
        ack[1] & 0x7F,
        d3,
        ack[2] & 0x7F,
        ack[3] & 0x7F,
        0,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock() -> Dgt3000 {
        Dgt3000::new(&TimeControl::parse("300+5").unwrap(), true).unwrap()
    }

    #[test]
    fn the_clock_gives_the_real_captures_first_messages() {
        // protocols 1.8: `8D 00 0A 20 05 05 20 05 05 08`, then `… 09`, `… 20 05 04 09`,
        // and after the left lever's press `20 05 05 20 05 09 13`.
        let mut clock = clock();
        assert_eq!(clock.message_data(0), [0x20, 5, 5, 0x20, 5, 5, 0x08]);
        assert_eq!(clock.press(1000, clock.side_of(Color::Black)), None);
        assert_eq!(clock.message_data(1000), [0x20, 5, 5, 0x20, 5, 5, 0x09]);
        assert_eq!(clock.next_change_after(1000), Some(2000));
        assert_eq!(clock.message_data(2000), [0x20, 5, 5, 0x20, 5, 4, 0x09]);
        let halted = clock.press(4500, Side::Left);
        assert_eq!(halted, Some((Side::Left, 305_000 - 3500 + 5000)));
        assert_eq!(clock.message_data(4500), [0x20, 5, 5, 0x20, 5, 7, 0x13]);
        assert_eq!(clock.press(4600, Side::Left), None, "the lever is down");
    }

    #[test]
    fn a_side_at_zero_flags_and_blocks_the_clock() {
        let mut clock = Dgt3000::new(&TimeControl::parse("2").unwrap(), true).unwrap();
        clock.press(0, Side::Right);
        assert_eq!(clock.next_change_after(0), Some(1000));
        assert_eq!(clock.next_change_after(1000), Some(2000));
        assert_eq!(clock.message_data(2500), [0, 0, 2, 0x10, 0, 0, 0x08]);
        assert_eq!(clock.next_change_after(2500), None);
        assert_eq!(clock.press(3000, Side::Left), None);
    }

    #[test]
    fn an_ack_reads_back_through_the_documented_formulas() {
        let d = ack_data([0x10, 0x88, 0x45, 0xB2]);
        let ack0 = (d[1] & 0x7F) | ((d[3] << 3) & 0x80);
        let ack1 = (d[2] & 0x7F) | ((d[3] << 2) & 0x80);
        let ack2 = (d[4] & 0x7F) | ((d[0] << 3) & 0x80);
        let ack3 = (d[5] & 0x7F) | ((d[0] << 2) & 0x80);
        assert_eq!([ack0, ack1, ack2, ack3], [0x10, 0x88, 0x45, 0xB2]);
        assert_eq!((d[0] & 0x0F, d[3] & 0x0F), (0x0A, 0x0A));
    }
}
