//! The act of moving (FIDE Articles 4 and 7): turns observations into moves and alerts.
//!
//! The machine is deterministic: observations (with their receive times) in, [`Event`]s out.
//! Its events are the contract with the recorder, the store and the server.
//!
//! How it reads the board: after every observation the sensed board is compared with the
//! game position. If it is the position after one legal move, that move is recorded at once
//! (no settle delay). If it is explained by a different move from a position whose move was
//! not yet confirmed by a clock press (a slide that continued, a rook-first castling), the
//! unconfirmed moves are withdrawn with [`Event::Revision`] and replaced. If updates were
//! missed, the shortest sequence of legal moves that explains the board is reconstructed;
//! when several explain it, only their common part is recorded and an alert says where the
//! doubt is. A board that no legal continuation explains and that is not a move being made
//! holds the game ([`Event::BoardState`]) until it is restored (7.4, 7.6). Lifts are the
//! touches a sensor board can see: they are judged under 4.3 and 4.4 when the move is made.
//!
//! Alerts raised, by article: 4.3.1, 4.3.2, 4.3.3, 4.4.1, 4.4.2, 4.4.3 (touch-move and
//! castling order, with 4.8 when the opponent's claim lapsed), 4.6 (promotion piece assumed a
//! queen on an occupancy-only board), 7.2.1 (wrong set-up, square by square), 7.5.1, 7.5.2,
//! 7.5.3 (completed illegal moves; a press is judged after
//! [`MachineConfig::press_grace_ms`], since a board may report the last placement after the
//! press), 7.5.4 (suspected two hands), 7.5.5 (the proposed penalty), 3.10.3 (an illegal
//! position at a press) and 8.5.3 (missed updates that several move orders explain).

mod ending;
mod machine;
mod physical;
pub mod scenario;
mod search;
mod start;
mod touch;

pub use machine::{Machine, MachineConfig, Phase};
pub use physical::{InFlight, PhysicalBoard};

use serde::{Deserialize, Serialize};

use crate::board::{ColorName, Millis};

/// Everything the act-of-moving machine reports, in the order it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    /// A game started: its start position stands on the board.
    GameStart {
        /// When the start position was recognised.
        t_ms: Millis,
        /// FEN of the start position.
        fen: String,
        /// True for a Chess960 start other than the standard one.
        chess960: bool,
        /// True when the board was found turned round (FIDE 7.2.2) and squares are mapped.
        rotated: bool,
    },
    /// A move was made (4.7). `ply` counts from 1 for the first move of the game.
    Move {
        /// Ply number, 1 = White's first move in a standard game.
        ply: u32,
        /// The move in UCI (for Chess960 castling, king-to-rook form is not used: e1g1 style
        /// in standard games, king-captures-rook in Chess960).
        uci: String,
        /// The move in SAN with check/mate suffix.
        san: String,
        /// Time of the observation that made the move unambiguous.
        t_ms: Millis,
        /// Side that made the move.
        side: ColorName,
        /// FEN after the move.
        fen: String,
    },
    /// A previously emitted move turned out not to be the real one (for example a slide that
    /// continued). Every move from `ply` on is withdrawn; the moves that replace them follow
    /// as new `Move` events.
    Revision {
        /// First withdrawn ply.
        ply: u32,
        /// UCI of the withdrawn moves, in order.
        withdrawn: Vec<String>,
        /// When the evidence arrived.
        t_ms: Millis,
    },
    /// A clock press completed the move of `side` (6.2.1).
    MoveCompleted {
        /// Ply that was completed (0 if no move had been made: see 7.5.3 alert).
        ply: u32,
        /// The player who pressed.
        side: ColorName,
        /// When.
        t_ms: Millis,
    },
    /// Clock times changed.
    Clock {
        /// White's remaining time in milliseconds.
        white_ms: u64,
        /// Black's remaining time in milliseconds.
        black_ms: u64,
        /// Ply count of the game when read.
        ply: u32,
        /// When.
        t_ms: Millis,
    },
    /// Something for the arbiter.
    Alert(Alert),
    /// The physical board no longer matches the game (or matches it again).
    BoardState {
        /// True while play is held because the board does not match (7.4/7.6).
        held: bool,
        /// Squares whose contents differ from the game position.
        differing: Vec<String>,
        /// When.
        t_ms: Millis,
    },
    /// The game ended.
    Result {
        /// PGN result token: `1-0`, `0-1`, `1/2-1/2`.
        result: String,
        /// Why, e.g. "checkmate", "stalemate", "dead position", "fivefold repetition",
        /// "75-move rule", "result signal: kings on light centre squares".
        reason: String,
        /// When.
        t_ms: Millis,
    },
}

/// How much an alert asks of the arbiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// For the log; no action expected.
    Info,
    /// The arbiter should look.
    Warning,
    /// Play is affected until the arbiter or the players act.
    Critical,
}

/// An alert for the arbiter: article, side, ply, times and evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Alert {
    /// FIDE article number, e.g. "4.4.2", "7.5.1", "7.5.4".
    pub article: String,
    /// The player concerned, if any.
    pub side: Option<ColorName>,
    /// The ply the alert concerns (the ply being played when it happened).
    pub ply: u32,
    /// When the alert was raised.
    pub t_ms: Millis,
    /// Times of the observations that are the evidence.
    pub evidence_ms: Vec<Millis>,
    /// Squares involved, in algebraic form.
    pub squares: Vec<String>,
    /// How much it asks of the arbiter.
    pub severity: Severity,
    /// A sentence for a human: what the sensors showed and what the article says.
    pub message: String,
}
