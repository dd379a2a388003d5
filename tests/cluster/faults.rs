//! Faults of an event on several PCs, each ending with a recorder and a serve node that hold
//! exactly the moves played on every board (no move lost, none duplicated), in `game-K.pgn`
//! files byte-identical between the two:
//! - the cluster is unreachable when the recorder starts (it records locally and forwards
//!   once the server is up), the nats-server is killed mid-round and stays away 10 s
//!   (recording goes on, the backlog is flushed in order), then the recorder is SIGKILLed
//!   and restarted;
//! - a recorder is SIGKILLed mid-round and restarted (it forwards from its journal);
//! - a serve node is SIGKILLed mid-round and restarted (it rebuilds from its durable consumer);
//! - on a 3-node nats cluster with a 3-replica stream, the node leading the stream is killed
//!   for the rest of the round;
//! - the nats-server loses its state mid-round (its stream starts again from sequence 1,
//!   below what the serve node has read).

use std::path::PathBuf;
use std::time::Duration;

use crate::cluster_support::logs;
use crate::cluster_support::{
    self, NatsServer, assert_played, event_file, game_file, played_round, plies, record_args,
    serve_node, stop, touchmove, wait_identical,
};
use touchmove::sim::virtual_board::VirtualBoard;

const BOARDS: usize = 3;
const MAX_PAUSE_MS: u64 = 600;
const SEED: u64 = 20_261_126;
/// The outage test plays more slowly, so that its 10 s outage is mid-round: the first 66 s of
/// each game take 22 s of wall time at 3×.
const OUTAGE_SPEED: f64 = 3.0;
const OUTAGE_SCRIPT_MS: u64 = 66_000;
/// The other faults: the first 40 s of each game, 10 s of wall time at 4×.
const SPEED: f64 = 4.0;
const SCRIPT_MS: u64 = 40_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_outage_and_recorder_kill_lose_and_duplicate_nothing() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::reserve(dir.path(), &[]);
    let url = nats.url();
    let round = played_round(BOARDS, SEED, MAX_PAUSE_MS, OUTAGE_SCRIPT_MS);
    let (boards, ports) =
        cluster_support::spawn_cluster_boards(dir.path(), round.scripts, OUTAGE_SPEED);
    let config = event_file(dir.path(), "pc.toml", 1, &ports);
    let out = dir.path().join("pc");
    let serve_out = dir.path().join("serve");
    let log = dir.path().join("pc.log");
    let serve_log = dir.path().join("serve.log");
    let config_text = config.to_string_lossy().into_owned();
    let out_text = out.to_string_lossy().into_owned();
    let record = record_args(&config_text, &out_text, &url, "faults", "pc-1");
    let serve = serve_node(&url, "faults", "node", None, &serve_out, &serve_log);
    let started = tokio::time::Instant::now();
    let mut recorder = touchmove(&record, &[], &log);
    let at = |s: f64| started + Duration::from_secs_f64(s);

    tokio::time::sleep_until(at(1.5)).await;
    nats.restart();
    tokio::time::sleep_until(at(4.0)).await;
    let before_outage = game_file(&out, 1).map_or(0, |t| plies(&t));
    nats.kill();
    tokio::time::sleep_until(at(14.0)).await;
    let during_outage = game_file(&out, 1).map_or(0, |t| plies(&t));
    nats.restart();

    tokio::time::sleep_until(at(17.5)).await;
    recorder.kill().expect("SIGKILL");
    recorder.wait().unwrap();
    recorder = touchmove(&record, &[], &log);

    for b in &boards {
        tokio::time::timeout(Duration::from_secs(90), b.finished())
            .await
            .expect("the boards finish their scripts");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop(recorder);
    let differing = wait_identical(
        &serve_out,
        &[(&out, (1..=BOARDS).collect())],
        Duration::from_secs(20),
    );
    let logs = format!(
        "--- recorder\n{}\n--- serve\n{}",
        std::fs::read_to_string(&log).unwrap_or_default(),
        std::fs::read_to_string(&serve_log).unwrap_or_default()
    );
    assert!(
        differing.is_empty(),
        "boards {differing:?} differ between the serve node and the recorder\n{logs}"
    );
    assert_played(
        &[("the recorder", &out), ("the serve node", &serve_out)],
        1,
        &round.moves,
        Duration::from_secs(5),
        || logs.clone(),
    );
    let final_plies = game_file(&out, 1).map_or(0, |t| plies(&t));
    assert!(
        before_outage < during_outage && during_outage < final_plies,
        "board 1 recorded during the 10 s outage and after it ({before_outage}, \
         {during_outage} then {final_plies} plies)\n{logs}"
    );
    let recorder_log = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        recorder_log
            .matches("forwarding the journal after entry")
            .count()
            >= 3,
        "the recorder reconnected after the outage and after its restart\n{logs}"
    );
    assert!(
        recorder_log.contains("cannot reach the cluster")
            && recorder_log.contains("Recording locally"),
        "the recorder said that the cluster was unreachable at its start\n{logs}"
    );
    assert!(
        recorder_log.contains("journal entries wait to be forwarded"),
        "the recorder reported its backlog during the outage\n{logs}"
    );
    stop(serve);
    drop(boards);
}

