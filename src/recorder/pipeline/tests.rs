use super::*;
use crate::act::Severity;
use crate::board::dgt::fields_from_board;
use crate::board::orientation::Orientation;
use crate::event::EventConfig;
use crate::record::arbiter::{ArbiterAction, ArbiterRequest, DrawClaim};
use crate::record::pgn::{read_games, write_game};
use shakmaty::Position;

fn pipeline() -> BoardPipeline {
    let config = EventConfig {
        event: "Test".into(),
        time_control: Some("300+2".into()),
        ..EventConfig::default()
    };
    let control = TimeControl::parse("300+2").unwrap();
    let mut p = BoardPipeline::new(GameTags::new(&config, 1), control);
    let dump = Message::BoardDump(fields_from_board(
        &shakmaty::Board::new(),
        Orientation::Normal,
    ))
    .encode();
    let mut events = Vec::new();
    p.on_bytes(10, &dump, &mut events);
    assert!(
        events.iter().any(|e| matches!(e, Event::GameStart { .. })),
        "the start position starts a game: {events:?}"
    );
    p
}

/// The field changes (field, piece code) of lifting and placing each piece of `moves` from
/// the start position (plain moves only), board in normal orientation.
fn lift_place_changes(moves: &[&str]) -> Vec<(u8, u8)> {
    let mut board = shakmaty::Board::new();
    let field = |sq: shakmaty::Square| (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
    let mut out = Vec::new();
    for uci in moves {
        let from: shakmaty::Square = uci[..2].parse().unwrap();
        let to: shakmaty::Square = uci[2..4].parse().unwrap();
        let piece = board.remove_piece_at(from).unwrap();
        board.set_piece_at(to, piece);
        out.push((field(from), 0));
        out.push((field(to), crate::board::dgt::code_from_piece(piece)));
    }
    out
}

/// The field updates of [`lift_place_changes`].
fn lift_place_messages(moves: &[&str]) -> Vec<Vec<u8>> {
    lift_place_changes(moves)
        .into_iter()
        .map(|(field, piece)| Message::FieldUpdate { field, piece }.encode())
        .collect()
}

fn recorded_uci(p: &BoardPipeline) -> Vec<String> {
    p.record()
        .to_game()
        .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
        .unwrap_or_default()
}

/// What queued in the operating system while the recorder was down arrives in one read,
/// with one receive time: the pipeline keeps the messages' order, so the moves come out
/// the same as when each message arrived on its own (the act machine must read equal
/// times as "interval unknown", not "simultaneous").
#[test]
fn a_burst_read_at_once_keeps_the_order_of_its_messages() {
    let played = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"];
    let messages = lift_place_messages(&played);
    let mut paced = pipeline();
    let mut events = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        paced.on_bytes(1000 + 900 * i as u64, m, &mut events);
    }
    assert_eq!(recorded_uci(&paced), played);
    let mut burst = pipeline();
    burst.on_bytes(1000, &messages.concat(), &mut events);
    assert_eq!(recorded_uci(&burst), played);
}

/// A clock message with the clock running on the side whose lever is low (`right`:
/// the right-hand side runs).
fn clock_running(right: bool) -> Vec<u8> {
    use crate::wire::dgt::{ClockMessage, ClockStatus, ClockTimes, SideTime};
    let side = SideTime {
        minutes: 5,
        ..SideTime::default()
    };
    let times = ClockTimes {
        left: side,
        right: side,
        status: ClockStatus {
            running: true,
            right_lever_high: right,
            ..ClockStatus::default()
        },
    };
    Message::Clock(ClockMessage::Times(times)).encode()
}

/// White plays e4 and presses, then Black presses at 3000 ms without making a move.
fn black_presses_without_a_move(p: &mut BoardPipeline, events: &mut Vec<Event>) {
    p.on_bytes(100, &clock_running(false), events);
    for (i, m) in lift_place_messages(&["e2e4"]).iter().enumerate() {
        p.on_bytes(1000 + 100 * i as u64, m, events);
    }
    p.on_bytes(1500, &clock_running(true), events);
    p.on_bytes(3000, &clock_running(false), events);
}

/// A press the board never follows (7.5.3) is judged by the tick once its grace period
/// is over, though no byte arrives after it.
#[test]
fn a_press_without_a_move_is_judged_on_the_tick() {
    let mut p = pipeline();
    let mut events = Vec::new();
    black_presses_without_a_move(&mut p, &mut events);
    let judged = |events: &[Event]| {
        events
            .iter()
            .any(|e| matches!(e, Event::Alert(a) if a.article == "7.5.3"))
    };
    assert!(!judged(&events), "not before the grace period: {events:?}");
    p.tick(3100, &mut events);
    assert!(
        !judged(&events),
        "still within the grace period: {events:?}"
    );
    p.tick(3500, &mut events);
    assert!(
        judged(&events),
        "no 7.5.3 after the grace period: {events:?}"
    );
    assert_eq!(recorded_uci(&p), ["e2e4"]);
}

/// A press without a move (7.5.3) is one irregularity: its two notes in the PGN name their
/// article once each, and the arbiter decides its penalty once.
#[test]
fn an_illegal_move_is_noted_under_its_article_once_and_decided_once() {
    let mut p = pipeline();
    let mut events = Vec::new();
    black_presses_without_a_move(&mut p, &mut events);
    p.tick(3500, &mut events);
    let penalty_ply = events
        .iter()
        .find_map(|e| match e {
            Event::Alert(a) if a.article == "7.5.5" => Some(a.ply),
            _ => None,
        })
        .expect("a 7.5.5 proposal for Black's press without a move");
    // The PGN wraps its lines: compare the text with single spaces.
    let pgn = p.pgn().split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        pgn.contains("{7.5.3: Black pressed the clock without making a move"),
        "{pgn}"
    );
    assert!(
        pgn.contains("{7.5.5: First completed illegal move of Black"),
        "{pgn}"
    );
    for comment in pgn.split('{').skip(1).filter_map(|c| c.split_once('}')) {
        if let Some((article, text)) = comment.0.split_once(": ") {
            assert!(
                !text.starts_with(article),
                "the comment {{{}}} names its article twice",
                comment.0
            );
        }
    }
    let decide = |accept| ArbiterAction::DecidePenalty {
        ply: penalty_ply,
        accept,
    };
    assert!(arbiter(&mut p, decide(true)).is_ok());
    let again = arbiter(&mut p, decide(true)).expect_err("a second penalty is refused");
    assert!(again.contains("already decided"), "{again}");
    assert!(arbiter(&mut p, decide(false)).is_err());
    assert_eq!(
        p.record().result,
        "*",
        "one illegal move does not lose the game"
    );
}

fn arbiter(p: &mut BoardPipeline, action: ArbiterAction) -> Result<String, String> {
    let request = ArbiterRequest {
        who: "Anna".into(),
        board: 1,
        action,
        key: None,
    };
    p.on_arbiter(1000, &request, &mut Vec::new())
}

fn moves(list: &[&str]) -> Vec<String> {
    list.iter().map(|m| m.to_string()).collect()
}

#[test]
fn corrections_claims_and_results_reach_the_pgn() {
    let mut p = pipeline();
    let shuffle = moves(&[
        "e4", "e5", "Nf3", "Nc6", "Ng1", "Nb8", "g1f3", "Nc6", "Ng1", "Nb8",
    ]);
    arbiter(
        &mut p,
        ArbiterAction::ReplaceMoves {
            from_ply: 1,
            moves: shuffle,
        },
    )
    .unwrap();
    assert_eq!(p.plies(), 10);
    let verdict = arbiter(
        &mut p,
        ArbiterAction::CheckClaim {
            claim: DrawClaim::Threefold,
            intended_move: None,
        },
    )
    .unwrap();
    assert!(verdict.starts_with("claim correct"), "{verdict}");
    assert_eq!(p.result(), "1/2-1/2");
    arbiter(
        &mut p,
        ArbiterAction::SetResult {
            result: "*".into(),
            reason: "claim withdrawn".into(),
        },
    )
    .unwrap();
    let refused = arbiter(
        &mut p,
        ArbiterAction::ReplaceMoves {
            from_ply: 3,
            moves: moves(&["Ke2", "Ke3"]),
        },
    );
    assert!(refused.unwrap_err().contains("move 2 (Ke3)"));
    assert_eq!(p.plies(), 10, "a refused correction changes nothing");
    arbiter(&mut p, ArbiterAction::TakeBack { to_ply: 2 }).unwrap();
    assert_eq!(p.plies(), 2);
    arbiter(
        &mut p,
        ArbiterAction::Annotate {
            ply: 1,
            text: "scoresheet checked".into(),
        },
    )
    .unwrap();
    let fifty = arbiter(
        &mut p,
        ArbiterAction::CheckClaim {
            claim: DrawClaim::FiftyMoves,
            intended_move: Some("Nf3".into()),
        },
    )
    .unwrap();
    assert!(fifty.starts_with("claim incorrect"), "{fifty}");
    arbiter(
        &mut p,
        ArbiterAction::SetResult {
            result: "1-0".into(),
            reason: "forfeit: Black absent".into(),
        },
    )
    .unwrap();
    let record = p.record();
    assert_eq!(record.result, "1-0");
    let tag = |name: &str| record.tag(name);
    assert_eq!(tag("Termination"), Some("rules infraction"));
    assert_eq!(tag("Round"), Some("1.1"));
    assert_eq!(tag("TimeControl"), Some("300+2"));
    let comments: Vec<&String> = record.moves.iter().flat_map(|m| &m.comments).collect();
    let has = |text: &str| comments.iter().any(|c| c.contains(text));
    assert!(
        has("Arbiter Anna: moves from ply 3 taken back"),
        "{comments:?}"
    );
    assert!(has("Anna: scoresheet checked"), "{comments:?}");
    assert!(
        has("White's claim of threefold repetition (9.2) is correct"),
        "{comments:?}"
    );
    let text = write_game(&record);
    let back = read_games(&text).unwrap();
    assert_eq!(back[0].moves.len(), 2);
    assert_eq!(back[0].result, "1-0");
}

