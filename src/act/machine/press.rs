//! What a clock press leaves waiting: a press for the board to show its move, or a move
//! it completed, within its grace period.

use shakmaty::Color;

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
