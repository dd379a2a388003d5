//! The independent hand-and-sensor model (`touchmove::sim::independent_hands`): it is
//! deterministic, physically consistent, and careful players on a USB board are recorded
//! exactly by the act-of-moving machine.

use shakmaty::uci::UciMove;
use shakmaty::{Board, Chess, Position};
use touchmove::board::ObservationKind;
use touchmove::sim::hands::pgn_games::{PgnGame, read_games};
use touchmove::sim::independent_hands::crosscheck::{self, Class};
use touchmove::sim::independent_hands::{
    Roughness, SensorKind, game_seed, replay_board, simulate, start_position,
};

const TWIC: &[u8] = include_bytes!("../../fixtures/pgn/twic1599_1000k.pgn");

fn twic() -> Vec<PgnGame> {
    read_games(TWIC).expect("the TWIC fixture reads")
}

/// The board after all the moves of a game.
fn final_board(g: &PgnGame) -> Board {
    let mut pos: Chess = start_position(g.fen.as_deref(), g.chess960).expect("start position");
    for m in &g.moves_uci {
        let mv = m
            .parse::<UciMove>()
            .expect("uci")
            .to_move(&pos)
            .expect("legal");
        pos.play_unchecked(mv);
    }
    pos.board().clone()
}

#[test]
fn the_same_seed_gives_the_same_game_and_another_seed_another() {
    let games = twic();
    for roughness in [Roughness::Calm, Roughness::Rough] {
        for g in games.iter().take(5) {
            let a = simulate(g.fen.as_deref(), g.chess960, &g.moves_uci, 7, roughness).unwrap();
            let b = simulate(g.fen.as_deref(), g.chess960, &g.moves_uci, 7, roughness).unwrap();
            assert_eq!(a.observations, b.observations, "game {}", g.index);
            assert_eq!(a.physical, b.physical);
            assert_eq!(a.irregularities, b.irregularities);
            assert_eq!(a.deeds, b.deeds);
            assert_eq!(a.sensor, b.sensor);
            let c = simulate(g.fen.as_deref(), g.chess960, &g.moves_uci, 8, roughness).unwrap();
            assert_ne!(a.observations, c.observations, "game {}", g.index);
        }
    }
}

#[test]
fn the_board_ends_on_the_final_position_of_the_game() {
    let games = twic();
    for roughness in [Roughness::Calm, Roughness::Rough] {
        for g in games.iter().take(40) {
            let sim = simulate(
                g.fen.as_deref(),
                g.chess960,
                &g.moves_uci,
                game_seed(3, g.index),
                roughness,
            )
            .unwrap_or_else(|e| panic!("game {}: {e}", g.index));
            let end = final_board(g);
            assert_eq!(
                replay_board(&sim.physical).as_ref(),
                Some(&end),
                "game {} {roughness:?}: the physical changes",
                g.index
            );
            assert!(matches!(
                sim.observations.first().map(|o| &o.kind),
                Some(ObservationKind::Snapshot(_))
            ));
            assert!(
                sim.observations.windows(2).all(|w| w[0].t_ms <= w[1].t_ms),
                "game {}: observations out of time order",
                g.index
            );
            if sim.dropped_updates == 0 {
                assert_eq!(
                    replay_board(&sim.observations).as_ref(),
                    Some(&end),
                    "game {} {roughness:?}: the reported changes",
                    g.index
                );
            }
            assert_eq!(sim.deeds.len(), g.moves_uci.len());
            assert_eq!(sim.moves_uci, g.moves_uci);
        }
    }
}

#[test]
fn a_scanning_board_sometimes_reports_a_placement_before_its_lift() {
    // Physically each lift precedes its placement; a scanning board may report them the
    // other way round (as the real capture `johan` shows: `c6=p c7-`).
    let games = twic();
    let mut reordered = 0;
    for g in games.iter().take(10) {
        let sim = simulate(
            g.fen.as_deref(),
            g.chess960,
            &g.moves_uci,
            1,
            Roughness::Rough,
        )
        .expect("simulates");
        assert!(matches!(sim.sensor, SensorKind::Scanning { .. }));
        for w in sim.observations.windows(2) {
            if let (ObservationKind::Placed(to, Some(p)), ObservationKind::Emptied(from)) =
                (&w[0].kind, &w[1].kind)
                && sim
                    .physical
                    .iter()
                    .any(|o| o.kind == ObservationKind::Emptied(*from))
                && to != from
                && p.role != shakmaty::Role::King
            {
                reordered += 1;
            }
        }
    }
    assert!(reordered > 0, "no placement reported before a lift");
}

#[test]
fn careful_players_on_a_usb_board_are_recorded_exactly() {
    let games = twic();
    let mut wrong = Vec::new();
    for g in games.iter().take(30) {
        let judged = crosscheck::play_one(g, 1, Roughness::Calm, false)
            .unwrap_or_else(|e| panic!("game {}: {e}", g.index));
        match judged.class {
            Class::Exact => {}
            // The machine ended the game by a rule before the moves ran out: only if the
            // rules agree that the game is over there.
            Class::EndedByRule => {
                let mut pos: Chess = start_position(g.fen.as_deref(), g.chess960).unwrap();
                for m in &judged.recorded {
                    let mv = m.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
                    pos.play_unchecked(mv);
                }
                if !(pos.is_checkmate() || pos.is_stalemate() || pos.is_insufficient_material()) {
                    wrong.push(format!(
                        "game {}: ended at ply {} ({:?})",
                        g.index,
                        judged.recorded.len(),
                        judged.result
                    ));
                }
            }
            _ => wrong.push(format!(
                "game {}: {:?}, first divergence at ply {:?}\n{}",
                g.index,
                judged.class,
                judged.first_divergence.map(|d| d + 1),
                crosscheck::trace(&judged).join("\n")
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n\n"));
}

#[test]
fn lost_updates_on_a_scanning_board_are_recovered_by_the_drivers_dumps() {
    let games = twic();
    let mut with_drops = 0;
    let mut lost_without_dumps = 0;
    let mut wrong = Vec::new();
    for g in games.iter().take(200) {
        let raw = crosscheck::play_one(g, 1, Roughness::Rough, false)
            .unwrap_or_else(|e| panic!("game {}: {e}", g.index));
        if raw.game.dropped_updates == 0 {
            continue;
        }
        with_drops += 1;
        if !matches!(raw.class, Class::Exact | Class::EndedByRule) {
            lost_without_dumps += 1;
        }
        let verified = crosscheck::play_one(g, 1, Roughness::Rough, true)
            .unwrap_or_else(|e| panic!("game {}: {e}", g.index));
        if !matches!(verified.class, Class::Exact | Class::EndedByRule) {
            wrong.push(format!(
                "game {}: {:?}, first divergence at ply {:?}",
                g.index,
                verified.class,
                verified.first_divergence.map(|d| d + 1)
            ));
        }
    }
    assert!(with_drops >= 5, "only {with_drops} games lost an update");
    assert!(
        lost_without_dumps > 0,
        "no game suffered from its lost updates: the test shows nothing"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
