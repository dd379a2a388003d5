//! The board's sensors: what a scanning board reports of the physical actions.
//!
//! A DGT board samples its squares one after another (a8 … h1 as numbered from the
//! connector side) and sends a field update whenever a sampled square differs from what it
//! last reported. A change is therefore reported only when its square is next sampled, and
//! several changes of one square between two samples collapse into one report of the
//! latest state (a capture's target may go straight from victim to capturer; a quick lift
//! and put-back may never be reported). Clock presses come through the clock messages,
//! shortly after they happen.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, Piece, Square};

use super::choreography::{Phys, PhysEvent};
use super::{ExpectedAlert, InjectedIrregularity, IrregularityKind, SensorModel};
use crate::board::{Millis, Observation, ObservationKind};

/// The board's own index of a square: 0 = a8, 7 = h8, … 63 = h1.
fn scan_index(sq: Square) -> u32 {
    (7 - sq.rank() as u32) * 8 + sq.file() as u32
}

/// Serial time of one 5-byte field update at 9600 baud.
const FIELD_UPDATE_MS: f64 = 5.2;

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
        let offset = phase + scan_index(sq) as f64 * sensor.scan_period_ms / 64.0;
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
            if state != reported {
                reported = state;
                let kind = match state {
                    Some(p) => ObservationKind::Placed(sq, Some(p)),
                    None => ObservationKind::Emptied(sq),
                };
                reports.push((sample, scan_index(sq), kind));
            }
        }
    }
    reports.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut last_sent = 0.0f64;
    for (sample, _, kind) in reports {
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
        let arrival = if field {
            let a = (sample + sensor.latency_ms).max(last_sent + FIELD_UPDATE_MS);
            last_sent = a;
            a
        } else {
            sample
        };
        out.push(Observation {
            t_ms: arrival.round().max(1.0) as Millis,
            kind,
        });
    }
    out.sort_by_key(|o| o.t_ms);
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

    #[test]
    fn changes_between_two_samples_collapse_into_the_latest_state() {
        let sensor = SensorModel {
            scan_period_ms: 200.0,
            latency_ms: 0.0,
            drop_probability: 0.0,
        };
        let mut board = Board::empty();
        board.set_piece_at(Square::E4, pawn());
        let events = [
            PhysEvent {
                t: 1000.0,
                what: Phys::Lift(Square::E4),
            },
            PhysEvent {
                t: 1001.0,
                what: Phys::Put(Square::E4, pawn()),
            },
            PhysEvent {
                t: 2000.0,
                what: Phys::Lift(Square::E4),
            },
        ];
        let mut out = Vec::new();
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        report(
            &sensor,
            &board,
            &events,
            &mut rng,
            &[],
            &mut out,
            &mut Vec::new(),
        );
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].kind, ObservationKind::Emptied(Square::E4));
        assert!(out[0].t_ms >= 2000 && out[0].t_ms <= 2200);
    }
}
