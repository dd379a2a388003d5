//! The clock of the real DGT board + clock capture (`fixtures/real-dgt/johan.inbytes`, a
//! 5 min + 5 s game): every move gets the mover's time after the press from the clock
//! readings, and the time spent.

use touchmove::act::{Machine, MachineConfig};
use touchmove::board::ObservationKind;
use touchmove::board::dgt::DgtObserver;
use touchmove::clock::{ClockState, TimeControl};
use touchmove::wire::capture::read_capture;
use touchmove::wire::dgt::Decoder;

const INBYTES: &str = include_str!("../../fixtures/real-dgt/johan.inbytes");

#[test]
fn every_move_of_the_real_game_gets_its_clock_time() {
    let mut decoder = Decoder::new();
    let mut observer = DgtObserver::new();
    let mut machine = Machine::new(MachineConfig::default());
    let mut clock = ClockState::new(TimeControl::parse("300+5").unwrap());
    let (mut messages, mut observations, mut events) = (Vec::new(), Vec::new(), Vec::new());
    for chunk in read_capture(INBYTES).unwrap() {
        messages.clear();
        decoder.push(&chunk.bytes, &mut messages);
        for message in &messages {
            observations.clear();
            observer.on_message(chunk.t_ms, message, &mut observations);
            for obs in &observations {
                if let ObservationKind::ClockTimes(reading) = &obs.kind {
                    clock.observe_reading(obs.t_ms, reading);
                }
                events.clear();
                machine.observe(obs, &mut events);
                for event in &events {
                    clock.apply(event);
                }
            }
        }
    }
    let times = clock.move_times();
    assert!(clock.has_board_clock());
    assert_eq!(times.len(), machine.game().plies());
    assert!(times.len() >= 40, "{} plies", times.len());
    // johan.json: after 1. e4 the left (White's) clock shows 0:05:09, after 1... e5 the right
    // one 0:05:09 (5:05 at the start, a few seconds used, 5 s added).
    assert_eq!(times[0].clock_ms, Some(309_000));
    assert_eq!(times[1].clock_ms, Some(309_000));
    // The clock's times and the receive times are independent sources; they must agree: a
    // player's time after a move is the time after his previous move, less the time he
    // spent, plus the 5 s increment (to the clock's 1 s resolution and the capture's
    // reconstructed receive times).
    for ply in 2..times.len() {
        let (before, now) = (times[ply - 2], times[ply]);
        let (Some(before), Some(now), Some(spent)) =
            (before.clock_ms, now.clock_ms, now.elapsed_ms)
        else {
            panic!("ply {} lacks a time: {now:?}", ply + 1);
        };
        let expected = (before + 5_000).saturating_sub(spent);
        assert!(
            now.abs_diff(expected) <= 1_500,
            "ply {}: clock {now} ms, expected about {expected} ms ({before} + 5000 - {spent})",
            ply + 1
        );
        assert_eq!(
            now,
            times[ply].corrected_ms.unwrap(),
            "no correction was made"
        );
    }
}

/// After a restart the recorder may read a burst in which the clock reading taken after the
/// opponent's press comes before the machine announces the opponent's move: the previous
/// move keeps the time its mover's clock stopped at.
#[test]
fn a_reading_after_the_next_press_does_not_change_the_last_move() {
    use touchmove::act::Event;
    use touchmove::board::{ClockReading, ColorName};
    let mut clock = ClockState::new(TimeControl::parse("300").unwrap());
    let reading = |white_ms, black_ms, running| ClockReading {
        white_ms,
        black_ms,
        running: Some(running),
        flag: false,
    };
    clock.observe_reading(0, &reading(300_000, 300_000, ColorName::White));
    clock.apply(&Event::Move {
        ply: 1,
        uci: "e2e4".into(),
        san: "e4".into(),
        t_ms: 2_000,
        side: ColorName::White,
        fen: String::new(),
    });
    clock.observe_reading(2_100, &reading(297_900, 300_000, ColorName::White));
    clock.observe_reading(2_500, &reading(297_500, 300_000, ColorName::Black));
    clock.observe_reading(4_000, &reading(297_500, 298_500, ColorName::Black));
    clock.observe_reading(5_000, &reading(297_000, 297_600, ColorName::White));
    assert_eq!(clock.move_time(1).and_then(|m| m.clock_ms), Some(297_500));
}
