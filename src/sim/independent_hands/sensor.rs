//! The sensor: what the board reports of the happenings on its squares.
//!
//! - A USB board reports every change a few ms after it happens, in order (a piece still
//!   settling on its square may be reported a little later, and everything behind it waits).
//! - A scanning board samples each square once per scan (100–500 ms for the 64 squares, in
//!   a fixed order) and reports a square whose contents differ from what it last reported.
//!   Anything shorter than a scan may be missed; a placement may come before the lift that
//!   preceded it; a square that went from one piece to another reports the new piece.
//!
//! Either may, rarely, lose an update: the board believes it reported it.
//! Clock presses come through the board's link a few ms after the lever moves.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, Piece, Square};

use super::hands::{Happening, What};
use super::{Roughness, SensorKind};
use crate::board::{Millis, Observation, ObservationKind, Snapshot};
use crate::driver::verify::DEFAULT_QUIET;

/// The observations of a game (without the initial snapshot) and the updates lost.
pub(super) struct Reported {
    pub observations: Vec<Observation>,
    /// The updates the board lost, as they would have been reported.
    pub lost: Vec<Observation>,
}

/// The board a game is played on.
pub(super) fn choose(rng: &mut ChaCha8Rng, r: Roughness) -> SensorKind {
    match r {
        Roughness::Calm => SensorKind::Usb,
        Roughness::Rough => SensorKind::Scanning {
            period_ms: rng.gen_range(100..=500),
            from_a1: rng.gen_bool(0.5),
        },
    }
}

/// Chance that one square update is lost.
pub(super) fn drop_probability(r: Roughness) -> f64 {
    match r {
        Roughness::Calm => 0.0,
        Roughness::Rough => 0.0005,
    }
}

