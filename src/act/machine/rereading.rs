//! Re-reading moves already recorded from what the board showed since.

use shakmaty::{Color, Move, Piece, Position, Role, Square};

use super::doubt::Doubt;
use super::reading::Reading;
use super::{Machine, REREAD_PLIES};
use crate::act::search::{Explanation, Sensed};
use crate::board::Millis;

/// How many plies back a promotion recorded as a queen may be read again as a knight's from
/// the promoted piece's first move: a knight made by promotion usually moves at once.
const PROMOTION_SHOWN_PLIES: usize = 12;

/// How many plies back a held game is read again from.
const HELD_REREAD_PLIES: usize = 4;

impl Machine {
    /// The last move is final, but play was held soon after it and the board now
    /// shows its piece standing on another square it could have reached instead: the piece
    /// was carried on (a slide the board reported late) or it was released and moved again
    /// (4.7). Rather than hold the game, the longer move is recorded and the arbiter told.
    /// With `with_replies`, the longer move may be followed by moves made meanwhile (once
    /// play is held); without, it must explain the board alone.
    pub(super) fn moved_on(&self, s: &Sensed<'_>, with_replies: bool) -> Option<Reading> {
        let n = self.record.game().plies();
        if n == 0 || n > self.record.settled() || (with_replies && !self.hold.is_held()) {
            return None;
        }
        // The final move stands when a reply being made may explain the board.
        if !with_replies && self.reply_lands_after(n - 1, s) {
            return None;
        }
        let made = self.record.reached_at().get(n).copied().unwrap_or(0);
        let doubted = self.doubted_since();
        if doubted > made.saturating_add(self.config.moved_on_ms) {
            return None;
        }
        let first = self.record.game().moves()[n - 1].mv;
        let instead = |m: &Move| {
            let carried_on =
                m.from() == first.from() && m.role() == first.role() && m.to() != first.to();
            carried_on || matches!(*m, Move::Castle { rook, .. } if first.from() == Some(rook))
        };
        let before = &self.record.game().positions()[n - 1];
        // The longer move alone, or followed by the moves made meanwhile.
        let moves = match s.single_moves(before)[..] {
            [(m, _)] => instead(&m).then(|| vec![m])?,
            [] if with_replies => match s.sequences(
                before,
                self.config.max_reconstruction_plies,
                &self.reports(n - 1),
            ) {
                Explanation::Unique(seq) if seq.first().is_some_and(instead) => seq,
                _ => return None,
            },
            _ => return None,
        };
        // The king first, then the rook: castling as 4.4.1 wants it, whatever the wait.
        let king_first = moves[0].is_castle() && first.role() == Role::King;
        Some(Reading::Adopt {
            from: n - 1,
            doubt: (!king_first).then(|| Doubt::MovedOn {
                first,
                stood_ms: doubted.saturating_sub(made),
            }),
            moves,
        })
    }

    /// Since when the board has shown what is being read: since play was held, or now.
    pub(super) fn doubted_since(&self) -> Millis {
        if self.hold.is_held() {
            self.hold.since()
        } else {
            self.now
        }
    }

    /// The last two moves' pieces both standing further along their lines, and nothing else
    /// changed: both players' pieces paused on the way and went on, each pause read as the move (a
    /// press may have made the first final meanwhile, on the board as it was then reported). Read
    /// as the two longer moves from the position before them, with a warning, when the board showed
    /// this within [`MachineConfig::moved_on_ms`](super::MachineConfig::moved_on_ms) of the first
    /// pause and no other pair of moves explains it.
    pub(super) fn both_moved_on(&self, s: &Sensed<'_>) -> Option<Reading> {
        let n = self.record.game().plies();
        let from = n.checked_sub(2)?;
        if from < self.record.settled().saturating_sub(REREAD_PLIES) {
            return None;
        }
        let paused = self.record.reached_at().get(from + 1).copied()?;
        let doubted = self.doubted_since();
        if doubted > paused.saturating_add(self.config.moved_on_ms) {
            return None;
        }
        let start = &self.record.game().positions()[from];
        let Explanation::Unique(moves) = s.sequences_within(start, 2..=2, &self.reports(from))
        else {
            return None;
        };
        let withdrawn = self.moves_since(from);
        // A first move its player pressed for before the reply began stood, and was
        // answered: its piece going on later is a move of its own.
        let replied_to_pressed = withdrawn.get(1).and_then(|reply| {
            let pressed = self
                .record
                .turn_start()
                .get(from + 1)
                .copied()
                .filter(|&p| p > paused)?;
            let mover = self.record.game().positions()[from].turn();
            let began =
                self.first_lift(reply.from()?, !mover, *self.record.reached_at().get(from)?)?;
            Some(pressed < began)
        });
        if replied_to_pressed == Some(true) {
            return None;
        }
        let went_on = moves.iter().zip(&withdrawn).all(|(m, w)| {
            m.role() == w.role()
                && m.from() == w.from()
                && m.from()
                    .is_some_and(|from| shakmaty::attacks::between(from, m.to()).contains(w.to()))
        });
        went_on.then(|| Reading::reread(from, withdrawn, moves))
    }

