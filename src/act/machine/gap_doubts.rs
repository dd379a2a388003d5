//! No penalty from what the recorder did not see: after a gap in the link, a press on a
//! board the game does not explain is an 8.5.3 doubt for the arbiter while the game rests on
//! the gap's reading, not a completed illegal move (7.5.1) or a press without a move (7.5.3).
//!
//! 7.5.1 judges a move against the position immediately before it, and 7.5.3 needs the side
//! to move; after a gap the recorder has neither from what it saw, only the board's position
//! and a reading of the moves that reached it, the shortest and likeliest. That reading may
//! put the moves in the wrong order, miss a piece that went and came back (then the other
//! side is to move) or, on a board that does not name pieces, take one piece for another.
//! The game rests on it until play shows the position:
//!
//! - who is to move, once a move made after the gap is read alone from the position the
//!   reading reached, the board then showing the game's position (a move of the side not
//!   to move never is: its piece is of the other colour);
//! - on a board that senses only occupancy, which piece stands where, once every piece the
//!   gap may have moved is off the board: the pieces the reading moved, or, when pieces were
//!   captured in the gap (where captures and recaptures leave squares occupied as before),
//!   every piece; after a game taken up from such a board, every piece.
//!
//! Reading the gap again (a reading from within its moves) starts this over.

use shakmaty::{Bitboard, Color, Move, Position, Square};

use super::doubt::square_names;
use super::link_gap::UnconfirmedGap;
use super::{Machine, color_word};
use crate::act::search::ep_victim;
use crate::act::{Event, Severity};
use crate::board::Millis;

impl Machine {
    /// The game rests from now on on a reading of a gap that began after position `before`
    /// (`None`: the game was just taken up from the board).
    pub(super) fn gap_unconfirmed(&mut self, before: Option<usize>) {
        self.gap
            .reading_unconfirmed(before, self.record.game().plies());
    }

    /// After `moves` were adopted from position `from`: a reading from within the moves read
    /// across the gap reads the gap again; one move read alone after them, the board then the
    /// game's, confirms who is to move. The doubt of a press is told again after any reading.
    pub(super) fn confirm_gap(&mut self, from: usize, moves: &[Move]) {
        let Some(gap) = self.gap.unconfirmed() else {
            return;
        };
        if from < gap.end || self.across_gap(from) {
            self.gap.read_again_to(from + moves.len());
        } else if moves.len() == 1
            && self.record.game().plies() == from + 1
            && self
                .sensed()
                .diff(self.record.game().position().board())
                .is_empty()
        {
            self.gap.turn_confirmed();
        } else {
            self.gap.board_explained();
        }
    }

    /// The last position read before a gap whose reading play has not shown who is to move:
    /// the moves after it stay open to a reading of the gap again, whatever press completed
    /// them (a press after a gap may be a late one, for a move before the opponent's reply,
    /// 6.2.1.2, and says nothing of the reading's order or parity).
    pub(super) fn gap_turn_unconfirmed_from(&self) -> Option<usize> {
        self.gap
            .unconfirmed()
            .filter(|gap| !gap.turn_confirmed)
            .and_then(|gap| gap.before)
    }

    /// The pieces whose identity rests on the gap's reading: on a board that senses only
    /// occupancy, those the gap may have moved, followed through the moves since; none on a
    /// board that names its pieces.
    pub(super) fn guessed_pieces(&self, gap: &UnconfirmedGap) -> Bitboard {
        let positions = self.record.game().positions();
        let end = gap.end.min(self.record.game().plies());
        let after = positions[end].board();
        let mut guessed = match gap
            .before
            .filter(|&b| b <= end)
            .map(|b| positions[b].board())
        {
            Some(before) if before.occupied().count() == after.occupied().count() => after
                .occupied()
                .into_iter()
                .filter(|&sq| before.piece_at(sq) != after.piece_at(sq))
                .collect(),
            _ => after.occupied(),
        };
        for played in &self.record.game().moves()[end..] {
            follow(&mut guessed, played.mv);
        }
        guessed
    }

    /// True while the game rests on an unconfirmed reading of a gap: who is to move, or (on
    /// a board that senses only occupancy) which piece stands where. A reading play has
    /// confirmed is forgotten.
    fn gap_doubt_stands(&mut self) -> bool {
        let Some(gap) = self.gap.unconfirmed() else {
            return false;
        };
        if !gap.turn_confirmed || self.pieces_guessed(&gap).any() {
            return true;
        }
        self.gap.confirmed();
        false
    }

