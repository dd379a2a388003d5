//! An event on several PCs, end to end: a private nats-server, three `touchmove record
//! --cluster` processes with eight virtual boards each, two `touchmove serve` nodes running
//! throughout with an SSE client each (under one member name, as two hosts of one name), and
//! a third node started after the round. Every board of every recorder and every serve node
//! must hold exactly the moves its virtual board played, every `game-K.pgn` of every serve
//! node must be byte-identical to the recording PC's, each SSE client must have seen every
//! move played on every board (none repeated or skipped), and the first node's `games.pgn`
//! (file and URL) is the combination of all 24 games.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cluster_support::{
    self, NatsServer, SseClient, assert_played, event_file, game_file, logged_address,
    played_round, record_args, san_of, serve_node, stop, touchmove, wait_identical,
};

const RECORDERS: [&str; 3] = ["pc-a", "pc-b", "pc-c"];
const BOARDS_PER_RECORDER: usize = 8;
const SPEED: f64 = 4.0;
const MAX_PAUSE_MS: u64 = 600;
/// The first 40 s of each game (10 s of wall time at 4×): enough moves, a short test.
const SCRIPT_MS: u64 = 40_000;
const SEED: u64 = 20_261_125;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_nodes_pgn_is_byte_identical_and_their_sse_clients_see_every_move() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let url = nats.url();
    let all_boards = RECORDERS.len() * BOARDS_PER_RECORDER;
    let round = played_round(all_boards, SEED, MAX_PAUSE_MS, SCRIPT_MS);
    let (boards, ports) =
        cluster_support::spawn_cluster_boards(dir.path(), round.scripts.clone(), SPEED);
    let nodes = ["node1", "node2"];
    let mut serves = Vec::new();
    let mut clients = Vec::new();
    for node in nodes {
        let log = dir.path().join(format!("{node}.log"));
        // One member name for both: two hosts of one name.
        serves.push(serve_node(
            &url,
            "cluster-test",
            "twin",
            Some("127.0.0.1:0"),
            &dir.path().join(node),
            &log,
        ));
        clients.push(SseClient::open(&logged_address(&log)));
    }
    let mut recorders = Vec::new();
    let mut outs: Vec<(PathBuf, Vec<usize>)> = Vec::new();
    for (r, name) in RECORDERS.iter().enumerate() {
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
        tokio::time::timeout(Duration::from_secs(90), b.finished())
            .await
            .expect("the boards finish their scripts");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    for r in recorders {
        stop(r);
    }
    let pairs: Vec<(&Path, Vec<usize>)> =
        outs.iter().map(|(o, b)| (o.as_path(), b.clone())).collect();
    // A third node started after the round: it catches up from the stream alone.
    let late_out = dir.path().join("node3");
    let late = serve_node(
        &url,
        "cluster-test",
        "node3",
        None,
        &late_out,
        &dir.path().join("node3.log"),
    );
    let logs = || {
        RECORDERS
            .iter()
            .chain(&nodes)
            .chain(&["node3"])
            .map(|l| {
                format!(
                    "--- {l}\n{}",
                    std::fs::read_to_string(dir.path().join(format!("{l}.log")))
                        .unwrap_or_default()
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut judged: Vec<(&str, PathBuf)> =
        RECORDERS.iter().map(|r| (*r, dir.path().join(r))).collect();
    judged.extend(
        nodes
            .iter()
            .chain(&["node3"])
            .map(|n| (*n, dir.path().join(n))),
    );
    for (name, out) in &judged {
        // A recorder holds its own boards; a serve node holds every board.
        let (first, moves) = match RECORDERS.iter().position(|r| r == name) {
            Some(r) => (
                r * BOARDS_PER_RECORDER + 1,
                &round.moves[r * BOARDS_PER_RECORDER..(r + 1) * BOARDS_PER_RECORDER],
            ),
            None => (1, &round.moves[..]),
        };
        assert_played(
            &[(name, out.as_path())],
            first,
            moves,
            Duration::from_secs(30),
            logs,
        );
    }
    for node in nodes.iter().chain(&["node3"]) {
        let differing = wait_identical(&dir.path().join(node), &pairs, Duration::from_secs(5));
        assert!(
            differing.is_empty(),
            "boards {differing:?} differ between {node} and their recorder\n{}",
            logs()
        );
    }
    assert!(
        round.moves.iter().all(|m| m.len() >= 6),
        "every board played moves: {:?}",
        round.moves.iter().map(Vec::len).collect::<Vec<_>>()
    );
    let mut texts = Vec::new();
    for (out, numbers) in &outs {
        for &k in numbers {
            texts.push(game_file(out, k).expect("the recorder wrote the game"));
        }
    }
    // Every node has applied the whole stream (its files are final); its SSE events were sent
    // before its files were written, so a short wait covers the last ones in flight.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let played_plies: usize = round.moves.iter().map(Vec::len).sum();
    for (node, client) in nodes.iter().zip(&clients) {
        let seen = client.seen();
        assert!(
            seen.out_of_order.is_empty() && seen.ended.is_none(),
            "{node}'s SSE client saw moves out of order or lost the stream: {:?} {:?}",
            seen.out_of_order,
            seen.ended
        );
        for (k, played) in (1..).zip(&round.moves) {
            assert_eq!(
                seen.moves.get(&(1, k)).cloned().unwrap_or_default(),
                san_of(played),
                "the moves {node}'s SSE client saw on board {k} are those played"
            );
        }
        assert_eq!(
            seen.move_events - seen.withdrawn,
            played_plies,
            "{node}'s SSE client: {} move events, {} of them withdrawn by revisions, for \
             {played_plies} plies played",
            seen.move_events,
            seen.withdrawn
        );
        eprintln!(
            "{node}: SSE client saw {} move events ({} withdrawn by revisions) for \
             {played_plies} plies played on {all_boards} boards",
            seen.move_events, seen.withdrawn
        );
    }
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let node1_out = dir.path().join("node1");
    let expected = touchmove::recorder::layout::combine(&texts);
    let mut combined = String::new();
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < until {
        combined = std::fs::read_to_string(node1_out.join("round-1/games.pgn")).unwrap_or_default();
        if combined == expected {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        combined, expected,
        "node1's games.pgn holds all games in board order"
    );
    let body = http_get(
        &logged_address(&dir.path().join("node1.log")),
        "/round/1/games.pgn",
    );
    assert_eq!(
        body, expected,
        "node1's web server gives the same games.pgn"
    );
    drop(clients);
    stop(late);
    for serve in serves {
        stop(serve);
    }
    for node in nodes.iter().chain(&["node3"]) {
        let log =
            std::fs::read_to_string(dir.path().join(format!("{node}.log"))).unwrap_or_default();
        assert!(
            !log.contains("skipped:")
                && !log.contains("claimed by")
                && !log.contains("reconnecting")
                && log.contains(" 0 undecodable"),
            "{node}:\n{log}"
        );
    }
    drop(boards);
}

/// A serve node held up for longer than twice its consumer's heartbeat (a machine so loaded
/// that the node is not run; here SIGSTOP) finds, when it runs again, the consumer's time for
/// a heartbeat over before it has read the heartbeats waiting on its socket. That is no lost
/// stream: the node reads on and does not reconnect. (The test above failed so once, its late
/// node held up under heavy load.) The heartbeat is 300 ms here instead of 15 s.
#[test]
fn a_serve_node_held_up_past_its_heartbeat_reads_on_without_reconnecting() {
    use nix::sys::signal::{Signal, kill};
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let log = dir.path().join("node.log");
    let out = dir.path().join("node");
    let node = cluster_support::touchmove_with_env(
        &[
            "serve",
            "--cluster",
            &nats.url(),
            "--cluster-event",
            "held-up",
            "--cluster-member",
            "node",
            "--no-server",
            "--out",
        ],
        &[&out],
        &[(touchmove::cluster::broadcast::HEARTBEAT_ENV, "300")],
        &log,
    );
    let read = || std::fs::read_to_string(&log).unwrap_or_default();
    let until = std::time::Instant::now() + Duration::from_secs(20);
    while !read().contains("cluster: reading event") && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_secs(1));
    let pid = nix::unistd::Pid::from_raw(node.id() as i32);
    kill(pid, Signal::SIGSTOP).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    kill(pid, Signal::SIGCONT).unwrap();
    std::thread::sleep(Duration::from_secs(2));
    stop(node);
    let log = read();
    assert_eq!(
        log.lines()
            .filter(|l| l.starts_with("touchmove serve: cluster: reading event"))
            .count(),
        1,
        "the node read its consumer once:\n{log}"
    );
    assert!(!log.contains("reconnecting"), "{log}");
}

/// The body of `GET path` from the web server at `addr`.
fn http_get(addr: &str, path: &str) -> String {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
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

/// `touchmove demo --cluster URL` against a private nats-server: two recorder processes and
/// a serve node whose SSE clients see the moves of the boards of both recorders; Ctrl-C
/// (SIGTERM) stops all of them.
#[test]
fn demo_cluster_runs_two_recorders_and_a_serve_node() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let stdout = dir.path().join("demo.out");
    let log = dir.path().join("demo.log");
    let out = dir.path().join("demo");
    let demo = std::process::Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["demo", "--cluster", &nats.url(), "--listen", "127.0.0.1:0"])
        .args(["--boards", "2", "--speed", "5", "--out"])
        .arg(&out)
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("the touchmove binary starts");
    cluster_support::reap_on_failure(&demo);
    let addr = logged_address(&stdout);
    let client = SseClient::open(&addr);
    let until = std::time::Instant::now() + Duration::from_secs(40);
    let both_boards_moved = || {
        let seen = client.seen();
        [1, 2]
            .iter()
            .all(|&k| seen.moves.get(&(1, k)).is_some_and(|m| m.len() >= 2))
    };
    while !both_boards_moved() && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(200));
    }
    let output = || {
        format!(
            "--- stdout\n{}\n--- stderr\n{}",
            std::fs::read_to_string(&stdout).unwrap_or_default(),
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    };
    let seen = client.seen();
    assert!(
        both_boards_moved() && seen.out_of_order.is_empty(),
        "the serve node's SSE client sees moves of board 1 (recorder pc-a) and board 2 \
         (recorder pc-b): {:?} {:?}\n{}",
        seen.moves,
        seen.out_of_order,
        output()
    );
    let text = std::fs::read_to_string(&stdout).unwrap_or_default();
    assert!(
        text.contains("recorder pc-a: board 1") && text.contains("recorder pc-b: board 2"),
        "the demo says which recorder has which boards\n{}",
        output()
    );
    let pid = nix::unistd::Pid::from_raw(demo.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = wait_exit(demo, Duration::from_secs(30));
    assert!(
        status.success(),
        "the demo stops cleanly: {status}\n{}",
        output()
    );
    assert!(
        std::net::TcpStream::connect(&addr).is_err(),
        "the serve node stopped with the demo\n{}",
        output()
    );
    for name in ["pc-a", "pc-b", "broadcast"] {
        assert!(
            out.join(name).join("round-1/game-1.pgn").exists()
                || out.join(name).join("round-1/game-2.pgn").exists(),
            "{name} wrote its PGN files\n{}",
            output()
        );
    }
}

/// The exit status of `child`, killing it after `limit`.
fn wait_exit(mut child: std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let until = std::time::Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return status;
        }
        if std::time::Instant::now() >= until {
            let _ = child.kill();
            panic!("the demo did not stop within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
