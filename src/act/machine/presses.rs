//! Clock presses: which move a press completes, and when it is judged.

use shakmaty::{Bitboard, Color, Move, Position, Square, attacks};

use super::doubts::Doubt;
use super::reading::Reading;
use super::settling::Completion;
use super::{Machine, Phase};
use crate::act::Event;
use crate::act::search::only;
use crate::act::touch::Lift;
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

impl Machine {
    /// Judges a press the opponent's press overtook, once due; the opponent's press then
    /// stands for the opponent's last move in the game as read.
    pub(super) fn judge_overtaken_press(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(press) = self.overtaken_press.filter(|p| now >= p.due) else {
            return;
        };
        self.overtaken_press = None;
        if self.phase != Phase::Playing
            || self.gone_on_to_unseen_capture(press, now, true, out)
            || self.try_complete(press, out)
            || !self.is_for_next_move(press)
        {
            return;
        }
        self.press_reading = None;
        self.judge_press(press, out);
        let n = self.game.plies();
        if let Some(reply) = self.pending_press.as_mut()
            && reply.due != WHEN_RESTORED
            && n > 0
            && self.game.positions()[n - 1].turn() == reply.by
        {
            reply.ply = n;
        }
    }

    /// True when `press` is by the side to move, for the move not yet on the board.
    pub(super) fn is_for_next_move(&self, press: Press) -> bool {
        press.ply == self.game.plies() + 1 && self.game.position().turn() == press.by
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
                .arrival_unseen(self.game.position())
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
        let Some(pressed) = self.reply_pressed_early else {
            return;
        };
        let n = self.game.plies();
        if n != self.completed + 1 || n < 2 {
            return;
        }
        self.reply_pressed_early = None;
        if self.doubt.as_ref().is_some_and(Doubt::keeps_moves_open) {
            return;
        }
        let mover = self.game.positions()[n - 1].turn();
        let lifted = self.lift_reported_at(self.game.moves()[n - 1].mv);
        if self.pressed_at[mover as usize] == Some(pressed) && lifted.is_some_and(|l| l <= pressed)
        {
            self.complete(mover, pressed, n, out);
        }
    }

