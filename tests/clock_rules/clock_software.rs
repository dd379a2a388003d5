//! Software clock behaviour: increments, delays, periods with carry-over, hourglass, flags,
//! pauses and arbiter corrections.

use shakmaty::Color::{Black, White};
use touchmove::clock::{IgnoredPress, MoveTiming, PressOutcome, SoftwareClock, TimeControl};

fn clock(tc: &str) -> SoftwareClock {
    SoftwareClock::new(TimeControl::parse(tc).unwrap())
}

fn completed(outcome: PressOutcome) -> MoveTiming {
    match outcome {
        PressOutcome::Completed(timing) => timing,
        PressOutcome::Ignored(why) => panic!("press ignored: {why:?}"),
    }
}

#[test]
fn fischer_increment_is_added_after_the_move() {
    let mut c = clock("300+2");
    c.start(0, White);
    assert_eq!(c.remaining(10_000, White), 290_000);
    assert_eq!(c.remaining(10_000, Black), 300_000);
    let t = completed(c.press(10_000, White));
    assert_eq!(t.spent_ms, 10_000);
    assert_eq!(t.remaining_ms, 292_000);
    assert_eq!(t.move_number, 1);
    assert_eq!(c.running(), Some(Black));
    assert_eq!(c.remaining(15_000, Black), 295_000);
    let t = completed(c.press(15_000, Black));
    assert_eq!(t.remaining_ms, 297_000);
    assert_eq!(c.moves_made(Black), 1);
}

#[test]
fn presses_out_of_turn_are_ignored() {
    let mut c = clock("300+2");
    assert_eq!(
        c.press(0, White),
        PressOutcome::Ignored(IgnoredPress::NotStarted)
    );
    c.start(0, White);
    assert_eq!(
        c.press(1000, Black),
        PressOutcome::Ignored(IgnoredPress::OpponentRunning)
    );
    assert_eq!(c.remaining(1000, Black), 300_000);
    assert_eq!(c.remaining(1000, White), 299_000);
}

#[test]
fn simple_delay_runs_before_the_main_time_and_is_not_added() {
    let mut c = clock("60d5");
    c.start(0, White);
    assert_eq!(c.remaining(4_000, White), 60_000);
    assert_eq!(c.remaining(8_000, White), 57_000);
    let t = completed(c.press(3_000, White));
    assert_eq!(t.remaining_ms, 60_000, "unused delay is not added (6.3)");
    c.press(13_000, Black);
    assert_eq!(c.remaining(13_000, Black), 55_000);
    // The delay starts afresh on White's next move.
    assert_eq!(c.remaining(17_000, White), 60_000);
}

#[test]
fn bronstein_delay_gives_back_at_most_the_delay() {
    let mut c = clock("60b5");
    c.start(0, White);
    assert_eq!(c.remaining(3_000, White), 57_000);
    let t = completed(c.press(3_000, White));
    assert_eq!(t.remaining_ms, 60_000);
    let t = completed(c.press(11_000, Black));
    assert_eq!(t.remaining_ms, 57_000);
}

#[test]
fn multi_period_adds_the_next_period_and_carries_unused_time_over() {
    // 2 moves in 100 s, then 50 s for the rest, 1 s increment from move 1.
    let mut c = clock("2/100+1:50+1");
    c.start(0, White);
    let w1 = completed(c.press(10_000, White));
    assert_eq!((w1.remaining_ms, w1.entered_period), (91_000, None));
    c.press(20_000, Black);
    let w2 = completed(c.press(40_000, White));
    // 91 - 20 + 1 (increment of move 2) + 50 (period 2) = 122 s.
    assert_eq!(w2.remaining_ms, 122_000);
    assert_eq!(w2.entered_period, Some(1));
    let b2 = completed(c.press(41_000, Black));
    assert_eq!(b2.entered_period, Some(1));
    assert_eq!(b2.remaining_ms, 91_000 - 1_000 + 1_000 + 50_000);
    let w3 = completed(c.press(42_000, White));
    assert_eq!(w3.entered_period, None);
    assert_eq!(w3.remaining_ms, 122_000);
}

