//! Reading the board: what explains what it shows, relative to the game.

use shakmaty::{Bitboard, Chess, Color, Move, Piece, Position, Role, attacks};

use super::Machine;
use super::capture_choice::likeliest_capture_sequence;
use super::doubts::{Doubt, squares_of_all};
use crate::act::search::{Explanation, Reports, Sensed, mover_at, squares_of};
use crate::board::Millis;

/// What the board shows, relative to the game.
#[derive(Debug, Clone)]
pub(super) enum Reading {
    /// Exactly the game position.
    Current,
    /// The game from ply `from` on is `moves` (a revision when `from` is before the end).
    Adopt {
        from: usize,
        moves: Vec<Move>,
        doubt: Option<Doubt>,
    },
    /// Nothing explains it; `in_progress` when it may be a move still being made.
    Unexplained { in_progress: bool },
}

impl Reading {
    /// The moves recorded from ply `from` on (`withdrawn`) read again as `moves`, and the
    /// arbiter told (8.5.3).
    pub(super) fn reread(from: usize, withdrawn: Vec<Move>, moves: Vec<Move>) -> Reading {
        Reading::Adopt {
            from,
            moves: moves.clone(),
            doubt: Some(Doubt::Reread {
                from,
                withdrawn,
                moves,
            }),
        }
    }
}

/// What the report times say of a reconstructed sequence of moves ([`Reports::overlap`],
/// [`Reports::finished_out_of_order`]).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Timing {
    pub(super) overlap: Millis,
    pub(super) out_of_order: Millis,
}

impl Timing {
    /// The timing of `seq` played from `start`.
    fn of(reports: &Reports<'_>, start: &Chess, seq: &[Move]) -> Timing {
        Timing {
            overlap: reports.overlap(start, seq),
            out_of_order: reports.finished_out_of_order(start, seq),
        }
    }
}

/// Picks the move among single-move explanations: one, or a queen promotion among the
/// promotions an occupancy-only board cannot tell apart.
pub(super) fn choose(singles: &[(Move, Chess)]) -> Option<(Move, Option<Doubt>)> {
    match singles {
        [] => None,
        [(m, _)] => Some((*m, None)),
        _ => singles
            .iter()
            .find(|(m, _)| m.promotion() == Some(Role::Queen))
            .map(|(m, _)| (*m, Some(Doubt::PromotionPiece))),
    }
}

/// Of sequences that differ only in what their pawns promoted to, the one that promotes
/// every pawn to a queen: what an occupancy-only board records when it cannot tell.
fn queen_promotions(seqs: &[Vec<Move>]) -> Option<Vec<Move>> {
    let queens = crate::act::search::only(seqs.iter().filter(|seq| {
        seq.iter()
            .all(|m| m.promotion().is_none_or(|role| role == Role::Queen))
    }))?;
    // Whether a move captures, not what: the piece a pawn promoted to may be taken at once.
    let same_but_promotion = |a: &Move, b: &Move| {
        (a.from(), a.to(), a.role(), a.is_capture(), a.is_promotion())
            == (b.from(), b.to(), b.role(), b.is_capture(), b.is_promotion())
    };
    let differ_only_there = |seq: &Vec<Move>| {
        seq.len() == queens.len()
            && seq
                .iter()
                .zip(queens)
                .all(|(a, b)| same_but_promotion(a, b))
    };
    (queens.iter().any(|m| m.is_promotion()) && seqs.iter().all(differ_only_there))
        .then(|| queens.clone())
}

