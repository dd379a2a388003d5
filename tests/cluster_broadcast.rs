//! An event on several PCs, end to end: a private nats-server, two `touchmove record
//! --cluster` processes with three virtual boards each, one `touchmove serve` node running
//! throughout and one started after the round. Every `game-K.pgn` of both serve nodes must be
//! byte-identical to the recording PC's, and the first node's `games.pgn` (file and URL) the
//! combination of all six.

mod cluster_support;
#[path = "recorder_support/mod.rs"]
mod recorder_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use cluster_support::{
    NatsServer, event_file, game_file, plies, record_args, serve_node, short_scripts, touchmove,
    wait_identical,
};
use recorder_support::stop;
use touchmove::recorder::bench::spawn_boards;

const BOARDS_PER_RECORDER: usize = 3;
const SPEED: f64 = 4.0;
const MAX_PAUSE_MS: u64 = 600;
/// The first 40 s of each game (10 s of wall time at 4×): enough moves, a short test.
const SCRIPT_MS: u64 = 40_000;
const SEED: u64 = 20_261_125;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_node_pgn_is_byte_identical_to_the_recorders() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let url = nats.url();
    let boards = spawn_boards(
        dir.path(),
        short_scripts(2 * BOARDS_PER_RECORDER, SEED, MAX_PAUSE_MS, SCRIPT_MS),
        SPEED,
        90 * 60 * 1000,
        30_000,
    )
    .unwrap();
    let ports: Vec<PathBuf> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    let serve_out = dir.path().join("serve");
    let serve_log = dir.path().join("serve.log");
    let serve = serve_node(
        &url,
        "cluster-test",
        "node1",
        Some("127.0.0.1:0"),
        &serve_out,
        &serve_log,
    );
    let mut recorders = Vec::new();
    let mut outs: Vec<(PathBuf, Vec<usize>)> = Vec::new();
    for (r, name) in ["pc-a", "pc-b"].iter().enumerate() {
        let first = r * BOARDS_PER_RECORDER + 1;
        let config = event_file(
            dir.path(),
            &format!("{name}.toml"),
            first,
            &ports[r * BOARDS_PER_RECORDER..(r + 1) * BOARDS_PER_RECORDER],
        );
        let out = dir.path().join(name);
        let log = dir.path().join(format!("{name}.log"));
        let config_text = config.to_string_lossy().into_owned();
        let out_text = out.to_string_lossy().into_owned();
        recorders.push(touchmove(
            &record_args(&config_text, &out_text, &url, "cluster-test", name),
            &[],
            &log,
        ));
        outs.push((out, (first..first + BOARDS_PER_RECORDER).collect()));
    }
    for b in &boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .expect("the boards finish their scripts");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for r in recorders {
        stop(r);
    }
    let pairs: Vec<(&Path, Vec<usize>)> =
        outs.iter().map(|(o, b)| (o.as_path(), b.clone())).collect();
    // A second node started after the round: it catches up from the stream alone.
    let late_out = dir.path().join("serve-late");
    let late = serve_node(
        &url,
        "cluster-test",
        "node2",
        None,
        &late_out,
        &dir.path().join("serve-late.log"),
    );
    let differing = wait_identical(&serve_out, &pairs, Duration::from_secs(20));
    let logs = ["pc-a.log", "pc-b.log", "serve.log"]
        .iter()
        .map(|l| {
            format!(
                "--- {l}\n{}",
                std::fs::read_to_string(dir.path().join(l)).unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        differing.is_empty(),
        "boards {differing:?} differ between the serve node and their recorder\n{logs}"
    );
    let mut texts = Vec::new();
    for (out, numbers) in &outs {
        for &k in numbers {
            let text = game_file(out, k).expect("the recorder wrote the game");
            assert!(
                plies(&text) >= 6,
                "board {k} recorded moves ({} plies):\n{text}",
                plies(&text)
            );
            texts.push(text);
        }
    }
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut combined = String::new();
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < until {
        combined = std::fs::read_to_string(serve_out.join("round-1/games.pgn")).unwrap_or_default();
        if combined == touchmove::recorder::layout::combine(&texts) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        combined,
        touchmove::recorder::layout::combine(&texts),
        "the serve node's games.pgn holds all six games in board order"
    );
    let body = http_get(&serve_log, "/round/1/games.pgn");
    assert_eq!(
        body,
        touchmove::recorder::layout::combine(&texts),
        "the serve node's web server gives the same games.pgn"
    );
    let late_differing = wait_identical(&late_out, &pairs, Duration::from_secs(20));
    assert!(
        late_differing.is_empty(),
        "boards {late_differing:?} differ on the node started late\n{}",
        std::fs::read_to_string(dir.path().join("serve-late.log")).unwrap_or_default()
    );
    stop(late);
    stop(serve);
    let serve_log = std::fs::read_to_string(&serve_log).unwrap_or_default();
    assert!(
        !serve_log.contains("skipped:")
            && !serve_log.contains("claimed by")
            && serve_log.contains(" 0 undecodable"),
        "{serve_log}"
    );
    drop(boards);
}

/// The body of `GET path` from the web server whose address the serve node logged.
fn http_get(log: &Path, path: &str) -> String {
    use std::io::{Read, Write};
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let addr = text
        .split("live at http://")
        .nth(1)
        .and_then(|rest| rest.split('/').next())
        .unwrap_or_else(|| panic!("the serve node logs its address:\n{text}"))
        .to_string();
    let mut stream = std::net::TcpStream::connect(&addr).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    body.to_string()
}
