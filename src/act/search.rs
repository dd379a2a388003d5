//! Which legal moves explain what stands on the board: one move (the common case, a few
//! hundred nanoseconds) or the shortest sequence of moves when updates were missed.

use shakmaty::{Bitboard, Board, Chess, Color, Move, Piece, Position, Role, Square, attacks};

use super::physical::board_diff;
use crate::board::Millis;

/// What the search compares positions with: the sensed board and its evidence.
#[derive(Debug, Clone, Copy)]
pub struct Sensed<'a> {
    /// The board as sensed.
    pub board: &'a Board,
    /// False on occupancy-only boards.
    pub identifies: bool,
    /// Squares placed on since the last recorded move (capture evidence on occupancy-only
    /// boards).
    pub placed: Bitboard,
}

/// The outcome of a search for move sequences.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Explanation {
    /// No sequence within the depth explains the board.
    None,
    /// Exactly one shortest sequence.
    Unique(Vec<Move>),
    /// Several shortest sequences (at most a few are kept).
    Ambiguous(Vec<Vec<Move>>),
}

/// When the board reported each square's latest change: the evidence a reconstruction must
/// agree with in time as well as in squares.
#[derive(Debug, Clone, Copy)]
pub struct Reports<'a> {
    /// Time of the latest report of each square (index = square), if any.
    pub times: &'a [Option<Millis>; 64],
    /// Time of the report of each square before its latest one, if any.
    pub previous: &'a [Option<Millis>; 64],
    /// Squares last reported by a board dump that found them changed: they changed at some
    /// time before that report, so their time says nothing about the order of moves.
    pub undated: Bitboard,
    /// Only reports at or after this time belong to the moves being reconstructed.
    pub since: Millis,
    /// How much earlier than the lift before it a board may report a placement (its scan
    /// order): a piece seen arriving more than this before another left is not a later move.
    pub slack: Millis,
    /// The board was out of touch (a dump changed several squares at once): any square may
    /// have changed unreported, any number of times.
    pub outage: bool,
    /// On a board that names pieces, every piece it reported put on a square (or a dump
    /// found there) lately, with the time: a piece arriving on a square is seen only if
    /// the board named it there.
    pub placed: Option<&'a [(Square, Piece, Millis)]>,
}

