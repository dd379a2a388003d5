//! A piece that went on along its line after it was read as a move.

use shakmaty::san::San;
use shakmaty::{Bitboard, Move, Position, attacks};

use super::doubt::{Doubt, square_names};
use super::reading::Reading;
use super::{Machine, color_word};
use crate::act::search::squares_of;
use crate::act::{Event, Severity};
use crate::board::Millis;

impl Machine {
    /// A revision of the recorded move at position `k` by `m`, the same piece from the same square
    /// going further, after it stood on the recorded square longer than
    /// [`MachineConfig::moved_on_ms`](super::MachineConfig::moved_on_ms): no slide pauses that
    /// long, so it was released there and moved again (4.7), or knocked on. Recorded as the longer
    /// move with a warning.
    pub(super) fn carried_on_after_standing(&self, k: usize, m: Move) -> Option<Doubt> {
        let recorded = self.record.game().moves().get(k)?.mv;
        let carried_on = recorded.from() == m.from()
            && recorded.role() == m.role()
            && recorded.to() != m.to()
            && !recorded.is_castle()
            // A king waiting on its way for the rook is castling king first (4.4.1).
            && !m.is_castle();
        let arrived = self.record.reached_at().get(k + 1).copied()?;
        let stood = self.now.saturating_sub(arrived);
        (carried_on && stood > self.config.moved_on_ms).then_some(Doubt::MovedOn {
            first: recorded,
            stood_ms: stood,
        })
    }

    /// A move `next` that carries on, along the same line, the piece the same player moved two
    /// plies ago, within one scan of its arrival there: no hand moves twice around an opponent's
    /// move that fast. The board sampled the slide's end late (a scan reports each square in turn)
    /// and the opponent's reply in between. Returns the slide to its end and the reply, when both
    /// are legal and leave the same board. Later than a scan, up to
    /// [`MachineConfig::moved_on_ms`](super::MachineConfig::moved_on_ms), the same reading is taken
    /// with a 4.7 warning: a quick second move looks the same.
    pub(super) fn slide_seen_late(
        &self,
        k: usize,
        next: Move,
    ) -> Option<(Vec<Move>, Option<Doubt>)> {
        // Once the opponent pressed for the reply, the clock says it is the player's turn:
        // a move now is a move. A move no press confirmed stays open to this reading even
        // when later moves settled it.
        if k < 2 || (k - 2 < self.record.settled() && self.record.completed() > k - 2) {
            return None;
        }
        // Moves read across a gap in the link have no times of their own: how long a piece
        // stood, or how soon the reply came, is not known.
        if self.gap_start().is_some_and(|g| k > g) {
            return None;
        }
        let (first, slide) = self.carried_on_line(k, next)?;
        let arrived = self.record.reached_at().get(k - 1).copied().unwrap_or(0);
        let stood = self.now.saturating_sub(arrived);
        // A press for the reply, even one still waiting for the board, makes it the player's
        // turn: a move now is a move.
        let mover = self.record.game().positions()[k - 2].turn();
        let replied = self.record.reached_at().get(k).copied().unwrap_or(0);
        // The piece went on when the board first showed it leaving or arriving; a press
        // reported after that came too late to make it a new move.
        let went_on = [next.from(), Some(next.to())]
            .into_iter()
            .flatten()
            .filter_map(|sq| self.square_reports.last(sq))
            .min()
            .unwrap_or(self.now);
        // Times are when the bytes arrived: a board sending what it queued (behind its move
        // log) delivers a move and its press in one chunk, at the same millisecond, so a press
        // at the instant of an arrival counts as after it.
        let reply_pressed = self
            .clock
            .pressed_at(!mover)
            .is_some_and(|p| p >= replied && p <= went_on);
        // The player pressed after his piece arrived, then the opponent: the turn came round
        // before the piece went on, whenever the scan reported the reply's arrival.
        let turn_came_round = self
            .clock
            .pressed_at(mover)
            .zip(self.clock.pressed_at(!mover))
            .is_some_and(|(own, reply)| arrived <= own && own <= reply && reply <= went_on);
        if reply_pressed || turn_came_round || stood > self.config.moved_on_ms {
            return None;
        }
        let mut pos = self.record.game().positions()[k - 2].clone();
        pos.play_unchecked(slide);
        let reply = self.record.game().moves()[k - 1].mv;
        pos.play_unchecked(reply);
        let mut expected = self.record.game().positions()[k].clone();
        expected.play_unchecked(next);
        if pos.board() != expected.board() {
            return None;
        }
        let quick = replied.saturating_sub(arrived);
        let doubt = if quick < self.config.two_hands_threshold_ms {
            Some(Doubt::QuickReply { reply, ms: quick })
        } else {
            // A press by the player for this move before the piece went on says he had let
            // go of it, even when the board reported the piece's arrival after the press.
            let began = self.record.reached_at().get(k - 2).copied().unwrap_or(0);
            let pressed = self.clock.pressed_at(mover).is_some_and(|p| p > began);
            // Seen going on only after the reply was complete, it may as well be a second
            // move made at once: the same board either way.
            let after_reply = went_on > replied;
            (pressed || after_reply || stood > self.config.report_reorder_ms).then_some(
                Doubt::MovedOn {
                    first,
                    stood_ms: stood,
                },
            )
        };
        Some((vec![slide, reply], doubt))
    }

