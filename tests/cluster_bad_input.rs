//! Bad input to an event on several PCs: wrong credentials, and two recorders with one id.
//! Each gets a clear message, and the recorder concerned goes on recording locally.

mod cluster_support;
#[path = "recorder_support/mod.rs"]
mod recorder_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cluster_support::{NatsServer, event_file, touchmove};
use recorder_support::{realistic_games, scripts, stop};
use touchmove::recorder::bench::spawn_boards;

/// Waits (up to 20 s) until `log` contains `text`; returns the log.
fn wait_for(log: &Path, text: &str) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let content = std::fs::read_to_string(log).unwrap_or_default();
        if content.contains(text) || Instant::now() >= until {
            return content;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Adds a `[cluster]` table to an event file.
fn with_cluster(config: &Path, table: &str) {
    let mut text = std::fs::read_to_string(config).unwrap();
    text.push_str(&format!("\n[cluster]\n{table}\n"));
    std::fs::write(config, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_credentials_and_a_second_recorder_with_the_same_id_are_refused_clearly() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::reserve(dir.path(), &["--user", "tm", "--pass", "right-one"]);
    nats.restart();
    let url = nats.url();
    let scripts = scripts(&realistic_games(3, 7), 600);
    let boards = spawn_boards(dir.path(), scripts, 4.0, 90 * 60 * 1000, 30_000).unwrap();
    let ports: Vec<PathBuf> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    let start = |name: &str, board: usize, password: &str, member: &str| {
        let config = event_file(
            dir.path(),
            &format!("{name}.toml"),
            board + 1,
            &ports[board..=board],
        );
        with_cluster(
            &config,
            &format!(
                "urls = [\"{url}\"]\nevent = \"bad-input\"\nrecorder = \"{member}\"\nuser = \"tm\"\npassword = \"{password}\""
            ),
        );
        let log = dir.path().join(format!("{name}.log"));
        let child = touchmove(
            &["record", "--no-server", "--config"],
            &[&config, Path::new("--out"), &dir.path().join(name)],
            &log,
        );
        (child, log)
    };

    let (wrong, wrong_log) = start("wrong", 0, "wrong-one", "pc-w");
    let text = wait_for(&wrong_log, "refused the credentials");
    assert!(
        text.contains("refused the credentials (user \"tm\" with a password)")
            && text.contains("[cluster]")
            && !text.contains("wrong-one"),
        "a clear message that names the kind of credentials, never the secret:\n{text}"
    );

    let (first, first_log) = start("first", 1, "right-one", "pc");
    let text = wait_for(&first_log, "forwarding the journal");
    assert!(text.contains("forwarding the journal"), "{text}");
    let (second, second_log) = start("second", 2, "right-one", "pc");
    let text = wait_for(&second_log, "is already used");
    assert!(
        text.contains("recorder id \"pc\" is already used in event \"bad-input\"")
            && text.contains("Give each PC its own id"),
        "{text}"
    );
    // Both refused recorders record all the same.
    let text = wait_for(&second_log, "connected on");
    for (name, log) in [("wrong", &wrong_log), ("second", &second_log)] {
        let until = Instant::now() + Duration::from_secs(20);
        let board = if name == "wrong" { 1 } else { 3 };
        let file = dir
            .path()
            .join(name)
            .join(format!("round-1/game-{board}.pgn"));
        while recorder_support_plies(&file) < 2 && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(200));
        }
        assert!(
            recorder_support_plies(&file) >= 2,
            "{name} records locally:\n{}\n{text}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
    }
    for child in [wrong, first, second] {
        stop(child);
    }
    drop(boards);
}

fn recorder_support_plies(file: &Path) -> usize {
    std::fs::read_to_string(file)
        .map(|t| cluster_support::plies(&t))
        .unwrap_or(0)
}
