//! Recording a move: touch-move judgement, the move event, quick replies.

use shakmaty::{Move, Position};

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
        let n = self.game.plies();
        let before = self.game.position().clone();
        let mover = before.turn();
        let since = self.turn_start.get(n).copied().unwrap_or(0);
        // The opponent's own pieces count only from his press (he may still adjust them).
        let had_move = self.had_move(n).unwrap_or(0);
        let turn_lifts: Vec<Lift> = self
            .lifts
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
        let Ok(played) = self.game.play(m) else {
            return;
        };
        let ply = ply_number(n + 1);
        out.push(Event::Move {
            ply,
            uci: played.uci.clone(),
            san: played.san.clone(),
            t_ms: t,
            side: mover.into(),
            fen: self.game.fen(),
        });
        if let Some(a) = self.quick_reply(n, t) {
            out.push(Event::Alert(a));
        }
        if let Some(f) = finding {
            let mut a = self.alert(f.article, Some(mover), t, f.severity);
            a.ply = ply;
            a.evidence_ms = f.evidence_ms;
            a.squares = f.squares.iter().map(ToString::to_string).collect();
            a.message = f.message;
            out.push(Event::Alert(a));
            self.open_claims.push((ply, mover));
        }
        self.turn_start.push(t);
        self.reached_at.push(t);
        self.physical.clear_placed();
        let window = n + 1 - self.config.revisable_plies.min(n + 1);
        self.settle(window.max(self.settled));
        self.look_for_end(n + 1, t);
    }

    /// The move just recorded as ply `n + 1` was complete sooner after the move before it
    /// than a hand can answer (the two-hands threshold): the hand that made the move before
    /// may have knocked a piece over, read as this reply.
    pub(super) fn quick_reply(&self, n: usize, t: Millis) -> Option<Alert> {
        let previous = self.reached_at.get(n).copied().filter(|_| n > 0)?;
        let ms = t.saturating_sub(previous);
        // Moves read together from one observation (a reconstruction) carry no timing.
        if ms == 0 || ms >= self.config.two_hands_threshold_ms {
            return None;
        }
        let played = self.game.moves().get(n)?;
        let side = self.game.positions()[n].turn();
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

    /// When the player to move after ply `n` got the move: once that move was made (1.3),
    /// before its press.
    pub(super) fn had_move(&self, n: usize) -> Option<Millis> {
        let pressed = *self.turn_start.get(n)?;
        Some(
            self.reached_at
                .get(n)
                .map_or(pressed, |&made| made.min(pressed)),
        )
    }
}
