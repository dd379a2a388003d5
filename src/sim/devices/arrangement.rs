//! The pieces on a board and beside it, each a physical object of its own.
//!
//! Hands lift a piece and put it down again, take a captured piece off, set up a whole
//! position. A board that reads a tag per piece (Certabo) sees which object stands where,
//! so an object keeps its identity: a piece put down is the one of its kind last taken off
//! the board (the one in the hand), and only a piece never seen before is a new object.

use shakmaty::{Color, Piece, Role, Square};

use crate::board::{MagicPiece, ObservationKind};

/// What an object on a square is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A chess piece.
    Piece(Piece),
    /// One of DGT's result pieces.
    Result(MagicPiece),
}

/// One object (a chessman or a result piece).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Man {
    /// Its identity, unique on one board.
    pub id: u32,
    /// What it is.
    pub shape: Shape,
}

impl Man {
    /// The chess piece it is, if it is one.
    pub fn piece(self) -> Option<Piece> {
        match self.shape {
            Shape::Piece(p) => Some(p),
            Shape::Result(_) => None,
        }
    }
}

/// The objects on the 64 squares (game coordinates) and those beside the board.
#[derive(Debug, Clone)]
pub struct Arrangement {
    squares: [Option<Man>; 64],
    /// Taken off the board, the last taken off last.
    beside: Vec<Man>,
    next_id: u32,
}

impl Arrangement {
    /// An empty board with nothing beside it.
    pub fn new() -> Arrangement {
        Arrangement {
            squares: [None; 64],
            beside: Vec::new(),
            next_id: 1,
        }
    }

    /// The object on `square`.
    pub fn at(&self, square: Square) -> Option<Man> {
        self.squares[usize::from(square)]
    }

    /// Applies what the hands did; returns the squares whose object changed.
    pub fn apply(&mut self, what: &ObservationKind) -> Vec<Square> {
        let before = self.squares;
        match what {
            ObservationKind::Emptied(square) => self.lift(*square),
            ObservationKind::Placed(square, piece) => {
                let shape = piece.map(Shape::Piece);
                self.put_down(*square, shape);
            }
            ObservationKind::MagicPiece(square, magic) => {
                self.put_down(*square, Some(Shape::Result(*magic)));
            }
            ObservationKind::Snapshot(snapshot) => {
                for square in Square::ALL {
                    let wanted = snapshot.board.piece_at(square).map(Shape::Piece);
                    if self.at(square).map(|m| m.shape) != wanted {
                        self.lift(square);
                    }
                }
                for (square, piece) in snapshot.board.iter() {
                    if self.at(square).is_none() {
                        self.put_down(square, Some(Shape::Piece(piece)));
                    }
                }
            }
            ObservationKind::ClockPressed { .. } | ObservationKind::ClockTimes(_) => {}
        }
        Square::ALL
            .into_iter()
            .filter(|&sq| before[usize::from(sq)] != self.squares[usize::from(sq)])
            .collect()
    }

    /// Takes the object on `square` off the board (nothing if the square is empty).
    pub fn lift(&mut self, square: Square) {
        if let Some(man) = self.squares[usize::from(square)].take() {
            self.beside.push(man);
        }
    }

    /// Puts an object of `shape` on `square` (whatever stood there is taken off first): the
    /// one of that shape last taken off, or a new one. `None` puts down the object last
    /// taken off, or a new white pawn when there is none.
    pub fn put_down(&mut self, square: Square, shape: Option<Shape>) {
        self.lift(square);
        let found = match shape {
            Some(shape) => self.beside.iter().rposition(|m| m.shape == shape),
            None => self.beside.len().checked_sub(1),
        };
        let man = match found {
            Some(i) => self.beside.remove(i),
            None => {
                let shape = shape.unwrap_or(Shape::Piece(Role::Pawn.of(Color::White)));
                let man = Man {
                    id: self.next_id,
                    shape,
                };
                self.next_id += 1;
                man
            }
        };
        self.squares[usize::from(square)] = Some(man);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Snapshot;
    use shakmaty::Board;

    #[test]
    fn a_piece_put_down_is_the_one_lifted_and_a_promotion_takes_a_queen_from_beside() {
        let mut arrangement = Arrangement::new();
        let start = ObservationKind::Snapshot(Snapshot {
            board: Board::new(),
            identifies_pieces: true,
        });
        assert_eq!(arrangement.apply(&start).len(), 32);
        let pawn = arrangement.at(Square::E2).unwrap();
        let queen = arrangement.at(Square::D1).unwrap();
        arrangement.apply(&ObservationKind::Emptied(Square::D1));
        arrangement.apply(&ObservationKind::Emptied(Square::E2));
        let changed = arrangement.apply(&ObservationKind::Placed(
            Square::E5,
            Some(Role::Queen.of(Color::White)),
        ));
        assert_eq!(changed, [Square::E5]);
        assert_eq!(arrangement.at(Square::E5), Some(queen), "the queen beside");
        arrangement.apply(&ObservationKind::Placed(Square::E4, None));
        assert_eq!(
            arrangement.at(Square::E4),
            Some(pawn),
            "the pawn in the hand"
        );
        let changed = arrangement.apply(&start);
        assert_eq!(changed, [Square::D1, Square::E2, Square::E4, Square::E5]);
        assert_eq!(arrangement.at(Square::E2), Some(pawn));
        assert_eq!(arrangement.at(Square::D1), Some(queen));
    }
}