/// Three virtual boards playing the short round, the moves each plays, and the event file of
/// the PC recording them (with `extra` appended, e.g. a `[cluster]` table).
fn short_round(
    dir: &std::path::Path,
    extra: &str,
) -> (Vec<VirtualBoard>, Vec<Vec<String>>, PathBuf) {
    let round = played_round(BOARDS, SEED, MAX_PAUSE_MS, SCRIPT_MS);
    let (boards, ports) = cluster_support::spawn_cluster_boards(dir, round.scripts, SPEED);
    let config = event_file(dir, "pc.toml", 1, &ports);
    let mut text = std::fs::read_to_string(&config).unwrap();
    text.push_str(extra);
    std::fs::write(&config, text).unwrap();
    (boards, round.moves, config)
}

/// Waits for the boards' scripts to end and the recorder to take the last bytes.
async fn round_played(boards: &[VirtualBoard]) {
    for b in boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .expect("the boards finish their scripts");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorder_killed_mid_round_and_restarted_loses_and_repeats_nothing() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let url = nats.url();
    let (boards, played, config) = short_round(dir.path(), "");
    let out = dir.path().join("pc");
    let serve_out = dir.path().join("serve");
    let log = dir.path().join("pc.log");
    let serve_log = dir.path().join("serve.log");
    let (config_text, out_text) = (
        config.to_string_lossy().into_owned(),
        out.to_string_lossy().into_owned(),
    );
    let record = record_args(&config_text, &out_text, &url, "recorder-kill", "pc-1");
    let started = tokio::time::Instant::now();
    let serve = serve_node(&url, "recorder-kill", "web", None, &serve_out, &serve_log);
    let mut recorder = touchmove(&record, &[], &log);

    tokio::time::sleep_until(started + Duration::from_secs(4)).await;
    let before_kill = game_file(&out, 1).map_or(0, |t| plies(&t));
    recorder.kill().expect("SIGKILL");
    recorder.wait().unwrap();
    tokio::time::sleep_until(started + Duration::from_secs(5)).await;
    let recorder = touchmove(&record, &[], &log);

    round_played(&boards).await;
    stop(recorder);
    let differing = wait_identical(
        &serve_out,
        &[(&out, (1..=BOARDS).collect())],
        Duration::from_secs(20),
    );
    stop(serve);
    let logs = recovered_exactly(
        dir.path(),
        (&out, &serve_out),
        &played,
        &differing,
        before_kill,
        "the recorder",
        "the serve node and the restarted recorder",
    );
    let recorder_log = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        recorder_log
            .lines()
            .filter(|l| l.starts_with("touchmove record: cluster: connected"))
            .count(),
        2,
        "the recorder forwarded before the kill and after its restart\n{logs}"
    );
    drop(boards);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serve_node_killed_and_restarted_catches_up_exactly() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let url = nats.url();
    let (boards, played, config) = short_round(dir.path(), "");
    let out = dir.path().join("pc");
    let serve_out = dir.path().join("serve");
    let log = dir.path().join("pc.log");
    let serve_log = dir.path().join("serve.log");
    let (config_text, out_text) = (
        config.to_string_lossy().into_owned(),
        out.to_string_lossy().into_owned(),
    );
    let record = record_args(&config_text, &out_text, &url, "serve-kill", "pc-1");
    let started = tokio::time::Instant::now();
    let listen = Some("127.0.0.1:0");
    let mut serve = serve_node(&url, "serve-kill", "web", listen, &serve_out, &serve_log);
    let recorder = touchmove(&record, &[], &log);

    tokio::time::sleep_until(started + Duration::from_secs(4)).await;
    let before_kill = game_file(&serve_out, 1).map_or(0, |t| plies(&t));
    serve.kill().expect("SIGKILL");
    serve.wait().unwrap();
    tokio::time::sleep_until(started + Duration::from_secs(6)).await;
    let serve = serve_node(&url, "serve-kill", "web", listen, &serve_out, &serve_log);

    round_played(&boards).await;
    stop(recorder);
    let differing = wait_identical(
        &serve_out,
        &[(&out, (1..=BOARDS).collect())],
        Duration::from_secs(20),
    );
    stop(serve);
    let logs = recovered_exactly(
        dir.path(),
        (&out, &serve_out),
        &played,
        &differing,
        before_kill,
        "the node",
        "the restarted serve node and the recorder",
    );
    let serve_text = std::fs::read_to_string(&serve_log).unwrap_or_default();
    assert_eq!(
        serve_text
            .lines()
            .filter(|l| l.starts_with("touchmove serve: cluster: reading")
                && l.contains("from the first message"))
            .count(),
        2,
        "the node read the stream from its start twice\n{logs}"
    );
    drop(boards);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_leader_of_a_three_node_cluster_killed_for_the_rest_of_the_round() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut servers = cluster_support::nats_cluster(dir.path());
    let urls: Vec<String> = servers.iter().map(NatsServer::url).collect();
    for url in &urls {
        assert!(
            jetstream_ready(url, Duration::from_secs(30)).await,
            "{url} of the 3-node cluster has JetStream\n{}",
            logs(dir.path(), &["n1/nats.log", "n2/nats.log", "n3/nats.log"])
        );
    }
    let (boards, played, config) = short_round(dir.path(), "\n[cluster]\nreplicas = 3\n");
    let out = dir.path().join("pc");
    let serve_out = dir.path().join("serve");
    let log = dir.path().join("pc.log");
    let serve_log = dir.path().join("serve.log");
    let (config_text, out_text, serve_text) = (
        config.to_string_lossy().into_owned(),
        out.to_string_lossy().into_owned(),
        serve_out.to_string_lossy().into_owned(),
    );
    let with_urls = |mut args: Vec<String>| {
        for u in &urls {
            args.extend(["--cluster".to_string(), u.clone()]);
        }
        args
    };
    let record = with_urls(
        [
            "record",
            "--config",
            &config_text,
            "--out",
            &out_text,
            "--no-server",
            "--cluster-event",
            "r3",
            "--cluster-member",
            "pc-1",
        ]
        .map(String::from)
        .to_vec(),
    );
    let serve_args = with_urls(
        [
            "serve",
            "--config",
            &config_text,
            "--out",
            &serve_text,
            "--no-server",
            "--cluster-event",
            "r3",
            "--cluster-member",
            "web",
        ]
        .map(String::from)
        .to_vec(),
    );
    let recorder = touchmove(&as_str(&record), &[], &log);
    let serve = touchmove(&as_str(&serve_args), &[], &serve_log);

    let (replicas, leader) = stream_cluster(&urls, "r3", Duration::from_secs(20))
        .await
        .unwrap_or_else(|| {
            panic!(
                "the stream exists in the cluster\n{}",
                logs(dir.path(), &["pc.log", "serve.log"])
            )
        });
    assert_eq!(
        replicas, 3,
        "the stream has 3 replicas ([cluster] replicas = 3)"
    );
    // Killed once the round is well under way, on the node leading the stream.
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    while game_file(&serve_out, 1).map_or(0, |t| plies(&t)) < 6 {
        assert!(
            tokio::time::Instant::now() < until,
            "the serve node shows moves before the kill\n{}",
            logs(dir.path(), &["pc.log", "serve.log"])
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let before_kill = game_file(&out, 1).map_or(0, |t| plies(&t));
    let killed = leader
        .strip_prefix('n')
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| (1..=3).contains(n))
        .unwrap_or_else(|| panic!("the stream's leader is one of n1..n3, not {leader:?}"));
    servers[killed - 1].kill();
    let alive: Vec<String> = (1..=3)
        .filter(|&n| n != killed)
        .map(|n| urls[n - 1].clone())
        .collect();

    round_played(&boards).await;
    // The recorder keeps running while the two servers left elect a new stream leader and
    // its forwarder flushes what waited meanwhile.
    let differing = wait_identical(
        &serve_out,
        &[(&out, (1..=BOARDS).collect())],
        Duration::from_secs(60),
    );
    stop(recorder);
    stop(serve);
    recovered_exactly(
        dir.path(),
        (&out, &serve_out),
        &played,
        &differing,
        before_kill,
        &leader,
        "the serve node and the recorder",
    );
    let (_, new_leader) = stream_cluster(&alive, "r3", Duration::from_secs(10))
        .await
        .expect("the two servers left still hold the stream");
    assert_ne!(new_leader, leader, "another server leads the stream now");
    drop(boards);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_lost_its_state_mid_round_loses_nothing() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::start(dir.path());
    let url = nats.url();
    let (boards, played, config) = short_round(dir.path(), "");
    // A second PC with a short game, done before the loss: the stream then held its entries
    // too, more than the first PC's journal alone fills again.
    let early = played_round(1, SEED + 1, MAX_PAUSE_MS, 6_000);
    let early_dir = dir.path().join("early");
    std::fs::create_dir_all(&early_dir).unwrap();
    let (early_boards, early_ports) =
        cluster_support::spawn_cluster_boards(&early_dir, early.scripts.clone(), SPEED);
    let early_config = event_file(dir.path(), "early.toml", BOARDS + 1, &early_ports);
    let out = dir.path().join("pc");
    let early_out = dir.path().join("early-pc");
    let serve_out = dir.path().join("serve");
    let text = |p: &std::path::Path| p.to_string_lossy().into_owned();
    let (config_text, out_text, early_text, early_out_text) = (
        text(&config),
        text(&out),
        text(&early_config),
        text(&early_out),
    );
    let event = "lost-state";
    let serve = serve_node(
        &url,
        event,
        "web",
        None,
        &serve_out,
        &dir.path().join("serve.log"),
    );
    let recorder = touchmove(
        &record_args(&config_text, &out_text, &url, event, "pc-1"),
        &[],
        &dir.path().join("pc.log"),
    );
    let early_recorder = touchmove(
        &record_args(&early_text, &early_out_text, &url, event, "pc-2"),
        &[],
        &dir.path().join("early.log"),
    );
    let logs = || logs(dir.path(), &["pc.log", "early.log", "serve.log"]);
    round_played(&early_boards).await;
    // The early game must be in the stream before the loss (the serve node reading it is the
    // proof): on a loaded machine its last entries may still be on their way.
    assert_played(
        &[("the serve node before the loss", &serve_out)],
        BOARDS + 1,
        &early.moves,
        Duration::from_secs(60),
        logs,
    );
    stop(early_recorder);
    let before_loss = game_file(&out, 1).map_or(0, |t| plies(&t));
    nats.lose_state();

    round_played(&boards).await;
    stop(recorder);
    assert_played(
        &[("the recorder", &out), ("the serve node", &serve_out)],
        1,
        &played,
        Duration::from_secs(20),
        logs,
    );
    assert_played(
        &[
            ("the early recorder", &early_out),
            ("the serve node", &serve_out),
        ],
        BOARDS + 1,
        &early.moves,
        Duration::from_secs(5),
        logs,
    );
    stop(serve);
    let final_plies = game_file(&out, 1).map_or(0, |t| plies(&t));
    assert!(
        0 < before_loss && before_loss < final_plies,
        "the server lost its state mid-round (board 1: {before_loss} of {final_plies} plies)\n{}",
        logs()
    );
    assert!(
        logs().contains("reading it again from the first message"),
        "the serve node said why it reads the stream again\n{}",
        logs()
    );
    drop((boards, early_boards));
}

