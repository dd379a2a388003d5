//! Reading the board against the game: the game as it is, one more move, a doubt told
//! apart, a revision of moves still open, and, when nothing shorter explains the board, a
//! reconstruction of missed moves ([`super::reconstruction`]).

use shakmaty::{Bitboard, Move, Position};

use super::Machine;
use super::doubt::Doubt;
use super::reading::{Reading, choose};
use crate::act::Event;
use crate::act::search::{Explanation, Sensed};

/// True when `told`, what the reading that raised `doubt` told as it was adopted, says of
/// every piece whose move the doubt withdraws ([`Machine::released_move_replaced`]) that it
/// was touched first and could have moved (4.3.1): a piece knocked, read as a move and put
/// back has that alert at the ply it was read at, and is not told again.
pub(super) fn replaced_pieces_told(doubt: &Doubt, told: &[Event]) -> bool {
    let Doubt::Reread { withdrawn, .. } = doubt else {
        return false;
    };
    withdrawn.iter().all(|w| {
        w.from().is_some_and(|sq| {
            told.iter().any(|e| {
                matches!(e, Event::Alert(a)
                    if a.article == "4.3.1" && a.squares.first() == Some(&sq.to_string()))
            })
        })
    })
}

impl Machine {
    /// What explains the board: the game as it is, one more move, a revision of moves not
    /// yet confirmed, or a reconstruction of missed moves.
    pub(super) fn read_board(&self) -> Reading {
        self.read(false)
    }

    /// [`Machine::read_board`]; `pressed` when a clock press says the moves are made, so a
    /// board that could still be a move in progress is explained by the moves if they do.
    ///
    /// The readings are tried from the most to the least likely: the game as it is, one
    /// more move, a doubt told apart by the next move, a revision of moves still open, the
    /// last move's piece gone on, and only when no move is in progress a reconstruction of
    /// missed moves, a piece gone on past replies, or moves made final read again.
    pub(super) fn read(&self, pressed: bool) -> Reading {
        match self.read_within(pressed) {
            Reading::Unexplained { .. } if let Some(r) = self.knocked_reply_reading(pressed) => r,
            reading => reading,
        }
    }

    /// On a board that senses only occupancy (its reader's, [`Machine::reading_of_one_move`]),
    /// a quick reply nobody pressed for, followed by
    /// one more move, when the board then shows instead one move of the reply's opponent
    /// by the piece his move before it lifted: the reply was a piece his hand knocked over
    /// and set back (7.4), and that one move the game. Three moves and one leave the same
    /// squares occupied; a hand does not answer that fast, and the answer was not pressed.
    pub(super) fn knocked_reply_set_back(&self, s: &Sensed<'_>) -> Option<Reading> {
        let n = self.record.game().plies();
        let (reply, _) = self.doubts.unpressed_reply().filter(|&(ply, _)| ply == n)?;
        let k = reply.checked_sub(2)?;
        if k < self.record.settled() || self.doubts.quick_reply().is_none() {
            return None;
        }
        let lifted = self.record.game().moves()[k].mv.from();
        let (m, doubt) = choose(&s.single_moves(&self.record.game().positions()[k]))?;
        (doubt.is_none() && m.from() == lifted).then(|| Reading::Adopt {
            from: k,
            moves: vec![m],
            doubt: None,
        })
    }

