//! Property: no 7.5.5 penalty proposal stands on a move that was later revised. Hostile
//! simulated hands (completed illegal moves, presses without a move, unexchanged promotions,
//! knocked pieces, frequent lost updates) over real games: every proposal whose judged
//! moves a later revision withdrew must be withdrawn by an info 7.5.5 alert after it.

use std::path::Path;

use touchmove::act::{Event, Machine, MachineConfig, Severity};
use touchmove::sim::hands::pgn_games::read_games;
use touchmove::sim::hands::score::Feed;
use touchmove::sim::hands::{self, Noise, score};

/// The proposals left standing on revised moves in one event stream: (event index, ply).
fn standing_on_revised(events: &[Event]) -> Vec<(usize, u32)> {
    let mut found = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let Event::Alert(p) = e else { continue };
        if p.article != "7.5.5" || p.severity == Severity::Info {
            continue;
        }
        let revised = events[i + 1..]
            .iter()
            .position(|e| matches!(e, Event::Revision { ply, .. } if *ply < p.ply));
        let Some(r) = revised else { continue };
        let withdrawn = events[i + 1 + r..].iter().any(|e| {
            matches!(e, Event::Alert(w) if w.article == "7.5.5"
                && w.severity == Severity::Info
                && w.side == p.side
                && w.ply == p.ply)
        });
        if !withdrawn {
            found.push((i, p.ply));
        }
    }
    found
}

#[test]
fn no_penalty_proposal_stands_on_a_revised_move() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pgn/twic1599_1000k.pgn");
    let pgn = std::fs::read(path).expect("PGN fixture");
    let games = read_games(&pgn).expect("PGN fixture parses");
    let (mut proposals, mut revised_under_one) = (0, 0);
    for seed in 1..=2u64 {
        for (i, game) in games
            .iter()
            .filter(|g| g.error.is_none())
            .take(150)
            .enumerate()
        {
            let sim = hands::simulate_game(
                game.fen.as_deref(),
                game.chess960,
                &game.moves_uci,
                game.result.as_deref(),
                Noise::Hostile,
                score::game_seed(seed, i + 1),
            );
            let mut machine = Machine::new(MachineConfig {
                start_fen: game.fen.clone(),
                chess960: game.chess960,
                ..MachineConfig::default()
            });
            let run = score::run(&sim, |feed, out| match feed {
                Feed::Until(t) => machine.catch_up(t, out),
                Feed::Observation(obs) => machine.observe(obs, out),
                Feed::End => machine.advance(u64::MAX, out),
                Feed::Idle => {}
            });
            let events: Vec<Event> = run.events.iter().map(|(_, e)| e.clone()).collect();
            for (k, e) in events.iter().enumerate() {
                if let Event::Alert(p) = e
                    && p.article == "7.5.5"
                    && p.severity != Severity::Info
                {
                    proposals += 1;
                    revised_under_one += usize::from(
                        events[k + 1..]
                            .iter()
                            .any(|e| matches!(e, Event::Revision { ply, .. } if *ply < p.ply)),
                    );
                }
            }
            let standing = standing_on_revised(&events);
            assert!(
                standing.is_empty(),
                "seed {seed} game {}: 7.5.5 proposals standing on revised moves: {standing:?}",
                i + 1
            );
        }
    }
    // The hostile hands must give the property something to bite on.
    assert!(proposals >= 20, "only {proposals} penalty proposals");
    eprintln!("{proposals} proposals, {revised_under_one} later under a revision");
}

#[test]
fn a_proposal_left_under_a_revision_is_found() {
    use touchmove::act::Alert;
    let proposal = Event::Alert(Alert {
        article: "7.5.5".into(),
        side: None,
        ply: 5,
        t_ms: 0,
        evidence_ms: vec![],
        squares: vec![],
        severity: Severity::Critical,
        message: String::new(),
        gap: None,
        withdraws: vec![],
        before_game: false,
    });
    let revision = Event::Revision {
        ply: 3,
        withdrawn: vec![],
        t_ms: 1,
    };
    assert_eq!(
        standing_on_revised(&[proposal.clone(), revision.clone()]),
        vec![(0, 5)]
    );
    let Event::Alert(mut withdrawal) = proposal.clone() else {
        unreachable!()
    };
    withdrawal.severity = Severity::Info;
    assert!(standing_on_revised(&[proposal, revision, Event::Alert(withdrawal)]).is_empty());
}