#[test]
fn a_last_period_with_a_move_count_repeats() {
    let mut c = clock("1/10");
    c.start(0, White);
    let w1 = completed(c.press(4_000, White));
    assert_eq!(w1.remaining_ms, 16_000);
    c.press(4_000, Black);
    let w2 = completed(c.press(6_000, White));
    assert_eq!(w2.remaining_ms, 24_000);
    assert_eq!(w2.entered_period, Some(0));
}

#[test]
fn first_flag_fall_is_reported_with_its_moment() {
    let mut c = clock("10+1");
    c.start(0, White);
    assert_eq!(c.flag(9_999), None);
    assert_eq!(c.flag(10_000), Some(White));
    assert_eq!(c.flag_fall(12_500), Some((White, 10_000)));
    let t = completed(c.press(12_500, White));
    assert!(t.flag_fell);
    assert_eq!(t.remaining_ms, 0, "no increment after the flag fell");
    // Black's later flag does not replace the first one.
    assert_eq!(c.flag_fall(30_000), Some((White, 10_000)));
    assert_eq!(c.remaining(30_000, Black), 0);
}

#[test]
fn flag_fall_with_a_delay_comes_after_the_delay() {
    let mut c = clock("10d3");
    c.start(1_000, White);
    assert_eq!(c.flag(13_999), None);
    assert_eq!(c.flag_fall(20_000), Some((White, 14_000)));
}

#[test]
fn hourglass_moves_time_to_the_opponent() {
    let mut c = clock("*60");
    c.start(0, White);
    assert_eq!(c.remaining(10_000, Black), 70_000);
    let t = completed(c.press(10_000, White));
    assert_eq!(t.remaining_ms, 50_000);
    assert_eq!(c.remaining(30_000, White), 70_000);
    assert_eq!(c.remaining(30_000, Black), 50_000);
    assert_eq!(c.flag(100_000), Some(Black));
    assert_eq!(c.remaining(200_000, White), 120_000);
}

#[test]
fn pause_stops_time_and_keeps_the_delay_left() {
    let mut c = clock("60d5");
    c.start(0, White);
    c.pause(2_000);
    assert_eq!(c.running(), None);
    assert_eq!(
        c.press(3_000, White),
        PressOutcome::Ignored(IgnoredPress::Paused)
    );
    assert_eq!(c.remaining(100_000, White), 60_000);
    c.resume(100_000);
    // 3 s of delay were left: 5 s after resuming, 2 s of main time are used.
    assert_eq!(c.remaining(105_000, White), 58_000);
    let t = completed(c.press(105_000, White));
    assert_eq!(t.spent_ms, 7_000);
}

#[test]
fn arbiter_adjustment_changes_time_and_can_lift_a_flag() {
    let mut c = clock("10");
    c.start(0, White);
    c.adjust(Black, -4_000);
    assert_eq!(c.remaining(0, Black), 6_000);
    assert_eq!(c.flag(11_000), Some(White));
    c.pause(11_000);
    c.adjust(White, 30_000);
    assert_eq!(c.flag(11_000), None);
    assert_eq!(c.remaining(11_000, White), 30_000);
    c.adjust(Black, -60_000);
    assert_eq!(c.remaining(11_000, Black), 0);
}

#[test]
fn unlimited_clock_measures_time_but_never_flags() {
    let mut c = clock("-");
    assert!(!c.is_limited());
    c.start(0, White);
    let t = completed(c.press(7_000_000, White));
    assert_eq!(t.spent_ms, 7_000_000);
    assert_eq!(c.flag(u64::MAX), None);
    assert_eq!(c.remaining(10, Black), u64::MAX);
}

#[test]
fn time_going_backwards_uses_no_time() {
    let mut c = clock("60");
    c.start(10_000, White);
    assert_eq!(c.remaining(5_000, White), 60_000);
    let t = completed(c.press(5_000, White));
    assert_eq!(t.spent_ms, 0);
}