/// Of several sequences that leave the board as it is, the one that leaves fewer of the
/// board's reports unexplained than every other (a double step whose square the board
/// reported, against a single step): a square reported changed that no move touched needs a
/// hand the sequence does not account for. Still ambiguous when no one sequence does.
fn most_reports_explained(
    start: &Chess,
    seqs: Vec<Vec<Move>>,
    reports: &Reports<'_>,
) -> Explanation {
    let unexplained: Vec<usize> = seqs
        .iter()
        .map(|seq| reports.unexplained(start, seq).count())
        .collect();
    let Some(&fewest) = unexplained.iter().min() else {
        return Explanation::Ambiguous(seqs);
    };
    let mut best = seqs
        .iter()
        .zip(&unexplained)
        .filter(|&(_, &u)| u == fewest)
        .map(|(seq, _)| seq);
    match (best.next(), best.next()) {
        (Some(seq), None) => Explanation::Unique(seq.clone()),
        _ => Explanation::Ambiguous(seqs),
    }
}

pub(super) fn common_prefix(seqs: &[Vec<Move>]) -> Vec<Move> {
    let Some(first) = seqs.first() else {
        return Vec::new();
    };
    let len = (0..first.len())
        .take_while(|&i| seqs.iter().all(|s| s.get(i) == Some(&first[i])))
        .count();
    first[..len].to_vec()
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

    /// On a board that senses only occupancy, a quick reply nobody pressed for, followed by
    /// one more move, when the board then shows instead one move of the reply's opponent
    /// by the piece his move before it lifted: the reply was a piece his hand knocked over
    /// and set back (7.4), and that one move the game. Three moves and one leave the same
    /// squares occupied; a hand does not answer that fast, and the answer was not pressed.
    fn knocked_reply_set_back(&self, s: &Sensed<'_>) -> Option<Reading> {
        let n = self.game.plies();
        let (reply, _) = self.unpressed_reply.filter(|&(ply, _)| ply == n)?;
        let k = reply.checked_sub(2)?;
        if s.identifies || k < self.settled || self.quick_reply.is_none() {
            return None;
        }
        let lifted = self.game.moves()[k].mv.from();
        let (m, doubt) = choose(&s.single_moves(&self.game.positions()[k]))?;
        (doubt.is_none() && m.from() == lifted).then(|| Reading::Adopt {
            from: k,
            moves: vec![m],
            doubt: None,
        })
    }

    /// [`Machine::read`] among the moves not yet final.
    pub(super) fn read_within(&self, pressed: bool) -> Reading {
        let s = self.sensed();
        let positions = self.game.positions();
        let n = positions.len() - 1;
        let current = &positions[n];
        if s.diff(current.board()).is_empty() {
            return self.capture_landing_shown(&s).unwrap_or(Reading::Current);
        }
        if let Some((m, doubt)) = choose(&s.single_moves(current)) {
            return self
                .knocked_reply_set_back(&s)
                .unwrap_or_else(|| self.one_move_from(n, m, doubt));
        }
        if let Some(reading) = self
            .resolve_doubt(&s)
            .or_else(|| self.revision(&s))
            // The last move's piece standing on a further square, and nothing else changed:
            // no piece is in the air, whatever the last report was.
            .or_else(|| self.moved_on(&s, false))
            .or_else(|| self.both_moved_on(&s))
            .or_else(|| self.knight_promotion_shown(&s))
            .or_else(|| self.capture_choice_corrected(&s, pressed))
        {
            return reading;
        }
        let revisable = self.settled..n;
        let in_progress = s.in_progress(current)
            || revisable.clone().any(|k| s.in_progress(&positions[k]))
            || (self.settled..=n).any(|k| s.in_progress_after_one(&positions[k]));
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
                ) = &self.doubt
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
                            .or_else(|| self.capture_choice_reread_when_held(&s))
                    })
                    .flatten()
            })
            .unwrap_or(Reading::Unexplained { in_progress: false })
    }

    /// A game held on a board nothing else explains, read on when the first piece moved
    /// from where the game stands stood on a square for less than a scan, unreported, and
    /// its player's next move took it on from there, off the line it came along (a piece
    /// put down, the clock pressed, and moved on at once in fast play): the one such
    /// sequence of moves, with the unseen arrival doubted.
    fn held_piece_stood_unseen(&self, s: &Sensed<'_>) -> Option<Reading> {
        self.held?;
        let n = self.game.plies();
        // A capture read at a press with nothing shown on its square, and the reply after
        // it, may have been that piece put down elsewhere and the reply (both show the same).
        let capture_not_shown = n.checked_sub(2).filter(|&k| {
            k + super::REREAD_PLIES >= self.settled
                && self.game.moves()[k].mv.is_capture()
                && self.reports(k).time(self.game.moves()[k].mv.to()).is_none()
        });
        std::iter::once(n)
            .chain(capture_not_shown)
            .find_map(|k| self.piece_stood_unseen_from(k, s))
    }

    /// [`Machine::held_piece_stood_unseen`] for the moves from position `k` on.
    fn piece_stood_unseen_from(&self, k: usize, s: &Sensed<'_>) -> Option<Reading> {
        let n = k;
        let start = &self.game.positions()[n];
        let reports = self.reports(n);
        let depth = self.reconstruction_depth(n);
        let Explanation::Unique(seq) = s.sequences_with_unseen_stay(start, depth, &reports) else {
            return None;
        };
        let stood = seq[0].to();
        let unreported = reports.time(stood).is_none()
            && reports.unseen_arrivals(start, &seq) == Bitboard::from(stood);
        // A square on the line the piece went on along is one it slid over, not stood on.
        let moved_on = seq
            .iter()
            .skip(2)
            .step_by(2)
            .find(|m| m.from() == Some(stood))
            .is_some_and(|on| {
                seq[0]
                    .from()
                    .is_some_and(|from| !attacks::between(from, on.to()).contains(stood))
            });
        // The reply was made after the piece stood, begun a hand's answer after it left, and
        // its player pressed the clock after it began: two moves, not a piece knocked by one
        // hand.
        let replier = !start.turn();
        let answered_after = seq[0]
            .from()
            .and_then(|sq| reports.time(sq))
            .is_some_and(|left| {
                squares_of(seq[1])
                    .into_iter()
                    .filter_map(|sq| reports.time(sq))
                    .min()
                    .is_some_and(|reply| {
                        reply >= left + self.config.two_hands_threshold_ms
                            && self.pressed_at[replier as usize].is_some_and(|p| p > reply)
                    })
            });
        if !(unreported && moved_on && answered_after) {
            return None;
        }
        if n < self.game.plies() {
            let withdrawn = self.moves_since(n);
            return (seq.first() != withdrawn.first()).then(|| Reading::reread(n, withdrawn, seq));
        }
        Some(Reading::Adopt {
            from: n,
            moves: seq.clone(),
            doubt: Some(Doubt::StoodUnseen {
                from: n,
                moves: seq,
                stood,
            }),
        })
    }

    /// On a board that senses only occupancy, `m`, a capture from the position as recorded
    /// whose landing the board did not show, is the last resort of a press: the last move,
    /// still open, and a different reply to it may explain the board with every arrival
    /// seen. That one sequence, when the reports pick it, is read instead.
    pub(super) fn every_report_a_step(&self, s: &Sensed<'_>, m: Move) -> Option<Reading> {
        let n = self.game.plies();
        if self.config.identifies_pieces
            || !m.is_capture()
            || n == 0
            || n - 1 < self.settled.saturating_sub(super::REREAD_PLIES)
        {
            return None;
        }
        let k = n - 1;
        let start = &self.game.positions()[k];
        let reports = self.reports(k);
        let Explanation::Unique(seq) = s.sequences_within(start, 2..=2, &reports) else {
            return None;
        };
        let withdrawn = self.moves_since(k);
        // A capture whose square was last reported before its piece left shows no landing
        // either: the reading is no better than `m`.
        if seq == [withdrawn[0], m]
            || reports.unseen_arrivals(start, &seq).any()
            || self.capture_not_shown(&seq, &reports).is_some()
        {
            return None;
        }
        if k < self.settled {
            // A press made the last move final on the board as it was reported then.
            return Some(Reading::reread(k, withdrawn, seq));
        }
        let overlap = reports.overlap(start, &seq);
        Some(self.reconstructed(k, seq, overlap, &reports))
    }

    /// A revision: the board is back at a position whose move no press made final, or one
    /// move from there explains it (a slide that continued, a rook-first castling).
    fn revision(&self, s: &Sensed<'_>) -> Option<Reading> {
        let positions = self.game.positions();
        let n = positions.len() - 1;
        let current = &positions[n];
        for k in (self.settled..n).rev() {
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
            let kept = k - self.settled + usize::from(!back_here);
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
            .reconstructed_from
            .filter(|&from| from >= self.settled && from + 2 <= k)?;
        let depth = k - from;
        let start = &self.game.positions()[from];
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
            .reached_at
            .get(k + 1)
            .map(|&t| self.now.saturating_sub(t));
        k < self.completed
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
        let current = self.game.position();
        let put = s.board.occupied() & !current.board().occupied();
        (!self.capture_unevidenced(k) || self.put_after_landing_overdue(k, put))
            && put.any()
            && s.in_progress(current)
    }

    /// True when every square of `put` was reported after the press of the player who moved
    /// from position `k`, later than a landing made before that press is reported.
    fn put_after_landing_overdue(&self, k: usize, put: Bitboard) -> bool {
        let mover = self.game.positions()[k].turn();
        let began = self.reached_at.get(k).copied().unwrap_or(0);
        self.pressed_at[mover as usize]
            .filter(|&p| p >= began)
            .is_some_and(|p| self.all_reported_after(put, self.landing_reported_by(p)))
    }

    /// A doubt when `moves`, read from position `k`, replace a move its player's press
    /// completed by a move of another piece, or to a square off the recorded move's line: no
    /// late report of a slide explains that, but a touched or knocked piece may (on a board
    /// that senses only occupancy, a touched pawn reads as the capture of it). Not while play
    /// is held: the end of the hold is told anyway.
    pub(super) fn pressed_move_replaced(&self, k: usize, moves: &[Move]) -> Option<Doubt> {
        let recorded = self.game.moves().get(k)?.mv;
        let first = *moves.first()?;
        let went_on = first.from() == recorded.from()
            && first.role() == recorded.role()
            && first.from().is_some_and(|from| {
                shakmaty::attacks::between(from, first.to()).contains(recorded.to())
            });
        let told = self.held.is_some();
        (k < self.completed && first != recorded && !went_on && !first.is_castle() && !told).then(
            || Doubt::Reread {
                from: k,
                withdrawn: self.moves_since(k),
                moves: moves.to_vec(),
            },
        )
    }

    /// `s` with the evidence of captures a reading from position `k` has
    /// ([`Machine::capture_evidence`]).
    pub(super) fn evidence_from<'a>(&self, s: &Sensed<'a>, k: usize) -> Sensed<'a> {
        Sensed {
            placed: self.capture_evidence(k),
            ..*s
        }
    }

    /// The shortest sequence of missed moves that explains the board, counted from the
    /// oldest revisable position; on a tie the recorded moves are kept. Sequences that
    /// several move orders explain are adopted up to their common part, with a doubt.
    fn shortest_reconstruction(&self, s: &Sensed<'_>) -> Option<Reading> {
        let positions = self.game.positions();
        let n = positions.len() - 1;
        let mut best: Option<(usize, Reading, Timing)> = None;
        // Moves read across a gap in the link are a guess at an order nobody saw: a board
        // that no longer fits them is read again from the gap's start first, where as many
        // moves explain it as from any position the guess reached.
        // The moves read before the link went down were seen made, in their order: they are
        // read again only when nothing from the gap's start on explains the board.
        let gap_start = self.gap_start();
        let starts: Vec<usize> = gap_start
            .into_iter()
            .chain(std::iter::once(n).chain((self.settled..n).rev()))
            .enumerate()
            .filter(|&(i, k)| i == 0 || Some(k) != gap_start)
            .map(|(_, k)| k)
            .collect();
        let seen_before_gap = |k: usize| gap_start.is_some_and(|g| k < g);
        let (after_gap, before_gap): (Vec<usize>, Vec<usize>) =
            starts.into_iter().partition(|&k| !seen_before_gap(k));
        for k in after_gap.into_iter().chain(before_gap) {
            if seen_before_gap(k) && best.is_some() {
                break;
            }
            let kept = k - self.settled;
            let limit = best.as_ref().map_or(usize::MAX, |(total, ..)| total - 1);
            let depth = self.reconstruction_depth(k).min(limit.saturating_sub(kept));
            if depth < 2 {
                continue;
            }
            let reports = self.reports(k);
            let explanation = match s.sequences(&positions[k], depth, &reports) {
                Explanation::Ambiguous(seqs) => match self.promotion_seen(reports.since, seqs) {
                    Explanation::Ambiguous(seqs) => {
                        most_reports_explained(&positions[k], seqs, &reports)
                    }
                    explanation => explanation,
                },
                explanation => explanation,
            };
            // Across a gap in the link the position is certain and the order is not: the
            // likeliest order is recorded, the game not held.
            let explanation = match explanation {
                Explanation::Ambiguous(seqs) if self.across_gap(k) => {
                    let reading = self.order_across_gap(k, seqs, &reports);
                    let len = match &reading {
                        Reading::Adopt { moves, .. } => moves.len(),
                        _ => 0,
                    };
                    best = Some((kept + len, reading, Timing::default()));
                    continue;
                }
                explanation => explanation,
            };
            let (len, reading, timing) = match explanation {
                Explanation::None => continue,
                Explanation::Unique(seq) => {
                    let timing = Timing::of(&reports, &positions[k], &seq);
                    if best
                        .as_ref()
                        .is_some_and(|(.., longer)| self.overlaps_too_much(&timing, longer))
                    {
                        continue;
                    }
                    (
                        seq.len(),
                        self.reconstructed(k, seq, timing.overlap, &reports),
                        timing,
                    )
                }
                Explanation::Ambiguous(seqs) => {
                    let likeliest = (!self.config.identifies_pieces)
                        .then(|| {
                            let arrived = k.checked_sub(1).map(|i| self.game.moves()[i].mv.to());
                            likeliest_capture_sequence(&positions[k], arrived, &seqs)
                        })
                        .flatten();
                    let (len, moves, doubt) = match likeliest {
                        Some((moves, others)) => (
                            moves.len(),
                            moves.clone(),
                            Doubt::CaptureSequence {
                                from: k,
                                moves,
                                others,
                            },
                        ),
                        None => (
                            seqs[0].len(),
                            common_prefix(&seqs),
                            Doubt::Sequences {
                                from: k,
                                seqs,
                                more: false,
                            },
                        ),
                    };
                    let doubt = Some(doubt);
                    (
                        len,
                        Reading::Adopt {
                            from: k,
                            moves,
                            doubt,
                        },
                        Timing::default(),
                    )
                }
                // The search stopped at its limit: the sequences it kept are named, and only
                // what they share is recorded, since those it did not keep fit as well.
                Explanation::Partial(seqs) => (
                    seqs[0].len(),
                    Reading::Adopt {
                        from: k,
                        moves: common_prefix(&seqs),
                        doubt: Some(Doubt::Sequences {
                            from: k,
                            seqs,
                            more: true,
                        }),
                    },
                    Timing::default(),
                ),
            };
            best = Some((kept + len, reading, timing));
        }
        best.map(|(_, reading, _)| reading)
    }

    /// True when a shorter reconstruction (`shorter`) is not taken over a `longer` one: its
    /// moves overlap (a move begun before the one before it was over) by more than a hand's
    /// answer beyond the longer one's, so the piece stood where the longer one leaves it.
    /// Unless the longer one has a move seen finished before the move it answers, which
    /// hands do not do: the longer one is then as doubtful, and only an overlap beyond what
    /// a scan can reorder speaks against the shorter (a scanning board reports a blitz
    /// reply's start before the end of the move it answers).
    fn overlaps_too_much(&self, shorter: &Timing, longer: &Timing) -> bool {
        let beyond = |ms: Millis| shorter.overlap > longer.overlap.saturating_add(ms);
        let answer = self.config.two_hands_threshold_ms;
        beyond(answer)
            && (longer.out_of_order <= shorter.out_of_order
                || beyond(answer.saturating_add(self.config.report_reorder_ms)))
    }

    /// The reading of `seq`, the one sequence of moves from position `k` that explains the
    /// board, doubted when its moves overlap in time (`overlap`, from
    /// [`Reports::overlap`]) or a square it needs reached was never reported.
    pub(super) fn reconstructed(
        &self,
        k: usize,
        seq: Vec<Move>,
        overlap: Millis,
        reports: &Reports<'_>,
    ) -> Reading {
        let start = &self.game.positions()[k];
        let unseen = reports.unseen_arrivals(start, &seq);
        let out_of_order = || reports.begun_out_of_order(start, &seq);
        let doubt = if overlap > 0 || self.begun_before_press(start, &seq, reports) {
            Some(Doubt::Overlapping {
                rewrites: self.rewrites_recorded(k, &seq),
                moves: seq.clone(),
                ms: overlap,
            })
        } else if unseen.any() {
            Some(Doubt::UnseenArrival {
                moves: seq.clone(),
                squares: unseen,
                pressed: self.arrivals_pressed_for(k, &seq),
            })
        } else if let ms = out_of_order()
            && ms > self.config.report_reorder_ms
        {
            Some(Doubt::LiftedOutOfOrder {
                moves: seq.clone(),
                ms,
            })
        } else {
            let queened = seq.iter().any(|m| m.promotion() == Some(Role::Queen));
            (!self.config.identifies_pieces && queened)
                .then_some(Doubt::PromotionPiece)
                // The first move takes a pawn that has just stepped: it may have gone on two
                // squares and been taken en passant unseen, as when read alone.
                .or_else(|| {
                    (k == self.game.plies())
                        .then(|| self.unsampled_double_step(seq[0]))
                        .flatten()
                })
                .or_else(|| {
                    self.capture_not_shown(&seq, reports)
                        .map(|capture| Doubt::CaptureNotShown {
                            moves: seq.clone(),
                            capture,
                        })
                })
                // A move its player pressed for, replaced by another of his: the arbiter is
                // told, as when one move is read again.
                .or_else(|| self.pressed_move_replaced(k, &seq))
        };
        Reading::Adopt {
            from: k,
            moves: seq,
            doubt,
        }
    }

    /// On a board that senses only occupancy, the capture of `seq` whose square the board
    /// has not reported since the moves began (at most the arrival that began them, before
    /// the capturing piece was reported lifted), and that no later move of `seq` changes:
    /// nothing shows that it landed there.
    pub(super) fn capture_not_shown(&self, seq: &[Move], reports: &Reports<'_>) -> Option<Move> {
        if self.config.identifies_pieces {
            return None;
        }
        seq.iter().enumerate().find_map(|(i, &m)| {
            let Move::Normal {
                from,
                to,
                capture: Some(_),
                ..
            } = m
            else {
                return None;
            };
            let later = squares_of_all(&seq[i + 1..]);
            if later.contains(to) {
                return None;
            }
            if reports.time(to).is_none() {
                return Some(m);
            }
            // A later move on the capturer's square hides when it was lifted.
            let lifted = reports.time(from).filter(|_| !later.contains(from))?;
            reports
                .time(to)
                .is_some_and(|t| t == reports.since && t < lifted)
                .then_some(m)
        })
    }

    /// On a board that senses only occupancy, true when a move of `seq` (read from `start`)
    /// began in the same report as the arrival of a move before it, whose player has not
    /// pressed the clock since: a hand that answers does not start within one scan of the
    /// move it answers, before its press, but a knocked piece moves with the hand that
    /// knocks it, and the board shows a knocked piece as a move.
    fn begun_before_press(&self, start: &Chess, seq: &[Move], reports: &Reports<'_>) -> bool {
        if self.config.identifies_pieces {
            return false;
        }
        reports
            .begun_at_an_arrival(start, seq)
            .is_some_and(|(i, arrived)| {
                self.pressed_at[mover_at(start, i) as usize].is_none_or(|p| p < arrived)
            })
    }

    /// A reading from a revisable position before `k` that keeps fewer moves than `kept`,
    /// the revisable moves a reading from `k` keeps: moves read from overlapping actions
    /// (a piece knocked on while the opponent moved) may be fewer real moves once the
    /// knocked piece is back.
    pub(super) fn fewer_moves_before(
        &self,
        s: &Sensed<'_>,
        k: usize,
        kept: usize,
    ) -> Option<Reading> {
        let positions = self.game.positions();
        (self.settled..k).find_map(|j| {
            let depth = kept.checked_sub(j - self.settled + 1)?;
            if depth == 0 {
                return None;
            }
            if let Some((m, doubt)) = choose(&self.evidence_from(s, j).single_moves(&positions[j]))
            {
                return Some(self.one_move_from(j, m, doubt));
            }
            if depth < 2 {
                return None;
            }
            let reports = self.reports(j);
            match s.sequences(&positions[j], depth, &reports) {
                Explanation::Unique(seq) => {
                    let overlap = reports.overlap(&positions[j], &seq);
                    Some(self.reconstructed(j, seq, overlap, &reports))
                }
                _ => None,
            }
        })
    }

    /// Sequences that differ only in what their pawns promoted to are told apart by what
    /// the board reported on the promotion squares since `since`: a DGT board names the
    /// piece put there, even when it was taken again before the next scan.
    pub(super) fn promotion_seen(&self, since: Millis, seqs: Vec<Vec<Move>>) -> Explanation {
        let seen = |m: &Move| match m.promotion() {
            None => true,
            Some(role) => {
                // A piece of the promoting side: the opponent's back rank is its goal.
                let color = Color::from_white(m.to().rank() == Color::Black.backrank());
                self.named_on(m.to(), Piece { color, role }, since)
            }
        };
        let mut matching = seqs.iter().filter(|seq| seq.iter().all(seen));
        match (matching.next(), matching.next()) {
            (Some(seq), None) if seqs.iter().any(|q| q.iter().any(|m| m.is_promotion())) => {
                Explanation::Unique(seq.clone())
            }
            _ if !self.config.identifies_pieces => match queen_promotions(&seqs) {
                Some(seq) => Explanation::Unique(seq),
                None => Explanation::Ambiguous(seqs),
            },
            _ => Explanation::Ambiguous(seqs),
        }
    }

    /// The moves recorded from position `k` on.
    pub(super) fn moves_since(&self, k: usize) -> Vec<Move> {
        self.game.moves()[k..].iter().map(|p| p.mv).collect()
    }

    /// The board's reports that belong to moves made from position `k` on.
    pub(super) fn reports(&self, k: usize) -> Reports<'_> {
        let since = self.reached_at.get(k).copied().unwrap_or(0);
        Reports {
            times: &self.last_seen,
            previous: &self.seen_before,
            undated: self.undated,
            since,
            slack: self.config.report_reorder_ms,
            outage: self.outage.is_some_and(|o| o >= since),
            placed: self
                .config
                .identifies_pieces
                .then_some(self.placements.as_slice()),
            whole_frames: self.config.whole_frames,
            pressed: self.pressed_at,
        }
    }

    /// After several move sequences explained a board, the next move tells them apart: when
    /// exactly one of them is followed by a legal move that leaves the board as it now is,
    /// that sequence and the move are the game.
    pub(super) fn resolve_doubt(&self, s: &Sensed<'_>) -> Option<Reading> {
        let Some(Doubt::Sequences { from, seqs, .. }) = &self.doubt else {
            return None;
        };
        let positions = self.game.positions();
        if *from < self.settled || *from >= positions.len() {
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
