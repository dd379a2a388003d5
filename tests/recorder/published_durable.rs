//! Nothing is published before it is durable: a `touchmove record` process is SIGKILLed while
//! many boards move at the same moment (their entries group-committed together), and every
//! move a spectator saw on the SSE stream before the kill is in the journal and in the board's
//! PGN file after the restart.
//!
//! Forty-eight virtual boards play the fixture games in step, so that their moves arrive in
//! bursts and share the journal's syncs. The recorder is killed the instant the spectator sees
//! the fourth move of a burst, while the other boards' entries of that burst wait for the sync
//! of the earlier ones; that three times, each time restarted on the same journal.
//!
//! A SIGKILL keeps what SQLite has written (the page cache survives the process), so only a
//! move published while its entry still waited in the writer's queue could be lost: the
//! recorder runs on a slow disk ([`SLOW_DISK_ENV`]), which widens that window to tens of
//! milliseconds, so that a recorder that published before committing fails this test.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::recorder_support::{read_board, record_logged_with_env, state_dir, stop, uci_moves};
use crate::server_support::take_sse_event;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::Notify;
use touchmove::bench::boards_per_recorder::blitz_scripts;
use touchmove::bench::spawn_boards;
use touchmove::record::pgn::read_games;
use touchmove::store::SLOW_DISK_ENV;
use touchmove::store::{BoardKey, Journal};

const BOARDS: usize = 48;
/// The kill comes when the spectator sees this move of a burst: the writer is then syncing
/// the burst's earlier entries while the later ones queue.
const KILL_AT_MOVE: usize = 4;
const KILLS: usize = 3;
/// How long each recorder records before the kill waits for the next burst.
const RECORDING: Duration = Duration::from_millis(1500);
/// How long the journal's writer waits before each group.
const SLOW_DISK_MS: &str = "15";

/// A move as the spectator saw it: board, ply, UCI.
type SeenMove = (u32, u32, String);

fn free_address() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

