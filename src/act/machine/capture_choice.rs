//! Captures the board cannot tell apart: on a board that senses only occupancy, a piece that
//! takes empties its own square and leaves the victim's as full as before, so when it takes
//! within one scan of the victim's removal, several captures by that piece leave the same
//! board. At the press one of them is recorded, the likeliest, and the arbiter is told the
//! others; the board's later reports correct the record if they show another one was made.

use shakmaty::uci::UciMove;
use shakmaty::{Bitboard, Chess, Move, Position, Role, Square};

use super::Machine;
use super::doubts::Doubt;
use super::reading::{Reading, choose};
use crate::act::Event;
use crate::act::search::{Sensed, only, touches};
use crate::board::Millis;

/// How many plies after the choice the other captures stay open to the board's reports: a
/// piece taken unseen is usually moved or taken again within a few moves.
const CHOICE_OPEN_PLIES: usize = 40;

/// The captures a press left undecided, and the one recorded.
#[derive(Debug, Clone)]
pub(super) struct CaptureChoice {
    /// The position the capture was made from.
    ply: usize,
    chosen: Move,
    others: Vec<Move>,
}

/// A piece's worth in pawns, the king's beyond any exchange.
fn worth(role: Role) -> i32 {
    match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 100,
    }
}

/// What `capture` wins at first sight: the victim, less the capturer when the opponent
/// attacks the square once it stands there.
fn first_sight_gain(pos: &Chess, capture: Move) -> i32 {
    let victim = capture.capture().map_or(0, worth);
    let mut after = pos.clone();
    after.play_unchecked(capture);
    let defended = after
        .board()
        .attacks_to(capture.to(), after.turn(), after.board().occupied())
        .any();
    victim - if defended { worth(capture.role()) } else { 0 }
}

/// Whether `capture` from `pos` checkmates, and whether it checks.
fn mates_and_checks(pos: &Chess, capture: Move) -> (bool, bool) {
    let mut after = pos.clone();
    after.play_unchecked(capture);
    (after.is_checkmate(), after.is_check())
}

/// The likeliest of several `captures` from `pos`: the one that mates, then the one that
/// wins most material at first sight, then the recapture on `last_arrival` (the square the
/// opponent's last move reached), then a check, then the most valuable victim, then the
/// first. Of the 5,656 captures in the two fixture files (master and online games) made by
/// a piece that had several, this picks the one played 86 times in 100.
pub(super) fn likeliest(
    pos: &Chess,
    captures: &[Move],
    last_arrival: Option<Square>,
) -> Option<Move> {
    let key = |m: &Move| {
        let (mates, checks) = mates_and_checks(pos, *m);
        (
            mates,
            first_sight_gain(pos, *m),
            Some(m.to()) == last_arrival,
            checks,
            m.capture().map_or(0, worth),
        )
    };
    // `max_by_key` keeps the last of equals: reversed, the first.
    captures.iter().rev().max_by_key(|m| key(m)).copied()
}

/// The moves from `pos` the board shows made since, when one of them uses a square in
/// `victims` (where the undecided captures differ): none when it shows `pos`; else one
/// move (with `pressed`, also a capture whose landing it cannot show); else two moves of
/// fast play.
fn shown_since(s: &Sensed<'_>, pos: &Chess, victims: Bitboard, pressed: bool) -> Option<Vec<Move>> {
    let on_victims =
        |m: Move| m.from().is_some_and(|sq| victims.contains(sq)) || victims.contains(m.to());
    let d = s.diff(pos.board());
    if d.is_empty() {
        return Some(Vec::new());
    }
    let moves = match choose(&s.single_moves(pos))
        .map(|(m, _)| m)
        .or_else(|| pressed.then(|| s.capture_landed_unseen(pos)).flatten())
    {
        Some(m) => vec![m],
        None => only(
            pos.legal_moves()
                .into_iter()
                .filter(|&m| touches(m, d))
                .flat_map(|m| {
                    let mut after = pos.clone();
                    after.play_unchecked(m);
                    s.single_moves(&after).into_iter().map(move |(r, _)| [m, r])
                }),
        )?
        .to_vec(),
    };
    moves.iter().any(|&m| on_victims(m)).then_some(moves)
}

impl Machine {
    /// At a press, with the presser's piece off its square and not seen put down anywhere,
    /// when two or more `captures` by it leave the board as it is
    /// ([`Sensed::captures_landed_unseen`]): the likeliest, and the others. `None` when the
    /// board shows one such capture or none.
    pub(super) fn undecided_captures(&self, captures: Vec<Move>) -> Option<(Move, Vec<Move>)> {
        // A pawn taken on the square of its single step may have made a double step taken en
        // passant: that reading is left to the one-capture path.
        if captures.len() < 2 || captures.iter().any(|&m| self.step_or_double(m).is_some()) {
            return None;
        }
        let last_arrival = self.game.moves().last().map(|p| p.mv.to());
        let chosen = likeliest(self.game.position(), &captures, last_arrival)?;
        Some((
            chosen,
            captures.into_iter().filter(|&m| m != chosen).collect(),
        ))
    }

