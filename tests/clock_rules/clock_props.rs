//! Properties of the software clock and the TimeControl syntax over random games.

use proptest::prelude::*;
use shakmaty::Color;
use touchmove::clock::{Bonus, Period, PressOutcome, SoftwareClock, TimeControl};

/// Plays `spent` (milliseconds per move, alternating from White) and returns, per press, the
/// mover and the remaining time the press reported.
fn play(control: TimeControl, spent: &[u64]) -> Vec<(Color, u64)> {
    let mut clock = SoftwareClock::new(control);
    let mut t = 1_000;
    clock.start(t, Color::White);
    let mut side = Color::White;
    let mut out = Vec::new();
    for &s in spent {
        t += s;
        match clock.press(t, side) {
            PressOutcome::Completed(timing) => out.push((side, timing.remaining_ms)),
            PressOutcome::Ignored(why) => panic!("press ignored: {why:?}"),
        }
        side = !side;
    }
    out
}

fn bonus() -> impl Strategy<Value = Bonus> {
    prop_oneof![
        Just(Bonus::None),
        (1u64..60_000).prop_map(Bonus::Increment),
        (1u64..60_000).prop_map(Bonus::Delay),
        (1u64..60_000).prop_map(Bonus::Bronstein),
    ]
}

fn periods() -> impl Strategy<Value = Vec<Period>> {
    (
        prop::collection::vec((1u32..60, 1u64..10_000_000, bonus()), 0..3),
        (1u64..10_000_000, bonus(), prop::option::of(1u32..60)),
    )
        .prop_map(|(counted, (base_ms, bonus, moves))| {
            let mut periods: Vec<Period> = counted
                .into_iter()
                .map(|(moves, base_ms, bonus)| Period {
                    moves: Some(moves),
                    base_ms,
                    bonus,
                })
                .collect();
            periods.push(Period {
                moves,
                base_ms,
                bonus,
            });
            periods
        })
}

proptest! {
    #[test]
    fn fischer_time_is_base_plus_increments_minus_time_used(
        spent in prop::collection::vec(0u64..5_000, 1..80),
    ) {
        let control = TimeControl::parse("600+3").unwrap();
        let mut used = [0u64; 2];
        let mut moves = [0u64; 2];
        for ((side, remaining), s) in play(control, &spent).into_iter().zip(&spent) {
            let i = side as usize;
            used[i] += s;
            moves[i] += 1;
            prop_assert_eq!(remaining, 600_000 + 3_000 * moves[i] - used[i]);
        }
    }

    #[test]
    fn simple_delay_charges_only_time_beyond_the_delay(
        spent in prop::collection::vec(0u64..9_000, 1..80),
    ) {
        let control = TimeControl::parse("900d4").unwrap();
        let mut charged = [0u64; 2];
        for ((side, remaining), s) in play(control, &spent).into_iter().zip(&spent) {
            charged[side as usize] += s.saturating_sub(4_000);
            prop_assert_eq!(remaining, 900_000 - charged[side as usize]);
        }
    }

    #[test]
    fn periods_add_their_time_once_their_first_move_comes(
        spent in prop::collection::vec(0u64..3_000, 1..120),
    ) {
        let control = TimeControl::parse("10/600+1:5/300+2:120").unwrap();
        let mut used = [0u64; 2];
        let mut moves = [0u64; 2];
        for ((side, remaining), s) in play(control, &spent).into_iter().zip(&spent) {
            let i = side as usize;
            used[i] += s;
            moves[i] += 1;
            let n = moves[i];
            let increments = n.min(10) * 1_000 + n.saturating_sub(10).min(5) * 2_000;
            let bases = 600_000
                + if n >= 10 { 300_000 } else { 0 }
                + if n >= 15 { 120_000 } else { 0 };
            prop_assert_eq!(remaining, bases + increments - used[i]);
        }
    }

    #[test]
    fn an_hourglass_keeps_the_total(
        spent in prop::collection::vec(0u64..3_000, 1..60),
        probe in 0u64..2_000,
    ) {
        let mut clock = SoftwareClock::new(TimeControl::parse("*60").unwrap());
        let mut t = 0;
        clock.start(t, Color::White);
        let mut side = Color::White;
        for s in spent {
            t += s;
            let total = clock.remaining(t, Color::White) + clock.remaining(t, Color::Black);
            if clock.flag(t).is_none() {
                prop_assert_eq!(total, 120_000);
            }
            clock.press(t, side);
            side = !side;
        }
        let later = t + probe;
        if clock.flag(later).is_none() {
            let total = clock.remaining(later, Color::White) + clock.remaining(later, Color::Black);
            prop_assert_eq!(total, 120_000);
        }
    }

    #[test]
    fn time_controls_survive_display_and_parse(periods in periods()) {
        let control = TimeControl::Periods(periods);
        let text = control.to_string();
        prop_assert_eq!(TimeControl::parse(&text).unwrap(), control);
    }

    #[test]
    fn any_text_parses_or_is_refused_without_panic(
        text in "[0-9/+:.*db?-]{0,40}",
        spent in prop::collection::vec(0u64..u64::MAX / 4, 0..6),
    ) {
        if let Ok(control) = TimeControl::parse(&text) {
            // Huge times saturate instead of overflowing.
            let _ = control.category();
            let mut clock = SoftwareClock::new(control);
            let mut t = 0u64;
            clock.start(t, Color::White);
            let mut side = Color::White;
            for s in spent {
                t = t.saturating_add(s);
                clock.press(t, side);
                let _ = (clock.remaining(t, side), clock.flag(t));
                side = !side;
            }
        }
    }

    #[test]
    fn huge_periods_saturate(a in 1u64..18_000_000_000_000_000, b in 1u64..18_000_000_000_000_000) {
        let text = format!("1/{a}+{a}:{b}+{b}");
        let control = TimeControl::parse(&text).unwrap();
        prop_assert!(control.nominal_ms().unwrap() >= a.saturating_mul(1000));
    }
}
