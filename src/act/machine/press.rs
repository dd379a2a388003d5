//! What a clock press leaves waiting: a press for the board to show its move, or a move
//! it completed, within its grace period; and the presses of a game so far waiting.

use shakmaty::Color;

use super::reading::Reading;
use crate::board::Millis;

/// How many grace periods after a press its judgement may wait for a board in motion.
pub(super) const PRESS_WAITS_FOR_MOTION: Millis = 3;

/// The due time of a press that waits for the board, not the clock: it completes its move
/// once the board is set right (displaced pieces set back, a lost update made good).
pub(super) const WHEN_RESTORED: Millis = Millis::MAX;

/// A clock press waiting for the board: `ply` is the ply it completes, `due` when it is
/// judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Press {
    pub(super) by: Color,
    pub(super) t_ms: Millis,
    pub(super) ply: usize,
    pub(super) due: Millis,
    /// The pawn move the board showed unfinished at a press by the side to move (the pawn
    /// on the last rank), with the plies the game had then: the press completed it (7.5.2)
    /// even if the pawn is taken back before the press is judged. It ends with its press.
    pub(super) promotion: Option<(usize, shakmaty::Move)>,
    /// When an earlier press of the same player, for the same move, was already waiting for
    /// the board to be set right (a lost report, displaced pieces): this press may let the
    /// board be read as moves made, but is no new move of his to judge (7.5.x).
    pub(super) awaited: Option<Millis>,
}

/// A clock press that completed a move, still within its grace period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Completion {
    pub(super) by: Color,
    pub(super) ply: usize,
    pub(super) pressed: Millis,
    /// Settled from this time on, once the board shows the game position.
    pub(super) due: Millis,
}

/// The presses waiting on the board and the move a press completed within its grace
/// period. Changed only through its methods: a press made, overtaken, left waiting, taken
/// to be judged or completed (`presses.rs`, `press_judgment.rs`, `input.rs`, `adopting.rs`,
/// `gone_on.rs`), a move completed or settled (`settling.rs`), a promotion left
/// unexchanged at a press (`illegal_moves.rs`), the end of the game (`start_and_end.rs`).
#[derive(Debug, Clone)]
pub(super) struct Presses {
    /// A press waiting to be judged or to complete its move.
    waiting: Option<Press>,
    /// A press by the side to move that the opponent's press overtook while it waited for
    /// the board to come to rest; judged, before the opponent's, when that one falls due.
    overtaken: Option<Press>,
    /// The time of a press by the player not to move, made while nothing of his was left to
    /// complete and the opponent's press waited for the board: his reply's, if both moves
    /// are read together (`Machine::complete_reply_pressed_early`).
    reply_pressed_early: Option<Millis>,
    /// What the board read as at a pending press by the side to move, and the plies the
    /// game had then: moves the press ended, should the board be changed again before the
    /// press is judged (a knocked piece, the reply begun).
    reading_at_press: Option<(usize, Reading)>,
    /// A move a press completed, within its grace period.
    completion: Option<Completion>,
    /// The ply recorded with a queen for a pawn left on the last rank at the press (7.5.2),
    /// and that press's time: a piece put there later replaces the queen, without a second
    /// penalty.
    unexchanged: Option<(usize, Millis)>,
}

impl Presses {
    /// Nothing waiting.
    pub(super) fn new() -> Presses {
        Presses {
            waiting: None,
            overtaken: None,
            reply_pressed_early: None,
            reading_at_press: None,
            completion: None,
            unexchanged: None,
        }
    }

    /// The press waiting to be judged or to complete its move.
    pub(super) fn waiting(&self) -> Option<Press> {
        self.waiting
    }

    /// The press the opponent's overtook.
    pub(super) fn overtaken(&self) -> Option<Press> {
        self.overtaken
    }

    /// The move a press completed, within its grace period.
    pub(super) fn completion(&self) -> Option<Completion> {
        self.completion
    }

    /// When the next waiting press falls due (one waiting for the board to be set right
    /// falls due with the board, not the clock).
    pub(super) fn next_due(&self) -> Option<Millis> {
        self.waiting
            .iter()
            .chain(&self.overtaken)
            .map(|p| p.due)
            .filter(|&due| due != WHEN_RESTORED)
            .min()
    }

    /// `press` waits for the board, to be judged or to complete its move when due.
    pub(super) fn waits(&mut self, press: Press) {
        self.waiting = Some(press);
    }

