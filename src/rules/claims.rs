//! Draw claims checked for the arbiter: threefold repetition (9.2) and the fifty-move rule (9.3),
//! with or without the move the claimant intends to play.

use shakmaty::san::SanPlus;
use shakmaty::{Move, Position};

use super::game::{Game, repetition_key};

/// The answer to a draw claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimVerdict {
    /// Whether the claim is correct.
    pub valid: bool,
    /// Threefold: the plies after which the position occurred (an intended move's position is
    /// `plies() + 1`). Fifty moves: the ply where the count of moves without a pawn move or a
    /// capture starts.
    pub plies: Vec<usize>,
    /// A sentence for the arbiter.
    pub explanation: String,
}

impl ClaimVerdict {
    fn invalid(explanation: String) -> ClaimVerdict {
        ClaimVerdict {
            valid: false,
            plies: Vec::new(),
            explanation,
        }
    }
}

impl Game {
    /// Checks a threefold-repetition claim (9.2) by the player to move: the current position
    /// has occurred at least three times, or (with `intended`, 9.2.1.1) will have after that
    /// move.
    pub fn claim_threefold(&self, intended: Option<Move>) -> ClaimVerdict {
        let now = self.plies();
        let (occurrences, subject) = match intended {
            None => (self.occurrences(now), "the current position".to_string()),
            Some(mv) => {
                let pos = self.position();
                if !pos.is_legal(mv) {
                    return ClaimVerdict::invalid(format!(
                        "the intended move is illegal in {}",
                        self.fen()
                    ));
                }
                let san = SanPlus::from_move(pos.clone(), mv).to_string();
                let mut next = pos.clone();
                next.play_unchecked(mv);
                let mut found = self.earlier_occurrences(&next, repetition_key(&next), now + 1);
                found.push(now + 1);
                (found, format!("the position after the intended {san}"))
            }
        };
        let times = occurrences.len();
        let valid = times >= 3;
        let explanation = format!(
            "{subject} occurs {times} time{} (after plies {}); {}",
            if times == 1 { "" } else { "s" },
            join(&occurrences),
            if valid {
                "the claim is valid (9.2)"
            } else {
                "three are needed (9.2): the claim is not valid"
            }
        );
        ClaimVerdict {
            valid,
            plies: occurrences,
            explanation,
        }
    }

    /// Checks a fifty-move claim (9.3) by the player to move: the last 50 moves of each player
    /// (counting `intended`, if given) had no pawn move and no capture.
    pub fn claim_fifty(&self, intended: Option<Move>) -> ClaimVerdict {
        let pos = self.position();
        let now = self.plies();
        let (count, last_ply) = match intended {
            None => (pos.halfmoves(), now),
            Some(mv) => {
                if !pos.is_legal(mv) {
                    return ClaimVerdict::invalid(format!(
                        "the intended move is illegal in {}",
                        self.fen()
                    ));
                }
                if mv.is_zeroing() {
                    return ClaimVerdict::invalid(
                        "the intended move is a pawn move or a capture: the count restarts (9.3)"
                            .to_string(),
                    );
                }
                (pos.halfmoves() + 1, now + 1)
            }
        };
        let start = last_ply as i64 - i64::from(count);
        let valid = count >= 100;
        let from = if start >= 0 {
            format!("since ply {start}")
        } else {
            "since before the recorded start position".to_string()
        };
        let explanation = format!(
            "{count} plies without a pawn move or a capture {from}; {}",
            if valid {
                "the claim is valid (9.3)"
            } else {
                "100 are needed (9.3): the claim is not valid"
            }
        );
        ClaimVerdict {
            valid,
            plies: vec![start.max(0) as usize],
            explanation,
        }
    }
}

fn join(plies: &[usize]) -> String {
    plies
        .iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}
