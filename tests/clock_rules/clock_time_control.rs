//! PGN TimeControl parsing, display and the A.1/B.1 categories.

use touchmove::clock::{Bonus, Category, Period, TimeControl};

fn period(moves: Option<u32>, base_s: u64, bonus: Bonus) -> Period {
    Period {
        moves,
        base_ms: base_s * 1000,
        bonus,
    }
}

#[test]
fn classical_multi_period_parses_into_two_periods() {
    let tc = TimeControl::parse("40/5400+30:1800+30").unwrap();
    assert_eq!(
        tc,
        TimeControl::Periods(vec![
            period(Some(40), 5400, Bonus::Increment(30_000)),
            period(None, 1800, Bonus::Increment(30_000)),
        ])
    );
    assert_eq!(tc.category(), Some(Category::Standard));
    assert!(!tc.is_rapid() && !tc.is_blitz());
}

#[test]
fn special_forms_parse() {
    assert_eq!(TimeControl::parse("?").unwrap(), TimeControl::Unknown);
    assert_eq!(TimeControl::parse("-").unwrap(), TimeControl::Unlimited);
    assert_eq!(
        TimeControl::parse("*180").unwrap(),
        TimeControl::Hourglass { base_ms: 180_000 }
    );
    assert_eq!(
        TimeControl::parse("300+2").unwrap(),
        TimeControl::Periods(vec![period(None, 300, Bonus::Increment(2000))])
    );
    assert_eq!(
        TimeControl::parse("5400d10").unwrap(),
        TimeControl::Periods(vec![period(None, 5400, Bonus::Delay(10_000))])
    );
    assert_eq!(
        TimeControl::parse("40/7200b30:1800b30").unwrap().periods()[1],
        period(None, 1800, Bonus::Bronstein(30_000))
    );
    assert_eq!(
        TimeControl::parse("60+0.5").unwrap().periods()[0].bonus,
        Bonus::Increment(500)
    );
}

#[test]
fn display_round_trips() {
    for text in [
        "?",
        "-",
        "*180",
        "300",
        "300+2",
        "40/5400+30:1800+30",
        "40/7200:20/3600:900+30",
        "5400d10",
        "40/7200b30:1800b30",
        "60+0.5",
        "90.25",
    ] {
        let tc = TimeControl::parse(text).unwrap();
        assert_eq!(tc.to_string(), text);
        assert_eq!(TimeControl::parse(&tc.to_string()).unwrap(), tc);
    }
}

#[test]
fn invalid_texts_say_what_is_wrong() {
    let cases = [
        ("", "empty"),
        ("abc", "period 1 (\"abc\")"),
        ("40/", "period 1"),
        ("0/300", "move count must be at least 1"),
        ("x/300", "move count \"x\" is not a whole number"),
        ("300+", "not a number of seconds"),
        ("300:40/300", "has no move count, so no period can follow"),
        ("40/300::300", "period 2 (\"\"): the field is empty"),
        ("*", "hourglass"),
        ("*0", "more than 0"),
        ("0", "needs some time"),
        ("1.2345", "not a number of seconds"),
        ("300+2+3", "not a number of seconds"),
        ("99999999999999999999", "too large"),
    ];
    for (text, expected) in cases {
        let err = TimeControl::parse(text).expect_err(text);
        let message = err.to_string();
        assert!(
            message.contains(expected),
            "{text:?}: message {message:?} lacks {expected:?}"
        );
        assert!(message.contains("expected e.g."), "{message}");
    }
}

#[test]
fn categories_follow_time_plus_sixty_increments() {
    let cat = |t: &str| TimeControl::parse(t).unwrap().category();
    assert_eq!(cat("180+2"), Some(Category::Blitz));
    assert_eq!(cat("600"), Some(Category::Blitz)); // exactly 10 minutes is blitz (B.1)
    assert_eq!(cat("300+5"), Some(Category::Blitz)); // 300 + 60*5 = 600
    assert_eq!(cat("300+6"), Some(Category::Rapid)); // 660 s
    assert_eq!(cat("900+10"), Some(Category::Rapid));
    assert_eq!(cat("3000+10"), Some(Category::Standard)); // exactly 60 minutes is not rapid
    assert_eq!(cat("2999+10"), Some(Category::Rapid));
    assert_eq!(cat("*180"), Some(Category::Blitz));
    assert_eq!(cat("?"), None);
    assert_eq!(cat("-"), None);
    assert!(TimeControl::parse("180+2").unwrap().is_blitz());
    assert!(TimeControl::parse("900+10").unwrap().is_rapid());
}

#[test]
fn period_of_move_repeats_a_last_period_with_a_move_count() {
    let tc = TimeControl::parse("40/7200:20/3600").unwrap();
    assert_eq!(tc.period_of_move(1).unwrap().0, 0);
    assert_eq!(tc.period_of_move(40).unwrap().0, 0);
    assert_eq!(tc.period_of_move(41).unwrap().0, 1);
    assert_eq!(tc.period_of_move(200).unwrap().0, 1);
    assert!(TimeControl::Unknown.period_of_move(1).is_none());
}

#[test]
fn serde_uses_pgn_syntax() {
    let tc: TimeControl = serde_json::from_str("\"40/5400+30:1800+30\"").unwrap();
    assert_eq!(
        serde_json::to_string(&tc).unwrap(),
        "\"40/5400+30:1800+30\""
    );
    let err = serde_json::from_str::<TimeControl>("\"40/\"").unwrap_err();
    assert!(err.to_string().contains("invalid TimeControl"));
}
