//! A board unplugged mid-game while moves are made on it.
//!
//! A virtual board plays a real game (plain lift/place timeline) into an in-process recorder.
//! In the middle of the game its cable is pulled for 10 seconds of game time while the
//! players go on moving; the board remembers its pieces, and when it is plugged in again the
//! recorder sees the new position. Scaled down: the board plays 10 times faster than real
//! time, so the 10 s of game time are 1 s of wall time; at about 3.3 s per move the players
//! make three moves meanwhile.
//!
//! What must hold: every move in the PGN is the move that was played at that ply (never a
//! wrong move), and either every move was reconstructed or an alert tells the arbiter.

use std::time::Duration;

use crate::recorder_support::{read_board, uci_moves};
use touchmove::bench::outage::{clock_presses, record_boards, wall};
use touchmove::bench::{BoardMake, fixture_games, plain_timeline};
use touchmove::sim::virtual_board::timeline::Pace;

const SPEED: f64 = 10.0;
const UNPLUGGED_GAME_MS: u64 = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unplugged_board_never_gives_a_wrong_move() {
    let game = fixture_games().remove(1);
    let pace = Pace {
        think_ms: 3000,
        step_ms: 150,
    };
    let script = plain_timeline(&game, pace);
    let presses = clock_presses(&script);
    let unplug_at_ms = presses[presses.len() / 3] + 200;
    let missed = presses
        .iter()
        .filter(|&&t| t > unplug_at_ms && t < unplug_at_ms + UNPLUGGED_GAME_MS)
        .count();
    assert!(missed >= 2, "moves are made while unplugged ({missed})");
    let end_ms = script.last().map_or(0, |o| o.t_ms);

    let dir = tempfile::tempdir().unwrap();
    let (boards, out, recorder) = record_boards(
        dir.path(),
        vec![script],
        SPEED,
        BoardMake::default(),
        "Unplug test",
    )
    .await
    .unwrap();
    let wall = |game_ms: u64| wall(game_ms, SPEED);
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + wall(unplug_at_ms)).await;
    let before = read_board(&out, 1).moves.len();
    boards[0].unplug().await.unwrap();
    tokio::time::sleep(wall(UNPLUGGED_GAME_MS)).await;
    boards[0].replug().await.unwrap();
    tokio::time::timeout(wall(end_ms) + Duration::from_secs(30), boards[0].finished())
        .await
        .expect("the board finishes its game");
    tokio::time::sleep(Duration::from_secs(2)).await;
    recorder.shutdown().await;

    let record = read_board(&out, 1);
    let recorded = uci_moves(&record);
    assert!(
        before > 0,
        "moves were recorded before the cable was pulled"
    );
    assert_eq!(
        recorded,
        game.moves_uci[..recorded.len()].to_vec(),
        "every recorded move is the move played"
    );
    let alerts: Vec<&String> = record
        .initial_comments
        .iter()
        .chain(record.moves.iter().flat_map(|m| m.comments.iter()))
        .collect();
    assert!(
        recorded.len() == game.moves_uci.len() || !alerts.is_empty(),
        "{} of {} moves recorded and no alert for the arbiter",
        recorded.len(),
        game.moves_uci.len()
    );
    eprintln!(
        "unplugged for {missed} moves: {} of {} moves recorded, {} comments",
        recorded.len(),
        game.moves_uci.len(),
        alerts.len()
    );
}

/// On event day the recorder is often started before every cable is in: a board whose port
/// does not exist yet is waited for, and its game is recorded whole once it is plugged in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_plugged_in_after_the_recorder_started_is_recorded() {
    use std::sync::Arc;
    use touchmove::bench::{event_for_ports, spawn_boards};
    use touchmove::recorder::{Recorder, RunOptions};
    use touchmove::server::feed::Feed;

    let game = fixture_games().remove(0);
    let script = plain_timeline(
        &game,
        Pace {
            think_ms: 400,
            step_ms: 100,
        },
    );
    let dir = tempfile::tempdir().unwrap();
    let boards = spawn_boards(dir.path(), vec![script], 4.0, 30 * 60 * 1000, 0).unwrap();
    let cable = dir.path().join("cable-1");
    let config = event_for_ports("Late cable", "1800", std::slice::from_ref(&cable));
    let out = dir.path().join("out");
    let recorder = Recorder::start(config, RunOptions::new(&out, Arc::new(Feed::new())))
        .await
        .expect("a missing port does not stop the recorder");
    tokio::time::sleep(Duration::from_secs(3)).await;
    std::os::unix::fs::symlink(boards[0].path(), &cable).unwrap();
    tokio::time::timeout(Duration::from_secs(60), boards[0].finished())
        .await
        .expect("the board is opened once plugged in and plays its game");
    tokio::time::sleep(Duration::from_secs(2)).await;
    recorder.shutdown().await;
    assert_eq!(uci_moves(&read_board(&out, 1)), game.moves_uci);
}
