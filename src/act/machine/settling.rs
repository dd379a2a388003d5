//! When a move becomes final: completions by a press and the grace period.

use shakmaty::{Bitboard, Color, Move, Position};

use super::press::Completion;
use super::{Machine, REREAD_PLIES, ply_number};
use crate::act::Event;
use crate::act::touch::Lift;
use crate::board::Millis;

impl Machine {
    /// Makes a press-confirmed move final once its grace period is over.
    pub(super) fn settle_completion(&mut self, now: Millis) {
        if let Some(c) = self.presses.completion()
            && now >= self.completion_due(c)
            && !self.slide_may_continue(c.ply)
            && !self.held_since_made(c.ply)
            && !self.slide_reported_ahead(c.ply)
        {
            self.presses.completion_done();
            let ply = match self.gap_turn_unconfirmed_from() {
                Some(before) => c.ply.min(before),
                None => c.ply,
            };
            self.settle(ply.max(self.record.settled()));
        }
    }

    /// When a press-confirmed move becomes final: the grace period after the press, or after
    /// the move's piece last arrived when the board reported it arriving after the press (a
    /// slide that went on past the press may go on further).
    pub(super) fn completion_due(&self, c: Completion) -> Millis {
        let reached = self.record.reached_at().get(c.ply).copied().unwrap_or(0);
        c.due
            .max(reached.saturating_add(self.config.press_grace_ms))
    }

    /// True when the last recorded move is `ply`, its landing square was vacated again and
    /// the opponent had lifted nothing before that: the piece may have only passed there.
    /// After an opponent's lift the move was over; its landing square emptying is the next
    /// move beginning.
    pub(super) fn slide_may_continue(&self, ply: usize) -> bool {
        if self.landing_stands(ply) {
            return false;
        }
        let Some(played) = ply
            .checked_sub(1)
            .and_then(|i| self.record.game().moves().get(i))
        else {
            return false;
        };
        let made = self.record.reached_at().get(ply).copied().unwrap_or(0);
        let vacated = self
            .square_reports
            .last(played.mv.to())
            .unwrap_or(Millis::MAX);
        let mover = self.record.game().positions()[ply - 1].turn();
        !self
            .touches
            .lifts()
            .iter()
            .any(|l| l.piece.color != mover && l.t_ms >= made && l.t_ms <= vacated)
    }

    /// True when `ply` is the last recorded move and play has been held since just after it
    /// was read (within a scan): its position never stood, so the move may have been a
    /// knocked piece, and it stays open to revision until the board explains itself.
    pub(super) fn held_since_made(&self, ply: usize) -> bool {
        if !self.hold.is_held() || ply == 0 || ply != self.record.game().plies() {
            return false;
        }
        let made = self.record.reached_at().get(ply).copied().unwrap_or(0);
        if self.hold.since() > made.saturating_add(self.config.report_reorder_ms) {
            return false;
        }
        let mover = self.record.game().positions()[ply - 1].turn();
        let occupied = self.record.game().position().board().occupied();
        let since_made = |l: &&Lift| l.t_ms >= made && l.t_ms <= self.hold.since();
        // An opponent's piece lifted after one of the mover's that could take it is the
        // victim of the mover's own hand, not a reply.
        let taken_by_mover = |victim: &Lift| {
            self.touches.lifts().iter().filter(since_made).any(|l| {
                l.piece.color == mover
                    && l.t_ms <= victim.t_ms
                    && shakmaty::attacks::attacks(l.sq, l.piece, occupied).contains(victim.sq)
            })
        };
        let replied = self
            .touches
            .lifts()
            .iter()
            .filter(since_made)
            .any(|l| l.piece.color != mover && !taken_by_mover(l));
        !replied
    }

    /// False when the last recorded move is `ply` and a square it put a piece on differs
    /// from the game again: the piece was lifted on, so the press does not confirm a square
    /// it only passed through, and the move stays open to revision.
    pub(super) fn landing_stands(&self, ply: usize) -> bool {
        let Some(played) = self.record.game().moves().last() else {
            return true;
        };
        if ply != self.record.game().plies() {
            return true;
        }
        let landed = match played.mv {
            Move::Castle { king, rook } => match played.mv.castling_side() {
                Some(side) => {
                    let color = self.record.game().positions()[ply - 1].turn();
                    Bitboard::from(side.king_to(color)) | Bitboard::from(side.rook_to(color))
                }
                None => Bitboard::from(king) | Bitboard::from(rook),
            },
            m => Bitboard::from(m.to()),
        };
        let differing = self.sensed().diff(self.record.game().position().board());
        (landed & differing).is_empty()
    }

    pub(super) fn settle(&mut self, plies: usize) {
        self.record.settled_to(plies);
        // Moves read again are judged again under 4.3 and 4.4: the lifts of every move that
        // may still be read again are kept.
        let oldest_open = self.record.settled().saturating_sub(REREAD_PLIES);
        if let Some(had_move) = self.had_move(oldest_open) {
            self.touches.forget_lifts_before(had_move);
        }
        if let Some(&since) = self.record.reached_at().get(oldest_open) {
            self.touches.forget_placements_before(since);
        }
    }

    pub(super) fn complete(&mut self, by: Color, t: Millis, n: usize, out: &mut Vec<Event>) {
        self.quick_reply_pressed(by, n);
        out.push(Event::MoveCompleted {
            ply: ply_number(n),
            side: by.into(),
            t_ms: t,
        });
        self.record.completed_by_press(n, t);
        // The board may still report the end of a slide made before the press: the move
        // stays revisable for the grace period.
        let now = self.now.max(t);
        self.presses.move_completed(Completion {
            by,
            ply: n,
            pressed: t,
            due: now.saturating_add(self.config.press_grace_ms),
        });
    }
}
