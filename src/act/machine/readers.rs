//! The two readers of the board, one per [`Sense`]. Where a board that senses only
//! occupancy needs readings of what it cannot show (a capture's landing, a promoted piece,
//! a knocked piece that read as a move), the machine asks the reader of its sense; the
//! reader of a board that names its pieces has none of them, so that board's readings run
//! no occupancy code.

use shakmaty::{Chess, Color, Move};

use super::Machine;
use super::doubt::Doubt;
use super::reading::Reading;
use super::sense::Sense;
use super::unseen_landing::UnseenLanding;
use crate::act::Event;
use crate::act::search::Sensed;
use crate::board::Millis;

impl Machine {
    /// The reading of a board that shows the game's position: the game as it is, unless on
    /// an occupancy board the last move's capture shows its landing only now, elsewhere
    /// ([`Machine::capture_landing_shown`]).
    pub(super) fn reading_of_the_game(&self, s: &Sensed<'_>) -> Reading {
        match self.sense {
            Sense::PieceNames => Reading::Current,
            Sense::Occupancy => self.capture_landing_shown(s).unwrap_or(Reading::Current),
        }
    }

    /// The reading of a board that shows one move `m` from the game's position `n`, with its
    /// `doubt`: that move, unless on an occupancy board a quick reply was a knocked piece set
    /// back ([`Machine::knocked_reply_set_back`]).
    pub(super) fn reading_of_one_move(
        &self,
        s: &Sensed<'_>,
        n: usize,
        m: Move,
        doubt: Option<Doubt>,
    ) -> Reading {
        match self.sense {
            Sense::PieceNames => self.one_move_from(n, m, doubt),
            Sense::Occupancy => self
                .knocked_reply_set_back(s)
                .unwrap_or_else(|| self.one_move_from(n, m, doubt)),
        }
    }

    /// On an occupancy board, the corrections of what it could not show that the board's
    /// reports now show: a promoted piece that moves as a knight, another capture than the
    /// one chosen at a press ([`Machine::capture_choice_corrected`]).
    pub(super) fn correction_shown(&self, s: &Sensed<'_>, pressed: bool) -> Option<Reading> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self
                .knight_promotion_shown(s)
                .or_else(|| self.capture_choice_corrected(s, pressed)),
        }
    }

    /// On an occupancy board, held on a board nothing else explains: another capture than
    /// the one chosen, with the moves since ([`Machine::capture_choice_reread_when_held`]).
    pub(super) fn correction_when_held(&self, s: &Sensed<'_>) -> Option<Reading> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self.capture_choice_reread_when_held(s),
        }
    }

    /// On an occupancy board, the mover's piece not seen put down: the capture the board
    /// could not show ([`Machine::unseen_landing`]).
    pub(super) fn landing_not_shown(
        &self,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<UnseenLanding> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self.unseen_landing(t, s, current),
        }
    }

    /// A pawn on the last rank at `by`'s press at `t` (`m`) is a promotion the press
    /// completed, even when it was taken back before the press is judged: unexchanged
    /// (7.5.2) on a board that names pieces. One that senses only occupancy shows the pawn
    /// as it shows the piece it became: which it is, the arbiter checks (4.6).
    pub(super) fn promotion_at_press(
        &mut self,
        by: Color,
        m: Move,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        match self.sense {
            Sense::PieceNames => self.unfinished_promotion(by, m, t, out),
            Sense::Occupancy => {
                if self.adopt_at_press(by, m, t, out) {
                    self.raise_doubt(Doubt::PromotionPiece, t, out);
                }
            }
        }
    }
}