    /// Moves made final that the board, nothing else explaining it, shows were other moves: from
    /// one of the [`REREAD_PLIES`](super::REREAD_PLIES) positions before the final ones, exactly
    /// one legal sequence leaves the board as it is and agrees with every report since. A press
    /// made them final on the board as it was then reported; a slow scan can report the end of a
    /// slide, or a castling's king, after the press.
    pub(super) fn reread_final_moves(&self, s: &Sensed<'_>) -> Option<Reading> {
        let n = self.record.game().plies();
        let positions = self.record.game().positions();
        for k in
            (self.record.settled().saturating_sub(REREAD_PLIES)..self.record.settled().min(n)).rev()
        {
            let reports = self.reports(k);
            let moves = match &s.single_moves(&positions[k])[..] {
                [(m, _)] => vec![*m],
                [] => {
                    let depth = self.config.max_reconstruction_plies;
                    match s.sequences(&positions[k], depth, &reports) {
                        Explanation::Unique(seq) => seq,
                        _ => continue,
                    }
                }
                _ => continue,
            };
            let recorded = self.record.game().moves()[k].mv;
            if moves.first() == Some(&recorded) {
                continue;
            }
            // More moves than were recorded, overlapping in time far more than the recorded
            // ones, are a displaced piece read as moves, not what the recorded moves were.
            let withdrawn = self.moves_since(k);
            if moves.len() > withdrawn.len() {
                let overlap = reports.overlap(&positions[k], &moves);
                let recorded_overlap = reports.overlap(&positions[k], &withdrawn);
                if overlap > recorded_overlap.saturating_add(self.config.two_hands_threshold_ms) {
                    continue;
                }
            }
            // The board must have shown the other move within a scan of the recorded one:
            // later, the recorded move stood and what followed is a new irregularity.
            let arrived = self.record.reached_at().get(k + 1).copied().unwrap_or(0);
            let shown = (crate::act::search::squares_of(moves[0])
                & !crate::act::search::squares_of(recorded))
            .into_iter()
            .filter_map(|sq| self.square_reports.last(sq))
            .min();
            // A board dump that shows other moves than a reconstruction read from displaced
            // pieces says a sensor report was lost: those moves are read again, whenever.
            let other_squares = crate::act::search::squares_of(moves[0])
                & !crate::act::search::squares_of(recorded);
            let dump_contradicts = self.doubts.reconstructed_from() == Some(k)
                && other_squares.any()
                && (other_squares & self.square_reports.undated()) == other_squares;
            if !dump_contradicts
                && shown.is_none_or(|t| t > arrived.saturating_add(self.config.report_reorder_ms))
            {
                continue;
            }
            let rook_first =
                matches!(moves[0], Move::Castle { rook, .. } if recorded.from() == Some(rook));
            let doubt = if rook_first {
                Doubt::MovedOn {
                    first: recorded,
                    stood_ms: 0,
                }
            } else {
                Doubt::Reread {
                    from: k,
                    withdrawn,
                    moves: moves.clone(),
                }
            };
            return Some(Reading::Adopt {
                from: k,
                moves,
                doubt: Some(doubt),
            });
        }
        None
    }

    /// True when the game has been held for longer than
    /// [`MachineConfig::moved_on_ms`](super::MachineConfig::moved_on_ms), a slide's longest
    /// pause: the board is no longer a move on its way.
    pub(super) fn held_past_a_pause(&self) -> bool {
        self.hold.is_held() && self.now >= self.hold.since().saturating_add(self.config.moved_on_ms)
    }

