//! A board that sends whole frames shows only what stood for a frame (a Certabo's only what
//! stood for its vote's frames): at blitz pace several moves come in one picture, and the game
//! is read on from the position it shows, not held.

use std::path::Path;

use touchmove::act::scenario::Scenario;
use touchmove::act::{Event, Machine, MachineConfig};
use touchmove::board::kind::BoardKind;
use touchmove::record::pgn::read_games;

fn fixture(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The first game of the TWIC file, in UCI: what the hands played.
fn played() -> Vec<String> {
    let games = read_games(&fixture("pgn/twic1599_1000k.pgn")).expect("the TWIC file parses");
    let game = games[0].to_game().expect("its first game replays");
    game.moves().iter().map(|m| m.uci.clone()).collect()
}

/// The moves the events leave recorded, revisions applied.
fn recorded(events: &[Event]) -> Vec<String> {
    let mut moves: Vec<String> = Vec::new();
    for event in events {
        match event {
            Event::Move { ply, uci, .. } => {
                moves.truncate(*ply as usize - 1);
                moves.push(uci.clone());
            }
            Event::Revision { ply, .. } => moves.truncate(*ply as usize - 1),
            _ => {}
        }
    }
    moves
}

#[test]
fn a_certabo_game_whose_quick_moves_came_in_one_frame_is_recorded_whole() {
    let scenario = Scenario::parse(&fixture("certabo/blitz-realistic-seed7.observations"))
        .expect("the observations parse");
    let mut machine = Machine::new(MachineConfig::default().on_board(BoardKind::Certabo));
    let mut events = Vec::new();
    for step in &scenario.steps {
        machine.observe(&step.observation, &mut events);
    }
    assert_eq!(recorded(&events), played());
    let alerts: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) => Some(a),
            _ => None,
        })
        .collect();
    // 25.Nd4 Rac5 26.Nc6: the knight's stop is not known (Na7 fits too), and the arbiter is
    // told so where the moves begin.
    assert!(
        alerts
            .iter()
            .any(|a| a.article == "8.5.3" && a.ply == 49 && a.message.contains("Na7")),
        "{alerts:#?}"
    );
    // Nobody made an illegal move: none is judged, no penalty proposed.
    let judged = ["7.5.1", "7.5.2", "7.5.3", "7.5.5"];
    assert!(
        !alerts.iter().any(|a| judged.contains(&a.article.as_str())),
        "{alerts:#?}"
    );
    let last_state = events.iter().rev().find_map(|e| match e {
        Event::BoardState { held, .. } => Some(*held),
        _ => None,
    });
    assert_ne!(last_state, Some(true), "the game is not left held");
}
