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
//! press, puts a piece in the wrong turn. So a piece touched within [`REPORT_SLACK_MS`] of a
//! press counts for the turn the press ended when it is of the colour that turn's touches
//! were of, and the side is the one most turns agree on, revised whenever later turns
//! outvote the earlier ones.

use shakmaty::Color;

use crate::board::Millis;
use crate::wire::dgt::ClockSide;

/// How long after a press the board may still report a piece the presser put down before
/// it: a Bluetooth board's scan (about 500 ms) with a margin for the line.
const REPORT_SLACK_MS: Millis = 600;

/// How many more turns must agree than disagree before the side is taken as learned rather
/// than guessed.
const SURE_MARGIN: i32 = 2;

/// The pieces touched one way (put down or lifted) in a turn.
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

    /// Whose the touches are: the colour of more of them, or of the first when as many of
    /// each; `None` when there were none.
    fn player(&self) -> Option<Color> {
        let first = self.first?;
        Some(match self.white_minus_black.signum() {
            1 => Color::White,
            -1 => Color::Black,
            _ => first,
        })
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

    /// The player the turn's touches say ran it: pieces put down decide, lifts only when
    /// none was.
    fn player(&self) -> Option<Color> {
        self.placed.player().or(self.lifted.player())
    }

    /// +1 when the turn says the left side is White's, -1 when it says it is Black's, 0 when
    /// no piece was touched.
    fn vote(&self) -> i32 {
        match self.player() {
            None => 0,
            Some(player) if (player == Color::White) == (self.side == ClockSide::Left) => 1,
            Some(_) => -1,
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

    /// A piece of `color` was put down (`placed`) or lifted at `t`. Shortly after a press it
    /// counts for the turn the press ended when that turn's player is of its colour (his
    /// move reported late), else for the turn now running (the reply).
    pub fn touched(&mut self, color: Color, placed: bool, t: Millis) {
        let late_for_ended = self.ended.is_some_and(|(turn, pressed)| {
            t <= pressed.saturating_add(REPORT_SLACK_MS) && turn.player() == Some(color)
        });
        let turn = if late_for_ended {
            self.ended.as_mut().map(|(turn, _)| turn)
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

    /// Quick play (`tests/recorder/cli.rs`, a reply begun 360 ms after each press): the
    /// reply's pieces, touched within a report's delay of the press, are the reply's, not
    /// the presser's move reported late.
    #[test]
    fn a_quick_reply_counts_for_the_turn_it_was_made_in() {
        let mut e = ClockSideEvidence::default();
        e.runs(ClockSide::Right, 0);
        e.touched(Color::Black, false, 300);
        e.touched(Color::Black, true, 360);
        let turns = [
            (ClockSide::Left, Color::White),
            (ClockSide::Right, Color::Black),
        ];
        for (i, (side, color)) in (1..).zip(turns.into_iter().cycle().take(4)) {
            let pressed = 480 * i;
            e.runs(side, pressed);
            e.touched(color, false, pressed + 360);
            e.touched(color, true, pressed + 420);
        }
        assert_eq!(e.white_side(), Some(ClockSide::Left));
        assert!(e.is_sure());
    }
}
