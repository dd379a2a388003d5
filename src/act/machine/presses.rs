//! Clock presses: which move a press completes, and when it is judged.

use shakmaty::{Bitboard, Color, Move, Position, Square};

use super::doubt::Doubt;
use super::press::{PRESS_WAITS_FOR_MOTION, Press, WHEN_RESTORED};
use super::reading::Reading;
use super::{Machine, Phase};
use crate::act::Event;
use crate::act::touch::Lift;
use crate::board::Millis;

impl Machine {
    /// Judges a press the opponent's press overtook, once due; the opponent's press then
    /// stands for the opponent's last move in the game as read.
    pub(super) fn judge_overtaken_press(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(press) = self.presses.overtaken_falls_due(now) else {
            return;
        };
        if self.phase != Phase::Playing
            || self.gone_on_to_unseen_capture(press, now, true, out)
            || self.try_complete(press, out)
            || !self.is_for_next_move(press)
        {
            return;
        }
        self.presses.reading_at_press_forgotten();
        self.judge_press(press, out);
        let n = self.record.game().plies();
        let positions = self.record.game().positions();
        self.presses
            .waiting_for_ply(n, |reply| n > 0 && positions[n - 1].turn() == reply.by);
    }

    /// True when `press` is by the side to move, for the move not yet on the board.
    pub(super) fn is_for_next_move(&self, press: Press) -> bool {
        press.ply == self.record.game().plies() + 1
            && self.record.game().position().turn() == press.by
    }

    /// When to judge `press` again instead of now: a hand still moving pieces (often the
    /// opponent already answering) is waited for, a while, before the press is judged on
    /// the board, and so is the search for a lost update.
    pub(super) fn wait_for_motion(&self, press: Press, now: Millis) -> Option<Millis> {
        let grace = self.config.press_grace_ms;
        // A piece not yet shown where it went may be on its way still, or its report late.
        let in_motion = || {
            matches!(
                self.read_board(),
                Reading::Unexplained { in_progress: true }
            ) || !self
                .sensed()
                .arrival_unseen(self.record.game().position())
                .is_empty()
        };
        // A piece the board shows one too many of is looked into before the press is
        // judged: a lost update, not an illegal move, may explain the board. Once: a search
        // that found nothing is not waited for again.
        if let Some((_, _, due)) = self.surplus
            && due > now
            && due <= press.t_ms.saturating_add(self.config.missed_update_ms)
            && !matches!(self.read_board(), Reading::Current | Reading::Adopt { .. })
        {
            return Some(due);
        }
        let mut wait_until = press.t_ms.saturating_add(PRESS_WAITS_FOR_MOTION * grace);
        // A board that shows a capture it cannot show has reported any other landing by
        // then: the piece took there, and what comes later is the reply.
        if now < wait_until && self.shows_capture_unseen() {
            wait_until = wait_until.min(self.landing_reported_by(press.t_ms));
        }
        (now < wait_until && in_motion()).then(|| now.saturating_add(grace).min(wait_until))
    }

    /// A reply pressed for before the move it answers was read ([`Machine::on_press`]), once
    /// both are read together and that move completed: the press completes the reply when it
    /// came after the board reported the reply's piece lifted.
    pub(super) fn complete_reply_pressed_early(&mut self, out: &mut Vec<Event>) {
        let Some(pressed) = self.presses.reply_pressed_early() else {
            return;
        };
        let n = self.record.game().plies();
        if n != self.record.completed() + 1 || n < 2 {
            return;
        }
        self.presses.reply_press_judged();
        if self.doubts.doubt().is_some_and(Doubt::keeps_moves_open) {
            return;
        }
        let mover = self.record.game().positions()[n - 1].turn();
        let lifted = self.lift_reported_at(self.record.game().moves()[n - 1].mv);
        if self.clock.pressed_at(mover) == Some(pressed) && lifted.is_some_and(|l| l <= pressed) {
            self.complete(mover, pressed, n, out);
        }
    }