    /// Tells the arbiter that `chosen`, the capture just recorded at a press, is one of
    /// several with `others`, and keeps those open to the board's later reports.
    pub(super) fn keep_capture_choice(
        &mut self,
        chosen: Move,
        others: Vec<Move>,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        self.raise_doubt(
            Doubt::CaptureUnseen {
                capture: chosen,
                others: others.clone(),
            },
            t,
            out,
        );
        self.capture_choice = Some(CaptureChoice {
            ply: self.game.plies() - 1,
            chosen,
            others,
        });
    }

    /// The game read again with another of the captures a press left undecided, when the
    /// board shows what the recorded one cannot explain and exactly one other capture,
    /// followed by the moves recorded since, does: the board as it is, or one more move on
    /// a square where the captures differ, or two in fast play ([`shown_since`]).
    pub(super) fn capture_choice_corrected(
        &self,
        s: &Sensed<'_>,
        pressed: bool,
    ) -> Option<Reading> {
        let choice = self.capture_choice.as_ref()?;
        let n = self.game.plies();
        let recorded = self.game.moves().get(choice.ply)?.mv;
        if recorded != choice.chosen || n > choice.ply + CHOICE_OPEN_PLIES {
            return None;
        }
        let victims = std::iter::once(choice.chosen)
            .chain(choice.others.iter().copied())
            .fold(Bitboard::EMPTY, |b, m| b | m.to());
        let since: Vec<Move> = self.game.moves()[choice.ply + 1..]
            .iter()
            .map(|p| p.mv)
            .collect();
        let mode = self.game.castling_mode();
        let mut readings = choice.others.iter().filter_map(|&other| {
            let mut pos = self.game.positions()[choice.ply].clone();
            pos.play_unchecked(other);
            let mut moves = vec![other];
            for &m in &since {
                let m = UciMove::from_move(m, mode).to_move(&pos).ok()?;
                pos.play_unchecked(m);
                moves.push(m);
            }
            moves.extend(shown_since(s, &pos, victims, pressed)?);
            Some(moves)
        });
        let moves = match (readings.next(), readings.next()) {
            (Some(moves), None) => moves,
            _ => return None,
        };
        Some(Reading::reread(
            choice.ply,
            self.moves_since(choice.ply),
            moves,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::act::search::tests::{moves_from, position};

    fn capture(pos: &Chess, uci: &str) -> Move {
        moves_from(pos, &[uci])[0]
    }

    #[test]
    fn the_capture_that_wins_material_is_likelier_than_one_into_a_defended_square() {
        // The knight on e4 can take the bishop on c3, defended by the b2 pawn, or the pawn on
        // f2, defended by the king: a knight for a bishop beats a knight for a pawn.
        let pos = position("4k3/8/8/8/4n3/2B5/1P3P2/6K1 b - - 0 1", false);
        let bishop = capture(&pos, "e4c3");
        let pawn = capture(&pos, "e4f2");
        assert_eq!(likeliest(&pos, &[pawn, bishop], None), Some(bishop));
        // A queen on e4 can take a bishop on c2, defended by the king, or a loose pawn on f4:
        // the pawn is the safer win.
        let pos = position("4k3/8/8/8/4qP2/8/2B5/3K4 b - - 0 1", false);
        let bishop = capture(&pos, "e4c2");
        let pawn = capture(&pos, "e4f4");
        assert_eq!(likeliest(&pos, &[bishop, pawn], None), Some(pawn));
    }

    /// Asserts that of the captures `likelier` and `other` from `fen`, `likelier` is chosen
    /// whichever comes first.
    fn assert_likelier(fen: &str, likelier: &str, other: &str) {
        let pos = position(fen, false);
        let (likelier, other) = (capture(&pos, likelier), capture(&pos, other));
        assert_eq!(likeliest(&pos, &[other, likelier], None), Some(likelier));
        assert_eq!(likeliest(&pos, &[likelier, other], None), Some(likelier));
    }

    #[test]
    fn the_capture_that_mates_is_likelier_than_one_that_wins_more() {
        // The rook on d4 can take a loose rook on a4, or the knight on d8 with mate on the
        // back rank.
        assert_likelier("3n2k1/5ppp/8/8/r2R4/8/5PPP/6K1 w - - 0 1", "d4d8", "d4a4");
    }

    #[test]
    fn between_equal_gains_a_check_is_likelier() {
        // The queen on h5 can take a pawn on h4 or, with check, the pawn on h6.
        assert_likelier("7k/8/7p/7Q/7p/8/8/6K1 w - - 0 1", "h5h6", "h5h4");
    }

    #[test]
    fn between_equal_gains_the_recapture_is_likelier() {
        // A rook on d8 can take a knight on d4 or one on a8, both undefended: the knight that
        // just arrived on d4 is the one taken back.
        let pos = position("N2r2k1/8/8/8/3N4/8/8/6K1 b - - 0 1", false);
        let back = capture(&pos, "d8d4");
        let corner = capture(&pos, "d8a8");
        assert_eq!(
            likeliest(&pos, &[corner, back], Some(Square::D4)),
            Some(back)
        );
        assert_eq!(likeliest(&pos, &[corner, back], None), Some(corner));
    }
}
