//! The physical board: what stands on the 64 squares as the sensors say, and which pieces
//! are in the air.

use shakmaty::{Bitboard, Board, Color, Piece, Rank, Role, Square, attacks};

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
    /// lifted piece that can go from its square to `sq` is assumed (a king and a pawn lifted
    /// together are told apart by where each can go), else the most recently lifted one.
    pub fn place(&mut self, sq: Square, piece: Option<Piece>) {
        let landed = match piece {
            Some(p) => {
                if let Some(i) = self.in_flight.iter().rposition(|f| f.piece == p) {
                    self.in_flight.remove(i);
                }
                p
            }
            None => {
                let reaching = self
                    .in_flight
                    .iter()
                    .rposition(|f| can_go(f.piece, f.from, sq));
                match reaching.or(self.in_flight.len().checked_sub(1)) {
                    Some(i) => self.in_flight.remove(i).piece,
                    None => UNKNOWN,
                }
            }
        };
        self.board.set_piece_at(sq, landed);
        self.placed.add(sq);
    }

    /// On an occupancy-only board, takes the pieces' names from `position` when the squares
    /// occupied are the same: the names guessed from lifts and placements drift (a capturer
    /// lifted before its victim is placed under the victim's name), and the position is the
    /// better guess whenever it fits. Nothing is in the air then but captured pieces.
    pub fn name_after(&mut self, position: &Board) {
        if !self.identifies_pieces && self.board.occupied() == position.occupied() {
            self.board = position.clone();
            self.in_flight.clear();
        }
    }

    /// Takes a piece off the picture without a lift: the board's report that the square
    /// was emptied was lost.
    pub fn forget(&mut self, sq: Square) {
        self.board.discard_piece_at(sq);
    }

    /// Replaces the whole picture (a board dump). An occupancy-only board's dump names no
    /// piece: a square still occupied keeps its name, a newly occupied one has none.
    pub fn replace(&mut self, board: &Board) {
        let newly = board.occupied() & !self.board.occupied();
        self.placed |= newly;
        if self.identifies_pieces {
            self.board = board.clone();
        } else {
            let mut named = Board::empty();
            for sq in board.occupied() {
                named.set_piece_at(sq, self.board.piece_at(sq).unwrap_or(UNKNOWN));
            }
            self.board = named;
        }
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

/// Whether `piece` standing on `from` could be put on `to` by one move on an empty board,
/// or put back where it was.
fn can_go(piece: Piece, from: Square, to: Square) -> bool {
    if from == to {
        return true;
    }
    match piece.role {
        Role::Pawn => {
            let rise = i32::from(to.rank()) - i32::from(from.rank());
            let forward = if piece.color.is_white() { rise } else { -rise };
            let double = from.rank() == piece.color.relative_rank(Rank::Second);
            attacks::pawn_attacks(piece.color, from).contains(to)
                || (from.file() == to.file() && (forward == 1 || (forward == 2 && double)))
        }
        Role::King => {
            attacks::king_attacks(from).contains(to)
                || (from.rank() == to.rank() && from.rank() == piece.color.backrank())
        }
        _ => attacks::attacks(from, piece, Bitboard::EMPTY).contains(to),
    }
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

    #[test]
    fn an_unnamed_placement_takes_the_lifted_piece_that_can_go_there() {
        let position: Board = "8/8/8/3kp3/6K1/8/8/8".parse().unwrap();
        let mut b = PhysicalBoard::new(false);
        b.replace(&position);
        b.name_after(&position);
        b.empty(Square::G4, 10);
        b.empty(Square::E5, 20);
        b.place(Square::F3, None);
        b.place(Square::E4, None);
        assert_eq!(b.board().piece_at(Square::F3), Some(Color::White.king()));
        assert_eq!(b.board().piece_at(Square::E4), Some(Color::Black.pawn()));
    }

    #[test]
    fn names_come_from_the_position_when_the_occupied_squares_fit() {
        let position: Board = "8/8/4k3/5P2/3K4/8/8/8".parse().unwrap();
        let mut b = PhysicalBoard::new(false);
        b.replace(&position);
        b.name_after(&position);
        // The king lifted before its victim: the victim's name lands on f5.
        b.empty(Square::E6, 10);
        b.empty(Square::F5, 20);
        b.place(Square::F5, None);
        assert_eq!(b.board().piece_at(Square::F5), Some(Color::White.pawn()));
        let after: Board = "8/8/8/5k2/3K4/8/8/8".parse().unwrap();
        b.name_after(&after);
        assert_eq!(b.board().piece_at(Square::F5), Some(Color::Black.king()));
        assert!(b.in_flight().is_empty());
        let other: Board = "8/8/8/5k2/8/3K4/8/8".parse().unwrap();
        b.name_after(&other);
        assert_eq!(
            b.board().piece_at(Square::D4),
            Some(Color::White.king()),
            "occupancy differs"
        );
    }
}
