//! What the record does not settle yet: the doubt last raised, the captures an occupancy
//! board could not tell apart, an illegal move not yet undone, a reconstruction that a dump
//! may contradict, a reply quicker than a hand not yet pressed for.

use shakmaty::{Color, Move, Square};

use super::doubt::Doubt;
use crate::act::Alert;
use crate::rules::PlayedMove;

/// How many plies after the choice the other captures stay open to the board's reports: a
/// piece taken unseen is usually moved or taken again within a few moves.
pub(super) const CHOICE_OPEN_PLIES: usize = 40;

/// A capture recorded while other captures by the same piece left the board as it is, or
/// any capture whose landing the board never showed, kept open to the board's later reports.
#[derive(Debug, Clone)]
pub(super) struct CaptureChoice {
    /// The position the capture was made from.
    pub(super) ply: usize,
    /// The capturer's square.
    pub(super) from: Square,
    /// Captures once recorded here and withdrawn since, because the board ruled them out.
    pub(super) refuted: Vec<Move>,
}

/// A reply recorded sooner after the move before it than a hand answers, waiting for its
/// mover's press.
#[derive(Debug, Clone)]
pub(super) struct QuickReply {
    /// The reply's ply (1-based).
    pub(super) ply: usize,
    /// Who made it.
    pub(super) mover: Color,
    /// The square its piece came from.
    pub(super) from: Option<Square>,
    /// The 7.4 alert told unless the mover presses for it first.
    pub(super) alert: Alert,
}

/// The open doubts and choices. Changed only through its methods: a doubt raised or the
/// board read without one (`doubt_alerts.rs`, `adopting.rs`, `press_judgment.rs`), capture
/// choices made, kept open and read again (`capture_choice.rs`), an illegal move left
/// unrestored and play on it told (`illegal_moves.rs`, `press_judgment.rs`, `adopting.rs`),
/// a reconstruction adopted (`adopting.rs`), a quick reply recorded, pressed for, revised
/// or told (`recording.rs`).
#[derive(Debug, Clone)]
pub(super) struct OpenDoubts {
    /// The doubt last raised about the open moves: raised once, cleared when the board is
    /// read without one.
    doubt: Option<Doubt>,
    /// The captures presses left undecided on a board that senses only occupancy, while the
    /// board's later reports may still show which were made.
    capture_choices: Vec<CaptureChoice>,
    /// A completed illegal move (7.5.1) whose position has not been restored yet, while
    /// the game is held on it; true once a press made on the unrestored board was told.
    unrestored: Option<bool>,
    /// The ply from which the last reading adopted with a doubt of a displaced piece was
    /// reconstructed: a board dump that contradicts those moves revises them (8.5.3).
    reconstructed_from: Option<usize>,
    /// A reply complete sooner than a hand answers (7.4), not pressed for yet: its 7.4
    /// alert is told with the next move or revision, and dropped when its mover presses for
    /// it first (a piece knocked over is never pressed for).
    quick_reply: Option<QuickReply>,
    /// The last quick reply (its ply and move) while its mover has not pressed for it: a
    /// reading may withdraw it from before the move it answered
    /// (`Machine::knocked_reply_reading`).
    unpressed_reply: Option<(usize, Move)>,
}

impl OpenDoubts {
    /// Nothing open.
    pub(super) fn new() -> OpenDoubts {
        OpenDoubts {
            doubt: None,
            capture_choices: Vec::new(),
            unrestored: None,
            reconstructed_from: None,
            quick_reply: None,
            unpressed_reply: None,
        }
    }

    /// The doubt last raised about the open moves.
    pub(super) fn doubt(&self) -> Option<&Doubt> {
        self.doubt.as_ref()
    }

    /// `doubt` was raised about the open moves.
    pub(super) fn doubt_raised(&mut self, doubt: Doubt) {
        self.doubt = Some(doubt);
    }

    /// The board was read without a doubt.
    pub(super) fn read_without_doubt(&mut self) {
        self.doubt = None;
    }

    /// The capture choices kept open.
    pub(super) fn capture_choices(&self) -> &[CaptureChoice] {
        &self.capture_choices
    }

    /// At a press, the capture by the piece on `from` was chosen at ply `ply` among others
    /// the board could not tell apart: choices at or after it close, and those too old.
    pub(super) fn capture_chosen(&mut self, ply: usize, from: Option<Square>) {
        self.capture_choices
            .retain(|c| c.ply < ply && c.ply + CHOICE_OPEN_PLIES >= ply);
        if let Some(from) = from {
            self.capture_kept_open(ply, from);
        }
    }

