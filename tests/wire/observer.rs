//! The DGT observer: orientation mapping and detection, clock side mapping, on the real
//! capture and on constructed streams.

use shakmaty::{Board, Color, Square};
use touchmove::board::dgt::{DgtObserver, fields_from_board};
use touchmove::board::orientation::{Orientation, is_chess960_start, rotated};
use touchmove::board::{ColorName, MagicPiece, Observation, ObservationKind};
use touchmove::wire::capture::read_capture;
use touchmove::wire::dgt::{
    ClockMessage, ClockSide, ClockStatus, ClockTimes, Decoder, Message, SideTime,
};

const INBYTES: &str = include_str!("../../fixtures/real-dgt/johan.inbytes");

fn johan_messages() -> Vec<(u64, Message)> {
    let mut out = Vec::new();
    for chunk in read_capture(INBYTES).expect("valid fixture") {
        let mut messages = Vec::new();
        Decoder::new().push(&chunk.bytes, &mut messages);
        out.extend(messages.into_iter().map(|m| (chunk.t_ms, m)));
    }
    out
}

fn observe(messages: &[(u64, Message)]) -> (Vec<Observation>, DgtObserver) {
    let mut observer = DgtObserver::new();
    let mut out = Vec::new();
    for (t, m) in messages {
        observer.on_message(*t, m, &mut out);
    }
    (out, observer)
}

#[test]
fn every_field_maps_to_a_distinct_square_and_back_in_both_orientations() {
    for orientation in [Orientation::Normal, Orientation::Rotated] {
        let squares: std::collections::HashSet<Square> =
            (0..64).map(|f| orientation.field_to_square(f)).collect();
        assert_eq!(squares.len(), 64);
        for field in 0..64 {
            let square = orientation.field_to_square(field);
            assert_eq!(orientation.square_to_field(square), field);
            assert_eq!(orientation.flipped().field_to_square(63 - field), square);
        }
    }
    assert_eq!(Orientation::Normal.field_to_square(0), Square::A8);
    assert_eq!(Orientation::Normal.field_to_square(63), Square::H1);
    assert_eq!(Orientation::Normal.field_to_square(52), Square::E2);
    assert_eq!(Orientation::Rotated.field_to_square(0), Square::H1);
}

#[test]
fn all_960_starts_are_recognised_in_both_orientations_and_near_misses_are_not() {
    for n in 0..960 {
        let start = Board::chess960(n);
        assert!(is_chess960_start(&start), "position {n}");
        assert_eq!(Orientation::detect(&start, &[]), Some(Orientation::Normal));
        assert_eq!(
            Orientation::detect(&rotated(&start), &[]),
            Some(Orientation::Rotated)
        );
    }
    let mut king_outside = Board::new();
    king_outside.set_piece_at(Square::E1, shakmaty::Role::Rook.of(Color::White));
    king_outside.set_piece_at(Square::H1, shakmaty::Role::King.of(Color::White));
    king_outside.set_piece_at(Square::E8, shakmaty::Role::Rook.of(Color::Black));
    king_outside.set_piece_at(Square::H8, shakmaty::Role::King.of(Color::Black));
    assert!(!is_chess960_start(&king_outside));
    let mut one_pawn_moved = Board::new();
    one_pawn_moved.discard_piece_at(Square::E2);
    one_pawn_moved.set_piece_at(Square::E4, shakmaty::Role::Pawn.of(Color::White));
    assert!(!is_chess960_start(&one_pawn_moved));
    assert_eq!(Orientation::detect(&one_pawn_moved, &[]), None);
}

#[test]
fn a_caller_setup_is_recognised_in_either_orientation() {
    let setup: Board = "4k3/8/8/8/8/8/8/4K2R".parse().expect("valid board fen");
    assert_eq!(Orientation::detect(&setup, &[]), None);
    assert_eq!(
        Orientation::detect(&rotated(&setup), std::slice::from_ref(&setup)),
        Some(Orientation::Rotated)
    );
    let mut observer = DgtObserver::new();
    observer.expect_setup(setup.clone());
    let mut out = Vec::new();
    observer.on_message(
        5,
        &Message::BoardDump(fields_from_board(&setup, Orientation::Rotated)),
        &mut out,
    );
    assert_eq!(observer.orientation(), Orientation::Rotated);
    assert!(
        matches!(&out[..], [Observation { kind: ObservationKind::Snapshot(s), .. }] if s.board == setup)
    );
}

