//! The hand simulator on its own: its streams are physically consistent, end in the game's
//! final position, are deterministic, and contain the behaviours it claims to model.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, Chess, Color, Position, Role, Square};
use touchmove::board::{Observation, ObservationKind};
use touchmove::rules::{Budget, Game};
use touchmove::sim::hands::pgn_games::{PgnGame, read_games};
use touchmove::sim::hands::{
    HandModel, IrregularityKind, Noise, OrderWeights, SimulatedGame, apply_physical,
    replay_physical, signal_squares, simulate_game, simulate_with_model,
};

fn fixture_games(limit: usize) -> Vec<PgnGame> {
    let mut games = Vec::new();
    for file in ["twic1599_1000k.pgn", "lichess_db_1000k.pgn"] {
        let path = format!("{}/fixtures/pgn/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read(&path).expect("fixture PGN");
        games.extend(
            read_games(&text)
                .expect("readable PGN")
                .into_iter()
                .take(limit),
        );
    }
    games
}

fn final_position(moves_uci: &[String]) -> Chess {
    let mut g = Game::standard();
    for m in moves_uci {
        g.play_uci(m).expect("legal");
    }
    g.position().clone()
}

/// The moves of the score up to its automatic end (the game is over there, 5.2.2).
fn played_part(game: &PgnGame) -> Vec<String> {
    let mut g = Game::standard();
    let mut moves = Vec::new();
    for m in &game.moves_uci {
        g.play_uci(m).expect("legal");
        moves.push(m.clone());
        if g.automatic_end(&Budget::deterministic()).is_some() {
            break;
        }
    }
    moves
}

/// Every report describes a real change of the reported board, times never go back, and
/// the stream starts with a snapshot at time 0.
fn assert_consistent(sim: &SimulatedGame) {
    assert!(matches!(
        sim.observations.first().map(|o| &o.kind),
        Some(ObservationKind::Snapshot(_))
    ));
    assert_eq!(sim.observations[0].t_ms, 0);
    let dropped = sim
        .injected
        .iter()
        .any(|x| x.kind == IrregularityKind::DroppedUpdate);
    let mut board = Board::empty();
    let mut last = 0;
    for (i, o) in sim.observations.iter().enumerate() {
        assert!(o.t_ms >= last, "time goes back at {i}");
        last = o.t_ms;
        match o.kind {
            _ if dropped => {}
            ObservationKind::Emptied(sq) => {
                assert!(
                    board.piece_at(sq).is_some(),
                    "{i}: {sq} reported emptied twice"
                )
            }
            ObservationKind::Placed(sq, p) => {
                assert!(p.is_some(), "a DGT board identifies pieces");
                assert_ne!(board.piece_at(sq), p, "{i}: {sq} reported unchanged");
            }
            _ => {}
        }
        apply_physical(&mut board, o);
    }
}

/// The board `stream` leaves is the game's final position (with the result signal's kings).
fn assert_ends_in_final_position(stream: &[Observation], sim: &SimulatedGame, end: &Chess) {
    let board = replay_physical(stream);
    let expected = end.board();
    match &sim.result_signal {
        None => assert_eq!(&board, expected, "final board differs"),
        Some(result) => {
            let [a, b] = signal_squares(result).expect("valid signal");
            let kings: Vec<Square> = [Color::White, Color::Black]
                .iter()
                .filter_map(|c| board.king_of(*c))
                .collect();
            assert_eq!(kings.len(), 2);
            let on = |set: &Vec<Square>, k: Square| set.contains(&k);
            assert!(
                (on(&a, kings[0]) && on(&b, kings[1])) || (on(&b, kings[0]) && on(&a, kings[1])),
                "kings {kings:?} do not signal {result}"
            );
            // Every other piece is where the game left it (pieces removed from the centre
            // squares to make room for the kings excepted).
            for sq in Square::ALL {
                let centre = [Square::D4, Square::D5, Square::E4, Square::E5].contains(&sq);
                let p = board.piece_at(sq).filter(|p| p.role != Role::King);
                let q = expected.piece_at(sq).filter(|p| p.role != Role::King);
                if !centre || p.is_some() {
                    assert_eq!(p, q, "{sq} differs at the end");
                }
            }
        }
    }
}

/// The hands' own actions: from the start snapshot, each lift empties an occupied square and
/// each put fills an empty one, in time order, whatever a DGT board's sensors lost.
fn assert_physical_actions(physical: &[Observation]) {
    assert!(matches!(
        physical.first().map(|o| &o.kind),
        Some(ObservationKind::Snapshot(_))
    ));
    let mut board = Board::empty();
    let mut last = 0;
    for (i, o) in physical.iter().enumerate() {
        assert!(o.t_ms >= last, "time goes back at {i}");
        last = o.t_ms;
        match o.kind {
            ObservationKind::Emptied(sq) => {
                assert!(board.piece_at(sq).is_some(), "{i}: {sq} lifted while empty")
            }
            ObservationKind::Placed(sq, p) => {
                assert!(p.is_some(), "{i}: a put names its piece");
                assert!(board.piece_at(sq).is_none(), "{i}: {sq} put on a piece");
            }
            _ => {}
        }
        apply_physical(&mut board, o);
    }
}

#[test]
fn streams_are_consistent_and_end_in_the_final_position() {
    let games = fixture_games(40);
    for noise in [Noise::Clean, Noise::Realistic, Noise::Hostile] {
        for (i, g) in games.iter().enumerate() {
            let sim = simulate_game(
                None,
                false,
                &g.moves_uci,
                g.result.as_deref(),
                noise,
                i as u64,
            );
            assert!(sim.error.is_none(), "{:?}", sim.error);
            assert_eq!(sim.moves_uci, played_part(g));
            assert_consistent(&sim);
            let dropped = sim
                .injected
                .iter()
                .any(|x| x.kind == IrregularityKind::DroppedUpdate);
            let end = final_position(&sim.moves_uci);
            if !dropped {
                assert_ends_in_final_position(&sim.observations, &sim, &end);
            }
            assert_physical_actions(&sim.physical);
            assert_ends_in_final_position(&sim.physical, &sim, &end);
        }
    }
}

#[test]
fn same_seed_same_stream() {
    let g = &fixture_games(3)[2];
    let run = |seed| {
        simulate_game(
            None,
            false,
            &g.moves_uci,
            g.result.as_deref(),
            Noise::Hostile,
            seed,
        )
        .observations
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

/// Counts, over many realistic games, the scan effects a DGT board produces.
#[test]
fn realistic_streams_show_scan_effects_and_slides() {
    let games = fixture_games(60);
    let (mut place_before_lift, mut direct_capture, mut intermediate) = (0, 0, 0);
    for (i, g) in games.iter().enumerate() {
        let sim = simulate_game(None, false, &g.moves_uci, None, Noise::Realistic, i as u64);
        let mut board = Board::empty();
        let obs: &[Observation] = &sim.observations;
        for (k, o) in obs.iter().enumerate() {
            if let ObservationKind::Placed(sq, Some(p)) = o.kind {
                match board.piece_at(sq) {
                    Some(q) if q != p => direct_capture += 1,
                    None => {
                        // The same piece still stands on another square and is reported
                        // emptied next: the placement came before its lift.
                        if let Some(ObservationKind::Emptied(from)) =
                            obs.get(k + 1).map(|o| &o.kind)
                            && board.piece_at(*from) == Some(p)
                        {
                            place_before_lift += 1;
                        }
                    }
                    _ => {}
                }
                if p.role != Role::Knight
                    && let Some(ObservationKind::Emptied(next)) = obs.get(k + 1).map(|o| &o.kind)
                    && *next == sq
                {
                    intermediate += 1;
                }
            }
            apply_physical(&mut board, o);
        }
    }
    assert!(
        place_before_lift > 10,
        "place before lift: {place_before_lift}"
    );
    assert!(
        direct_capture > 10,
        "victim replaced directly: {direct_capture}"
    );
    assert!(
        intermediate > 10,
        "placements on intermediate squares: {intermediate}"
    );
}

fn forced(setup: impl Fn(&mut HandModel)) -> HandModel {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut m = HandModel::clean(&mut rng);
    setup(&mut m);
    m
}

fn field_reports(sim: &SimulatedGame) -> Vec<String> {
    sim.observations
        .iter()
        .filter_map(|o| match o.kind {
            ObservationKind::Emptied(sq) => Some(format!("{sq}-")),
            ObservationKind::Placed(sq, Some(p)) => Some(format!("{sq}={}", p.char())),
            _ => None,
        })
        .collect()
}

fn uci(moves: &[&str]) -> Vec<String> {
    moves.iter().map(|m| m.to_string()).collect()
}

#[test]
fn castling_orders_and_result_signal() {
    let moves = uci(&["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6", "e1g1"]);
    let mut rng = ChaCha8Rng::seed_from_u64(5);
    let rook_first = forced(|m| {
        m.castling_order = OrderWeights {
            weights: vec![0.0, 1.0, 0.0],
        }
    });
    let sim = simulate_with_model(None, false, &moves, Some("1-0"), &rook_first, &mut rng);
    let r = field_reports(&sim);
    let at = r.iter().position(|s| s == "h1-").expect("rook lifted");
    assert_eq!(&r[at..at + 4], ["h1-", "f1=R", "e1-", "g1=K"], "{r:?}");
    assert!(
        sim.injected
            .iter()
            .any(|i| i.kind == IrregularityKind::RookFirstCastling)
    );
    // The game ends with both kings on the light centre squares.
    let tail: Vec<&String> = r.iter().rev().take(4).collect();
    assert!(tail.iter().any(|s| *s == "d5=k" || *s == "e4=k"), "{r:?}");
    assert!(tail.iter().any(|s| *s == "d5=K" || *s == "e4=K"), "{r:?}");

    let king_off = forced(|m| {
        m.castling_order = OrderWeights {
            weights: vec![0.0, 0.0, 1.0],
        }
    });
    let sim = simulate_with_model(None, false, &moves, None, &king_off, &mut rng);
    let r = field_reports(&sim);
    assert_eq!(&r[r.len() - 4..], ["e1-", "h1-", "f1=R", "g1=K"]);
}

#[test]
fn chess960_castling_where_the_king_lands_on_the_rook_square() {
    // White: king f1, rook g1 (h-side). O-O puts the king on g1 and the rook on f1.
    let fen = "nrbbqkrn/pppppppp/8/8/8/8/PPPPPPPP/NRBBQKRN w GBgb - 0 1";
    let mut g = Game::from_fen(fen, true).unwrap();
    let moves = uci(&["g2g3", "g7g6", "f1g1"]);
    for m in &moves {
        g.play_uci(m).unwrap();
    }
    assert_eq!(g.moves()[2].san, "O-O");
    for seed in 0..20 {
        let sim = simulate_game(Some(fen), true, &moves, None, Noise::Realistic, seed);
        assert!(sim.error.is_none(), "{:?}", sim.error);
        assert_consistent(&sim);
        assert_eq!(&replay_physical(&sim.observations), g.position().board());
    }
}

#[test]
fn promotion_orders_reach_the_promoted_position() {
    let fen = "8/4P1k1/8/8/8/8/6K1/8 w - - 0 1";
    let moves = uci(&["e7e8n"]);
    let mut g = Game::from_fen(fen, false).unwrap();
    g.play_uci("e7e8n").unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for order in 0..4 {
        let mut weights = vec![0.0; 4];
        weights[order] = 1.0;
        let model = forced(|m| {
            m.promotion_order = OrderWeights {
                weights: weights.clone(),
            }
        });
        let mut rng = ChaCha8Rng::seed_from_u64(order as u64);
        let sim = simulate_with_model(Some(fen), false, &moves, None, &model, &mut rng);
        assert_eq!(&replay_physical(&sim.observations), g.position().board());
        seen.insert(field_reports(&sim));
    }
    // Pawn lifted then knight placed; pawn onto e8 then exchanged; knight placed first.
    assert!(seen.contains(&vec!["e7-".to_string(), "e8=N".to_string()]));
    assert!(seen.contains(&vec![
        "e7-".to_string(),
        "e8=P".to_string(),
        "e8-".to_string(),
        "e8=N".to_string()
    ]));
    assert!(seen.contains(&vec!["e8=N".to_string(), "e7-".to_string()]));
}

#[test]
fn hostile_noise_injects_every_kind_of_irregularity() {
    let games = fixture_games(120);
    let mut kinds = std::collections::BTreeSet::new();
    for (i, g) in games.iter().enumerate() {
        let sim = simulate_game(None, false, &g.moves_uci, None, Noise::Hostile, i as u64);
        assert_consistent(&sim);
        kinds.extend(sim.injected.iter().map(|x| x.kind));
    }
    for k in [
        IrregularityKind::RookFirstCastling,
        IrregularityKind::Adjustment,
        IrregularityKind::Hesitation,
        IrregularityKind::OpponentTouch,
        IrregularityKind::OffTurnTouch,
        IrregularityKind::KnockedPiece,
        IrregularityKind::DroppedUpdate,
        IrregularityKind::ForgottenPress,
        IrregularityKind::PressWithoutMove,
        IrregularityKind::IllegalMoveUndone,
        IrregularityKind::IllegalMoveCompleted,
        IrregularityKind::TwoHands,
    ] {
        assert!(kinds.contains(&k), "{k:?} never injected");
    }
}

#[test]
fn clock_presses_alternate_like_a_real_clock() {
    for (i, g) in fixture_games(30).iter().enumerate() {
        let sim = simulate_game(None, false, &g.moves_uci, None, Noise::Hostile, i as u64);
        let mut running = Color::White;
        for o in &sim.observations {
            if let ObservationKind::ClockPressed { by } = o.kind {
                assert_eq!(by, running, "a lever that is down cannot be pressed");
                running = !by;
            }
        }
    }
}
