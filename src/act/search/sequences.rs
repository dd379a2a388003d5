//! Reconstruction: the shortest sequences of legal moves that explain a board whose
//! updates were missed.

use shakmaty::{Bitboard, Chess, Color, Move, Position};

use super::{Explanation, Reports, Sensed, only, squares_of, touches};
use crate::act::physical::board_diff;
use crate::board::Millis;

/// Nodes a reconstruction may visit before giving up (keeps the worst case bounded).
const NODE_BUDGET: usize = 20_000;
/// Nodes a reconstruction deeper than four plies across a link gap may visit: once per
/// outage, not per observation.
const GAP_NODE_BUDGET: usize = 400_000;
/// Sequences kept when several explain the board: a search that finds more says so
/// ([`Explanation::Partial`]).
pub(super) const SEQUENCES_KEPT: usize = 4;
/// Sequences kept across a link gap: every order of the gap's moves is named for the
/// arbiter, so all are kept (six plies of three independent moves a side have 36). A gap
/// with as many or more is not read as an order: the list would leave some out.
const GAP_KEEP: usize = 120;

impl Sensed<'_> {
    /// The shortest sequences of 2 to `max_depth` legal moves from `start` that leave the
    /// sensed board. Every move must start and end on squares the board reported a change
    /// on since `reports.since`, but for one square in the whole sequence (a missed update):
    /// a sequence of moves nobody was seen making is no explanation. The order must agree
    /// with the report times ([`Reports::inversion`]); among several sequences, the one that
    /// agrees with them best wins when no other agrees as well, and among those that agree
    /// equally, the one that changes every reported square when no other does.
    pub fn sequences(&self, start: &Chess, max_depth: usize, reports: &Reports<'_>) -> Explanation {
        self.sequences_within(start, 2..=max_depth, reports)
    }

    /// [`Sensed::sequences`] with lengths in `depths` only (each at least 2).
    pub fn sequences_within(
        &self,
        start: &Chess,
        depths: std::ops::RangeInclusive<usize>,
        reports: &Reports<'_>,
    ) -> Explanation {
        self.explain(start, depths, reports, false)
    }

    /// The shortest sequences of 2 to `max_depth` moves from `start` that leave the sensed
    /// board with a piece that stood on a square for less than a scan: a move arrived
    /// there and a later one left it, and the board never reported it (a piece put down
    /// and moved on at once). That square is the sequence's one square never reported.
    /// [`Sensed::sequences`] finds none of these: it is what is left to try when those do
    /// not explain the board.
    pub fn sequences_with_unseen_stay(
        &self,
        start: &Chess,
        max_depth: usize,
        reports: &Reports<'_>,
    ) -> Explanation {
        if reports.outage {
            return Explanation::None;
        }
        self.explain(start, 2..=max_depth, reports, true)
    }

    /// The search of [`Sensed::sequences_within`]: with `unseen_stays`, only sequences
    /// with a stay between two scans.
    fn explain(
        &self,
        start: &Chess,
        depths: std::ops::RangeInclusive<usize>,
        reports: &Reports<'_>,
        unseen_stays: bool,
    ) -> Explanation {
        if !self.feasible(start) {
            return Explanation::None;
        }
        let mut budget = if reports.outage && *depths.end() > 4 {
            GAP_NODE_BUDGET
        } else {
            NODE_BUDGET
        };
        let seen = reports.seen();
        // On a board that senses only occupancy, a later move may fill the square an earlier
        // one left: the board then shows it as before, but reported it twice.
        let refilled = if self.identifies {
            Bitboard::EMPTY
        } else {
            reports.left_and_refilled()
        };
        // One more than is kept, to tell a complete list from one cut short.
        let keep = if reports.outage {
            GAP_KEEP
        } else {
            SEQUENCES_KEPT + 1
        };
        for depth in depths {
            let mut found = Vec::new();
            let mut path = Vec::with_capacity(depth);
            let mut walk = Walk {
                seen,
                refilled,
                hidden_start: false,
                identifies: self.identifies,
                unseen_stays,
                unseen: Unseen::default(),
                start,
                reports,
                path: &mut path,
                found: &mut found,
                budget: &mut budget,
                keep,
            };
            self.search(start, depth, &mut walk);
            if budget == 0 || (reports.outage && found.len() >= keep) {
                return Explanation::None;
            }
            if found.is_empty() {
                continue;
            }
            if !reports.outage && found.len() > SEQUENCES_KEPT {
                found.truncate(SEQUENCES_KEPT);
                return Explanation::Partial(found.into_iter().map(|(seq, _)| seq).collect());
            }
            return best_found(start, found, reports, seen);
        }
        Explanation::None
    }

    fn search(&self, pos: &Chess, depth: usize, walk: &mut Walk<'_>) {
        if walk.found.len() >= walk.keep || *walk.budget == 0 {
            return;
        }
        *walk.budget -= 1;
        let d = self.diff(pos.board());
        if d.is_empty() || d.count() > 4 * depth || self.arrivals_exceed(pos, depth) {
            return;
        }
        if depth == 1 {
            for (m, _) in self.single_moves(pos) {
                let Some(unseen) = walk
                    .allows(m)
                    .filter(|unseen| unseen.stayed || !walk.unseen_stays)
                else {
                    continue;
                };
                if walk.found.len() < walk.keep {
                    let mut seq = walk.path.clone();
                    seq.push(m);
                    if let Some(i) = unseen.capture_landed
                        && !walk.capture_shown_over(&seq, i, unseen.exchanged)
                    {
                        continue;
                    }
                    // A start the board hides is read only from reports that show every
                    // piece of the sequence where it stood between its moves.
                    if walk.hidden_start && walk.reports.unseen_arrivals(walk.start, &seq).any() {
                        continue;
                    }
                    if let Some(inv) = walk.reports.inversion(walk.start, &seq) {
                        walk.found.push((seq, inv));
                    }
                }
            }
            return;
        }
        for m in pos.legal_moves() {
            let hidden = !touches(m, d);
            let Some(unseen) = walk
                .allows(m)
                .filter(|_| !hidden || touches(m, walk.refilled))
            else {
                continue;
            };
            let mut next = pos.clone();
            next.play_unchecked(m);
            if !self.feasible(&next) {
                continue;
            }
            walk.path.push(m);
            let before = std::mem::replace(&mut walk.unseen, unseen);
            let hidden_before = walk.hidden_start;
            walk.hidden_start |= hidden;
            self.search(&next, depth - 1, walk);
            walk.unseen = before;
            walk.hidden_start = hidden_before;
            walk.path.pop();
        }
    }

    /// True when `plies` more moves from `pos` cannot put down every piece the sensed board
    /// shows where `pos` has none like it: a piece comes to stand on a square only by a move
    /// of its side, and a move puts down one piece, two when castling. (On a board that
    /// senses only occupancy, any piece on a square empty in `pos` is such an arrival.)
    fn arrivals_exceed(&self, pos: &Chess, plies: usize) -> bool {
        let have = pos.board();
        let castling = |side: Color| usize::from(pos.castles().has_color(side));
        if !self.identifies {
            let arrivals = (self.board.occupied() & !have.occupied()).count();
            return arrivals > plies + castling(Color::White) + castling(Color::Black);
        }
        [Color::White, Color::Black].into_iter().any(|side| {
            let moves = if side == pos.turn() {
                plies.div_ceil(2)
            } else {
                plies / 2
            };
            let arrivals = self
                .board
                .by_color(side)
                .into_iter()
                .filter(|&sq| have.piece_at(sq) != self.board.piece_at(sq))
                .count();
            arrivals > moves + castling(side)
        })
    }

    /// Whether the sensed material can be reached from `pos` by captures and promotions.
    fn feasible(&self, pos: &Chess) -> bool {
        let have = pos.board();
        let want = self.board;
        if !self.identifies {
            return want.occupied().count() <= have.occupied().count();
        }
        [Color::White, Color::Black].into_iter().all(|c| {
            let h = have.material_side(c);
            let w = want.material_side(c);
            if w.king != h.king || w.pawn > h.pawn {
                return false;
            }
            let promotions = usize::from(h.pawn - w.pawn);
            let extra: usize = [
                (w.knight, h.knight),
                (w.bishop, h.bishop),
                (w.rook, h.rook),
                (w.queen, h.queen),
            ]
            .into_iter()
            .map(|(w, h)| usize::from(w.saturating_sub(h)))
            .sum();
            extra <= promotions
        })
    }
}