/// Lifts, placements and presses of `moves` (UCI, from the start position) on a board that
/// names pieces, one move every 2 s, each pressed for: a capture's taken piece lifted first.
fn played_by_hand(moves: &[&str], t: &mut u64) -> Vec<touchmove::board::Observation> {
    use touchmove::board::{Observation, ObservationKind};
    let mut game = touchmove::rules::Game::standard();
    let mut out = Vec::new();
    for uci in moves {
        let board = shakmaty::Position::board(game.position()).clone();
        let from: shakmaty::Square = uci[..2].parse().expect("a square");
        let to: shakmaty::Square = uci[2..4].parse().expect("a square");
        let piece = board.piece_at(from).expect("a piece to move");
        let mover = piece.color;
        *t += 2_000;
        if board.piece_at(to).is_some() {
            out.push(Observation {
                t_ms: *t,
                kind: ObservationKind::Emptied(to),
            });
            *t += 400;
        }
        out.push(Observation {
            t_ms: *t,
            kind: ObservationKind::Emptied(from),
        });
        *t += 300;
        out.push(Observation {
            t_ms: *t,
            kind: ObservationKind::Placed(to, Some(piece)),
        });
        *t += 400;
        out.push(Observation {
            t_ms: *t,
            kind: ObservationKind::ClockPressed { by: mover },
        });
        game.play_uci(uci).expect("a legal move");
    }
    out
}

/// True when `events` record the move `uci`.
fn recorded(events: &[Event], uci: &str) -> bool {
    events
        .iter()
        .any(|e| matches!(e, Event::Move { uci: played, .. } if played == uci))
}

/// The 7.5 alerts among `events` that propose a penalty (not told as information).
fn proposed(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) if a.article.starts_with("7.5") && a.severity != Severity::Info => {
                Some(format!("{} at ply {}: {}", a.article, a.ply, a.message))
            }
            _ => None,
        })
        .collect()
}

/// 1.e4 d5 2.exd5 Qxd5 3.Nc3, on a Millennium board (a scan of 41 ms); the arbiter enters
/// the result from the scoresheets, and the pieces are swept off the board with both hands:
/// the queen on d5 and the pawn on a2 are seen lifted in one frame, as Qxa2 made with two
/// hands would be. The game is over: the old recorder proposed a 7.5.4 penalty after it
/// (simulation seed 5030, a Sentio board).
#[test]
fn pieces_swept_off_after_the_result_earn_no_penalty() {
    use touchmove::board::kind::BoardKind;
    use touchmove::board::{Observation, ObservationKind, Snapshot};
    use touchmove::clock::TimeControl;
    use touchmove::record::arbiter::{ArbiterAction, ArbiterRequest};
    use touchmove::recorder::{BoardPipeline, EventConfig, GameTags};
    let mut pipeline = BoardPipeline::new(
        GameTags::new(&EventConfig::default(), 1),
        TimeControl::parse("300+2").expect("a time control"),
    )
    .with_kind(BoardKind::Millennium);
    let mut events = Vec::new();
    let start = Observation {
        t_ms: 0,
        kind: ObservationKind::Snapshot(Snapshot {
            board: shakmaty::Board::new(),
            identifies_pieces: true,
        }),
    };
    pipeline.on_observation(&start, &mut events);
    let mut t = 0;
    for obs in played_by_hand(&["e2e4", "d7d5", "e4d5", "d8d5", "b1c3"], &mut t) {
        pipeline.on_observation(&obs, &mut events);
    }
    t += 5_000;
    pipeline.tick(t, &mut events);
    let request = ArbiterRequest {
        who: "Anna".into(),
        board: 1,
        action: ArbiterAction::SetResult {
            result: "1/2-1/2".into(),
            reason: "from the scoresheets".into(),
        },
        key: None,
    };
    pipeline
        .on_arbiter(t, &request, &mut events)
        .expect("the arbiter's result");
    t += 20_000;
    for square in [shakmaty::Square::D5, shakmaty::Square::A2] {
        let lift = Observation {
            t_ms: t,
            kind: ObservationKind::Emptied(square),
        };
        pipeline.on_observation(&lift, &mut events);
    }
    pipeline.tick(t + 5_000, &mut events);
    assert_eq!(pipeline.record().moves.len(), 5, "{events:?}");
    assert_eq!(proposed(&events), Vec::<String>::new());
}

