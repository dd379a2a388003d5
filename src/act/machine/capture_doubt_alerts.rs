//! The alerts of doubts a board that senses only occupancy gives: captures whose landing it
//! could not show, exchanges it saw as one arrival, promotions it cannot name.

use shakmaty::san::San;
use shakmaty::{Chess, Move, Position};

use super::doubt::{square_names, squares_of_all};
use super::exchanges::Exchange;
use super::{Machine, color_word, ply_number};
use crate::act::search::squares_of;
use crate::act::touch;
use crate::act::{Alert, Severity};
use crate::board::Millis;

impl Machine {
    /// 8.5.3: sequences of moves from position `from` that the board, sensing only
    /// occupancy, cannot tell apart, differing in which capture one piece made: `moves`,
    /// with the likeliest capture, is recorded, and the arbiter is told the `others`.
    pub(super) fn capture_sequence_alert(
        &self,
        from: usize,
        moves: &[Move],
        others: &[Vec<Move>],
        t: Millis,
    ) -> Alert {
        let squares = squares_of_all(moves.iter().chain(others.iter().flatten()));
        self.alternatives_alert(from, moves, others, squares, t, |recorded, others| {
            format!(
                "the board senses only occupancy, and the moves {recorded} or {} leave it as it \
                 is: they differ in which capture one piece made, whose landing the board did \
                 not show; {recorded}, with the likeliest capture (a mate, then the most \
                 material at first sight, a recapture, a check), is recorded. The arbiter \
                 should check where the piece stands: the board's later reports correct the \
                 record if they show another",
                others.join(" or "),
            )
        })
    }

    /// 8.5.3: moves read together, one of them a capture the board never showed landing.
    pub(super) fn capture_not_shown_alert(
        &self,
        moves: &[Move],
        capture: Move,
        t: Millis,
    ) -> Alert {
        let squares = squares_of(capture);
        self.moves_alert("8.5.3", Severity::Warning, moves, squares, t, |sans| {
            format!(
                "the moves {sans} were read together, and the board, which senses only \
                 occupancy, never showed {} change after the capturing piece left {}: that \
                 piece may still have been in the hand, or put on a square not yet reported; \
                 the arbiter should check",
                capture.to(),
                capture.from().map_or(String::new(), |sq| sq.to_string()),
            )
        })
    }

    /// 8.5.3: a capture the board could not tell apart from others read again as another of
    /// them, with the moves since.
    pub(super) fn capture_reread_alert(
        &self,
        from: usize,
        withdrawn: &[Move],
        moves: &[Move],
        also: &[Move],
        t: Millis,
    ) -> Alert {
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.ply = ply_number(from + 1);
        a.squares = square_names(squares_of_all(withdrawn.iter().chain(moves).chain(also)));
        let before = &self.record.game().positions()[from];
        let san = |m: &Move| shakmaty::san::SanPlus::from_move(before.clone(), *m).to_string();
        let (Some(old), Some(new)) = (withdrawn.first(), moves.first()) else {
            return self.reread_alert(from, withdrawn, moves, t);
        };
        let fits = if also.is_empty() {
            format!("only {} fits what the board reported since", san(new))
        } else {
            let also: Vec<String> = also.iter().map(san).collect();
            format!(
                "{} and {} fit what the board reported since, and {}, the likeliest, is recorded",
                san(new),
                also.join(" and "),
                san(new)
            )
        };
        a.message = format!(
            "{}, recorded at ply {} as one of the captures the board could not tell apart, \
             does not fit the board's later reports: the moves {} were read again as {} ({fits}); \
             the arbiter should check where the {} stands",
            san(old),
            ply_number(from + 1),
            self.uci_line(withdrawn),
            self.uci_line(moves),
            touch::name(new.role()),
        );
        a
    }