impl Reports<'_> {
    /// Every square reported, with no time constraint.
    #[cfg(test)]
    pub const EVERYTHING: Reports<'static> = Reports {
        times: &[Some(0); 64],
        previous: &[Some(0); 64],
        undated: Bitboard::EMPTY,
        since: 0,
        slack: Millis::MAX,
        outage: false,
        placed: None,
    };

    /// When `sq` last changed, if it changed during the moves being reconstructed.
    fn time(&self, sq: Square) -> Option<Millis> {
        self.times[sq as usize].filter(|&t| t >= self.since)
    }

    /// The squares reported during the moves being reconstructed.
    fn seen(&self) -> Bitboard {
        Bitboard::FULL
            .into_iter()
            .filter(|&sq| self.time(sq).is_some())
            .collect()
    }

    /// Every piece `seq` carries, played from `start`, with the report times of its arrival
    /// and of its departure when no later move of the sequence changes that square again
    /// (only then is the square's last report that arrival or departure).
    fn carried(&self, start: &Chess, seq: &[Move]) -> Vec<Carried> {
        let turn = |i: usize| {
            if i.is_multiple_of(2) {
                start.turn()
            } else {
                !start.turn()
            }
        };
        // A later move sliding over a square reports it again: its latest report is then
        // that passage, not this sequence's arrival or departure.
        let touched: Vec<Bitboard> = seq
            .iter()
            .enumerate()
            .map(|(i, &m)| touched_squares(m, turn(i)) | passed_squares(m, turn(i)))
            .collect();
        let mut carried = Vec::new();
        for (i, &m) in seq.iter().enumerate() {
            let later = touched[i + 1..]
                .iter()
                .fold(Bitboard::EMPTY, |acc, &b| acc | b);
            let final_time = |sq: Square| {
                self.time(sq)
                    .filter(|_| !later.contains(sq) && !self.undated.contains(sq))
            };
            let paths = paths(m, turn(i));
            // A Chess960 castling may put one piece where the other stood: that square's
            // last report is the arrival.
            let arrivals: Bitboard = paths.iter().map(|&(_, to)| to).collect();
            for (from, to) in paths {
                let piece = Piece {
                    color: turn(i),
                    role: role_leaving(m, from),
                };
                let left = final_time(from)
                    .filter(|_| !arrivals.contains(from))
                    .map(|t| {
                        self.seen_on_the_way(piece, from, to)
                            .map_or(t, |w| w.min(t))
                    });
                carried.push(Carried {
                    ply: i,
                    arrived: final_time(to),
                    left,
                });
            }
        }
        carried
    }

    /// On a board that names pieces, when `piece` was first named on a square between
    /// `from` and `to` during the moves: it had left `from` by then, even if the scan
    /// reported `from` empty later.
    fn seen_on_the_way(&self, piece: Piece, from: Square, to: Square) -> Option<Millis> {
        let between = attacks::between(from, to);
        self.placed?
            .iter()
            .filter(|&&(sq, p, t)| p == piece && between.contains(sq) && t >= self.since)
            .map(|&(_, _, t)| t)
            .min()
    }

    /// How far `seq`, played from `start`, runs against the times the board reported its
    /// squares: the sum over every piece seen arriving for good and every square seen
    /// vacated for good by the same piece or an earlier move, of how much earlier the arrival
    /// was reported than the departure. `None` when one such inversion exceeds the slack:
    /// that order of moves cannot have happened.
    pub fn inversion(&self, start: &Chess, seq: &[Move]) -> Option<Millis> {
        let carried = self.carried(start, seq);
        let mut total: Millis = 0;
        for (a, arrival) in carried.iter().enumerate() {
            let Some(arrived) = arrival.arrived else {
                continue;
            };
            for (d, departure) in carried.iter().enumerate() {
                let before = departure.ply < arrival.ply || d == a;
                let Some(left) = departure.left.filter(|_| before) else {
                    continue;
                };
                let early = left.saturating_sub(arrived);
                if early > self.slack {
                    return None;
                }
                total = total.saturating_add(early);
            }
        }
        Some(total)
    }

    /// Squares on which a piece of `seq` arrives and a later move of `seq` changes again
    /// (takes it, or moves it on), though the board never showed it there: it reported the
    /// square only once during the moves, or, naming pieces, never named that piece there.
    /// A scan can fold two quick changes into one report, but so does a displaced piece read
    /// as a move; after an outage nothing is expected to have been reported.
    pub fn unseen_arrivals(&self, start: &Chess, seq: &[Move]) -> Bitboard {
        if self.outage {
            return Bitboard::EMPTY;
        }
        let turn = |i: usize| {
            if i.is_multiple_of(2) {
                start.turn()
            } else {
                !start.turn()
            }
        };
        let mut unseen = Bitboard::EMPTY;
        for (i, &m) in seq.iter().enumerate() {
            let later = seq[i + 1..]
                .iter()
                .enumerate()
                .fold(Bitboard::EMPTY, |acc, (j, &n)| {
                    acc | touched_squares(n, turn(i + 1 + j))
                });
            for (from, to) in paths(m, turn(i)) {
                if !later.contains(to) {
                    continue;
                }
                // A report at the very time the start position was reached is that move's
                // own.
                let previous = self.previous[to as usize].filter(|&t| t > self.since);
                let seen = match self.placed {
                    Some(placed) => {
                        let piece = Piece {
                            color: turn(i),
                            role: m.promotion().unwrap_or(role_leaving(m, from)),
                        };
                        let named = placed
                            .iter()
                            .any(|&(sq, p, t)| sq == to && p == piece && t >= self.since);
                        // Between two reports of the square close in time, a scan may have
                        // missed a piece that stood there only a moment.
                        let folded =
                            previous
                                .zip(self.times[to as usize])
                                .is_some_and(|(before, last)| {
                                    last.saturating_sub(before) <= MOMENT_UNREPORTED_MS
                                });
                        named || folded
                    }
                    None => previous.is_some(),
                };
                if !seen {
                    unseen.add(to);
                }
            }
        }
        unseen
    }

    /// How long before a piece of `seq` was seen arriving for good a later move of the
    /// sequence was seen leaving its square: zero when the moves came one after the other.
    /// More than zero means the next player began before the previous move was over, or
    /// that one of the "moves" was a piece knocked over by the hand making the other.
    pub fn overlap(&self, start: &Chess, seq: &[Move]) -> Millis {
        self.most_before_arrival(start, seq, |later| later.left)
    }

    /// How long before a piece of `seq` was seen arriving for good a piece of a later move
    /// of the sequence was: zero when the moves were seen finished in their order. More
    /// than zero means a reply was over before the move it answers, which hands do not do.
    pub fn finished_out_of_order(&self, start: &Chess, seq: &[Move]) -> Millis {
        self.most_before_arrival(start, seq, |later| later.arrived)
    }

    /// The most that `seen` of a piece carried by a later move of `seq` comes before the
    /// arrival of a piece carried by an earlier one.
    fn most_before_arrival(
        &self,
        start: &Chess,
        seq: &[Move],
        seen: impl Fn(&Carried) -> Option<Millis>,
    ) -> Millis {
        let carried = self.carried(start, seq);
        let mut most = 0;
        for earlier in &carried {
            let Some(arrived) = earlier.arrived else {
                continue;
            };
            for later in carried.iter().filter(|c| c.ply > earlier.ply) {
                if let Some(t) = seen(later) {
                    most = most.max(arrived.saturating_sub(t));
                }
            }
        }
        most
    }
}

