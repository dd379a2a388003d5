//! Which side of a DGT clock is White's, learned from the pieces touched while each side ran.
//!
//! The clock reports left and right, never colours, and stands where the players set it: its
//! sides are not swapped when the board is turned round (eboard-protocols.md §1.9, §1.13).
//! A player makes his move and then presses (6.2.1), so while a side runs its player moves
//! his own pieces. Each stretch a side ran (a "turn") gives one vote: the colour most of the
//! pieces put down in it were of (the first one breaking a tie), or, when none was put down,
//! of the pieces lifted (a capture may lift the victim first, so a placement outweighs a
//! lift). No single turn decides: a move reported after the press that ended its turn (a
//! scan takes up to half a second on Bluetooth), or an opponent who replies before the
//! press, puts a piece in the wrong turn. So a report within [`REPORT_SLACK_MS`] of a press
//! counts for the turn the press ended when nothing was put down in that turn, and the side
//! is the one most turns agree on, revised whenever later turns outvote the earlier ones.

use shakmaty::Color;

use crate::board::Millis;
use crate::wire::dgt::ClockSide;

/// How long after a press the board may still report a piece the presser put down before
/// it: a Bluetooth board's scan (about 500 ms) with a margin for the line.
pub const REPORT_SLACK_MS: Millis = 600;

/// How many more turns must agree than disagree before the side is taken as learned rather
/// than guessed.
const SURE_MARGIN: i32 = 2;

/// The pieces of one colour touched one way (put down or lifted) in a turn.
#[derive(Debug, Clone, Copy, Default)]
struct Touches {
    /// White's minus Black's.
    white_minus_black: i32,
    first: Option<Color>,
}

impl Touches {
    fn add(&mut self, color: Color) {
        self.white_minus_black += if color == Color::White { 1 } else { -1 };
        self.first.get_or_insert(color);
    }

    /// +1 when the touches are White's (more of White's, or as many and White's first), -1
    /// when Black's, 0 when none.
    fn white(&self) -> i32 {
        let first = match self.first {
            Some(Color::White) => 1,
            Some(Color::Black) => -1,
            None => 0,
        };
        (2 * self.white_minus_black + first).signum()
    }
}

/// One stretch of time a clock side ran, and the pieces touched in it.
#[derive(Debug, Clone, Copy)]
struct Turn {
    side: ClockSide,
    placed: Touches,
    lifted: Touches,
}

impl Turn {
    fn new(side: ClockSide) -> Self {
        Turn {
            side,
            placed: Touches::default(),
            lifted: Touches::default(),
        }
    }

    /// +1 when the turn says the left side is White's, -1 when it says it is Black's, 0 when
    /// no piece was touched. Pieces put down decide; lifts only when none was.
    fn vote(&self) -> i32 {
        let white = match self.placed.white() {
            0 => self.lifted.white(),
            w => w,
        };
        if self.side == ClockSide::Left {
            white
        } else {
            -white
        }
    }
}

/// The evidence gathered on which clock side is White's.
#[derive(Debug, Clone, Default)]
pub struct ClockSideEvidence {
    /// Turns that said "left is White's" minus turns that said "left is Black's".
    left_is_white: i32,
    /// The turn that ran last, with the time of the press that ended it.
    ended: Option<(Turn, Millis)>,
    running: Option<Turn>,
}

impl ClockSideEvidence {
    /// The side the turns so far point to as White's, if they point anywhere.
    pub fn white_side(&self) -> Option<ClockSide> {
        match self.left_is_white.signum() {
            1 => Some(ClockSide::Left),
            -1 => Some(ClockSide::Right),
            _ => None,
        }
    }

    /// True when clearly more turns point to [`ClockSideEvidence::white_side`] than away.
    pub fn is_sure(&self) -> bool {
        self.left_is_white.abs() >= SURE_MARGIN
    }

    /// The clock is seen running on `side` at `t`: a new turn when it is another side than
    /// the one running before.
    pub fn runs(&mut self, side: ClockSide, t: Millis) {
        match self.running {
            Some(turn) if turn.side == side => {}
            Some(turn) => {
                self.ended = Some((turn, t));
                self.running = Some(Turn::new(side));
            }
            None => self.running = Some(Turn::new(side)),
        }
    }

    /// A piece of `color` was put down (`placed`) or lifted at `t`.
    pub fn touched(&mut self, color: Color, placed: bool, t: Millis) {
        let late_for_ended = self.ended.is_some_and(|(turn, pressed)| {
            t <= pressed.saturating_add(REPORT_SLACK_MS) && turn.placed.first.is_none()
        });
        let in_slack = self
            .ended
            .is_some_and(|(_, pressed)| t <= pressed.saturating_add(REPORT_SLACK_MS));
        let turn = if late_for_ended {
            self.ended.as_mut().map(|(turn, _)| turn)
        } else if in_slack {
            // Either the presser's piece reported late or the reply begun at once: neither
            // is told apart, and the turn it would count for already has its vote.
            None
        } else {
            self.running.as_mut()
        };
        let Some(turn) = turn else {
            return;
        };
        let before = turn.vote();
        if placed {
            turn.placed.add(color);
        } else {
            turn.lifted.add(color);
        }
        self.left_is_white += turn.vote() - before;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_move_reported_after_its_press_counts_for_the_turn_the_press_ended() {
        let mut e = ClockSideEvidence::default();
        e.runs(ClockSide::Left, 0);
        e.touched(Color::Black, false, 100); // e7 lifted
        e.runs(ClockSide::Right, 500); // pressed
        e.touched(Color::Black, true, 575); // e5 reported late
        assert_eq!(e.white_side(), Some(ClockSide::Right));
        e.touched(Color::White, false, 2_000); // the reply
        e.touched(Color::White, true, 2_300);
        assert_eq!(e.white_side(), Some(ClockSide::Right));
        assert!(e.is_sure());
    }

    #[test]
    fn a_reply_made_before_the_press_is_outvoted_by_the_move_before_it() {
        let mut e = ClockSideEvidence::default();
        e.runs(ClockSide::Right, 0);
        e.touched(Color::Black, false, 1_000); // e7
        e.touched(Color::Black, true, 1_500); // e5
        e.touched(Color::White, false, 2_000); // g1: White replies before Black pressed
        e.touched(Color::White, true, 2_200); // f3
        e.runs(ClockSide::Left, 2_400);
        assert_eq!(e.white_side(), Some(ClockSide::Left));
        assert!(!e.is_sure());
    }

    #[test]
    fn later_turns_revise_a_side_learned_wrong() {
        let mut e = ClockSideEvidence::default();
        e.runs(ClockSide::Left, 0);
        e.touched(Color::White, true, 100); // the opponent's piece, first
        e.runs(ClockSide::Right, 1_000);
        assert_eq!(e.white_side(), Some(ClockSide::Left));
        // White's side is the right: White touches his pieces while it runs, Black his
        // while the left runs.
        let turns = [
            (ClockSide::Right, Color::White),
            (ClockSide::Left, Color::Black),
            (ClockSide::Right, Color::White),
        ];
        for (i, (_, color)) in (1..).zip(turns) {
            e.touched(color, true, 2_000 * i - 500);
            e.runs(turns[(i as usize) % turns.len()].0, 2_000 * i);
        }
        assert_eq!(e.white_side(), Some(ClockSide::Right));
    }
}