    /// With `plies` recorded, the choices too old to be corrected close.
    pub(super) fn old_choices_closed(&mut self, plies: usize) {
        self.capture_choices
            .retain(|c| c.ply + CHOICE_OPEN_PLIES >= plies);
    }

    /// The capture at ply `ply` by the piece on `from` stays open to the board's reports.
    pub(super) fn capture_kept_open(&mut self, ply: usize, from: Square) {
        self.capture_choices.push(CaptureChoice {
            ply,
            from,
            refuted: Vec::new(),
        });
    }

    /// Before `moves` are adopted from position `from` in place of the `recorded` ones: a
    /// choice whose capture they replace by another capture of the same piece counts the
    /// replaced one refuted; one whose capture they replace by anything else is closed.
    pub(super) fn choices_read_again(
        &mut self,
        from: usize,
        moves: &[Move],
        recorded: &[PlayedMove],
    ) {
        self.capture_choices.retain_mut(|c| {
            let (Some(old), Some(&new)) = (
                recorded.get(c.ply).map(|p| p.mv),
                c.ply.checked_sub(from).and_then(|i| moves.get(i)),
            ) else {
                return true;
            };
            if old == new {
                return true;
            }
            let same_piece = new.is_capture() && new.from() == Some(c.from);
            if same_piece {
                c.refuted.push(old);
            }
            same_piece
        });
    }

    /// A completed illegal move left the board unrestored: `Some(told)`, `told` once a
    /// press on it was told.
    pub(super) fn unrestored(&self) -> Option<bool> {
        self.unrestored
    }

    /// A completed illegal move, its position not restored yet.
    pub(super) fn illegal_move_unrestored(&mut self) {
        self.unrestored = Some(false);
    }

    /// A press made on the unrestored board was told.
    pub(super) fn play_on_unrestored_told(&mut self) {
        if self.unrestored.is_some() {
            self.unrestored = Some(true);
        }
    }

    /// The hold on the unrestored board ended: the position is restored.
    pub(super) fn position_restored(&mut self) {
        self.unrestored = None;
    }

    /// The ply the last doubtful reconstruction was read from.
    pub(super) fn reconstructed_from(&self) -> Option<usize> {
        self.reconstructed_from
    }

    /// Moves were read with a doubt of a displaced piece, from ply `from`.
    pub(super) fn reconstructed(&mut self, from: usize) {
        self.reconstructed_from = Some(from);
    }

    /// The quick reply waiting for its mover's press.
    pub(super) fn quick_reply(&self) -> Option<&QuickReply> {
        self.quick_reply.as_ref()
    }

    /// The last quick reply (ply and move) while its mover has not pressed for it.
    pub(super) fn unpressed_reply(&self) -> Option<(usize, Move)> {
        self.unpressed_reply
    }

    /// A reply quicker than a hand was recorded as `m`.
    pub(super) fn quick_reply_recorded(&mut self, reply: QuickReply, m: Move) {
        self.unpressed_reply = Some((reply.ply, m));
        self.quick_reply = Some(reply);
    }

    /// The quick reply is taken to be told.
    pub(super) fn quick_reply_taken(&mut self) -> Option<QuickReply> {
        self.quick_reply.take()
    }

    /// The quick reply is not told: its mover pressed for it, or its piece only went on.
    pub(super) fn quick_reply_dropped(&mut self) {
        self.quick_reply = None;
    }

    /// The moves from ply `keep + 1` on were withdrawn: a reply among them is no longer
    /// one nobody pressed for.
    pub(super) fn replies_withdrawn_after(&mut self, keep: usize) {
        if self.unpressed_reply.is_some_and(|(ply, _)| ply > keep) {
            self.unpressed_reply = None;
        }
    }

    /// `by` pressed for ply `ply`; `mover_of` tells who made the move at a ply. A quick
    /// reply `by` made there was his own move, made at once; an unpressed reply of his up to
    /// it is pressed for.
    pub(super) fn reply_pressed(
        &mut self,
        by: Color,
        ply: usize,
        mover_of: impl Fn(usize) -> Option<Color>,
    ) {
        if self
            .quick_reply
            .as_ref()
            .is_some_and(|q| q.ply == ply && q.mover == by)
        {
            self.quick_reply = None;
        }
        if self
            .unpressed_reply
            .is_some_and(|(reply, _)| ply >= reply && mover_of(reply) == Some(by))
        {
            self.unpressed_reply = None;
        }
    }

    /// The unpressed reply is set aside, to read the board as though it were pressed for.
    pub(super) fn unpressed_reply_set_aside(&mut self) {
        self.unpressed_reply = None;
    }
}