    /// `press` waits, and `judged_first`, the other player's press still waiting, is
    /// judged before it in its turn (unless one was overtaken already).
    pub(super) fn waits_after(&mut self, press: Press, judged_first: Option<Press>) {
        if self.overtaken.is_none() {
            self.overtaken = judged_first;
        }
        self.waiting = Some(press);
    }

    /// The waiting press is overtaken by the opponent's: judged first, at `due`.
    pub(super) fn waiting_overtaken(&mut self, due: Millis) {
        if let Some(press) = self.waiting.take() {
            self.overtaken = Some(Press { due, ..press });
        }
    }

    /// `press`, overtaken, waits until `due` for the board; the press that overtook it
    /// waits as long.
    pub(super) fn overtaken_waits(&mut self, press: Press, due: Millis) {
        self.overtaken = Some(Press { due, ..press });
        if let Some(answer) = self.waiting.as_mut() {
            answer.due = answer.due.max(due);
        }
    }

    /// The waiting press, if due by `now`, is taken to be judged.
    pub(super) fn waiting_falls_due(&mut self, now: Millis) -> Option<Press> {
        self.waiting.filter(|p| now >= p.due)?;
        self.waiting.take()
    }

    /// The overtaken press, if due by `now`, is taken to be judged.
    pub(super) fn overtaken_falls_due(&mut self, now: Millis) -> Option<Press> {
        self.overtaken.filter(|p| now >= p.due)?;
        self.overtaken.take()
    }

    /// The waiting press completed its move (or was taken to be judged now).
    pub(super) fn waiting_done(&mut self) {
        self.waiting = None;
    }

    /// The overtaken press completed its move.
    pub(super) fn overtaken_done(&mut self) {
        self.overtaken = None;
    }

    /// The waiting press, when `is_for` accepts it, is for ply `ply`: the move its presser
    /// made last, read after all.
    pub(super) fn waiting_for_ply(&mut self, ply: usize, is_for: impl FnOnce(&Press) -> bool) {
        if let Some(press) = self.waiting.as_mut()
            && press.due != WHEN_RESTORED
            && is_for(press)
        {
            press.ply = ply;
        }
    }

    /// A reply was pressed for at `t` before the move it answers was read.
    pub(super) fn reply_pressed_before_read(&mut self, t: Millis) {
        self.reply_pressed_early = Some(t);
    }

    /// When a reply was pressed for before the move it answers was read.
    pub(super) fn reply_pressed_early(&self) -> Option<Millis> {
        self.reply_pressed_early
    }

    /// Both moves were read: the early press of the reply is judged now, once.
    pub(super) fn reply_press_judged(&mut self) {
        self.reply_pressed_early = None;
    }

    /// A new press: what the board read as at the last one no longer counts.
    pub(super) fn reading_at_press_forgotten(&mut self) {
        self.reading_at_press = None;
    }

    /// At a press by the side to move, with `plies` recorded, the board read as `reading`.
    pub(super) fn read_at_press(&mut self, plies: usize, reading: Option<Reading>) {
        self.reading_at_press = reading.map(|r| (plies, r));
    }

    /// What the board read as at the last press, taken to judge it.
    pub(super) fn reading_at_press_taken(&mut self) -> Option<(usize, Reading)> {
        self.reading_at_press.take()
    }

    /// A press completed its move: final once `completion`'s grace period is over.
    pub(super) fn move_completed(&mut self, completion: Completion) {
        self.completion = Some(completion);
    }

    /// The completed move is final, or stays open with the moves read with it: its grace
    /// period no longer matters.
    pub(super) fn completion_done(&mut self) {
        self.completion = None;
    }

    /// A queen was recorded at ply `ply` for a pawn left on the last rank at the press at
    /// `t` (7.5.2).
    pub(super) fn promotion_unexchanged(&mut self, ply: usize, t: Millis) {
        self.unexchanged = Some((ply, t));
    }

    /// The ply recorded with a queen for a pawn left unexchanged, and its press's time.
    pub(super) fn unexchanged(&self) -> Option<(usize, Millis)> {
        self.unexchanged
    }

    /// The queen recorded for the pawn was replaced, or its ply withdrawn.
    pub(super) fn exchange_settled(&mut self) {
        self.unexchanged = None;
    }

    /// The game ended: no press waits any more.
    pub(super) fn game_ended(&mut self) {
        self.waiting = None;
        self.overtaken = None;
    }
}
