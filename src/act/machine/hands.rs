//! Lifts, placements and the hands that make them: 7.5.4 (two hands), 4.8 (a claim lapsed).

use shakmaty::{Bitboard, Color, Move, Piece, Position, Square};

use super::{Machine, color_word};
use crate::act::physical::InFlight;
use crate::act::touch::Lift;
use crate::act::{Event, Severity};
use crate::board::Millis;

/// Two squares two or more files or ranks apart (one hand cannot serve both at once).
pub(super) fn far(a: Square, b: Square) -> bool {
    a.file().distance(b.file()) >= 2 || a.rank().distance(b.rank()) >= 2
}

impl Machine {
    pub(super) fn on_lift(
        &mut self,
        sq: Square,
        piece: shakmaty::Piece,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        let lifter = piece.color;
        let lapsed = self.record.claims_lapsed(lifter);
        for (ply, mover) in lapsed {
            let mut a = self.alert("4.8", Some(!mover), t, Severity::Info);
            a.ply = ply;
            a.evidence_ms = vec![t];
            a.squares = vec![sq.to_string()];
            a.message = format!(
                "{} touched a piece on {sq}; the right to claim about ply {ply} lapsed",
                color_word(!mover)
            );
            out.push(Event::Alert(a));
        }
        let in_flight = self.physical.in_flight();
        let partner = in_flight[..in_flight.len().saturating_sub(1)]
            .iter()
            .rev()
            .find(|f| {
                t.saturating_sub(f.t_ms) <= self.config.two_hands_threshold_ms
                    && far(f.from, sq)
                    && !self.carried_on(f)
                    && self.one_move_could_involve(f.from, sq)
            })
            .copied();
        if let Some(other) = partner {
            self.two_hands(other.from, other.t_ms, sq, t, "lifted", out);
        }
        self.touches.lifted(Lift { sq, piece, t_ms: t });
    }

    pub(super) fn on_place(
        &mut self,
        sq: Square,
        piece: Option<Piece>,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        if let Some(piece) = piece {
            self.note_placement(sq, piece, t);
        }
        if let Some((other, when)) = self.touches.last_place()
            && t.saturating_sub(when) <= self.config.two_hands_threshold_ms
            && far(other, sq)
            && self.one_move_could_involve(other, sq)
        {
            self.two_hands(other, when, sq, t, "placed", out);
        }
        self.touches.placed(sq, t);
    }

    /// True when the piece lifted at `flight` had been lifted from another square a moment
    /// before, since the clock was last pressed, and put there on its way (a slide's
    /// trail): the hand carrying it was moving on, and where it was when it left that
    /// square tells nothing of where it went next.
    fn carried_on(&self, flight: &InFlight) -> bool {
        let pressed = self.clock.presses().into_iter().flatten().max();
        self.touches.lifts().iter().any(|l| {
            l.piece == flight.piece
                && l.sq != flight.from
                && pressed.is_none_or(|p| l.t_ms > p)
                && l.t_ms < flight.t_ms
                && flight.t_ms - l.t_ms <= self.config.moved_on_ms
        })
    }

    /// True when one legal move (of the side to move, or a move that may still be revised)
    /// involves both squares: only then can two far-apart actions be one move made with two
    /// hands rather than two players' moves or a knocked piece.
    pub(super) fn one_move_could_involve(&self, a: Square, b: Square) -> bool {
        let both = Bitboard::from(a) | Bitboard::from(b);
        let positions = self.record.game().positions();
        positions[self.record.settled()..].iter().any(|pos| {
            pos.legal_moves().into_iter().any(|m| {
                let mut squares = crate::act::search::squares_of(m);
                if let Move::Castle { king, rook } = m
                    && let Some(side) = m.castling_side()
                {
                    let color = pos.turn();
                    squares |= Bitboard::from(king)
                        | Bitboard::from(rook)
                        | Bitboard::from(side.king_to(color))
                        | Bitboard::from(side.rook_to(color));
                }
                both.is_subset(squares)
            })
        })
    }

    pub(super) fn two_hands(
        &mut self,
        a: Square,
        ta: Millis,
        b: Square,
        tb: Millis,
        verb: &str,
        out: &mut Vec<Event>,
    ) {
        let ply = self.ply() + 1;
        // Recovered observations' times are estimates: they show nothing of the hands.
        if self.two_hands_ply == Some(ply) || self.untimed_at(ta) || self.untimed_at(tb) {
            return;
        }
        self.two_hands_ply = Some(ply);
        let side = self.record.game().position().turn();
        let gap = tb.saturating_sub(ta);
        // A board samples its squares one by one over a scan: two reports of one scan may be
        // nearly a scan apart in fact. One that sends whole frames sends a sweep's findings
        // at its end, a scan after the first of them was sampled: its reports may be two
        // scans apart in fact. Only a board that samples faster than that can show two hands.
        let scans = if self.config.whole_frames { 2 } else { 1 };
        let uncertain = scans * self.config.scan_period_ms;
        let shown = gap.saturating_add(uncertain) <= self.config.two_hands_threshold_ms;
        let severity = if shown {
            Severity::Warning
        } else {
            Severity::Info
        };
        let mut alert = self.alert("7.5.4", Some(side), tb, severity);
        alert.evidence_ms = vec![ta, tb];
        alert.squares = vec![a.to_string(), b.to_string()];
        alert.message = if shown {
            format!(
                "Suspected two hands: pieces {verb} on {a} and {b} within {gap} ms (threshold {} \
                 ms); one hand can hardly do that. The arbiter decides.",
                self.config.two_hands_threshold_ms
            )
        } else {
            format!(
                "pieces {verb} on {a} and {b} were reported {gap} ms apart, but the board's \
                 reports may come up to {uncertain} ms after the hands (its squares are scanned \
                 in {} ms): that cannot tell two hands (7.5.4) from one",
                self.config.scan_period_ms
            )
        };
        out.push(Event::Alert(alert));
    }

    /// True when the board named `piece` put down on `sq` at or after `since` (boards that
    /// name pieces only).
    pub(super) fn named_on(&self, sq: Square, piece: Piece, since: Millis) -> bool {
        self.touches.named_on(sq, piece, since)
    }

    /// When `color` first lifted a piece from `sq` at or after `since`, if seen.
    pub(super) fn first_lift(&self, sq: Square, color: Color, since: Millis) -> Option<Millis> {
        self.touches.first_lift(sq, color, since)
    }
}
