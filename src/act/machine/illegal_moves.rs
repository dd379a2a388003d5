//! Completed illegal moves: play on an unrestored board, the 7.5.5 count and penalty.

use shakmaty::{Bitboard, Color, Move, Position, Role};

use super::{Machine, Phase, color_word, ply_number};
use crate::act::ending;
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

impl Machine {
    /// 7.5.3: the side to move pressed the clock without making a move.
    pub(super) fn press_without_move(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        if self.clock.presser_maybe_guessed(t) {
            let mut a = self.alert("8.5.3", Some(by), t, Severity::Warning);
            a.evidence_ms = vec![t];
            a.message = format!(
                "{} seems to have pressed the clock without making a move, but the clock was \
                 not seen running at the start position and too few presses yet tell which \
                 of its sides is White's: the press may have been {}'s, for the move made. \
                 No penalty is proposed; the arbiter should check who pressed",
                color_word(by),
                color_word(!by)
            );
            out.push(Event::Alert(a));
            return;
        }
        let mut a = self.alert("7.5.3", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.message = format!(
            "{} pressed the clock without making a move; this counts as an illegal move",
            color_word(by)
        );
        out.push(Event::Alert(a));
        let basis = self.record.game().plies();
        self.count_illegal(by, basis, t, out);
    }

    /// 7.5.2: the pawn move `m` reached the last rank but the pawn was not exchanged before
    /// the press. A queen is recorded, the move counts as illegal, and the press completes
    /// it.
    pub(super) fn unfinished_promotion(
        &mut self,
        by: Color,
        m: Move,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        self.record(m, t, out);
        self.presses
            .promotion_unexchanged(self.record.game().plies(), t);
        let mut a = self.alert("7.5.2", Some(by), t, Severity::Critical);
        a.ply = self.ply();
        a.evidence_ms = vec![t];
        a.squares = vec![m.to().to_string()];
        a.message = format!(
            "The pawn reached {} but was not exchanged before the clock press; a queen \
             is recorded and the move counts as illegal",
            m.to()
        );
        out.push(Event::Alert(a));
        // The judgement rests on the moves before the promotion, not on its piece.
        let basis = self.record.game().plies() - 1;
        self.count_illegal(by, basis, t, out);
        if self.phase == Phase::Playing && self.record.game().position().turn() != by {
            let n = self.record.game().plies();
            self.complete(by, t, n, out);
            let d = self.sensed().diff(self.record.game().position().board());
            self.set_held_now(d.any().then_some(d), t, out);
        }
    }

    /// After a queen was recorded for a pawn left on the last rank (7.5.2), the board shows
    /// the same pawn move with another piece: the piece put there replaces the queen (a
    /// revision, and the press still completes the move). The penalty stands as it was: the
    /// Laws give no second one. Returns true when the move was revised.
    pub(super) fn exchange_after_unfinished_promotion(
        &mut self,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        let Some((ply, pressed)) = self.presses.unexchanged() else {
            return false;
        };
        if self.record.game().plies() != ply {
            self.presses.exchange_settled();
            return false;
        }
        let Some(Move::Normal {
            role: Role::Pawn,
            from,
            capture,
            to,
            promotion: Some(_),
        }) = self.record.game().moves().last().map(|p| p.mv)
        else {
            return false;
        };
        let before = self.record.game().positions()[ply - 1].clone();
        let sensed = self.sensed();
        let exchanged = [Role::Knight, Role::Bishop, Role::Rook]
            .into_iter()
            .map(|role| Move::Normal {
                role: Role::Pawn,
                from,
                capture,
                to,
                promotion: Some(role),
            })
            .find(|&m| {
                before.is_legal(m) && {
                    let mut after = before.clone();
                    after.play_unchecked(m);
                    sensed.diff(after.board()).is_empty()
                }
            });
        let Some(m) = exchanged else {
            return false;
        };
        let by = before.turn();
        self.presses.exchange_settled();
        self.adopt(ply - 1, &[m], t, out);
        if self.phase == Phase::Playing
            && self.record.game().plies() == ply
            && self.record.completed() < ply
        {
            self.complete(by, pressed, ply, out);
        }
        self.set_held(None, t, out);
        true
    }

    /// 7.5.1: the press completed a move that leaves the board `differing` from every legal
    /// continuation (with 3.10.3 when the board's position is itself illegal). The game is
    /// held until the position before the irregularity is restored.
    pub(super) fn completed_illegal_move(
        &mut self,
        by: Color,
        t: Millis,
        differing: Bitboard,
        out: &mut Vec<Event>,
    ) {
        let mut a = self.alert("7.5.1", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.squares = differing.into_iter().map(|s| s.to_string()).collect();
        // An occupancy-only board's names are guesses: which piece is a king it cannot say.
        let why = Some(self.physical.board())
            .filter(|_| self.names_pieces())
            .and_then(ending::illegal_position)
            .map(|w| format!(" (3.10.3: {w})"))
            .unwrap_or_default();
        a.message = format!(
            "{} completed an illegal move with the clock press; the board differs from \
             the game on {}{why}. The position before the irregularity must be restored.",
            color_word(by),
            a.squares.join(" ")
        );
        out.push(Event::Alert(a));
        if !why.is_empty() {
            let mut p = self.alert("3.10.3", Some(by), t, Severity::Critical);
            p.squares = vec![];
            p.message = format!("the board shows an illegal position{why}");
            out.push(Event::Alert(p));
        }
        let basis = self.record.game().plies();
        self.count_illegal(by, basis, t, out);
        self.set_held_now(Some(differing), t, out);
        self.doubts.illegal_move_unrestored();
    }

    /// The alert for the first press made after a completed illegal move on a board still
    /// not restored: play went on from the illegal position. The moves of that play are
    /// not illegal moves of their own and are not counted (7.5.5); the record stays where
    /// the irregularity began until the position is restored.
    pub(super) fn play_on_unrestored(&self, by: Color, t: Millis, differing: Bitboard) -> Alert {
        let mut a = self.alert("7.5.1", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.squares = differing.into_iter().map(|s| s.to_string()).collect();
        let n = self.record.game().plies();
        let last = match (self.record.game().moves().last(), n.checked_sub(1)) {
            (Some(m), Some(k)) => {
                let before = &self.record.game().positions()[k];
                let dots = if before.turn() == Color::White {
                    "."
                } else {
                    "..."
                };
                format!("after {}{dots}{}", before.fullmoves(), m.san)
            }
            _ => "at the start".to_string(),
        };
        a.message = format!(
            "Play goes on without the position before the illegal move being \
             restored; {} pressed the clock on a board that differs from the game on {}. \
             The record stays {last}, and presses on this board are not counted as further \
             illegal moves. The arbiter should restore that position (or enter the moves \
             played since by hand).",
            color_word(by),
            a.squares.join(" ")
        );
        a
    }

    /// 7.5.5: counts a completed illegal move of `by` and proposes the penalty: time added
    /// to the opponent's clock the first time, the game lost (or drawn, when the opponent
    /// cannot checkmate) from the second on (7.5.5, Appendix B for blitz).
    /// `basis` is the number of recorded moves the judgement rests on: should any of them be
    /// revised, the proposal is withdrawn ([`Machine::withdraw_penalties`]).
    pub(super) fn count_illegal(
        &mut self,
        by: Color,
        basis: usize,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        self.record.penalty_proposed(by, basis);
        let count = self.illegal_moves(by);
        let minutes = if self.config.one_minute_penalty { 1 } else { 2 };
        let opponent = !by;
        let proposal = if count == 1 {
            format!(
                "First completed illegal move of {}: proposed penalty {minutes} minute{} added to \
                 {}'s clock",
                color_word(by),
                if minutes == 1 { "" } else { "s" },
                color_word(opponent)
            )
        } else if self
            .record
            .game()
            .position()
            .has_insufficient_material(opponent)
        {
            format!(
                "Completed illegal move number {count} of {}: proposed result draw, {} cannot \
                 checkmate",
                color_word(by),
                color_word(opponent)
            )
        } else {
            format!(
                "Completed illegal move number {count} of {}: proposed result, the game is lost \
                 by {}",
                color_word(by),
                color_word(by)
            )
        };
        let mut a = self.alert("7.5.5", Some(by), t, Severity::Critical);
        a.ply = ply_number(basis + 1);
        a.evidence_ms = vec![t];
        a.message = format!("{proposal}. The arbiter decides.");
        out.push(Event::Alert(a));
    }

    /// Withdraws, with an info 7.5.5 alert each, the penalty proposals that rested on moves
    /// from ply `keep + 1` on, which a revision has just withdrawn: the board's reading they
    /// judged no longer stands, and a player is not charged for it. The count goes down.
    pub(super) fn withdraw_penalties(&mut self, keep: usize, t: Millis, out: &mut Vec<Event>) {
        self.withdraw_proposals(
            |basis| basis > keep,
            t,
            out,
            |by, basis| {
                format!(
                    "the completed illegal move of {} judged at ply {} rested on moves from ply {} \
                 on, which the board has since shown were other moves",
                    color_word(by),
                    ply_number(basis + 1),
                    ply_number(keep + 1)
                )
            },
        );
    }

    /// Withdraws, with an info 7.5.5 alert, the penalty proposal judged at a press when the
    /// game stood at ply `basis`: the board has since shown that press completed the move
    /// now recorded there, a legal move whose landing it never reported.
    pub(super) fn withdraw_penalty_judged_at(
        &mut self,
        basis: usize,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        let Some(san) = self.record.game().moves().get(basis).map(|p| p.san.clone()) else {
            return;
        };
        self.withdraw_proposals(
            |judged| judged == basis,
            t,
            out,
            |by, _| {
                format!(
                    "the press of {} judged a completed illegal move at ply {} completed {san}, a \
                 legal move the board did not show landing",
                    color_word(by),
                    ply_number(basis + 1),
                )
            },
        );
    }

    /// Withdraws the proposals whose basis `rests_on` accepts, each with an info 7.5.5 alert
    /// saying `why`.
    fn withdraw_proposals(
        &mut self,
        rests_on: impl Fn(usize) -> bool,
        t: Millis,
        out: &mut Vec<Event>,
        why: impl Fn(Color, usize) -> String,
    ) {
        let withdrawn = self.record.penalties_withdrawn(rests_on);
        for (by, basis) in withdrawn {
            let mut a = self.alert("7.5.5", Some(by), t, Severity::Info);
            a.ply = ply_number(basis + 1);
            a.evidence_ms = vec![t];
            a.message = format!("Proposal withdrawn: {}; it is not counted", why(by, basis));
            out.push(Event::Alert(a));
        }
    }
}
