//! Judging a flag fall (FIDE 6.9).

use shakmaty::Color;

use crate::rules::{Budget, EndReason, Game, GameEnd, flag_fall};

/// What a flag fall means for the game (6.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlagVerdict {
    /// The player whose flag fell.
    pub flagged: Color,
    /// The end of the game: a loss for `flagged`, or a draw when the opponent cannot
    /// checkmate by any series of legal moves.
    pub end: GameEnd,
}

impl FlagVerdict {
    /// The PGN result token.
    pub fn result(self) -> &'static str {
        self.end.result.pgn_token()
    }

    /// True when the flag fall is a draw because the opponent cannot checkmate.
    pub fn is_draw(self) -> bool {
        self.end.reason == EndReason::FlagFallOpponentCannotCheckmate
    }

    /// The reason, for the Termination tag and the arbiter.
    pub fn reason(self) -> String {
        if self.is_draw() {
            format!(
                "{}'s flag fell but {} cannot checkmate by any series of legal moves: draw (6.9)",
                self.flagged, !self.flagged
            )
        } else {
            format!("{} lost on time (6.9)", self.flagged)
        }
    }
}

/// Judges `flagged`'s flag fall in the game's current position (6.9) with the rules module's
/// one-colour unwinnability analysis, within `budget`; an undetermined analysis lets the flag
/// fall stand.
pub fn judge_flag_fall(game: &Game, flagged: Color, budget: &Budget) -> FlagVerdict {
    FlagVerdict {
        flagged,
        end: flag_fall(game, flagged, budget),
    }
}
