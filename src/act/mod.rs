//! The act of moving (FIDE Articles 4 and 7): turns observations into moves and alerts.
//!
//! The machine is deterministic and does no I/O: observations (with their receive times)
//! in, [`Event`]s out. Time is a parameter: nothing here reads a clock. Its events are the
//! contract with the recorder, the store and the server.
//!
//! # Driving it
//!
//! - [`Machine::observe`] takes one observation and appends what it caused to `out`.
//! - [`Machine::next_deadline`] says when something falls due without an observation (a
//!   press to judge, a move to make final, a lost update to look for, an end to confirm);
//!   the caller's timer then calls [`Machine::advance`] with that time.
//! - [`Machine::catch_up`] does, each at its own time, whatever fell due before a given
//!   time; `observe` calls it itself, so a caller without a timer loses nothing but
//!   promptness.
//!
//! # How it reads the board
//!
//! After every observation the sensed board is compared with the game position. If it is
//! the position after one legal move, that move is recorded at once (no settle delay). If
//! it is explained by a different move from a position whose move was not yet confirmed by
//! a clock press (a slide that continued, a rook-first castling), the unconfirmed moves are
//! withdrawn with [`Event::Revision`] and replaced. If updates were missed, the shortest
//! sequence of legal moves that explains the board is reconstructed; when several explain
//! it, only their common part is recorded and an alert says where the doubt is. A board
//! that no legal continuation explains and that is not a move being made holds the game
//! ([`Event::BoardState`]) until it is restored (7.4, 7.6). Lifts are the touches a sensor
//! board can see: they are judged under 4.3 and 4.4 when the move is made.
//!
//! # States
//!
//! The life of a game ([`Phase`]):
//!
//! ```text
//!            start position stands                 mate, stalemate, dead position,
//!            (7.2.1: a wrong set-up is told)       repetition, 75 moves (confirmed),
//!   Waiting ─────────────────────────────▶ Playing ─── result signal, magic piece ──▶ Ended
//!                                           ▲   │                                      │
//!                                           │   │ start position again                 │
//!                                           │   └──(the board reset mid-game)──┐       │
//!                                           └──────────────────────────────────┴───────┘
//!                                                      start position stands
//! ```
//!
//! While playing, each recorded move goes through these states, and the board as a whole
//! is either explained or held:
//!
//! ```text
//!  board explained by one move (or a reconstruction)
//!        │
//!        ▼
//!  open ────── clock press by the mover (6.2.1) ──────▶ completed ── press grace over,
//!   │ │        (judged after the press grace when the                 landing square
//!   │ │         board does not show the move yet)                     stands ──▶ final
//!   │ └── two more moves recorded (revisable plies) ───────────────────────────▶ final
//!   │
//!   └── the board shows another move from before it ──▶ withdrawn (Revision) and replaced
//!
//!  final ── only the board's later reports explain it otherwise (re-read plies) ──▶ re-read
//!
//!  board explained ── nothing explains it, no move in progress ──▶ held (BoardState)
//!  held ── board matches the game, or a continuation explains it ──▶ explained
//! ```
//!
//! # Vocabulary
//!
//! The names the code uses, in one place:
//!
//! - **observation**: one report of the board or clock (a square emptied or placed, a full
//!   board dump, a press, clock times), with its receive time.
//! - **sensed board**: the board as the sensors show it now, in game coordinates (a board
//!   turned round, 7.2.2, is mapped square by square).
//! - **reading**: what explains the sensed board, relative to the game: the game as it is,
//!   moves to adopt from some ply on (with a doubt or not), or nothing (possibly a move
//!   still being made). Readings are tried from the likeliest to the least likely.
//! - **adopting**: making the game from a ply on be the moves of a reading; moves recorded
//!   past that ply that differ are withdrawn first.
//! - **revision**: withdrawing recorded moves that turned out not to be the real ones
//!   ([`Event::Revision`]); only **open** (revisable) moves are revised.
//! - **reconstruction**: two or more moves that together explain a board whose updates were
//!   missed (at most [`MachineConfig::max_reconstruction_plies`]).
//! - **re-reading**: reading moves already made final again, when only that explains what
//!   the board reported since (a slow scan reported a slide's end after the press).
//! - **slide**, **moved on**, **carried on**: a piece seen arriving on a square and then
//!   going on along its line; the pause was read as the move, and the move is revised to
//!   the longer one (within [`MachineConfig::moved_on_ms`]).
//! - **doubt**: why adopted moves are not certain (several move orders, overlapping
//!   actions, a piece never seen arriving, a quick reply, a slide seen late, a promotion
//!   piece an occupancy-only board cannot see). Raised once as an alert for the arbiter.
//! - **hold**: while nothing explains the board and no move is being made, the game is held
//!   on the differing squares ([`Event::BoardState`]); recording resumes once the board is
//!   restored or explained.
//! - **unrestored**: the hold after a completed illegal move (7.5.1), until the position
//!   before it is set up again; presses on that board are not further illegal moves.
//! - **press**: a clock press. It **completes** the presser's move (6.2.1,
//!   [`Event::MoveCompleted`]); a press by the side to move without a recognised move is
//!   judged under 7.5.1, 7.5.2 or 7.5.3.
//! - **press grace**: [`MachineConfig::press_grace_ms`]: a press is judged, and a completed
//!   move made final, only this long after the press, since a board may report the last
//!   placement after the press.
//! - **overtaken press**: a press by the side to move still waiting for the board when the
//!   opponent pressed; it is judged first.
//! - **final** (**settled**): a move no later observation revises, except by a re-reading.
//! - **surplus**, **lost update**: one piece more of a kind than the game can have: a lift
//!   the board did not report. After [`MachineConfig::missed_update_ms`] the square whose
//!   lift was lost is looked for and taken as empty.
//! - **reports**: when each square was last reported, which a reconstruction's moves must
//!   agree with (within [`MachineConfig::report_reorder_ms`]).
//! - **placements**: the pieces the board named on squares since the oldest open move: what
//!   a reconstruction's promotions and captured arrivals must have been seen as.
//! - **two hands**: two far-apart lifts or placements within
//!   [`MachineConfig::two_hands_threshold_ms`] that one move involves (7.5.4).
//! - **pending end**: an automatic end (mate, stalemate …) reached by a move that may still
//!   be revised; it ends the game once the move stands.
//! - **result signal**: both kings put on the centre squares (or a magic piece): the
//!   players' agreed result.
//!
//! # Where to find what
//!
//! The machine lives in `machine/`, one file per concern, all `impl Machine` blocks:
//! `input` (observations and time), `hands` (lifts, placements, 7.5.4, 4.8), `reading`
//! (what explains the board), `rereading` and `slides` (moves already recorded read again),
//! `lost_updates`, `adopting` (revisions and the hold), `recording` (a move and its
//! touch-move judgement), `settling` (completions and finality), `doubts`, `presses`,
//! `press_judgment` and `illegal_moves` (7.5), `start_and_end`, and `config`. The board
//! search itself (which moves leave this board) is in `search`, touch-move in `touch`,
//! set-ups in `start`, automatic ends and result signals in `ending`.
//!
//! # Alerts raised, by article
//!
//! 4.3.1, 4.3.2, 4.3.3, 4.4.1, 4.4.2, 4.4.3 (touch-move and castling order, with 4.8 when
//! the opponent's claim lapsed), 4.6 (promotion piece assumed a queen on an occupancy-only
//! board), 4.7 (a piece released and moved again), 7.2.1 (wrong set-up, square by square),
//! 7.4 (displaced pieces, moves read from overlapping actions), 7.5.1, 7.5.2, 7.5.3
//! (completed illegal moves; a press is judged after [`MachineConfig::press_grace_ms`],
//! since a board may report the last placement after the press), 7.5.4 (suspected two
//! hands), 7.5.5 (the proposed penalty), 3.7.3.1 (a double step taken en passant unseen),
//! 3.10.3 (an illegal position at a press), 8.1 (king moves taken as a result signal) and
//! 8.5.3 (missed updates that several move orders explain, moves re-read).

