//! The dead-position analysis (5.2.2) kept out of the observation path. The unwinnability
//! search can take milliseconds, seconds for constructed positions; a machine configured
//! with [`MachineConfig::defer_dead_position_analysis`](super::MachineConfig) does not run
//! it while reading an observation but hands each position that needs it to its shell as an
//! [`AnalysisRequest`], and takes the answer whenever it comes.
//!
//! The record does not depend on when the answer comes: the game ends at the ply whose
//! position was dead, with that move's time, and moves read after it are withdrawn (a dead
//! position ends the game at once). Answers must be given in the order of the requests; a
//! replay that analyses at once therefore records the same game.

use super::pending_end::{AnalysisRequest, PendingEnd};
use super::{Machine, Phase};
use crate::act::Event;
use crate::act::ending;
use crate::board::Millis;
use crate::rules::{EndCheck, EndReason, GameEnd, same_position};

impl Machine {
    /// Looks for an automatic end after ply `ply` was recorded at `t`. The end waits for its
    /// move to stand ([`Machine::confirm_end`]); a position that needs the unwinnability
    /// analysis is analysed now, or handed to the shell when the analysis is deferred.
    pub(super) fn look_for_end(&mut self, ply: usize, t: Millis) {
        let budget = self.config.dead_position_budget;
        let end = if self.config.defer_dead_position_analysis {
            match self.record.game().automatic_end_unanalysed() {
                EndCheck::End(end) => Some(end),
                EndCheck::Analyse => {
                    if budget.allows_search() {
                        let position = self.record.game().position().clone();
                        self.ends.analysis_requested(ply, position, budget);
                    }
                    None
                }
                EndCheck::Continues => None,
            }
        } else {
            self.record.game().automatic_end(&budget)
        };
        if let Some(end) = end {
            // A piece sliding over a square that mates is not a move made there: the end
            // stands once the move does (a press, or its landing square kept).
            self.ends.end_reached(PendingEnd {
                end: ending::from_game_end(end),
                ply,
                t_ms: t,
            });
        }
    }

    /// Leaves the dead-position analysis to the shell from now on, or takes it back.
    pub fn defer_dead_position_analysis(&mut self, defer: bool) {
        self.config.defer_dead_position_analysis = defer;
    }

    /// The positions waiting for their dead-position analysis, oldest first; the machine
    /// forgets them.
    pub fn take_analysis_requests(&mut self) -> Vec<AnalysisRequest> {
        self.ends.analysis_requests_taken()
    }

    /// The answer to `request` ([`AnalysisRequest::analyse`]). A dead position ends the game
    /// at its ply, once its move stands, withdrawing moves read after it; an answer for a
    /// position the record no longer holds (its move was revised) is ignored.
    pub fn analysis_answered(
        &mut self,
        request: &AnalysisRequest,
        dead: Option<bool>,
        out: &mut Vec<Event>,
    ) {
        if dead != Some(true) || self.phase != Phase::Playing {
            return;
        }
        let ply = request.ply();
        let still_recorded = self
            .record
            .game()
            .positions()
            .get(ply)
            .is_some_and(|p| same_position(p, request.position()));
        if !still_recorded || self.ends.pending().is_some_and(|p| p.ply <= ply) {
            return;
        }
        let made = self
            .record
            .reached_at()
            .get(ply)
            .copied()
            .unwrap_or(self.now);
        if self.record.game().plies() > ply {
            self.withdraw_moves_after(ply, &[], self.now, out);
            self.record.open_from(ply);
        }
        self.ends.end_reached(PendingEnd {
            end: ending::from_game_end(GameEnd::draw(EndReason::DeadPosition)),
            ply,
            t_ms: made,
        });
        self.confirm_end(self.now, out);
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, Color, Piece, Position, Role, Square};

    use super::super::{Machine, MachineConfig};
    use crate::act::Event;
    use crate::board::{Observation, ObservationKind, Snapshot};

    /// Kings behind a locked pawn chain: neither side can ever capture or mate.
    const LOCKED: &str = "8/8/k7/p1p1p1p1/P1P1P1P1/8/8/K7 w - - 0 1";

