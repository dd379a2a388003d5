//! The start and the end of a game: set-up, automatic ends, result signals.

use shakmaty::{Move, Role};

use super::{Machine, Phase, ply_number};
use crate::act::ending::{self, Ending};
use crate::act::start::{SetUp, Start};
use crate::act::{Event, Severity};
use crate::board::Millis;

/// Longest time between the two kings' placements of one result signal: a king move to
/// the centre made longer before the signal was a move of the game.
pub(super) const SIGNAL_GAP_MS: Millis = 3_000;
/// How long both kings must stand on the centre squares before the signal ends the game.
pub(super) const SIGNAL_STANDS_MS: Millis = 1_000;

/// An automatic end reached by a move that may still be revised.
#[derive(Debug, Clone)]
pub(super) struct PendingEnd {
    pub(super) end: Ending,
    pub(super) ply: usize,
    pub(super) t_ms: Millis,
}

impl Machine {
    /// Ends the game at an automatic end once the move that reached it stands: made final by a
    /// press and its grace period, or its landing square kept for
    /// [`MachineConfig::end_confirm_ms`](super::MachineConfig::end_confirm_ms). A move that was
    /// revised meanwhile (the piece slid on) takes its end with it.
    pub(super) fn confirm_end(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(pending) = self.pending_end.clone() else {
            return;
        };
        if self.phase != Phase::Playing || self.game.plies() != pending.ply {
            self.pending_end = None;
            return;
        }
        // A press confirms once its grace period is over: the board may still report the
        // piece going on past the square that ended the game.
        let confirmed = self.settled >= pending.ply
            || now >= pending.t_ms.saturating_add(self.config.end_confirm_ms);
        if confirmed && self.landing_stands(pending.ply) {
            self.pending_end = None;
            self.finish(pending.end, pending.t_ms, out);
        }
    }

    pub(super) fn look_for_start(&mut self, t: Millis, out: &mut Vec<Event>) {
        match self.starts.recognise(self.physical.board()) {
            SetUp::Start(start) => self.begin(*start, t, out),
            SetUp::Wrong(squares) => {
                if squares != self.wrong_setup {
                    let mut a = self.alert("7.2.1", None, t, Severity::Warning);
                    a.ply = 0;
                    a.squares = squares.iter().map(ToString::to_string).collect();
                    a.message = format!(
                        "7.2.1: the set-up is wrong on {}; no game starts until it is corrected",
                        a.squares.join(" ")
                    );
                    out.push(Event::Alert(a));
                    self.wrong_setup = squares;
                }
            }
            SetUp::Nothing => {}
        }
    }

    pub(super) fn begin(&mut self, start: Start, t: Millis, out: &mut Vec<Event>) {
        if start.rotated {
            self.rotated = !self.rotated;
            self.physical.rotate_180();
        }
        let fresh = Machine::new(self.config.clone());
        let physical = std::mem::replace(&mut self.physical, fresh.physical.clone());
        let rotated = self.rotated;
        *self = Machine {
            physical,
            rotated,
            phase: Phase::Playing,
            game: start.game,
            chess960: start.chess960,
            turn_start: vec![t],
            reached_at: vec![t],
            ..fresh
        };
        self.physical.clear_placed();
        out.push(Event::GameStart {
            t_ms: t,
            fen: self.game.fen(),
            chess960: self.chess960,
            rotated: self.rotated,
        });
    }

    pub(super) fn finish(&mut self, end: Ending, t: Millis, out: &mut Vec<Event>) {
        self.tell_quick_reply(out);
        out.push(Event::Result {
            result: end.result.to_string(),
            reason: end.reason,
            t_ms: t,
        });
        self.phase = Phase::Ended;
        self.pending_press = None;
        self.overtaken_press = None;
        self.held = None;
        self.told_held = None;
    }

    pub(super) fn result_signal(&mut self, signal: Ending, t: Millis, out: &mut Vec<Event>) {
        let n = self.game.plies();
        let mut keep = n;
        // A king move to the centre that no press confirmed and that came just before the
        // other king completed the signal was the first half of the signal, not a move.
        while keep > self.settled.max(self.completed) {
            let m = self.game.moves()[keep - 1].mv;
            let king_to_centre = matches!(m, Move::Normal { role: Role::King, to, .. } if ending::CENTRE.contains(to));
            let made = self.reached_at.get(keep).copied().unwrap_or(0);
            if !king_to_centre || t.saturating_sub(made) > SIGNAL_GAP_MS {
                break;
            }
            keep -= 1;
        }
        if keep < n {
            // A move whose press was forgotten looks the same: the arbiter decides.
            let mut a = self.alert("8.1", None, t, Severity::Warning);
            a.ply = ply_number(keep + 1);
            a.squares = self.game.moves()[keep..]
                .iter()
                .map(|p| p.mv.to().to_string())
                .collect();
            a.message = format!(
                "the king move{} {} just before the result signal {} taken as part of the \
                 signal, not as a move; if it was played, the arbiter adds it to the record",
                if n - keep == 1 { "" } else { "s" },
                self.game.moves()[keep..]
                    .iter()
                    .map(|p| p.san.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                if n - keep == 1 { "was" } else { "were" },
            );
            out.push(Event::Alert(a));
            self.adopt(keep, &[], t, out);
        }
        self.signalled = Some(signal.result);
        self.finish(signal, t, out);
    }
}