mod ending;
mod machine;
mod physical;
pub mod scenario;
mod search;
mod start;
mod touch;

pub use machine::{AnalysisRequest, Machine, MachineConfig, Phase, TAKE_UP_QUIET_MS};
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
    /// The board's game was closed: after it ended (or stopped without a result), the
    /// pieces were set up again. The game stays as recorded; what the board shows from now
    /// on is after the game (a post-mortem, the next set-up) and is not recorded in it, until
    /// the arbiter starts a new game on the board.
    GameClosed {
        /// When the new set-up was recognised.
        t_ms: Millis,
        /// Plies the closed game has.
        plies: u32,
        /// Its result, `*` while the arbiter's is awaited.
        result: String,
        /// Set up again after only a few moves and no result: perhaps a restart (wrong
        /// colours, a wrong set-up), which the arbiter decides by starting a new game.
        restart: bool,
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
    /// For an alert about a gap in the board's reports (an outage): how the record
    /// accounts for the moves nobody saw, so that the record and the arbiter can act on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gap: Option<GapAccount>,
    /// Earlier alerts this one replaces: later evidence showed them wrong (a gap read again,
    /// moves re-read from the board's move log). They stand no longer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub withdraws: Vec<AlertRef>,
    /// The alert is about the set-up of the next game (7.2.1), not about the game recorded
    /// so far: it stays out of that game's record.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub before_game: bool,
}

/// Names an earlier alert: its article, ply and time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertRef {
    /// The article of the alert withdrawn.
    pub article: String,
    /// Its ply.
    pub ply: u32,
    /// When it was raised.
    pub t_ms: Millis,
}

impl Alert {
    /// A reference to this alert, for a later one that withdraws it.
    pub fn reference(&self) -> AlertRef {
        AlertRef {
            article: self.article.clone(),
            ply: self.ply,
            t_ms: self.t_ms,
        }
    }

    /// True when `r` names this alert.
    pub fn is(&self, r: &AlertRef) -> bool {
        self.article == r.article && self.ply == r.ply && self.t_ms == r.t_ms
    }
}

/// How the moves of a gap in the board's reports were recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum GapAccount {
    /// Several move orders explain the gap; the one that fits the evidence best is recorded
    /// from the alert's ply on. Moves in UCI.
    Orders {
        /// The order recorded.
        recorded: Vec<String>,
        /// The other orders that reach the same position, from the likeliest.
        others: Vec<Vec<String>>,
    },
    /// No legal sequence of moves short enough explains the board: the game goes on from
    /// the board's position, and the machine counts plies afresh from it.
    Reanchored {
        /// The position the game goes on from (the board's, with the side to move as the
        /// clock shows it).
        fen: String,
    },
}