    /// [`Machine::read`] among the moves not yet final.
    pub(super) fn read_within(&self, pressed: bool) -> Reading {
        let s = self.sensed();
        let positions = self.record.game().positions();
        let n = positions.len() - 1;
        let current = &positions[n];
        if s.diff(current.board()).is_empty() {
            return self.reading_of_the_game(&s);
        }
        if let Some((m, doubt)) = choose(&s.single_moves(current)) {
            return self.reading_of_one_move(&s, n, m, doubt);
        }
        if let Some(reading) = self
            .resolve_doubt(&s)
            .or_else(|| self.revision(&s))
            // The last move's piece standing on a further square, and nothing else changed:
            // no piece is in the air, whatever the last report was.
            .or_else(|| self.moved_on(&s, false))
            .or_else(|| self.both_moved_on(&s))
            .or_else(|| self.correction_shown(&s, pressed))
        {
            return reading;
        }
        let revisable = self.record.settled()..n;
        let in_progress = s.in_progress(current)
            || revisable.clone().any(|k| s.in_progress(&positions[k]))
            || (self.record.settled()..=n).any(|k| s.in_progress_after_one(&positions[k]));
        // A lift completes no sequence of moves: a piece just lifted is in the air, not
        // captured on a square nobody saw it reach.
        if (in_progress || self.lifted_last) && !pressed {
            // Moves read with a square never shown may be told apart by a later report: the
            // board then shows, without a lift pending, as many moves from the same position
            // whose every arrival it saw.
            if !self.lifted_last
                && let Some(
                    Doubt::UnseenArrival { moves: doubted, .. }
                    | Doubt::StoodUnseen { moves: doubted, .. },
                ) = self.doubts.doubt()
                && let Some(reading) = self.shortest_reconstruction(&s)
                && let Reading::Adopt { from, moves, doubt } = &reading
                && *from + doubted.len() == n
                && moves.len() == doubted.len()
                && !matches!(
                    doubt,
                    Some(
                        Doubt::UnseenArrival { .. }
                            | Doubt::StoodUnseen { .. }
                            | Doubt::Sequences { .. }
                    )
                )
            {
                return reading;
            }
            if let Some(reading) = self.moves_folded_in_frames(&s) {
                return reading;
            }
            return Reading::Unexplained { in_progress };
        }
        self.shortest_reconstruction(&s)
            .map(|reading| self.slide_end_after_press(reading))
            .or_else(|| self.moved_on(&s, true))
            .or_else(|| self.reread_final_moves(&s))
            .or_else(|| {
                (!in_progress)
                    .then(|| {
                        self.held_piece_stood_unseen(&s)
                            .or_else(|| self.reread_held_game(&s))
                            .or_else(|| self.correction_when_held(&s))
                    })
                    .flatten()
            })
            .unwrap_or(Reading::Unexplained { in_progress: false })
    }

    /// On a board that names its pieces and sends whole frames, a frame after which the
    /// board shows the position several moves reach, every square it reported since they
    /// began changed by them: those moves, though the board also fits a move still being
    /// made after one of them (a capture's victim off, the capturer in the hand). A frame
    /// shows only what stood for a scan, a Certabo's only what stood for its vote's frames
    /// (`protocols` 2.2): moves quicker than that, a capture and the recapture on its
    /// square, come in one frame, the square shown with its last piece. A move being made
    /// leaves that square's reports unexplained, and a frame without a lift shows no piece
    /// in the air. Not when the moves are doubted (a piece never shown where they need it):
    /// a hand may then still be on its way.
    fn moves_folded_in_frames(&self, s: &Sensed<'_>) -> Option<Reading> {
        if !(self.config.whole_frames && self.names_pieces()) || self.lifted_last {
            return None;
        }
        let reading = self.shortest_reconstruction(s)?;
        let Reading::Adopt {
            from,
            moves,
            doubt: None,
        } = &reading
        else {
            return None;
        };
        let start = &self.record.game().positions()[*from];
        let reports = self.reports(*from);
        // The frame that reached the start reported its last arrival, no move of these.
        let unexplained = reports
            .unexplained(start, moves)
            .into_iter()
            .any(|sq| reports.time(sq).is_some_and(|t| t > reports.since));
        (moves.len() >= 2 && !unexplained).then_some(reading)
    }

