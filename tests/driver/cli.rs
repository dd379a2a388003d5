//! `touchmove sim` as a user runs it: it prints the port path, the real driver connects and
//! receives the game; the port path disappears when the simulator exits.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::*;
use tokio::time::Instant;
use touchmove::driver::dgt::{LinkEvent, spawn_link};

#[tokio::test]
async fn sim_prints_its_port_and_plays_the_game_to_the_driver() {
    plays_through_the_driver(&[]).await;
}

#[tokio::test]
async fn sim_plays_a_hand_model_timeline_unchanged() {
    plays_through_the_driver(&["--hands", "realistic", "--seed", "7"]).await;
}

async fn plays_through_the_driver(extra: &[&str]) {
    let (_dir, dir) = temp_dir();
    let port = dir.join("board1");
    let mut child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["sim", "--pgn", GAME, "--speed", "400", "--exit-when-done"])
        .args(extra)
        .arg("--port")
        .arg(&port)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("touchmove sim starts");
    let stdout = child.stdout.take().expect("stdout");
    let line = tokio::task::spawn_blocking(move || {
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).map(|_| line)
    })
    .await
    .expect("join")
    .expect("first line");
    assert_eq!(line.trim(), port.to_str().expect("utf-8"));

    let (link, mut events) = spawn_link(fast_link(&port), Instant::now());
    expect_connected(&mut events, Duration::from_secs(10)).await;
    let mut decoded = Decoded::default();
    let deadline = Instant::now() + Duration::from_secs(20);
    // The simulator exits after the game: the port closes and the driver notices.
    loop {
        match next_event(&mut events, deadline - Instant::now()).await {
            LinkEvent::Bytes { t_ms, data } => decoded.push(t_ms, &data),
            LinkEvent::Disconnected { .. } => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    link.shutdown();
    let status = child.wait().expect("exit status");
    assert!(status.success());
    // 98 plies: at least two field updates each.
    assert!(
        decoded.field_updates().len() >= 196,
        "{}",
        decoded.field_updates().len()
    );
    assert_eq!(decoded.skipped(), 0);
    assert!(!port.exists(), "the port path is removed on exit");
}
