use shakmaty::fen::Fen;
use shakmaty::{Board, CastlingMode, Chess, Color, Piece, Position, Role, Square};

use super::super::alert_articles;
use super::Machine;
use crate::act::{Event, MachineConfig};
use crate::board::{Millis, Observation, ObservationKind, Snapshot};

const START: &str = "6k1/1P6/8/8/8/8/6K1/8 w - - 0 1";

fn observe(machine: &mut Machine, t_ms: Millis, kind: ObservationKind) -> Vec<Event> {
    let mut events = Vec::new();
    machine.observe(&Observation { t_ms, kind }, &mut events);
    events
}

/// The pawn shown on the last rank at a press belongs to that press: once the queen is
/// put there and the press completes the move, nothing of it is kept for a later press.
#[test]
fn an_unfinished_promotion_ends_with_its_press() {
    let config = MachineConfig {
        start_fen: Some(START.to_string()),
        ..MachineConfig::default()
    };
    let mut machine = Machine::new(config);
    let fen: Fen = START.parse().expect("fen");
    let start: Chess = fen.into_position(CastlingMode::Standard).expect("position");
    let board: Board = start.board().clone();
    let snapshot = Snapshot {
        board,
        identifies_pieces: true,
    };
    observe(&mut machine, 0, ObservationKind::Snapshot(snapshot));
    let pawn = Piece {
        color: Color::White,
        role: Role::Pawn,
    };
    let queen = Piece {
        color: Color::White,
        role: Role::Queen,
    };
    let mut events = observe(&mut machine, 1000, ObservationKind::Emptied(Square::B7));
    events.extend(observe(
        &mut machine,
        1200,
        ObservationKind::Placed(Square::B8, Some(pawn)),
    ));
    events.extend(observe(
        &mut machine,
        1300,
        ObservationKind::ClockPressed { by: Color::White },
    ));
    assert!(
        machine
            .presses
            .waiting()
            .is_some_and(|p| p.promotion.is_some()),
        "the press keeps the pawn shown on b8"
    );
    events.extend(observe(
        &mut machine,
        1400,
        ObservationKind::Emptied(Square::B8),
    ));
    events.extend(observe(
        &mut machine,
        1500,
        ObservationKind::Placed(Square::B8, Some(queen)),
    ));
    machine.advance(5000, &mut events);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::Move { uci, .. } if uci == "b7b8q")),
        "the promotion is recorded: {events:?}"
    );
    assert!(
        machine.presses.waiting().is_none() && machine.presses.overtaken().is_none(),
        "the press ended, and its promotion with it"
    );
    assert!(
        !alert_articles(&events).iter().any(|a| a.starts_with("7.5")),
        "a promotion finished in the grace period is no illegal move: {:?}",
        alert_articles(&events)
    );
}

/// Blitz on a DGT board, each press made after the opponent replied: White presses for
/// his first move, e4, with the knight of his next move in the hand. The press completes
/// e4, his open move. Read as the knight's move's, it left his next press without a
/// move: an unearned 7.5.3 penalty (issue 57: `touchmove simulate --seed 108 --boards 6
/// --faults 4`).
#[test]
fn a_late_press_with_the_next_piece_in_the_hand_completes_the_open_move() {
    let mut machine = Machine::new(MachineConfig::default());
    let snapshot = Snapshot {
        board: Board::new(),
        identifies_pieces: true,
    };
    let mut events = observe(&mut machine, 0, ObservationKind::Snapshot(snapshot));
    let piece = |color, role| Some(Piece { color, role });
    let press = |by| ObservationKind::ClockPressed { by };
    for (t, kind) in [
        (1_000, ObservationKind::Emptied(Square::E2)),
        (
            1_100,
            ObservationKind::Placed(Square::E4, piece(Color::White, Role::Pawn)),
        ),
        (2_000, ObservationKind::Emptied(Square::E7)),
        (
            2_100,
            ObservationKind::Placed(Square::E5, piece(Color::Black, Role::Pawn)),
        ),
        (2_200, ObservationKind::Emptied(Square::G1)),
        (2_250, press(Color::White)),
        (2_600, press(Color::Black)),
        (
            2_700,
            ObservationKind::Placed(Square::F3, piece(Color::White, Role::Knight)),
        ),
        (5_000, ObservationKind::Emptied(Square::B8)),
        (
            5_100,
            ObservationKind::Placed(Square::C6, piece(Color::Black, Role::Knight)),
        ),
        (5_200, press(Color::White)),
        (6_000, press(Color::Black)),
    ] {
        events.extend(observe(&mut machine, t, kind));
    }
    let mut end = Vec::new();
    machine.advance(20_000, &mut end);
    events.extend(end);
    assert_eq!(machine.game().plies(), 4, "{events:?}");
    assert!(
        alert_articles(&events).is_empty(),
        "no alert for presses each made after a move: {events:?}"
    );
    let completed: Vec<(u32, Millis)> = events
        .iter()
        .filter_map(|e| match e {
            Event::MoveCompleted { ply, t_ms, .. } => Some((*ply, *t_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(
        completed,
        [(1, 2_250), (2, 2_600), (3, 5_200), (4, 6_000)],
        "each press completes the move its player made before it"
    );
}

/// A press without a move whose presser the clock only guessed (a DGT clock not seen
/// running at the start position, its sides not yet learned) may have been the other
/// player's, for his move: an 8.5.3 warning for the arbiter, no 7.5.3 penalty. The same
/// press told for sure is a press without a move.
#[test]
fn a_press_without_a_move_by_a_guessed_presser_proposes_no_penalty() {
    let articles = |guessed: bool| {
        let mut machine = Machine::new(MachineConfig::default());
        let snapshot = Snapshot {
            board: Board::new(),
            identifies_pieces: true,
        };
        let mut events = observe(&mut machine, 0, ObservationKind::Snapshot(snapshot));
        let pawn = Some(Color::White.pawn());
        events.extend(observe(
            &mut machine,
            1_000,
            ObservationKind::Emptied(Square::E2),
        ));
        events.extend(observe(
            &mut machine,
            1_100,
            ObservationKind::Placed(Square::E4, pawn),
        ));
        let press = |by| ObservationKind::ClockPressed { by };
        events.extend(observe(&mut machine, 1_300, press(Color::White)));
        if guessed {
            machine.presser_guessed(3_000);
        }
        events.extend(observe(&mut machine, 3_000, press(Color::Black)));
        machine.advance(20_000, &mut events);
        alert_articles(&events)
    };
    assert_eq!(articles(false), ["7.5.3", "7.5.5"]);
    assert_eq!(articles(true), ["8.5.3"]);
}