    /// Completes the ply a press was for, if the game now holds that ply by the presser.
    pub(super) fn try_complete(&mut self, press: Press, out: &mut Vec<Event>) -> bool {
        let ply = self.pressed_for(press);
        let by_presser = ply >= 1
            && ply <= self.record.game().plies()
            && self.record.game().positions()[ply - 1].turn() == press.by;
        if by_presser
            && ply > self.record.completed()
            && (self.landing_stands(ply) || self.carried_on_beside_reply(ply, press.t_ms, out))
        {
            self.complete(press.by, press.t_ms, ply, out);
        }
        by_presser
    }

    /// The ply a press that waited for the board completes: the move it waited for, unless
    /// the board showed that move more than a report's delay after the press, while the
    /// presser's move before it was still open. A move is made before its press (6.2.1): one
    /// put down after it was not what it completed, and the press was for the open move,
    /// made late after the opponent replied, as blitz players do. Taken for the new move,
    /// it left the player's next press without a move: an unearned 7.5.3 penalty. Only on
    /// a board that names pieces, which reports every landing within a scan: on one that
    /// senses only occupancy a capture's landing is never reported, and when its move was
    /// read says nothing of when it was made.
    pub(super) fn pressed_for_landing_shown(&self, press: Press) -> usize {
        let ply = press.ply;
        let delay = self
            .config
            .scan_period_ms
            .saturating_add(self.config.report_lag_ms);
        let shown_after = self
            .record
            .reached_at()
            .get(ply)
            .is_some_and(|&t| t > press.t_ms.saturating_add(delay));
        match ply.checked_sub(2) {
            Some(open) if open > self.record.completed() && shown_after => open,
            _ => ply,
        }
    }

    /// When the board has surely reported a landing made before a press at `pressed`: two
    /// whole frames and the link's lag later, or, on a board that samples its squares one
    /// by one, a scan with its margin ([`MachineConfig::report_reorder_ms`]).
    ///
    /// [`MachineConfig::report_reorder_ms`]: crate::act::MachineConfig::report_reorder_ms
    pub(super) fn landing_reported_by(&self, pressed: Millis) -> Millis {
        let c = &self.config;
        let scan = if c.whole_frames {
            2 * c.scan_period_ms
        } else {
            c.report_reorder_ms
        };
        pressed.saturating_add(scan + c.report_lag_ms)
    }

    /// How much earlier than another change the board may report a later one: on a board
    /// that samples its squares one by one, up to a scan with its margin
    /// ([`MachineConfig::report_reorder_ms`]); whole frames keep the order.
    ///
    /// [`MachineConfig::report_reorder_ms`]: crate::act::MachineConfig::report_reorder_ms
    pub(super) fn scan_order_slack(&self) -> Millis {
        if self.config.whole_frames {
            0
        } else {
            self.config.report_reorder_ms
        }
    }

    /// True when the board shows a capture by the side to move that it cannot show: the
    /// capturer lifted, nothing else changed ([`Sensed::captures_landed_unseen`]).
    ///
    /// [`Sensed::captures_landed_unseen`]: crate::act::search::Sensed::captures_landed_unseen
    fn shows_capture_unseen(&self) -> bool {
        !self
            .sensed()
            .captures_landed_unseen(self.record.game().position())
            .is_empty()
    }

    /// When the board last reported the square `m` leaves: its piece's lift.
    pub(super) fn lift_reported_at(&self, m: Move) -> Option<Millis> {
        m.from().and_then(|sq| self.square_reports.last(sq))
    }

    /// The squares last reported after `t`: changed since then.
    pub(super) fn squares_reported_after(&self, t: Millis) -> Bitboard {
        Bitboard::FULL
            .into_iter()
            .filter(|&sq| self.square_reports.last(sq).is_some_and(|r| r > t))
            .collect()
    }

    /// True when every square of `d` was last reported after `t`: changed since then.
    pub(super) fn all_reported_after(&self, d: Bitboard, t: Millis) -> bool {
        d.into_iter()
            .all(|sq| self.square_reports.last(sq).is_some_and(|r| r > t))
    }

