//! Reconstructions: the sequences of moves nobody saw made that explain the board, read
//! from a position still open, and the doubts their report times give them.

use shakmaty::{Bitboard, Chess, Color, Move, Piece, Position, Role, attacks};

use super::Machine;
use super::doubt::{Doubt, squares_of_all};
use super::reading::{Reading, Timing, choose, common_prefix, most_reports_explained};
use crate::act::search::{Explanation, Reports, Sensed, mover_at, rank_orders, squares_of};
use crate::board::Millis;

impl Machine {
    /// A game held on a board nothing else explains, read on when the first piece moved
    /// from where the game stands stood on a square for less than a scan, unreported, and
    /// its player's next move took it on from there, off the line it came along (a piece
    /// put down, the clock pressed, and moved on at once in fast play): the one such
    /// sequence of moves, with the unseen arrival doubted.
    pub(super) fn held_piece_stood_unseen(&self, s: &Sensed<'_>) -> Option<Reading> {
        self.hold.squares()?;
        let n = self.record.game().plies();
        // A capture read at a press with nothing shown on its square, and the reply after
        // it, may have been that piece put down elsewhere and the reply (both show the same).
        let capture_not_shown = n.checked_sub(2).filter(|&k| {
            k + super::REREAD_PLIES >= self.record.settled()
                && self.record.game().moves()[k].mv.is_capture()
                && self
                    .reports(k)
                    .time(self.record.game().moves()[k].mv.to())
                    .is_none()
        });
        std::iter::once(n)
            .chain(capture_not_shown)
            .find_map(|k| self.piece_stood_unseen_from(k, s))
    }

