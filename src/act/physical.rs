//! The physical board: what stands on the 64 squares as the sensors say, and which pieces
//! are in the air.

use shakmaty::{Bitboard, Board, Color, Piece, Role, Square};

use crate::board::Millis;

/// A piece lifted from the board and not yet placed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// Where it was lifted from.
    pub from: Square,
    /// What it was (a guess on occupancy-only boards).
    pub piece: Piece,
    /// When it was lifted.
    pub t_ms: Millis,
}

/// The board as sensed, with the evidence that the pure picture cannot keep.
#[derive(Debug, Clone)]
pub struct PhysicalBoard {
    board: Board,
    identifies_pieces: bool,
    placed: Bitboard,
    in_flight: Vec<InFlight>,
}

/// Placeholder for a piece an occupancy-only board placed without saying which.
const UNKNOWN: Piece = Piece {
    color: Color::White,
    role: Role::Pawn,
};

impl PhysicalBoard {
    /// An empty board.
    pub fn new(identifies_pieces: bool) -> PhysicalBoard {
        PhysicalBoard {
            board: Board::empty(),
            identifies_pieces,
            placed: Bitboard::EMPTY,
            in_flight: Vec::new(),
        }
    }

    /// The pieces as sensed. On occupancy-only boards only the occupancy is meaningful.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// True when the sensors tell pieces apart.
    pub fn identifies_pieces(&self) -> bool {
        self.identifies_pieces
    }

    /// Squares on which something was placed since [`PhysicalBoard::clear_placed`]: on an
    /// occupancy-only board this is the only evidence of a capture.
    pub fn placed(&self) -> Bitboard {
        self.placed
    }

    /// Forgets which squares were placed on (called when a move is recorded).
    pub fn clear_placed(&mut self) {
        self.placed = Bitboard::EMPTY;
    }

    /// Pieces lifted and not placed again, oldest first.
    pub fn in_flight(&self) -> &[InFlight] {
        &self.in_flight
    }

    /// A square was emptied. Returns the piece that stood there, if the board knew one.
    pub fn empty(&mut self, sq: Square, t_ms: Millis) -> Option<Piece> {
        let piece = self.board.remove_piece_at(sq)?;
        self.in_flight.push(InFlight {
            from: sq,
            piece,
            t_ms,
        });
        Some(piece)
    }

    /// A piece was placed. `None` means the board cannot say which piece: the most recently
    /// lifted piece is assumed.
    pub fn place(&mut self, sq: Square, piece: Option<Piece>) {
        let landed = match piece {
            Some(p) => {
                if let Some(i) = self.in_flight.iter().rposition(|f| f.piece == p) {
                    self.in_flight.remove(i);
                }
                p
            }
            None => self.in_flight.pop().map_or(UNKNOWN, |f| f.piece),
        };
        self.board.set_piece_at(sq, landed);
        self.placed.add(sq);
    }

    /// Takes a piece off the picture without a lift: the board's report that the square
    /// was emptied was lost.
    pub fn forget(&mut self, sq: Square) {
        self.board.discard_piece_at(sq);
    }

    /// Replaces the whole picture (a board dump).
    pub fn replace(&mut self, board: &Board) {
        let newly = board.occupied() & !self.board.occupied();
        self.placed |= newly;
        self.board = board.clone();
        let occupied = self.board.occupied();
        self.in_flight.retain(|f| !occupied.contains(f.from));
    }

    /// Turns the picture round (a board found rotated at the start of a game).
    pub fn rotate_180(&mut self) {
        self.board.rotate_180();
        self.placed = self.placed.rotate_180();
        for f in &mut self.in_flight {
            f.from = f.from.rotate_180();
        }
    }

    /// Squares whose sensed contents differ from `other` (occupancy only when pieces are not
    /// identified).
    pub fn diff(&self, other: &Board) -> Bitboard {
        board_diff(&self.board, other, self.identifies_pieces)
    }
}

/// Squares where two boards differ, by piece or (when `identifies` is false) by occupancy.
pub fn board_diff(a: &Board, b: &Board, identifies: bool) -> Bitboard {
    if !identifies {
        return a.occupied() ^ b.occupied();
    }
    (a.white() ^ b.white())
        | (a.black() ^ b.black())
        | (a.pawns() ^ b.pawns())
        | (a.knights() ^ b.knights())
        | (a.bishops() ^ b.bishops())
        | (a.rooks() ^ b.rooks())
        | (a.queens() ^ b.queens())
        | (a.kings() ^ b.kings())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lift_and_place_track_pieces_in_flight() {
        let mut b = PhysicalBoard::new(true);
        b.replace(&Board::new());
        assert_eq!(b.diff(&Board::new()), Bitboard::EMPTY);
        let p = b.empty(Square::E2, 10);
        assert_eq!(p, Some(Color::White.pawn()));
        assert_eq!(b.in_flight().len(), 1);
        b.place(Square::E4, Some(Color::White.pawn()));
        assert!(b.in_flight().is_empty());
        assert_eq!(b.diff(&Board::new()).count(), 2);
        assert!(b.placed().contains(Square::E4));
    }
}