    /// A move `next` by the player to move at position `k` that carries on, along the same
    /// line, the piece of his last move, a move his press made final, and was begun sooner
    /// after the reply was made than a hand answers: the board may have reported the first
    /// move's end late, after the press and the reply ([`Machine::slide_seen_late`] without
    /// the press). Both moves stay recorded, with a doubt.
    pub(super) fn gone_on_at_once(&self, k: usize, next: Move) -> Option<Doubt> {
        let (first, _) = self.carried_on_line(k, next)?;
        let mover = self.record.game().positions()[k].turn();
        let replied = self.record.reached_at().get(k).copied()?;
        let began = self.first_lift(first.to(), mover, replied)?;
        let ms = began - replied;
        // A move also complete that soon gets the quick-reply warning instead.
        let quick = self.config.two_hands_threshold_ms;
        (ms < quick && self.now.saturating_sub(replied) >= quick).then_some(Doubt::GoneOnAtOnce {
            first,
            next,
            ms,
        })
    }

    /// `reading`, unless it reads two moves from the last position, a reply and then a move
    /// carrying the piece of the presser's last move on along its line
    /// ([`Machine::slide_ended_after_press`]): then the longer move and the reply.
    pub(super) fn slide_end_after_press(&self, reading: Reading) -> Reading {
        match &reading {
            Reading::Adopt { from, moves, .. } if *from == self.record.game().plies() => {
                match moves[..] {
                    [reply, next] => self.slide_ended_after_press(reply, next).unwrap_or(reading),
                    _ => reading,
                }
            }
            _ => reading,
        }
    }

    /// The reading of `reply` and then `next` from the last position when `next` carries the
    /// piece of the presser's last move on along its line, and the board showed it going on
    /// within a scan after his press and before the reply arrived: a hand does not move again
    /// before the reply is made, but a slow scan reports a slide's end after the press, while
    /// the reply is being made. Read as the longer move and the reply, with the arbiter told
    /// (the press came before the board showed the last square).
    fn slide_ended_after_press(&self, reply: Move, next: Move) -> Option<Reading> {
        let n = self.record.game().plies();
        let k = n.checked_sub(1)?;
        let (first, longer) = self.carried_on_past(k, reply, next)?;
        let mover = self.record.game().positions()[k].turn();
        let arrived = self.record.reached_at().get(n).copied().unwrap_or(0);
        let pressed = self.clock.pressed_at(mover).filter(|&p| p >= arrived)?;
        let went_on = [first.to(), next.to()]
            .into_iter()
            .filter_map(|sq| self.square_reports.last(sq))
            .min()?;
        let replied = self.square_reports.last(reply.to())?;
        if went_on < pressed
            || went_on > pressed.saturating_add(self.config.scan_period_ms)
            || went_on >= replied
        {
            return None;
        }
        let mut pos = self.record.game().positions()[k].clone();
        pos.play_unchecked(longer);
        pos.play_unchecked(reply);
        let mut expected = self.record.game().position().clone();
        expected.play_unchecked(reply);
        expected.play_unchecked(next);
        (pos.board() == expected.board()).then(|| Reading::Adopt {
            from: k,
            moves: vec![longer, reply],
            doubt: Some(Doubt::MovedOn {
                first,
                stood_ms: went_on.saturating_sub(arrived),
            }),
        })
    }