    /// A game held on a board nothing else explains for longer than
    /// [`MachineConfig::moved_on_ms`](super::MachineConfig::moved_on_ms) (a slide's longest
    /// pause), read again from up to [`HELD_REREAD_PLIES`] plies back: the one sequence of
    /// moves from there that leaves the board as it is, every move on squares the board
    /// reported since, replaces the moves recorded since, and the arbiter is warned. A move
    /// read wrong in a burst of late reports otherwise holds the game for good, since every
    /// move after it is read against the wrong position.
    pub(super) fn reread_held_game(&self, s: &Sensed<'_>) -> Option<Reading> {
        if !self.held_past_a_pause() {
            return None;
        }
        let n = self.record.game().plies();
        let oldest = n
            .saturating_sub(HELD_REREAD_PLIES)
            .max(self.gap_start().map_or(0, |g| g + 1));
        (oldest..n).rev().find_map(|k| {
            let back = n - k;
            let depths = back.max(2)..=back + 2;
            let Explanation::Unique(moves) =
                s.sequences_within(&self.record.game().positions()[k], depths, &self.reports(k))
            else {
                return None;
            };
            let withdrawn = self.moves_since(k);
            (moves.first() != withdrawn.first()).then(|| Reading::reread(k, withdrawn, moves))
        })
    }

    /// The reading of one move `m` that leaves the board as it is from position `k`: the
    /// move itself, or what it shows the moves before it were (a slide seen late, a double
    /// step taken unseen).
    pub(super) fn one_move_from(&self, k: usize, m: Move, doubt: Option<Doubt>) -> Reading {
        if doubt.is_none() {
            if k == self.record.game().plies()
                && let Some(reading) = self.double_step_shown(m)
            {
                return reading;
            }
            if k == self.record.game().plies()
                && let Some(unsampled) = self.unsampled_double_step(m)
            {
                return Reading::Adopt {
                    from: k,
                    moves: vec![m],
                    doubt: Some(unsampled),
                };
            }
            if let Some((moves, doubt)) = self.slide_seen_late(k, m) {
                return Reading::Adopt {
                    from: k - 2,
                    moves,
                    doubt,
                };
            }
        }
        let doubt = doubt
            .or_else(|| self.carried_on_after_standing(k, m))
            .or_else(|| self.gone_on_at_once(k, m));
        Reading::Adopt {
            from: k,
            moves: vec![m],
            doubt,
        }
    }

    /// On a board that senses only occupancy a promotion is recorded as a queen, with a
    /// doubt: the board cannot show the piece. When the promoted piece, not moved since,
    /// makes a move only a knight makes, it was a knight (or the move was illegal, which
    /// the arbiter told of the doubt can still judge): the game from the promotion is read
    /// again with a knight, if every move since stays legal.
    pub(super) fn knight_promotion_shown(&self, s: &Sensed<'_>) -> Option<Reading> {
        let moves = self.record.game().moves();
        let n = moves.len();
        let from = (n.saturating_sub(PROMOTION_SHOWN_PLIES)..n)
            .rev()
            .find(|&j| moves[j].mv.promotion() == Some(Role::Queen))?;
        let Move::Normal {
            role,
            from: pawn,
            capture,
            to: square,
            ..
        } = moves[from].mv
        else {
            return None;
        };
        let since = &moves[from + 1..];
        if since
            .iter()
            .any(|p| p.mv.from() == Some(square) || p.mv.to() == square)
        {
            return None;
        }
        let knight = Move::Normal {
            role,
            from: pawn,
            capture,
            to: square,
            promotion: Some(Role::Knight),
        };
        let mut pos = self.record.game().positions()[from].clone();
        let mut read = Vec::with_capacity(since.len() + 2);
        for m in std::iter::once(knight).chain(since.iter().map(|p| p.mv)) {
            if !pos.is_legal(m) {
                return None;
            }
            pos.play_unchecked(m);
            read.push(m);
        }
        let [(shown, _)] = s.single_moves(&pos)[..] else {
            return None;
        };
        if shown.from() != Some(square) {
            return None;
        }
        read.push(shown);
        Some(Reading::Adopt {
            from,
            moves: read,
            doubt: Some(Doubt::PromotionShown { from, shown }),
        })
    }

