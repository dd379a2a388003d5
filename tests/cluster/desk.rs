//! One arbiter desk for every board of an event on several PCs, and the event layout in the
//! cluster's key-value bucket: a private nats-server, `touchmove event push`, two recorder
//! processes with two virtual boards each and two serve nodes. An action taken on a serve
//! node reaches the recorder that owns the board and shows on both nodes; a wrong token and a
//! board the recorder does not own are refused (and logged); two claims on one board are
//! refused naming both PCs.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::cluster_support::{
    self, NatsServer, assert_played, event_file, game_file, logged_address, played_round,
    record_args, recorded_moves, serve_node, stop, touchmove, wait_identical,
};
use touchmove::cluster::desk::{self, DeskError, DeskRequest};
use touchmove::cluster::event_layout;
use touchmove::cluster::{ClusterSettings, Credentials};
use touchmove::record::arbiter::{ArbiterAction, ArbiterRequest};

const EVENT: &str = "desk-test";
const SEED: u64 = 20_261_126;

fn settings(url: &str, member: &str) -> ClusterSettings {
    ClusterSettings {
        urls: vec![url.to_string()],
        credentials: Credentials::None,
        event: EVENT.to_string(),
        member: member.to_string(),
        tls_ca: None,
        replicas: 1,
    }
}