    /// A revision: the board is back at a position whose move no press made final, or one
    /// move from there explains it (a slide that continued, a rook-first castling).
    fn revision(&self, s: &Sensed<'_>) -> Option<Reading> {
        let positions = self.record.game().positions();
        let n = positions.len() - 1;
        let current = &positions[n];
        for k in (self.record.settled()..n).rev() {
            let pos = &positions[k];
            let back_here = s.diff(pos.board()).is_empty();
            let single = choose(&self.evidence_from(s, k).single_moves(pos));
            if !back_here && single.is_none() {
                continue;
            }
            // A move made is not changed for what may be the reply's arrival.
            if !back_here && k + 1 == n && self.last_move_made(k) && self.reply_lands_after(k, s) {
                continue;
            }
            // Both players' moves withdrawn is rarer than both playing on (a repetition,
            // fast play): when as many moves from here explain the board, they are the game,
            // unless one of them is a capture the board never showed (the withdrawal shows
            // every square it needs).
            if n - k >= 2
                && let reports = self.reports(n)
                && let Explanation::Unique(on) = s.sequences(current, n - k, &reports)
                && on.len() == n - k
                && self.capture_not_shown(&on, &reports).is_none()
            {
                return Some(Reading::Adopt {
                    from: n,
                    moves: on,
                    doubt: None,
                });
            }
            if back_here && let Some(again) = self.reconstruction_cut_short(s, k) {
                return Some(again);
            }
            let kept = k - self.record.settled() + usize::from(!back_here);
            if let Some(shorter) = self.fewer_moves_before(s, k, kept) {
                return Some(shorter);
            }
            let replaced = single
                .as_ref()
                .and_then(|(m, _)| self.pressed_move_replaced(k, &[*m]));
            // A lift after the press is the reply begun, or a touch: the pressed move, which
            // explained the board then, is not replaced by a capture of the piece in the air.
            if replaced.is_some() && self.lifted_last {
                return None;
            }
            return Some(match single {
                Some((m, doubt)) if !back_here => match self.one_move_from(k, m, doubt) {
                    Reading::Adopt {
                        from,
                        moves,
                        doubt: None,
                    } => Reading::Adopt {
                        doubt: self.pressed_move_replaced(from, &moves),
                        from,
                        moves,
                    },
                    reading => reading,
                },
                _ => Reading::Adopt {
                    from: k,
                    moves: Vec::new(),
                    doubt: None,
                },
            });
        }
        None
    }

    /// The doubtful reconstruction still open, cut short to the first `k` plies by a report
    /// that took its last moves back, read again from where it began with as many moves: the
    /// late report (a scan that showed an arrival after the press) may be what orders them,
    /// and the same moves in another order can leave the same squares filled.
    fn reconstruction_cut_short(&self, s: &Sensed<'_>, k: usize) -> Option<Reading> {
        let from = self
            .doubts
            .reconstructed_from()
            .filter(|&from| from >= self.record.settled() && from + 2 <= k)?;
        let depth = k - from;
        let start = &self.record.game().positions()[from];
        let Explanation::Unique(moves) =
            s.sequences_within(start, depth..=depth, &self.reports(from))
        else {
            return None;
        };
        let withdrawn = self.moves_since(from);
        (moves[..] != withdrawn[..depth]).then(|| Reading::reread(from, withdrawn, moves))
    }

    /// True when the last move, recorded from position `k`, was made: pressed, standing
    /// longer than a slide pauses, or a capture the board showed landing after the
    /// capturer's lift.
    fn last_move_made(&self, k: usize) -> bool {
        let stood = self
            .record
            .reached_at()
            .get(k + 1)
            .map(|&t| self.now.saturating_sub(t));
        k < self.record.completed()
            || stood.is_some_and(|ms| ms > self.config.moved_on_ms)
            || self.capture_seen_landing(k)
    }

    /// True when the board shows a piece put on a square empty in the game's position, and
    /// may be the next move being made from there (the reply's arrival, reported before its
    /// lift in the scan's order), after the last move, recorded from position `k`: that
    /// move then stands. Not after a capture the board never showed, which a later report
    /// may correct, unless the piece was put down later than its player's press by more
    /// than the board takes to report a landing.
    pub(super) fn reply_lands_after(&self, k: usize, s: &Sensed<'_>) -> bool {
        let current = self.record.game().position();
        let put = s.board.occupied() & !current.board().occupied();
        (!self.capture_unevidenced(k) || self.put_after_landing_overdue(k, put))
            && put.any()
            && s.in_progress(current)
    }

    /// True when every square of `put` was reported after the press of the player who moved
    /// from position `k`, later than a landing made before that press is reported.
    fn put_after_landing_overdue(&self, k: usize, put: Bitboard) -> bool {
        let mover = self.record.game().positions()[k].turn();
        let began = self.record.reached_at().get(k).copied().unwrap_or(0);
        self.clock
            .pressed_at(mover)
            .filter(|&p| p >= began)
            .is_some_and(|p| self.all_reported_after(put, self.landing_reported_by(p)))
    }