    /// When `next`, the move of the player to move at position `k`, carries the piece of his
    /// move two plies before (a plain move) on along the same line: that move, and the one
    /// longer move to where `next` ends, if it was legal and the opponent's reply legal
    /// after it.
    pub(super) fn carried_on_line(&self, k: usize, next: Move) -> Option<(Move, Move)> {
        let j = k.checked_sub(2)?;
        self.carried_on_past(j, self.record.game().moves().get(j + 1)?.mv, next)
    }

    /// When `next` carries the piece of the recorded move `j` (a plain move) on along the
    /// same line after the opponent's `reply`: that move, and the one longer move to where
    /// `next` ends, if it was legal and `reply` legal after it.
    fn carried_on_past(&self, j: usize, reply: Move, next: Move) -> Option<(Move, Move)> {
        let first = self.record.game().moves().get(j)?.mv;
        let Move::Normal {
            role,
            from,
            capture: None,
            to,
            promotion: None,
        } = first
        else {
            return None;
        };
        let carries_on = next.from() == Some(to)
            && next.role() == role
            && shakmaty::attacks::between(from, next.to()).contains(to);
        if !carries_on {
            return None;
        }
        let mut pos = self.record.game().positions()[j].clone();
        let longer = pos
            .legal_moves()
            .into_iter()
            .find(|m| m.from() == Some(from) && m.to() == next.to() && m.promotion().is_none())?;
        pos.play_unchecked(longer);
        pos.is_legal(reply).then_some((first, longer))
    }

    /// 8.5.3, told at once: the board shows the side to move's reply made, illegal after the
    /// last move as recorded, but legal had that move's piece gone on along its line to a
    /// square the board shows empty. On a slow scan a piece that stood there less than a scan
    /// is never reported, and where it stopped the board cannot tell; the reply's press would
    /// otherwise make it an illegal move, told only then. Once for each last move.
    pub(super) fn reply_fits_a_longer_last_move(&mut self, t: Millis, out: &mut Vec<Event>) {
        let n = self.record.game().plies();
        if n == 0 || n <= self.record.settled() || self.longer_last_told == Some(n) {
            return;
        }
        let last = self.record.game().moves()[n - 1].mv;
        let before = &self.record.game().positions()[n - 1];
        let Some(from) = last.from() else {
            return;
        };
        let s = self.sensed();
        // The piece is seen gone from the square it was read on.
        if s.board.occupied().contains(last.to()) {
            return;
        }
        let longer_moves: Vec<Move> = before
            .legal_moves()
            .into_iter()
            .filter(|longer| {
                longer.from() == Some(from)
                    && longer.role() == last.role()
                    && !longer.is_castle()
                    && attacks::between(from, longer.to()).contains(last.to())
            })
            .collect();
        if longer_moves.is_empty() {
            return;
        }
        let legal_now = self.record.game().position().legal_moves();
        let differing = s.diff(self.record.game().position().board());
        let mut stops = Bitboard::EMPTY;
        let mut reply_san = None;
        for longer in longer_moves {
            let mut went_on = before.clone();
            went_on.play_unchecked(longer);
            for reply in went_on.legal_moves() {
                // A reply illegal after the move as recorded, itself seen made: only the
                // longer move's landing is unseen.
                let reply_squares = squares_of(reply);
                let legal_anyway = legal_now
                    .iter()
                    .any(|m| m.from() == reply.from() && m.to() == reply.to());
                if legal_anyway
                    || !differing.contains(reply.to())
                    || reply_squares.contains(longer.to())
                    || reply_squares.contains(last.to())
                {
                    continue;
                }
                let mut after = went_on.clone();
                after.play_unchecked(reply);
                if s.diff(after.board()) == Bitboard::from(longer.to()) {
                    stops |= Bitboard::from(longer.to());
                    reply_san.get_or_insert_with(|| San::from_move(&went_on, reply));
                }
            }
        }
        let Some(reply_san) = reply_san else {
            return;
        };
        self.longer_last_told = Some(n);
        let mover = before.turn();
        let mut a = self.alert("8.5.3", Some(mover), t, Severity::Warning);
        a.ply = super::ply_number(n);
        a.squares = std::iter::once(last.to())
            .chain(stops)
            .map(|sq| sq.to_string())
            .collect();
        a.message = format!(
            "{}'s {} on the board is illegal after {}'s {} as recorded, but legal had that \
             piece gone on to {}, where the board never reported it (it may have stood \
             there less than a scan); the arbiter should check where it stopped",
            color_word(!mover),
            reply_san,
            color_word(mover),
            San::from_move(before, last),
            square_names(stops).join(" or ")
        );
        out.push(Event::Alert(a));
    }
}
