//! The alerts that tell the arbiter why moves adopted with a doubt are not certain.

use shakmaty::{Bitboard, Move, Piece, Position, Rank, Role, Square, attacks};

use super::doubt::{Doubt, square_names, squares_of_all};
use super::{Machine, color_word, ply_number};
use crate::act::search::{mover_at, squares_of};
use crate::act::touch;
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

impl Machine {
    /// Tells the arbiter why the moves just adopted are not certain, once per doubt: the
    /// same doubt read again from the next observation is not raised again.
    pub(super) fn raise_doubt(&mut self, doubt: Doubt, t: Millis, out: &mut Vec<Event>) {
        if self.doubts.doubt() == Some(&doubt) {
            return;
        }
        // How moves read across a gap overlapped in time is not known: their times are
        // estimates.
        let timed = !matches!(doubt, Doubt::Overlapping { .. } | Doubt::QuickReply { .. });
        if timed || !self.gap.untimed() {
            let mut alert = self.doubt_alert(&doubt, t);
            // What the touches of the move just recorded told (a castling made rook first,
            // 4.4.2) is not told again.
            if !self.record.move_alerts().iter().any(|r| alert.is(r)) {
                self.gap_alert_raised(&doubt, &mut alert);
                out.push(Event::Alert(alert));
            }
        }
        if let Doubt::StoodUnseen { from, .. } = doubt {
            self.withdraw_penalty_judged_at(from, t, out);
        }
        self.doubts.doubt_raised(doubt);
    }

    /// The alert for `doubt`, raised at `t`: the article it falls under and what the
    /// arbiter should check.
    fn doubt_alert(&self, doubt: &Doubt, t: Millis) -> Alert {
        match doubt {
            Doubt::Sequences { seqs, more, .. } => self.sequences_alert(seqs, *more, t),
            Doubt::CaptureSequence {
                from,
                moves,
                others,
            } => self.capture_sequence_alert(*from, moves, others, t),
            Doubt::Order {
                from,
                moves,
                others,
            } => self.order_alert(*from, moves, others, t),
            Doubt::Overlapping {
                moves,
                ms,
                rewrites,
            } => self.overlapping_alert(moves, *ms, *rewrites, t),
            Doubt::UnseenArrival {
                moves,
                squares,
                pressed,
            } => self.unseen_arrival_alert(moves, *squares, *pressed, t),
            Doubt::StoodUnseen { moves, stood, .. } => self.stood_unseen_alert(moves, *stood, t),
            Doubt::LiftedOutOfOrder { moves, ms } => self.lifted_out_of_order_alert(moves, *ms, t),
            Doubt::CaptureNotShown { moves, capture } => {
                self.capture_not_shown_alert(moves, *capture, t)
            }
            Doubt::QuickReply { reply, ms } => self.quick_reply_doubt_alert(*reply, *ms, t),
            Doubt::Unsampled {
                step,
                double,
                stood_ms,
            } => self.unsampled_alert(*step, *double, *stood_ms, t),
            Doubt::Reread {
                from,
                withdrawn,
                moves,
            } => self.reread_alert(*from, withdrawn, moves, t),
            Doubt::CaptureReread {
                from,
                withdrawn,
                moves,
                also,
            } => self.capture_reread_alert(*from, withdrawn, moves, also, t),
            Doubt::MovedOn { first, .. }
                if first.role() == Role::Rook
                    && self
                        .record
                        .game()
                        .moves()
                        .last()
                        .is_some_and(|p| p.mv.is_castle()) =>
            {
                self.rook_first_alert(*first, t)
            }
            Doubt::MovedOn { first, stood_ms } => self.moved_on_alert(*first, *stood_ms, t),
            Doubt::GoneOnAtOnce { first, next, ms } => {
                self.gone_on_at_once_alert(*first, *next, *ms, t)
            }
            Doubt::PromotionPiece => self.promotion_piece_alert(t),
            Doubt::CaptureUnseen { capture, others } => {
                self.capture_unseen_alert(*capture, others, t)
            }
            Doubt::PromotionShown { from, shown } => self.promotion_shown_alert(*from, *shown, t),
            Doubt::ExchangeUnseen(exchange) => self.exchange_unseen_alert(exchange, t),
        }
    }

    /// 8.5.3: missed updates that several move orders explain; nothing past their common
    /// part is recorded until the board tells them apart.
    fn sequences_alert(&self, seqs: &[Vec<Move>], more: bool, t: Millis) -> Alert {
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        let lines: Vec<String> = seqs.iter().map(|seq| self.uci_line(seq)).collect();
        let count = if more {
            format!("more than {}", seqs.len())
        } else {
            seqs.len().to_string()
        };
        let among = if more { "among them " } else { "" };
        a.message = format!(
            "board updates were missed and {count} move sequences explain the board \
             ({among}{}); nothing is recorded past ply {} until the board tells them apart",
            lines.join(" | "),
            self.record.game().plies()
        );
        a.squares = square_names(squares_of_all(seqs.iter().flatten()));
        a
    }

