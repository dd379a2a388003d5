//! Judging a press without a recognised move (7.5.1, 7.5.2, 7.5.3, 7.4).

use shakmaty::san::San;
use shakmaty::{Bitboard, Chess, Color, Move, Position};

use super::doubt::Doubt;
use super::press::Press;
use super::reading::Reading;
use super::{Machine, Phase, REREAD_PLIES, color_word};
use crate::act::search::{Explanation, Sensed, only, squares_of};
use crate::act::{Alert, Event, Severity};
use crate::board::Millis;

impl Machine {
    /// The side to move pressed without a recognised move, once its grace period is over:
    /// the moves the press says are over are read first; failing that, the board is judged
    /// as a press without a move (7.5.3), an unfinished promotion (7.5.2), a move with
    /// pieces knocked over (7.4), a lost update (8.5.3) or a completed illegal move (7.5.1).
    pub(super) fn judge_press(&mut self, press: Press, out: &mut Vec<Event>) {
        let (by, t) = (press.by, press.t_ms);
        if self.phase != Phase::Playing || self.record.game().position().turn() != by {
            return;
        }
        if self.adopt_pressed_moves(by, t, out) {
            return;
        }
        let current = self.record.game().position().clone();
        let at_press = press
            .promotion
            .filter(|&(plies, _)| plies == self.record.game().plies())
            .map(|(_, m)| m);
        let s = self.sensed();
        let d = s.diff(current.board());
        let only_gone = (d & s.board.occupied()).is_empty();
        if let Some(m) = s.unfinished_promotion(&current).or(at_press) {
            self.promotion_at_press(by, m, t, out);
        } else if d.is_empty()
            && let Some((from, moves, doubt)) = self.reread_for_press(&s)
        {
            self.adopt(from, &moves, t, out);
            self.raise_doubt(doubt, t, out);
            let n = self.record.game().plies();
            self.complete(by, t, n, out);
        } else if let Some(first) = press.awaited {
            // The board is still one an earlier press of this player waits for: that press
            // goes on waiting, and this one is no new move to judge.
            self.await_board(by, first, d, out);
        } else if let Some(reading) = self.landing_not_shown(t, &s, &current) {
            // The press says the move is over: a capture is all the board can show.
            self.adopt_unseen_landing(by, reading, t, true, out);
        } else if let Some(alert) = self.arrival_unseen_at_press(by, t, &s, &current) {
            out.push(Event::Alert(alert));
            self.await_board(by, t, d, out);
        } else if let Some(alert) = self.lift_unseen_at_press(by, t, &s, &current) {
            out.push(Event::Alert(alert));
            self.await_board(by, t, d, out);
        } else if d.is_empty()
            || (s.in_progress(&current) && s.board.occupied().is_subset(current.board().occupied()))
        {
            if !self.press_without_move_after_gap(by, t, out) {
                self.press_without_move(by, t, out);
            }
        } else if let Some(m) = self.move_shown_with_reply_begun(t, &s, &current) {
            if self.adopt_at_press(by, m, t, out) {
                self.judge_answer_in_turn(by, t);
            }
        } else if let Some((m, displaced)) = s.move_with_pieces_displaced(&current) {
            // 7.4: a legal move made with pieces knocked off or over on the way is no illegal
            // move; the press completes it once the pieces are back.
            let san = shakmaty::san::San::from_move(&current, m);
            out.push(Event::Alert(self.pieces_displaced(by, &san, displaced, t)));
            self.await_board(by, t, d, out);
        } else if let Some(alert) = self.surplus_at_press(by, t) {
            out.push(Event::Alert(alert));
            self.await_board(by, t, d, out);
        } else if let Some(told) = self.doubts.unrestored() {
            if !told {
                self.doubts.play_on_unrestored_told();
                out.push(Event::Alert(self.play_on_unrestored(by, t, d)));
            }
            self.set_held_now(Some(d), t, out);
        } else if let Some((m, _)) = s.move_with_opponent_hand(&current) {
            // The presser's pieces show his legal move; what else differs is the opponent's
            // hand, which no press of the presser answers for.
            if self.adopt_at_press(by, m, t, out) {
                self.judge_answer_in_turn(by, t);
            }
        } else if !self.take_up_again_at_press(by, t, out) && !self.press_after_gap(by, t, d, out) {
            if only_gone {
                out.push(Event::Alert(self.landings_unseen_at_press(by, t, d)));
                self.await_board(by, t, d, out);
            } else {
                self.completed_illegal_move(by, t, d, out);
            }
        }
    }

