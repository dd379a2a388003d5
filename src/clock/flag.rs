//! Judging a flag fall (FIDE 6.9).

use shakmaty::{Color, Position};

use crate::rules::Game;

/// What a flag fall means for the game (6.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagVerdict {
    /// The player whose flag fell loses: the opponent could still checkmate.
    Loses {
        /// The player whose flag fell.
        flagged: Color,
    },
    /// Drawn: the opponent cannot checkmate the flagged player by any series of legal moves.
    Drawn {
        /// The player whose flag fell.
        flagged: Color,
    },
}

impl FlagVerdict {
    /// The PGN result token.
    pub fn result(self) -> &'static str {
        match self {
            FlagVerdict::Loses {
                flagged: Color::White,
            } => "0-1",
            FlagVerdict::Loses {
                flagged: Color::Black,
            } => "1-0",
            FlagVerdict::Drawn { .. } => "1/2-1/2",
        }
    }

    /// The reason, for the Termination tag and the arbiter.
    pub fn reason(self) -> String {
        match self {
            FlagVerdict::Loses { flagged } => format!("{flagged} lost on time (6.9)"),
            FlagVerdict::Drawn { flagged } => format!(
                "{flagged}'s flag fell but {} cannot checkmate by any series of legal moves: draw (6.9)",
                !flagged
            ),
        }
    }
}

/// Judges `flagged`'s flag fall in the game's current position (6.9): a loss unless the
/// opponent cannot checkmate.
///
/// The one-colour question is answered here by shakmaty's per-colour insufficient-material
/// test, which is sound (it never calls a winnable position drawn) but misses blocked
/// positions. This is the one place to switch to the rules module's full unwinnability
/// analysis (`rules::flag_fall`) once it is available.
pub fn judge_flag_fall(game: &Game, flagged: Color) -> FlagVerdict {
    if game.position().has_insufficient_material(!flagged) {
        FlagVerdict::Drawn { flagged }
    } else {
        FlagVerdict::Loses { flagged }
    }
}
