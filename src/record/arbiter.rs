//! Arbiter actions: what the arbiter may do to a game the rules leave to him.
//!
//! The same actions arrive from the `touchmove arbiter` command and from the web API; the
//! recorder applies them and journals each with its time and author.

use serde::{Deserialize, Serialize};

use crate::board::ColorName;
use crate::record::scoresheet;
use crate::rules::{ClaimVerdict, Game, GameError};

/// An arbiter action with its author, as journalled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArbiterRequest {
    /// Who asked (arbiter name or token label).
    pub who: String,
    /// Board number within the round.
    pub board: u32,
    /// What to do.
    pub action: ArbiterAction,
    /// The key the arbiter's client gave this action, the same on every retry of it: an
    /// action whose key is journalled already is not applied again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// One thing an arbiter can do to a game.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum ArbiterAction {
    /// Set the result (also forfeits: `reason` = "forfeit").
    SetResult {
        /// `1-0`, `0-1`, `1/2-1/2` or `*` to reopen.
        result: String,
        /// Why, written to the Termination tag and a comment.
        reason: String,
    },
    /// Confirm or reject a proposed penalty (7.5.5) raised at `ply`.
    DecidePenalty {
        /// Ply of the alert that proposed the penalty.
        ply: u32,
        /// True to apply it.
        accept: bool,
    },
    /// Add (positive) or subtract (negative) time on a player's clock (6.10–6.11, 7.5.5).
    AdjustTime {
        /// Whose clock.
        side: ColorName,
        /// Milliseconds to add; negative to subtract.
        delta_ms: i64,
    },
    /// Replace the moves from ply `from_ply` (1-based) on with `moves` (SAN or UCI).
    ReplaceMoves {
        /// First ply replaced.
        from_ply: u32,
        /// The moves that stand instead.
        moves: Vec<String>,
    },
    /// Settle the order of moves made while the link to the board was down, which several
    /// orders explain (an 8.5.3 "order not observed" alert for the span that begins at
    /// `ply`): `pick` 0 confirms the order recorded, `pick` n takes the n-th other order the
    /// alert named; the moves after the span stay.
    SettleOrder {
        /// First ply of the span.
        ply: u32,
        /// 0 for the recorded order, n for the n-th other.
        pick: usize,
    },
    /// Take back to ply `to_ply`: the position after that many plies stands.
    TakeBack {
        /// Plies kept.
        to_ply: u32,
    },
    /// Check a draw claim by the player to move.
    CheckClaim {
        /// Which rule.
        claim: DrawClaim,
        /// The intended move (SAN or UCI), for claims made with a move not yet played.
        intended_move: Option<String>,
    },
    /// Start a new game on this board.
    NewGame,
    /// Add a comment to the record after `ply` (0 = before the first move).
    Annotate {
        /// Ply the comment follows.
        ply: u32,
        /// The note.
        text: String,
    },
}

/// The draw claims an arbiter checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrawClaim {
    /// 9.2: threefold repetition.
    Threefold,
    /// 9.3: fifty-move rule.
    FiftyMoves,
}

impl DrawClaim {
    /// Checks this claim by the player to move in `game`, with the intended move (SAN, FIDE
    /// scoresheet notation or UCI) if the claim is made with a move not yet played (9.2.1.1,
    /// 9.3.1).
    pub fn check(
        self,
        game: &Game,
        intended_move: Option<&str>,
    ) -> Result<ClaimVerdict, GameError> {
        let intended = intended_move
            .map(|text| {
                scoresheet::parse_any(game.position(), game.castling_mode(), text).map_err(|e| {
                    GameError::IllegalMove {
                        mv: format!("{text} ({e})"),
                        fen: game.fen(),
                    }
                })
            })
            .transpose()?;
        Ok(match self {
            DrawClaim::Threefold => game.claim_threefold(intended),
            DrawClaim::FiftyMoves => game.claim_fifty(intended),
        })
    }
}