/// One piece carried by a move of a reconstructed sequence, with the report times that are
/// its arrival and departure (when no later move changes those squares).
struct Carried {
    ply: usize,
    arrived: Option<Millis>,
    left: Option<Millis>,
}

/// The pieces a move carries from one square to another (castling carries two).
fn paths(m: Move, color: Color) -> Vec<(Square, Square)> {
    match m {
        Move::Normal { from, to, .. } | Move::EnPassant { from, to } => vec![(from, to)],
        Move::Castle { king, rook } => match m.castling_side() {
            Some(side) => [(king, side.king_to(color)), (rook, side.rook_to(color))]
                .into_iter()
                .filter(|(a, b)| a != b)
                .collect(),
            None => Vec::new(),
        },
        Move::Put { .. } => Vec::new(),
    }
}

/// The piece a move carries off `from`, one of its [`paths`]: castling's rook from the
/// rook's square, else the moving piece (a pawn, before it is promoted).
fn role_leaving(m: Move, from: Square) -> Role {
    match m {
        Move::Castle { rook, .. } if from == rook => Role::Rook,
        _ => m.role(),
    }
}

/// Every square a move changes, castling's destination squares included.
fn touched_squares(m: Move, color: Color) -> Bitboard {
    paths(m, color)
        .into_iter()
        .fold(squares_of(m), |acc, (_, to)| acc | Bitboard::from(to))
}

/// The squares a move's pieces pass over on their way (a slide may report each of them).
fn passed_squares(m: Move, color: Color) -> Bitboard {
    paths(m, color)
        .into_iter()
        .fold(Bitboard::EMPTY, |acc, (from, to)| {
            acc | attacks::between(from, to)
        })
}

/// The longest a piece can stand on a square without a board that names pieces reporting
/// it there: its scan reports a placement well within this.
const MOMENT_UNREPORTED_MS: Millis = 2_000;

/// Nodes a reconstruction may visit before giving up (keeps the worst case bounded).
const NODE_BUDGET: usize = 20_000;
/// Sequences kept when several explain the board.
const KEEP: usize = 4;

