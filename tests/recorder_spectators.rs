//! Spectators never starve recording: a recorder whose web server is flooded with 20,000
//! connections that never send a request, on top of 1,000 event-stream clients, records its
//! boards exactly, and every stream client still follows every board to its last move.
//!
//! The numbers. The recorder runs as a child process started with an open-file limit of
//! 4,096 (soft) and 20,000 (hard, this machine's). It raises the soft limit to 20,000 and says
//! so; its connection cap is then 20,000 − 1,024 = 18,976, the 1,024 descriptors left being
//! what recording needs (serial ports, journal, PGN files). The test offers 1,000 + 20,000 =
//! 21,000 connections, more than the 20,000 descriptors the recorder has: without a cap it
//! would run out of descriptors (accepting fails, PGN files and ports cannot be opened). With
//! it, the cap refuses about 2,024 of them with a 503 and the fd limit is never reached
//! (the server counts no accept that failed for want of a descriptor). The boards are plugged
//! in only once the recorder says its web server is full, so every move is played while it
//! is at its cap, however slowly the machine accepts the flood. Connections that never send
//! a request are closed by the header timeout and reconnect, as a hostile client would. No
//! process here may hold
//! 21,000 sockets (the hard limit is 20,000 and cannot be raised in a container without
//! CAP_SYS_RESOURCE), so the idle connections come from two helper processes of 10,000 each —
//! this test binary started again with `TOUCHMOVE_TEST_FLOOD` set, which is why it has its
//! own `main` (`harness = false`) — and the 1,000 stream clients from the test itself.

#[path = "support/recorder.rs"]
mod recorder_support;

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use recorder_support::{read_board, stop, uci_moves};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use touchmove::bench::{ScriptGame, fixture_games, plain_timeline, spawn_boards};
use touchmove::sim::virtual_board::timeline::Pace;

const BOARDS: usize = 4;
const PLIES: usize = 50;
const SSE_CLIENTS: usize = 1_000;
const IDLE_CONNECTIONS: usize = 20_000;
/// Connections a flood helper opens at once: more would overflow the listen backlog, and
/// the dropped SYNs' retries (1 s, 3 s, …) would spread the flood beyond the header timeout.
const CONNECTS_IN_FLIGHT: usize = 128;
/// Tells this binary to be a flood helper: `ADDR COUNT`.
const FLOOD_ENV: &str = "TOUCHMOVE_TEST_FLOOD";
/// The recorder's open-file limits at its start (soft, hard): 4,096 and 20,000, or this
/// machine's hard limit where it is lower (the offer of 21,000 connections still exceeds it).
fn recorder_files() -> (u64, u64) {
    let hard = hard_file_limit();
    (4_096.min(hard), 20_000.min(hard))
}

/// This process's hard open-file limit.
fn hard_file_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) },
        0
    );
    limit.rlim_max
}

/// Helper processes holding the idle connections, each within the hard limit (with room
/// for its own files).
fn flood_processes() -> usize {
    let per_process = (hard_file_limit() as usize).saturating_sub(256).max(1_000);
    IDLE_CONNECTIONS.div_ceil(per_process).max(2)
}
/// The recorder's header timeout: long enough that the flood, opened at the pace a small
/// machine accepts connections (a few hundred a second on two busy cores), is all open at
/// once (the 10 s default lets the first ones go before the last arrive); the timeout itself
/// is tested in `tests/server/connections.rs`.
const HEADER_TIMEOUT_SECS: u64 = 120;
/// How long the flood may take to fill the server to its cap.
const FILL_LIMIT: Duration = Duration::from_secs(180);
/// What the recorder's cap must be: its hard limit less the descriptors kept for recording.
fn expected_cap() -> usize {
    recorder_files().1 as usize - 1_024
}