#[test]
fn bad_requests_are_refused_with_reasons() {
    let mut p = pipeline();
    let bad_result = arbiter(
        &mut p,
        ArbiterAction::SetResult {
            result: "2-0".into(),
            reason: "x".into(),
        },
    );
    assert!(bad_result.unwrap_err().contains("not one of"));
    let illegal = arbiter(
        &mut p,
        ArbiterAction::ReplaceMoves {
            from_ply: 1,
            moves: moves(&["e4", "e5", "Qh5", "Nc6", "Qxe8"]),
        },
    );
    assert!(illegal.unwrap_err().contains("move 5"));
    assert_eq!(p.plies(), 0);
    assert!(arbiter(&mut p, ArbiterAction::TakeBack { to_ply: 4 }).is_err());
    assert!(
        arbiter(
            &mut p,
            ArbiterAction::DecidePenalty {
                ply: 3,
                accept: true
            }
        )
        .unwrap_err()
        .contains("no penalty")
    );
    assert!(
        arbiter(
            &mut p,
            ArbiterAction::Annotate {
                ply: 9,
                text: "x".into()
            }
        )
        .is_err()
    );
}

#[test]
fn time_adjustments_and_new_games() {
    let mut p = pipeline();
    let text = arbiter(
        &mut p,
        ArbiterAction::AdjustTime {
            side: crate::board::ColorName::Black,
            delta_ms: -30_000,
        },
    )
    .unwrap();
    assert_eq!(text, "-0:30 for Black");
    arbiter(
        &mut p,
        ArbiterAction::ReplaceMoves {
            from_ply: 1,
            moves: moves(&["d4"]),
        },
    )
    .unwrap();
    arbiter(&mut p, ArbiterAction::NewGame).unwrap();
    assert_eq!(p.plies(), 0);
    assert_eq!(p.earlier_games().len(), 1);
    assert_eq!(p.earlier_games()[0].moves.len(), 1);
    assert!(!p.live());
}

/// The board's link drops after `before` (played at a human pace from the start) and comes
/// back after `gap` more were played: a handshake, then the board's dump, and no move log.
fn outage_without_log(before: &[&str], gap: &[&str], events: &mut Vec<Event>) -> BoardPipeline {
    let mut p = pipeline();
    for (i, m) in lift_place_messages(before).iter().enumerate() {
        p.on_bytes(1000 + 900 * i as u64, m, events);
    }
    let mut game = Game::standard();
    for m in before.iter().chain(gap) {
        game.play_uci(m).unwrap();
    }
    let dump = Message::BoardDump(fields_from_board(
        game.position().board(),
        Orientation::Normal,
    ));
    p.on_bytes(
        60_000,
        &Message::Version { major: 1, minor: 2 }.encode(),
        events,
    );
    p.on_bytes(60_100, &dump.encode(), events);
    p
}

fn settle(p: &mut BoardPipeline, action: ArbiterAction) -> Result<String, String> {
    let request = ArbiterRequest {
        who: "Anna".into(),
        board: 1,
        action,
        key: None,
    };
    p.on_arbiter(70_000, &request, &mut Vec::new())
}

/// Written and read back: every record stays valid PGN.
fn reread(p: &BoardPipeline) -> crate::record::GameRecord {
    let text = p.pgn();
    let mut games = read_games(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
    let game = games.pop().unwrap();
    game.to_game().unwrap_or_else(|e| panic!("{e}: {text}"));
    game
}

#[test]
fn a_gap_two_orders_explain_is_recorded_marked_and_settled_by_the_arbiter() {
    let mut events = Vec::new();
    let mut p = outage_without_log(
        &["e2e4", "e7e5", "g1f3"],
        &["a7a6", "f1b5", "b8c6"],
        &mut events,
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::BoardState { held: true, .. })),
        "not held: {events:?}"
    );
    let orders: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, Event::Alert(a) if a.gap.is_some()))
        .collect();
    assert_eq!(orders.len(), 1, "one alert: {events:?}");
    let recorded = recorded_uci(&p);
    assert_eq!(recorded.len(), 6);
    let pgn = p.pgn();
    assert!(pgn.contains("{order not observed: also possible"), "{pgn}");
    reread(&p);

    // The arbiter picks the other order: the span is replaced, the mark goes.
    let other: Vec<String> = if recorded[3] == "a7a6" {
        moves(&["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"])
    } else {
        moves(&["e2e4", "e7e5", "g1f3", "a7a6", "f1b5", "b8c6"])
    };
    assert!(settle(&mut p, ArbiterAction::SettleOrder { ply: 4, pick: 2 }).is_err());
    settle(&mut p, ArbiterAction::SettleOrder { ply: 4, pick: 1 }).unwrap();
    assert_eq!(recorded_uci(&p), other);
    let pgn = p.pgn();
    assert!(!pgn.contains("order not observed"), "{pgn}");
    reread(&p);
    assert!(
        settle(&mut p, ArbiterAction::SettleOrder { ply: 4, pick: 0 }).is_err(),
        "settled once"
    );
}

#[test]
fn confirming_the_recorded_order_keeps_the_moves_and_says_so() {
    let mut events = Vec::new();
    let mut p = outage_without_log(
        &["e2e4", "e7e5", "g1f3"],
        &["a7a6", "f1b5", "b8c6"],
        &mut events,
    );
    let recorded = recorded_uci(&p);
    let text = settle(&mut p, ArbiterAction::SettleOrder { ply: 4, pick: 0 }).unwrap();
    assert!(text.contains("confirmed"), "{text}");
    assert_eq!(recorded_uci(&p), recorded);
    let pgn = p.pgn();
    assert!(!pgn.contains("order not observed"), "{pgn}");
    assert!(pgn.contains("confirmed"), "{pgn}");
}

#[test]
fn a_gap_no_sequence_explains_goes_on_from_the_board_and_a_correction_restores_the_game() {
    let before = ["e2e4", "e7e5"];
    let gap = [
        "d2d4", "d7d6", "c2c4", "c7c6", "b1c3", "g8f6", "g1f3", "b8d7", "f1d3", "f8e7",
    ];
    let mut events = Vec::new();
    let mut p = outage_without_log(&before, &gap, &mut events);
    let reanchored = |events: &[Event]| {
        events.iter().any(|e| {
            matches!(e, Event::Alert(a)
            if matches!(a.gap, Some(crate::act::GapAccount::Reanchored { .. })))
        })
    };
    assert!(
        !reanchored(&events),
        "a board just read may be a move under way: {events:?}"
    );
    p.tick(60_100 + crate::act::TAKE_UP_QUIET_MS, &mut events);
    assert!(
        events.iter().any(|e| matches!(e, Event::Alert(a)
            if a.severity == Severity::Critical
                && matches!(a.gap, Some(crate::act::GapAccount::Reanchored { .. })))),
        "a critical alert: {events:?}"
    );
    assert!(p.live());
    let record = reread(&p);
    let fen = record
        .start_fen
        .clone()
        .expect("the game goes on from the board's position");
    assert!(
        fen.starts_with("r1bqk2r/pp1nbppp/2pp1n2/4p3/2PPP3/2NB1N2/PP3PPP/R1BQK2R w"),
        "{fen}"
    );
    assert!(
        record
            .initial_comments
            .iter()
            .any(|c| c.contains("moves before the gap: 1.e4 e5")),
        "{:?}",
        record.initial_comments
    );
    // White castles: the move is recorded in the game from the board's position.
    let mut board = Game::from_fen(&fen, false).unwrap();
    let castle = Message::FieldUpdate {
        field: 60,
        piece: 0,
    }
    .encode();
    p.on_bytes(62_000, &castle, &mut events);
    board.play_uci("e1g1").unwrap();
    let dump = Message::BoardDump(fields_from_board(
        board.position().board(),
        Orientation::Normal,
    ));
    p.on_bytes(63_000, &dump.encode(), &mut events);
    assert_eq!(recorded_uci(&p), ["e1g1"]);
    reread(&p);

    // The arbiter enters the moves made meanwhile: the whole game stands again.
    let mut whole: Vec<String> = gap.iter().map(|m| m.to_string()).collect();
    whole.push("e1g1".into());
    assert!(
        settle(
            &mut p,
            ArbiterAction::ReplaceMoves {
                from_ply: 5,
                moves: whole.clone()
            }
        )
        .is_err()
    );
    settle(
        &mut p,
        ArbiterAction::ReplaceMoves {
            from_ply: 3,
            moves: whole.clone(),
        },
    )
    .unwrap();
    let mut all = moves(&before);
    all.extend(whole);
    assert_eq!(recorded_uci(&p), all);
    let record = reread(&p);
    assert_eq!(record.start_fen, None);
}