/// 6...Bxd2+ on a board that sends whole frames with a scan of 100 ms (Sentio, Chessnut): the
/// bishop on b4 and the bishop it takes on d2 are seen lifted in one frame. A frame sends what
/// a sweep of the squares found at its end, so the two lifts may have been up to two scans
/// (200 ms) apart, as one hand makes them: no evidence of two hands (7.5.4), and no penalty
/// proposed (simulation seed 1033, a Sentio board, realistic hands).
#[test]
fn two_lifts_in_one_frame_of_a_slow_scan_are_no_evidence_of_two_hands() {
    use touchmove::board::kind::BoardKind;
    use touchmove::board::{Observation, ObservationKind, Snapshot};
    let fen = "rnbqk1nr/p1pp1ppp/1p2p3/8/1bPPP3/8/PP1B1PPP/RN1QKBNR b KQkq - 2 4";
    let game = touchmove::rules::Game::from_fen(fen, false).expect("a FEN");
    for kind in [BoardKind::Sentio, BoardKind::Chessnut] {
        let identifies = kind.identifies_pieces();
        let snapshot = Snapshot {
            board: shakmaty::Position::board(game.position()).clone(),
            identifies_pieces: true,
        };
        let snapshot = if identifies {
            snapshot
        } else {
            snapshot.occupancy_only()
        };
        let bishop = identifies.then_some(shakmaty::Color::Black.bishop());
        let seen = |t_ms, kind| Observation { t_ms, kind };
        let observations = [
            seen(0, ObservationKind::Snapshot(snapshot)),
            seen(5_000, ObservationKind::Emptied(shakmaty::Square::B4)),
            seen(5_000, ObservationKind::Emptied(shakmaty::Square::D2)),
            seen(5_100, ObservationKind::Placed(shakmaty::Square::D2, bishop)),
            seen(
                5_500,
                ObservationKind::ClockPressed {
                    by: shakmaty::Color::Black,
                },
            ),
        ];
        let config = MachineConfig {
            start_fen: Some(fen.to_string()),
            ..MachineConfig::default().on_board(kind)
        };
        let events = Machine::run(config, &observations);
        assert!(
            events
                .iter()
                .any(|e| matches!(e, Event::Move { uci, .. } if uci == "b4d2")),
            "{kind}: {events:?}"
        );
        assert_eq!(proposed(&events), Vec::<String>::new(), "{kind}");
    }
}

/// 1...h6 (not pressed for) 2.Rxb8+, the rook slid up the b-file on a Millennium board (a scan
/// of 41 ms) and the rook on b8 taken off by the same hand as it arrives: the board reports
/// the white rook leaving b6 and the black one leaving b8 41 ms apart, squares two ranks
/// apart that one move (1...Rb6, still open) involves. The hand carrying the rook was moving
/// on from b6, not standing there: no evidence of two hands (7.5.4), and no penalty proposed
/// (simulation seed 5145, realistic hands).
#[test]
fn a_sliding_piece_leaving_a_square_is_no_second_hand() {
    use shakmaty::{Color, Square};
    use touchmove::board::kind::BoardKind;
    use touchmove::board::{Observation, ObservationKind, Snapshot};
    let fen = "1r4k1/5ppp/8/8/8/8/5PPP/1R4K1 b - - 0 1";
    let game = touchmove::rules::Game::from_fen(fen, false).expect("a FEN");
    let seen = |t_ms, kind| Observation { t_ms, kind };
    let rook = Some(Color::White.rook());
    let mut observations = vec![
        seen(
            0,
            ObservationKind::Snapshot(Snapshot {
                board: shakmaty::Position::board(game.position()).clone(),
                identifies_pieces: true,
            }),
        ),
        seen(2_000, ObservationKind::Emptied(Square::H7)),
        seen(
            2_300,
            ObservationKind::Placed(Square::H6, Some(Color::Black.pawn())),
        ),
    ];
    let trail = [
        Square::B1,
        Square::B2,
        Square::B3,
        Square::B4,
        Square::B5,
        Square::B6,
    ];
    let mut t = 6_000;
    for pair in trail.windows(2) {
        observations.push(seen(t, ObservationKind::Emptied(pair[0])));
        observations.push(seen(t, ObservationKind::Placed(pair[1], rook)));
        t += 82;
    }
    observations.push(seen(t, ObservationKind::Emptied(Square::B6)));
    observations.push(seen(t + 41, ObservationKind::Emptied(Square::B8)));
    observations.push(seen(t + 123, ObservationKind::Placed(Square::B8, rook)));
    observations.push(seen(
        t + 600,
        ObservationKind::ClockPressed { by: Color::White },
    ));
    let config = MachineConfig {
        start_fen: Some(fen.to_string()),
        ..MachineConfig::default().on_board(BoardKind::Millennium)
    };
    let events = Machine::run(config, &observations);
    assert!(recorded(&events, "b1b8"), "{events:?}");
    assert_eq!(proposed(&events), Vec::<String>::new());
}