    /// 7.4: reconstructed moves whose actions overlapped in time (a move begun before the
    /// one before it was over): one of them may be a knocked or displaced piece. Only added
    /// moves that overlap less than a hand answers in are for the log: a reply begun as the
    /// move ended, its reports in one scan's order. Moves that replace recorded ones are not,
    /// nor any on a board that senses only occupancy: a knocked piece there leaves the same
    /// squares as a reply.
    fn overlapping_alert(&self, moves: &[Move], ms: Millis, rewrites: bool, t: Millis) -> Alert {
        let severity =
            if ms < self.config.two_hands_threshold_ms && !rewrites && self.names_pieces() {
                Severity::Info
            } else {
                Severity::Warning
            };
        // A report that shows one move's piece arriving and the next one's leaving cannot
        // order them: they overlapped as far as the board can tell.
        let how = if ms == 0 {
            "that the board reported at once (a move began before the one before it was \
             over, or with it)"
                .to_string()
        } else {
            format!("that overlapped by {ms} ms (a move began before the one before it was over)")
        };
        self.moves_alert("7.4", severity, moves, squares_of_all(moves), t, |sans| {
            format!(
                "the moves {sans} were read from actions {how}: one of them may be a knocked \
                 or displaced piece; the arbiter should check"
            )
        })
    }

    /// The squares moves of `seq` (read from position `k`) put a piece on whose player then
    /// pressed the clock, after lifting it and before the piece taking it there was seen
    /// arriving: the press says the move was made (6.2.1), and no other square explains it,
    /// so the board only missed the piece standing there a moment, unless it named the piece
    /// put down on another square meanwhile. Nobody presses for a piece knocked over. Not a
    /// pawn's single step from its first rank: it may have been a double step taken en
    /// passant (3.7.3.1), the other square never seen either.
    pub(super) fn arrivals_pressed_for(&self, k: usize, seq: &[Move]) -> Bitboard {
        let mut pressed = Bitboard::EMPTY;
        let Some(start) = self.record.game().positions().get(k) else {
            return pressed;
        };
        let last_reached = self.record.reached_at().last().copied().unwrap_or(0);
        for (i, m) in seq.iter().enumerate() {
            // Only a piece taken or moved on by a later move of `seq` needed an arrival the
            // board may have missed; the last move to a square was seen arriving there.
            let changed_again = seq[i + 1..]
                .iter()
                .any(|later| later.from() == Some(m.to()) || later.to() == m.to());
            if !changed_again {
                continue;
            }
            let mover = mover_at(start, i);
            let since = self
                .record
                .reached_at()
                .get(k + i)
                .copied()
                .unwrap_or(last_reached);
            let (Some(from), Some(press), Some(taken)) = (
                m.from(),
                self.clock.pressed_at(mover),
                self.square_reports.last(m.to()),
            ) else {
                continue;
            };
            let first_step = m.role() == Role::Pawn
                && from.rank() == mover.fold_wb(Rank::Second, Rank::Seventh)
                && m.to().rank() == mover.fold_wb(Rank::Third, Rank::Sixth);
            if first_step {
                continue;
            }
            let Some(lifted) = self.first_lift(from, mover, since) else {
                continue;
            };
            // The board named the piece put down elsewhere, off its way there, after the lift:
            // the press was for that move, not for one to a square never shown.
            let piece = Piece {
                color: mover,
                role: m.role(),
            };
            let put_elsewhere = self.touches.placements().iter().any(|&(sq, p, t)| {
                p == piece
                    && sq != m.to()
                    && !attacks::between(from, m.to()).contains(sq)
                    && (lifted..taken).contains(&t)
            });
            if lifted < press
                && press.saturating_add(self.config.report_lag_ms) < taken
                && !put_elsewhere
            {
                pressed.add(m.to());
            }
        }
        pressed
    }

    /// 7.4: reconstructed moves that need a piece on squares the board never showed it on.
    /// For the log only when each of those moves' players pressed the clock between lifting
    /// the piece and its capture, on a board that names pieces: the press says a move was
    /// made. A board that senses only occupancy cannot say which: other moves may leave the
    /// same squares filled (14.Nxc7+ Bxc7 15.fxe5 and 14.fxe5 Bxe5 15.Nxb6 do), so the
    /// arbiter is warned.
    fn unseen_arrival_alert(
        &self,
        moves: &[Move],
        squares: Bitboard,
        pressed: Bitboard,
        t: Millis,
    ) -> Alert {
        let severity = if squares.is_subset(pressed) && self.names_pieces() {
            Severity::Info
        } else {
            Severity::Warning
        };
        self.moves_alert("7.4", severity, moves, squares, t, |sans| {
            format!(
                "the moves {sans} need a piece to arrive on {} and be taken or moved on, \
                 but the board never showed it there: a knocked or displaced piece may \
                 have been read as moves; the arbiter should check",
                square_names(squares).join(" ")
            )
        })
    }

