//! Notation: the PGN writer and reader, and FIDE scoresheet notation.
//!
//! [`GameRecord`] is what every output (replay, the recorder's files, the server) writes.

pub mod arbiter;

use crate::board::Millis;

/// One move of a recorded game, with what is known about its timing and any comments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordedMove {
    /// SAN with check/mate suffix.
    pub san: String,
    /// UCI form of the same move.
    pub uci: String,
    /// Remaining time of the mover after the move, if a clock reading is known (`[%clk]`).
    pub clock_ms: Option<u64>,
    /// Time the mover spent on the move, if known (`[%emt]`).
    pub elapsed_ms: Option<u64>,
    /// When the move was made, in the session's milliseconds.
    pub t_ms: Option<Millis>,
    /// Comments after the move (arbiter notes, irregularities), written as `{...}`.
    pub comments: Vec<String>,
}

/// A game as it is written to PGN.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameRecord {
    /// Tags in any order; the writer puts the seven-tag roster first, in its order.
    pub tags: Vec<(String, String)>,
    /// FEN of the start position when it is not the standard start.
    pub start_fen: Option<String>,
    /// True for a Chess960 game (`[Variant "Chess960"]`).
    pub chess960: bool,
    /// Comment before the first move.
    pub initial_comments: Vec<String>,
    /// The moves.
    pub moves: Vec<RecordedMove>,
    /// PGN result token (`1-0`, `0-1`, `1/2-1/2`, `*`).
    pub result: String,
}