/// The board's updates arrive after a silence in one read with the handshake (a board that
/// kept its update mode, or updates kept in the port's buffer): they came after the link was
/// back, so they are part of the gap, and the board's dump tells every move since the last
/// one seen. None of them is read as a live move from the picture before the gap.
#[test]
fn updates_received_with_the_handshake_are_part_of_the_gap() {
    let before = ["e2e4", "e7e5"];
    let buffered = ["g1f3", "b8c6"];
    let gap = ["f1c4", "f8c5", "c2c3", "g8f6", "d2d4"];
    let played: Vec<&str> = before.iter().chain(&buffered).copied().collect();
    let mut events = Vec::new();
    let mut p = pipeline();
    let messages = lift_place_messages(&played);
    let (early, late) = messages.split_at(2 * before.len());
    for (i, m) in early.iter().enumerate() {
        p.on_bytes(1000 + 900 * i as u64, m, &mut events);
    }
    let mut chunk = late.concat();
    chunk.extend(Message::Version { major: 1, minor: 2 }.encode());
    p.on_bytes(60_000, &chunk, &mut events);
    assert_eq!(
        recorded_uci(&p),
        moves(&before),
        "nothing read live before the board is read again"
    );
    let mut game = Game::standard();
    for m in played.iter().chain(&gap) {
        game.play_uci(m).unwrap();
    }
    let dump = Message::BoardDump(fields_from_board(
        game.position().board(),
        Orientation::Normal,
    ));
    p.on_bytes(62_000, &dump.encode(), &mut events);
    p.tick(70_000, &mut events);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::BoardState { held: true, .. })),
        "not held: {events:?}"
    );
    let recorded = recorded_uci(&p);
    // Nine plies unseen have more orders than an alert names (4! × 3!): the game is taken
    // up from the board's position, with its critical alert, or every order is named.
    if p.record().start_fen.is_some() {
        assert!(
            events.iter().any(|e| matches!(e, Event::Alert(a)
                if a.severity == Severity::Critical
                    && matches!(a.gap, Some(crate::act::GapAccount::Reanchored { .. })))),
            "{events:?}"
        );
        assert!(recorded.is_empty(), "{recorded:?}");
        let taken = Game::from_fen(p.record().start_fen.as_deref().unwrap(), false).unwrap();
        assert_eq!(taken.position().board(), game.position().board());
        return;
    }
    assert_eq!(recorded.len(), played.len() + gap.len(), "{recorded:?}");
    assert_eq!(recorded[..before.len()], moves(&before)[..]);
    let all: Vec<String> = played.iter().chain(&gap).map(|m| m.to_string()).collect();
    if recorded != all {
        assert!(p.pgn().contains(ORDER_NOT_OBSERVED), "{}", p.pgn());
    }
}

/// A clock message: White (the left side) and Black with these minutes and seconds left,
/// `white_runs` or Black's clock running.
fn clock_at(white: (u8, u8), black: (u8, u8), white_runs: bool) -> Vec<u8> {
    use crate::wire::dgt::{ClockMessage, ClockStatus, ClockTimes, SideTime};
    let side = |(minutes, seconds): (u8, u8)| SideTime {
        minutes,
        seconds,
        ..SideTime::default()
    };
    let times = ClockTimes {
        left: side(white),
        right: side(black),
        status: ClockStatus {
            running: true,
            right_lever_high: !white_runs,
            ..ClockStatus::default()
        },
    };
    Message::Clock(ClockMessage::Times(times)).encode()
}

/// The gap alerts among `events` that no later alert withdrew.
fn standing_gap_alerts(events: &[Event]) -> Vec<&crate::act::Alert> {
    let alerts: Vec<&crate::act::Alert> = events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) => Some(a),
            _ => None,
        })
        .collect();
    alerts
        .iter()
        .filter(|a| a.gap.is_some())
        .filter(|a| {
            !alerts
                .iter()
                .any(|later| later.withdraws.iter().any(|r| a.is(r)))
        })
        .copied()
        .collect()
}

/// After 1.e4 e6 the link dropped while 2.d4 Be7 3.Nf3 Bd6 were played: the dump is read
/// as three moves, Black to move, with an order alert. The clock then shows White to move,
/// which a press by Black after White's reply explains (6.2.1.2): the reading stands until
/// White's next move, which it does not explain, and the gap is read again with the
/// bishop's detour. One gap, one standing alert, one note in the PGN.
#[test]
fn a_gap_read_again_after_the_next_move_keeps_one_alert_and_one_note() {
    let mut events = Vec::new();
    let mut p = pipeline();
    p.on_bytes(100, &clock_at((5, 0), (5, 0), true), &mut events);
    let messages = lift_place_messages(&["e2e4", "e7e6"]);
    p.on_bytes(1000, &messages[0], &mut events);
    p.on_bytes(1200, &messages[1], &mut events);
    p.on_bytes(1500, &clock_at((4, 59), (5, 0), false), &mut events);
    p.on_bytes(3000, &messages[2], &mut events);
    p.on_bytes(3200, &messages[3], &mut events);
    p.on_bytes(3500, &clock_at((4, 59), (4, 58), true), &mut events);
    let mut game = Game::standard();
    for m in ["e2e4", "e7e6", "d2d4", "f8e7", "g1f3", "e7d6"] {
        game.play_uci(m).unwrap();
    }
    let dump = Message::BoardDump(fields_from_board(
        game.position().board(),
        Orientation::Normal,
    ));
    p.on_bytes(
        60_000,
        &Message::Version { major: 1, minor: 2 }.encode(),
        &mut events,
    );
    p.on_bytes(60_100, &dump.encode(), &mut events);
    assert_eq!(recorded_uci(&p).len(), 5, "three moves read first");
    assert_eq!(standing_gap_alerts(&events).len(), 1, "{events:?}");
    p.on_bytes(60_500, &clock_at((4, 30), (4, 20), true), &mut events);
    assert_eq!(recorded_uci(&p).len(), 5, "a press reads no gap again");
    let next = lift_place_messages(&["c2c4"]);
    p.on_bytes(62_000, &next[0], &mut events);
    p.on_bytes(62_400, &next[1], &mut events);
    p.tick(64_000, &mut events);
    let recorded = recorded_uci(&p);
    assert_eq!(
        recorded.len(),
        7,
        "read again with four moves and 3.c4: {recorded:?}"
    );
    let gap_alerts = events
        .iter()
        .filter(|e| matches!(e, Event::Alert(a) if a.gap.is_some()))
        .count();
    assert_eq!(gap_alerts, 2, "the gap was read twice: {events:?}");
    let standing = standing_gap_alerts(&events);
    assert_eq!(standing.len(), 1, "one standing alert: {events:?}");
    assert_eq!(standing[0].ply, 3);
    let pgn = p.pgn();
    assert_eq!(pgn.matches("order not observed").count(), 1, "{pgn}");
    reread(&p);
    // The arbiter confirms the order: no mark is left.
    settle(&mut p, ArbiterAction::SettleOrder { ply: 3, pick: 0 }).unwrap();
    let pgn = p.pgn();
    assert!(!pgn.contains("order not observed"), "{pgn}");
}

/// An alert withdrawn by a later one takes its note and its penalty proposal with it.
#[test]
fn a_withdrawn_alert_leaves_no_note_or_penalty() {
    let mut p = pipeline();
    let mut events = Vec::new();
    for (i, m) in lift_place_messages(&["e2e4"]).iter().enumerate() {
        p.on_bytes(1000 + 100 * i as u64, m, &mut events);
    }
    let alert = |article: &str, severity, t_ms| crate::act::Alert {
        article: article.to_string(),
        side: Some(crate::board::ColorName::White),
        ply: 1,
        t_ms,
        evidence_ms: Vec::new(),
        squares: Vec::new(),
        severity,
        message: format!("what {article} says"),
        gap: None,
        withdraws: Vec::new(),
        before_game: false,
    };
    let illegal = alert("7.5.1", Severity::Warning, 2000);
    let knocked = alert("7.4", Severity::Warning, 2100);
    p.take(&Event::Alert(illegal.clone()));
    p.take(&Event::Alert(knocked.clone()));
    assert_eq!(p.penalties.len(), 1);
    assert!(p.pgn().contains("what 7.5.1 says"));
    let mut withdrawing = alert("7.5.1", Severity::Info, 3000);
    withdrawing.withdraws = vec![illegal.reference()];
    p.take(&Event::Alert(withdrawing));
    let pgn = p.pgn();
    assert!(!pgn.contains("what 7.5.1 says"), "{pgn}");
    assert!(pgn.contains("what 7.4 says"), "not withdrawn: {pgn}");
    assert!(p.penalties.is_empty());
}