/// The end of a fault test: the recorder's folder and the serve node's (`outs`) hold exactly
/// the moves `played` on every board, no board differs between them (`between` names them),
/// and `killed` was killed mid-round, after `before_kill` plies of board 1. Returns the
/// recorder's and serve node's logs.
fn recovered_exactly(
    dir: &std::path::Path,
    outs: (&std::path::Path, &std::path::Path),
    played: &[Vec<String>],
    differing: &[usize],
    before_kill: usize,
    killed: &str,
    between: &str,
) -> String {
    let logs = logs(dir, &["pc.log", "serve.log"]);
    assert_played(
        &[("the recorder", outs.0), ("the serve node", outs.1)],
        1,
        played,
        Duration::from_secs(5),
        || logs.clone(),
    );
    assert!(
        differing.is_empty(),
        "boards {differing:?} differ between {between}\n{logs}"
    );
    let final_plies = game_file(outs.0, 1).map_or(0, |t| plies(&t));
    assert!(
        0 < before_kill && before_kill < final_plies,
        "{killed} was killed mid-round (board 1: {before_kill} of {final_plies} plies)\n{logs}"
    );
    logs
}

/// True once the server at `url` answers JetStream requests (its cluster has elected a
/// meta leader), false after `limit`.
async fn jetstream_ready(url: &str, limit: Duration) -> bool {
    use async_nats::jetstream::context::GetStreamErrorKind;
    let until = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < until {
        if let Ok(client) = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(2))
            .connect(url)
            .await
        {
            // "No such stream" is an answer of the JetStream API, a timeout is not.
            match async_nats::jetstream::new(client)
                .get_stream("TOUCHMOVE_readiness")
                .await
            {
                Ok(_) => return true,
                Err(e) if matches!(e.kind(), GetStreamErrorKind::JetStream(_)) => return true,
                Err(_) => {}
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    false
}

/// The replicas and the leader's server name of the event's stream, once it exists and has a
/// leader (`None` after `limit`).
async fn stream_cluster(urls: &[String], event: &str, limit: Duration) -> Option<(usize, String)> {
    let until = tokio::time::Instant::now() + limit;
    let addrs: Vec<async_nats::ServerAddr> = urls.iter().filter_map(|u| u.parse().ok()).collect();
    while tokio::time::Instant::now() < until {
        if let Ok(client) = async_nats::ConnectOptions::new()
            .connection_timeout(Duration::from_secs(2))
            .connect(addrs.clone())
            .await
        {
            let js = async_nats::jetstream::new(client);
            let name = touchmove::cluster::wire::stream_name(event);
            if let Ok(mut stream) = js.get_stream(&name).await
                && let Ok(info) = stream.info().await
                && let Some(leader) = info.cluster.as_ref().and_then(|c| c.leader.clone())
            {
                return Some((info.config.num_replicas, leader));
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    None
}

/// The arguments as `&str`.
fn as_str(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}
