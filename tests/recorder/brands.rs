//! A mixed event recorded by `touchmove record`: two boards of each kind (DGT, Millennium,
//! Chessnut, Certabo with noisy tag reads, Sentio) on pseudo-terminals, named by `kind` in
//! the event file. Each board plays the opening of a different real game; every game must come out
//! exactly as played, with no wrong move. A DGT Pegasus is recorded alone: it needs the
//! developer key the event file names, and an event with one and no key does not start.

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::recorder_support::{
    demo_openings, read_board, record_logged, stop, touchmove, uci_moves,
};
use touchmove::bench::{plain_timeline, spawn_boards};
use touchmove::board::kind::BoardKind;
use touchmove::sim::snapshot_board::{SnapshotBoard, SnapshotBoardConfig};
use touchmove::sim::virtual_board::timeline::Pace;

const PLIES: usize = 16;
const PACE: Pace = Pace {
    think_ms: 700,
    step_ms: 300,
};

/// The two-thread runtime the recorders of these tests run on.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn a_mixed_event_is_recorded_exactly_on_every_kind_of_board() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = runtime();
    let kinds = [
        BoardKind::Millennium,
        BoardKind::Chessnut,
        BoardKind::Certabo,
        BoardKind::Sentio,
    ];
    let mut games = demo_openings(PLIES);
    games.truncate(2 + 2 * kinds.len());
    assert_eq!(games.len(), 2 + 2 * kinds.len(), "one demo game per board");
    let _guard = runtime.enter();
    let dgt = spawn_boards(
        dir.path(),
        games[..2].iter().map(|g| plain_timeline(g, PACE)).collect(),
        1.0,
        30 * 60 * 1000,
        0,
    )
    .unwrap();
    let mut others = Vec::new();
    let mut event = String::from("event = \"Mixed\"\nround = 1\ntime_control = \"1800\"\n");
    for (i, board) in dgt.iter().enumerate() {
        write!(
            event,
            "\n[[board]]\nnumber = {}\nport = \"{}\"\n",
            i + 1,
            board.path().display()
        )
        .unwrap();
    }
    for (i, game) in games.iter().enumerate().skip(2) {
        let kind = kinds[(i - 2) / 2];
        let path = dir.path().join(format!("{kind}-{i}"));
        let mut config = SnapshotBoardConfig::new(kind, &path, plain_timeline(game, PACE));
        config.seed = i as u64;
        others.push(SnapshotBoard::spawn(config).unwrap());
        write!(
            event,
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nkind = \"{kind}\"\n",
            i + 1,
            path.display()
        )
        .unwrap();
    }
    let config = dir.path().join("event.toml");
    std::fs::write(&config, &event).unwrap();
    let out = dir.path().join("out");
    let log = dir.path().join("recorder.log");
    let recorder = record_logged(&config, &out, ["--no-server"], &log);
    let deadline = Instant::now() + Duration::from_secs(120);
    runtime.block_on(async {
        for board in &dgt {
            tokio::time::timeout_at(deadline.into(), board.finished())
                .await
                .expect("every DGT board plays its game");
        }
        for board in &others {
            tokio::time::timeout_at(deadline.into(), board.finished())
                .await
                .expect("every other board plays its game");
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    });
    stop(recorder);
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    for (i, game) in games.iter().enumerate() {
        let record = read_board(&out, i + 1);
        let kind = if i < 2 {
            BoardKind::Dgt
        } else {
            kinds[(i - 2) / 2]
        };
        assert_eq!(
            uci_moves(&record),
            game.moves_uci,
            "board {} ({kind}) recorded exactly; recorder log:\n{log}",
            i + 1
        );
    }
}

#[test]
fn a_pegasus_board_without_a_key_is_refused_naming_the_board_and_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("event.toml");
    std::fs::write(
        &config,
        "event = \"Pegasus\"\n\n[[board]]\nnumber = 3\nport = \"/dev/null\"\nkind = \"pegasus\"\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = touchmove(&[
        "record",
        "--config",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-server",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "refused: {stderr}");
    assert!(
        stderr.contains("board 3 (port /dev/null) is a DGT Pegasus")
            && stderr.contains("pegasus_key = ")
            && stderr.contains("--pegasus-key"),
        "{stderr}"
    );

    // The key on the command line is taken; a bad one is named.
    let run = touchmove(&[
        "record",
        "--config",
        config.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-server",
        "--pegasus-key",
        "01 02 03",
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "refused: {stderr}");
    assert!(
        stderr.contains("--pegasus-key") && stderr.contains("6 hex digits, not 12"),
        "{stderr}"
    );
}
