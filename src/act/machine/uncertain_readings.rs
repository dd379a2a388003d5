//! Readings that another legal move fits as well (mostly on boards that sense only
//! occupancy, and at the end of a game): the recorder cannot be sure, so it tells the
//! arbiter (8.5.3) where the doubt begins, naming the ply and the squares, rather than guess
//! better.

use shakmaty::san::San;
use shakmaty::{Bitboard, Move, Position, Role};

use super::Machine;
use super::color_word;
use super::doubt::{square_names, squares_of_all};
use super::start_and_end::SIGNAL_GAP_MS;
use crate::act::ending::CENTRE;
use crate::act::touch;
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

impl Machine {
    /// The result signal standing at `t` ended the game, its events `out[before..]`: unless
    /// one of them already warned the arbiter, a move the signal may hide is told, before
    /// the result as the signal's other alerts are.
    pub(super) fn tell_signal_doubts(&self, before: usize, t: Millis, out: &mut Vec<Event>) {
        let told = out[before..]
            .iter()
            .any(|e| matches!(e, Event::Alert(a) if a.severity != Severity::Info));
        let Some(a) = self
            .king_move_taken_back_for_signal(t)
            .or_else(|| self.centre_capture_unseen(t))
            .filter(|_| !told)
        else {
            return;
        };
        let result = out[before..]
            .iter()
            .position(|e| matches!(e, Event::Result { .. }))
            .map_or(out.len(), |i| before + i);
        out.insert(result, Event::Alert(a));
    }

    /// 8.5.3 at the end of a game on a board that senses only occupancy: a piece of the side
    /// to move stood on a centre square, where the result signal puts the kings, and was
    /// lifted after the last move. Set aside to make room for the kings, or gone to make a
    /// capture whose victim was taken off and capturer put down between two scans (which no
    /// report shows): the board cannot tell, and the last move would be missing from the
    /// record. `None` when no such piece has a legal capture.
    pub(super) fn centre_capture_unseen(&self, t: Millis) -> Option<Alert> {
        if self.config.identifies_pieces {
            return None;
        }
        let plies = self.record.game().plies();
        let reached = self.record.reached_at().get(plies).copied().unwrap_or(0);
        let position = self.record.game().position();
        let mover = position.turn();
        let board = position.board();
        let left: Bitboard = (CENTRE & board.by_color(mover) & !board.kings())
            .into_iter()
            .filter(|&sq| self.square_reports.last(sq).is_some_and(|r| r > reached))
            .collect();
        let captures: Vec<Move> = position
            .legal_moves()
            .into_iter()
            .filter(|m| m.is_capture() && m.from().is_some_and(|from| left.contains(from)))
            .collect();
        let first = captures.first()?;
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.squares = square_names(squares_of_all(captures.iter()));
        let sans: Vec<String> = captures
            .iter()
            .map(|&m| San::from_move(position, m).to_string())
            .collect();
        a.message = format!(
            "the game ended with {}'s {} lifted from {} since the last move, a square of the \
             result signal's kings: set aside to make room for them, or gone to make a capture \
             whose victim was taken off and capturer put down unseen ({}), which a board that \
             senses only occupancy does not show; if so, that move is missing after ply \
             {plies}, and the arbiter should check the scoresheets",
            color_word(mover),
            touch::name(first.role()),
            first.from().map_or(String::new(), |sq| sq.to_string()),
            sans.join(" or "),
        );
        Some(a)
    }

