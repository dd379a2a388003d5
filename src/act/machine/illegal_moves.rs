//! Completed illegal moves: play on an unrestored board, the 7.5.5 count and penalty.

use shakmaty::{Bitboard, Color, Move, Position};

use super::{Machine, Phase, color_word};
use crate::act::ending;
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

impl Machine {
    /// 7.5.3: the side to move pressed the clock without making a move.
    pub(super) fn press_without_move(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        let mut a = self.alert("7.5.3", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.message = format!(
            "7.5.3: {} pressed the clock without making a move; this counts as an illegal move",
            color_word(by)
        );
        out.push(Event::Alert(a));
        self.count_illegal(by, t, out);
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
        let mut a = self.alert("7.5.2", Some(by), t, Severity::Critical);
        a.ply = self.ply();
        a.evidence_ms = vec![t];
        a.squares = vec![m.to().to_string()];
        a.message = format!(
            "7.5.2: the pawn reached {} but was not exchanged before the clock press; a queen \
             is recorded and the move counts as illegal",
            m.to()
        );
        out.push(Event::Alert(a));
        self.count_illegal(by, t, out);
        if self.phase == Phase::Playing && self.game.position().turn() != by {
            let n = self.game.plies();
            self.complete(by, t, n, out);
            let d = self.sensed().diff(self.game.position().board());
            self.set_held(d.any().then_some(d), t, out);
        }
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
        let why = ending::illegal_position(self.physical.board())
            .map(|w| format!(" (3.10.3: {w})"))
            .unwrap_or_default();
        a.message = format!(
            "7.5.1: {} completed an illegal move with the clock press; the board differs from \
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
        self.count_illegal(by, t, out);
        self.set_held(Some(differing), t, out);
        self.unrestored = Some(false);
    }

    /// The alert for the first press made after a completed illegal move on a board still
    /// not restored: play went on from the illegal position. The moves of that play are
    /// not illegal moves of their own and are not counted (7.5.5); the record stays where
    /// the irregularity began until the position is restored.
    pub(super) fn play_on_unrestored(&self, by: Color, t: Millis, differing: Bitboard) -> Alert {
        let mut a = self.alert("7.5.1", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.squares = differing.into_iter().map(|s| s.to_string()).collect();
        let n = self.game.plies();
        let last = match (self.game.moves().last(), n.checked_sub(1)) {
            (Some(m), Some(k)) => {
                let before = &self.game.positions()[k];
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
            "7.5.1: play goes on without the position before the illegal move being \
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
    pub(super) fn count_illegal(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        let count = &mut self.illegal_moves[by as usize];
        *count += 1;
        let count = *count;
        let minutes = if self.config.blitz { 1 } else { 2 };
        let opponent = !by;
        let proposal = if count == 1 {
            format!(
                "first completed illegal move of {}: proposed penalty {minutes} minute{} added to \
                 {}'s clock",
                color_word(by),
                if minutes == 1 { "" } else { "s" },
                color_word(opponent)
            )
        } else if self.game.position().has_insufficient_material(opponent) {
            format!(
                "completed illegal move number {count} of {}: proposed result draw, {} cannot \
                 checkmate",
                color_word(by),
                color_word(opponent)
            )
        } else {
            format!(
                "completed illegal move number {count} of {}: proposed result, the game is lost \
                 by {}",
                color_word(by),
                color_word(by)
            )
        };
        let mut a = self.alert("7.5.5", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.message = format!("7.5.5: {proposal}. The arbiter decides.");
        out.push(Event::Alert(a));
    }
}