/// Reports `happenings` (sorted by time) as the sensor sees them.
pub(super) fn report(
    rng: &mut ChaCha8Rng,
    sensor: SensorKind,
    happenings: &[Happening],
    start: &Board,
    drop_p: f64,
) -> Reported {
    let mut timed: Vec<(Millis, u32, Observation)> = Vec::new();
    let mut lost: Vec<Observation> = Vec::new();
    let mut order = 0u32;
    let mut push = |timed: &mut Vec<(Millis, u32, Observation)>, t: Millis, what: What| {
        order += 1;
        timed.push((
            t,
            order,
            Observation {
                t_ms: t,
                kind: what.kind(),
            },
        ));
    };
    match sensor {
        SensorKind::Usb => {
            let mut last_square: Millis = 0;
            for h in happenings {
                match h.what {
                    What::Square(..) => {
                        let t = (h.t + rng.gen_range(2..=8) + h.settle_ms).max(last_square);
                        last_square = t;
                        if drop_p > 0.0 && rng.gen_bool(drop_p) {
                            lost.push(Observation {
                                t_ms: t,
                                kind: h.what.kind(),
                            });
                            continue;
                        }
                        push(&mut timed, t, h.what);
                    }
                    What::Press(_) => push(&mut timed, h.t + rng.gen_range(3..=15), h.what),
                }
            }
        }
        SensorKind::Scanning { .. } | SensorKind::Frames { .. } | SensorKind::Fields { .. } => {
            // A whole-frame board samples every square at the start of its scan, and its
            // frame reaches the host after the line carried it (and, for Certabo, after
            // the frames its vote waits for).
            let (period_ms, order, delay) = match sensor {
                SensorKind::Frames { board } => (
                    board.scan_period_ms(),
                    None,
                    board.report_delay_ms() - board.scan_period_ms() + board.frame_transfer_ms(),
                ),
                SensorKind::Scanning { period_ms, from_a1 } => (period_ms, Some(from_a1), 0),
                SensorKind::Fields { board } => (board.scan_period_ms(), Some(false), 0),
                SensorKind::Usb => (1, None, 0),
            };
            let end = happenings.last().map_or(0, |h| h.t) + 4 * period_ms;
            let mut starts: Vec<Millis> = Vec::new();
            let mut s = rng.gen_range(0..period_ms);
            while s <= end {
                starts.push(s);
                let jitter = rng.gen_range(0..=period_ms / 10);
                s += period_ms - period_ms / 20 + jitter;
            }
            starts.push(s);
            let sample = |k: usize, sq: Square| -> Millis {
                let idx = match order {
                    None => 0,
                    Some(true) => sq.to_u32(),
                    // DGT order: a8..h8, a7..h7, ..., a1..h1.
                    Some(false) => (7 - sq.rank().to_u32()) * 8 + sq.file().to_u32(),
                };
                let len = starts[k + 1] - starts[k];
                starts[k] + u64::from(idx) * len / 64
            };
            let scans = starts.len() - 1;
            let occupancy_only = matches!(
                sensor,
                SensorKind::Frames { board } | SensorKind::Fields { board }
                    if !board.identifies_pieces()
            );
            // Each square's changes, in time order.
            let mut per_square: Vec<Vec<(Millis, Option<Piece>)>> = vec![Vec::new(); 64];
            for h in happenings {
                match h.what {
                    What::Square(sq, to) => per_square[sq.to_usize()].push((h.t, to)),
                    What::Press(_) => push(&mut timed, h.t + rng.gen_range(3..=15), h.what),
                }
            }
            for (i, changes) in per_square.iter().enumerate() {
                let sq = Square::new(i as u32);
                let mut reported = start.piece_at(sq);
                let mut j = 0;
                while j < changes.len() {
                    let t = changes[j].0;
                    // The first sample at or after this change.
                    let k = partition(scans, |k| sample(k, sq) < t);
                    if k >= scans {
                        break;
                    }
                    let at = sample(k, sq);
                    let mut now = reported;
                    while j < changes.len() && changes[j].0 <= at {
                        now = changes[j].1;
                        j += 1;
                    }
                    // A board that senses only occupancy reports no piece taking
                    // another's place between two samples.
                    let changed = if occupancy_only {
                        now.is_some() != reported.is_some()
                    } else {
                        now != reported
                    };
                    if changed {
                        reported = now;
                        if drop_p > 0.0 && rng.gen_bool(drop_p) {
                            lost.push(Observation {
                                t_ms: at + 2 + delay,
                                kind: What::Square(sq, now).kind(),
                            });
                            continue;
                        }
                        // The link sends the scan's reports in scan order.
                        push(&mut timed, at + 2 + delay, What::Square(sq, now));
                    }
                }
            }
        }
    }
    // A frame's host reads its emptied squares first; otherwise the order of reporting.
    let frames = matches!(sensor, SensorKind::Frames { .. });
    timed.sort_by_key(|(t, order, o)| {
        let placed = frames && matches!(o.kind, ObservationKind::Placed(..));
        (*t, placed, *order)
    });
    Reported {
        observations: timed.into_iter().map(|(_, _, o)| o).collect(),
        lost,
    }
}