impl Sensed<'_> {
    /// Squares where `board` differs from the sensed board.
    pub fn diff(&self, board: &Board) -> Bitboard {
        board_diff(self.board, board, self.identifies)
    }

    /// True when the sensed board is exactly `pos` reached by `m` (on occupancy-only boards
    /// a capture also needs a placement seen on the capture square).
    fn shows(&self, after: &Chess, m: Move) -> bool {
        if !self.diff(after.board()).is_empty() {
            return false;
        }
        self.identifies
            || !matches!(
                m,
                Move::Normal {
                    capture: Some(_),
                    ..
                }
            )
            || self.placed.contains(m.to())
    }

    /// Every single legal move from `pos` that leaves exactly the sensed board.
    pub fn single_moves(&self, pos: &Chess) -> Vec<(Move, Chess)> {
        let d = self.diff(pos.board());
        let mut found = Vec::new();
        if d.is_empty() || d.count() > 4 {
            return found;
        }
        for m in pos.legal_moves() {
            if !touches(m, d) {
                continue;
            }
            if let Some(quick) = quick_changed(m, pos.turn(), self.identifies)
                && quick != d
            {
                continue;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            if self.shows(&after, m) {
                found.push((m, after));
            }
        }
        found
    }

    /// True when the sensed board could be a move from `pos` still being made: every
    /// differing square is one the move changes and holds either nothing yet or what the
    /// move puts there (a pawn on the promotion square counts as an unfinished promotion).
    pub fn in_progress(&self, pos: &Chess) -> bool {
        let d = self.diff(pos.board());
        if d.is_empty() {
            return true;
        }
        if d.count() > 4 {
            return false;
        }
        pos.legal_moves()
            .into_iter()
            .any(|m| self.partly_made(pos, m, d))
    }

    /// True when the sensed board could be one move from `pos` made (and perhaps still
    /// sliding) while the next player's move is being made: a fast reply begun before the
    /// previous move's last board update.
    pub fn in_progress_after_one(&self, pos: &Chess) -> bool {
        let d = self.diff(pos.board());
        if d.count() > 9 {
            return false;
        }
        pos.legal_moves().into_iter().any(|m| {
            touches(m, d) && {
                let mut after = pos.clone();
                after.play_unchecked(m);
                // Strictly partial: a finished second move is a sequence, not a move in
                // progress.
                self.diff(after.board()).any()
                    && self.in_progress(&after)
                    && self.single_moves(&after).is_empty()
            }
        })
    }

    fn partly_made(&self, pos: &Chess, m: Move, d: Bitboard) -> bool {
        let mut after = pos.clone();
        after.play_unchecked(m);
        let changed = board_diff(pos.board(), after.board(), true) | squares_of(m);
        let extra = d & !changed;
        if extra.any() && !self.on_its_way(pos, m, extra) {
            return false;
        }
        (d & changed)
            .into_iter()
            .all(|sq| match self.board.piece_at(sq) {
                None => true,
                Some(_) if !self.identifies => after.board().piece_at(sq).is_some(),
                Some(p) => {
                    after.board().piece_at(sq) == Some(p)
                        || (m.is_promotion() && sq == m.to() && p == pos.turn().pawn())
                }
            })
    }

    /// True when `extra` is one empty square on which the lifted piece of `m` stands for a
    /// moment: a piece slid across the board, or a capturer on its way to its victim. A
    /// board that names pieces may report it there before it reports it leaving the squares
    /// behind (its scan order): the square of departure, and squares passed on the way, may
    /// still show the piece.
    fn on_its_way(&self, pos: &Chess, m: Move, extra: Bitboard) -> bool {
        let (Move::Normal { from, to, .. } | Move::EnPassant { from, to }) = m else {
            return false;
        };
        let path = shakmaty::attacks::between(from, to);
        let mover = pos.board().piece_at(from);
        if !extra.is_subset(path) || (extra & pos.board().occupied()).any() {
            return false;
        }
        if self.identifies {
            let shows_mover = |sq: Square| self.board.piece_at(sq) == mover;
            extra.any() && extra.into_iter().all(shows_mover)
        } else {
            extra.count() == 1 && self.board.piece_at(from).is_none()
        }
    }

    /// The one legal move from `pos` whose every square the sensed board shows as the move
    /// left it, the board being otherwise that move's position with one or two pieces off
    /// their squares (knocked off or over by the hand that made the move and not yet set
    /// back), lying off the board or on empty squares, and the squares that differ. `None`
    /// when no move, or more than one, fits.
    pub fn move_with_pieces_displaced(&self, pos: &Chess) -> Option<(Move, Bitboard)> {
        let mut fits = pos.legal_moves().into_iter().filter_map(|m| {
            let mut after = pos.clone();
            after.play_unchecked(m);
            let d = self.diff(after.board());
            if !(d & squares_of(m)).is_empty() {
                return None;
            }
            let mut missing: Vec<(Square, Piece)> = Vec::new();
            let mut landed: Vec<(Square, Piece)> = Vec::new();
            for sq in d {
                match (after.board().piece_at(sq), self.board.piece_at(sq)) {
                    (Some(p), None) => missing.push((sq, p)),
                    (None, Some(p)) => landed.push((sq, p)),
                    _ => return None,
                }
            }
            if !(1..=2).contains(&missing.len()) || landed.len() > missing.len() {
                return None;
            }
            // A piece knocked over falls next to its square.
            for (sq, p) in landed {
                let i = missing.iter().position(|&(from, q)| {
                    (q == p || !self.identifies) && from.distance(sq) == 1
                })?;
                missing.swap_remove(i);
            }
            Some((m, d))
        });
        match (fits.next(), fits.next()) {
            (Some(fit), None) => Some(fit),
            _ => None,
        }
    }

    /// The promotion the sensed board shows unfinished: the pawn of the side to move stands
    /// on the last rank, and the board is otherwise the position after that promotion.
    pub fn unfinished_promotion(&self, pos: &Chess) -> Option<Move> {
        let d = self.diff(pos.board());
        if d.is_empty() || d.count() > 2 {
            return None;
        }
        let pawn = pos.turn().pawn();
        pos.legal_moves().into_iter().find(|&m| {
            if m.promotion() != Some(Role::Queen) {
                return false;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            let mut board = after.board().clone();
            board.set_piece_at(m.to(), pawn);
            board_diff(self.board, &board, self.identifies).is_empty()
        })
    }

    /// The shortest sequences of 2 to `max_depth` legal moves from `start` that leave the
    /// sensed board. Every move must start and end on squares the board reported a change
    /// on since `reports.since`, but for one square in the whole sequence (a missed update):
    /// a sequence of moves nobody was seen making is no explanation. The order must agree
    /// with the report times ([`Reports::inversion`]); among several sequences, the one that
    /// agrees with them best wins when no other agrees as well.
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
        if !self.feasible(start) {
            return Explanation::None;
        }
        let mut budget = NODE_BUDGET;
        let seen = reports.seen();
        for depth in depths {
            let mut found = Vec::new();
            let mut path = Vec::with_capacity(depth);
            let mut walk = Walk {
                seen,
                unseen: Bitboard::EMPTY,
                start,
                reports,
                path: &mut path,
                found: &mut found,
                budget: &mut budget,
            };
            self.search(start, depth, &mut walk);
            if budget == 0 {
                return Explanation::None;
            }
            if found.is_empty() {
                continue;
            }
            let best = found.iter().map(|(_, inv)| *inv).min().unwrap_or(0);
            let mut fits: Vec<Vec<Move>> = Vec::new();
            for (seq, inv) in &found {
                if *inv == best {
                    fits.push(seq.clone());
                }
            }
            return match fits.len() {
                1 => Explanation::Unique(fits.remove(0)),
                _ => Explanation::Ambiguous(found.into_iter().map(|(seq, _)| seq).collect()),
            };
        }
        Explanation::None
    }

    fn search(&self, pos: &Chess, depth: usize, walk: &mut Walk<'_>) {
        if walk.found.len() >= KEEP || *walk.budget == 0 {
            return;
        }
        *walk.budget -= 1;
        let d = self.diff(pos.board());
        if d.is_empty() || d.count() > 4 * depth {
            return;
        }
        if depth == 1 {
            for (m, _) in self.single_moves(pos) {
                if walk.allows(m).is_some() && walk.found.len() < KEEP {
                    let mut seq = walk.path.clone();
                    seq.push(m);
                    if let Some(inv) = walk.reports.inversion(walk.start, &seq) {
                        walk.found.push((seq, inv));
                    }
                }
            }
            return;
        }
        for m in pos.legal_moves() {
            let Some(unseen) = walk.allows(m).filter(|_| touches(m, d)) else {
                continue;
            };
            let mut next = pos.clone();
            next.play_unchecked(m);
            if !self.feasible(&next) {
                continue;
            }
            walk.path.push(m);
            let before = std::mem::replace(&mut walk.unseen, unseen);
            self.search(&next, depth - 1, walk);
            walk.unseen = before;
            walk.path.pop();
        }
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

/// The state of one reconstruction search.
struct Walk<'a> {
    seen: Bitboard,
    unseen: Bitboard,
    start: &'a Chess,
    reports: &'a Reports<'a>,
    path: &'a mut Vec<Move>,
    found: &'a mut Vec<(Vec<Move>, Millis)>,
    budget: &'a mut usize,
}

impl Walk<'_> {
    /// The squares never reported on that the sequence would use with `m` added, if that
    /// is at most one square used by one move (one missed update: a square two moves of
    /// the sequence changed would have been reported twice).
    fn allows(&self, m: Move) -> Option<Bitboard> {
        let ends = match m {
            Move::Castle { king, rook } => Bitboard::from(king) | Bitboard::from(rook),
            // The pawn taken en passant leaves a square of its own.
            Move::EnPassant { .. } => squares_of(m),
            _ => m.from().map_or(Bitboard::EMPTY, Bitboard::from) | Bitboard::from(m.to()),
        };
        let fresh = ends & !self.seen;
        if self.reports.outage {
            return Some(self.unseen | fresh);
        }
        if (fresh & self.unseen).any() {
            return None;
        }
        let unseen = self.unseen | fresh;
        (unseen.count() <= 1).then_some(unseen)
    }
}

