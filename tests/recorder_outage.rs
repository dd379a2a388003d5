//! Eight boards unplugged together mid-game while the players go on, over real
//! pseudo-terminals: the real driver, the real recorder. Each virtual board keeps its EEPROM
//! move log, so when it is plugged in again the recorder reads the log and recovers the moves
//! made meanwhile, in their true order: every game is recorded exactly.
//!
//! Scaled down: the boards play 10 times faster than real time, so the 10 s of play missed
//! are 1 s of wall time (about three moves per board).

mod recorder_support;

use std::sync::Arc;
use std::time::Duration;

use recorder_support::{read_board, uci_moves};
use touchmove::board::ObservationKind;
use touchmove::recorder::bench::{event_for_ports, fixture_games, plain_timeline, spawn_boards};
use touchmove::recorder::{Recorder, RunOptions};
use touchmove::server::feed::Feed;
use touchmove::sim::virtual_board::timeline::Pace;

const SPEED: f64 = 10.0;
const UNPLUGGED_GAME_MS: u64 = 10_000;
const BOARDS: usize = 8;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_boards_unplugged_together_are_recorded_exactly_from_their_logs() {
    let games: Vec<_> = fixture_games().into_iter().cycle().take(BOARDS).collect();
    let pace = Pace {
        think_ms: 3000,
        step_ms: 150,
    };
    let scripts: Vec<_> = games.iter().map(|g| plain_timeline(g, pace)).collect();
    let presses: Vec<u64> = scripts[0]
        .iter()
        .filter(|o| matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .map(|o| o.t_ms)
        .collect();
    let unplug_at_ms = presses[presses.len() / 3] + 1200;
    let end_ms = scripts
        .iter()
        .filter_map(|s| s.last().map(|o| o.t_ms))
        .max()
        .unwrap_or(0);

    let dir = tempfile::tempdir().unwrap();
    let boards = spawn_boards(dir.path(), scripts, SPEED, 30 * 60 * 1000, 0).unwrap();
    let ports: Vec<_> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    let config = event_for_ports("Outage test", "1800", &ports);
    let out = dir.path().join("out");
    let feed = Arc::new(Feed::new());
    let recorder = Recorder::start(config, RunOptions::new(&out, feed))
        .await
        .unwrap();
    let wall = |game_ms: u64| Duration::from_secs_f64(game_ms as f64 / 1000.0 / SPEED);
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + wall(unplug_at_ms)).await;
    for board in &boards {
        board.unplug().await.unwrap();
    }
    tokio::time::sleep(wall(UNPLUGGED_GAME_MS)).await;
    for board in &boards {
        board.replug().await.unwrap();
    }
    for board in &boards {
        tokio::time::timeout(wall(end_ms) + Duration::from_secs(60), board.finished())
            .await
            .expect("the board finishes its game");
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    recorder.shutdown().await;

    let mut exact = 0;
    for (k, game) in games.iter().enumerate() {
        let record = read_board(&out, k + 1);
        let recorded = uci_moves(&record);
        eprintln!(
            "board {}: {} of {} moves recorded",
            k + 1,
            recorded.len(),
            game.moves_uci.len()
        );
        assert_eq!(
            recorded,
            game.moves_uci[..recorded.len()].to_vec(),
            "board {}: every recorded move is the move played",
            k + 1
        );
        if recorded == game.moves_uci {
            exact += 1;
        }
    }
    assert_eq!(exact, BOARDS, "every game recorded exactly");
}

/// The recorder itself is killed (SIGKILL) mid-game and started again 30 s of play later on
/// the same journal: the moves made while it was down are recovered from the boards' logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorder_killed_and_restarted_30_s_later_records_every_game_exactly() {
    const KILLED_BOARDS: usize = 4;
    const DOWN_GAME_MS: u64 = 30_000;
    let games: Vec<_> = fixture_games()
        .into_iter()
        .cycle()
        .take(KILLED_BOARDS)
        .collect();
    let pace = Pace {
        think_ms: 3000,
        step_ms: 150,
    };
    let scripts: Vec<_> = games.iter().map(|g| plain_timeline(g, pace)).collect();
    let presses: Vec<u64> = scripts[0]
        .iter()
        .filter(|o| matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .map(|o| o.t_ms)
        .collect();
    let kill_at_ms = presses[presses.len() / 3] + 1200;
    let end_ms = scripts
        .iter()
        .filter_map(|s| s.last().map(|o| o.t_ms))
        .max()
        .unwrap_or(0);
    let dir = tempfile::tempdir().unwrap();
    let boards = spawn_boards(dir.path(), scripts, SPEED, 30 * 60 * 1000, 0).unwrap();
    let mut config = String::from("event = \"Kill test\"\nsite = \"here\"\nround = 1\n");
    for (i, b) in boards.iter().enumerate() {
        config.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"W{}\" }}\nblack = {{ name = \"B{}\" }}\n",
            i + 1,
            b.path().display(),
            i + 1,
            i + 1
        ));
    }
    let config_path = dir.path().join("event.toml");
    std::fs::write(&config_path, config).unwrap();
    let out = dir.path().join("out");
    let start = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_touchmove"))
            .arg("record")
            .arg("--config")
            .arg(&config_path)
            .arg("--out")
            .arg(&out)
            .arg("--no-server")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("the touchmove binary starts")
    };
    let wall = |game_ms: u64| Duration::from_secs_f64(game_ms as f64 / 1000.0 / SPEED);
    let t0 = tokio::time::Instant::now();
    let mut recorder = start();
    tokio::time::sleep_until(t0 + wall(kill_at_ms)).await;
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    tokio::time::sleep(wall(DOWN_GAME_MS)).await;
    let recorder = start();
    for board in &boards {
        tokio::time::timeout(wall(end_ms) + Duration::from_secs(60), board.finished())
            .await
            .expect("the board finishes its game");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    recorder_support::stop(recorder);

    for (k, game) in games.iter().enumerate() {
        let recorded = uci_moves(&read_board(&out, k + 1));
        eprintln!(
            "board {}: {} of {} moves recorded",
            k + 1,
            recorded.len(),
            game.moves_uci.len()
        );
        assert_eq!(
            recorded,
            game.moves_uci,
            "board {}: the game exactly",
            k + 1
        );
    }
}