    /// A clock press by `by` at `t`: the move it completes, at once or once the board has
    /// had its grace period to show it ([`Press`]).
    pub(super) fn on_press(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        let last_press = self.clock.last_press();
        self.overtake_waiting_press(by, t, out);
        self.clock.pressed(by, t);
        self.presses.reading_at_press_forgotten();
        if self.phase != Phase::Playing {
            return;
        }
        self.take_up_at_press(by, t, out);
        let n = self.record.game().plies();
        let to_move = self.record.game().position().turn();
        let board_is_game = self
            .sensed()
            .diff(self.record.game().position().board())
            .is_empty();
        if by != to_move {
            self.press_after_own_move(by, t, board_is_game, out);
        } else if n == 0 && last_press.is_none() && board_is_game {
            // The clock started with the wrong lever: nothing was played yet.
        } else if last_press == Some(by) && self.record.completed() == n && n > 0 {
            // A repeated press of the same lever.
        } else if n >= 2
            && self.record.completed() < n - 1
            && self.record.game().positions()[n - 2].turn() == by
            && (board_is_game || self.reply_begun_before(by, t))
        {
            // A late press for the presser's previous move, made after the opponent had
            // already replied or begun to (6.2.1.2: that move was completed by the reply).
            self.complete(by, t, n - 1, out);
        } else {
            self.press_for_move_unread(by, t);
        }
    }

    /// A press by `by` at `t` while the opponent's press, past its grace period, waits only
    /// because the board still seemed in motion: the press says that motion was the reply.
    /// The waiting press is overtaken, and both moves read once the reply's last updates had
    /// their time.
    fn overtake_waiting_press(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        let Some(press) = self.presses.waiting() else {
            return;
        };
        if self.phase != Phase::Playing
            || press.by == by
            || press.due == WHEN_RESTORED
            || t < press.t_ms.saturating_add(self.config.press_grace_ms)
            || !self.is_for_next_move(press)
        {
            return;
        }
        // A landing the presser made before his press has been reported by now: when the
        // board shows only a capture it cannot show, the press is judged before the
        // reply's reports come, so that they are not read as his landing.
        let judge_now = t >= self.landing_reported_by(press.t_ms) && self.shows_capture_unseen();
        let due = if judge_now {
            t
        } else {
            t.saturating_add(self.config.press_grace_ms)
        };
        self.presses.waiting_overtaken(due);
        if judge_now {
            self.judge_overtaken_press(t, out);
        }
    }

    /// A press by `by`, who is not to move in the game as recorded: for his move just read,
    /// completed at once when the board shows it, else judged after the grace period.
    fn press_after_own_move(
        &mut self,
        by: Color,
        t: Millis,
        board_is_game: bool,
        out: &mut Vec<Event>,
    ) {
        let n = self.record.game().plies();
        let to_move = !by;
        if n == self.record.completed()
            && self
                .presses
                .waiting()
                .is_some_and(|p| p.by == to_move && self.is_for_next_move(p))
        {
            // The reply pressed for before the move it answers was read: kept for the
            // reply, should both be read together.
            self.presses.reply_pressed_before_read(t);
        } else if n > 0 && n > self.record.completed() {
            if board_is_game {
                let ply = self.pressed_ply(by, n);
                self.complete(by, t, ply, out);
            } else if self.carried_on_beside_reply(n, t, out) {
                self.complete(by, t, n, out);
            } else {
                // The board may report the last placement after the press. A press of
                // the side to move still waiting is judged in its turn, not dropped.
                let due = t.saturating_add(self.config.press_grace_ms);
                let judged_first = self
                    .presses
                    .waiting()
                    .filter(|&p| {
                        p.by == to_move && p.due != WHEN_RESTORED && self.is_for_next_move(p)
                    })
                    .map(|waiting| Press {
                        due: waiting.due.max(due),
                        ..waiting
                    });
                let press = Press {
                    by,
                    t_ms: t,
                    ply: n,
                    due,
                    promotion: None,
                    awaited: None,
                };
                self.presses.waits_after(press, judged_first);
            }
        }
    }