    /// 8.5.3 at a result signal standing at `t`: the last move, a king's from a centre
    /// square, was withdrawn just before it (within the signal's own time), the board showing
    /// the king back where it came from, one of the signal's kings now.
    /// A move taken back and a king moved back to make the signal look the same: the move
    /// may be missing from the record.
    pub(super) fn king_move_taken_back_for_signal(&self, t: Millis) -> Option<Alert> {
        let (at, mv) = self.record.last_taken_back()?;
        let from = mv.from()?;
        let plies = self.record.game().plies();
        let position = self.record.game().position();
        let king_back = self
            .physical
            .board()
            .piece_at(from)
            .is_some_and(|p| p.role == Role::King || !self.config.identifies_pieces);
        if mv.role() != Role::King
            || !CENTRE.contains(from)
            || !king_back
            || t.saturating_sub(at) > SIGNAL_GAP_MS
        {
            return None;
        }
        let san = San::from_move(position, mv).to_string();
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.ply = super::ply_number(plies + 1);
        a.squares = square_names(squares_of_all([mv].iter()));
        a.message = format!(
            "{san}, read at ply {}, was withdrawn when the king went back to {from} just before \
             the result signal, where it stands as one of the signal's kings: a move taken back \
             and a king moved back to make the signal look the same, so {san} may be missing \
             from the record; the arbiter should check the scoresheets",
            plies + 1,
        );
        Some(a)
    }

    /// 8.5.3 on a board that senses only occupancy: a revision reads the moves after the
    /// first `keep` plies again as `replacing`, and the first of them, a castling, becomes a
    /// move of its king or rook alone. The board's reports fitted both readings, one after
    /// the other: the one kept may be wrong. (Read before the moves are withdrawn.) Other
    /// moves read again as another move of the same piece (an unseen landing, a capture
    /// choice corrected) are the readers' own corrections, told where they make them.
    pub(super) fn tell_reading_replaced(
        &self,
        keep: usize,
        replacing: &[Move],
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        if self.config.identifies_pieces {
            return;
        }
        let (Some(was), Some(&now)) = (self.record.game().moves().get(keep), replacing.first())
        else {
            return;
        };
        if !was.mv.is_castle() || now.is_castle() {
            return;
        }
        let position = &self.record.game().positions()[keep];
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.ply = super::ply_number(keep + 1);
        a.squares = square_names(squares_of_all([was.mv, now].iter()));
        let now_san = San::from_move(position, now).to_string();
        a.message = format!(
            "ply {} was read as {}, and then, as the board went on reporting, as {now_san}: the \
             board senses only occupancy, and its reports fitted both; {now_san} is recorded, \
             and the arbiter should check the move against the scoresheets",
            keep + 1,
            was.san,
        );
        out.push(Event::Alert(a));
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Board, Move, Role, Square};

    use super::Machine;
    use crate::act::{Event, MachineConfig, Severity};
    use crate::board::{Observation, ObservationKind, Snapshot};

    /// A machine on a board that names its pieces or not, after the kings' knights and
    /// bishops came out and White castled, each move a lift and a placement 1 s apart.
    fn castled(identifies_pieces: bool) -> (Machine, Vec<Event>) {
        let (mut machine, mut events) = super::super::at_start(identifies_pieces);
        let mut t = 0;
        let mut board = Board::new();
        let steps = [
            "e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1", "h1f1",
        ];
        for uci in steps {
            let from: Square = uci[..2].parse().unwrap();
            let to: Square = uci[2..].parse().unwrap();
            let piece = board.remove_piece_at(from).unwrap();
            board.set_piece_at(to, piece);
            t += 1_000;
            let lift = ObservationKind::Emptied(from);
            machine.observe(
                &Observation {
                    t_ms: t,
                    kind: lift,
                },
                &mut events,
            );
            let named = Some(piece).filter(|_| identifies_pieces);
            let place = ObservationKind::Placed(to, named);
            machine.observe(
                &Observation {
                    t_ms: t + 300,
                    kind: place,
                },
                &mut events,
            );
        }
        machine.advance(t + 5_000, &mut events);
        (machine, events)
    }

    fn warnings_at(events: &[Event], ply: u32) -> usize {
        events
            .iter()
            .filter(|e| {
                matches!(e, Event::Alert(a) if a.article == "8.5.3"
                    && a.severity == Severity::Warning && a.ply == ply)
            })
            .count()
    }

