//! When the board reported each square: the evidence a reconstruction must agree with in
//! time as well as in squares.

use shakmaty::{Bitboard, Chess, Color, Move, Piece, Position, Role, Square, attacks};

use super::move_squares::{mover_at, squares_of};
use crate::board::Millis;

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
    /// The board sends whole frames: every square is sampled at once.
    pub whole_frames: bool,
    /// Each player's latest clock press, indexed by colour: a press after a piece's lift
    /// says its move was made, wherever the board failed to show it land.
    pub pressed: [Option<Millis>; 2],
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
        whole_frames: false,
        pressed: [None; 2],
    };

    /// When `sq` last changed, if it changed during the moves being reconstructed.
    pub fn time(&self, sq: Square) -> Option<Millis> {
        self.times[sq as usize].filter(|&t| t >= self.since)
    }

    /// True when `sq` was reported during the moves being reconstructed, other than by the
    /// whole frame in which the start position was reached: on a board that sends whole
    /// frames, that report is the arrival that reached it, and a later change (a capture
    /// there) shows in a later frame. A board that samples its squares one by one may fold
    /// an arrival and a quick capture into one report.
    pub(super) fn changed_after_start(&self, sq: Square) -> bool {
        self.time(sq)
            .is_some_and(|t| !self.whole_frames || t > self.since)
    }

    /// True when the board may have reported the landing of the capture `m`: its square
    /// changed during the moves ([`Reports::changed_after_start`]) and, on a board that
    /// senses only occupancy, no earlier than a scan's reordering before the capturer's lift.
    /// An earlier report is the victim's arrival: the capture itself left the square full.
    pub(super) fn capture_landing_reported(&self, m: Move) -> bool {
        let lift = m.from().and_then(|from| self.time(from));
        self.changed_after_start(m.to())
            && self
                .time(m.to())
                .is_some_and(|landed| !self.victims_arrival(m, landed, lift))
    }

    /// On a board that senses only occupancy, true when `reported`, a report of the square the
    /// capture `m` lands on, came more than a scan's reordering before the capturer's `lift`:
    /// it was the victim's arrival, since the capture itself left the square full.
    fn victims_arrival(&self, m: Move, reported: Millis, lift: Option<Millis>) -> bool {
        self.placed.is_none()
            && m.is_capture()
            && lift.is_some_and(|l| reported.saturating_add(self.slack) < l)
    }

    /// The squares reported during the moves being reconstructed.
    pub(super) fn seen(&self) -> Bitboard {
        Bitboard::FULL
            .into_iter()
            .filter(|&sq| self.time(sq).is_some())
            .collect()
    }

    /// The squares reported twice during the moves being reconstructed: on a board that
    /// senses only occupancy, a square one move left and a later one filled shows as it did
    /// before them, and only its reports tell that a move began there.
    pub(super) fn left_and_refilled(&self) -> Bitboard {
        Bitboard::FULL
            .into_iter()
            .filter(|&sq| self.previous[sq as usize].is_some_and(|t| t >= self.since))
            .collect()
    }

    /// Every piece `seq` carries, played from `start`, with the report times of its arrival
    /// and of its departure when no later move of the sequence changes that square again
    /// (only then is the square's last report that arrival or departure).
    fn carried(&self, start: &Chess, seq: &[Move]) -> Vec<Carried> {
        let turn = |i: usize| mover_at(start, i);
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
                    arrived: final_time(to).filter(|&a| !self.victims_arrival(m, a, left)),
                    arrived_by: self.named_by_dump(to).filter(|_| !later.contains(to)),
                    left,
                });
            }
        }
        carried
    }

    /// On a board that names pieces, when a board dump, the square's latest report, found
    /// `sq` changed: the piece it named there had arrived by then, whenever it did.
    fn named_by_dump(&self, sq: Square) -> Option<Millis> {
        self.placed?;
        self.time(sq).filter(|_| self.undated.contains(sq))
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
    /// that order of moves cannot have happened. A piece a board dump named on its square
    /// arrived by the dump: a departure reported later than that by more than the slack
    /// came after it.
    pub fn inversion(&self, start: &Chess, seq: &[Move]) -> Option<Millis> {
        let carried = self.carried(start, seq);
        let mut total: Millis = 0;
        for (a, arrival) in carried.iter().enumerate() {
            let Some(arrived) = arrival.arrived.or(arrival.arrived_by) else {
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

    /// The squares the board reported during the moves that `seq`, played from `start`,
    /// neither changes nor passes over: reports it leaves unexplained.
    pub fn unexplained(&self, start: &Chess, seq: &[Move]) -> Bitboard {
        let covered = seq
            .iter()
            .enumerate()
            .fold(Bitboard::EMPTY, |acc, (i, &m)| {
                let mover = mover_at(start, i);
                acc | touched_squares(m, mover) | passed_squares(m, mover)
            });
        self.seen() & !covered
    }

    /// True when the player of move `i` of `seq`, played from `start`, pressed the clock
    /// after the board reported that move's piece lifted, and reported nothing put down
    /// between (no square but the opponent's changed: his reply may have begun): the move
    /// was made by then, and landed where the board could not show it.
    pub fn pressed_after_lift(&self, start: &Chess, seq: &[Move], i: usize) -> bool {
        let mover = mover_at(start, i);
        let (Some(from), Some(pressed)) = (seq[i].from(), self.pressed[mover as usize]) else {
            return false;
        };
        let Some(lift) = self.time(from).filter(|&lift| pressed >= lift) else {
            return false;
        };
        let mut before = start.clone();
        for &m in &seq[..i] {
            before.play_unchecked(m);
        }
        let opponents = before.board().by_color(!mover);
        let between = |t: Option<Millis>| t.is_some_and(|t| t > lift && t <= pressed);
        !Bitboard::FULL.into_iter().any(|sq| {
            sq != from
                && !opponents.contains(sq)
                && (between(self.times[sq as usize]) || between(self.previous[sq as usize]))
        })
    }

    /// True when the player of move `i` of `seq`, played from `start`, lifted the piece of
    /// his next move (`i + 2`) after that of move `i`, and pressed the clock after it
    /// (whatever else the board reported meanwhile).
    pub fn pressed_after_next_lift(&self, start: &Chess, seq: &[Move], i: usize) -> bool {
        let mover = mover_at(start, i);
        let lift = |k: usize| seq.get(k).and_then(|m| self.time(m.from()?));
        match (lift(i), lift(i + 2), self.pressed[mover as usize]) {
            (Some(first), Some(next), Some(pressed)) => first < next && next <= pressed,
            _ => false,
        }
    }

    /// True when the opponent of the player of move `i` of `seq`, played from `start`,
    /// lifted the piece of his reply (`i + 1`) after that of move `i`, and then pressed the
    /// clock or the board showed every square of the reply changed more than a scan after
    /// that lift (sooner, move `i` may have been still under way, its landing not yet
    /// sampled): he answered, so move `i` was over.
    pub fn answered(&self, start: &Chess, seq: &[Move], i: usize) -> bool {
        let replier = !mover_at(start, i);
        let lift = |k: usize| seq.get(k).and_then(|m| self.time(m.from()?));
        let (Some(first), Some(reply)) = (lift(i), lift(i + 1)) else {
            return false;
        };
        let made = squares_of(seq[i + 1]).into_iter().all(|sq| {
            self.time(sq)
                .is_some_and(|t| t > first.saturating_add(self.slack))
        });
        first < reply && (made || self.pressed[replier as usize].is_some_and(|p| p >= reply))
    }

    /// True when move `i` of `seq`, played from `start`, passes over a square the board
    /// reported during the moves that no other move of `seq` changes or passes over: the
    /// piece was seen on its way, as a slide shows it.
    pub fn seen_on_its_way(&self, start: &Chess, seq: &[Move], i: usize) -> bool {
        let others = seq.iter().enumerate().filter(|&(j, _)| j != i).fold(
            Bitboard::EMPTY,
            |acc, (j, &m)| {
                let mover = mover_at(start, j);
                acc | touched_squares(m, mover) | passed_squares(m, mover)
            },
        );
        (passed_squares(seq[i], mover_at(start, i)) & self.seen() & !others).any()
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
        let turn = |i: usize| mover_at(start, i);
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
                        // missed a piece that stood there only a moment. Not when the earlier
                        // report named the piece a later move of the sequence brings there:
                        // that report came after the moment.
                        let arriving_later = seq[i + 1..]
                            .iter()
                            .enumerate()
                            .find(|&(j, &n)| touched_squares(n, turn(i + 1 + j)).contains(to))
                            .and_then(|(j, &n)| {
                                let color = turn(i + 1 + j);
                                paths(n, color).into_iter().find(|&(_, end)| end == to).map(
                                    |(start, _)| Piece {
                                        color,
                                        role: n.promotion().unwrap_or(role_leaving(n, start)),
                                    },
                                )
                            });
                        let previous_named_later = previous.is_some_and(|before| {
                            placed.iter().any(|&(sq, p, t)| {
                                sq == to && t == before && Some(p) == arriving_later
                            })
                        });
                        let folded = !previous_named_later
                            && previous.zip(self.times[to as usize]).is_some_and(
                                |(before, last)| {
                                    last.saturating_sub(before) <= MOMENT_UNREPORTED_MS
                                },
                            );
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
        self.most_before(start, seq, |earlier| earlier.arrived, |later| later.left)
    }

    /// The first move of `seq` (its index, and the time of the report) whose arrival was
    /// reported together with a later move's departure: the board cannot say which came
    /// first, so the later move may have begun before that one was over
    /// ([`Reports::overlap`] counts only what the times prove).
    pub fn begun_at_an_arrival(&self, start: &Chess, seq: &[Move]) -> Option<(usize, Millis)> {
        let carried = self.carried(start, seq);
        carried.iter().find_map(|earlier| {
            let arrived = earlier.arrived?;
            carried
                .iter()
                .any(|later| later.ply > earlier.ply && later.left == Some(arrived))
                .then_some((earlier.ply, arrived))
        })
    }

    /// How long before a piece of `seq` was seen arriving for good a piece of a later move
    /// of the sequence was: zero when the moves were seen finished in their order. More
    /// than zero means a reply was over before the move it answers, which hands do not do.
    pub fn finished_out_of_order(&self, start: &Chess, seq: &[Move]) -> Millis {
        self.most_before(start, seq, |earlier| earlier.arrived, |later| later.arrived)
    }

    /// How long before a piece of `seq` was seen leaving its square a piece of a later move
    /// was: zero when the moves were seen begun in their order. Captures on one square leave
    /// only their lifts to tell their order.
    pub fn begun_out_of_order(&self, start: &Chess, seq: &[Move]) -> Millis {
        self.most_before(start, seq, |earlier| earlier.left, |later| later.left)
    }

    /// The most that `seen_later` of a piece carried by a later move of `seq` comes before
    /// `seen_earlier` of a piece carried by an earlier one.
    fn most_before(
        &self,
        start: &Chess,
        seq: &[Move],
        seen_earlier: impl Fn(&Carried) -> Option<Millis>,
        seen_later: impl Fn(&Carried) -> Option<Millis>,
    ) -> Millis {
        let carried = self.carried(start, seq);
        let mut most = 0;
        for earlier in &carried {
            let Some(first) = seen_earlier(earlier) else {
                continue;
            };
            for later in carried.iter().filter(|c| c.ply > earlier.ply) {
                if let Some(t) = seen_later(later) {
                    most = most.max(first.saturating_sub(t));
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
    /// On a board that names pieces, the time of the dump that found the piece arrived
    /// ([`Reports::named_by_dump`]): it arrived then or earlier.
    arrived_by: Option<Millis>,
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