    /// A press by `by`, to move, for a move not read yet: judged after the grace period,
    /// since the move's board updates may still come.
    fn press_for_move_unread(&mut self, by: Color, t: Millis) {
        let n = self.record.game().plies();
        let reading = match self.read(true) {
            reading @ Reading::Adopt { doubt: None, .. } => Some(reading),
            _ => None,
        };
        self.presses.read_at_press(n, reading);
        let promotion = self
            .sensed()
            .unfinished_promotion(self.record.game().position())
            .map(|m| (n, m));
        let waiting = self.presses.waiting();
        let awaited = waiting
            .filter(|p| p.by == by && p.due == WHEN_RESTORED && p.ply == n + 1)
            .map(|p| p.t_ms);
        // The opponent's press for his move, still waiting for the board, is judged
        // before this one: his piece may have gone on to a capture the board cannot show.
        let judged_first = waiting.filter(|p| {
            p.by != by && p.ply == n && p.due != WHEN_RESTORED && n > self.record.completed()
        });
        let press = Press {
            by,
            t_ms: t,
            ply: n + 1,
            due: t.saturating_add(self.config.press_grace_ms),
            promotion,
            awaited,
        };
        self.presses.waits_after(press, judged_first);
    }

    /// The ply a press by `by`, whose move `n` is the last recorded, completes: `n`, unless
    /// that move and the reply before it were read from overlapping actions while the
    /// presser's move before them is still open. The press is then for that earlier move,
    /// made late after the opponent had replied (6.2.1.2); the move read after the reply
    /// came sooner than a hand answers and may be a displaced piece, so it stays open.
    pub(super) fn pressed_ply(&self, by: Color, n: usize) -> usize {
        let overlapping = matches!(self.doubts.doubt(), Some(Doubt::Overlapping { .. }));
        let earlier_open =
            n >= 3 && self.record.completed() + 2 < n && self.record.settled() + 2 < n;
        if overlapping && earlier_open && self.record.game().positions()[n - 3].turn() == by {
            n - 2
        } else {
            n
        }
    }

    /// True when the opponent of `by` lifted a piece for the reply recorded last before `t`,
    /// and `by` has lifted nothing since that reply arrived: a press by `by` at `t` is for
    /// his move before the reply, not for a new one. On a board that names pieces, a piece
    /// of `by`'s that the reply's piece could have captured instead (the reply still open,
    /// its piece going on to take it) may be lifted by the opponent's hand, not his: it does
    /// not show him moving again.
    pub(super) fn reply_begun_before(&self, by: Color, t: Millis) -> bool {
        let n = self.record.game().plies();
        let (Some(&made), Some(&replied)) = (
            n.checked_sub(1)
                .and_then(|k| self.record.reached_at().get(k)),
            self.record.reached_at().get(n),
        ) else {
            return false;
        };
        let lifted =
            |l: &&Lift, color: Color, since: Millis| l.piece.color == color && l.t_ms >= since;
        let began = self
            .touches
            .lifts()
            .iter()
            .any(|l| lifted(&l, !by, made) && l.t_ms < t);
        let taken_by_reply = |sq: Square| {
            if !self.names_pieces() {
                return false;
            }
            let reply = self.record.game().moves()[n - 1].mv;
            self.record.game().positions()[n - 1]
                .legal_moves()
                .into_iter()
                .any(|m| m.from() == reply.from() && m.is_capture() && m.to() == sq)
        };
        let moving_again = self
            .touches
            .lifts()
            .iter()
            .any(|l| lifted(&l, by, replied) && !taken_by_reply(l.sq));
        began && !moving_again
    }

    /// Holds the game on the `differing` squares and keeps the press by `by` at `t` for the
    /// move the board will show once it is set right: the press completes it then.
    pub(super) fn await_board(
        &mut self,
        by: Color,
        t: Millis,
        differing: Bitboard,
        out: &mut Vec<Event>,
    ) {
        self.set_held_now(Some(differing), t, out);
        self.presses.waits(Press {
            by,
            t_ms: t,
            ply: self.record.game().plies() + 1,
            due: WHEN_RESTORED,
            promotion: None,
            awaited: None,
        });
    }
}

#[cfg(test)]
mod tests;