/// 15...Nxd5 on a Millennium board (a scan of 41 ms) played in a time scramble, the knight
/// lifted first: the board reports f6 emptied, d5 emptied one frame later and the knight on d5
/// one frame after that. The two lifts are closer than the two-hands threshold, but the knight
/// itself went from f6 to d5 in 82 ms: a hand covered those squares that fast, so the lifts
/// show nothing of a second hand (7.5.4), and no penalty is proposed, though the arbiter is
/// told (simulation `--table-cell millennium,blitz,none,realistic`, plies 30 and 67).
#[test]
fn a_capture_carried_quicker_than_the_threshold_is_no_evidence_of_two_hands() {
    use shakmaty::Square;
    let events = nxd5_on_a_millennium_board([Square::F6, Square::D5], 41_803);
    assert!(recorded(&events, "f6d5"), "{events:?}");
    assert_eq!(proposed(&events), Vec::<String>::new());
    assert!(
        events.iter().any(|e| matches!(e, Event::Alert(a)
            if a.article == "7.5.4" && a.severity == Severity::Info)),
        "{events:?}"
    );
}

/// The same capture made with two hands: the pawn on d5 taken off and the knight on f6
/// lifted a frame later, the knight put down on d5 a quarter of a second after its lift.
/// Nothing shows a hand covering f6 and d5 in less than the threshold: the 7.5.4 penalty is
/// still proposed.
#[test]
fn lifts_closer_than_the_carry_still_propose_two_hands() {
    use shakmaty::Square;
    let events = nxd5_on_a_millennium_board([Square::D5, Square::F6], 42_012);
    assert!(recorded(&events, "f6d5"), "{events:?}");
    let proposed = proposed(&events);
    assert!(
        proposed.len() == 1 && proposed[0].starts_with("7.5.4"),
        "{proposed:?}"
    );
}

/// 15...Nxd5 in `r1bq1rk1/5pb1/1p1p1np1/1N1Pp2p/1p2P2P/5P2/PP1QN1P1/1K1R1B1R b` on a
/// Millennium board: `lifted` emptied one frame apart from 41 721 ms on, the knight put down
/// on d5 at `landed`.
fn nxd5_on_a_millennium_board(lifted: [shakmaty::Square; 2], landed: u64) -> Vec<Event> {
    use shakmaty::{Color, Square};
    use touchmove::board::kind::BoardKind;
    use touchmove::board::{Observation, ObservationKind, Snapshot};
    let fen = "r1bq1rk1/5pb1/1p1p1np1/1N1Pp2p/1p2P2P/5P2/PP1QN1P1/1K1R1B1R b - - 1 15";
    let game = touchmove::rules::Game::from_fen(fen, false).expect("a FEN");
    let seen = |t_ms, kind| Observation { t_ms, kind };
    let observations = [
        seen(
            0,
            ObservationKind::Snapshot(Snapshot {
                board: shakmaty::Position::board(game.position()).clone(),
                identifies_pieces: true,
            }),
        ),
        seen(41_721, ObservationKind::Emptied(lifted[0])),
        seen(41_762, ObservationKind::Emptied(lifted[1])),
        seen(
            landed,
            ObservationKind::Placed(Square::D5, Some(Color::Black.knight())),
        ),
        seen(45_000, ObservationKind::Emptied(Square::E4)),
        seen(
            45_400,
            ObservationKind::Placed(Square::D5, Some(Color::White.pawn())),
        ),
    ];
    let config = MachineConfig {
        start_fen: Some(fen.to_string()),
        ..MachineConfig::default().on_board(BoardKind::Millennium)
    };
    Machine::run(config, &observations)
}