    fn machine(defer: bool) -> Machine {
        let mut m = Machine::new(MachineConfig {
            start_fen: Some(LOCKED.to_string()),
            defer_dead_position_analysis: defer,
            ..MachineConfig::default()
        });
        let pos: Chess = LOCKED
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let snapshot = Snapshot {
            board: pos.board().clone(),
            identifies_pieces: true,
        };
        let mut out = Vec::new();
        m.observe(&obs(0, ObservationKind::Snapshot(snapshot)), &mut out);
        assert!(matches!(out[..], [Event::GameStart { .. }]), "{out:?}");
        m
    }

    fn obs(t_ms: u64, kind: ObservationKind) -> Observation {
        Observation { t_ms, kind }
    }

    /// A king move from `from` to `to`, pressed for, at `t` milliseconds.
    fn king_move(m: &mut Machine, color: Color, from: Square, to: Square, t: u64) -> Vec<Event> {
        let king = Piece {
            color,
            role: Role::King,
        };
        let mut out = Vec::new();
        m.observe(&obs(t, ObservationKind::Emptied(from)), &mut out);
        m.observe(
            &obs(t + 300, ObservationKind::Placed(to, Some(king))),
            &mut out,
        );
        m.observe(
            &obs(t + 600, ObservationKind::ClockPressed { by: color }),
            &mut out,
        );
        m.advance(t + 1_500, &mut out);
        out
    }

    fn results(events: &[Event]) -> Vec<&Event> {
        events
            .iter()
            .filter(|e| matches!(e, Event::Result { .. } | Event::Revision { .. }))
            .collect()
    }

    #[test]
    fn a_deferred_analysis_ends_the_game_when_answered_as_an_inline_one_does() {
        let mut inline = machine(false);
        let ended = king_move(&mut inline, Color::White, Square::A1, Square::B1, 1_000);
        assert!(
            matches!(results(&ended)[..], [Event::Result { result, t_ms: 1_300, .. }] if result == "1/2-1/2"),
            "{ended:?}"
        );
        assert!(inline.take_analysis_requests().is_empty());

        let mut deferred = machine(true);
        let moved = king_move(&mut deferred, Color::White, Square::A1, Square::B1, 1_000);
        assert!(
            results(&moved).is_empty(),
            "no end before the answer: {moved:?}"
        );
        let requests = deferred.take_analysis_requests();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].ply(), 1);
        let dead = requests[0].analyse();
        assert_eq!(dead, Some(true));
        let mut out = Vec::new();
        deferred.analysis_answered(&requests[0], dead, &mut out);
        assert_eq!(results(&out), results(&ended));
    }

    #[test]
    fn a_late_answer_withdraws_the_moves_made_after_the_dead_position() {
        let mut m = machine(true);
        king_move(&mut m, Color::White, Square::A1, Square::B1, 1_000);
        let reply = king_move(&mut m, Color::Black, Square::A6, Square::B6, 3_000);
        assert!(
            reply
                .iter()
                .any(|e| matches!(e, Event::Move { ply: 2, .. })),
            "{reply:?}"
        );
        let requests = m.take_analysis_requests();
        assert_eq!(requests.iter().map(|r| r.ply()).collect::<Vec<_>>(), [1, 2]);
        let mut out = Vec::new();
        for r in &requests {
            m.analysis_answered(r, r.analyse(), &mut out);
        }
        assert!(
            matches!(
                results(&out)[..],
                [
                    Event::Revision { ply: 2, .. },
                    Event::Result { t_ms: 1_300, .. }
                ]
            ),
            "{out:?}"
        );
    }

    #[test]
    fn an_answer_for_a_position_no_longer_recorded_is_ignored() {
        let mut m = machine(true);
        king_move(&mut m, Color::White, Square::A1, Square::B1, 1_000);
        let requests = m.take_analysis_requests();
        let mut other = machine(true);
        king_move(&mut other, Color::White, Square::A1, Square::A2, 1_000);
        let mut out = Vec::new();
        other.analysis_answered(&requests[0], Some(true), &mut out);
        assert!(out.is_empty(), "{out:?}");
        other.analysis_answered(&requests[0], Some(false), &mut out);
        assert!(out.is_empty(), "{out:?}");
    }
}
