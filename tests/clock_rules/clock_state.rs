//! The clock of a game: software clock and board clock readings turned into `[%clk]`/`[%emt]`,
//! arbiter corrections kept apart, flag fall judged per 6.9.

use shakmaty::Color::{Black, White};
use touchmove::act::Event;
use touchmove::board::{ClockReading, ColorName};
use touchmove::clock::{ClockState, MoveTime, TimeControl, judge_flag_fall};
use touchmove::rules::{Budget, Game};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn start(t_ms: u64) -> Event {
    Event::GameStart {
        t_ms,
        fen: START.into(),
        chess960: false,
        rotated: false,
    }
}

fn mv(ply: u32, t_ms: u64) -> Event {
    let side = if ply % 2 == 1 {
        ColorName::White
    } else {
        ColorName::Black
    };
    Event::Move {
        ply,
        uci: "e2e4".into(),
        san: "e4".into(),
        t_ms,
        side,
        fen: START.into(),
    }
}

fn press(ply: u32, t_ms: u64) -> Event {
    let side = if ply % 2 == 1 {
        ColorName::White
    } else {
        ColorName::Black
    };
    Event::MoveCompleted { ply, side, t_ms }
}

fn clock(white_ms: u64, black_ms: u64, t_ms: u64) -> Event {
    Event::Clock {
        white_ms,
        black_ms,
        ply: 0,
        t_ms,
    }
}

fn times(state: &ClockState) -> Vec<(Option<u64>, Option<u64>)> {
    state
        .move_times()
        .iter()
        .map(|m| (m.corrected_ms, m.elapsed_ms))
        .collect()
}

#[test]
fn software_clock_without_presses_completes_moves_when_made() {
    let mut state = ClockState::new(TimeControl::parse("300+2").unwrap());
    for e in [start(1_000), mv(1, 6_000), mv(2, 16_000), mv(3, 17_000)] {
        state.apply(&e);
    }
    assert!(!state.has_board_clock());
    assert_eq!(
        times(&state),
        vec![
            (Some(297_000), Some(5_000)),
            (Some(292_000), Some(10_000)),
            (Some(298_000), Some(1_000)),
        ]
    );
    let r = state.remaining(20_000, Black).unwrap();
    assert_eq!((r.clock_ms, r.corrected_ms), (289_000, 289_000));
}

#[test]
fn software_clock_follows_presses_once_seen() {
    let mut state = ClockState::new(TimeControl::parse("60").unwrap());
    for e in [
        start(0),
        mv(1, 2_000),
        press(1, 3_000),
        mv(2, 10_000),
        press(2, 12_000),
    ] {
        state.apply(&e);
    }
    // Before the first press was seen, White's move switched the clock when made (2 s), so
    // Black's time ran from 2 s; Black's move is completed by the press at 12 s, not at 10 s.
    assert_eq!(state.move_time(2).unwrap().elapsed_ms, Some(10_000));
    assert_eq!(state.move_time(2).unwrap().corrected_ms, Some(50_000));
}

#[test]
fn board_clock_readings_settle_the_movers_time_after_the_press() {
    let mut state = ClockState::new(TimeControl::parse("300+5").unwrap());
    for e in [
        start(0),
        clock(300_000, 300_000, 0),
        clock(296_000, 300_000, 4_000),
        mv(1, 4_500),
        press(1, 5_000),
        // The clock adds the increment after the press.
        clock(300_000, 300_000, 5_100),
        clock(300_000, 298_000, 7_100),
        mv(2, 7_500),
        press(2, 8_000),
        clock(300_000, 302_000, 8_100),
        clock(298_000, 302_000, 10_100),
    ] {
        state.apply(&e);
    }
    assert!(state.has_board_clock());
    assert_eq!(
        state.move_times(),
        &[
            MoveTime {
                clock_ms: Some(300_000),
                corrected_ms: Some(300_000),
                elapsed_ms: Some(5_000)
            },
            MoveTime {
                clock_ms: Some(302_000),
                corrected_ms: Some(302_000),
                elapsed_ms: Some(3_000)
            },
        ]
    );
}

#[test]
fn moves_announced_after_the_reply_keep_the_times_their_clocks_stopped_at() {
    // A burst read after a restart: the clock readings of both presses come before the
    // machine announces the moves, all at one receive time.
    let reading = |white_ms, black_ms, running| ClockReading {
        white_ms,
        black_ms,
        running: Some(running),
        flag: false,
    };
    let readings = [
        reading(296_000, 300_000, ColorName::White),
        // White pressed (the increment added), then Black.
        reading(300_000, 299_000, ColorName::Black),
        reading(300_000, 302_000, ColorName::White),
        reading(298_000, 302_000, ColorName::White),
    ];
    let moves = [mv(1, 9_000), mv(2, 9_000), press(1, 9_000), press(2, 9_000)];
    let mut late = ClockState::new(TimeControl::parse("300+5").unwrap());
    late.apply(&start(0));
    for r in &readings {
        late.observe_reading(9_000, r);
    }
    for e in &moves {
        late.apply(e);
    }
    let clocks: Vec<Option<u64>> = late.move_times().iter().map(|m| m.clock_ms).collect();
    assert_eq!(clocks, vec![Some(300_000), Some(302_000)]);

    // A move announced with its mover's clock still running is timed as before, by the
    // readings after it.
    let mut on_time = ClockState::new(TimeControl::parse("300+5").unwrap());
    on_time.apply(&start(0));
    on_time.observe_reading(4_000, &readings[0]);
    on_time.apply(&mv(1, 4_500));
    on_time.apply(&press(1, 5_000));
    on_time.observe_reading(5_100, &readings[1]);
    assert_eq!(on_time.move_time(1).unwrap().clock_ms, Some(300_000));
}