    /// On a board that senses only occupancy, when the last recorded move is a capture not
    /// yet final whose victim's square the board never reported after the move began, and
    /// it has since reported a placement on another square that a capture by the same piece
    /// takes: that report is where the piece landed (the victim's lift fell between two
    /// scans), and the board shows the same either way. Read as that capture; a pressed one
    /// is read again with the arbiter told.
    pub(super) fn capture_landing_shown(&self, s: &Sensed<'_>) -> Option<Reading> {
        let n = self.record.game().plies();
        let k = n.checked_sub(1)?;
        if self.lifted_last || k < self.record.settled() || !self.capture_unevidenced(k) {
            return None;
        }
        let recorded = self.record.game().moves()[k].mv;
        let [(shown, _)] = self
            .evidence_from(s, k)
            .single_moves(&self.record.game().positions()[k])[..]
        else {
            return None;
        };
        (shown != recorded).then(|| Reading::Adopt {
            from: k,
            moves: vec![shown],
            doubt: self.pressed_move_replaced(k, &[shown]),
        })
    }

    /// On a board that senses only occupancy, true when the recorded move `k` is a capture
    /// whose square the board never reported after position `k` was reached: a reading the
    /// board's later reports may still correct.
    pub(super) fn capture_unreported_at(&self, k: usize) -> bool {
        let Some(recorded) = self.record.game().moves().get(k).map(|p| p.mv) else {
            return false;
        };
        recorded.capture().is_some() && !self.capture_evidence(k).contains(recorded.to())
    }

    /// True when the recorded move `k` is a capture whose square the board reported after
    /// it reported the capturer lifted: the capturer was seen landing.
    pub(super) fn capture_seen_landing(&self, k: usize) -> bool {
        let Some(m) = self.record.game().moves().get(k).map(|p| p.mv) else {
            return false;
        };
        let since = self.record.reached_at().get(k).copied().unwrap_or(0);
        let mover = self.record.game().positions()[k].turn();
        let lifted = m
            .from()
            .and_then(|from| self.first_lift(from, mover, since));
        m.is_capture()
            && lifted.is_some_and(|l| self.square_reports.last(m.to()).is_some_and(|t| t > l))
    }

    /// A pawn capture `capture` onto the square where the opponent's pawn was recorded
    /// stepping one square off its start rank, when the board reported the square two
    /// squares off it occupied since the step (by that pawn, on a board that names pieces)
    /// and before the capturer was lifted, and that square is empty again: the pawn went on
    /// two squares and was taken en passant (3.7.3.1), which explains that report; the single
    /// step and a normal capture leave it unexplained. (The capturer touched down there on its
    /// way would be reported after its lift.) A board that samples its squares one by one
    /// and cannot name pieces may report the pawn there within a scan after the capturer's
    /// lift: the pawn going on is still the likelier reading, with a 4.7 warning. A step
    /// already made final is read again, and the arbiter told.
    pub(super) fn double_step_shown(&self, capture: Move) -> Option<Reading> {
        let (step, double, en_passant) = self.step_or_double(capture)?;
        let n = self.record.game().plies();
        let arrived = self.record.reached_at().get(n).copied().unwrap_or(0);
        let pawn = Piece {
            color: self.record.game().positions()[n - 1].turn(),
            role: Role::Pawn,
        };
        if !self.double_step_named(double.to(), pawn, arrived) {
            return None;
        }
        let square = double.to();
        let capturer_lifted = capture
            .from()
            .and_then(|from| self.first_lift(from, self.record.game().position().turn(), arrived))
            .unwrap_or(Millis::MAX);
        // The square's last report emptied it; the one before put the pawn there.
        let filled = self.square_reports.before(square).filter(|&t| t >= arrived);
        let latest = self.reported_before_lift(capturer_lifted);
        let shown = filled.is_some_and(|t| t <= latest)
            && self
                .square_reports
                .last(square)
                .is_some_and(|t| t >= arrived);
        if !shown || self.physical.board().occupied().contains(double.to()) {
            return None;
        }
        let moves = vec![double, en_passant];
        let doubt = if n - 1 < self.record.settled() {
            Some(Doubt::Reread {
                from: n - 1,
                withdrawn: vec![step],
                moves: moves.clone(),
            })
        } else {
            filled
                .filter(|&t| t > capturer_lifted)
                .map(|t| Doubt::MovedOn {
                    first: step,
                    stood_ms: t.saturating_sub(arrived),
                })
        };
        Some(Reading::Adopt {
            from: n - 1,
            moves,
            doubt,
        })
    }