async fn bucket(url: &str) -> (async_nats::Client, async_nats::jetstream::kv::Store) {
    let client = touchmove::cluster::connect(&settings(url, "test"))
        .await
        .unwrap();
    let js = async_nats::jetstream::new(client.clone());
    let store = event_layout::open(&js, &settings(url, "test"))
        .await
        .unwrap();
    (client, store)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_claimed_by_two_pcs_is_refused_naming_both() {
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let (_client, store) = bucket(&nats.url()).await;
    event_layout::claim(&store, 1, &[1, 2], "pc-a", "host-a")
        .await
        .unwrap();
    let refused = event_layout::claim(&store, 1, &[3, 2], "pc-b", "host-b")
        .await
        .unwrap_err();
    assert!(
        refused.contains("board 2 of round 1")
            && refused.contains("\"pc-a\" (host host-a)")
            && refused.contains("\"pc-b\" (host host-b)"),
        "{refused}"
    );
    // A restarted recorder keeps its boards; board 3 went to pc-b despite the conflict on 2.
    event_layout::claim(&store, 1, &[1, 2], "pc-a", "host-a")
        .await
        .unwrap();
    let owner = |b| {
        let store = store.clone();
        async move {
            event_layout::owner(&store, 1, b)
                .await
                .unwrap()
                .map(|c| c.recorder)
        }
    };
    assert_eq!(owner(2).await.as_deref(), Some("pc-a"));
    assert_eq!(owner(3).await.as_deref(), Some("pc-b"));
    assert_eq!(owner(4).await, None);

    // The layout gives board 2 to pc-b between rounds: pc-a's claim is dropped, pc-b's
    // succeeds, and pc-a claiming it again is refused with the layout's PC named.
    let mut config = touchmove::recorder::EventConfig::default();
    for n in 1..=3 {
        config.boards.push(touchmove::recorder::BoardConfig {
            number: n,
            source: touchmove::recorder::BoardSource::Auto,
            kind: touchmove::board::kind::BoardKind::Dgt,
            leds: touchmove::recorder::leds::LedMode::Off,
            white: touchmove::recorder::Player::named(&format!("W{n}")),
            black: touchmove::recorder::Player::named(&format!("B{n}")),
        });
    }
    let pcs = [(1, "pc-a"), (2, "pc-b"), (3, "pc-b")]
        .into_iter()
        .map(|(b, p)| (b, p.to_string()))
        .collect();
    let report = event_layout::push(&store, &config, &pcs).await.unwrap();
    assert_eq!(report.boards, 3);
    assert_eq!(report.released, [(2, "pc-a".to_string())]);
    event_layout::claim(&store, 1, &[2, 3], "pc-b", "host-b")
        .await
        .unwrap();
    let refused = event_layout::claim(&store, 1, &[2], "pc-a", "host-a")
        .await
        .unwrap_err();
    assert!(
        refused.contains("given to PC \"pc-b\"") && refused.contains("\"pc-a\""),
        "{refused}"
    );
    let layout = event_layout::read(&store).await.unwrap();
    assert_eq!(layout.boards[&(1, 2)].pc.as_deref(), Some("pc-b"));
    assert_eq!(layout.claims[&(1, 2)].recorder, "pc-b");
    assert_eq!(layout.event.as_ref().map(|e| e.round), Some(1));
    // One token for the event, made once.
    let token = event_layout::token_or_new(&store).await.unwrap();
    assert_eq!(event_layout::token_or_new(&store).await.unwrap(), token);
    assert!(event_layout::read(&store).await.unwrap().has_token);
}

/// `touchmove event push` of the event file `config` to the cluster at `url`, with `extra`
/// arguments; returns the event's arbiter token it prints.
fn push_event(url: &str, config: &Path, extra: &[&str]) -> String {
    let pushed = std::process::Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["event", "push", "--cluster", url, "--cluster-event", EVENT])
        .arg("--config")
        .arg(config)
        .args(extra)
        .output()
        .unwrap();
    let pushed_out = String::from_utf8_lossy(&pushed.stdout).into_owned();
    assert!(
        pushed.status.success(),
        "{pushed_out}{}",
        String::from_utf8_lossy(&pushed.stderr)
    );
    pushed_out
        .split("arbiter token of the event (the same on every serve node): ")
        .nth(1)
        .map(|t| t.trim().to_string())
        .unwrap_or_else(|| panic!("push prints the token:\n{pushed_out}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serve_node_follows_the_events_token_without_a_restart() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::reserve(dir.path(), &[]);
    let url = nats.url();
    let log = dir.path().join("node.log");
    let logs = || std::fs::read_to_string(&log).unwrap_or_default();
    // The node starts while no cluster answers: its desk has a token of its own.
    let node = serve_node(
        &url,
        EVENT,
        "node",
        Some("127.0.0.1:0"),
        &dir.path().join("node"),
        &log,
    );
    let addr = logged_address(&log);
    nats.restart();
    let config = event_file(dir.path(), "event.toml", 1, &[PathBuf::from("/dev/null")]);
    let first = push_event(&url, &config, &[]);
    // Accepted: this node has no game on board 1, which only an accepted token learns (404).
    let action = r#"{"round":1,"board":1,"who":"Token test","action":{"action":"new_game"}}"#;
    let status = |token: &str| http(&addr, "POST", "/api/arbiter/action", Some(token), action).0;
    wait_for(
        "the node takes the event's token once the cluster answers",
        Duration::from_secs(20),
        || status(&first) == 404,
        logs,
    );
    let second = push_event(&url, &config, &["--new-token"]);
    assert_ne!(first, second);
    wait_for(
        "the node takes the new token and refuses the old one",
        Duration::from_secs(20),
        || status(&second) == 404 && status(&first) == 403,
        logs,
    );
    let state = touchmove::recorder::layout::state_dir(&dir.path().join("node"));
    let held = std::fs::read_to_string(state.join("arbiter.token")).unwrap_or_default();
    assert_eq!(held.trim(), second, "the token file holds the new token");
    stop(node);
}

/// Status and body of an HTTP request.
fn http(addr: &str, method: &str, path: &str, token: Option<&str>, body: &str) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n{auth}Content-Type: \
         application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool, logs: impl Fn() -> String) {
    let until = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < until, "{what}\n{}", logs());
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_on_a_serve_node_reaches_the_owning_recorder_and_every_node() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let url = nats.url();
    let round = played_round(5, SEED, 400, 16_000);
    let (boards, ports) =
        cluster_support::spawn_cluster_boards(dir.path(), round.scripts.clone(), 4.0);
    let all = event_file(dir.path(), "all.toml", 1, &ports);
    let token = push_event(&url, &all, &["--pc", "pc-a=1-2", "--pc", "pc-b=3-4"]);

    let log = |name: &str| dir.path().join(format!("{name}.log"));
    let logs = || {
        cluster_support::logs(
            dir.path(),
            &["pc-a.log", "pc-b.log", "node1.log", "node2.log"],
        )
    };
    let mut recorders = Vec::new();
    let mut outs = Vec::new();
    for (r, name) in ["pc-a", "pc-b"].iter().enumerate() {
        let config = event_file(
            dir.path(),
            &format!("{name}.toml"),
            2 * r + 1,
            &ports[2 * r..2 * r + 2],
        );
        let out = dir.path().join(name);
        let config = config.to_string_lossy().into_owned();
        let out_text = out.to_string_lossy().into_owned();
        recorders.push(touchmove(
            &record_args(&config, &out_text, &url, EVENT, name),
            &[],
            &log(name),
        ));
        outs.push(out);
    }
    // A third PC whose event file also has board 1, which the layout gives to pc-a.
    let pc_c_config = event_file(dir.path(), "pc-c.toml", 1, &ports[4..5]);
    let pc_c_config = pc_c_config.to_string_lossy().into_owned();
    let pc_c_out = dir.path().join("pc-c").to_string_lossy().into_owned();
    let pc_c = touchmove(
        &record_args(&pc_c_config, &pc_c_out, &url, EVENT, "pc-c"),
        &[],
        &log("pc-c"),
    );
    let node_out = |n: &str| dir.path().join(n);
    let node1 = serve_node(
        &url,
        EVENT,
        "node1",
        Some("127.0.0.1:0"),
        &node_out("node1"),
        &log("node1"),
    );
    let node2 = serve_node(
        &url,
        EVENT,
        "node2",
        Some("127.0.0.1:0"),
        &node_out("node2"),
        &log("node2"),
    );
    let (addr1, addr2) = (logged_address(&log("node1")), logged_address(&log("node2")));
    for n in ["node1", "node2"] {
        let state = touchmove::recorder::layout::state_dir(&node_out(n));
        let held = std::fs::read_to_string(state.join("arbiter.token")).unwrap_or_default();
        assert_eq!(
            held.trim(),
            token,
            "{n} holds the event's token\n{}",
            logs()
        );
    }
    for b in &boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .expect("the boards finish their scripts");
    }
    wait_for(
        "both recorders joined the cluster",
        Duration::from_secs(20),
        || {
            ["pc-a", "pc-b"].iter().all(|n| {
                std::fs::read_to_string(log(n))
                    .unwrap_or_default()
                    .contains("cluster: connected")
            })
        },
        logs,
    );
    let pairs: Vec<(&Path, Vec<usize>)> = vec![
        (outs[0].as_path(), vec![1, 2]),
        (outs[1].as_path(), vec![3, 4]),
    ];
    assert_played(
        &[
            ("pc-a", &outs[0]),
            ("node1", &node_out("node1")),
            ("node2", &node_out("node2")),
        ],
        1,
        &round.moves[..2],
        Duration::from_secs(20),
        logs,
    );
    assert_played(
        &[
            ("pc-b", &outs[1]),
            ("node1", &node_out("node1")),
            ("node2", &node_out("node2")),
        ],
        3,
        &round.moves[2..4],
        Duration::from_secs(20),
        logs,
    );
    for n in ["node1", "node2"] {
        let differing = wait_identical(&node_out(n), &pairs, Duration::from_secs(20));
        assert!(differing.is_empty(), "{n}: {differing:?}\n{}", logs());
    }

    // The action, taken on node 1, for a board of pc-b.
    let action = r#"{"round":1,"board":3,"who":"Desk test","action":{"action":"set_result","result":"0-1","reason":"forfeit"}}"#;
    let (status, body) = http(&addr1, "POST", "/api/arbiter/action", Some(&token), action);
    assert_eq!(status, 200, "{body}\n{}", logs());
    assert!(body.contains("\"ok\":true"), "{body}");
    let has_result = |out: &Path| game_file(out, 3).is_some_and(|p| p.contains("[Result \"0-1\"]"));
    wait_for(
        "the recorder and both serve nodes show the result",
        Duration::from_secs(20),
        || has_result(&outs[1]) && has_result(&node_out("node1")) && has_result(&node_out("node2")),
        logs,
    );
    for n in ["node1", "node2"] {
        let differing = wait_identical(&node_out(n), &pairs, Duration::from_secs(20));
        assert!(differing.is_empty(), "{n} after the action: {differing:?}");
    }
    let pgn = game_file(&node_out("node2"), 3).unwrap();
    assert!(pgn.contains("forfeit"), "{pgn}");

    // An action retried with its key (after a timeout, on another node) is applied once.
    let note = r#"{"round":1,"board":4,"who":"Desk test","key":"note-1","action":{"action":"annotate","ply":1,"text":"noted once"}}"#;
    let (status, body) = http(&addr1, "POST", "/api/arbiter/action", Some(&token), note);
    assert_eq!(status, 200, "{body}\n{}", logs());
    let (status, body) = http(&addr2, "POST", "/api/arbiter/action", Some(&token), note);
    assert_eq!(status, 200, "{body}\n{}", logs());
    assert!(body.contains("already applied"), "{body}");
    let noted = |out: &Path| game_file(out, 4).map_or(0, |p| p.matches("noted once").count());
    wait_for(
        "the note reaches the recorder and both nodes",
        Duration::from_secs(20),
        || noted(&outs[1]) >= 1 && noted(&node_out("node1")) >= 1 && noted(&node_out("node2")) >= 1,
        logs,
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    for out in [&outs[1], &node_out("node1"), &node_out("node2")] {
        assert_eq!(noted(out), 1, "{}: {:?}", out.display(), game_file(out, 4));
    }

    // A wrong token is refused by the serve node, and nothing reaches the recorder.
    let (status, body) = http(
        &addr2,
        "POST",
        "/api/arbiter/action",
        Some("forged"),
        action,
    );
    assert_eq!(status, 403, "{body}");
    let (status, _) = http(&addr2, "POST", "/api/arbiter/action", None, action);
    assert_eq!(status, 401);

    // The recorders check again: a wrong token sent straight to pc-b, and an action for
    // board 3 sent to pc-a, which does not own it.
    let client = touchmove::cluster::connect(&settings(&url, "test"))
        .await
        .unwrap();
    let request = |token: &str, board: u32| DeskRequest {
        token: token.to_string(),
        round: 1,
        request: ArbiterRequest {
            who: "intruder".into(),
            board,
            action: ArbiterAction::SetResult {
                result: "1-0".into(),
                reason: "forged".into(),
            },
            key: None,
        },
        node: "test".into(),
    };
    match desk::ask_recorder(&client, EVENT, "pc-b", &request("forged", 3)).await {
        Err(DeskError::Refused(why)) => assert!(why.contains("wrong arbiter token"), "{why}"),
        other => panic!("a wrong token reached pc-b: {other:?}"),
    }
    match desk::ask_recorder(&client, EVENT, "pc-a", &request(&token, 3)).await {
        Err(DeskError::Refused(why)) => assert!(
            why.contains("PC \"pc-a\" does not record board 3 of round 1"),
            "{why}"
        ),
        other => panic!("pc-a took an action for pc-b's board: {other:?}"),
    }
    // A recorder that is not there: refused at once, with who is missing.
    match desk::ask_recorder(&client, EVENT, "pc-z", &request(&token, 3)).await {
        Err(DeskError::Unavailable(why)) => assert!(why.contains("not connected"), "{why}"),
        other => panic!("{other:?}"),
    }
    let pc_a = std::fs::read_to_string(log("pc-a")).unwrap();
    let pc_b = std::fs::read_to_string(log("pc-b")).unwrap();
    assert!(pc_a.contains("does not record board 3"), "{pc_a}");
    assert!(pc_b.contains("wrong arbiter token"), "{pc_b}");
    assert!(
        has_result(&outs[1]) && !game_file(&outs[1], 3).unwrap().contains("forged"),
        "the refused actions changed nothing"
    );
    // A board nobody claimed: the serve node says so.
    let (_c, store) = bucket(&url).await;
    store.delete(event_layout::claim_key(1, 4)).await.unwrap();
    let (status, body) = http(
        &addr1,
        "POST",
        "/api/arbiter/action",
        Some(&token),
        &action.replace("\"board\":3", "\"board\":4"),
    );
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("no PC has claimed board 4"), "{body}");

    let pc_c_log = std::fs::read_to_string(log("pc-c")).unwrap();
    assert!(
        pc_c_log.contains(
            "board 1 of round 1 is given to PC \"pc-a\" by the event layout, and PC \"pc-c\""
        ),
        "{pc_c_log}"
    );
    let layout = event_layout::read(&store).await.unwrap();
    assert_eq!(layout.claims[&(1, 1)].recorder, "pc-a");
    for r in recorders {
        stop(r);
    }
    stop(pc_c);
    stop(node1);
    stop(node2);
    drop(boards);
}