    /// 7.4: moves read on from a held game with a piece that stood on a square the board
    /// never reported: a displaced piece may have been read as moves.
    fn stood_unseen_alert(&self, moves: &[Move], stood: Square, t: Millis) -> Alert {
        let squares = squares_of_all(moves);
        self.moves_alert("7.4", Severity::Warning, moves, squares, t, |sans| {
            format!(
                "the moves {sans} explain the board only with the first piece moved standing \
                 on {stood} for less than a scan, where the board never showed it, before its \
                 player moved it on: a knocked or displaced piece may have been read as \
                 moves; the arbiter should check"
            )
        })
    }

    /// 8.5.3: moves read in an order their lifts contradict: a lift was not reported, and
    /// the moves may have been made in another order.
    fn lifted_out_of_order_alert(&self, moves: &[Move], ms: Millis, t: Millis) -> Alert {
        let squares = squares_of_all(moves);
        self.moves_alert("8.5.3", Severity::Warning, moves, squares, t, |sans| {
            format!(
                "the moves {sans} explain the board, but a later one's piece was lifted {ms} \
                 ms before an earlier one's: a board update was lost, and the moves may have \
                 been made in another order; the arbiter should check"
            )
        })
    }

    /// 7.4: a reply complete sooner than a hand answers, while the piece it answered went
    /// on moving: the moving hand may have knocked a piece over.
    fn quick_reply_doubt_alert(&self, reply: Move, ms: Millis, t: Millis) -> Alert {
        let side = self.record.game().position().turn();
        let mut a = self.alert("7.4", Some(!side), t, Severity::Warning);
        a.ply = self.ply();
        a.squares = square_names(squares_of(reply));
        a.message = format!(
            "{} {} was complete {ms} ms after the piece it answered was first seen on \
             its way, and that piece went on moving: it may be a piece knocked over by \
             the moving hand; the arbiter should check",
            color_word(!side),
            self.record
                .game()
                .moves()
                .last()
                .map_or("", |p| p.san.as_str()),
        );
        a
    }

    /// 3.7.3.1: a pawn's single step taken on its square may have been a double step taken
    /// en passant before the board sampled its landing square.
    fn unsampled_alert(&self, step: Move, double: Move, stood_ms: Millis, t: Millis) -> Alert {
        // The step may be followed by the capture alone or by more moves read with it.
        let moves = self.record.game().moves();
        let stepped = moves
            .iter()
            .rposition(|p| p.mv == step)
            .unwrap_or(moves.len().saturating_sub(2));
        let capturer = self
            .record
            .game()
            .positions()
            .get(stepped + 1)
            .map_or(!self.record.game().position().turn(), |p| p.turn());
        let mut a = self.alert("3.7.3.1", Some(capturer), t, Severity::Warning);
        a.ply = ply_number(stepped + 1);
        let uci = |m: Move| shakmaty::uci::UciMove::from_standard(m).to_string();
        a.squares = [step.from(), Some(step.to()), Some(double.to())]
            .into_iter()
            .flatten()
            .map(|s| s.to_string())
            .collect();
        a.message = format!(
            "the pawn was seen on {} for {stood_ms} ms before it was taken there; the \
             board never showed it on {}. Recorded: {} and a capture on {}; if the pawn \
             went on, the moves were {} and an en passant capture. The arbiter should \
             check",
            step.to(),
            double.to(),
            uci(step),
            step.to(),
            uci(double),
        );
        a
    }

    /// 8.5.3: moves already made were read again as other moves, the only reading
    /// that explains what the board reported since (a late or lost update).
    pub(super) fn reread_alert(
        &self,
        from: usize,
        withdrawn: &[Move],
        moves: &[Move],
        t: Millis,
    ) -> Alert {
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.ply = ply_number(from + 1);
        a.squares = square_names(squares_of_all(withdrawn.iter().chain(moves)));
        a.message = format!(
            "the moves {} from ply {}, already made, were read again as {}: only that \
             explains what the board reported since (a late or lost update, or a piece \
             touched meanwhile); the arbiter should check",
            self.uci_line(withdrawn),
            ply_number(from + 1),
            self.uci_line(moves),
        );
        a
    }

