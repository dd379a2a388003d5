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
