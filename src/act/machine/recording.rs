//! Recording a move: touch-move judgement, the move event, quick replies.

use shakmaty::{Color, Move, Position};

use super::open_doubts::QuickReply;
use super::reading::Reading;
use super::{Machine, color_word, ply_number};
use crate::act::touch::{self, Lift};
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

impl Machine {
    /// Records one move: touch-move judgement, the move event, the end of the game.
    pub(super) fn record(&mut self, m: Move, t: Millis, out: &mut Vec<Event>) {
        self.record_touched_before(m, t, t.saturating_add(1), out);
    }

    /// [`Machine::record`], judging touch-move on the pieces lifted before `touches_before`.
    pub(super) fn record_touched_before(
        &mut self,
        m: Move,
        t: Millis,
        touches_before: Millis,
        out: &mut Vec<Event>,
    ) {
        let n = self.record.game().plies();
        let before = self.record.game().position().clone();
        let mover = before.turn();
        let since = self.record.turn_start().get(n).copied().unwrap_or(0);
        // The opponent's own pieces count only from his press (he may still adjust them).
        let had_move = self.had_move(n).unwrap_or(0);
        let turn_lifts: Vec<Lift> = self
            .touches
            .lifts()
            .iter()
            .filter(|l| {
                let from = if l.piece.color == mover {
                    had_move
                } else {
                    since
                };
                l.t_ms >= from && l.t_ms < touches_before
            })
            .copied()
            .collect();
        let finding = touch::judge(&before, m, &turn_lifts);
        // A move after a quick reply its mover did not press for: the reply stands unconfirmed.
        if self.doubts.quick_reply().is_some_and(|q| q.ply <= n) {
            self.tell_quick_reply(out);
        }
        let Some(played) = self.record.move_recorded(m) else {
            return;
        };
        let ply = ply_number(n + 1);
        out.push(Event::Move {
            ply,
            uci: played.uci.clone(),
            san: played.san.clone(),
            t_ms: t,
            side: mover.into(),
            fen: self.record.game().fen(),
        });
        if let Some(alert) = self.quick_reply(n, t) {
            self.tell_quick_reply(out);
            let reply = QuickReply {
                ply: n + 1,
                mover,
                from: m.from(),
                alert,
            };
            self.doubts.quick_reply_recorded(reply, m);
        }
        // A move read again unchanged at its ply keeps what was said of it, once.
        let told = |article: &str| {
            self.record
                .move_alerts()
                .iter()
                .any(|r| r.ply == ply && r.article == article)
        };
        if let Some(f) = finding.filter(|f| !told(f.article)) {
            let mut a = self.alert(f.article, Some(mover), t, f.severity);
            a.ply = ply;
            a.evidence_ms = f.evidence_ms;
            a.squares = f.squares.iter().map(ToString::to_string).collect();
            a.message = f.message;
            self.record.finding_told(a.reference(), ply, mover);
            out.push(Event::Alert(a));
        }
        self.record.move_timed(t);
        self.physical.clear_placed();
        let window = n + 1 - self.config.revisable_plies.min(n + 1);
        self.settle(window.max(self.record.settled()));
        self.look_for_end(n + 1, t);
    }

    /// The move just recorded as ply `n + 1` was complete sooner after the move before it
    /// than a hand can answer (the two-hands threshold): the hand that made the move before
    /// may have knocked a piece over, read as this reply.
    pub(super) fn quick_reply(&self, n: usize, t: Millis) -> Option<Alert> {
        let previous = self.record.reached_at().get(n).copied().filter(|_| n > 0)?;
        let ms = t.saturating_sub(previous);
        // Moves read together from one observation (a reconstruction) carry no timing.
        // Moves read across a gap have estimated times: nothing rests on them.
        if ms == 0
            || ms >= self.config.two_hands_threshold_ms
            || self.untimed_at(t)
            || self.untimed_at(previous)
            || self.gap_start().is_some()
        {
            return None;
        }
        let played = self.record.game().moves().get(n)?;
        let side = self.record.game().positions()[n].turn();
        let mut a = self.alert("7.4", Some(side), t, Severity::Warning);
        a.ply = ply_number(n + 1);
        a.evidence_ms = vec![previous, t];
        a.squares = crate::act::search::squares_of(played.mv)
            .into_iter()
            .map(|s| s.to_string())
            .collect();
        a.message = format!(
            "{} {} was complete {ms} ms after the move before it: quicker than a reply; it \
             may be a piece knocked over by the other player's hand. The arbiter should check",
            color_word(side),
            played.san
        );
        Some(a)
    }

    /// Tells the quick reply waiting for its mover's press: a move was made after it, it was
    /// read as something else, or the game ends, without that press.
    pub(super) fn tell_quick_reply(&mut self, out: &mut Vec<Event>) {
        if let Some(q) = self.doubts.quick_reply_taken() {
            out.push(Event::Alert(q.alert));
        }
    }

