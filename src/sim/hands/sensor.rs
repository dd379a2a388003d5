//! The board's sensors: what a scanning board reports of the physical actions, and what
//! the host's driver makes of it.
//!
//! A DGT board samples its squares one after another (a8 … h1 as numbered from the
//! connector side) and sends a field update whenever a sampled square differs from what it
//! last reported. A change is therefore reported only when its square is next sampled, and
//! several changes of one square between two samples collapse into one report of the
//! latest state (a capture's target may go straight from victim to capturer; a quick lift
//! and put-back may never be reported). Clock presses come through the clock messages,
//! shortly after they happen.
//!
//! A field update may be lost on the way ([`SensorModel::drop_probability`]); it is lost for
//! good, but the board itself knows the square changed. The host's driver re-reads the board
//! with a full dump (see `crate::driver::verify`) right after each clock press it sees and
//! once the field updates have stopped for a quiet period; each dump arrives as a
//! [`ObservationKind::Snapshot`] of the board's own picture at the moment it answers (one
//! request outstanding at most; a trigger meanwhile is served when the reply is in). The
//! dump takes the serial line for its 67 bytes, delaying the field updates behind it. Like
//! the host's observer, a field update that does not change the host's picture (the dump
//! already showed it) is not passed on. Line noise that the decoder notices (another reason
//! for the driver to dump) is not modelled: a dropped update here leaves no trace.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, Piece, Square};

use super::choreography::{Phys, PhysEvent};
use super::{ExpectedAlert, InjectedIrregularity, IrregularityKind, SensorModel};
use crate::board::{Millis, Observation, ObservationKind, Snapshot};
use crate::driver::verify::DEFAULT_QUIET;

/// The board's own index of a square: 0 = a8, 7 = h8, … 63 = h1.
fn scan_index(sq: Square) -> u32 {
    (7 - sq.rank() as u32) * 8 + sq.file() as u32
}

/// Serial time of one 5-byte field update at 9600 baud.
const FIELD_UPDATE_MS: f64 = 5.2;

/// Serial time of one 67-byte board dump at 9600 baud.
const BOARD_DUMP_MS: f64 = 69.8;

/// One message on its way to the host: when the board sampled what it says (the order of
/// the serial line), when it could arrive with the line free, how long it holds the serial
/// line (`None`: clock messages, not modelled on the line), what it says.
struct Sent {
    sampled: f64,
    ready: f64,
    serial_ms: Option<f64>,
    kind: ObservationKind,
}