/// Of the sequences `found` from `start`, each with its time out of order, a complete list:
/// the one with the least, or among several, the one that alone accounts for every square
/// the board reported (`seen`) or alone began its moves in order; else all of them.
fn best_found(
    start: &Chess,
    found: Vec<(Vec<Move>, Millis)>,
    reports: &Reports<'_>,
    seen: Bitboard,
) -> Explanation {
    let best = found.iter().map(|(_, inv)| *inv).min().unwrap_or(0);
    let mut fits: Vec<Vec<Move>> = Vec::new();
    for (seq, inv) in &found {
        if *inv == best {
            fits.push(seq.clone());
        }
    }
    if fits.len() > 1
        && !reports.outage
        && let Some(seq) =
            only(fits.iter().filter(|seq| accounts_for(start, seq, seen))).or_else(|| {
                only(
                    fits.iter()
                        .filter(|seq| reports.begun_out_of_order(start, seq) == 0),
                )
            })
    {
        return Explanation::Unique(seq.clone());
    }
    match fits.len() {
        1 => Explanation::Unique(fits.remove(0)),
        _ => Explanation::Ambiguous(found.into_iter().map(|(seq, _)| seq).collect()),
    }
}

/// True when the moves of `seq`, played from `start`, change every square in `seen`: no
/// report is left to a touched piece put back, as another sequence may need.
fn accounts_for(start: &Chess, seq: &[Move], seen: Bitboard) -> bool {
    let mut pos = start.clone();
    let mut changed = Bitboard::EMPTY;
    for &m in seq {
        let before = pos.board().clone();
        pos.play_unchecked(m);
        changed |= board_diff(&before, pos.board(), true);
    }
    seen.is_subset(changed)
}