    /// The moves from ply `keep + 1` on are withdrawn for `moves` (read from position
    /// `keep`): a quick reply among them is told, unless its piece only went on from the
    /// same square (a slide seen late), whose new move is judged again as it is recorded.
    pub(super) fn quick_reply_revised(
        &mut self,
        keep: usize,
        moves: &[Move],
        out: &mut Vec<Event>,
    ) {
        let Some(q) = self.doubts.quick_reply().filter(|q| q.ply > keep) else {
            return;
        };
        let same_piece = moves
            .get(q.ply - 1 - keep)
            .is_some_and(|m| m.from().is_some() && m.from() == q.from);
        if same_piece {
            self.doubts.quick_reply_dropped();
        } else {
            self.tell_quick_reply(out);
        }
        self.doubts.replies_withdrawn_after(keep);
    }

    /// `by` pressed for ply `ply` before the board changed again: a quick reply there was
    /// the presser's own move, made at once (a premove), not a piece knocked over.
    pub(super) fn quick_reply_pressed(&mut self, by: Color, ply: usize) {
        let positions = self.record.game().positions();
        self.doubts
            .reply_pressed(by, ply, |reply| positions.get(reply - 1).map(|p| p.turn()));
    }

    /// A reading that withdraws a quick reply nobody pressed for, read from before the move
    /// it answered, when the board is otherwise unexplained: that move is final by then
    /// (its player moved again), but the reply may have been a piece knocked over by the hand
    /// that made it, which then went on (the piece put back shows it). Only until the
    /// answering player's next move.
    pub(super) fn knocked_reply_reading(&self, pressed: bool) -> Option<Reading> {
        let (reply, m) = self.doubts.unpressed_reply()?;
        let answered = reply.checked_sub(2)?;
        let plies = self.record.game().plies();
        if answered >= self.record.settled()
            || reply + 1 < plies
            || self.record.game().moves().get(reply - 1).map(|p| p.mv) != Some(m)
        {
            return None;
        }
        let mut wider = self.clone();
        wider.record.open_from(answered);
        wider.doubts.unpressed_reply_set_aside();
        match wider.read_within(pressed) {
            Reading::Adopt { from, moves, doubt }
                if from < reply && moves.get(reply - 1 - from) != Some(&m) =>
            {
                Some(Reading::Adopt { from, moves, doubt })
            }
            _ => None,
        }
    }

    /// When the player to move after ply `n` got the move: once that move was made (1.3),
    /// before its press.
    pub(super) fn had_move(&self, n: usize) -> Option<Millis> {
        let pressed = *self.record.turn_start().get(n)?;
        Some(
            self.record
                .reached_at()
                .get(n)
                .map_or(pressed, |&made| made.min(pressed)),
        )
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Board, Color, Piece, Role, Square};

    use super::super::alert_articles;
    use super::Machine;
    use crate::act::MachineConfig;
    use crate::board::{Millis, Observation, ObservationKind, Snapshot};

    /// White's Ra1-d1, Black's Kg8-h8 60 ms later, White's Rd1-d7: the reply is quicker than
    /// a hand answers, and Black did not press for it. `recovered` says which observations
    /// came from the board's memory after a gap.
    fn quick_reply_alerts(recovered: impl Fn(Millis) -> bool) -> Vec<String> {
        let fen = "6k1/8/8/8/8/8/8/R5K1 w - - 0 1";
        let mut machine = Machine::new(MachineConfig {
            start_fen: Some(fen.to_string()),
            ..MachineConfig::default()
        });
        let board: Board = fen
            .split(' ')
            .next()
            .and_then(|b| b.parse().ok())
            .expect("board");
        let piece = |color, role| Some(Piece { color, role });
        let observations = [
            (
                0,
                ObservationKind::Snapshot(Snapshot {
                    board,
                    identifies_pieces: true,
                }),
            ),
            (1000, ObservationKind::Emptied(Square::A1)),
            (
                1300,
                ObservationKind::Placed(Square::D1, piece(Color::White, Role::Rook)),
            ),
            (1320, ObservationKind::Emptied(Square::G8)),
            (
                1360,
                ObservationKind::Placed(Square::H8, piece(Color::Black, Role::King)),
            ),
            (4000, ObservationKind::Emptied(Square::D1)),
            (
                4300,
                ObservationKind::Placed(Square::D7, piece(Color::White, Role::Rook)),
            ),
        ];
        let mut events = Vec::new();
        for (t_ms, kind) in observations {
            let obs = Observation { t_ms, kind };
            if recovered(t_ms) {
                machine.observe_recovered(&obs, &mut events);
            } else {
                machine.observe(&obs, &mut events);
            }
        }
        assert_eq!(machine.ply(), 3, "all three moves are recorded: {events:?}");
        alert_articles(&events)
    }

    #[test]
    fn a_quick_reply_seen_live_is_told() {
        assert_eq!(quick_reply_alerts(|_| false), vec!["7.4".to_string()]);
    }

    /// Moves read across a gap have estimated times: no 7.4 "quicker than a reply" from
    /// them, whether the reply or the move before it was recovered.
    #[test]
    fn a_quick_reply_read_across_a_gap_is_not_judged() {
        assert!(quick_reply_alerts(|t| (1000..=1360).contains(&t)).is_empty());
        assert!(quick_reply_alerts(|t| (1000..=1300).contains(&t)).is_empty());
    }
}