/// Moves, each lifted and placed at its own time from `t`, as the board reports them (plain
/// moves, castling included: king, then rook), on the board `game` shows.
fn play_reported(p: &mut BoardPipeline, game: &mut Game, uci: &str, t: u64, out: &mut Vec<Event>) {
    let field = |sq: shakmaty::Square| (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
    let before = game.position().board().clone();
    game.play_uci(uci).unwrap();
    let after = game.position().board().clone();
    let mut i = 0;
    for sq in before.occupied() ^ after.occupied() {
        if after.piece_at(sq).is_none() {
            let lift = Message::FieldUpdate {
                field: field(sq),
                piece: 0,
            };
            p.on_bytes(t + 100 * i, &lift.encode(), out);
            i += 1;
        }
    }
    for sq in shakmaty::Bitboard::FULL {
        if let Some(piece) = after.piece_at(sq)
            && before.piece_at(sq) != Some(piece)
        {
            let put = Message::FieldUpdate {
                field: field(sq),
                piece: crate::board::dgt::code_from_piece(piece),
            };
            p.on_bytes(t + 100 * i, &put.encode(), out);
            i += 1;
        }
    }
}

/// 1.e4 e5 played with the clock running, then a gap of `gap` no legal sequence explains;
/// the game is taken up from the board's position, and `after` are played, each pressed
/// for: the pipeline, and the clock times each press leaves (White's, Black's).
fn take_up_with_clock(gap: &[&str], after: &[&str]) -> (BoardPipeline, Vec<(u64, u64)>) {
    let mut events = Vec::new();
    let mut p = pipeline();
    let mut game = Game::standard();
    p.on_bytes(100, &clock_at((5, 0), (5, 0), true), &mut events);
    play_reported(&mut p, &mut game, "e2e4", 1000, &mut events);
    p.on_bytes(1500, &clock_at((4, 59), (5, 0), false), &mut events);
    play_reported(&mut p, &mut game, "e7e5", 3000, &mut events);
    p.on_bytes(3500, &clock_at((4, 59), (4, 58), true), &mut events);
    assert_eq!(clock_comments(&p), [Some(299_000), Some(298_000)]);
    for m in gap {
        game.play_uci(m).unwrap();
    }
    p.on_bytes(
        60_000,
        &Message::Version { major: 1, minor: 2 }.encode(),
        &mut events,
    );
    let dump = Message::BoardDump(fields_from_board(
        game.position().board(),
        Orientation::Normal,
    ));
    p.on_bytes(60_100, &dump.encode(), &mut events);
    let white_to_move = game.position().turn() == shakmaty::Color::White;
    let (mut white, mut black) = (180u64, 170u64);
    p.on_bytes(
        60_200,
        &clock_at((3, 0), (2, 50), white_to_move),
        &mut events,
    );
    p.tick(60_200 + crate::act::TAKE_UP_QUIET_MS, &mut events);
    assert!(
        events.iter().any(|e| matches!(e, Event::Alert(a)
            if matches!(a.gap, Some(crate::act::GapAccount::Reanchored { .. })))),
        "taken up: {events:?}"
    );
    assert!(clock_comments(&p).is_empty(), "no move yet: {}", p.pgn());
    let mut pressed = Vec::new();
    for (i, m) in after.iter().enumerate() {
        let t = 62_000 + 2_000 * i as u64;
        let mover_white = game.position().turn() == shakmaty::Color::White;
        play_reported(&mut p, &mut game, m, t, &mut events);
        if mover_white {
            white -= 5;
        } else {
            black -= 5;
        }
        let mmss = |s: u64| ((s / 60) as u8, (s % 60) as u8);
        p.on_bytes(
            t + 1_500,
            &clock_at(mmss(white), mmss(black), !mover_white),
            &mut events,
        );
        pressed.push((white * 1000, black * 1000));
    }
    p.tick(62_000 + 2_000 * after.len() as u64 + 5_000, &mut events);
    assert_eq!(recorded_uci(&p), after, "{events:?}");
    (p, pressed)
}

/// The `[%clk]` of each move recorded.
fn clock_comments(p: &BoardPipeline) -> Vec<Option<u64>> {
    p.record().moves.iter().map(|m| m.clock_ms).collect()
}

/// After a gap no legal sequence explains, the game goes on from the board's position with
/// plies counted afresh: the `[%clk]` of its moves are the clock's times at those moves,
/// not those of the moves before the gap that had the same numbers; how long the first
/// one took is not known (the turn began while the link was down).
#[test]
fn clock_times_after_a_take_up_are_those_of_the_moves_after_it() {
    let white_to_move = [
        "d2d4", "d7d6", "c2c4", "c7c6", "b1c3", "g8f6", "g1f3", "b8d7", "f1d3", "f8e7",
    ];
    let black_to_move = &white_to_move[..9];
    for (gap, after) in [
        (&white_to_move[..], &["e1g1", "e8g8"][..]),
        (black_to_move, &["f8e7", "e1g1", "e8g8"][..]),
    ] {
        let (p, pressed) = take_up_with_clock(gap, after);
        let expected: Vec<Option<u64>> = pressed
            .iter()
            .enumerate()
            .map(|(i, &(white, black))| {
                let white_moved = (i % 2 == 0) == (gap.len() % 2 == 0);
                Some(if white_moved { white } else { black })
            })
            .collect();
        assert_eq!(clock_comments(&p), expected, "{}", p.pgn());
        let record = reread(&p);
        assert_eq!(record.moves.len(), after.len());
        assert_eq!(record.moves[0].elapsed_ms, None, "{}", p.pgn());
        assert!(record.moves[1].elapsed_ms.is_some(), "{}", p.pgn());
    }
}

/// A board's first move log takes ≈ 8 s to download at 9600 baud, and the field updates of
/// moves made meanwhile come after it, before the board dump the handshake asks for: the log's
/// picture of the board (it reaches back to the power-up) is what those updates change, so
/// the game starts and its moves are recorded as made. Without that picture they change a
/// board nobody had seen, and the game, already under way at the dump, is read from the start
/// across a gap: the same moves, their order not observed.
#[test]
fn moves_made_while_the_first_log_downloads_are_recorded() {
    let (_, log) = start_with_its_log();
    let played = ["e2e4", "e7e5", "g1f3"];
    let run = |with_log: bool| {
        let mut events = Vec::new();
        let mut p = handshaking_pipeline(&mut events);
        if with_log {
            p.on_bytes(8_600, &log, &mut events);
        }
        for (i, m) in lift_place_messages(&played).iter().enumerate() {
            p.on_bytes(8_700 + 600 * i as u64, m, &mut events);
        }
        p.on_bytes(12_500, &dump_after(&played), &mut events);
        (recorded_uci(&p), p.pgn().contains(ORDER_NOT_OBSERVED))
    };
    assert_eq!(run(true), (moves(&played), false));
    let (read_across, order_marked) = run(false);
    assert_eq!(read_across.len(), played.len(), "{read_across:?}");
    assert!(
        read_across == played || order_marked,
        "without the log's picture, another order unmarked: {read_across:?}"
    );
}

/// What a board queued while its log downloaded arrives after the log at line speed: moves
/// tens of milliseconds apart, times of the line and not of the players.
/// They are recorded without a 7.4 or 7.5.4 judgment until the dump the link asks for once
/// the log is in says the line is live again; the same burst read live is judged.
#[test]
fn moves_queued_behind_the_log_carry_no_timing_judgments() {
    let (start, log) = start_with_its_log();
    let played = [
        "e2e4", "e7e5", "g1f3", "b8c6", "f3g1", "c6b8", "g1f3", "b8c6", "f3g1", "c6b8",
    ];
    let run = |behind_log: bool| {
        let mut events = Vec::new();
        let mut p = handshaking_pipeline(&mut events);
        if behind_log {
            p.on_bytes(8_600, &log, &mut events);
        }
        p.on_bytes(8_600, &Message::BoardDump(start).encode(), &mut events);
        // As a queue drains at 960 bytes a second, a move every 34 ms (no clock on this
        // board: nothing but the times says who made them).
        let mut t = 8_700;
        for squares in lift_place_messages(&played).chunks(2) {
            p.on_bytes(t, &squares.concat(), &mut events);
            t += 34;
        }
        p.on_bytes(t, &dump_after(&played), &mut events);
        let judged: Vec<String> = events
            .iter()
            .filter_map(|e| match e {
                Event::Alert(a) if a.article.starts_with("7.4") || a.article == "7.5.4" => {
                    Some(a.message.clone())
                }
                _ => None,
            })
            .collect();
        (recorded_uci(&p), judged)
    };
    let (moves, judged) = run(true);
    assert_eq!(moves, played);
    assert!(judged.is_empty(), "judged on the line's times: {judged:?}");
    let (_, judged_live) = run(false);
    assert!(
        !judged_live.is_empty(),
        "the same burst read live is judged on its times"
    );
}

/// A board that kept its update mode sends its next move as soon as the link is back, and
/// on a busy host the handshake's answer can come later than the bytes alone could wait
/// for (here 700 ms). The link said its connection was lost, so that move is part of the
/// gap: the board's log, read after the handshake, puts every move in the order played.
/// Read as live, it would have been recorded before the moves of the gap.
#[test]
fn a_move_sent_before_a_late_handshake_is_ordered_by_the_log() {
    use crate::sim::virtual_board::memory::BoardMemory;
    use crate::wire::dgt::EepromRecord;
    let seen = ["e2e4", "e7e5", "g1f3"];
    let unseen = ["b8c6", "f1c4", "f8c5"];
    let sent_at_reconnect = ["c2c3"];
    let played: Vec<&str> = [&seen[..], &unseen, &sent_at_reconnect].concat();
    let changes = lift_place_changes(&played);
    let (seen_changes, rest) = changes.split_at(2 * seen.len());
    let (unseen_changes, resent) = rest.split_at(2 * unseen.len());

    let (start, _) = start_with_its_log();
    let mut memory = BoardMemory::blank();
    memory.power_up(&start);
    let log = |memory: &mut BoardMemory| {
        Message::EepromMoves(EepromRecord::parse_all(&memory.download())).encode()
    };
    let mut events = Vec::new();
    let mut p = handshaking_pipeline(&mut events);
    p.on_bytes(100, &log(&mut memory), &mut events);
    p.on_bytes(200, &Message::BoardDump(start).encode(), &mut events);
    let mut t = 1_000;
    for &(field, piece) in seen_changes {
        memory.field_changed(field, piece, t);
        p.on_bytes(
            t,
            &Message::FieldUpdate { field, piece }.encode(),
            &mut events,
        );
        t += 450;
    }
    assert_eq!(recorded_uci(&p), moves(&seen));
    p.link_lost();
    t += 10_000;
    for &(field, piece) in unseen_changes {
        memory.field_changed(field, piece, t);
        t += 450;
    }
    for &(field, piece) in resent {
        memory.field_changed(field, piece, t);
        p.on_bytes(
            t,
            &Message::FieldUpdate { field, piece }.encode(),
            &mut events,
        );
        t += 200;
    }
    p.on_bytes(
        t + 700,
        &Message::Version { major: 1, minor: 2 }.encode(),
        &mut events,
    );
    p.on_bytes(t + 800, &log(&mut memory), &mut events);
    p.on_bytes(t + 900, &dump_after(&played), &mut events);
    p.tick(t + 5_000, &mut events);
    assert_eq!(recorded_uci(&p), moves(&played), "{}", p.pgn());
    assert!(!p.pgn().contains(ORDER_NOT_OBSERVED), "{}", p.pgn());
}

/// The board in the start position, and a move log that pictures it (a power-up, nothing
/// since).
fn start_with_its_log() -> ([u8; 64], Vec<u8>) {
    let start = fields_from_board(&shakmaty::Board::new(), Orientation::Normal);
    let mut memory = crate::sim::virtual_board::memory::BoardMemory::blank();
    memory.power_up(&start);
    let records = crate::wire::dgt::EepromRecord::parse_all(&memory.download());
    (start, Message::EepromMoves(records).encode())
}

/// The board dump after `played` from the start position.
fn dump_after(played: &[&str]) -> Vec<u8> {
    let mut game = Game::standard();
    for m in played {
        game.play_uci(m).unwrap();
    }
    Message::BoardDump(fields_from_board(
        game.position().board(),
        Orientation::Normal,
    ))
    .encode()
}

/// A pipeline that reads move logs, its board's handshake begun at 5 ms.
fn handshaking_pipeline(events: &mut Vec<Event>) -> BoardPipeline {
    let control = TimeControl::parse("300+2").unwrap();
    let mut p =
        BoardPipeline::new(GameTags::new(&EventConfig::default(), 1), control).with_board_log();
    p.on_bytes(5, &Message::Version { major: 1, minor: 2 }.encode(), events);
    p
}

/// A refused log's warning names the board (round, board, port, serial) and what the
/// arbiter should do.
#[test]
fn a_refused_logs_warning_names_the_board_and_the_arbiters_part() {
    let config = EventConfig {
        event: "Test".into(),
        round: 4,
        ..EventConfig::default()
    };
    let control = TimeControl::parse("300+2").unwrap();
    let mut p = BoardPipeline::new(GameTags::new(&config, 7), control);
    p.set_link("/dev/ttyACM3", Some("01025"));
    let text = p.log_refused_warning(&crate::board::log_recovery::Refusal::NotFound);
    for part in [
        "round 4, board 7 (port /dev/ttyACM3, serial 01025)",
        "board's move log not used: the last changes seen are not in the board's log",
        "the arbiter should check",
        "touchmove arbiter",
    ] {
        assert!(text.contains(part), "{part:?} in {text:?}");
    }
}

/// A DGT board on which e4 e5 Nf3 Nc6 were played from 1 s on, a report every 900 ms, and
/// the events so far.
fn after_four_moves() -> (BoardPipeline, Vec<Event>) {
    let mut p = pipeline();
    let mut events = Vec::new();
    for (i, m) in lift_place_messages(&["e2e4", "e7e5", "g1f3", "b8c6"])
        .iter()
        .enumerate()
    {
        p.on_bytes(1000 + 900 * i as u64, m, &mut events);
    }
    (p, events)
}

/// Plays [`after_four_moves`], then lifts the pawn
/// on a2 (field 48) at 20 s and sets the result 1-0 at `result_at`; returns the alerts the
/// result brought.
fn result_over_a_lifted_pawn(lift_a2: bool, result_at: Millis) -> (BoardPipeline, Vec<Event>) {
    let (mut p, mut events) = after_four_moves();
    if lift_a2 {
        let lift = Message::FieldUpdate {
            field: 48,
            piece: 0,
        };
        p.on_bytes(20_000, &lift.encode(), &mut events);
    }
    p.tick(result_at - 500, &mut events);
    let mut at_result = Vec::new();
    p.on_arbiter(result_at, &result_from_scoresheets("1-0"), &mut at_result)
        .unwrap();
    (p, at_result)
}

#[test]
fn a_result_entered_on_a_board_that_shows_a_move_unread_says_so() {
    let (p, events) = result_over_a_lifted_pawn(true, 40_000);
    let alert = events
        .iter()
        .find_map(|e| match e {
            Event::Alert(a) if a.article == "8.5.3" => Some(a),
            _ => None,
        })
        .unwrap_or_else(|| panic!("an 8.5.3 alert at the result: {events:?}"));
    assert_eq!(alert.severity, Severity::Warning);
    assert_eq!(alert.squares, ["a2"]);
    assert_eq!(alert.ply, 5, "nothing is recorded after ply 4");
    assert!(
        matches!(events.last(), Some(Event::Result { result, .. }) if result == "1-0"),
        "the result stands: {events:?}"
    );
    assert_eq!(recorded_uci(&p), ["e2e4", "e7e5", "g1f3", "b8c6"]);
    assert!(reread(&p).result == "1-0", "{}", p.pgn());
    assert!(
        p.pgn().contains("8.5.3: the game was ended by"),
        "{}",
        p.pgn()
    );
}

#[test]
fn a_result_entered_on_the_final_position_or_a_board_still_moving_adds_no_alert() {
    for (lift_a2, result_at) in [(false, 40_000), (true, 21_000)] {
        let (_, events) = result_over_a_lifted_pawn(lift_a2, result_at);
        assert!(
            !events.iter().any(|e| matches!(e, Event::Alert(_))),
            "lift {lift_a2}, result at {result_at}: {events:?}"
        );
        assert!(events.iter().any(|e| matches!(e, Event::Result { .. })));
    }
}

/// The game after `sans`, played from the start.
fn after_sans(sans: &[&str]) -> Game {
    let mut game = Game::standard();
    for m in sans {
        game.play_san(m).expect("legal");
    }
    game
}

/// The arbiter's result request `result` "from the scoresheets".
fn result_from_scoresheets(result: &str) -> ArbiterRequest {
    ArbiterRequest {
        who: "Anna".into(),
        board: 1,
        action: ArbiterAction::SetResult {
            result: result.into(),
            reason: "from the scoresheets".into(),
        },
        key: None,
    }
}

/// The 8.5.3 warnings among `events`: (ply, squares).
fn warnings_853(events: &[Event]) -> Vec<(u32, Vec<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) if a.article == "8.5.3" && a.severity != Severity::Info => {
                Some((a.ply, a.squares.clone()))
            }
            _ => None,
        })
        .collect()
}