/// The state of one reconstruction search.
struct Walk<'a> {
    seen: Bitboard,
    /// Squares reported twice during the moves (occupancy-only boards): a move may begin
    /// there though the board shows the square as before.
    refilled: Bitboard,
    /// A move of the path begins on such a square.
    hidden_start: bool,
    /// False on occupancy-only boards.
    identifies: bool,
    /// Only sequences in which a piece stands on the unseen square between two of their
    /// moves are kept.
    unseen_stays: bool,
    unseen: Unseen,
    start: &'a Chess,
    reports: &'a Reports<'a>,
    path: &'a mut Vec<Move>,
    found: &'a mut Vec<(Vec<Move>, Millis)>,
    budget: &'a mut usize,
    /// The most sequences kept.
    keep: usize,
}

/// The squares a sequence uses that the board never reported on.
#[derive(Debug, Clone, Copy, Default)]
struct Unseen {
    squares: Bitboard,
    /// Of `squares`, the one a move arrived on that no later move has left yet: with
    /// unseen stays, a later move may leave it once, and none use it after that.
    arrived: Bitboard,
    /// A move left the unseen square another had arrived on.
    stayed: bool,
    /// On a board that senses only occupancy, the index in the sequence of the capture
    /// whose square the board never reported (its victim replaced unseen, or the capturer
    /// still in the hand): kept only when its player moved again later in the sequence.
    capture_landed: Option<usize>,
    /// The move after that capture took back on its square, unseen as well: an exchange
    /// during which the square stayed full.
    exchanged: bool,
}

