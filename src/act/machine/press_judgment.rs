//! Judging a press without a recognised move (7.5.1, 7.5.2, 7.5.3, 7.4).

use shakmaty::{Color, Move, Position};

use super::doubts::Doubt;
use super::reading::Reading;
use super::{Machine, Phase, REREAD_PLIES, color_word};
use crate::act::ending::{self};
use crate::act::search::{Explanation, Sensed};
use crate::act::{Event, Severity};
use crate::board::Millis;

impl Machine {
    /// The side to move pressed without a recognised move: 7.5.2, 7.5.3 or 7.5.1.
    pub(super) fn judge_press(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        if self.phase != Phase::Playing || self.game.position().turn() != by {
            return;
        }
        // What looked like a move still being made may be moves already made, some of
        // them unseen: the press says they are over. The board as it is comes first (its
        // last updates may have come after the press), then the board at the press.
        let at_press = self.press_reading.take().and_then(|(plies, reading)| {
            let still_open = matches!(reading, Reading::Adopt { from, .. } if from >= self.settled);
            (plies == self.game.plies() && still_open).then_some(reading)
        });
        let reading = match self.read(true) {
            Reading::Unexplained { .. } => at_press,
            reading => Some(reading),
        };
        // Moves already final are not re-read here: a piece knocked off by the hand that
        // made the pressed move would be read as more moves instead (7.4 below).
        if let Some(Reading::Adopt { from, moves, doubt }) = reading
            && from >= self.settled
            && !moves.is_empty()
            && self.pending_end.is_none()
        {
            self.adopt(from, &moves, t, out);
            match doubt {
                Some(doubt) => self.raise_doubt(doubt, t, out),
                None => self.doubt = None,
            }
            // The press completes the presser's latest move, the reply read with it or not.
            let n = self.game.plies();
            let latest = (n.saturating_sub(1)..=n)
                .rev()
                .find(|&k| k > 0 && self.game.positions()[k - 1].turn() == by);
            if self.phase == Phase::Playing
                && let Some(k) = latest
                && k > self.completed
            {
                self.complete(by, t, k, out);
            }
            let d = self.sensed().diff(self.game.position().board());
            self.set_held(d.any().then_some(d), t, out);
            return;
        }
        let current = self.game.position().clone();
        let s = self.sensed();
        let d = s.diff(current.board());
        if d.is_empty()
            && let Some((from, moves, doubt)) = self.reread_for_press(&s)
        {
            self.adopt(from, &moves, t, out);
            self.raise_doubt(doubt, t, out);
            let n = self.game.plies();
            self.complete(by, t, n, out);
            return;
        }
        if d.is_empty()
            || (s.in_progress(&current) && s.board.occupied().is_subset(current.board().occupied()))
        {
            let mut a = self.alert("7.5.3", Some(by), t, Severity::Critical);
            a.evidence_ms = vec![t];
            a.message = format!(
                "7.5.3: {} pressed the clock without making a move; this counts as an illegal move",
                color_word(by)
            );
            out.push(Event::Alert(a));
            self.count_illegal(by, t, out);
            return;
        }
        if let Some(m) = s.unfinished_promotion(&current) {
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
            return;
        }
        if let Some((m, displaced)) = s.move_with_pieces_displaced(&current) {
            // 7.4: a legal move made with pieces knocked off or over on the way is no illegal
            // move; the press completes it once the pieces are back.
            let mut a = self.alert("7.4", Some(by), t, Severity::Warning);
            a.evidence_ms = vec![t];
            a.squares = displaced.into_iter().map(|s| s.to_string()).collect();
            a.message = format!(
                "7.4: {} pressed the clock after {} with pieces knocked off their squares \
                 ({}): the player restores displaced pieces in his own time; the move is \
                 recorded once they are back",
                color_word(by),
                shakmaty::san::San::from_move(&current, m),
                a.squares.join(" ")
            );
            out.push(Event::Alert(a));
            self.await_board(by, t, d, out);
            return;
        }
        if let Some((surplus, placed_at, _)) = self.surplus
            && let Some(piece) = self.physical.board().piece_at(surplus)
        {
            // One piece too many is a lost update, not an illegal move: which of its kind
            // left unreported decides the move, and the board cannot tell.
            let mut a = self.alert("8.5.3", Some(by), t, Severity::Warning);
            a.evidence_ms = vec![placed_at, t];
            a.squares = self
                .physical
                .board()
                .by_piece(piece)
                .into_iter()
                .map(|s| s.to_string())
                .collect();
            a.message = format!(
                "{} pressed the clock, but the board shows one {} {} too many: it did not \
                 report one of them leaving {}, so the move cannot be read. The arbiter should \
                 check which of these squares is empty; a piece put there and taken off again \
                 makes the board report it",
                color_word(by),
                color_word(piece.color).to_lowercase(),
                crate::act::touch::name(piece.role),
                a.squares.join(" ")
            );
            out.push(Event::Alert(a));
            self.await_board(by, t, d, out);
            return;
        }
        if let Some(told) = self.unrestored {
            if !told {
                self.unrestored = Some(true);
                out.push(Event::Alert(self.play_on_unrestored(by, t, d)));
            }
            self.set_held(Some(d), t, out);
            return;
        }
        let mut a = self.alert("7.5.1", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.squares = d.into_iter().map(|s| s.to_string()).collect();
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
        self.set_held(Some(d), t, out);
        self.unrestored = Some(false);
    }

    /// A press by the side to move when the board shows the game as recorded: before it
    /// counts as a press without a move (7.5.3), the last moves are read once more with one
    /// move more, the presser's. A piece that stood on a square the recorded moves never
    /// touch, and an opponent's move read before it, may be two moves of the presser around
    /// the reply (the first one's end reported late, a reply begun at once). Taken only when
    /// exactly one such reading agrees with the reports, and its moves overlap in time less
    /// than the recorded ones did; with a warning.
    pub(super) fn reread_for_press(&self, s: &Sensed<'_>) -> Option<(usize, Vec<Move>, Doubt)> {
        let n = self.game.plies();
        let oldest = self
            .completed
            .saturating_sub(REREAD_PLIES)
            .max(n.saturating_sub(3));
        (oldest..n).rev().find_map(|k| {
            let start = &self.game.positions()[k];
            let plies = n - k + 1;
            let reports = self.reports(k);
            let Explanation::Unique(seq) = s.sequences_within(start, plies..=plies, &reports)
            else {
                return None;
            };
            let recorded = self.moves_since(k);
            let ms = reports.overlap(start, &seq);
            (ms < reports.overlap(start, &recorded))
                .then(|| (k, seq.clone(), Doubt::Overlapping { moves: seq, ms }))
        })
    }
}