#[test]
fn johan_starts_normal_and_white_is_on_the_left_pressing_first() {
    let (observations, observer) = observe(&johan_messages());
    assert_eq!(observer.orientation(), Orientation::Normal);
    assert_eq!(observer.white_side(), Some(ClockSide::Left));
    match &observations[0].kind {
        ObservationKind::Snapshot(s) => assert_eq!(s.board, Board::new()),
        other => panic!("first observation is {other:?}"),
    }
    let presses: Vec<Color> = observations
        .iter()
        .filter_map(|o| match o.kind {
            ObservationKind::ClockPressed { by } => Some(by),
            _ => None,
        })
        .collect();
    // 1. e4 … 22. Qxc6: 43 moves, each completed by a press, alternating from White.
    assert_eq!(presses.len(), 43);
    for (i, by) in presses.iter().enumerate() {
        let expected = if i % 2 == 0 {
            Color::White
        } else {
            Color::Black
        };
        assert_eq!(*by, expected, "press {}", i + 1);
    }
    let first_lift = observations
        .iter()
        .find(|o| matches!(o.kind, ObservationKind::Emptied(_)));
    assert!(matches!(
        first_lift,
        Some(Observation {
            kind: ObservationKind::Emptied(Square::E2),
            ..
        })
    ));
    let last_reading = observations.iter().rev().find_map(|o| match o.kind {
        ObservationKind::ClockTimes(r) => Some(r),
        _ => None,
    });
    let last = last_reading.expect("clock readings");
    assert_eq!((last.white_ms, last.black_ms), (16_000, 0));
    assert!(last.flag);
    assert_eq!(last.running, None);
}

#[test]
fn johan_on_a_board_turned_round_gives_the_same_observations() {
    let messages = johan_messages();
    let turned: Vec<(u64, Message)> = messages
        .iter()
        .map(|(t, m)| {
            let m = match m {
                Message::BoardDump(fields) => {
                    let mut f = *fields;
                    f.reverse();
                    Message::BoardDump(f)
                }
                &Message::FieldUpdate { field, piece } => Message::FieldUpdate {
                    field: 63 - field,
                    piece,
                },
                other => other.clone(),
            };
            (*t, m)
        })
        .collect();
    let (normal, _) = observe(&messages);
    let (rotated_obs, observer) = observe(&turned);
    assert_eq!(observer.orientation(), Orientation::Rotated);
    assert_eq!(normal, rotated_obs);
}

#[test]
fn turning_the_board_round_after_setting_up_switches_and_emits_a_snapshot() {
    let mut observer = DgtObserver::new();
    let mut out = Vec::new();
    observer.on_message(0, &Message::BoardDump([0; 64]), &mut out);
    let fields = fields_from_board(&Board::new(), Orientation::Rotated);
    let mut t = 1;
    for (field, &piece) in (0u8..).zip(&fields) {
        if piece != 0 {
            observer.on_message(t, &Message::FieldUpdate { field, piece }, &mut out);
            t += 1;
        }
    }
    assert_eq!(observer.orientation(), Orientation::Rotated);
    match out.last().map(|o| &o.kind) {
        Some(ObservationKind::Snapshot(s)) => assert_eq!(s.board, Board::new()),
        other => panic!("expected a snapshot, got {other:?}"),
    }
}

#[test]
fn magic_pieces_are_result_signals_not_pieces() {
    let mut observer = DgtObserver::new();
    let mut out = Vec::new();
    let fields = fields_from_board(&Board::new(), Orientation::Normal);
    observer.on_message(0, &Message::BoardDump(fields), &mut out);
    out.clear();
    // Field 27 is d5 on a board the normal way round (a8 = field 0).
    for (code, magic) in [
        (0x0D, MagicPiece::Draw),
        (0x0E, MagicPiece::WhiteWins),
        (0x0F, MagicPiece::BlackWins),
    ] {
        observer.on_message(
            1,
            &Message::FieldUpdate {
                field: 27,
                piece: code,
            },
            &mut out,
        );
        assert_eq!(
            out.pop().map(|o| o.kind),
            Some(ObservationKind::MagicPiece(Square::D5, magic))
        );
        observer.on_message(
            2,
            &Message::FieldUpdate {
                field: 27,
                piece: 0,
            },
            &mut out,
        );
        assert_eq!(
            out.pop().map(|o| o.kind),
            Some(ObservationKind::Emptied(Square::D5))
        );
    }
    assert_eq!(observer.board(), Board::new());
}

