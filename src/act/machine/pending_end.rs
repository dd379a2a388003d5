//! The end of a game while it waits: an automatic end reached by a move that may still be
//! revised, a result signal that has not stood long enough, the signal that ended the game,
//! and the positions waiting for the shell's dead-position analysis.

use shakmaty::Chess;

use crate::act::ending::Ending;
use crate::board::Millis;
use crate::rules::{Budget, is_dead};

/// How long both kings must stand on the centre squares before the signal ends the game (a
/// knocked king can land beside the other for a moment).
pub(super) const SIGNAL_STANDS_MS: Millis = 1_000;

/// An automatic end reached by a move that may still be revised.
#[derive(Debug, Clone)]
pub(super) struct PendingEnd {
    pub(super) end: Ending,
    pub(super) ply: usize,
    pub(super) t_ms: Millis,
}

/// A position after a recorded move whose dead-position analysis is to be run by the shell.
#[derive(Debug, Clone)]
pub struct AnalysisRequest {
    /// The ply whose position it is (1 = after White's first move of a standard game).
    ply: usize,
    position: Chess,
    budget: Budget,
}

impl AnalysisRequest {
    /// The number of plies played to reach the position.
    pub fn ply(&self) -> usize {
        self.ply
    }

    /// The position to analyse.
    pub(super) fn position(&self) -> &Chess {
        &self.position
    }

    /// Runs the analysis within the machine's budget: `Some(true)` when the position is dead,
    /// `None` when undetermined. Slow: run it away from the observation path.
    pub fn analyse(&self) -> Option<bool> {
        if !self.budget.allows_search() {
            return None;
        }
        is_dead(&self.position, &self.budget)
    }
}

/// The ends waiting. Changed only through its methods: an automatic end reached
/// (`dead_position.rs`), confirmed or dropped (`start_and_end.rs`), withdrawn with its move
/// (`adopting.rs`); a position handed to the shell for analysis (`dead_position.rs`); a
/// result signal seen, gone or stood, and the signal that ended the game (`input.rs`,
/// `start_and_end.rs`).
#[derive(Debug, Clone)]
pub(super) struct Ends {
    /// An automatic end waiting for its move to stand.
    pending: Option<PendingEnd>,
    /// Positions waiting for the shell's dead-position analysis, oldest first.
    analysis_requests: Vec<AnalysisRequest>,
    /// A result signal on the board and when it was made: it ends the game once it has
    /// stood [`SIGNAL_STANDS_MS`].
    pending_signal: Option<(Ending, Millis)>,
    /// The result of the result signal that ended the game: the arbiter may still be
    /// moving the kings, and the signal that stands counts.
    signalled: Option<&'static str>,
}

impl Ends {
    /// Nothing waiting.
    pub(super) fn new() -> Ends {
        Ends {
            pending: None,
            analysis_requests: Vec::new(),
            pending_signal: None,
            signalled: None,
        }
    }

    /// The automatic end waiting for its move to stand.
    pub(super) fn pending(&self) -> Option<&PendingEnd> {
        self.pending.as_ref()
    }

    /// A move reached an automatic end: it waits for the move to stand.
    pub(super) fn end_reached(&mut self, end: PendingEnd) {
        self.pending = Some(end);
    }

    /// The automatic end waiting was made, or its move is no longer recorded.
    pub(super) fn end_dropped(&mut self) {
        self.pending = None;
    }

    /// The moves after the first `keep` plies were withdrawn, with an end one of them
    /// reached.
    pub(super) fn moves_withdrawn_after(&mut self, keep: usize) {
        if self.pending.as_ref().is_some_and(|p| p.ply > keep) {
            self.pending = None;
        }
    }

    /// The position after ply `ply` is handed to the shell for its analysis.
    pub(super) fn analysis_requested(&mut self, ply: usize, position: Chess, budget: Budget) {
        self.analysis_requests.push(AnalysisRequest {
            ply,
            position,
            budget,
        });
    }

    /// The positions waiting for their analysis, taken by the shell.
    pub(super) fn analysis_requests_taken(&mut self) -> Vec<AnalysisRequest> {
        std::mem::take(&mut self.analysis_requests)
    }

    /// The board shows `signal` at `t`: it waits to stand, timed from its first showing.
    pub(super) fn signal_seen(&mut self, signal: Ending, t: Millis) {
        if self
            .pending_signal
            .as_ref()
            .is_none_or(|(pending, _)| pending.result != signal.result)
        {
            self.pending_signal = Some((signal, t));
        }
    }

    /// The board shows no result signal.
    pub(super) fn signal_gone(&mut self) {
        self.pending_signal = None;
    }

    /// True while a result signal waits to stand.
    pub(super) fn signal_waiting(&self) -> bool {
        self.pending_signal.is_some()
    }

    /// When the signal waiting will have stood.
    pub(super) fn signal_due(&self) -> Option<Millis> {
        self.pending_signal
            .as_ref()
            .map(|(_, at)| at.saturating_add(SIGNAL_STANDS_MS))
    }

    /// The signal waiting, if it has stood by `now`, taken with when it was made.
    pub(super) fn signal_stood(&mut self, now: Millis) -> Option<(Ending, Millis)> {
        self.signal_due().filter(|&due| now >= due)?;
        self.pending_signal.take()
    }

    /// The result of the signal that ended the game, while it may still change.
    pub(super) fn signalled(&self) -> Option<&'static str> {
        self.signalled
    }

    /// A result signal ended the game with `result`.
    pub(super) fn ended_by_signal(&mut self, result: &'static str) {
        self.signalled = Some(result);
    }

    /// The pieces left the final position: the signal no longer changes.
    pub(super) fn board_cleared(&mut self) {
        self.signalled = None;
    }
}
