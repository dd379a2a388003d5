//! Boards named by DGT serial number or "auto" are found by probing ports (virtual boards on
//! pseudo-terminals, with serial numbers 10000, 10001, …): each entry records the board it
//! names, an unknown serial is reported with the ports probed, the others record meanwhile,
//! and a board whose port disappears is looked for again.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::recorder_support::{log, read_board, stop, uci_moves};
use touchmove::bench::{ScriptGame, fixture_games, plain_timeline, spawn_boards};
use touchmove::sim::virtual_board::VirtualBoard;
use touchmove::sim::virtual_board::timeline::Pace;

/// The first `plies` moves of fixture game `i`, for virtual board `i`.
fn short_games(count: usize, plies: usize) -> Vec<ScriptGame> {
    let games = fixture_games();
    (0..count)
        .map(|i| {
            let mut g = games[i % games.len()].clone();
            g.moves_uci.truncate(plies);
            g
        })
        .collect()
}

fn boards(dir: &Path, games: &[ScriptGame]) -> Vec<VirtualBoard> {
    let pace = Pace {
        think_ms: 250,
        step_ms: 60,
    };
    let scripts = games.iter().map(|g| plain_timeline(g, pace)).collect();
    spawn_boards(dir, scripts, 1.0, 600_000, 0).unwrap()
}

fn record(dir: &Path, args: &[&str]) -> Child {
    let log = std::fs::File::create(dir.join("recorder.log")).unwrap();
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("record")
        .args(args)
        .arg("--probe")
        .arg(dir.join("board-*"))
        .arg("--out")
        .arg(dir.join("out"))
        .arg("--no-server")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

/// Waits (at most 10 s) until the recorder's log contains `text` `times` times.
async fn wait_for_log(dir: &Path, text: &str, times: usize) -> String {
    let until = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let log = log(dir);
        if log.matches(text).count() >= times || tokio::time::Instant::now() > until {
            return log;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn finish(boards: &[&VirtualBoard]) {
    for b in boards {
        tokio::time::timeout(Duration::from_secs(30), b.finished())
            .await
            .expect("the boards finish their games");
    }
    // The last moves reach the files.
    tokio::time::sleep(Duration::from_millis(800)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn boards_are_bound_by_serial_and_auto_and_an_unknown_serial_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let games = short_games(3, 6);
    let boards = boards(dir.path(), &games);
    let config = dir.path().join("event.toml");
    std::fs::write(
        &config,
        "event = \"Serials\"\n\n[[board]]\nnumber = 1\nserial = \"10002\"\n\n[[board]]\nnumber = 2\nport = \"auto\"\n\n[[board]]\nnumber = 3\nserial = \"99999\"\n",
    )
    .unwrap();
    let child = record(dir.path(), &["--config", config.to_str().unwrap()]);
    // The second board (serial 10001) is nobody's: it is never started.
    finish(&[&boards[0], &boards[2]]).await;
    let out = dir.path().join("out");
    // Board 1 is the board with serial 10002 (the third); board 2, "auto", takes the lowest
    // free serial (10000, the first); 10001 is nobody's.
    assert_eq!(uci_moves(&read_board(&out, 1)), games[2].moves_uci);
    assert_eq!(uci_moves(&read_board(&out, 2)), games[0].moves_uci);
    let text = log(dir.path());
    // Said again whenever what the ports answer changes: the last one counts.
    let missing = text
        .lines()
        .rev()
        .find(|l| l.contains("board 3 ("))
        .unwrap_or_else(|| panic!("no message about board 3:\n{text}"));
    let port = |k: usize| dir.path().join(format!("board-{k}")).display().to_string();
    for needle in [
        "no board with serial number 99999",
        &format!("{}:13, serial = \"99999\"", config.display()),
        &format!("{} (DGT board serial 10001", port(2)),
        &format!("{} (in use by board", port(1)),
        "the other boards record",
    ] {
        assert!(missing.contains(needle), "{needle:?} not in: {missing}");
    }

    // The cable of board 1's board is pulled and put back: it is found again.
    boards[2].unplug().await.unwrap();
    let text = wait_for_log(dir.path(), "board serial 10002 is looked for", 1).await;
    assert!(text.contains("board 1: port"), "{text}");
    boards[2].replug().await.unwrap();
    let found = format!("board 1: found DGT board serial 10002 on {}", port(3));
    let text = wait_for_log(dir.path(), &found, 2).await;
    assert_eq!(text.matches(&found).count(), 2, "{text}");
    stop(child);
    assert_eq!(uci_moves(&read_board(&out, 1)), games[2].moves_uci);
}

#[test]
fn two_entries_for_one_serial_are_a_config_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("event.toml");
    std::fs::write(
        &config,
        "[[board]]\nnumber = 1\nserial = \"10001\"\n[[board]]\nnumber = 2\nserial = \"10001\"\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["record", "--no-server", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("event.toml:6: serial") && e.contains("board 2 (line 6) and board 1 (line 3)"),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn port_auto_without_a_config_records_every_board_found() {
    let dir = tempfile::tempdir().unwrap();
    let games = short_games(2, 6);
    let boards = boards(dir.path(), &games);
    let child = record(dir.path(), &["--port", "auto"]);
    finish(&[&boards[0], &boards[1]]).await;
    let out = dir.path().join("out");
    assert_eq!(uci_moves(&read_board(&out, 1)), games[0].moves_uci);
    assert_eq!(uci_moves(&read_board(&out, 2)), games[1].moves_uci);
    let ports: Vec<PathBuf> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    boards[1].unplug().await.unwrap();
    let text = wait_for_log(dir.path(), "board serial 10001 is looked for", 1).await;
    stop(child);
    let lost = text
        .lines()
        .find(|l| l.contains("board 2: port"))
        .unwrap_or_else(|| panic!("no message about the lost port:\n{text}"));
    assert!(
        lost.contains(&ports[1].display().to_string())
            && lost.contains("the other boards keep recording"),
        "{lost}"
    );
    assert!(
        text.contains("recording board 1 on auto-detected port, board 2 on auto-detected port"),
        "{text}"
    );
}