fn games() -> Vec<ScriptGame> {
    let all = fixture_games();
    let games: Vec<ScriptGame> = all
        .iter()
        .filter(|g| g.moves_uci.len() >= PLIES)
        .take(BOARDS)
        .cloned()
        .map(|mut g| {
            g.moves_uci.truncate(PLIES);
            g
        })
        .collect();
    assert_eq!(
        games.len(),
        BOARDS,
        "the fixture has {BOARDS} games of {PLIES} plies"
    );
    games
}

fn event_file(dir: &Path, ports: &[PathBuf]) -> PathBuf {
    let mut text = String::from("event = \"Spectators\"\nround = 1\ntime_control = \"600\"\n");
    for (i, p) in ports.iter().enumerate() {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"W{i}\" }}\nblack = {{ name = \"B{i}\" }}\n",
            i + 1,
            p.display()
        ));
    }
    let path = dir.join("event.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn start_recorder(dir: &Path, config: &Path) -> Child {
    use std::os::unix::process::CommandExt;
    let log = std::fs::File::create(dir.join("recorder.log")).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_touchmove"));
    command
        .arg("record")
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(dir.join("out"))
        .args(["--listen", "127.0.0.1:0"])
        .args(["--header-timeout", &HEADER_TIMEOUT_SECS.to_string()])
        .stdout(Stdio::null())
        .stderr(log);
    // SAFETY: only setrlimit, which is async-signal-safe, runs in the child.
    let (soft, hard) = recorder_files();
    unsafe {
        command.pre_exec(move || {
            let limit = libc::rlimit {
                rlim_cur: soft,
                rlim_max: hard,
            };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    command.spawn().expect("the touchmove binary starts")
}

/// The recorder process, killed if the test fails before stopping it.
struct Stopped(Option<Child>);

impl Drop for Stopped {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("recorder.log")).unwrap_or_default()
}

fn wait_for_address(dir: &Path) -> SocketAddr {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let text = log(dir);
        if let Some(addr) = text
            .split("live at http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse().ok())
        {
            return addr;
        }
        assert!(Instant::now() < until, "the recorder did not start: {text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An event-stream client of round 1: the highest ply it has seen of each board.
async fn follow(addr: SocketAddr, stop: Arc<AtomicBool>) -> Result<Vec<u64>, String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream
        .write_all(
            b"GET /api/round/1/stream HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n\r\n",
        )
        .await
        .map_err(|e| format!("request: {e}"))?;
    let mut plies = vec![0u64; BOARDS];
    let mut pending = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let mut head_seen = false;
    while !stop.load(Ordering::Relaxed) {
        let n = match tokio::time::timeout(Duration::from_millis(500), stream.read(&mut buf)).await
        {
            Err(_) => continue,
            Ok(Ok(0)) => return Err("the server closed the event stream".to_string()),
            Ok(Ok(n)) => n,
            Ok(Err(e)) => return Err(format!("read: {e}")),
        };
        pending.extend_from_slice(&buf[..n]);
        if !head_seen {
            let text = String::from_utf8_lossy(&pending);
            if !text.starts_with("HTTP/1.1 200") {
                if text.contains("\r\n\r\n") {
                    return Err(format!("refused: {}", text.lines().next().unwrap_or("")));
                }
                continue;
            }
            head_seen = true;
        }
        // Whole lines only; chunk-size lines of the chunked encoding are not `data:` lines.
        while let Some(end) = pending.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = pending.drain(..=end).collect();
            let Some(data) = line.strip_prefix(b"data: ") else {
                continue;
            };
            let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) else {
                continue;
            };
            let summaries = match json.get("games") {
                Some(serde_json::Value::Array(games)) => games.clone(),
                _ => json.get("game").cloned().into_iter().collect(),
            };
            for game in summaries {
                let board = game["board"].as_u64().unwrap_or(0) as usize;
                if (1..=BOARDS).contains(&board) {
                    let ply = game["ply"].as_u64().unwrap_or(0);
                    plies[board - 1] = plies[board - 1].max(ply);
                }
            }
        }
    }
    Ok(plies)
}

/// Counts of the idle flood.
#[derive(Default, Debug)]
struct Flood {
    connected: AtomicU64,
    refused: AtomicU64,
    closed_by_server: AtomicU64,
    failed: AtomicU64,
    /// Clients that were between connections (after a failed connect or a close) when
    /// told to stop: their last attempt never reached the server.
    unconnected_at_stop: AtomicU64,
}

/// A client that connects and never sends a request; when the server closes the connection
/// it connects again, until `stop`. A refusal (503) ends it.
async fn idle_client(
    addr: SocketAddr,
    flood: Arc<Flood>,
    stop: Arc<AtomicBool>,
    connecting: Arc<tokio::sync::Semaphore>,
) {
    while !stop.load(Ordering::Relaxed) {
        let permit = connecting.acquire().await.expect("never closed");
        let connected = TcpStream::connect(addr).await;
        drop(permit);
        let mut stream = match connected {
            Ok(s) => s,
            Err(_) => {
                flood.failed.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(500)).await;
                continue;
            }
        };
        flood.connected.fetch_add(1, Ordering::Relaxed);
        let mut buf = [0u8; 256];
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            match tokio::time::timeout(Duration::from_millis(500), stream.read(&mut buf)).await {
                Err(_) => continue,
                Ok(Ok(n)) if n > 0 && buf[..n].starts_with(b"HTTP/1.1 503") => {
                    flood.refused.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                Ok(_) => {
                    flood.closed_by_server.fetch_add(1, Ordering::Relaxed);
                    break;
                }
            }
        }
    }
    flood.unconnected_at_stop.fetch_add(1, Ordering::Relaxed);
}

/// The flood helper: `count` idle clients of `addr` until stdin closes; then prints
/// `connected refused closed_by_server failed unconnected_at_stop` on stdout.
fn flood_helper(spec: &str) {
    let mut words = spec.split_whitespace();
    let addr: SocketAddr = words
        .next()
        .and_then(|a| a.parse().ok())
        .expect("ADDR COUNT");
    let count: usize = words
        .next()
        .and_then(|c| c.parse().ok())
        .expect("ADDR COUNT");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let flood = Arc::new(Flood::default());
    let stop = Arc::new(AtomicBool::new(false));
    let connecting = Arc::new(tokio::sync::Semaphore::new(CONNECTS_IN_FLIGHT));
    runtime.block_on(async {
        let tasks: Vec<_> = (0..count)
            .map(|_| {
                tokio::spawn(idle_client(
                    addr,
                    flood.clone(),
                    stop.clone(),
                    connecting.clone(),
                ))
            })
            .collect();
        tokio::task::spawn_blocking(|| {
            let mut rest = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut rest);
        })
        .await
        .unwrap();
        stop.store(true, Ordering::Relaxed);
        for task in tasks {
            let _ = task.await;
        }
    });
    println!(
        "{} {} {} {} {}",
        flood.connected.load(Ordering::Relaxed),
        flood.refused.load(Ordering::Relaxed),
        flood.closed_by_server.load(Ordering::Relaxed),
        flood.failed.load(Ordering::Relaxed),
        flood.unconnected_at_stop.load(Ordering::Relaxed)
    );
}

