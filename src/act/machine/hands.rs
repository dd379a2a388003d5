//! Lifts, placements and the hands that make them: 7.5.4 (two hands), 4.8 (a claim lapsed).

use shakmaty::{Bitboard, Color, Move, Piece, Position, Square};

use super::{Machine, color_word};
use crate::act::physical::InFlight;
use crate::act::touch::Lift;
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

/// Two far-apart lifts of one move close enough to show two hands (7.5.4), the alert for them
/// kept until the board shows where a piece of theirs was put down: a piece lifted on one of
/// the two squares and put down on the other sooner than the threshold shows a hand covering
/// the two squares that fast, so the time between the lifts shows nothing of a second hand.
#[derive(Debug, Clone)]
pub(super) struct CloseLifts {
    /// The alert, as it would be told at once.
    alert: Alert,
    /// The two pieces in flight: the one lifted first and the one lifted second.
    lifts: [InFlight; 2],
}

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
        if let Some(other) = partner
            && let Some(alert) = self.two_hands(other.from, other.t_ms, sq, t, "lifted")
        {
            if alert.severity == Severity::Warning {
                let second = InFlight {
                    from: sq,
                    piece,
                    t_ms: t,
                };
                self.close_lifts = Some(CloseLifts {
                    alert,
                    lifts: [other, second],
                });
            } else {
                out.push(Event::Alert(alert));
            }
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
            && let Some(alert) = self.two_hands(other, when, sq, t, "placed")
        {
            out.push(Event::Alert(alert));
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

    /// The alert for two far-apart actions of one move at `ta` and `tb` (7.5.4), once a ply:
    /// a warning when the board's reports show them closer than one hand manages, else
    /// information.
    fn two_hands(
        &mut self,
        a: Square,
        ta: Millis,
        b: Square,
        tb: Millis,
        verb: &str,
    ) -> Option<Alert> {
        let ply = self.ply() + 1;
        // Recovered observations' times are estimates: they show nothing of the hands.
        if self.two_hands_ply == Some(ply) || self.untimed_at(ta) || self.untimed_at(tb) {
            return None;
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
        Some(alert)
    }

    /// Tells the two-hands alert kept for two close lifts ([`CloseLifts`]), at the first
    /// observation after them that is not a lift: `placed`, a piece put down (with its name,
    /// on a board that names pieces), or anything else (`None`). A piece lifted on one of the
    /// two squares put down on the other within the threshold of its lift was carried
    /// between them faster than the threshold allows one hand: the board then shows a hand
    /// covering the two squares that fast, and the lifts are no evidence of a second one.
    pub(super) fn tell_close_lifts(
        &mut self,
        placed: Option<(Square, Option<Piece>)>,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        let Some(CloseLifts { mut alert, lifts }) = self.close_lifts.take() else {
            return;
        };
        let carried = placed.and_then(|(sq, piece)| {
            let lifted = lifts.iter().find(|l| l.from != sq)?;
            let onto_other = lifts.iter().any(|l| l.from == sq);
            let same = piece.is_none_or(|p| p == lifted.piece);
            (onto_other && same).then(|| (lifted.from, sq, t.saturating_sub(lifted.t_ms)))
        });
        if let Some((from, to, ms)) = carried
            && ms < self.config.two_hands_threshold_ms
        {
            alert.severity = Severity::Info;
            alert.evidence_ms.push(t);
            alert.message = format!(
                "pieces lifted on {} and {} were reported {} ms apart, but the piece lifted on \
                 {from} was put down on {to} {ms} ms after it left: a hand covered the two \
                 squares that fast, so the time between the lifts cannot tell two hands (7.5.4) \
                 from one",
                lifts[0].from,
                lifts[1].from,
                lifts[1].t_ms.saturating_sub(lifts[0].t_ms)
            );
        }
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
