//! A move its player pressed for whose piece went on: past the square it was read on, to a
//! capture the board could not show, or beside the opponent's reply in one frame.

use shakmaty::{Bitboard, Color, Move, Position, Square, attacks};

use super::doubt::Doubt;
use super::press::Completion;
use super::press::Press;
use super::{Machine, Phase};
use crate::act::Event;
use crate::act::search::only;
use crate::board::Millis;

impl Machine {
    /// The presser's piece left the square of his last move, still open, for another square
    /// it could have reached instead, while the opponent's hand was already on the board: a
    /// whole-board frame shows both at once, so neither is seen alone. The press says the
    /// presser's move is over, and his pieces show it: the longer move is recorded, with a
    /// doubt. True when it was.
    pub(super) fn carried_on_beside_reply(
        &mut self,
        ply: usize,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.may_have_gone_on(ply) {
            return false;
        }
        let before = &self.record.game().positions()[ply - 1];
        let made = self.record.reached_at().get(ply).copied().unwrap_or(0);
        let first = self.record.game().moves()[ply - 1].mv;
        let left_landing = self.square_reports.last(first.to());
        let Some((longer, hand)) = self.sensed().move_with_opponent_hand(before) else {
            return false;
        };
        // Seen one after the other, a hand begun before the piece went on is a reply that
        // overlapped the move, which the press alone does not settle.
        let reply_not_before = hand
            .into_iter()
            .all(|sq| self.square_reports.last(sq) >= left_landing);
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
        self.record.game().plies() == ply
    }

    /// True when the last move, at `ply` and still open, may have gone on past the square it
    /// was read on: no press of the opponent's answered it (the press that completed his
    /// own move before it is no answer).
    fn may_have_gone_on(&self, ply: usize) -> bool {
        let Some(before) = ply
            .checked_sub(1)
            .and_then(|k| self.record.game().positions().get(k))
        else {
            return false;
        };
        let made = self.record.reached_at().get(ply).copied().unwrap_or(0);
        let answered = self
            .clock
            .pressed_at(!before.turn())
            .is_some_and(|p| p >= made && self.record.turn_start().get(ply - 1) != Some(&p));
        ply == self.record.game().plies() && ply > self.record.settled() && !answered
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
        if overtaken {
            self.presses.overtaken_waits(press, waited);
        } else {
            self.presses.waits(Press {
                due: waited,
                ..press
            });
        }
        true
    }

    /// When the move at `ply` was read: the opponent's hand on the board since is his reply
    /// begun or made, even before the press.
    fn move_read_at(&self, ply: usize) -> Millis {
        self.record
            .reached_at()
            .get(ply)
            .copied()
            .unwrap_or(self.now)
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
        let mut after = self.record.game().positions()[press.ply - 1].clone();
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
        let n = self.record.game().plies();
        if self.phase != Phase::Playing
            || n == 0
            || n <= self.record.completed()
            || self.record.game().positions()[n - 1].turn() == lifter
            || self.presses.waiting().is_some()
        {
            return;
        }
        let played = self.record.game().moves()[n - 1].mv;
        let landing = played.to();
        let made = self.move_read_at(n);
        let Some(left) = self
            .square_reports
            .last(landing)
            .filter(|&l| l > made && l < t)
        else {
            return;
        };
        let takes = |pos: &shakmaty::Chess, from: Option<Square>, to: Square| {
            pos.legal_moves()
                .iter()
                .any(|m| m.from() == from && m.to() == to && m.is_capture())
        };
        if takes(&self.record.game().positions()[n - 1], played.from(), sq)
            || takes(self.record.game().position(), Some(sq), landing)
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
        let c = self
            .presses
            .completion()
            .filter(|c| c.ply == self.record.game().plies())?;
        let played = self.record.game().moves().get(c.ply.wrapping_sub(1))?;
        let left = self.square_reports.last(played.mv.to())?;
        let left_within_scan = left.saturating_sub(c.pressed) <= self.config.report_reorder_ms;
        (left_within_scan && self.slide_may_continue(c.ply))
            .then(|| (c, left.saturating_add(self.config.missed_update_ms)))
    }

    /// The one capture by the piece of the last move, read at `press.ply` and still open,
    /// whose landing the board could not show, now that the piece left the square it was
    /// read on; `fits` keeps a capture given the squares the board shows differing from
    /// the position after it, with the reply those squares show, if any.
    pub(super) fn unseen_capture_gone_on_to(
        &self,
        press: Press,
        fits: impl Fn(Move, Bitboard) -> Option<(Move, Option<Move>)>,
    ) -> Option<(Move, Option<Move>)> {
        let ply = press.ply;
        let open = ply > self.record.completed()
            || self.presses.completion().is_some_and(|c| c.ply == ply);
        if !open || ply != self.record.game().plies() || self.landing_stands(ply) {
            return None;
        }
        let before = &self.record.game().positions()[ply - 1];
        let first = self.record.game().moves()[ply - 1].mv;
        let s = self.sensed();
        if before.turn() != press.by {
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
        if self.record.game().plies() != ply {
            return;
        }
        // A move already completed is completed again by the revision itself.
        if pressed && self.record.completed() < ply {
            self.complete(press.by, press.t_ms, ply, out);
        }
        if let Some(reply) = reply {
            let now = self.now;
            self.adopt(ply, &[reply], now, out);
        }
    }
}