fn write_config(path: &Path, ports: &[std::path::PathBuf]) {
    let mut text = String::from(
        "event = \"Published is durable\"\nsite = \"Kill -9\"\nround = 1\ntime_control = \"180+2\"\n",
    );
    for (i, port) in ports.iter().enumerate() {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"White, {}\" }}\nblack = {{ name = \"Black, {}\" }}\n",
            i + 1,
            port.display(),
            i + 1,
            i + 1
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// Reads the round's public stream at `addr` (reconnecting while the recorder is down) and
/// notes every `move` event, waking `moved` at each.
async fn watch_moves(addr: SocketAddr, seen: Arc<Mutex<Vec<SeenMove>>>, moved: Arc<Notify>) {
    loop {
        let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        let request =
            "GET /api/round/1/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n";
        if stream.write_all(request.as_bytes()).await.is_err() {
            continue;
        }
        let mut buffer = String::new();
        let mut chunk = vec![0u8; 65536];
        loop {
            let n = match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            buffer.push_str(&String::from_utf8_lossy(&chunk[..n]));
            while let Some(event) = take_sse_event(&mut buffer) {
                if event.event != "move" {
                    continue;
                }
                let data: serde_json::Value = serde_json::from_str(&event.data).unwrap();
                let board = data["board"].as_u64().unwrap() as u32;
                let ply = data["event"]["ply"].as_u64().unwrap() as u32;
                let uci = data["event"]["uci"].as_str().unwrap().to_string();
                seen.lock().unwrap().push((board, ply, uci));
                moved.notify_one();
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn start(config: &Path, out: &Path, addr: SocketAddr, log: &Path) -> Child {
    record_logged_with_env(
        config,
        out,
        ["--listen", &addr.to_string()],
        log,
        &[(SLOW_DISK_ENV, SLOW_DISK_MS)],
    )
}

/// The moves of round 1 the journal holds, as (board, ply, UCI).
fn journalled_moves(journal: &Path) -> BTreeSet<SeenMove> {
    let journal = Journal::open_read_only(journal).unwrap();
    let mut moves = BTreeSet::new();
    for board in 1..=BOARDS as u32 {
        let key = BoardKey::Pairing { round: 1, board };
        for event in journal.events(&key).unwrap() {
            if let touchmove::act::Event::Move { ply, uci, .. } = event.value {
                moves.insert((board, ply, uci));
            }
        }
    }
    moves
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_move_seen_before_a_kill_is_in_the_journal_and_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let scripts = blitz_scripts(BOARDS, 400).unwrap();
    let boards = spawn_boards(dir.path(), scripts, 1.0, 180_000, 2_000).unwrap();
    let ports: Vec<_> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    let config = dir.path().join("event.toml");
    write_config(&config, &ports);
    let out = dir.path().join("out");
    let log = dir.path().join("recorder.log");
    let addr = free_address();

    let seen: Arc<Mutex<Vec<SeenMove>>> = Arc::default();
    let moved = Arc::new(Notify::new());
    let watcher = tokio::spawn(watch_moves(addr, seen.clone(), moved.clone()));
    let mut recorder = start(&config, &out, addr, &log);
    for _ in 0..KILLS {
        tokio::time::sleep(RECORDING).await;
        // A pause between two bursts, then the next burst's first move: the other boards'
        // entries of that burst are being committed.
        while tokio::time::timeout(Duration::from_millis(150), moved.notified())
            .await
            .is_ok()
        {}
        for _ in 0..KILL_AT_MOVE {
            tokio::time::timeout(Duration::from_secs(20), moved.notified())
                .await
                .expect("the spectator sees moves");
        }
        recorder.kill().expect("SIGKILL");
        recorder.wait().unwrap();
        // Before the restart, which reads the boards again and journals what they show:
        // everything the spectator saw is on disk already.
        let on_disk = journalled_moves(&state_dir(&out).join("journal.sqlite"));
        let seen_now: BTreeSet<SeenMove> = seen.lock().unwrap().iter().cloned().collect();
        let published_early: Vec<&SeenMove> = seen_now.difference(&on_disk).collect();
        assert!(
            published_early.is_empty(),
            "{} moves were seen on SSE but not in the journal when the recorder was killed: \
             {published_early:?}",
            published_early.len()
        );
        recorder = start(&config, &out, addr, &log);
    }
    tokio::time::sleep(RECORDING).await;
    stop(recorder);
    // The last stream is read to its end before the moves are counted.
    tokio::time::sleep(Duration::from_millis(300)).await;
    watcher.abort();
    drop(boards);

    let recorder_log = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(
        recorder_log.matches("recording board 1").count(),
        KILLS + 1,
        "every restart came up:\n{recorder_log}"
    );
    let seen: BTreeSet<SeenMove> = seen.lock().unwrap().iter().cloned().collect();
    assert!(
        seen.len() >= BOARDS * KILLS,
        "the spectator saw the boards move ({} moves)",
        seen.len()
    );
    let journalled = journalled_moves(&state_dir(&out).join("journal.sqlite"));
    let lost: Vec<&SeenMove> = seen.difference(&journalled).collect();
    assert!(
        lost.is_empty(),
        "{} of {} moves seen on SSE are not in the journal: {lost:?}",
        lost.len(),
        seen.len()
    );
    for board in 1..=BOARDS as u32 {
        let text = std::fs::read_to_string(out.join(format!("round-1/game-{board}.pgn")))
            .unwrap_or_default();
        assert!(read_games(&text).is_ok(), "board {board}'s file reads");
        let file = uci_moves(&read_board(&out, board as usize));
        for (_, ply, uci) in seen.iter().filter(|(b, ..)| *b == board) {
            assert_eq!(
                file.get(*ply as usize - 1),
                Some(uci),
                "board {board}: ply {ply} seen on SSE is not in game-{board}.pgn ({file:?})"
            );
        }
    }
}