    /// 4.4.2: the rook of a castling moved first, the king after it; recorded as castling.
    fn rook_first_alert(&self, first: Move, t: Millis) -> Alert {
        let side = self.record.game().position().turn();
        let mut a = self.alert("4.4.2", Some(!side), t, Severity::Warning);
        a.ply = self.ply();
        a.squares = first
            .from()
            .into_iter()
            .chain([first.to()])
            .map(|s| s.to_string())
            .collect();
        a.message = format!(
            "the rook was moved first ({}) and the king followed: recorded as \
             castling; castling with the rook touched first is not allowed \
             (4.4.2): the rook move stands if the arbiter so decides",
            shakmaty::uci::UciMove::from_move(first, self.record.game().castling_mode()),
        );
        a
    }

    /// 4.7: a piece seen arriving went on `stood_ms` later; recorded as the one longer move,
    /// though if it was released on the first square, that was the move.
    fn moved_on_alert(&self, first: Move, stood_ms: Millis, t: Millis) -> Alert {
        let ply = self
            .record
            .game()
            .moves()
            .iter()
            .rposition(|p| p.mv.from() == first.from())
            .unwrap_or(0);
        let slide = self.record.game().moves().get(ply).map(|p| p.mv);
        let mover = self.record.game().positions()[ply].turn();
        let mut a = self.alert("4.7", Some(mover), t, Severity::Warning);
        a.ply = ply_number(ply + 1);
        let to = slide.map(|m| m.to());
        a.squares = [first.from(), Some(first.to()), to]
            .into_iter()
            .flatten()
            .map(|s| s.to_string())
            .collect();
        let to = to.map_or(String::new(), |s| s.to_string());
        a.message = format!(
            "the piece seen arriving on {} went on to {to} {stood_ms} ms later: it is \
             recorded as one move to {to}; if it had been released on {} (4.7), that \
             was the move. The arbiter should check",
            first.to(),
            first.to()
        );
        a
    }

    /// 4.7: the piece of a pressed move moved on along its line sooner after the reply
    /// than a hand answers; both moves stay recorded.
    fn gone_on_at_once_alert(&self, first: Move, next: Move, ms: Millis, t: Millis) -> Alert {
        let side = self.record.game().position().turn();
        let mover = !side;
        let mut a = self.alert("4.7", Some(mover), t, Severity::Warning);
        a.ply = self.ply();
        a.squares = [first.from(), Some(first.to()), Some(next.to())]
            .into_iter()
            .flatten()
            .map(|s| s.to_string())
            .collect();
        let from = first.from().map_or(String::new(), |s| s.to_string());
        a.message = format!(
            "{} moved the {} on {} again, to {}, {ms} ms after {}'s reply was made, \
             sooner than a hand answers: it may have gone from {from} to {} in one \
             move, the board reporting it leaving {} only after the reply. Both \
             moves are recorded; the arbiter should check",
            color_word(mover),
            touch::name(first.role()),
            first.to(),
            next.to(),
            color_word(side),
            next.to(),
            first.to()
        );
        a
    }

    /// 4.6: the promoted piece, recorded as a queen, made a knight's move: the promotion
    /// is recorded as a knight's from its ply on.
    fn promotion_shown_alert(&self, from: usize, shown: Move, t: Millis) -> Alert {
        let promoter = self.record.game().positions()[from].turn();
        let mut a = self.alert("4.6", Some(promoter), t, Severity::Warning);
        a.ply = ply_number(from + 1);
        a.squares = [shown.from(), Some(shown.to())]
            .into_iter()
            .flatten()
            .map(|s| s.to_string())
            .collect();
        a.message = format!(
            "the piece the pawn became on {} went on like a knight, to {}: the promotion is \
             recorded as a knight's, and the moves since read again; the arbiter should check",
            shown.from().map_or(String::new(), |s| s.to_string()),
            shown.to()
        );
        a
    }

    /// `moves` in UCI, separated by spaces.
    pub(super) fn uci_line(&self, moves: &[Move]) -> String {
        moves
            .iter()
            .map(|m| {
                shakmaty::uci::UciMove::from_move(*m, self.record.game().castling_mode())
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// An alert about `moves`, the last recorded, on `squares`: its ply is the first of
    /// them, and `message` is given their SAN.
    pub(super) fn moves_alert(
        &self,
        article: &str,
        severity: Severity,
        moves: &[Move],
        squares: Bitboard,
        t: Millis,
        message: impl FnOnce(&str) -> String,
    ) -> Alert {
        let mut a = self.alert(article, None, t, severity);
        let sans;
        (a.ply, sans) = self.last_moves(moves.len());
        a.squares = square_names(squares);
        a.message = message(&sans);
        a
    }

    /// The ply number of the first of the last `count` recorded moves, and their SAN.
    fn last_moves(&self, count: usize) -> (u32, String) {
        let first = self.record.game().plies().saturating_sub(count);
        let sans: Vec<&str> = self.record.game().moves()[first..]
            .iter()
            .map(|p| p.san.as_str())
            .collect();
        (ply_number(first + 1), sans.join(" "))
    }
}

#[cfg(test)]
mod tests;