/// Starts a flood helper of `count` idle clients of `addr`.
fn start_flood(addr: SocketAddr, count: usize) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .env(FLOOD_ENV, format!("{addr} {count}"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("the flood helper starts")
}

/// Stops a flood helper; its counts.
fn finish_flood(mut helper: Child) -> Flood {
    drop(helper.stdin.take());
    let output = helper.wait_with_output().unwrap();
    let counts: Vec<u64> = String::from_utf8_lossy(&output.stdout)
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(
        counts.len(),
        5,
        "the flood helper reports its counts: {output:?}"
    );
    Flood {
        connected: AtomicU64::new(counts[0]),
        refused: AtomicU64::new(counts[1]),
        closed_by_server: AtomicU64::new(counts[2]),
        failed: AtomicU64::new(counts[3]),
        unconnected_at_stop: AtomicU64::new(counts[4]),
    }
}

fn main() {
    // The helpers hold 10,000 sockets each, the test 1,000.
    touchmove::server::connections::raise_open_file_limit();
    if let Ok(spec) = std::env::var(FLOOD_ENV) {
        flood_helper(&spec);
        return;
    }
    let name = "twenty_thousand_idle_connections_and_a_thousand_streams_leave_recording_exact";
    if std::env::args()
        .skip(1)
        .any(|a| !a.starts_with('-') && !name.contains(a.as_str()))
    {
        return;
    }
    println!("test {name} ...");
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(twenty_thousand_idle_connections_and_a_thousand_streams_leave_recording_exact());
    println!("test {name} ... ok");
}

/// The kernel's count of connections dropped from full listen queues (`ListenDrops` in
/// `/proc/net/netstat`). A handshake whose last ACK is dropped looks connected to the
/// client but never reaches the server's `accept`.
fn listen_drops() -> u64 {
    let netstat = std::fs::read_to_string("/proc/net/netstat").unwrap_or_default();
    let mut tcp_ext = netstat.lines().filter(|l| l.starts_with("TcpExt:"));
    let (Some(names), Some(values)) = (tcp_ext.next(), tcp_ext.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(name, _)| *name == "ListenDrops")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0)
}