    /// A doubt when `moves`, read from position `k`, replace a move its player's press
    /// completed by a move of another piece, or to a square off the recorded move's line: no
    /// late report of a slide explains that, but a touched or knocked piece may (on a board
    /// that senses only occupancy, a touched pawn reads as the capture of it). Not while play
    /// is held: the end of the hold is told anyway.
    pub(super) fn pressed_move_replaced(&self, k: usize, moves: &[Move]) -> Option<Doubt> {
        let recorded = self.record.game().moves().get(k)?.mv;
        let first = *moves.first()?;
        let went_on = first.from() == recorded.from()
            && first.role() == recorded.role()
            && first.from().is_some_and(|from| {
                shakmaty::attacks::between(from, first.to()).contains(recorded.to())
            });
        let told = self.hold.is_held();
        (k < self.record.completed()
            && first != recorded
            && !went_on
            && !first.is_castle()
            && !told)
            .then(|| Doubt::Reread {
                from: k,
                withdrawn: self.moves_since(k),
                moves: moves.to_vec(),
            })
    }

    /// A doubt when `moves`, read from position `k`, put other moves in the place of a
    /// recorded move whose piece the board showed standing on its square longer than a paused
    /// slide stands ([`MachineConfig::moved_on_ms`](super::MachineConfig::moved_on_ms)):
    /// released there, the move was made (4.7), whether or not its player pressed the clock,
    /// and only the arbiter can say it was another (8.5.3). Not when the moves put there
    /// begin with a castling, whose rook or king first is told on its own (4.4.2).
    pub(super) fn released_move_replaced(&self, k: usize, moves: &[Move]) -> Option<Doubt> {
        if k >= self.record.game().plies() {
            return None;
        }
        let withdrawn = self.moves_since(k);
        let kept = withdrawn
            .iter()
            .zip(moves)
            .take_while(|(w, m)| w == m)
            .count();
        let replacing = moves.get(kept).is_some_and(|m| !m.is_castle());
        let released = (kept..withdrawn.len()).any(|i| self.stood_released(k + i));
        (replacing && released).then(|| Doubt::Reread {
            from: k + kept,
            withdrawn: withdrawn[kept..].to_vec(),
            moves: moves[kept..].to_vec(),
        })
    }

    /// True when the piece of the recorded move from position `k` stood on its square, as
    /// the board reported it, longer than a paused slide stands: from when the move was read
    /// to the board's next report of that square, or to now.
    fn stood_released(&self, k: usize) -> bool {
        let (Some(played), Some(&read)) = (
            self.record.game().moves().get(k),
            self.record.reached_at().get(k + 1),
        ) else {
            return false;
        };
        let mover = self.record.game().positions()[k].turn();
        let to = match played.mv.castling_side() {
            Some(side) => side.king_to(mover),
            None => played.mv.to(),
        };
        let left = [self.square_reports.before(to), self.square_reports.last(to)]
            .into_iter()
            .flatten()
            .filter(|&t| t > read)
            .min()
            .unwrap_or(self.now);
        left.saturating_sub(read) > self.config.moved_on_ms
    }

    /// `s` with the evidence of captures a reading from position `k` has
    /// ([`Machine::capture_evidence`]).
    pub(super) fn evidence_from<'a>(&self, s: &Sensed<'a>, k: usize) -> Sensed<'a> {
        Sensed {
            placed: self.capture_evidence(k),
            ..*s
        }
    }

    /// After several move sequences explained a board, the next move tells them apart: when
    /// exactly one of them is followed by a legal move that leaves the board as it now is,
    /// that sequence and the move are the game.
    pub(super) fn resolve_doubt(&self, s: &Sensed<'_>) -> Option<Reading> {
        let Some(Doubt::Sequences { from, seqs, .. }) = self.doubts.doubt() else {
            return None;
        };
        let positions = self.record.game().positions();
        if *from < self.record.settled() || *from >= positions.len() {
            return None;
        }
        let mut explaining = Vec::new();
        for seq in seqs {
            let mut pos = positions[*from].clone();
            for &m in seq {
                pos.play_unchecked(m);
            }
            if s.diff(pos.board()).is_empty() {
                return None;
            }
            if let [(m, _)] = s.single_moves(&pos)[..] {
                let mut moves = seq.clone();
                moves.push(m);
                explaining.push(moves);
            }
        }
        match explaining.len() {
            1 => Some(Reading::Adopt {
                from: *from,
                moves: explaining.remove(0),
                doubt: None,
            }),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests;