/// Appends to `out` what the host receives from the board for `events`.
pub(super) fn report(
    sensor: &SensorModel,
    start: &Board,
    events: &[PhysEvent],
    rng: &mut ChaCha8Rng,
    ply_start_ms: &[Millis],
    out: &mut Vec<Observation>,
    injected: &mut Vec<InjectedIrregularity>,
) {
    let phase = if sensor.scan_period_ms > 0.0 {
        rng.gen_range(0.0..sensor.scan_period_ms)
    } else {
        0.0
    };
    // (time sampled, order, kind)
    let mut reports: Vec<(f64, u32, ObservationKind)> = Vec::new();
    let mut per_square: Vec<Vec<(f64, Option<Piece>)>> = vec![Vec::new(); 64];
    for e in events {
        match e.what {
            Phys::Lift(sq) => per_square[sq as usize].push((e.t, None)),
            Phys::Put(sq, p) => per_square[sq as usize].push((e.t, Some(p))),
            Phys::Press(by) => {
                let delay = sensor.latency_ms + 20.0;
                reports.push((e.t + delay, 64, ObservationKind::ClockPressed { by }));
            }
        }
    }
    for (index, changes) in per_square.iter().enumerate() {
        let sq = Square::new(index as u32);
        let mut reported = start.piece_at(sq);
        let offset = if sensor.whole_frame {
            phase
        } else {
            phase + scan_index(sq) as f64 * sensor.scan_period_ms / 64.0
        };
        let mut i = 0;
        while i < changes.len() {
            let sample = if sensor.scan_period_ms > 0.0 {
                let k = ((changes[i].0 - offset) / sensor.scan_period_ms).ceil();
                offset + k.max(0.0) * sensor.scan_period_ms
            } else {
                changes[i].0
            };
            let mut state = changes[i].1;
            i += 1;
            while sensor.scan_period_ms > 0.0 && i < changes.len() && changes[i].0 <= sample {
                state = changes[i].1;
                i += 1;
            }
            let changed = if sensor.occupancy_only {
                state.is_some() != reported.is_some()
            } else {
                state != reported
            };
            if changed {
                reported = state;
                let (kind, order) = match state {
                    Some(p) => (ObservationKind::Placed(sq, Some(p)), 100 + scan_index(sq)),
                    None => (ObservationKind::Emptied(sq), scan_index(sq)),
                };
                // A DGT board reports in sampling order; a whole frame is read empty
                // squares first, as the host's adapter does.
                let order = if sensor.whole_frame {
                    order
                } else {
                    scan_index(sq)
                };
                reports.push((sample, order, kind));
            }
        }
    }
    reports.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut sent = Vec::with_capacity(reports.len());
    for (sample, _, kind) in &reports {
        let field = !matches!(kind, ObservationKind::ClockPressed { .. });
        if field && rng.gen_bool(sensor.drop_probability.clamp(0.0, 1.0)) {
            let square = match kind {
                ObservationKind::Emptied(sq) | ObservationKind::Placed(sq, _) => sq.to_string(),
                _ => String::new(),
            };
            let t = sample.round() as Millis;
            injected.push(InjectedIrregularity {
                kind: IrregularityKind::DroppedUpdate,
                ply: ply_start_ms.iter().filter(|s| **s <= t).count() as u32,
                t_ms: t,
                squares: vec![square],
                expected: ExpectedAlert::Allowed,
            });
            continue;
        }
        sent.push(Sent {
            sampled: *sample,
            ready: if field {
                sample + sensor.latency_ms
            } else {
                *sample
            },
            serial_ms: (field && !sensor.whole_frame).then_some(FIELD_UPDATE_MS),
            kind: kind.clone(),
        });
    }
    let without_dumps = arrivals(&sent);
    let dumps = if sensor.whole_frame {
        Vec::new()
    } else {
        dump_times(&sent, &without_dumps, sensor.latency_ms)
    };
    for answered in dumps {
        sent.push(Sent {
            sampled: answered,
            ready: answered + BOARD_DUMP_MS,
            serial_ms: Some(BOARD_DUMP_MS),
            kind: ObservationKind::Snapshot(Snapshot {
                board: board_at(start, &reports, answered),
                identifies_pieces: true,
            }),
        });
    }
    // Stable: a field update sampled at the very time of a dump's answer goes first, and the
    // dump (which includes it) follows.
    sent.sort_by(|a, b| a.sampled.total_cmp(&b.sampled));
    let arrived = arrivals(&sent);
    let mut order: Vec<usize> = (0..sent.len()).collect();
    order.sort_by(|&a, &b| arrived[a].total_cmp(&arrived[b]));
    let mut host = start.clone();
    for i in order {
        let kind = &sent[i].kind;
        if changes_host(&mut host, kind) {
            out.push(Observation {
                t_ms: arrived[i].round().max(1.0) as Millis,
                kind: kind.clone(),
            });
        }
    }
    out.sort_by_key(|o| o.t_ms);
}

/// When each message reaches the host: messages on the serial line (in `sent` order) wait
/// for the line to be free.
fn arrivals(sent: &[Sent]) -> Vec<f64> {
    let mut line_free = 0.0f64;
    sent.iter()
        .map(|m| match m.serial_ms {
            Some(serial) => {
                let at = m.ready.max(line_free + serial);
                line_free = at;
                at
            }
            None => m.ready,
        })
        .collect()
}

