//! Recognising the start of a game on the board (FIDE 2.1, 7.2, Chess960 Guideline II).

use shakmaty::{Bitboard, Board, Color, Piece, Position, Rank, Role, Square};

use super::physical::board_diff;
use crate::rules::Game;

/// A start position found on the board.
#[derive(Debug, Clone)]
pub struct Start {
    /// The game, at its start position.
    pub game: Game,
    /// A Chess960 start other than the standard one.
    pub chess960: bool,
    /// The board stands turned round (7.2.2): every square must be mapped.
    pub rotated: bool,
}

/// What a board shows before a game: a start, a wrong set-up (7.2.1), or nothing like one.
#[derive(Debug, Clone)]
pub enum SetUp {
    /// A start position stands.
    Start(Box<Start>),
    /// Every start square is occupied but the pieces are wrong: these squares differ from
    /// the expected set-up.
    Wrong(Vec<Square>),
    /// Nothing like a start position.
    Nothing,
}

/// What counts as a start position.
#[derive(Debug, Clone)]
pub struct StartRules {
    /// A configured set-up (FEN game); replaces the standard start when set.
    pub expected: Option<Game>,
    /// Any of the 960 Chess960 starts is accepted.
    pub chess960: bool,
    /// The board identifies pieces (otherwise only occupancy is compared).
    pub identifies: bool,
}

impl StartRules {
    /// Looks at the board in both orientations.
    pub fn recognise(&self, board: &Board) -> SetUp {
        if let Some(start) = self.start_in(board, false) {
            return SetUp::Start(Box::new(start));
        }
        if self.identifies {
            let mut turned = board.clone();
            turned.rotate_180();
            if let Some(start) = self.start_in(&turned, true) {
                return SetUp::Start(Box::new(start));
            }
        }
        let expected = self.expected_board();
        if board.occupied() == expected.occupied() && self.identifies {
            let wrong = board_diff(board, &expected, true).into_iter().collect();
            return SetUp::Wrong(wrong);
        }
        SetUp::Nothing
    }

    fn expected_board(&self) -> Board {
        self.expected
            .as_ref()
            .map_or_else(Board::new, |g| g.start().board().clone())
    }

    fn start_in(&self, board: &Board, rotated: bool) -> Option<Start> {
        let expected = self.expected_board();
        if board_diff(board, &expected, self.identifies).is_empty() {
            let game = self.expected.clone().unwrap_or_else(Game::standard);
            return Some(Start {
                game,
                chess960: self.chess960 && self.expected.is_some(),
                rotated,
            });
        }
        if self.chess960 && self.expected.is_none() && self.identifies && is_chess960(board) {
            let fen = format!("{board} w KQkq - 0 1");
            let game = Game::from_fen(&fen, true).ok()?;
            return Some(Start {
                game,
                chess960: true,
                rotated,
            });
        }
        None
    }
}

/// True for one of the 960 starting arrangements (Black mirroring White).
pub fn is_chess960(board: &Board) -> bool {
    let back = |color: Color| Bitboard::from_rank(color.fold_wb(Rank::First, Rank::Eighth));
    let pawns = |color: Color| Bitboard::from_rank(color.fold_wb(Rank::Second, Rank::Seventh));
    let occupied =
        back(Color::White) | back(Color::Black) | pawns(Color::White) | pawns(Color::Black);
    if board.occupied() != occupied
        || board.by_piece(Color::White.pawn()) != pawns(Color::White)
        || board.by_piece(Color::Black.pawn()) != pawns(Color::Black)
    {
        return false;
    }
    for sq in back(Color::White) {
        let white = board.piece_at(sq);
        let black = board.piece_at(sq.flip_vertical());
        match (white, black) {
            (Some(w), Some(b))
                if w.color == Color::White && b.color == Color::Black && w.role == b.role => {}
            _ => return false,
        }
    }
    let rank = back(Color::White);
    let of = |role: Role| {
        board.by_piece(Piece {
            color: Color::White,
            role,
        }) & rank
    };
    let bishops = of(Role::Bishop);
    let rooks = of(Role::Rook);
    let king = of(Role::King);
    if bishops.count() != 2
        || rooks.count() != 2
        || king.count() != 1
        || of(Role::Knight).count() != 2
        || of(Role::Queen).count() != 1
    {
        return false;
    }
    let light = bishops.into_iter().filter(|s| s.is_light()).count();
    let (Some(k), Some(r1), Some(r2)) = (king.first(), rooks.first(), rooks.last()) else {
        return false;
    };
    light == 1 && r1 < k && k < r2
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules() -> StartRules {
        StartRules {
            expected: None,
            chess960: true,
            identifies: true,
        }
    }

    #[test]
    fn standard_rotated_and_960_starts() {
        assert!(
            matches!(rules().recognise(&Board::new()), SetUp::Start(s) if !s.rotated && !s.chess960)
        );
        let mut turned = Board::new();
        turned.rotate_180();
        assert!(matches!(rules().recognise(&turned), SetUp::Start(s) if s.rotated));
        let b = Board::chess960(0);
        assert!(is_chess960(&b));
        assert!(matches!(rules().recognise(&b), SetUp::Start(s) if s.chess960));
    }

    #[test]
    fn swapped_king_and_queen_is_a_wrong_standard_setup() {
        let mut b = Board::new();
        b.set_piece_at(Square::D1, Color::White.king());
        b.set_piece_at(Square::E1, Color::White.queen());
        let strict = StartRules {
            chess960: false,
            ..rules()
        };
        assert!(
            matches!(strict.recognise(&b), SetUp::Wrong(sq) if sq == vec![Square::D1, Square::E1])
        );
    }
}