/// Seeds 10020, 10494 and four more of `touchmove simulate`: a Pegasus board whose link was
/// lost (the recorder restarted, the board unplugged) never answered the handshake in time
/// again, and the arbiter's result closed a game recorded plies short without a word. A
/// result entered while the board has not been read since its link was lost says so; once
/// the board is heard again, the board at rest is what counts.
#[test]
fn a_result_entered_while_the_board_is_not_read_says_so() {
    for heard_again in [false, true] {
        let (mut p, mut events) = after_four_moves();
        p.link_lost();
        if heard_again {
            let version = Message::Version { major: 1, minor: 2 }.encode();
            p.on_bytes(20_000, &version, &mut events);
            let dump = dump_after(&["e2e4", "e7e5", "g1f3", "b8c6"]);
            p.on_bytes(20_100, &dump, &mut events);
        }
        p.tick(39_500, &mut events);
        let mut at_result = Vec::new();
        p.on_arbiter(40_000, &result_from_scoresheets("1-0"), &mut at_result)
            .unwrap();
        let warnings = warnings_853(&at_result);
        if heard_again {
            assert!(warnings.is_empty(), "{at_result:?}");
        } else {
            assert_eq!(warnings, [(5, Vec::new())], "{at_result:?}");
        }
        assert_eq!(recorded_uci(&p), ["e2e4", "e7e5", "g1f3", "b8c6"]);
    }
}

/// Seed 10467 of `touchmove simulate`: a Sentio board unplugged while three captures were
/// made on e3, read again showing them (and the result signal's kings), and the arbiter's
/// result came 4 s after that reading. The board had not been unchanged for the 5 s that
/// tell a board at rest, so nothing was said; but its differences are the gap's, not hands
/// still moving, and are told. (Here the result comes before the board could be taken up
/// as the game's position, which would be a mark of its own.)
#[test]
fn a_result_entered_just_after_a_gap_tells_what_the_board_read_again_shows() {
    let (mut p, mut events) = after_four_moves();
    let played = ["e2e4", "e7e5", "g1f3", "b8c6"];
    p.link_lost();
    let mut game = Game::standard();
    for m in played {
        game.play_uci(m).unwrap();
    }
    let mut board = game.position().board().clone();
    board.discard_piece_at(shakmaty::Square::A2);
    board.discard_piece_at(shakmaty::Square::H2);
    let version = Message::Version { major: 1, minor: 2 }.encode();
    p.on_bytes(30_000, &version, &mut events);
    let dump = Message::BoardDump(fields_from_board(&board, Orientation::Normal)).encode();
    p.on_bytes(30_100, &dump, &mut events);
    p.tick(30_500, &mut events);
    let mut at_result = Vec::new();
    p.on_arbiter(30_600, &result_from_scoresheets("1-0"), &mut at_result)
        .unwrap();
    assert_eq!(
        warnings_853(&at_result),
        [(5, vec!["a2".to_string(), "h2".to_string()])],
        "{at_result:?}"
    );
}