impl Walk<'_> {
    /// Whether move `i` of `seq`, a capture the board never showed landing, is shown over:
    /// its player pressed the clock after lifting the piece; or the opponent answered it
    /// and the moves account for every report; or its player has moved again since and the
    /// piece was seen sliding on its way there or he pressed after lifting the next one
    /// (one hand moves one piece at a time). With `exchanged`, the move after it took back
    /// on its square, which shows the capture over; that recapture must be shown over by
    /// its player's press after lifting his piece, or by an answer.
    fn capture_shown_over(&self, seq: &[Move], i: usize, exchanged: bool) -> bool {
        let (start, reports) = (self.start, self.reports);
        if exchanged {
            return seq.len() >= i + 3 || reports.pressed_after_lift(start, seq, i + 1);
        }
        reports.pressed_after_lift(start, seq, i)
            || (reports.answered(start, seq, i) && accounts_for(start, seq, self.seen))
            || (seq.len() >= i + 3
                && (reports.seen_on_its_way(start, seq, i)
                    || reports.pressed_after_next_lift(start, seq, i)))
    }

    /// The squares never reported on that the sequence would use with `m` added, if that
    /// is at most one square used by one move (one missed update: a square two moves of
    /// the sequence changed would have been reported twice), or, with unseen stays, one
    /// square a move arrived on and `m` leaves, or the unseen square of the capture just
    /// before taken back by `m`.
    fn allows(&self, m: Move) -> Option<Unseen> {
        let ends = match m {
            Move::Castle { king, rook } => Bitboard::from(king) | Bitboard::from(rook),
            // The pawn taken en passant leaves a square of its own.
            Move::EnPassant { .. } => squares_of(m),
            _ => m.from().map_or(Bitboard::EMPTY, Bitboard::from) | Bitboard::from(m.to()),
        };
        let fresh = ends & !self.seen;
        // On a board that senses only occupancy, a capture on a square never reported looks
        // exactly like a piece still in the hand: the captured square is the one thing that
        // shows which move it was.
        let captures = matches!(
            m,
            Move::Normal {
                capture: Some(_),
                ..
            }
        );
        let landed_unseen = !self.identifies
            && captures
            && !self.reports.capture_landing_reported(m)
            && !self.reports.outage;
        if landed_unseen && self.unseen_stays {
            return None;
        }
        if landed_unseen && let Some(i) = self.unseen.capture_landed {
            return self.recaptured_at_once(i, m, fresh);
        }
        let capture_landed = if landed_unseen {
            Some(self.path.len())
        } else {
            self.unseen.capture_landed
        };
        if self.reports.outage {
            return Some(Unseen {
                squares: self.unseen.squares | fresh,
                ..self.unseen
            });
        }
        let again = fresh & self.unseen.squares;
        if again.any() {
            return self.left_unseen_stay(m, fresh, again, capture_landed);
        }
        let squares = self.unseen.squares | fresh;
        let arrived = match m {
            Move::Normal { to, .. } | Move::EnPassant { to, .. } => fresh & Bitboard::from(to),
            _ => Bitboard::EMPTY,
        };
        (squares.count() <= 1).then_some(Unseen {
            squares,
            arrived: self.unseen.arrived | arrived,
            stayed: self.unseen.stayed,
            capture_landed,
            exchanged: self.unseen.exchanged,
        })
    }

    /// [`Walk::allows`] for `m`, a capture whose landing the board did not report, after
    /// the capture at path index `i` whose landing it did not report either: only a
    /// recapture at once, on the square of the capture, from a reported square. However
    /// often the board samples it, the square stays occupied while a capturer is put down as
    /// (or before) its victim comes off, so whole frames show no more of an exchange than a
    /// scan does. The square was never reported, or only before both lifts (the first
    /// victim's arrival).
    fn recaptured_at_once(&self, i: usize, m: Move, fresh: Bitboard) -> Option<Unseen> {
        let exchange = !self.unseen.exchanged
            && i + 1 == self.path.len()
            && self.path[i].to() == m.to()
            && (fresh.is_empty()
                || (fresh == Bitboard::from(m.to()) && self.unseen.arrived == fresh));
        exchange.then_some(Unseen {
            exchanged: true,
            ..self.unseen
        })
    }

    /// [`Walk::allows`] for `m`, which involves `again`, squares of `fresh` already needed
    /// unseen: only the piece that arrived there unseen, leaving again (a stay no scan
    /// sampled), when such stays are allowed.
    fn left_unseen_stay(
        &self,
        m: Move,
        fresh: Bitboard,
        again: Bitboard,
        capture_landed: Option<usize>,
    ) -> Option<Unseen> {
        let leaves = match m {
            Move::EnPassant { from, to } => {
                Bitboard::from(from) | Bitboard::from(super::ep_victim(from, to))
            }
            _ => m.from().map_or(Bitboard::EMPTY, Bitboard::from),
        };
        let stays = self.unseen_stays
            && fresh == again
            && again == self.unseen.arrived
            && again.is_subset(leaves);
        stays.then_some(Unseen {
            squares: self.unseen.squares,
            arrived: Bitboard::EMPTY,
            stayed: true,
            capture_landed,
            exchanged: self.unseen.exchanged,
        })
    }
}
