//! Whatever a board reports, the act-of-moving machine does not panic, its events stay
//! consistent (revisions withdraw only moves it made, plies count up from the revision) and
//! its deadlines never lie in the past.
//!
//! The observations mix legal moves made square by square with garbage: pieces appearing
//! from nowhere, impossible snapshots, presses by either side, result pieces, clock times and
//! receive times that jump backwards (a capture file spliced badly).

use proptest::prelude::*;
use shakmaty::{Bitboard, Board, Color, Piece, Position, Role, Square};
use touchmove::act::{Event, Machine, MachineConfig};
use touchmove::board::{
    ClockReading, ColorName, MagicPiece, Millis, Observation, ObservationKind, Snapshot,
};

/// One step of the generated input; see [`observations_for`].
#[derive(Debug, Clone)]
enum Step {
    /// Make the n-th legal move of the machine's game position, lift then place.
    LegalMove(usize),
    /// Lift whatever stands on a square (or report an empty square emptied).
    Lift(u8),
    /// Report a piece (code 0..12, 12 = unidentified) on a square.
    Place(u8, u8),
    /// A snapshot of an arbitrary board.
    Snapshot(Vec<(u8, u8)>),
    /// A snapshot of the standard start position.
    StartPosition,
    /// A snapshot of the machine's game position (an arbiter restored the board).
    Restore,
    /// A press by White or Black.
    Press(bool),
    /// A result piece on a square.
    Magic(u8, u8),
    /// Clock times.
    Times(u64, u64),
    /// Let the machine's timers run to a later time.
    Advance(u32),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        24 => (0usize..64).prop_map(Step::LegalMove),
        4 => Just(Step::Restore),
        2 => (0u8..64).prop_map(Step::Lift),
        2 => (0u8..64, 0u8..13).prop_map(|(s, p)| Step::Place(s, p)),
        1 => prop::collection::vec((0u8..64, 0u8..12), 0..40).prop_map(Step::Snapshot),
        1 => Just(Step::StartPosition),
        2 => any::<bool>().prop_map(Step::Press),
        1 => (0u8..64, 0u8..3).prop_map(|(s, m)| Step::Magic(s, m)),
        1 => (0u64..10_000_000, 0u64..10_000_000).prop_map(|(w, b)| Step::Times(w, b)),
        1 => (0u32..5_000).prop_map(Step::Advance),
    ]
}

fn piece(code: u8) -> Option<Piece> {
    let role = Role::ALL.get(usize::from(code % 6))?;
    (code < 12).then(|| Piece {
        color: Color::from_white(code < 6),
        role: *role,
    })
}

fn square(index: u8) -> Square {
    Square::new(u32::from(index % 64))
}