    /// [`Machine::held_piece_stood_unseen`] for the moves from position `k` on.
    fn piece_stood_unseen_from(&self, k: usize, s: &Sensed<'_>) -> Option<Reading> {
        let n = k;
        let start = &self.record.game().positions()[n];
        let reports = self.reports(n);
        let depth = self.reconstruction_depth(n);
        // A board that sends whole frames, with no clock pressed in the game, times neither
        // the stay nor the reply: both come in one frame, and a voting board (Certabo,
        // `protocols` 2.2) shows no stay shorter than its vote. Where the piece stood is then
        // not known either: the likeliest is read, the others named (8.5.3).
        let untimed =
            self.config.whole_frames && self.names_pieces() && self.clock.presses() == [None, None];
        let (seq, others) = match s.sequences_with_unseen_stay(start, depth, &reports) {
            Explanation::Unique(seq) => (seq, Vec::new()),
            Explanation::Ambiguous(seqs) if untimed => {
                let mut ranked = rank_orders(start, seqs, &reports, &self.moves_since(n));
                (ranked.remove(0), ranked)
            }
            _ => return None,
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
                            && self.clock.pressed_at(replier).is_some_and(|p| p > reply)
                    })
            });
        if !(unreported && moved_on && (answered_after || untimed)) {
            return None;
        }
        if n < self.record.game().plies() {
            let withdrawn = self.moves_since(n);
            return (seq.first() != withdrawn.first()).then(|| Reading::reread(n, withdrawn, seq));
        }
        let doubt = if others.is_empty() {
            Doubt::StoodUnseen {
                from: n,
                moves: seq.clone(),
                stood,
            }
        } else {
            Doubt::Order {
                from: n,
                moves: seq.clone(),
                others,
            }
        };
        Some(Reading::Adopt {
            from: n,
            moves: seq,
            doubt: Some(doubt),
        })
    }

    /// On a board that senses only occupancy, `m`, a capture from the position as recorded
    /// whose landing the board did not show, is the last resort of a press: the last move,
    /// still open, and a different reply to it may explain the board with every arrival
    /// seen. That one sequence, when the reports pick it, is read instead.
    pub(super) fn every_report_a_step(&self, s: &Sensed<'_>, m: Move) -> Option<Reading> {
        let n = self.record.game().plies();
        if !m.is_capture()
            || n == 0
            || n - 1 < self.record.settled().saturating_sub(super::REREAD_PLIES)
        {
            return None;
        }
        let k = n - 1;
        let start = &self.record.game().positions()[k];
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
        if k < self.record.settled() {
            // A press made the last move final on the board as it was reported then.
            return Some(Reading::reread(k, withdrawn, seq));
        }
        let overlap = reports.overlap(start, &seq);
        Some(self.reconstructed(k, seq, overlap, &reports))
    }

    /// The shortest sequence of missed moves that explains the board, counted from the
    /// oldest revisable position; on a tie the recorded moves are kept. Sequences that
    /// several move orders explain are adopted up to their common part, with a doubt.
    pub(super) fn shortest_reconstruction(&self, s: &Sensed<'_>) -> Option<Reading> {
        let positions = self.record.game().positions();
        let mut best: Option<(usize, Reading, Timing)> = None;
        let (starts, gap_start) = self.reconstruction_starts();
        let seen_before_gap = |k: usize| gap_start.is_some_and(|g| k < g);
        for k in starts {
            if seen_before_gap(k) && best.is_some() {
                break;
            }
            let kept = k - self.record.settled();
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
            // likeliest order is recorded, the game not held. So it is when frames showed the
            // same moves at once ([`Machine::frames_hid_order`]).
            let explanation = match explanation {
                Explanation::Ambiguous(seqs)
                    if self.across_gap(k) || self.frames_hid_order(&seqs) =>
                {
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
            let longer = best.as_ref().map(|(.., timing)| timing);
            if let Some((len, reading, timing)) =
                self.reconstruction_from(k, explanation, &reports, longer)
            {
                best = Some((kept + len, reading, timing));
            }
        }
        best.map(|(_, reading, _)| reading)
    }

    /// True when `seqs`, the orders that explain a board that names its pieces and sends
    /// whole frames, are all the same moves: the frames showed them at once, quicker than
    /// one frame apart, so their position is certain and only their order is not.
    fn frames_hid_order(&self, seqs: &[Vec<Move>]) -> bool {
        let Some(first) = seqs.first() else {
            return false;
        };
        self.config.whole_frames
            && self.names_pieces()
            && seqs
                .iter()
                .all(|seq| seq.len() == first.len() && first.iter().all(|m| seq.contains(m)))
    }

    /// The positions a reconstruction may start from, in the order they are tried, and
    /// where the last gap in the link began, if the game is read across one. Moves read
    /// across a gap in the link are a guess at an order nobody saw: a board that no longer
    /// fits them is read again from the gap's start first, where as many moves explain it
    /// as from any position the guess reached. The moves read before the link went down
    /// were seen made, in their order: they are read again only when nothing from the
    /// gap's start on explains the board.
    fn reconstruction_starts(&self) -> (Vec<usize>, Option<usize>) {
        let n = self.record.game().plies();
        let gap_start = self.gap_start();
        let starts: Vec<usize> = gap_start
            .into_iter()
            .chain(std::iter::once(n).chain((self.record.settled()..n).rev()))
            .enumerate()
            .filter(|&(i, k)| i == 0 || Some(k) != gap_start)
            .map(|(_, k)| k)
            .collect();
        let seen_before_gap = |k: usize| gap_start.is_some_and(|g| k < g);
        let (after_gap, before_gap): (Vec<usize>, Vec<usize>) =
            starts.into_iter().partition(|&k| !seen_before_gap(k));
        (after_gap.into_iter().chain(before_gap).collect(), gap_start)
    }

    /// The reading of what the search from position `k` found, with its length and timing;
    /// none when it found nothing, or one sequence that overlaps too much beside the
    /// `longer` reconstruction found before ([`Machine::overlaps_too_much`]).
    fn reconstruction_from(
        &self,
        k: usize,
        explanation: Explanation,
        reports: &Reports<'_>,
        longer: Option<&Timing>,
    ) -> Option<(usize, Reading, Timing)> {
        let start = &self.record.game().positions()[k];
        Some(match explanation {
            Explanation::None => return None,
            Explanation::Unique(seq) => {
                let timing = Timing::of(reports, start, &seq);
                if longer.is_some_and(|longer| self.overlaps_too_much(&timing, longer)) {
                    return None;
                }
                (
                    seq.len(),
                    self.reconstructed(k, seq, timing.overlap, reports),
                    timing,
                )
            }
            Explanation::Ambiguous(seqs) => {
                let likeliest = self.capture_told_apart(k, start, &seqs);
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
        })
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
        let start = &self.record.game().positions()[k];
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
            (queened && self.promoted_piece_guessed())
                .then_some(Doubt::PromotionPiece)
                // The first move takes a pawn that has just stepped: it may have gone on two
                // squares and been taken en passant unseen, as when read alone.
                .or_else(|| {
                    (k == self.record.game().plies())
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
    pub(super) fn capture_unreported(&self, seq: &[Move], reports: &Reports<'_>) -> Option<Move> {
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
    pub(super) fn begun_with_an_arrival(
        &self,
        start: &Chess,
        seq: &[Move],
        reports: &Reports<'_>,
    ) -> bool {
        reports
            .begun_at_an_arrival(start, seq)
            .is_some_and(|(i, arrived)| {
                self.clock
                    .pressed_at(mover_at(start, i))
                    .is_none_or(|p| p < arrived)
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
        let positions = self.record.game().positions();
        (self.record.settled()..k).find_map(|j| {
            let depth = kept.checked_sub(j - self.record.settled() + 1)?;
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
            _ => self.promotions_unnamed(seqs),
        }
    }

    /// The moves recorded from position `k` on.
    pub(super) fn moves_since(&self, k: usize) -> Vec<Move> {
        self.record.game().moves()[k..]
            .iter()
            .map(|p| p.mv)
            .collect()
    }

    /// The board's reports that belong to moves made from position `k` on.
    pub(super) fn reports(&self, k: usize) -> Reports<'_> {
        let since = self.record.reached_at().get(k).copied().unwrap_or(0);
        Reports {
            times: self.square_reports.last_times(),
            previous: self.square_reports.before_times(),
            undated: self.square_reports.undated(),
            since,
            slack: self.config.report_reorder_ms,
            outage: self.gap.outage_since(since),
            placed: self.placements_named(),
            whole_frames: self.config.whole_frames,
            pressed: self.clock.presses(),
        }
    }
}
