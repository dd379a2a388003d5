//! Faults of an event on several PCs: the cluster is unreachable when the recorder starts
//! (it records locally and forwards once the server is up), the nats-server is killed and
//! restarted mid-round (recording goes on, the backlog is flushed in order), then the
//! recorder is SIGKILLed and restarted. A `touchmove serve` node runs throughout; at the end its `game-K.pgn` files are
//! byte-identical to the recorder's: no move lost, none duplicated.

mod cluster_support;
#[path = "recorder_support/mod.rs"]
mod recorder_support;

use std::path::PathBuf;
use std::time::Duration;

use cluster_support::{
    NatsServer, event_file, game_file, plies, record_args, serve_node, short_scripts, touchmove,
    wait_identical,
};
use recorder_support::stop;
use touchmove::recorder::bench::spawn_boards;

const BOARDS: usize = 3;
const SPEED: f64 = 4.0;
const MAX_PAUSE_MS: u64 = 600;
/// The first 60 s of each game: 15 s of wall time at 4×.
const SCRIPT_MS: u64 = 60_000;
const SEED: u64 = 20_261_126;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_outage_and_recorder_kill_lose_and_duplicate_nothing() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::reserve(dir.path(), &[]);
    let url = nats.url();
    let boards = spawn_boards(
        dir.path(),
        short_scripts(BOARDS, SEED, MAX_PAUSE_MS, SCRIPT_MS),
        SPEED,
        90 * 60 * 1000,
        30_000,
    )
    .unwrap();
    let ports: Vec<PathBuf> = boards.iter().map(|b| b.path().to_path_buf()).collect();
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
    nats.kill();
    tokio::time::sleep_until(at(9.0)).await;
    let during_outage = game_file(&out, 1).map_or(0, |t| plies(&t));
    nats.restart();

    tokio::time::sleep_until(at(11.5)).await;
    recorder.kill().expect("SIGKILL");
    recorder.wait().unwrap();
    recorder = touchmove(&record, &[], &log);

    for b in &boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
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
    eprintln!("{logs}");
    let final_plies = game_file(&out, 1).map_or(0, |t| plies(&t));
    assert!(
        final_plies > during_outage && during_outage > 0,
        "board 1 recorded during the outage and after it ({during_outage} then {final_plies} \
         plies)\n{logs}"
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