/// Plays `moves` on an occupancy-only board, then lifts the pawn from e4 (its capture on
/// d5, if it made one, unseen: victim off and pawn down between two scans) and puts the
/// kings on the centre squares (Black's on `black_king_to`, White's on e4); the arbiter's
/// result follows. Returns every event from the lift on.
fn centre_pawn_lifted_for_the_signal(moves: &[&str], black_king_to: u8) -> Vec<Event> {
    let control = TimeControl::parse("300+2").unwrap();
    let mut p = BoardPipeline::new(GameTags::new(&EventConfig::default(), 1), control)
        .sensing_occupancy_only();
    let mut events = Vec::new();
    let start = fields_from_board(&shakmaty::Board::new(), Orientation::Normal);
    p.on_bytes(10, &Message::BoardDump(start).encode(), &mut events);
    for (i, m) in lift_place_messages(moves).iter().enumerate() {
        p.on_bytes(1000 + 900 * i as u64, m, &mut events);
    }
    let mut after = Vec::new();
    // Fields: e4 36, e8 4, e1 60.
    for (t, field, piece) in [
        (20_000, 36, 0),
        (23_000, 4, 0),
        (23_500, black_king_to, 1),
        (24_000, 60, 0),
        (24_500, 36, 1),
    ] {
        let update = Message::FieldUpdate { field, piece }.encode();
        p.on_bytes(t, &update, &mut after);
    }
    p.tick(45_000, &mut after);
    p.on_arbiter(46_000, &result_from_scoresheets("1-0"), &mut after)
        .unwrap();
    after
}

/// Seeds 11103 and 7036 of `touchmove simulate`: on a Pegasus the piece on a centre square
/// made the game's last move, a capture whose victim was taken off and capturer put down
/// between two scans, so that only its lift was reported; a king of the result signal then
/// took its square, and the game ended a move short without a word. A piece of the side to
/// move lifted from a centre square the kings took is an 8.5.3 warning when it had a
/// capture to make; none when it had not.
#[test]
fn a_centre_piece_lifted_for_the_signal_that_could_have_captured_is_told() {
    // e5: field 28; d5: field 27.
    let could_capture = centre_pawn_lifted_for_the_signal(&["e2e4", "d7d5"], 28);
    let warnings = warnings_853(&could_capture);
    assert!(
        warnings
            .iter()
            .any(|(ply, squares)| *ply == 3 && squares.iter().any(|s| s == "d5")),
        "{could_capture:?}"
    );
    let no_capture = centre_pawn_lifted_for_the_signal(&["e2e4", "e7e5"], 27);
    assert!(warnings_853(&no_capture).is_empty(), "{no_capture:?}");
}

/// Seed 10083 of `touchmove simulate`: a DGT board unplugged for half a minute while the
/// game's last two moves were made and the pieces set up again; read again, it showed the
/// set-up, which closed the game without a result and without a word. A game without a
/// result closed by a set-up found when the board was read again, nothing recorded since,
/// is an 8.5.3 warning; a game with its result is closed as before.
#[test]
fn a_game_closed_by_a_set_up_found_after_a_gap_says_its_last_moves_were_not_seen() {
    for with_result in [false, true] {
        let (mut p, mut events) = after_four_moves();
        if with_result {
            p.on_arbiter(8_000, &result_from_scoresheets("1-0"), &mut events)
                .unwrap();
        }
        p.link_lost();
        let mut after_gap = Vec::new();
        let version = Message::Version { major: 1, minor: 2 }.encode();
        p.on_bytes(40_000, &version, &mut after_gap);
        p.on_bytes(40_100, &dump_after(&[]), &mut after_gap);
        p.tick(45_000, &mut after_gap);
        let closed = after_gap
            .iter()
            .position(|e| matches!(e, Event::GameClosed { .. }))
            .unwrap_or_else(|| panic!("the set-up closes the game: {after_gap:?}"));
        let warnings = warnings_853(&after_gap[..closed]);
        if with_result {
            assert!(warnings.is_empty(), "{after_gap:?}");
        } else {
            assert_eq!(warnings, [(5, Vec::new())], "{after_gap:?}");
            assert!(
                p.pgn().contains("8.5.3: the game was closed"),
                "{}",
                p.pgn()
            );
        }
    }
}

/// A whole picture of `board` as a board of `kind` sends it (occupancy only on a board that
/// does not tell pieces apart).
fn picture_on(
    kind: crate::board::kind::BoardKind,
    board: &shakmaty::Board,
) -> crate::board::Snapshot {
    let picture = crate::board::Snapshot {
        board: board.clone(),
        identifies_pieces: true,
    };
    if kind.identifies_pieces() {
        picture
    } else {
        picture.occupancy_only()
    }
}

/// A pipeline for a board of `kind` whose first picture shows `game`'s position (the
/// recorder saw nothing before it), then `then`, and the events it gave.
fn first_read_mid_game(
    kind: crate::board::kind::BoardKind,
    game: &Game,
    then: Vec<(Millis, ObservationKind)>,
) -> (BoardPipeline, Vec<Event>) {
    use crate::board::Observation;
    let picture = picture_on(kind, game.position().board());
    let mut p = BoardPipeline::new(
        GameTags::new(&EventConfig::default(), 1),
        TimeControl::parse("5400+30").unwrap(),
    )
    .with_kind(kind);
    let mut events = Vec::new();
    let seen = std::iter::once((1_000, ObservationKind::Snapshot(picture))).chain(then);
    for (t_ms, kind) in seen {
        p.on_observation(&Observation { t_ms, kind }, &mut events);
    }
    p.tick(20_000, &mut events);
    (p, events)
}

/// The round started before the recorder did (or before it started again on the new
/// round): its first picture of the board shows 1.d4 d5 2.c4 already made, and 2...e6 is
/// then made and pressed for. The old recorder waited for a start position it never saw and
/// recorded nothing of the game (simulation seeds 500 and 409). The game begins at the start
/// with the moves read across the gap, on every kind of board (on a Pegasus, which senses
/// occupancy only, too: simulation seed 600, whose game was lost when such boards were not
/// read so), with no penalty for what the recorder did not see.
#[test]
fn a_game_begun_before_the_recorder_first_read_the_board_is_recorded() {
    use crate::act::GapAccount;
    use crate::board::kind::BoardKind;
    use shakmaty::{Color, Piece, Role, Square};
    for kind in BoardKind::ALL {
        let mut game = after_sans(&["d4", "d5", "c4"]);
        let pawn = kind.identifies_pieces().then_some(Piece {
            color: Color::Black,
            role: Role::Pawn,
        });
        let (p, events) = first_read_mid_game(
            kind,
            &game,
            vec![
                (3_000, ObservationKind::Emptied(Square::E7)),
                (3_200, ObservationKind::Placed(Square::E6, pawn)),
                (3_600, ObservationKind::ClockPressed { by: Color::Black }),
            ],
        );
        let recorded: Vec<String> = p.record().moves.iter().map(|m| m.uci.clone()).collect();
        let played = ["d2d4", "d7d5", "c2c4"];
        let order_told = events.iter().any(|e| {
            matches!(e, Event::Alert(a) if a.article == "8.5.3"
                && matches!(&a.gap, Some(GapAccount::Orders { others, .. })
                    if others.iter().any(|o| *o == played)))
        });
        assert_eq!(recorded.len(), 4, "{kind}: {events:?}");
        assert!(
            recorded[..3] == played || order_told,
            "{kind}: the moves before the first picture, in another order, untold: {events:?}"
        );
        assert_eq!(recorded[3], "e7e6", "{kind}: {events:?}");
        let mut replayed = Game::standard();
        for m in &recorded {
            replayed.play_uci(m).expect("legal");
        }
        game.play_san("e6").expect("legal");
        assert_eq!(
            replayed.position().board(),
            game.position().board(),
            "{kind}"
        );
        let penalties: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                Event::Alert(a) if a.article.starts_with("7.5") => Some(a.article.as_str()),
                _ => None,
            })
            .collect();
        assert!(penalties.is_empty(), "{kind}: {penalties:?}");
    }
}