fn clock(left_s: u8, right_s: u8, status: u8) -> Message {
    let side = |s: u8| SideTime {
        minutes: s / 60,
        seconds: s % 60,
        ..SideTime::default()
    };
    Message::Clock(ClockMessage::Times(ClockTimes {
        left: side(left_s),
        right: side(right_s),
        status: ClockStatus::from_byte(status),
    }))
}

#[test]
fn white_on_the_right_is_found_from_the_side_that_runs_first() {
    let mut observer = DgtObserver::new();
    let mut out = Vec::new();
    observer.on_message(
        0,
        &Message::BoardDump(fields_from_board(&Board::new(), Orientation::Normal)),
        &mut out,
    );
    observer.on_message(10, &clock(60, 60, 0x03), &mut out); // right lever high, running
    observer.on_message(20, &clock(60, 59, 0x03), &mut out);
    observer.on_message(
        30,
        &Message::FieldUpdate {
            field: 52,
            piece: 0,
        },
        &mut out,
    );
    observer.on_message(
        40,
        &Message::FieldUpdate {
            field: 36,
            piece: 1,
        },
        &mut out,
    );
    observer.on_message(50, &clock(60, 59, 0x01), &mut out); // pressed: left runs
    assert_eq!(observer.white_side(), Some(ClockSide::Right));
    let kinds: Vec<&ObservationKind> = out.iter().map(|o| &o.kind).collect();
    assert!(kinds.contains(&&ObservationKind::ClockPressed { by: Color::White }));
    let last = out.iter().rev().find_map(|o| match o.kind {
        ObservationKind::ClockTimes(r) => Some(r),
        _ => None,
    });
    let last = last.expect("a reading");
    assert_eq!((last.white_ms, last.black_ms), (59_000, 60_000));
    assert_eq!(last.running, Some(ColorName::Black));
}

#[test]
fn without_a_start_position_the_side_pressed_after_a_black_move_is_blacks() {
    let mut observer = DgtObserver::new();
    let mut out = Vec::new();
    let mut middlegame = Board::new();
    middlegame.discard_piece_at(Square::E2);
    middlegame.set_piece_at(Square::E4, shakmaty::Role::Pawn.of(Color::White));
    observer.on_message(
        0,
        &Message::BoardDump(fields_from_board(&middlegame, Orientation::Normal)),
        &mut out,
    );
    observer.on_message(10, &clock(60, 60, 0x01), &mut out); // left runs
    observer.on_message(
        20,
        &Message::FieldUpdate {
            field: 12,
            piece: 0,
        },
        &mut out,
    );
    observer.on_message(
        30,
        &Message::FieldUpdate {
            field: 28,
            piece: 7,
        },
        &mut out,
    ); // ...e5
    observer.on_message(40, &clock(58, 60, 0x03), &mut out); // left pressed
    assert_eq!(observer.white_side(), Some(ClockSide::Right));
    assert!(
        out.iter()
            .any(|o| o.kind == ObservationKind::ClockPressed { by: Color::Black })
    );
}

#[test]
fn unchanged_field_updates_and_clock_repeats_produce_nothing() {
    let mut observer = DgtObserver::new();
    let mut out = Vec::new();
    observer.on_message(0, &Message::FieldUpdate { field: 3, piece: 6 }, &mut out);
    observer.on_message(1, &Message::FieldUpdate { field: 3, piece: 6 }, &mut out);
    observer.on_message(2, &clock(60, 60, 0x00), &mut out);
    observer.on_message(3, &clock(60, 60, 0x00), &mut out);
    assert_eq!(out.len(), 2);
}