    /// Seeds 10037, 10381 and 10780 of `touchmove simulate`: on a Pegasus a castling was
    /// recorded, and read again, as the board went on reporting, as a move of its rook or
    /// king, the record then wrong without a word. The board fitted both readings: the
    /// revision is an 8.5.3 warning at the castling's ply. A castling read again as itself,
    /// or any revision on a board that names its pieces, is none.
    #[test]
    fn a_castling_read_again_as_another_move_on_an_occupancy_board_is_told() {
        let rook_move = Move::Normal {
            role: Role::Rook,
            from: Square::H1,
            capture: None,
            to: Square::G1,
            promotion: None,
        };
        for (identifies_pieces, replacing, told) in [
            (false, Some(rook_move), 1),
            (false, None, 0),
            (true, Some(rook_move), 0),
        ] {
            let (mut machine, events) = castled(identifies_pieces);
            let recorded: Vec<Move> = machine.game().moves().iter().map(|p| p.mv).collect();
            assert_eq!(recorded.len(), 7, "{events:?}");
            assert!(recorded[6].is_castle(), "{recorded:?}");
            let again = replacing.unwrap_or(recorded[6]);
            let mut out = Vec::new();
            machine.adopt(6, &[again], 20_000, &mut out);
            assert_eq!(
                warnings_at(&out, 7),
                told,
                "identifies pieces {identifies_pieces}, replacing {again:?}: {out:?}"
            );
        }
    }

    /// Seed 11584 of `touchmove simulate`: on a Certabo White played Kd4 from d5; nine
    /// seconds later the king was put back on d5 and Black's on e5, the result signal, and
    /// Kd4, withdrawn when the king went back, was missing without a word. A king move
    /// withdrawn, its king back on a centre square, just before the signal is an 8.5.3
    /// warning; a signal with no move taken back is none.
    #[test]
    fn a_king_move_taken_back_just_before_the_result_signal_is_told() {
        for play_kd4 in [true, false] {
            let fen = "r5k1/8/8/3K4/8/8/8/7R w - - 0 1";
            let mut machine = Machine::new(MachineConfig {
                identifies_pieces: true,
                start_fen: Some(fen.to_string()),
                ..MachineConfig::default()
            });
            let setup: shakmaty::fen::Fen = fen.parse().unwrap();
            let mut events = Vec::new();
            let observe = |machine: &mut Machine, t_ms, kind, events: &mut Vec<Event>| {
                machine.observe(&Observation { t_ms, kind }, events);
            };
            let snapshot = Snapshot {
                board: setup.as_setup().board.clone(),
                identifies_pieces: true,
            };
            observe(
                &mut machine,
                0,
                ObservationKind::Snapshot(snapshot),
                &mut events,
            );
            let white_king = Some(shakmaty::Color::White.king());
            if play_kd4 {
                observe(
                    &mut machine,
                    1_000,
                    ObservationKind::Emptied(Square::D5),
                    &mut events,
                );
                let place = ObservationKind::Placed(Square::D4, white_king);
                observe(&mut machine, 1_300, place, &mut events);
                machine.advance(9_000, &mut events);
                assert_eq!(machine.game().plies(), 1, "Kd4 is read: {events:?}");
                observe(
                    &mut machine,
                    10_000,
                    ObservationKind::Emptied(Square::D4),
                    &mut events,
                );
                let back = ObservationKind::Placed(Square::D5, white_king);
                observe(&mut machine, 10_300, back, &mut events);
            }
            observe(
                &mut machine,
                10_600,
                ObservationKind::Emptied(Square::G8),
                &mut events,
            );
            let black_king = Some(shakmaty::Color::Black.king());
            observe(
                &mut machine,
                10_900,
                ObservationKind::Placed(Square::E5, black_king),
                &mut events,
            );
            machine.advance(30_000, &mut events);
            assert!(
                events.iter().any(|e| matches!(e, Event::Result { .. })),
                "the signal ends the game: {events:?}"
            );
            assert_eq!(
                warnings_at(&events, 1),
                usize::from(play_kd4),
                "Kd4 played: {play_kd4}: {events:?}"
            );
        }
    }
}