#[test]
fn arbiter_correction_is_kept_apart_from_the_board_reading() {
    let mut state = ClockState::new(TimeControl::parse("300").unwrap());
    state.apply(&start(0));
    state.observe_reading(
        0,
        &ClockReading {
            white_ms: 100_000,
            black_ms: 50_000,
            running: Some(ColorName::White),
            flag: false,
        },
    );
    state.adjust(Black, 120_000);
    let r = state.remaining(0, Black).unwrap();
    assert_eq!((r.clock_ms, r.corrected_ms), (50_000, 170_000));
    // White's time runs between readings.
    assert_eq!(state.remaining(30_000, White).unwrap().clock_ms, 70_000);
    state.apply(&mv(1, 1_000));
    state.apply(&press(1, 1_000));
    state.apply(&mv(2, 2_000));
    state.apply(&clock(99_000, 49_000, 2_100));
    let m = state.move_time(2).unwrap();
    assert_eq!((m.clock_ms, m.corrected_ms), (Some(49_000), Some(169_000)));
}

#[test]
fn the_running_side_is_inferred_from_readings_without_it() {
    let mut state = ClockState::new(TimeControl::parse("60").unwrap());
    state.apply(&start(0));
    state.apply(&clock(60_000, 60_000, 0));
    state.apply(&clock(59_000, 60_000, 1_000));
    // White's time keeps running between readings; Black's does not.
    assert_eq!(state.remaining(3_000, White).unwrap().clock_ms, 57_000);
    assert_eq!(state.remaining(3_000, Black).unwrap().clock_ms, 60_000);
    state.apply(&clock(59_000, 59_000, 5_000));
    assert_eq!(state.remaining(6_000, Black).unwrap().clock_ms, 58_000);
    assert_eq!(state.remaining(6_000, White).unwrap().clock_ms, 59_000);
}

#[test]
fn board_flag_is_the_side_showing_zero_after_corrections() {
    let mut state = ClockState::new(TimeControl::parse("60").unwrap());
    state.apply(&start(0));
    state.apply(&clock(0, 5_000, 60_000));
    assert_eq!(state.flag(60_000), Some(White));
    state.adjust(White, 10_000);
    assert_eq!(state.flag(60_000), None);
}

#[test]
fn revision_drops_the_withdrawn_moves_times() {
    let mut state = ClockState::new(TimeControl::parse("60").unwrap());
    for e in [start(0), mv(1, 1_000), mv(2, 2_000), mv(3, 3_000)] {
        state.apply(&e);
    }
    state.apply(&Event::Revision {
        ply: 2,
        withdrawn: vec!["e7e5".into(), "g1f3".into()],
        t_ms: 3_500,
    });
    assert_eq!(state.move_times().len(), 1);
    assert!(state.move_time(2).is_none());
}

#[test]
fn flag_fall_is_a_loss_unless_the_opponent_cannot_mate() {
    let mut state = ClockState::new(TimeControl::parse("10").unwrap());
    state.apply(&start(0));
    let game = Game::standard();
    let verdict = state.judge_flag(10_000, &game).unwrap();
    assert_eq!((verdict.flagged, verdict.result()), (White, "0-1"));
    assert!(!verdict.is_draw());
    assert!(verdict.reason().contains("lost on time"));
    assert_eq!(state.judge_flag(9_000, &game), None);
    // White flags; Black has a lone king and can never mate: draw.
    let bare = Game::from_fen("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", false).unwrap();
    let verdict = state.judge_flag(10_000, &bare).unwrap();
    assert!(verdict.is_draw());
    assert_eq!(verdict.result(), "1/2-1/2");
    assert!(verdict.reason().contains("cannot checkmate"));
    // Black flags with the same material: White can mate, Black loses.
    let budget = Budget::deterministic();
    assert_eq!(judge_flag_fall(&bare, Black, &budget).result(), "1-0");
    // A locked pawn wall: Black has material, but the full analysis (not a material count)
    // finds that Black cannot mate, so White's flag fall is a draw.
    let blocked = Game::from_fen("2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1", false).unwrap();
    let verdict = state.judge_flag(10_000, &blocked).unwrap();
    assert!(verdict.is_draw(), "{}", verdict.reason());
}

#[test]
fn a_move_far_beyond_the_game_is_ignored() {
    let mut state = ClockState::new(TimeControl::parse("60").unwrap());
    state.apply(&start(0));
    state.apply(&mv(1, 1_000));
    state.apply(&mv(3_000_000_000, 2_000));
    assert_eq!(state.move_times().len(), 1);
    state.apply(&mv(3, 3_000));
    assert_eq!(state.move_times().len(), 3);
    assert_eq!(state.move_time(2), Some(MoveTime::default()));
}