/// Feeds the steps to `machine` with receive times from `gaps` (negative gaps step back)
/// and checks every batch of events.
fn drive(mut machine: Machine, steps: &[Step], gaps: &[i32]) -> Result<(), TestCaseError> {
    let mut t: Millis = 0;
    let mut out = Vec::new();
    let mut plies: Vec<String> = Vec::new();
    let start = Observation {
        t_ms: 0,
        kind: ObservationKind::Snapshot(Snapshot {
            board: Board::default(),
            identifies_pieces: machine.config().identifies_pieces,
        }),
    };
    machine.observe(&start, &mut out);
    for (i, s) in steps.iter().enumerate() {
        let gap = gaps.get(i).copied().unwrap_or(100);
        t = t.saturating_add_signed(i64::from(gap));
        let mut observations = Vec::new();
        match s {
            Step::LegalMove(n) => {
                let legal = machine.game().position().legal_moves();
                if let Some(mv) = legal.get(n % legal.len().max(1)) {
                    if let Some(from) = mv.from() {
                        observations.push(ObservationKind::Emptied(from));
                    }
                    if let Some(victim) = mv.capture().and(Some(mv.to())) {
                        observations.push(ObservationKind::Emptied(victim));
                    }
                    let placed = mv.promotion().unwrap_or(mv.role());
                    observations.push(ObservationKind::Placed(
                        mv.to(),
                        Some(placed.of(machine.game().position().turn())),
                    ));
                    observations.push(ObservationKind::ClockPressed {
                        by: machine.game().position().turn(),
                    });
                }
            }
            Step::Lift(sq) => observations.push(ObservationKind::Emptied(square(*sq))),
            Step::Place(sq, p) => {
                observations.push(ObservationKind::Placed(square(*sq), piece(*p)))
            }
            Step::Snapshot(pieces) => {
                let mut board = Board::empty();
                for (sq, p) in pieces {
                    if let Some(p) = piece(*p) {
                        board.set_piece_at(square(*sq), p);
                    }
                }
                observations.push(ObservationKind::Snapshot(Snapshot {
                    board,
                    identifies_pieces: machine.config().identifies_pieces,
                }));
            }
            Step::StartPosition => observations.push(ObservationKind::Snapshot(Snapshot {
                board: Board::default(),
                identifies_pieces: machine.config().identifies_pieces,
            })),
            Step::Restore => observations.push(ObservationKind::Snapshot(Snapshot {
                board: machine.game().position().board().clone(),
                identifies_pieces: machine.config().identifies_pieces,
            })),
            Step::Press(white) => observations.push(ObservationKind::ClockPressed {
                by: Color::from_white(*white),
            }),
            Step::Magic(sq, m) => {
                let magic = [
                    MagicPiece::Draw,
                    MagicPiece::WhiteWins,
                    MagicPiece::BlackWins,
                ];
                observations.push(ObservationKind::MagicPiece(
                    square(*sq),
                    magic[usize::from(*m % 3)],
                ));
            }
            Step::Times(w, b) => observations.push(ObservationKind::ClockTimes(ClockReading {
                white_ms: *w,
                black_ms: *b,
                running: Some(if w > b {
                    ColorName::White
                } else {
                    ColorName::Black
                }),
                flag: *w == 0 || *b == 0,
            })),
            Step::Advance(ms) => {
                out.clear();
                t = t.saturating_add(u64::from(*ms));
                machine.advance(t, &mut out);
                check_events(&out, &mut plies)?;
            }
        }
        for (k, kind) in observations.into_iter().enumerate() {
            out.clear();
            let obs = Observation {
                t_ms: t + k as Millis * 30,
                kind,
            };
            machine.observe(&obs, &mut out);
            check_events(&out, &mut plies)?;
            if let Some(deadline) = machine.next_deadline() {
                prop_assert!(
                    deadline >= obs.t_ms.min(t),
                    "deadline {deadline} before the observation at {}",
                    obs.t_ms
                );
            }
        }
        prop_assert!(
            machine.ply() as usize == machine.game().plies(),
            "the machine's ply count left its game"
        );
    }
    Ok(())
}

/// Revisions withdraw exactly the moves made since their ply; moves count up by one.
fn check_events(events: &[Event], plies: &mut Vec<String>) -> Result<(), TestCaseError> {
    for e in events {
        match e {
            Event::GameStart { .. } => plies.clear(),
            Event::Move { ply, uci, .. } => {
                prop_assert_eq!(*ply as usize, plies.len() + 1, "move {} out of order", uci);
                plies.push(uci.clone());
            }
            Event::Revision { ply, withdrawn, .. } => {
                let from = (*ply as usize).saturating_sub(1);
                prop_assert!(from < plies.len(), "revision of ply {} never made", ply);
                prop_assert_eq!(
                    &plies[from..],
                    &withdrawn[..],
                    "revision withdrew other moves"
                );
                plies.truncate(from);
            }
            _ => {}
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_input_on_a_piece_identifying_board(
        steps in prop::collection::vec(step(), 1..120),
        gaps in prop::collection::vec(-400i32..1_500, 120),
    ) {
        drive(Machine::new(MachineConfig::default()), &steps, &gaps)?;
    }

    #[test]
    fn any_input_on_an_occupancy_only_chess960_board(
        steps in prop::collection::vec(step(), 1..120),
        gaps in prop::collection::vec(-400i32..1_500, 120),
    ) {
        let config = MachineConfig {
            identifies_pieces: false,
            chess960: true,
            ..MachineConfig::default()
        };
        drive(Machine::new(config), &steps, &gaps)?;
    }
}

/// Placing every kind of piece on every square of an empty board, one after another,
/// reaches impossible boards the generated steps rarely do.
#[test]
fn a_board_filled_square_by_square_is_survived() {
    let mut machine = Machine::new(MachineConfig::default());
    let mut out = Vec::new();
    machine.observe(
        &Observation {
            t_ms: 0,
            kind: ObservationKind::Snapshot(Snapshot {
                board: Board::default(),
                identifies_pieces: true,
            }),
        },
        &mut out,
    );
    let mut t = 0;
    for sq in Bitboard::FULL {
        for code in 0..12 {
            t += 7;
            machine.observe(
                &Observation {
                    t_ms: t,
                    kind: ObservationKind::Placed(sq, piece(code)),
                },
                &mut out,
            );
        }
    }
    machine.advance(t + 10_000, &mut out);
    assert!(
        out.iter()
            .any(|e| matches!(e, Event::BoardState { held: true, .. })),
        "a board full of pieces must hold the game"
    );
}