    /// A press by `by`, the side to move as the game reads, on a board the game does not
    /// explain (`differing` from it), while the game rests on an unconfirmed reading of a
    /// gap: an 8.5.3 warning, once until a reading is adopted, and the game held, instead
    /// of a completed illegal move (7.5.1) with a proposed penalty. Returns false when no
    /// such gap stands.
    pub(super) fn press_after_gap(
        &mut self,
        by: Color,
        t: Millis,
        differing: Bitboard,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.gap_doubt_stands() {
            return false;
        }
        let squares = square_names(differing).join(" ");
        let names = self.pieces_not_named();
        self.tell_gap_doubt(by, t, differing, out, |since| {
            format!(
                "{} pressed the clock on a board that differs from the game on {squares}; the \
                 link to the board was down {since} and the moves made meanwhile were read from \
                 the board's position, so the game may rest on a wrong reading of them (their \
                 order, a piece that went and came back, so that the other side is to move{names}): \
                 this is no illegal move the recorder saw (7.5.1) and no penalty is proposed; \
                 the arbiter should check the board against the game and correct the moves if \
                 needed",
                color_word(by)
            )
        });
        self.set_held_now(Some(differing), t, out);
        true
    }

    /// A press by `by`, the side to move as the game reads, with no move on the board, while
    /// the game rests on an unconfirmed reading of a gap: `by` may have made the gap's last
    /// move (on a board that does not name pieces, the move that seemed to confirm who is to
    /// move may have been the other side's piece taken for one of his). The gap is read again with the other side to move when a reading fits (the
    /// press then completes its last move); otherwise an 8.5.3 warning, instead of a press
    /// without a move (7.5.3) with a proposed penalty. Returns false when no such gap stands.
    pub(super) fn press_without_move_after_gap(
        &mut self,
        by: Color,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.gap_doubt_stands() {
            return false;
        }
        if self.correct_gap_parity(!by, t, out) {
            let n = self.record.game().plies();
            self.complete(by, t, n, out);
            return true;
        }
        let names = self.pieces_not_named();
        self.tell_gap_doubt(by, t, Bitboard::EMPTY, out, |since| {
            format!(
                "{} pressed the clock with no move on the board as the game reads it; the link \
                 to the board was down {since} and the moves made meanwhile were read from the \
                 board's position, so who is to move is not certain (a piece that went and came \
                 back is not seen{names}): this is no press without a move the recorder saw \
                 (7.5.3) and no penalty is proposed; the arbiter should check who is to move",
                color_word(by)
            )
        });
        true
    }

    /// The 8.5.3 warning of a press after an unconfirmed gap, told once until a reading is
    /// adopted; `message` is given when the link was down.
    fn tell_gap_doubt(
        &mut self,
        by: Color,
        t: Millis,
        squares: Bitboard,
        out: &mut Vec<Event>,
        message: impl FnOnce(&str) -> String,
    ) {
        let Some(gap) = self.gap.unconfirmed() else {
            return;
        };
        if !self.gap.doubt_told() {
            return;
        }
        let since = match gap.before {
            Some(plies) => format!("after ply {plies}"),
            None => "before the game was taken up from the board".to_string(),
        };
        let mut a = self.alert("8.5.3", Some(by), t, Severity::Warning);
        a.evidence_ms = vec![t];
        a.squares = square_names(squares);
        a.message = message(&since);
        out.push(Event::Alert(a));
    }
}

/// Follows the pieces on `guessed` squares through move `m`: a piece carried goes with it, a
/// piece captured leaves the board.
fn follow(guessed: &mut Bitboard, m: Move) {
    let carried: Vec<(Square, Square)> = match m {
        Move::Castle { king, rook } => match m.castling_side() {
            Some(side) => vec![
                (king, Square::from_coords(side.king_to_file(), king.rank())),
                (rook, Square::from_coords(side.rook_to_file(), rook.rank())),
            ],
            None => Vec::new(),
        },
        Move::EnPassant { from, to } => {
            guessed.discard(ep_victim(from, to));
            vec![(from, to)]
        }
        Move::Normal { from, to, .. } => vec![(from, to)],
        Move::Put { .. } => Vec::new(),
    };
    let arrivals: Vec<Square> = carried
        .iter()
        .filter(|(from, _)| guessed.contains(*from))
        .map(|&(_, to)| to)
        .collect();
    for &(from, to) in &carried {
        guessed.discard(from);
        guessed.discard(to);
    }
    for to in arrivals {
        guessed.add(to);
    }
}
