//! How the machine reads the board and the Laws it applies: [`MachineConfig`].

use crate::board::Millis;
use crate::rules::Budget;

/// How the machine reads the board and the Laws it applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineConfig {
    /// The board tells pieces apart (DGT). False for occupancy-only boards: promotions are
    /// then assumed to a queen and raised for the arbiter.
    pub identifies_pieces: bool,
    /// Two lifts or placements closer than this, on squares two or more files or ranks
    /// apart, raise a suspected 7.5.4 (two hands).
    pub two_hands_threshold_ms: Millis,
    /// Blitz (Appendix B): 7.5.5 time penalties are 1 minute instead of 2.
    pub blitz: bool,
    /// A set-up for a FEN game: the game starts when this position stands, instead of the
    /// standard start.
    pub start_fen: Option<String>,
    /// Any of the 960 Chess960 starts begins a game (off by default: a standard set-up with
    /// king and queen swapped is then a wrong set-up, not a Chess960 game).
    pub chess960: bool,
    /// Longest sequence of moves reconstructed when board updates were missed.
    pub max_reconstruction_plies: usize,
    /// A clock press that arrives while a move is still being made is judged this long
    /// after the press (the board may report the last placement after the press).
    pub press_grace_ms: Millis,
    /// Moves that may still be revised when no clock press confirmed them.
    pub revisable_plies: usize,
    /// A piece placed while the board shows one more of its kind than the game can have is
    /// taken as a lost "emptied" update of another of its kind after this long (the board
    /// may report a placement before the lift that preceded it, by up to a scan).
    pub missed_update_ms: Millis,
    /// How much earlier than the lift before it the board may report a placement (a scan
    /// of the squares takes time): reconstructions of missed moves must agree with the
    /// report times within this.
    pub report_reorder_ms: Millis,
    /// A move that mates, stalemates or otherwise ends the game ends it once confirmed by a
    /// press or once its landing square has stood this long (a sliding piece passing a
    /// mating square has not moved there).
    pub end_confirm_ms: Millis,
    /// How long after a piece was seen arriving it may still be read as sliding on (a slide
    /// paused mid-way and reported late): its move is revised to the longer one, past the
    /// opponent's reply or a hold, with a 4.7 warning when it stood longer than a scan.
    pub moved_on_ms: Millis,
    /// How much unwinnability analysis may be spent after a move to find a dead position
    /// (5.2.2). The default is deterministic (no wall clock in the core).
    pub dead_position_budget: Budget,
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            identifies_pieces: true,
            two_hands_threshold_ms: 150,
            blitz: false,
            start_fen: None,
            chess960: false,
            max_reconstruction_plies: 4,
            press_grace_ms: 400,
            revisable_plies: 2,
            missed_update_ms: 1_000,
            report_reorder_ms: 600,
            end_confirm_ms: 1_000,
            moved_on_ms: 1_500,
            dead_position_budget: Budget::deterministic(),
        }
    }
}