/// The recorder read the board while it still showed the last round's finished game, and
/// was killed; meanwhile the board was set up and the round's game began. Started again, it
/// reads 1.d4 d5 2.c4 across the gap of its restart (the journal holds what it read before,
/// so this is no first read), and 2...e6 is then made and pressed for: the game is recorded
/// from the start, on every kind of board. Only across a first read does the board as first
/// read bound what is begun; a game under way when the recorder comes back loses nothing.
#[test]
fn a_game_begun_while_the_recorder_was_down_after_it_read_the_board_is_recorded() {
    use crate::board::Observation;
    use crate::board::kind::BoardKind;
    use shakmaty::{Color, Piece, Role, Square};
    for kind in BoardKind::ALL {
        let finished = after_sans(&[
            "e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5", "d4", "Nf6", "Nf3", "Bf5",
        ]);
        let (mut p, mut events) = first_read_mid_game(kind, &finished, Vec::new());
        p.link_lost();
        let game = after_sans(&["d4", "d5", "c4"]);
        let picture = picture_on(kind, game.position().board());
        let pawn = kind.identifies_pieces().then_some(Piece {
            color: Color::Black,
            role: Role::Pawn,
        });
        for (t_ms, kind) in [
            (90_000, ObservationKind::Snapshot(picture)),
            (92_000, ObservationKind::Emptied(Square::E7)),
            (92_200, ObservationKind::Placed(Square::E6, pawn)),
            (92_600, ObservationKind::ClockPressed { by: Color::Black }),
        ] {
            p.on_observation(&Observation { t_ms, kind }, &mut events);
        }
        p.tick(100_000, &mut events);
        let recorded: Vec<String> = p.record().moves.iter().map(|m| m.uci.clone()).collect();
        assert_eq!(recorded.len(), 4, "{kind}: {events:?}");
        assert_eq!(recorded[3], "e7e6", "{kind}: {events:?}");
    }
}

/// The recorder first reads the board ten plies into its game (1.e4 e5 2.Nf3 Nc6 3.Bb5 a6
/// 4.Ba4 Nf6 5.O-O Be7), more than any short sequence from the start can explain, and the
/// players go on (6.Re1 b5). Nothing can be recorded, but never in silence: a warning tells
/// the arbiter that a game is being played that nothing records, on every kind of board.
#[test]
fn a_game_too_far_along_when_the_recorder_first_read_the_board_is_told() {
    use crate::board::kind::BoardKind;
    use shakmaty::{Color, Piece, Role, Square};
    for kind in BoardKind::ALL {
        let game = after_sans(&[
            "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7",
        ]);
        let piece = |color, role| kind.identifies_pieces().then_some(Piece { color, role });
        let (p, events) = first_read_mid_game(
            kind,
            &game,
            vec![
                (3_000, ObservationKind::Emptied(Square::F1)),
                (
                    3_200,
                    ObservationKind::Placed(Square::E1, piece(Color::White, Role::Rook)),
                ),
                (3_600, ObservationKind::ClockPressed { by: Color::White }),
                (6_000, ObservationKind::Emptied(Square::B7)),
                (
                    6_200,
                    ObservationKind::Placed(Square::B5, piece(Color::Black, Role::Pawn)),
                ),
                (6_600, ObservationKind::ClockPressed { by: Color::Black }),
                (66_000, ObservationKind::Emptied(Square::F3)),
                (
                    66_200,
                    ObservationKind::Placed(Square::G5, piece(Color::White, Role::Knight)),
                ),
                (66_600, ObservationKind::ClockPressed { by: Color::White }),
            ],
        );
        assert!(p.record().moves.is_empty(), "{kind}: {events:?}");
        let told_before = |before: Millis| {
            events.iter().any(|e| {
                matches!(e, Event::Alert(a)
                    if a.severity != Severity::Info && a.before_game && a.t_ms < before)
            })
        };
        assert!(
            !told_before(60_000),
            "{kind}: told before a minute of moves: {events:?}"
        );
        let told = events
            .iter()
            .any(|e| matches!(e, Event::Alert(a) if a.severity != Severity::Info && a.before_game));
        assert!(told, "{kind}: a game nothing records, untold: {events:?}");
    }
}

/// The recorder came up too late to read the round's game (ten plies along: told), and the
/// arbiter entered its result from the scoresheets; the players then set the pieces up for a
/// post-mortem and play 1.e4. The board's file holds the one game, with the arbiter's
/// result: the post-mortem is after the game, not a second game of the round (simulation
/// seed 654, whose file held the post-mortem beside the arbiter's result).
#[test]
fn a_post_mortem_after_the_arbiters_result_for_a_game_never_seen_begun_is_no_game() {
    use crate::board::Observation;
    use crate::board::kind::BoardKind;
    use shakmaty::{Color, Piece, Role, Square};
    for kind in BoardKind::ALL {
        let game = after_sans(&[
            "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6", "O-O", "Be7",
        ]);
        let (mut p, mut events) = first_read_mid_game(kind, &game, Vec::new());
        p.on_arbiter(30_000, &result_from_scoresheets("1/2-1/2"), &mut events)
            .expect("result entered");
        let start = picture_on(kind, &shakmaty::Board::new());
        let pawn = kind.identifies_pieces().then_some(Piece {
            color: Color::White,
            role: Role::Pawn,
        });
        for (t_ms, kind) in [
            (40_000, ObservationKind::Snapshot(start)),
            (42_000, ObservationKind::Emptied(Square::E2)),
            (42_200, ObservationKind::Placed(Square::E4, pawn)),
            (42_600, ObservationKind::ClockPressed { by: Color::White }),
        ] {
            p.on_observation(&Observation { t_ms, kind }, &mut events);
        }
        p.tick(50_000, &mut events);
        let pgn = p.board_pgn();
        assert_eq!(pgn.matches("[Event ").count(), 1, "{kind}: {pgn}");
        assert_eq!(p.record().result, "1/2-1/2", "{kind}: {pgn}");
        assert!(p.record().moves.is_empty(), "{kind}: {pgn}");
    }
}

/// A recorder started on a board that still shows a finished game's position, which is then
/// set back to the start (pieces moved home, the captured ones put back): no game was in
/// progress, and the arbiter is told nothing; the game that follows is recorded.
#[test]
fn a_board_set_back_to_the_start_after_the_recorder_first_read_it_is_no_game_in_progress() {
    use crate::board::kind::BoardKind;
    use shakmaty::{Color, Piece, Role, Square};
    for kind in BoardKind::ALL {
        let game = after_sans(&[
            "e4", "d5", "exd5", "Qxd5", "Nc3", "Qa5", "d4", "Nf6", "Nf3", "Bf5",
        ]);
        let piece = |color, role| kind.identifies_pieces().then_some(Piece { color, role });
        let home = |t: Millis, from: Square, to: Square, color, role| {
            [
                (t, ObservationKind::Emptied(from)),
                (t + 300, ObservationKind::Placed(to, piece(color, role))),
            ]
        };
        let mut reset = Vec::new();
        reset.extend(home(
            3_000,
            Square::F5,
            Square::C8,
            Color::Black,
            Role::Bishop,
        ));
        reset.extend(home(
            5_000,
            Square::F6,
            Square::G8,
            Color::Black,
            Role::Knight,
        ));
        reset.extend(home(
            7_000,
            Square::A5,
            Square::D8,
            Color::Black,
            Role::Queen,
        ));
        reset.extend(home(
            9_000,
            Square::F3,
            Square::G1,
            Color::White,
            Role::Knight,
        ));
        reset.extend(home(
            11_000,
            Square::C3,
            Square::B1,
            Color::White,
            Role::Knight,
        ));
        reset.extend(home(
            13_000,
            Square::D4,
            Square::D2,
            Color::White,
            Role::Pawn,
        ));
        reset.push((
            15_000,
            ObservationKind::Placed(Square::E2, piece(Color::White, Role::Pawn)),
        ));
        reset.push((
            17_000,
            ObservationKind::Placed(Square::D7, piece(Color::Black, Role::Pawn)),
        ));
        reset.extend(home(
            80_000,
            Square::E2,
            Square::E4,
            Color::White,
            Role::Pawn,
        ));
        reset.push((81_000, ObservationKind::ClockPressed { by: Color::White }));
        let (p, events) = first_read_mid_game(kind, &game, reset);
        let warned = events
            .iter()
            .any(|e| matches!(e, Event::Alert(a) if a.severity != Severity::Info));
        assert!(!warned, "{kind}: a board set back told: {events:?}");
        assert_eq!(
            p.record().moves.len(),
            1,
            "{kind}: 1.e4 recorded: {events:?}"
        );
    }
}

/// What reaches a board's pipeline live: a chunk of bytes or an arbiter's request; or the
/// recorder killed, and started again.
enum LiveInput {
    Bytes(Vec<u8>),
    Arbiter(ArbiterRequest),
    /// Nothing runs (no tick) until the recorder starts again.
    Killed,
    /// The recorder started again: its pipeline rebuilt from the journal, time let pass up to
    /// now and the link to the board lost, as `BoardTask::resume` does.
    Restarted,
}

/// How often, and from when, the recorder's clock ticks a board's pipeline live.
const LIVE_TICK_MS: Millis = 250;

/// Runs `inputs` (by time) through a pipeline as the recorder's board task does: each at its
/// time, the clock ticking every [`LIVE_TICK_MS`] from `phase` in between, on to `end`.
/// Returns the pipeline (`new` at first), its events and the journal of the run.
fn run_live(
    new: fn() -> BoardPipeline,
    inputs: &[(Millis, LiveInput)],
    phase: Millis,
    end: Millis,
) -> (
    BoardPipeline,
    Vec<Event>,
    Vec<crate::recorder::replay::Step>,
) {
    use crate::recorder::replay::Step;
    let mut p = new();
    let mut events = Vec::new();
    let mut journal = Vec::new();
    let mut next_tick = phase;
    let mut running = true;
    for (t, input) in inputs {
        while running && next_tick < *t {
            p.tick(next_tick, &mut events);
            next_tick += LIVE_TICK_MS;
        }
        match input {
            LiveInput::Killed => running = false,
            LiveInput::Restarted => {
                (p, events) = rebuild_from(new, &journal, *t);
                p.link_lost();
                journal.push(Step::LinkLost(*t));
                running = true;
                next_tick = t + phase;
            }
            LiveInput::Bytes(bytes) => {
                p.on_bytes(*t, bytes, &mut events);
                journal.push(Step::Bytes(*t, bytes.clone()));
            }
            LiveInput::Arbiter(request) => {
                journal.push(Step::Arbiter(*t, request.clone()));
                let _ = p.on_arbiter(*t, request, &mut events);
            }
        }
    }
    while next_tick <= end {
        p.tick(next_tick, &mut events);
        next_tick += LIVE_TICK_MS;
    }
    (p, events, journal)
}