/// The first index in `0..n` for which `before` is false (`before` is true then false).
fn partition(n: usize, before: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = (lo + hi) / 2;
        if before(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// What a dump shows on a square a board that does not name pieces reports occupied (its
/// dumps are marked as naming none): a white pawn, as DGT's code 1 reads.
const OCCUPIED: Piece = Piece {
    color: shakmaty::Color::White,
    role: shakmaty::Role::Pawn,
};

/// How long after its trigger a verification dump reaches the host: the request, and the
/// 67-byte reply at 9600 baud.
const DUMP_REPLY_MS: Millis = 80;

/// The board dumps the host's driver asks for (as `crate::driver::verify` does on a real
/// link): one after each clock press, and one once the square updates have stopped for
/// [`DEFAULT_QUIET`]. Each shows the board's own picture when it answers: every change it
/// sampled, including those whose update was lost. `observations` (sorted by time, the
/// first a snapshot of `start`) gets the dumps in time order; a dump answered at the very
/// time of an update comes after it.
pub(super) fn with_verification_dumps(
    observations: &[Observation],
    lost: &[Observation],
    start: &Board,
) -> Vec<Observation> {
    let quiet = DEFAULT_QUIET.as_millis() as Millis;
    let squares = |o: &&Observation| {
        matches!(
            o.kind,
            ObservationKind::Emptied(_) | ObservationKind::Placed(..)
        )
    };
    let mut answers: Vec<Millis> = Vec::new();
    let updates: Vec<Millis> = observations
        .iter()
        .filter(squares)
        .map(|o| o.t_ms)
        .collect();
    for (i, &t) in updates.iter().enumerate() {
        let next = updates.get(i + 1).copied().unwrap_or(Millis::MAX);
        if next.saturating_sub(t) >= quiet {
            answers.push(t + quiet + DUMP_REPLY_MS);
        }
    }
    answers.extend(
        observations
            .iter()
            .filter(|o| matches!(o.kind, ObservationKind::ClockPressed { .. }))
            .map(|o| o.t_ms + DUMP_REPLY_MS),
    );
    answers.sort_unstable();
    answers.dedup();
    let mut changes: Vec<&Observation> = observations.iter().chain(lost).filter(squares).collect();
    changes.sort_by_key(|o| o.t_ms);
    let mut picture = start.clone();
    let mut applied = 0;
    let mut dumps = Vec::with_capacity(answers.len());
    for t in answers {
        while let Some(change) = changes.get(applied).filter(|c| c.t_ms <= t) {
            match change.kind {
                ObservationKind::Emptied(sq) => picture.discard_piece_at(sq),
                ObservationKind::Placed(sq, piece) => {
                    picture.set_piece_at(sq, piece.unwrap_or(OCCUPIED));
                }
                _ => {}
            }
            applied += 1;
        }
        dumps.push(Observation {
            t_ms: t,
            kind: ObservationKind::Snapshot(Snapshot {
                board: picture.clone(),
                identifies_pieces: true,
            }),
        });
    }
    let mut merged: Vec<Observation> = observations.iter().cloned().chain(dumps).collect();
    // Stable: an update received at the very time of a dump goes first.
    merged.sort_by_key(|o| o.t_ms);
    merged
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, Role, Square};

    use super::*;

    /// The board `start` seen whole at 0 ms.
    fn start_snapshot(start: &Board) -> Observation {
        at(
            0,
            ObservationKind::Snapshot(Snapshot {
                board: start.clone(),
                identifies_pieces: true,
            }),
        )
    }

    fn at(t_ms: Millis, kind: ObservationKind) -> Observation {
        Observation { t_ms, kind }
    }

    #[test]
    fn dumps_after_the_press_and_the_quiet_show_the_lost_update() {
        let start = Board::new();
        let pawn = Piece {
            color: Color::White,
            role: Role::Pawn,
        };
        let snapshot = start_snapshot(&start);
        let observations = vec![
            snapshot,
            at(1_000, ObservationKind::Emptied(Square::E2)),
            at(1_200, ObservationKind::ClockPressed { by: Color::White }),
        ];
        let lost = vec![at(1_100, ObservationKind::Placed(Square::E4, Some(pawn)))];
        let verified = with_verification_dumps(&observations, &lost, &start);
        let dumps: Vec<(Millis, &Board)> = verified
            .iter()
            .filter_map(|o| match &o.kind {
                ObservationKind::Snapshot(s) if o.t_ms > 0 => Some((o.t_ms, &s.board)),
                _ => None,
            })
            .collect();
        let quiet = DEFAULT_QUIET.as_millis() as Millis;
        let times: Vec<Millis> = dumps.iter().map(|(t, _)| *t).collect();
        assert_eq!(
            times,
            [1_200 + DUMP_REPLY_MS, 1_000 + quiet + DUMP_REPLY_MS]
        );
        for (_, board) in dumps {
            assert_eq!(board.piece_at(Square::E4), Some(pawn));
            assert_eq!(board.piece_at(Square::E2), None);
        }
        assert!(verified.windows(2).all(|w| w[0].t_ms <= w[1].t_ms));
        assert_eq!(verified.len(), observations.len() + 2);
    }

    #[test]
    fn a_dump_shows_a_square_an_occupancy_board_reported_filled() {
        let start = Board::new();
        let snapshot = start_snapshot(&start);
        let observations = vec![
            snapshot,
            at(1_000, ObservationKind::Emptied(Square::E2)),
            at(1_100, ObservationKind::Placed(Square::E4, None)),
        ];
        let verified = with_verification_dumps(&observations, &[], &start);
        let Some(ObservationKind::Snapshot(dump)) = verified.last().map(|o| &o.kind) else {
            panic!("a dump after the quiet: {verified:?}")
        };
        assert!(dump.board.piece_at(Square::E4).is_some());
        assert!(dump.board.piece_at(Square::E2).is_none());
    }
}