    /// 8.5.3: a capture recorded at its press though the board never showed the capturer
    /// landing, as a board that senses only occupancy cannot when the victim's lift falls
    /// between two scans.
    pub(super) fn capture_unseen_alert(&self, capture: Move, others: &[Move], t: Millis) -> Alert {
        let side = self.record.game().position().turn();
        let mut a = self.alert("8.5.3", Some(!side), t, Severity::Warning);
        a.ply = self.ply();
        a.squares = square_names(squares_of_all(std::iter::once(&capture).chain(others)));
        let piece = touch::name(capture.role());
        let san = self
            .record
            .game()
            .moves()
            .last()
            .map_or("", |p| p.san.as_str());
        let from = capture.from().map_or(String::new(), |sq| sq.to_string());
        a.message = if others.is_empty() {
            format!(
                "{}'s {piece} left {from} and was not seen put down: the board senses only \
                 occupancy, and {san}, the one capture that leaves it as it is, is recorded; the \
                 arbiter should check that the {piece} stands on {} (a piece still in the hand \
                 looks the same)",
                color_word(!side),
                capture.to()
            )
        } else {
            let before = &self.record.game().positions()[self.record.game().plies() - 1];
            let others: Vec<String> = others
                .iter()
                .map(|&m| shakmaty::san::San::from_move(before, m).to_string())
                .collect();
            format!(
                "{}'s {piece} left {from} and was not seen put down: the board senses only \
                 occupancy, and {san} or {} leave it as it is; {san}, the likeliest (a mate, \
                 then the most material at first sight, a recapture, a check), is recorded. The \
                 arbiter should check where the {piece} stands: the board's later reports correct \
                 the record if they show the other capture",
                color_word(!side),
                others.join(" or ")
            )
        };
        a
    }

    /// 8.5.3: an exchange read where the board, sensing only occupancy, showed one arrival
    /// for two moves; the capture elsewhere and the reply that fit as well are named.
    pub(super) fn exchange_unseen_alert(&self, exchange: &Exchange, t: Millis) -> Alert {
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.ply = ply_number(exchange.ply + 1);
        let moves = [exchange.offer, exchange.retake, exchange.capture];
        a.squares = squares_of_all(&moves)
            .into_iter()
            .map(|sq| sq.to_string())
            .collect();
        let Some(start) = self.record.game().positions().get(exchange.ply) else {
            return a;
        };
        let mut pos = start.clone();
        let san = |pos: &Chess, m: Move| San::from_move(pos, m).to_string();
        let mut other = pos.clone();
        let (capture, offer) = (san(&pos, exchange.capture), san(&pos, exchange.offer));
        other.play_unchecked(exchange.capture);
        pos.play_unchecked(exchange.offer);
        let (reply, retake) = (san(&other, exchange.reply), san(&pos, exchange.retake));
        a.message = format!(
            "the board, which senses only occupancy, showed {} filled once for two moves: \
             {offer} {retake} is read, a piece offered and taken at once; {capture} {reply} \
             leaves the same board, but {capture} loses material once both sides have taken \
             on {}, and the offer is an even trade; the arbiter should check where the {} \
             from {} went",
            exchange.offer.to(),
            exchange.capture.to(),
            touch::name(exchange.offer.role()),
            exchange
                .offer
                .from()
                .map_or(String::new(), |sq| sq.to_string()),
        );
        a
    }

    /// 4.6: an occupancy-only board cannot show which piece a pawn became; a queen is
    /// recorded.
    pub(super) fn promotion_piece_alert(&self, t: Millis) -> Alert {
        let moves = self.record.game().moves();
        // The promotion may be read with moves after it, as part of a sequence.
        let promoted = moves
            .iter()
            .rposition(|p| p.mv.is_promotion())
            .or(moves.len().checked_sub(1));
        let side = promoted.map_or(!self.record.game().position().turn(), |j| {
            self.record.game().positions()[j].turn()
        });
        let mut a = self.alert("4.6", Some(side), t, Severity::Warning);
        a.ply = self.ply();
        if let Some(j) = promoted {
            a.ply = ply_number(j + 1);
            a.squares = vec![moves[j].mv.to().to_string()];
        }
        a.message = "the board cannot tell which piece the pawn became: a queen is \
                     recorded; the arbiter should check"
            .to_string();
        a
    }
}
