//! Completed illegal moves: play on an unrestored board, the 7.5.5 count and penalty.

use shakmaty::{Bitboard, Color, Position};

use super::{Machine, color_word};
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

impl Machine {
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