/// The pipeline (`new` at first) a restarted recorder rebuilds from `journal` at `end`, and
/// its events.
fn rebuild_from(
    new: fn() -> BoardPipeline,
    journal: &[crate::recorder::replay::Step],
    end: Millis,
) -> (BoardPipeline, Vec<Event>) {
    use crate::recorder::replay::{Replayed, replay_step};
    let mut p = new();
    let mut events = Vec::new();
    for step in journal {
        replay_step(&mut p, step, &mut |replayed| {
            if let Replayed::Event(event) = replayed {
                events.push(event);
            }
        });
    }
    p.tick(end, &mut events);
    (p, events)
}

/// [`after_four_moves`]' moves, the pawn on a2 knocked off its square if `knocked`, then
/// the result signal (a draw: Black's king to d5, White's to d4, complete at 11.2 s), and
/// the arbiter's result from the scoresheets at `result_at`.
fn signal_then_result(knocked: bool, result_at: Millis) -> Vec<(Millis, LiveInput)> {
    let mut inputs: Vec<(Millis, LiveInput)> =
        lift_place_messages(&["e2e4", "e7e5", "g1f3", "b8c6"])
            .into_iter()
            .enumerate()
            .map(|(i, m)| (1000 + 900 * i as Millis, LiveInput::Bytes(m)))
            .collect();
    // Fields: a2 48, e8 4, d5 27, e1 60, d4 35.
    let mut updates = vec![
        (10_000, 4, 0),
        (10_400, 27, 11),
        (10_800, 60, 0),
        (11_200, 35, 5),
    ];
    if knocked {
        updates.insert(0, (9_000, 48, 0));
    }
    for (t, field, piece) in updates {
        let update = Message::FieldUpdate { field, piece }.encode();
        inputs.push((t, LiveInput::Bytes(update)));
    }
    inputs.push((
        result_at,
        LiveInput::Arbiter(result_from_scoresheets("1-0")),
    ));
    inputs.sort_by_key(|(t, _)| *t);
    inputs
}

/// Seed 7112 of `touchmove simulate`, before its arbiter waited 20 s: the arbiter entered a
/// game's result about 2 s after the players' result signal, and the game file rebuilt from
/// the journal after a restart lacked the 8.5.3 alert "result signal stands" the live file
/// had. Whenever the arbiter's result comes (before the signal is complete, while it waits
/// to stand, once it stands), and whatever the phase of the recorder's ticks, the game
/// rebuilt from the journal is the one recorded live, alerts included.
#[test]
fn a_result_entered_around_a_result_signal_is_rebuilt_as_recorded_live() {
    let complete = 11_200;
    for knocked in [true, false] {
        for after in [-300i64, 0, 500, 900, 1_000, 1_100, 1_200, 2_000, 5_000] {
            let result_at = (complete as i64 + after) as Millis;
            for phase in (0..LIVE_TICK_MS).step_by(50) {
                let end = result_at + 10_000;
                let inputs = signal_then_result(knocked, result_at);
                let (live, live_events, journal) = run_live(pipeline, &inputs, phase, end);
                let (rebuilt, rebuilt_events) = rebuild_from(pipeline, &journal, end);
                let case =
                    format!("knocked {knocked}, result {after} ms after the signal, phase {phase}");
                assert_eq!(rebuilt.pgn(), live.pgn(), "{case}");
                assert_eq!(rebuilt_events, live_events, "{case}");
                assert_eq!(live.result(), "1-0", "{case}: the arbiter's result stands");
                // The signal stood before the result: the arbiter is told of the pawn off a2.
                let told = live.pgn().contains("8.5.3: the result signal stands");
                if after >= 1_000 || !knocked {
                    assert_eq!(told, knocked, "{case}: {}", live.pgn());
                }
            }
        }
    }
}

/// A board that senses only occupancy (a DGT board read as a Pegasus is), 90 minutes and
/// 30 s a move, shown the start position at 10 ms.
fn occupancy_pipeline() -> BoardPipeline {
    let control = TimeControl::parse("5400+30").unwrap();
    let mut p = BoardPipeline::new(GameTags::new(&EventConfig::default(), 1), control)
        .sensing_occupancy_only();
    let start = fields_from_board(&shakmaty::Board::new(), Orientation::Normal);
    p.on_bytes(10, &Message::BoardDump(start).encode(), &mut Vec::new());
    p
}

/// Seed 20021 of `touchmove simulate`: on a Pegasus, 5.Bxf6 Nxf6 were made with neither
/// landing shown (f6 stayed filled), the board said nothing for a minute but its serial
/// number, the recorder was killed, and 6.Ne4 was made while it was down. Live, the restarted
/// recorder let the minute pass before it lost the link and read 5.Bxf6 then; the replay of
/// the journal let it pass only at the board's picture after the link came back, read the
/// three moves together, and wrote another file. Whatever the recorder's ticks, and whether
/// bytes that are no observation came between, the rebuilt game is the one recorded live.
#[test]
fn a_minute_that_passed_before_a_restart_is_rebuilt_as_recorded_live() {
    let played = [
        "d2d4", "g8f6", "c2c4", "e7e6", "b1c3", "d7d5", "c1g5", "b8d7", "g5f6", "d7f6", "c3e4",
    ];
    let (killed, restarted) = (100_000, 112_876);
    for serial_pings in [true, false] {
        let mut inputs: Vec<(Millis, LiveInput)> = lift_place_messages(&played[..8])
            .into_iter()
            .enumerate()
            .map(|(i, m)| (1000 + 900 * i as Millis, LiveInput::Bytes(m)))
            .collect();
        // Lifts from g5 (field 30) and d7 (field 11), the captures on f6 unseen.
        for (t, field) in [(20_000, 30), (20_300, 11)] {
            let lift = Message::FieldUpdate { field, piece: 0 }.encode();
            inputs.push((t, LiveInput::Bytes(lift)));
        }
        if serial_pings {
            let serial = Message::SerialNumber("01025".into()).encode();
            for t in (21_009..killed).step_by(1_009) {
                inputs.push((t, LiveInput::Bytes(serial.clone())));
            }
        }
        inputs.push((killed, LiveInput::Killed));
        inputs.push((restarted, LiveInput::Restarted));
        let version = Message::Version { major: 1, minor: 0 }.encode();
        inputs.push((restarted + 6, LiveInput::Bytes(version)));
        inputs.push((restarted + 227, LiveInput::Bytes(dump_after(&played))));
        let end = restarted + 20_000;
        for phase in (0..LIVE_TICK_MS).step_by(50) {
            let (live, live_events, journal) = run_live(occupancy_pipeline, &inputs, phase, end);
            let (rebuilt, rebuilt_events) = rebuild_from(occupancy_pipeline, &journal, end);
            let case = format!("serial pings {serial_pings}, phase {phase}");
            assert_eq!(rebuilt.pgn(), live.pgn(), "{case}");
            assert_eq!(rebuilt_events, live_events, "{case}");
            assert_eq!(recorded_uci(&live), played, "{case}");
        }
    }
}

/// A Certabo board whose black king's tag does not read (e8 reads zeros in every frame): no
/// start position can teach it the pieces, and 1.d4 is played on it unread. Within a minute
/// the desk has one 8.5.3 warning naming the board, e8, and the set-up to do again (seed
/// 20788 of the simulation, whose king's tag `3 0 85 0 0` read as an empty square, found a
/// board recorded empty without a word).
#[test]
fn pieces_moved_on_a_certabo_board_that_learnt_no_tags_are_a_warning_within_a_minute() {
    use crate::board::kind::BoardKind;
    let frame = |tags: &[[u8; 5]; 64]| crate::wire::certabo::Frame::Tags(Box::new(*tags)).encode();
    let mut tags = [[0u8; 5]; 64];
    for field in (0..16).chain(48..64) {
        tags[field] = [3, 0, 84, 40, field as u8 + 1];
    }
    tags[4] = [0; 5];
    let mut p = BoardPipeline::new(
        GameTags::new(&EventConfig::default(), 1),
        TimeControl::parse("5400+30").unwrap(),
    )
    .with_kind(BoardKind::Certabo);
    let mut events = Vec::new();
    for t_ms in (0..120_000).step_by(300) {
        if t_ms == 19_200 {
            // 1.d4: d2 (DGT field 51) to d4 (field 35).
            tags[35] = tags[51];
            tags[51] = [0; 5];
        }
        p.on_bytes(t_ms, &frame(&tags), &mut events);
    }
    let warnings: Vec<&crate::act::Alert> = events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) if a.severity == Severity::Warning => Some(a),
            _ => None,
        })
        .collect();
    let [warning] = &warnings[..] else {
        panic!("one warning: {events:?}");
    };
    assert_eq!(warning.article, "8.5.3");
    assert!(warning.t_ms <= 19_200 + 60_000, "{}", warning.t_ms);
    for named in ["board 1", "no tag was read on e8", "start position set up"] {
        assert!(
            warning.message.contains(named),
            "{named}: {}",
            warning.message
        );
    }
}