/// True when the move starts (or, for castling, involves the rook) on a differing square.
fn touches(m: Move, d: Bitboard) -> bool {
    match m {
        Move::Castle { king, rook } => d.contains(king) || d.contains(rook),
        _ => m.from().is_some_and(|f| d.contains(f)),
    }
}

/// The squares a move touches: origin, destination, en passant victim, castling squares.
pub fn squares_of(m: Move) -> Bitboard {
    match m {
        Move::Normal { from, to, .. } => Bitboard::from(from) | Bitboard::from(to),
        Move::EnPassant { from, to } => {
            Bitboard::from(from) | Bitboard::from(to) | Bitboard::from(ep_victim(from, to))
        }
        Move::Castle { king, rook } => Bitboard::from(king) | Bitboard::from(rook),
        Move::Put { to, .. } => Bitboard::from(to),
    }
}

/// The square of the pawn taken en passant.
pub fn ep_victim(from: Square, to: Square) -> Square {
    Square::from_coords(to.file(), from.rank())
}

/// The changed squares of a move, without playing it, when that is cheap to know.
fn quick_changed(m: Move, _turn: Color, identifies: bool) -> Option<Bitboard> {
    match m {
        Move::Normal {
            from, to, capture, ..
        } => Some(if capture.is_some() && !identifies {
            Bitboard::from(from)
        } else {
            Bitboard::from(from) | Bitboard::from(to)
        }),
        Move::EnPassant { .. } => Some(squares_of(m)),
        Move::Castle { .. } | Move::Put { .. } => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    fn after(ucis: &[&str]) -> Chess {
        let mut pos = Chess::default();
        for u in ucis {
            let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
        }
        pos
    }

    #[test]
    fn one_move_is_found_and_two_orders_are_ambiguous() {
        let start = Chess::default();
        let target = after(&["e2e4"]);
        let s = sensed(target.board());
        assert_eq!(s.single_moves(&start).len(), 1);
        let target = after(&["e2e4", "d7d5", "e4d5"]);
        let s = sensed(target.board());
        assert_eq!(
            s.sequences(&start, 4, &Reports::EVERYTHING),
            Explanation::Unique(after_moves(&["e2e4", "d7d5", "e4d5"]))
        );
        let target = after(&["e2e4", "e7e5", "d2d4"]);
        let s = sensed(target.board());
        assert!(
            matches!(s.sequences(&start, 4, &Reports::EVERYTHING), Explanation::Ambiguous(v) if v.len() == 2)
        );
    }

    /// What a DGT board senses when it shows `board`, nothing placed since the last move.
    fn sensed(board: &Board) -> Sensed<'_> {
        Sensed {
            board,
            identifies: true,
            placed: Bitboard::EMPTY,
        }
    }

    /// Reports at `times` (and `previous`), all belonging to the moves, 600 ms of slack.
    fn reported<'a>(
        times: &'a [Option<Millis>; 64],
        previous: &'a [Option<Millis>; 64],
    ) -> Reports<'a> {
        Reports {
            times,
            previous,
            undated: Bitboard::EMPTY,
            since: 0,
            slack: 600,
            outage: false,
            placed: None,
        }
    }

    fn times(reports: &[(Square, Millis)]) -> [Option<Millis>; 64] {
        let mut t = [None; 64];
        for &(sq, when) in reports {
            t[sq as usize] = Some(when);
        }
        t
    }

    #[test]
    fn report_times_pick_the_order_the_moves_were_made_in() {
        let start = Chess::default();
        let target = after(&["e2e4", "e7e5", "d2d4"]);
        let s = sensed(target.board());
        let t = times(&[
            (Square::E2, 100),
            (Square::E4, 200),
            (Square::E7, 300),
            (Square::E5, 400),
            (Square::D2, 500),
            (Square::D4, 600),
        ]);
        let reports = reported(&t, &t);
        assert_eq!(
            s.sequences(&start, 4, &reports),
            Explanation::Unique(after_moves(&["e2e4", "e7e5", "d2d4"]))
        );
        let wrong = after_moves(&["d2d4", "e7e5", "e2e4"]);
        assert_eq!(reports.inversion(&start, &wrong), Some(500));
        let strict = Reports {
            slack: 200,
            ..reports
        };
        assert_eq!(strict.inversion(&start, &wrong), None);
    }

    #[test]
    fn an_unreported_square_serves_one_move_only() {
        // e2-e4 and ...d5 were reported; e4xd5 would need e4 to be filled and emptied again
        // without a report: two lost updates, not one.
        let start = Chess::default();
        let target = after(&["e2e4", "d7d5", "e4d5"]);
        let s = sensed(target.board());
        let t = times(&[(Square::E2, 100), (Square::D7, 300), (Square::D5, 500)]);
        let reports = reported(&t, &t);
        assert_eq!(s.sequences(&start, 4, &reports), Explanation::None);
        let outage = Reports {
            outage: true,
            ..reports
        };
        assert_eq!(
            s.sequences(&start, 4, &outage),
            Explanation::Unique(after_moves(&["e2e4", "d7d5", "e4d5"]))
        );
    }

    #[test]
    fn an_arrival_taken_at_once_needs_two_reports_of_its_square() {
        // ...d5 then exd5: d5 was filled and then taken; one report of d5 saw only the end.
        let start = Chess::default();
        let seq = after_moves(&["e2e4", "d7d5", "e4d5"]);
        let t = times(&[
            (Square::E2, 100),
            (Square::E4, 500),
            (Square::D7, 300),
            (Square::D5, 600),
        ]);
        let previous = times(&[(Square::E4, 200)]);
        let reports = reported(&t, &previous);
        assert_eq!(
            reports.unseen_arrivals(&start, &seq),
            Bitboard::from(Square::D5)
        );
        let outage = Reports {
            outage: true,
            ..reports
        };
        assert_eq!(outage.unseen_arrivals(&start, &seq), Bitboard::EMPTY);
        let mut both = previous;
        both[Square::D5 as usize] = Some(400);
        let twice = Reports {
            previous: &both,
            ..reports
        };
        assert_eq!(twice.unseen_arrivals(&start, &seq), Bitboard::EMPTY);
    }

    #[test]
    fn a_board_naming_pieces_must_have_named_an_arrival_that_stood_a_while() {
        // Bxf7+ Kxf7: f7 reported emptied (the pawn taken) and then the king arriving.
        let start = position(
            "rnbqkbnr/pppp1ppp/8/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR w KQkq - 0 1",
            false,
        );
        let seq = moves_from(&start, &["c4f7", "e8f7"]);
        let t = times(&[(Square::C4, 100), (Square::E8, 9_000), (Square::F7, 9_100)]);
        let previous = times(&[(Square::F7, 150)]);
        let white_bishop = Piece {
            color: Color::White,
            role: Role::Bishop,
        };
        let nothing_named = [];
        let named = [(Square::F7, white_bishop, 300)];
        let naming = |placed| Reports {
            placed: Some(placed),
            ..reported(&t, &previous)
        };
        // The bishop would have stood on f7 for seconds, never named there.
        assert_eq!(
            naming(&nothing_named).unseen_arrivals(&start, &seq),
            Bitboard::from(Square::F7)
        );
        assert_eq!(
            naming(&named).unseen_arrivals(&start, &seq),
            Bitboard::EMPTY
        );
        // Taken at once, within a moment of the pawn leaving: a scan may miss it.
        let quick = times(&[(Square::C4, 100), (Square::E8, 400), (Square::F7, 500)]);
        let folded = Reports {
            times: &quick,
            ..naming(&nothing_named)
        };
        assert_eq!(folded.unseen_arrivals(&start, &seq), Bitboard::EMPTY);
        // A board that does not name pieces has only the two reports to go by.
        assert_eq!(
            reported(&t, &previous).unseen_arrivals(&start, &seq),
            Bitboard::EMPTY
        );
    }

    #[test]
    fn a_later_slide_over_a_vacated_square_does_not_date_its_departure() {
        // ...d5 (d7 emptied at 100), then Qh3xc8 slides over d7 at 900-1000: d7's last
        // report is the queen passing, not the pawn leaving after it arrived on d5.
        let start = position(
            "rnbqkbnr/pppppppp/8/8/8/7Q/PPPPPPPP/RNB1KBNR b KQkq - 0 1",
            false,
        );
        let seq = moves_from(&start, &["d7d5", "h3c8"]);
        let t = times(&[
            (Square::D5, 200),
            (Square::C8, 1100),
            (Square::H3, 800),
            (Square::D7, 1000),
        ]);
        assert_eq!(reported(&t, &t).inversion(&start, &seq), Some(0));
    }

    #[test]
    fn a_chess960_castling_onto_the_rooks_square_is_in_time() {
        // King e1, rook c1: O-O-O puts the king on c1 after the rook left it for d1, so
        // c1's last report is the king arriving, not the rook leaving.
        let start = position(
            "nqrnkrbb/pppppp1p/8/6p1/8/4N3/PPPPPPPP/NQR1KRBB w FCfc - 0 2",
            true,
        );
        let castle = start
            .legal_moves()
            .into_iter()
            .find(|m| {
                matches!(
                    m,
                    Move::Castle {
                        rook: Square::C1,
                        ..
                    }
                )
            })
            .unwrap();
        let t = times(&[(Square::C1, 1900), (Square::D1, 1000), (Square::E1, 1500)]);
        assert_eq!(reported(&t, &t).inversion(&start, &[castle]), Some(0));
    }

    #[test]
    fn a_change_a_board_dump_found_does_not_date_the_move() {
        // Ng1-f3 seen arriving at 1000; g1 found empty only by a dump at 2500.
        let start = Chess::default();
        let seq = after_moves(&["g1f3"]);
        let t = times(&[(Square::F3, 1000), (Square::G1, 2500)]);
        let reports = reported(&t, &t);
        assert_eq!(reports.inversion(&start, &seq), None);
        let dumped = Reports {
            undated: Bitboard::from(Square::G1),
            ..reports
        };
        assert_eq!(dumped.inversion(&start, &seq), Some(0));
    }

    fn after_moves(ucis: &[&str]) -> Vec<Move> {
        moves_from(&Chess::default(), ucis)
    }

    fn moves_from(start: &Chess, ucis: &[&str]) -> Vec<Move> {
        let mut pos = start.clone();
        ucis.iter()
            .map(|u| {
                let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    fn position(fen: &str, chess960: bool) -> Chess {
        crate::rules::Game::from_fen(fen, chess960)
            .unwrap()
            .start()
            .clone()
    }
}