/// When the board answers the driver's dump requests: after each clock press the host
/// receives and after each quiet period of the field updates, the request reaching the board
/// `latency_ms` later; a request due while another is unanswered waits for its reply.
fn dump_times(sent: &[Sent], arrived: &[f64], latency_ms: f64) -> Vec<f64> {
    let quiet = DEFAULT_QUIET.as_secs_f64() * 1000.0;
    let mut requests: Vec<f64> = Vec::new();
    let mut fields = sent
        .iter()
        .zip(arrived)
        .filter(|(m, _)| m.serial_ms.is_some())
        .map(|(_, &t)| t)
        .peekable();
    while let Some(t) = fields.next() {
        if fields.peek().is_none_or(|&next| next >= t + quiet) {
            requests.push(t + quiet);
        }
    }
    requests.extend(
        sent.iter()
            .zip(arrived)
            .filter(|(m, _)| matches!(m.kind, ObservationKind::ClockPressed { .. }))
            .map(|(_, &t)| t),
    );
    requests.sort_by(f64::total_cmp);
    let mut answers = Vec::new();
    let mut reply_at = f64::NEG_INFINITY;
    let mut waiting = false;
    let ask = |at: f64, answers: &mut Vec<f64>| {
        answers.push(at + latency_ms);
        at + latency_ms + BOARD_DUMP_MS
    };
    for t in requests {
        if waiting && t >= reply_at {
            reply_at = ask(reply_at, &mut answers);
            waiting = false;
        }
        if t < reply_at {
            waiting = true;
        } else {
            reply_at = ask(t, &mut answers);
        }
    }
    if waiting {
        ask(reply_at, &mut answers);
    }
    answers
}

/// The board's own picture at `t`: every change it sampled by then, reported or lost.
fn board_at(start: &Board, reports: &[(f64, u32, ObservationKind)], t: f64) -> Board {
    let mut board = start.clone();
    for (_, _, kind) in reports.iter().take_while(|r| r.0 <= t) {
        match *kind {
            ObservationKind::Emptied(sq) => {
                board.discard_piece_at(sq);
            }
            ObservationKind::Placed(sq, Some(p)) => board.set_piece_at(sq, p),
            _ => {}
        }
    }
    board
}