/// A board's cable taken from pc-a to pc-b mid-game while its players think: the layout is
/// pushed again giving the board to pc-b, pc-a restarts without it and pc-b records it from
/// there. Both serve nodes end with one game holding exactly the moves played on it, and the
/// boards that stayed on pc-a are unharmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_moved_to_another_pc_mid_game_stays_one_exact_game() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let url = nats.url();
    let mut round = played_round(3, SEED + 7, 400, 24_000);
    // From about 8 s of its script on, board 3's players think for 60 s (15 s at 4×): time to
    // stop pc-a, push the new layout and start pc-b.
    let before_move = round.pause(2, 8_000, 60_000);
    assert!(before_move > 0 && before_move < round.moves[2].len());
    let (boards, ports) =
        cluster_support::spawn_cluster_boards(dir.path(), round.scripts.clone(), 4.0);
    let all = event_file(dir.path(), "all.toml", 1, &ports);
    push_event(&url, &all, &["--pc", "pc-a=1-3"]);

    let log = |name: &str| dir.path().join(format!("{name}.log"));
    let logs = || {
        cluster_support::logs(
            dir.path(),
            &["pc-a.log", "pc-b.log", "node1.log", "node2.log"],
        )
    };
    let out = |name: &str| dir.path().join(name);
    let text = |p: PathBuf| p.to_string_lossy().into_owned();
    let nodes: Vec<_> = ["node1", "node2"]
        .iter()
        .map(|n| serve_node(&url, EVENT, n, None, &out(n), &log(n)))
        .collect();
    let pc_a_config = text(event_file(dir.path(), "pc-a.toml", 1, &ports));
    let pc_a_out = text(out("pc-a"));
    let pc_a = touchmove(
        &record_args(&pc_a_config, &pc_a_out, &url, EVENT, "pc-a"),
        &[],
        &log("pc-a"),
    );
    wait_for(
        "pc-a records board 3 up to the players' pause",
        Duration::from_secs(30),
        || recorded_moves(&out("pc-a"), 3).is_some_and(|m| m.len() == before_move),
        logs,
    );

    stop(pc_a);
    push_event(&url, &all, &["--pc", "pc-a=1-2", "--pc", "pc-b=3"]);
    let pc_a_config = text(event_file(dir.path(), "pc-a-2.toml", 1, &ports[..2]));
    let pc_a = touchmove(
        &record_args(&pc_a_config, &pc_a_out, &url, EVENT, "pc-a"),
        &[],
        &log("pc-a"),
    );
    let pc_b_config = text(event_file(dir.path(), "pc-b.toml", 3, &ports[2..]));
    let pc_b_out = text(out("pc-b"));
    let pc_b = touchmove(
        &record_args(&pc_b_config, &pc_b_out, &url, EVENT, "pc-b"),
        &[],
        &log("pc-b"),
    );
    for b in &boards {
        tokio::time::timeout(Duration::from_secs(90), b.finished())
            .await
            .expect("the boards finish their scripts");
    }
    assert!(
        recorded_moves(&out("pc-a"), 3).is_some_and(|m| m.len() == before_move),
        "board 3 stayed on pc-a only until its pause\n{}",
        logs()
    );
    assert_played(
        &[("node1", &out("node1")), ("node2", &out("node2"))],
        1,
        &round.moves,
        Duration::from_secs(30),
        logs,
    );
    assert_played(
        &[("pc-a", &out("pc-a"))],
        1,
        &round.moves[..2],
        Duration::from_secs(10),
        logs,
    );
    for n in ["node1", "node2"] {
        let served = game_file(&out(n), 3).unwrap();
        let games = touchmove::record::pgn::read_games(&served).unwrap();
        assert_eq!(games.len(), 1, "{n} holds one game on board 3:\n{served}");
    }
    stop(pc_a);
    stop(pc_b);
    for node in nodes {
        stop(node);
    }
    drop(boards);
}