    /// For a pawn capture `capture` onto the square the last recorded move, a pawn's single
    /// step off its start rank, reached: that step, the double step it could have been, and
    /// the capture en passant that would then have taken it.
    pub(super) fn step_or_double(&self, capture: Move) -> Option<(Move, Move, Move)> {
        let n = self.record.game().plies();
        let step = self.record.game().moves().last()?.mv;
        let Move::Normal {
            role: Role::Pawn,
            from: start,
            capture: None,
            to: stop,
            ..
        } = step
        else {
            return None;
        };
        let Move::Normal {
            role: Role::Pawn,
            from: capturer,
            capture: Some(Role::Pawn),
            to,
            ..
        } = capture
        else {
            return None;
        };
        let before = &self.record.game().positions()[n - 1];
        let double = before.legal_moves().into_iter().find(|m| {
            m.role() == Role::Pawn
                && m.from() == Some(start)
                && m.to().file() == start.file()
                && shakmaty::attacks::between(start, m.to()).contains(stop)
        })?;
        let mut after_double = before.clone();
        after_double.play_unchecked(double);
        let en_passant = Move::EnPassant {
            from: capturer,
            to: stop,
        };
        (to == stop && after_double.is_legal(en_passant)).then_some((step, double, en_passant))
    }

    /// A pawn capture `capture` onto the square where the opponent's pawn has just stepped
    /// one square off its start rank, that pawn having left the square before the capturer
    /// was lifted. The board cannot tell this from a pawn that went on two squares and was
    /// taken en passant (3.7.3.1) before its landing square was sampled: the same pieces end
    /// on the same squares, and timing does not settle it (an opponent in a hurry takes the
    /// pawn before its player pressed, a slide pauses). The single step is kept; when the
    /// pawn left within one scan of arriving or before its player pressed, the arbiter is
    /// told.
    pub(super) fn unsampled_double_step(&self, capture: Move) -> Option<Doubt> {
        let n = self.record.game().plies();
        if n == 0 || n - 1 < self.record.settled() {
            return None;
        }
        let (step, double, en_passant) = self.step_or_double(capture)?;
        let (Some(capturer), stop) = (en_passant.from(), en_passant.to()) else {
            return None;
        };
        let before = &self.record.game().positions()[n - 1];
        let arrived = self.record.reached_at().get(n).copied().unwrap_or(0);
        let left = self.stepped_pawn_left(stop, capturer, before.turn(), arrived)?;
        Some(Doubt::Unsampled {
            step,
            double,
            stood_ms: left.saturating_sub(arrived),
        })
    }

    /// When the pawn of `stepper` that arrived on `stop` at `arrived` left it again, if that
    /// leaves room for an unsampled double step: before the `capturer` was lifted, and
    /// within a scan of its arrival unless before its player pressed.
    fn stepped_pawn_left(
        &self,
        stop: Square,
        capturer: Square,
        stepper: Color,
        arrived: Millis,
    ) -> Option<Millis> {
        let seen_leaving = self
            .touches
            .lifts()
            .iter()
            .find(|l| l.sq == stop && l.piece.color == stepper && l.t_ms >= arrived)
            .map(|l| l.t_ms);
        let capturer_lifted = self
            .touches
            .lifts()
            .iter()
            .find(|l| l.sq == capturer && l.t_ms >= arrived)
            .map(|l| l.t_ms);
        match seen_leaving {
            Some(left) => {
                let before_press = self.clock.pressed_at(stepper).is_some_and(|p| p > left);
                if left > capturer_lifted.unwrap_or(Millis::MAX)
                    || (!before_press
                        && left.saturating_sub(arrived) > self.config.report_reorder_ms)
                {
                    return None;
                }
                Some(left)
            }
            None if self.capture_shows_no_change() => capturer_lifted
                .filter(|&lifted| lifted.saturating_sub(arrived) <= self.config.report_reorder_ms),
            // The square went straight from the pawn to the capturer: every sample between
            // showed the pawn, so it left within a scan of the capturer's arrival, and only
            // an arrival within a scan of the step leaves room for the double step.
            None => {
                let replaced = self.square_reports.last(stop).filter(|&t| t >= arrived)?;
                if replaced.saturating_sub(arrived) > self.config.report_reorder_ms {
                    return None;
                }
                Some(replaced)
            }
        }
    }
}
