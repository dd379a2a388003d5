//! The legality core: a game with its full history over shakmaty, and the end of the game as
//! the FIDE Laws define it (Articles 3, 5, 6.9, 9 and Chess960).

mod claims;
mod game;
mod outcome;
mod unwinnable;

pub use claims::ClaimVerdict;
pub use game::{EndCheck, Game, GameError, PlayedMove, same_position};
pub use outcome::{EndReason, GameEnd, GameResult};
pub use unwinnable::{
    Budget, FEW_MOVES, Winnability, can_checkmate, cannot_checkmate_by_material,
    dead_position_possible, insufficient_material, is_dead, parse_position,
};

use shakmaty::Color;

/// The end of the game when `flagged`'s flag falls (6.9): a loss for `flagged`, or a draw when
/// the opponent cannot checkmate by any series of legal moves. An undetermined analysis counts
/// as "can checkmate" (the flag fall stands).
pub fn flag_fall(game: &Game, flagged: Color, budget: &Budget) -> GameEnd {
    let opponent = !flagged;
    if can_checkmate(game.position(), opponent, budget) == Some(false) {
        GameEnd::draw(EndReason::FlagFallOpponentCannotCheckmate)
    } else {
        GameEnd {
            result: GameResult::win_for(opponent),
            reason: EndReason::FlagFall,
        }
    }
}