    /// Completes the ply a press was for, if the game now holds that ply by the presser.
    pub(super) fn try_complete(&mut self, press: Press, out: &mut Vec<Event>) -> bool {
        let ply = self.pressed_for(press);
        let by_presser = ply >= 1
            && ply <= self.game.plies()
            && self.game.positions()[ply - 1].turn() == press.by;
        if by_presser
            && ply > self.completed
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
    fn pressed_for(&self, press: Press) -> usize {
        let ply = press.ply;
        if !self.config.identifies_pieces {
            return ply;
        }
        let delay = self
            .config
            .scan_period_ms
            .saturating_add(self.config.report_lag_ms);
        let shown_after = self
            .reached_at
            .get(ply)
            .is_some_and(|&t| t > press.t_ms.saturating_add(delay));
        match ply.checked_sub(2) {
            Some(open) if open > self.completed && shown_after => open,
            _ => ply,
        }
    }

    /// The presser's piece left the square of his last move, still open, for another square
    /// it could have reached instead, while the opponent's hand was already on the board: a
    /// whole-board frame shows both at once, so neither is seen alone. The press says the
    /// presser's move is over, and his pieces show it: the longer move is recorded, with a
    /// doubt. True when it was.
    fn carried_on_beside_reply(&mut self, ply: usize, t: Millis, out: &mut Vec<Event>) -> bool {
        if !self.may_have_gone_on(ply) {
            return false;
        }
        let before = &self.game.positions()[ply - 1];
        let made = self.reached_at.get(ply).copied().unwrap_or(0);
        let first = self.game.moves()[ply - 1].mv;
        let left_landing = self.last_seen[first.to() as usize];
        let Some((longer, hand)) = self.sensed().move_with_opponent_hand(before) else {
            return false;
        };
        // Seen one after the other, a hand begun before the piece went on is a reply that
        // overlapped the move, which the press alone does not settle.
        let reply_not_before = hand
            .into_iter()
            .all(|sq| self.last_seen[sq as usize] >= left_landing);
        if longer.from() != first.from()
            || longer.role() != first.role()
            || longer == first
            || !reply_not_before
        {
            return false;
        }
        self.adopt(ply - 1, &[longer], t, out);
        // The frame that showed the piece gone on showed the reply begun: a slide, or a
        // piece released and moved again (4.7), for the arbiter to tell.
        let stood_ms = left_landing.map_or(0, |left| left.saturating_sub(made));
        self.raise_doubt(Doubt::MovedOn { first, stood_ms }, t, out);
        self.game.plies() == ply
    }

    /// True when the last move, at `ply` and still open, may have gone on past the square it
    /// was read on: no press of the opponent's answered it (the press that completed his
    /// own move before it is no answer).
    fn may_have_gone_on(&self, ply: usize) -> bool {
        let Some(before) = ply
            .checked_sub(1)
            .and_then(|k| self.game.positions().get(k))
        else {
            return false;
        };
        let made = self.reached_at.get(ply).copied().unwrap_or(0);
        let answered = self.pressed_at[!before.turn() as usize]
            .is_some_and(|p| p >= made && self.turn_start.get(ply - 1) != Some(&p));
        ply == self.game.plies() && ply > self.settled && !answered
    }

    /// A press of the last mover, due, with his piece gone from the square it was read on
    /// and not seen put down: on a board that cannot tell pieces apart, a capture further
    /// on shows no change where it lands. When the board as it is shows such a capture by
    /// the same piece ([`Machine::shown_after_capture`]), it is recorded with its doubt once
    /// a report of the arrival has had [`MachineConfig::missed_update_ms`] to come, and the
    /// opponent's reply after it when the board shows one. An `overtaken` press (the
    /// opponent pressed since) is judged though the opponent answered, waits only a scan
    /// ([`MachineConfig::report_reorder_ms`]), and the opponent's press waits with it. True
    /// when the press was dealt with (the capture recorded, or the press kept waiting for it).
    ///
    /// [`MachineConfig::missed_update_ms`]: crate::act::MachineConfig::missed_update_ms
    /// [`MachineConfig::report_reorder_ms`]: crate::act::MachineConfig::report_reorder_ms
    pub(super) fn gone_on_to_unseen_capture(
        &mut self,
        press: Press,
        now: Millis,
        overtaken: bool,
        out: &mut Vec<Event>,
    ) -> bool {
        if !overtaken && !self.may_have_gone_on(press.ply) {
            return false;
        }
        let Some((capture, reply)) = self.capture_gone_on_to(press, |m, d| {
            self.shown_after_capture(press, self.move_read_at(press.ply), m, d)
        }) else {
            return false;
        };
        let wait = if overtaken {
            self.config.report_reorder_ms
        } else {
            self.config.missed_update_ms
        };
        let waited = press.t_ms.saturating_add(wait);
        if now >= waited {
            self.adopt_gone_on(press, true, capture, reply, out);
            return true;
        }
        let waiting = Some(Press {
            due: waited,
            ..press
        });
        if overtaken {
            self.overtaken_press = waiting;
            if let Some(answer) = self.pending_press.as_mut() {
                answer.due = answer.due.max(waited);
            }
        } else {
            self.pending_press = waiting;
        }
        true
    }

    /// When the move at `ply` was read: the opponent's hand on the board since is his reply
    /// begun or made, even before the press.
    fn move_read_at(&self, ply: usize) -> Millis {
        self.reached_at.get(ply).copied().unwrap_or(self.now)
    }

    /// Whether the board, differing on `d` from the position after the presser's capture
    /// `m`, shows that capture made: nothing else changed, or only the opponent's hand since
    /// `since` (his pieces lifted, his reply made, the presser's next move begun), with the
    /// reply when one alone explains the board.
    fn shown_after_capture(
        &self,
        press: Press,
        since: Millis,
        m: Move,
        d: Bitboard,
    ) -> Option<(Move, Option<Move>)> {
        if d.is_empty() {
            return Some((m, None));
        }
        if !self.all_reported_after(d, since) {
            return None;
        }
        let s = self.sensed();
        let mut after = self.game.positions()[press.ply - 1].clone();
        after.play_unchecked(m);
        if let Some((reply, _)) = only(s.single_moves(&after).into_iter()) {
            return Some((m, Some(reply)));
        }
        let two_made = || {
            after.legal_moves().into_iter().any(|reply| {
                let mut next = after.clone();
                next.play_unchecked(reply);
                !s.single_moves(&next).is_empty()
            })
        };
        (s.in_progress(&after) || s.in_progress_after_one(&after) || two_made())
            .then_some((m, None))
    }

    /// A move its press completed, whose piece the board then showed leaving its landing
    /// within a scan of the press, with no report of where it went: the piece was lifted on
    /// before the press (a slide reported late) to a capture the board cannot show. Once a
    /// report of its landing elsewhere has had [`MachineConfig::missed_update_ms`] to come,
    /// the one such capture along its line is recorded instead, with its doubt, while the
    /// completion is still open and the opponent had lifted nothing before the piece left; what
    /// his hand did since is read as his reply after the capture.
    ///
    /// [`MachineConfig::missed_update_ms`]: crate::act::MachineConfig::missed_update_ms
    pub(super) fn completed_move_gone_on(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some((c, due)) = self.completed_move_gone_on_due() else {
            return;
        };
        if now < due {
            return;
        }
        let press = Press {
            by: c.by,
            t_ms: c.pressed,
            ply: c.ply,
            due: now,
            promotion: None,
            awaited: None,
        };
        let made = self.move_read_at(c.ply);
        if let Some((capture, reply)) =
            self.capture_gone_on_to(press, |m, d| self.shown_after_capture(press, made, m, d))
        {
            self.adopt_gone_on(press, true, capture, reply, out);
        }
    }

    /// A last move no press completed, whose piece the board showed leaving the square it
    /// was read on with no landing reported since, when the opponent (`lifter`) lifts a piece
    /// from `sq` at `t`: his hand on the board says that move was over, so the one capture
    /// along its line that the board cannot show is recorded instead, with its doubt, as a
    /// press would have it ([`Machine::completed_move_gone_on`]). Not when the piece could
    /// take on `sq`, nor the piece on `sq` take it on its landing: either lift may be a
    /// capture's victim taken off first. The move stays uncompleted.
    pub(super) fn gone_on_before_reply(
        &mut self,
        sq: Square,
        lifter: Color,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        let n = self.game.plies();
        if self.phase != Phase::Playing
            || self.config.identifies_pieces
            || n == 0
            || n <= self.completed
            || self.game.positions()[n - 1].turn() == lifter
            || self.pending_press.is_some()
        {
            return;
        }
        let played = self.game.moves()[n - 1].mv;
        let landing = played.to();
        let made = self.move_read_at(n);
        let Some(left) = self.last_seen[landing as usize].filter(|&l| l > made && l < t) else {
            return;
        };
        let takes = |pos: &shakmaty::Chess, from: Option<Square>, to: Square| {
            pos.legal_moves()
                .iter()
                .any(|m| m.from() == from && m.to() == to && m.is_capture())
        };
        if takes(&self.game.positions()[n - 1], played.from(), sq)
            || takes(self.game.position(), Some(sq), landing)
        {
            return;
        }
        // The opponent's lift stands for the press that did not come.
        let press = Press {
            by: !lifter,
            t_ms: t,
            ply: n,
            due: t,
            promotion: None,
            awaited: None,
        };
        if let Some((capture, reply)) =
            self.capture_gone_on_to(press, |m, d| self.shown_after_capture(press, left, m, d))
        {
            self.adopt_gone_on(press, false, capture, reply, out);
        }
    }

    /// The completion [`Machine::completed_move_gone_on`] may revise, and when: its piece
    /// left the landing within a scan of the press and may still be sliding on.
    pub(super) fn completed_move_gone_on_due(&self) -> Option<(Completion, Millis)> {
        let c = self.completion.filter(|c| c.ply == self.game.plies())?;
        let played = self.game.moves().get(c.ply.wrapping_sub(1))?;
        let left = self.last_seen[played.mv.to() as usize]?;
        let left_within_scan = left.saturating_sub(c.pressed) <= self.config.report_reorder_ms;
        (left_within_scan && self.slide_may_continue(c.ply))
            .then(|| (c, left.saturating_add(self.config.missed_update_ms)))
    }

    /// The one capture by the piece of the last move, read at `press.ply` and still open,
    /// whose landing the board could not show, now that the piece left the square it was
    /// read on; `fits` keeps a capture given the squares the board shows differing from
    /// the position after it, with the reply those squares show, if any.
    fn capture_gone_on_to(
        &self,
        press: Press,
        fits: impl Fn(Move, Bitboard) -> Option<(Move, Option<Move>)>,
    ) -> Option<(Move, Option<Move>)> {
        let ply = press.ply;
        let open = ply > self.completed || self.completion.is_some_and(|c| c.ply == ply);
        if !open || ply != self.game.plies() || self.landing_stands(ply) {
            return None;
        }
        let before = &self.game.positions()[ply - 1];
        let first = self.game.moves()[ply - 1].mv;
        let s = self.sensed();
        if before.turn() != press.by || s.identifies {
            return None;
        }
        let found: Vec<(Move, Option<Move>)> = before
            .legal_moves()
            .into_iter()
            .filter_map(|m| {
                let plain_capture = matches!(
                    m,
                    Move::Normal {
                        capture: Some(_),
                        promotion: None,
                        ..
                    }
                );
                if !plain_capture || m.from() != first.from() || m == first {
                    return None;
                }
                let mut after = before.clone();
                after.play_unchecked(m);
                let d = s.diff(after.board());
                if d.contains(m.to()) {
                    return None;
                }
                fits(m, d)
            })
            .collect();
        // A piece seen on its way goes on along its line: of several captures, the one
        // past the square it was read on.
        let on_its_line = |m: Move| {
            m.from()
                .is_some_and(|from| attacks::between(from, m.to()).contains(first.to()))
        };
        let along: Vec<(Move, Option<Move>)> = found
            .iter()
            .copied()
            .filter(|(m, _)| on_its_line(*m))
            .collect();
        match (&along[..], &found[..]) {
            ([one], _) | ([], [one]) => Some(*one),
            _ => None,
        }
    }

    /// Records `capture` in place of the move read at `press.ply`, with its doubt, completed
    /// by `press` when it was `pressed` (not the opponent's hand standing for a press), and
    /// the opponent's `reply` after it when the board shows it made.
    fn adopt_gone_on(
        &mut self,
        press: Press,
        pressed: bool,
        capture: Move,
        reply: Option<Move>,
        out: &mut Vec<Event>,
    ) {
        let ply = press.ply;
        self.adopt(ply - 1, &[capture], press.t_ms, out);
        self.raise_doubt(Doubt::capture_unseen(capture), press.t_ms, out);
        if self.game.plies() != ply {
            return;
        }
        // A move already completed is completed again by the revision itself.
        if pressed && self.completed < ply {
            self.complete(press.by, press.t_ms, ply, out);
        }
        if let Some(reply) = reply {
            let now = self.now;
            self.adopt(ply, &[reply], now, out);
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
            .captures_landed_unseen(self.game.position())
            .is_empty()
    }

    /// When the board last reported the square `m` leaves: its piece's lift.
    pub(super) fn lift_reported_at(&self, m: Move) -> Option<Millis> {
        m.from().and_then(|sq| self.last_seen[sq as usize])
    }

    /// The squares last reported after `t`: changed since then.
    pub(super) fn squares_reported_after(&self, t: Millis) -> Bitboard {
        Bitboard::FULL
            .into_iter()
            .filter(|&sq| self.last_seen[sq as usize].is_some_and(|r| r > t))
            .collect()
    }

    /// True when every square of `d` was last reported after `t`: changed since then.
    pub(super) fn all_reported_after(&self, d: Bitboard, t: Millis) -> bool {
        d.into_iter()
            .all(|sq| self.last_seen[sq as usize].is_some_and(|r| r > t))
    }

    /// The player who pressed last, if anyone did.
    pub(super) fn last_press(&self) -> Option<Color> {
        match self.pressed_at {
            [None, None] => None,
            [Some(_), None] => Some(Color::Black),
            [None, Some(_)] => Some(Color::White),
            [Some(black), Some(white)] => Some(if white >= black {
                Color::White
            } else {
                Color::Black
            }),
        }
    }

    pub(super) fn on_press(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        let last_press = self.last_press();
        if self.phase == Phase::Playing
            && let Some(press) = self.pending_press
            && press.by != by
            && press.due != WHEN_RESTORED
            && t >= press.t_ms.saturating_add(self.config.press_grace_ms)
            && self.is_for_next_move(press)
        {
            // A press past its grace period, waiting only because the board still seemed in
            // motion: the opponent's press says that motion was the reply. Both moves are
            // read once the reply's last updates had their time.
            self.pending_press = None;
            // A landing the presser made before his press has been reported by now: when the
            // board shows only a capture it cannot show, the press is judged before the
            // reply's reports come, so that they are not read as his landing.
            let judge_now =
                t >= self.landing_reported_by(press.t_ms) && self.shows_capture_unseen();
            let due = if judge_now {
                t
            } else {
                t.saturating_add(self.config.press_grace_ms)
            };
            self.overtaken_press = Some(Press { due, ..press });
            if judge_now {
                self.judge_overtaken_press(t, out);
            }
        }
        self.pressed_at[by as usize] = Some(t);
        self.press_reading = None;
        if self.phase != Phase::Playing {
            return;
        }
        self.take_up_at_press(by, t, out);
        let n = self.game.plies();
        let to_move = self.game.position().turn();
        let board_is_game = self.sensed().diff(self.game.position().board()).is_empty();
        if by != to_move {
            if n == self.completed
                && self
                    .pending_press
                    .is_some_and(|p| p.by == to_move && self.is_for_next_move(p))
            {
                // The reply pressed for before the move it answers was read: kept for the
                // reply, should both be read together.
                self.reply_pressed_early = Some(t);
            } else if n > 0 && n > self.completed {
                if board_is_game {
                    let ply = self.pressed_ply(by, n);
                    self.complete(by, t, ply, out);
                } else if self.carried_on_beside_reply(n, t, out) {
                    self.complete(by, t, n, out);
                } else {
                    // The board may report the last placement after the press. A press of
                    // the side to move still waiting is judged in its turn, not dropped.
                    if let Some(waiting) = self.pending_press.filter(|&p| {
                        p.by == to_move && p.due != WHEN_RESTORED && self.is_for_next_move(p)
                    }) && self.overtaken_press.is_none()
                    {
                        self.overtaken_press = Some(Press {
                            due: waiting
                                .due
                                .max(t.saturating_add(self.config.press_grace_ms)),
                            ..waiting
                        });
                    }
                    self.pending_press = Some(Press {
                        by,
                        t_ms: t,
                        ply: n,
                        due: t.saturating_add(self.config.press_grace_ms),
                        promotion: None,
                        awaited: None,
                    });
                }
            }
        } else if n == 0 && last_press.is_none() && board_is_game {
            // The clock started with the wrong lever: nothing was played yet.
        } else if last_press == Some(by) && self.completed == n && n > 0 {
            // A repeated press of the same lever.
        } else if n >= 2
            && self.completed < n - 1
            && self.game.positions()[n - 2].turn() == by
            && (board_is_game || self.reply_begun_before(by, t))
        {
            // A late press for the presser's previous move, made after the opponent had
            // already replied or begun to (6.2.1.2: that move was completed by the reply).
            self.complete(by, t, n - 1, out);
        } else {
            // Judged after the grace period: the move's board updates may still come.
            self.press_reading = match self.read(true) {
                reading @ Reading::Adopt { doubt: None, .. } => Some((n, reading)),
                _ => None,
            };
            let promotion = self
                .sensed()
                .unfinished_promotion(self.game.position())
                .map(|m| (n, m));
            let awaited = self
                .pending_press
                .filter(|p| p.by == by && p.due == WHEN_RESTORED && p.ply == n + 1)
                .map(|p| p.t_ms);
            // The opponent's press for his move, still waiting for the board, is judged
            // before this one: his piece may have gone on to a capture the board cannot show.
            if let Some(own) = self
                .pending_press
                .filter(|p| p.by != by && p.ply == n && p.due != WHEN_RESTORED)
                && n > self.completed
                && self.overtaken_press.is_none()
            {
                self.overtaken_press = Some(own);
            }
            self.pending_press = Some(Press {
                by,
                t_ms: t,
                ply: n + 1,
                due: t.saturating_add(self.config.press_grace_ms),
                promotion,
                awaited,
            });
        }
    }

    /// The ply a press by `by`, whose move `n` is the last recorded, completes: `n`, unless
    /// that move and the reply before it were read from overlapping actions while the
    /// presser's move before them is still open. The press is then for that earlier move,
    /// made late after the opponent had replied (6.2.1.2); the move read after the reply
    /// came sooner than a hand answers and may be a displaced piece, so it stays open.
    pub(super) fn pressed_ply(&self, by: Color, n: usize) -> usize {
        let overlapping = matches!(self.doubt, Some(Doubt::Overlapping { .. }));
        let earlier_open = n >= 3 && self.completed + 2 < n && self.settled + 2 < n;
        if overlapping && earlier_open && self.game.positions()[n - 3].turn() == by {
            n - 2
        } else {
            n
        }
    }

    /// True when the opponent of `by` lifted a piece for the reply recorded last before `t`,
    /// and `by` has lifted nothing since that reply arrived: a press by `by` at `t` is for
    /// his move before the reply, not for a new one.
    pub(super) fn reply_begun_before(&self, by: Color, t: Millis) -> bool {
        let n = self.game.plies();
        let (Some(&made), Some(&replied)) = (
            n.checked_sub(1).and_then(|k| self.reached_at.get(k)),
            self.reached_at.get(n),
        ) else {
            return false;
        };
        let lifted =
            |l: &&Lift, color: Color, since: Millis| l.piece.color == color && l.t_ms >= since;
        let began = self
            .lifts
            .iter()
            .any(|l| lifted(&l, !by, made) && l.t_ms < t);
        let moving_again = self.lifts.iter().any(|l| lifted(&l, by, replied));
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
        self.pending_press = Some(Press {
            by,
            t_ms: t,
            ply: self.game.plies() + 1,
            due: WHEN_RESTORED,
            promotion: None,
            awaited: None,
        });
    }
}

#[cfg(test)]
mod tests;
