//! The end of a game: automatic ends (Articles 5 and 9.6) and the result signals used on
//! electronic boards (both kings on the centre squares).

use shakmaty::{Bitboard, Board, Color, Rank, Square};

use crate::rules::GameEnd;
#[cfg(test)]
use crate::rules::{Budget, Game};

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ending {
    /// PGN result token.
    pub result: &'static str,
    /// Why, for people.
    pub reason: String,
}

/// The automatic end of the game after its last move (5.1.1, 5.2.1, 5.2.2, 9.6), if any.
#[cfg(test)]
fn automatic_end(game: &Game, budget: &Budget) -> Option<Ending> {
    game.automatic_end(budget).map(from_game_end)
}

/// The end the rules found, for the machine's events.
pub fn from_game_end(end: GameEnd) -> Ending {
    Ending {
        result: end.result.pgn_token(),
        reason: end.reason.to_string(),
    }
}

/// The four centre squares on which both kings signal a result.
pub const CENTRE: Bitboard = Bitboard::CENTER;

/// Both kings on the centre squares: both light = 1-0, both dark = 0-1, one each = draw.
pub fn result_signal(board: &Board) -> Option<Ending> {
    let white = board.by_piece(Color::White.king());
    let black = board.by_piece(Color::Black.king());
    if white.count() != 1 || black.count() != 1 {
        return None;
    }
    let (Some(w), Some(b)) = (white.first(), black.first()) else {
        return None;
    };
    if !CENTRE.contains(w) || !CENTRE.contains(b) {
        return None;
    }
    Some(match (w.is_light(), b.is_light()) {
        (true, true) => Ending {
            result: "1-0",
            reason: "result signal: kings on light centre squares".to_string(),
        },
        (false, false) => Ending {
            result: "0-1",
            reason: "result signal: kings on dark centre squares".to_string(),
        },
        _ => Ending {
            result: "1/2-1/2",
            reason: "result signal: kings on centre squares of both colours".to_string(),
        },
    })
}

/// Why a board cannot be a position of a game (3.10.3), if it cannot.
pub fn illegal_position(board: &Board) -> Option<String> {
    for color in [Color::White, Color::Black] {
        if board.by_piece(color.king()).count() != 1 {
            return Some(format!("{color} has not exactly one king"));
        }
    }
    let back = Bitboard::from_rank(Rank::First) | Bitboard::from_rank(Rank::Eighth);
    if let Some(sq) = (board.pawns() & back).first() {
        return Some(format!("a pawn stands on {sq}, on its first or last rank"));
    }
    let in_check = |color: Color| {
        board
            .king_of(color)
            .is_some_and(|k: Square| board.attacks_to(k, !color, board.occupied()).any())
    };
    if in_check(Color::White) && in_check(Color::Black) {
        return Some("both kings are in check".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kings_on_light_centre_squares_mean_white_won() {
        let board: Board = "8/8/8/3k4/4K3/8/8/8".parse().unwrap();
        assert_eq!(result_signal(&board).unwrap().result, "1-0");
        let board: Board = "8/8/8/4k3/3K4/8/8/8".parse().unwrap();
        assert_eq!(result_signal(&board).unwrap().result, "0-1");
        let board: Board = "8/8/8/3kK3/8/8/8/8".parse().unwrap();
        assert_eq!(result_signal(&board).unwrap().result, "1/2-1/2");
        assert!(result_signal(&Board::new()).is_none());
    }

    #[test]
    fn scholars_mate_ends_the_game() {
        let mut g = Game::standard();
        for m in ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"] {
            g.play_uci(m).unwrap();
        }
        assert_eq!(
            automatic_end(&g, &Budget::static_only()).unwrap().result,
            "1-0"
        );
    }
}