/// The body of `GET path`, or the whole answer if it has none.
fn get(addr: SocketAddr, path: &str) -> String {
    match recorder_support::http_get(addr, path) {
        (_, body) if !body.is_empty() => body,
        (head, _) => head,
    }
}

async fn twenty_thousand_idle_connections_and_a_thousand_streams_leave_recording_exact() {
    let dir = tempfile::tempdir().unwrap();
    let games = games();
    let pace = Pace {
        think_ms: 300,
        step_ms: 60,
    };
    let boards = spawn_boards(
        dir.path(),
        games.iter().map(|g| plain_timeline(g, pace)).collect(),
        1.0,
        600_000,
        0,
    )
    .unwrap();
    // The recorder is told of ports that appear only when the server is full; until then it
    // waits for its boards as it would for unplugged ones.
    let ports: Vec<PathBuf> = (1..=BOARDS)
        .map(|k| dir.path().join(format!("plug-{k}")))
        .collect();
    let config = event_file(dir.path(), &ports);
    let mut recorder = Stopped(Some(start_recorder(dir.path(), &config)));
    let addr = wait_for_address(dir.path());
    let started = log(dir.path());
    assert!(
        started.contains(&format!(
            "open-file limit raised from {} to {}",
            recorder_files().0,
            recorder_files().1
        )),
        "{started}"
    );

    let drops_before = listen_drops();
    let stop_all = Arc::new(AtomicBool::new(false));
    let followers: Vec<_> = (0..SSE_CLIENTS)
        .map(|_| tokio::spawn(follow(addr, stop_all.clone())))
        .collect();
    let flooders = flood_processes();
    let helpers: Vec<Child> = (0..flooders)
        .map(|_| start_flood(addr, IDLE_CONNECTIONS.div_ceil(flooders)))
        .collect();

    let full = format!("web server full: {} connections open", expected_cap());
    let until = Instant::now() + FILL_LIMIT;
    while !log(dir.path()).contains(&full) {
        assert!(
            Instant::now() < until,
            "the flood did not fill the server to its cap in {FILL_LIMIT:?}; listen-queue \
             drops {}:\n{}",
            listen_drops().saturating_sub(drops_before),
            log(dir.path())
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (board, port) in boards.iter().zip(&ports) {
        std::os::unix::fs::symlink(board.path(), port).unwrap();
    }
    for b in &boards {
        if tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .is_err()
        {
            panic!(
                "{} did not finish its game:\n{}",
                b.path().display(),
                log(dir.path())
            );
        }
    }
    // The last moves reach the files and the streams.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let during = log(dir.path());
    stop_all.store(true, Ordering::Relaxed);
    let floods: Vec<Flood> = helpers.into_iter().map(finish_flood).collect();
    let flood_sum = |count: fn(&Flood) -> &AtomicU64| -> u64 {
        floods
            .iter()
            .map(|f| count(f).load(Ordering::Relaxed))
            .sum()
    };
    let (refused, closed, failed, unconnected) = (
        flood_sum(|f| &f.refused),
        flood_sum(|f| &f.closed_by_server),
        flood_sum(|f| &f.failed),
        flood_sum(|f| &f.unconnected_at_stop),
    );
    let mut seen = Vec::new();
    for task in followers {
        seen.push(task.await.expect("the stream client ran"));
    }

    let out = dir.path().join("out");
    for (k, game) in games.iter().enumerate() {
        assert_eq!(
            uci_moves(&read_board(&out, k + 1)),
            game.moves_uci,
            "board {} is recorded exactly\n{during}",
            k + 1
        );
    }
    let expected = vec![PLIES as u64; BOARDS];
    let behind: Vec<_> = seen
        .iter()
        .enumerate()
        .filter(|(_, s)| s.as_ref() != Ok(&expected))
        .collect();
    assert!(
        behind.is_empty(),
        "{} of {SSE_CLIENTS} stream clients did not follow every board to ply {PLIES}, e.g. \
         {:?}",
        behind.len(),
        behind.first()
    );

    // The flood's sockets are closed; the server sees it within moments.
    let until = Instant::now() + Duration::from_secs(10);
    let status: serde_json::Value = loop {
        let body = get(addr, "/api/status");
        match serde_json::from_str(&body) {
            Ok(status) => break status,
            Err(e) => assert!(Instant::now() < until, "/api/status: {e}: {body}\n{during}"),
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let web = &status["web"];
    let expected_cap = expected_cap();
    assert_eq!(web["max_open"], expected_cap, "{status}");
    let offered = (SSE_CLIENTS + IDLE_CONNECTIONS) as u64;
    let (accepted_by_server, refused_by_server) = (
        web["accepted"].as_u64().unwrap(),
        web["refused"].as_u64().unwrap(),
    );
    // Every connection offered was served or refused by the cap, except those that never
    // reached the server: dropped from a full listen queue, or not made when the flood
    // stopped. (A few of the flood may have been refused after a slot was freed, so the
    // refusals are about, not exactly, 21,000 − 18,976.)
    let dropped = listen_drops().saturating_sub(drops_before);
    assert!(
        refused_by_server > 0
            && accepted_by_server + refused_by_server + dropped + unconnected >= offered,
        "the cap refused what the fd limit could not hold: {status}; listen-queue drops \
         {dropped}, flood clients unconnected at stop {unconnected}, failed connects {failed}"
    );
    assert_eq!(
        web["out_of_descriptors"], 0,
        "the fd limit was never reached: {status}"
    );
    assert!(
        refused > 0 && refused <= refused_by_server,
        "the flood saw: refused {refused}, closed by the server {closed}, failed {failed}"
    );
    println!(
        "web connections: {web}; the flood saw {refused} refused, {closed} closed by the server, \
         {failed} failed connects"
    );
    let text = log(dir.path());
    assert!(
        text.contains(&format!(
            "web server full: {expected_cap} connections open (the cap)"
        )),
        "the status line said the server was full\n{text}"
    );
    for bad in [
        "CANNOT WRITE",
        "no file descriptor left",
        "Too many open files",
    ] {
        assert!(!text.contains(bad), "{bad:?} in the log:\n{text}");
    }
    stop(recorder.0.take().expect("the recorder runs"));
}
