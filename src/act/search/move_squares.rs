//! The squares a move touches, and who makes each move of a sequence.

use shakmaty::{Bitboard, Chess, Color, Move, Position, Square};

/// Who makes move `i` (0-based) of a sequence played from `start`.
pub fn mover_at(start: &Chess, i: usize) -> Color {
    if i.is_multiple_of(2) {
        start.turn()
    } else {
        !start.turn()
    }
}

/// The squares a move touches: origin, destination, en passant victim, castling squares.
pub fn squares_of(m: Move) -> Bitboard {
    match m {
        Move::Normal { from, to, .. } => Bitboard::from(from) | Bitboard::from(to),
        Move::EnPassant { from, to } => {
            Bitboard::from(from) | Bitboard::from(to) | Bitboard::from(ep_victim(from, to))
        }
        Move::Castle { king, rook } => Bitboard::from(king) | Bitboard::from(rook),
        Move::Put { to, .. } => Bitboard::from(to),
    }
}

/// The square of the pawn taken en passant.
pub fn ep_victim(from: Square, to: Square) -> Square {
    Square::from_coords(to.file(), from.rank())
}
