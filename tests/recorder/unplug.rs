//! A board plugged in after the recorder started, over a real pseudo-terminal. (A board
//! unplugged mid-game while moves are made on it is judged, on every kind of board, in the
//! simulation: tests/simulation.)

use std::time::Duration;

use crate::recorder_support::{read_board, uci_moves};

use touchmove::bench::{fixture_games, plain_timeline};
use touchmove::sim::virtual_board::timeline::Pace;

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