    /// A press of the opponent's made since `by`'s press at `t`, while that one waited for
    /// the board, is his for the move his hand was making: judged as such in its turn, once
    /// its grace period is over, and not before now (the machine never asks to be woken in
    /// the past).
    pub(super) fn judge_answer_in_turn(&mut self, by: Color, t: Millis) {
        let n = self.record.game().plies();
        if let Some(answer) = self.clock.pressed_at(!by).filter(|&p| p > t)
            && self.presses.waiting().is_none()
        {
            self.presses.waits(Press {
                by: !by,
                t_ms: answer,
                ply: if self.record.game().position().turn() == by {
                    n
                } else {
                    n + 1
                },
                due: answer
                    .saturating_add(self.config.press_grace_ms)
                    .max(self.now),
                promotion: None,
                awaited: None,
            });
        }
    }

    /// On a board that senses only occupancy, the one legal move from `current` that the
    /// board shows made when the rest of what differs is pieces lifted by the players' hands
    /// since: not pieces the presser knocked over (those fall while the move is made). They
    /// are the opponent's pieces, each reported after the press at `t` (his reply begun), or
    /// any time once he has pressed since `t` (his reply made), and the presser's own
    /// pieces reported after that press (his next move begun). A board that samples its
    /// squares one by one may report a lift made after the press up to a scan before it, so
    /// there a lift reported that much before the press counts too
    /// ([`Machine::scan_order_slack`]). Every square the board reported since the last move was read is one of
    /// these: a square that changed and changed back is not. A landing the board reported
    /// later than a landing before the press would be ([`Machine::landing_reported_by`]) is
    /// a later move's, not this one's.
    pub(super) fn move_with_reply_begun(
        &self,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<Move> {
        let read = self.record.reached_at().last().copied().unwrap_or(0);
        let reported = self.squares_reported_after(read);
        let begun_after = t.saturating_sub(self.scan_order_slack());
        let answered = self.clock.pressed_at(!current.turn()).filter(|&p| p > t);
        let landed_by = self.landing_reported_by(t);
        let fits = current.legal_moves().into_iter().filter(|&m| {
            let mut after = current.clone();
            after.play_unchecked(m);
            let d = s.diff(after.board());
            let lifted = |c: Color| d & after.board().by_color(c) & !s.board.occupied();
            let (theirs, own) = (lifted(after.turn()), lifted(current.turn()));
            d.any()
                && d == theirs | own
                && (answered.is_some() || self.all_reported_after(theirs, begun_after))
                && (own.is_empty() || answered.is_some_and(|p| self.all_reported_after(own, p)))
                && reported.is_subset(d | squares_of(m))
                && (squares_of(m) & after.board().occupied())
                    .into_iter()
                    .all(|sq| self.square_reports.last(sq).is_none_or(|r| r <= landed_by))
        });
        only(fits)
    }

    /// Records `m`, the presser's move the board shows, as the move his press completed,
    /// and holds the board on what else differs. False when the move did not stand (the
    /// game ended, or it was not recorded).
    pub(super) fn adopt_at_press(
        &mut self,
        by: Color,
        m: Move,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        self.adopt_one(m, t, Some(by), out)
    }

    /// Records `m`, the move the board shows, completed by the press of `pressed_by` if
    /// any (else a press to come completes it), and holds the board on what else differs.
    /// False when the move did not stand (the game ended, or it was not recorded).
    pub(super) fn adopt_one(
        &mut self,
        m: Move,
        t: Millis,
        pressed_by: Option<Color>,
        out: &mut Vec<Event>,
    ) -> bool {
        let n = self.record.game().plies();
        self.adopt(n, &[m], t, out);
        if self.phase != Phase::Playing || self.record.game().plies() != n + 1 {
            return false;
        }
        if let Some(by) = pressed_by {
            self.complete(by, t, n + 1, out);
        }
        let d = self.sensed().diff(self.record.game().position().board());
        self.set_held(d.any().then_some(d), t, out);
        true
    }

    /// What looked like a move still being made may be moves already made, some of them
    /// unseen: the press says they are over. The board as it is comes first (its last
    /// updates may have come after the press), then the board at the press. Returns true
    /// when moves were adopted and the press completed the presser's latest move.
    fn adopt_pressed_moves(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) -> bool {
        let at_press = self
            .presses
            .reading_at_press_taken()
            .and_then(|(plies, reading)| {
                let still_open =
                    matches!(reading, Reading::Adopt { from, .. } if from >= self.record.settled());
                (plies == self.record.game().plies() && still_open).then_some(reading)
            });
        let reading = match self.read(true) {
            Reading::Unexplained { .. } => at_press,
            reading => Some(reading),
        };
        // Moves already final are not re-read here: a piece knocked off by the hand that
        // made the pressed move would be read as more moves instead (7.4). A capture choice
        // the board refuted is the exception: it stays open past the press that made it final.
        let Some(Reading::Adopt { from, moves, doubt }) = reading else {
            return false;
        };
        let reread_choice = matches!(doubt, Some(Doubt::CaptureReread { .. }));
        if (from < self.record.settled() && !reread_choice)
            || moves.is_empty()
            || self.ends.pending().is_some()
        {
            return false;
        }
        self.adopt_moves(from, &moves, doubt, t, Some(by), out);
        true
    }

    /// Records `moves` from position `from`, read at `t`, with their doubt: the press of
    /// `pressed_by`, if any, completes that player's latest move, the reply read with it or
    /// not, and the board is held on what else differs.
    pub(super) fn adopt_moves(
        &mut self,
        from: usize,
        moves: &[Move],
        doubt: Option<Doubt>,
        t: Millis,
        pressed_by: Option<Color>,
        out: &mut Vec<Event>,
    ) {
        self.adopt(from, moves, t, out);
        match doubt {
            Some(doubt) => self.raise_doubt(doubt, t, out),
            None => self.doubts.read_without_doubt(),
        }
        let n = self.record.game().plies();
        if let Some(by) = pressed_by
            && self.phase == Phase::Playing
            && let Some(k) = (n.saturating_sub(1)..=n)
                .rev()
                .find(|&k| k > 0 && self.record.game().positions()[k - 1].turn() == by)
            && k > self.record.completed()
        {
            self.complete(by, t, k, out);
        }
        let d = self.sensed().diff(self.record.game().position().board());
        self.set_held(d.any().then_some(d), t, out);
    }

    /// 7.4: the press came after the legal move `san` made with pieces knocked off their
    /// squares (`displaced`); the player restores them in his own time.
    fn pieces_displaced(&self, by: Color, san: &San, displaced: Bitboard, t: Millis) -> Alert {
        let mut a = self.alert("7.4", Some(by), t, Severity::Warning);
        a.evidence_ms = vec![t];
        a.squares = displaced.into_iter().map(|s| s.to_string()).collect();
        a.message = format!(
            "{} pressed the clock after {} with pieces knocked off their squares \
             ({}): the player restores displaced pieces in his own time; the move is \
             recorded once they are back",
            color_word(by),
            san,
            a.squares.join(" ")
        );
        a
    }

    /// 8.5.3, when the board shows the presser's piece lifted and not put down anywhere
    /// at the press, once the press has waited for the board: a legal move whose arrival
    /// the board did not report (a lost update, or one not sent yet) leaves the same board
    /// as a piece still in the hand, so the board does not establish a press without a move
    /// (7.5.3) or an illegal move (7.5.1). The press completes the move once the board
    /// shows it.
    fn arrival_unseen_at_press(
        &self,
        by: Color,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<Alert> {
        let moves = s.arrival_unseen(current);
        let first = moves.first()?;
        let left = moves
            .iter()
            .filter_map(|m| match *m {
                Move::Castle { king, .. } => Some(king),
                _ => m.from(),
            })
            .fold(Bitboard::EMPTY, |all, sq| all | Bitboard::from(sq));
        let piece = current
            .board()
            .piece_at(first.from().unwrap_or(first.to()))
            .map_or("piece", |p| crate::act::touch::name(p.role));
        let mut a = self.alert("8.5.3", Some(by), t, Severity::Warning);
        a.evidence_ms = vec![t];
        a.squares = left.into_iter().map(|sq| sq.to_string()).collect();
        a.message = format!(
            "{} pressed the clock, but the board has not shown where the {piece} lifted from {} \
             was put: a sensor report may be lost, so this is not judged as an illegal move. \
             The arbiter should check the board; the press completes the move once the board \
             shows it",
            color_word(by),
            a.squares.join(" or ")
        );
        Some(a)
    }

    /// 8.5.3, when the board at the press differs from the game only by pieces gone from
    /// `gone` (and no move of the presser's, made or being made, explains it): nothing
    /// stands where the game has nothing or another piece, so the board shows no piece moved
    /// where no legal move takes it, and no illegal move (7.5.1). Pieces in the players'
    /// hands and pieces put down on squares the board has not reported since (a square
    /// sampled before a piece came and after it left, a lost report) leave the same board.
    /// The press completes its move once the board shows it.
    fn landings_unseen_at_press(&self, by: Color, t: Millis, gone: Bitboard) -> Alert {
        let mut a = self.alert("8.5.3", Some(by), t, Severity::Warning);
        a.evidence_ms = vec![t];
        a.squares = gone.into_iter().map(|sq| sq.to_string()).collect();
        a.message = format!(
            "{} pressed the clock, but the board shows pieces gone from {} and none put down \
             where it differs from the game: where they went was not reported (pieces still in \
             hand, or landings the board's scan missed), so this is not judged as an illegal \
             move. The arbiter should check the board; the press completes the move once the \
             board shows it",
            color_word(by),
            a.squares.join(" ")
        );
        a
    }

    /// 8.5.3, when the board shows a piece one too many at the press whose square, were it
    /// empty, would show the presser's legal move (and the reply begun or made after it): the
    /// report of its lift was lost, which the board cannot show apart from an illegal move,
    /// so none is judged. The press completes the move once the board shows it.
    fn lift_unseen_at_press(
        &self,
        by: Color,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<Alert> {
        let squares = s.lift_unseen(current);
        if squares.is_empty() {
            return None;
        }
        let mut a = self.alert("8.5.3", Some(by), t, Severity::Warning);
        a.evidence_ms = vec![t];
        a.squares = squares.into_iter().map(|sq| sq.to_string()).collect();
        a.message = format!(
            "{} pressed the clock, but the board shows a piece one too many: it did not report \
             one leaving {} (a lost update), so this is not judged as an illegal move. The \
             arbiter should check that square; a piece put there and taken off again makes the \
             board report it, and the press completes the move once the board shows it",
            color_word(by),
            a.squares.join(" or ")
        );
        Some(a)
    }

    /// 8.5.3, when the board shows a piece one too many at the press: a lost update, not an
    /// illegal move. Which of its kind left unreported decides the move, and the board
    /// cannot tell.
    fn surplus_at_press(&self, by: Color, t: Millis) -> Option<Alert> {
        let (surplus, placed_at, _) = self.surplus?;
        let piece = self.physical.board().piece_at(surplus)?;
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
        Some(a)
    }

    /// A press by the side to move when the board shows the game as recorded: before it
    /// counts as a press without a move (7.5.3), the last moves are read once more with one
    /// move more, the presser's. A piece that stood on a square the recorded moves never
    /// touch, and an opponent's move read before it, may be two moves of the presser around
    /// the reply (the first one's end reported late, a reply begun at once). Taken only when
    /// exactly one such reading agrees with the reports, and its moves overlap in time less
    /// than the recorded ones did; with a warning.
    pub(super) fn reread_for_press(&self, s: &Sensed<'_>) -> Option<(usize, Vec<Move>, Doubt)> {
        let n = self.record.game().plies();
        let oldest = self
            .record
            .completed()
            .saturating_sub(REREAD_PLIES)
            .max(n.saturating_sub(3));
        (oldest..n).rev().find_map(|k| {
            let start = &self.record.game().positions()[k];
            let plies = n - k + 1;
            let reports = self.reports(k);
            let Explanation::Unique(seq) = s.sequences_within(start, plies..=plies, &reports)
            else {
                return None;
            };
            let recorded = self.moves_since(k);
            let ms = reports.overlap(start, &seq);
            (ms < reports.overlap(start, &recorded)).then(|| {
                let doubt = Doubt::Overlapping {
                    moves: seq.clone(),
                    ms,
                    rewrites: true,
                };
                (k, seq.clone(), doubt)
            })
        })
    }
}
