//! Which legal moves explain what stands on the board: one move (the common case, a few
//! hundred nanoseconds) or the shortest sequence of moves when updates were missed.
//!
//! Here, [`Sensed`] (the board as sensed) and the single-move search. In `sequences`, the
//! reconstruction of several moves; in `reports`, the report times a reconstruction must
//! agree with ([`Reports`]); in `moves_being_made`, a board that shows a move still on its
//! way or finished with something left undone (an unexchanged pawn, knocked pieces).

mod move_squares;
mod moves_being_made;
mod orders;
mod reports;
mod sequences;
#[cfg(test)]
pub(in crate::act) mod tests;

pub use move_squares::{ep_victim, mover_at, squares_of};
pub use orders::rank_orders;
pub use reports::Reports;

use shakmaty::{Bitboard, Board, Chess, Color, Move, Position};

use super::physical::board_diff;

/// What the search compares positions with: the sensed board and its evidence.
#[derive(Debug, Clone, Copy)]
pub struct Sensed<'a> {
    /// The board as sensed.
    pub board: &'a Board,
    /// False on occupancy-only boards.
    pub identifies: bool,
    /// Squares that show a capture on occupancy-only boards: placed on since the position
    /// the moves are read from, after the capturing piece was lifted.
    pub placed: Bitboard,
}

/// The outcome of a search for move sequences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Explanation {
    /// No sequence within the depth explains the board.
    None,
    /// Exactly one shortest sequence.
    Unique(Vec<Move>),
    /// Several shortest sequences: every one that fits.
    Ambiguous(Vec<Vec<Move>>),
    /// More shortest sequences fit than the search keeps: these, and others it did not
    /// keep. None of them may be chosen (issue 58: no choice from a partial list).
    Partial(Vec<Vec<Move>>),
}

impl Sensed<'_> {
    /// Squares where `board` differs from the sensed board.
    pub fn diff(&self, board: &Board) -> Bitboard {
        board_diff(self.board, board, self.identifies)
    }

    /// True when the sensed board is exactly `pos` reached by `m` (on occupancy-only boards
    /// a capture also needs a placement seen on the capture square).
    fn shows(&self, after: &Chess, m: Move) -> bool {
        if !self.diff(after.board()).is_empty() {
            return false;
        }
        self.identifies
            || !matches!(
                m,
                Move::Normal {
                    capture: Some(_),
                    ..
                }
            )
            || self.placed.contains(m.to())
    }

    /// Every single legal move from `pos` that leaves exactly the sensed board.
    pub fn single_moves(&self, pos: &Chess) -> Vec<(Move, Chess)> {
        let d = self.diff(pos.board());
        let mut found = Vec::new();
        if d.is_empty() || d.count() > 4 {
            return found;
        }
        for m in pos.legal_moves() {
            if !touches(m, d) {
                continue;
            }
            if let Some(quick) = quick_changed(m, pos.turn(), self.identifies)
                && quick != d
            {
                continue;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            if self.shows(&after, m) {
                found.push((m, after));
            }
        }
        found
    }
}

/// The one item of `items`; `None` when there is none, or more than one.
pub(super) fn only<T>(mut items: impl Iterator<Item = T>) -> Option<T> {
    match (items.next(), items.next()) {
        (Some(item), None) => Some(item),
        _ => None,
    }
}

/// True when the move starts (or, for castling, involves the rook) on a differing square.
pub(super) fn touches(m: Move, d: Bitboard) -> bool {
    match m {
        Move::Castle { king, rook } => d.contains(king) || d.contains(rook),
        _ => m.from().is_some_and(|f| d.contains(f)),
    }
}

/// The changed squares of a move, without playing it, when that is cheap to know.
pub(super) fn quick_changed(m: Move, _turn: Color, identifies: bool) -> Option<Bitboard> {
    match m {
        Move::Normal {
            from, to, capture, ..
        } => Some(if capture.is_some() && !identifies {
            Bitboard::from(from)
        } else {
            Bitboard::from(from) | Bitboard::from(to)
        }),
        Move::EnPassant { .. } => Some(squares_of(m)),
        Move::Castle { .. } | Move::Put { .. } => None,
    }
}