/// Applies an observation to the host's picture the way the board observer does; false for
/// a field update that changes nothing (the observer passes no such update on).
fn changes_host(host: &mut Board, kind: &ObservationKind) -> bool {
    match *kind {
        ObservationKind::Emptied(sq) => host.remove_piece_at(sq).is_some(),
        ObservationKind::Placed(sq, Some(p)) => {
            let changed = host.piece_at(sq) != Some(p);
            host.set_piece_at(sq, p);
            changed
        }
        ObservationKind::Snapshot(ref snapshot) => {
            *host = snapshot.board.clone();
            true
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use shakmaty::{Color, Role};

    fn pawn() -> Piece {
        Piece {
            color: Color::White,
            role: Role::Pawn,
        }
    }

    fn at(t: f64, what: Phys) -> PhysEvent {
        PhysEvent { t, what }
    }

    fn sensor(scan_period_ms: f64, latency_ms: f64, drop_probability: f64) -> SensorModel {
        SensorModel {
            scan_period_ms,
            latency_ms,
            drop_probability,
            whole_frame: false,
            occupancy_only: false,
        }
    }

    /// What the host receives for `events` on a board holding one pawn on e2.
    fn received(sensor: &SensorModel, events: &[PhysEvent]) -> (Vec<Observation>, usize) {
        let mut board = Board::empty();
        board.set_piece_at(Square::E2, pawn());
        let mut out = Vec::new();
        let mut injected = Vec::new();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        report(
            sensor,
            &board,
            events,
            &mut rng,
            &[],
            &mut out,
            &mut injected,
        );
        (out, injected.len())
    }

    fn snapshot_of(obs: &Observation) -> Option<&Board> {
        match &obs.kind {
            ObservationKind::Snapshot(s) => Some(&s.board),
            _ => None,
        }
    }

    #[test]
    fn changes_between_two_samples_collapse_into_the_latest_state() {
        let events = [
            at(1000.0, Phys::Lift(Square::E2)),
            at(1001.0, Phys::Put(Square::E2, pawn())),
            at(2000.0, Phys::Lift(Square::E2)),
        ];
        let (out, _) = received(&sensor(200.0, 0.0, 0.0), &events);
        assert_eq!(out[0].kind, ObservationKind::Emptied(Square::E2), "{out:?}");
        assert!(out[0].t_ms >= 2000 && out[0].t_ms <= 2200);
        // Then, once the board has been quiet, the driver's verification dump.
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(snapshot_of(&out[1]), Some(&Board::empty()));
        assert!(out[1].t_ms >= out[0].t_ms + 2000, "{out:?}");
    }

    #[test]
    fn a_board_that_senses_occupancy_reports_no_piece_taking_anothers_place_unsampled() {
        // A knight takes the pawn on e2: the pawn lifted, the knight put down, both between
        // two samples of e2 (no sample falls in a 2 ms window of a 200 ms scan).
        let knight = Piece {
            color: Color::Black,
            role: Role::Knight,
        };
        let events = [
            at(1000.0, Phys::Lift(Square::E2)),
            at(1001.0, Phys::Put(Square::E2, knight)),
        ];
        let fields = |out: &[Observation]| -> Vec<ObservationKind> {
            out.iter()
                .filter(|o| snapshot_of(o).is_none())
                .map(|o| o.kind.clone())
                .collect()
        };
        let (named, _) = received(&sensor(200.0, 0.0, 0.0), &events);
        assert_eq!(
            fields(&named),
            [ObservationKind::Placed(Square::E2, Some(knight))],
            "a board that names pieces sees another piece on e2"
        );
        let occupancy = SensorModel {
            occupancy_only: true,
            ..sensor(200.0, 0.0, 0.0)
        };
        let (sensed, _) = received(&occupancy, &events);
        assert_eq!(fields(&sensed), [], "e2 was occupied at every sample");
    }

    #[test]
    fn a_lost_update_is_recovered_by_the_dump_after_the_press() {
        let events = [
            at(1000.0, Phys::Lift(Square::E2)),
            at(1300.0, Phys::Put(Square::E4, pawn())),
            at(1600.0, Phys::Press(Color::White)),
        ];
        let (out, dropped) = received(&sensor(0.0, 5.0, 1.0), &events);
        assert_eq!(dropped, 2, "both field updates lost");
        let kinds: Vec<_> = out.iter().map(|o| &o.kind).collect();
        assert!(
            matches!(
                kinds[..2],
                [
                    ObservationKind::ClockPressed { by: Color::White },
                    ObservationKind::Snapshot(_)
                ]
            ),
            "{out:?}"
        );
        let mut after = Board::empty();
        after.set_piece_at(Square::E4, pawn());
        assert_eq!(snapshot_of(&out[1]), Some(&after));
        // Press seen at 1625, request at the board 5 ms later, 67 bytes on the line.
        assert_eq!(out[1].t_ms, 1700);
    }

    #[test]
    fn one_dump_is_outstanding_and_updates_it_shows_are_not_repeated() {
        let events = [
            at(1000.0, Phys::Lift(Square::E2)),
            at(1001.0, Phys::Press(Color::White)),
            at(1010.0, Phys::Put(Square::E4, pawn())),
            at(1020.0, Phys::Press(Color::Black)),
        ];
        let (out, _) = received(&sensor(0.0, 5.0, 0.0), &events);
        let dumps: Vec<&Observation> = out.iter().filter(|o| snapshot_of(o).is_some()).collect();
        // Two presses 19 ms apart: the second waits for the first dump's reply; then the
        // quiet-period dump.
        assert_eq!(dumps.len(), 3, "{out:?}");
        assert!(dumps[1].t_ms >= dumps[0].t_ms + 70, "{out:?}");
        let placed = out
            .iter()
            .filter(|o| matches!(o.kind, ObservationKind::Placed(..)))
            .count();
        assert_eq!(placed, 1, "{out:?}");
        let lifted = out
            .iter()
            .filter(|o| matches!(o.kind, ObservationKind::Emptied(_)))
            .count();
        assert_eq!(lifted, 1, "{out:?}");
    }
}
