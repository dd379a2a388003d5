//! Helpers of the cluster tests: a private `nats-server -js` on a loopback port with its own
//! store directory, recorder and serve processes, and comparing PGN folders.

// Several test binaries include this module, each using a part of it.
#![allow(dead_code)]

mod server_binary;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use touchmove::board::kind::BoardKind;

/// A nats-server started by the test (never the machine's own).
pub struct NatsServer {
    child: Option<Child>,
    port: u16,
    store: PathBuf,
    log: PathBuf,
    options: Vec<String>,
    /// Whether the test asked for its port: its clients expect it there from then on.
    port_given: std::cell::Cell<bool>,
}

/// A loopback port free now, below the kernel's ephemeral range (where the ports of outgoing
/// connections and of `bind(0)` come from, so that no client of the test takes it before the
/// server binds it), and never handed out before by this process (tests run side by side).
fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    static GIVEN: std::sync::Mutex<Vec<u16>> = std::sync::Mutex::new(Vec::new());
    let ephemeral_from = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let (low, high) = (20_000u16, ephemeral_from.max(21_000));
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    for _ in 0..10_000 {
        // Each `RandomState` has keys of its own: an empty hash of it is a fresh random number.
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let port = low + (random % u64::from(high - low)) as u16;
        if !given.contains(&port) && TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.push(port);
            return port;
        }
    }
    panic!("no free loopback port in {low}..{high}")
}

impl NatsServer {
    /// Starts `nats-server -js` on a free loopback port, storing in `dir/js`.
    pub fn start(dir: &Path) -> NatsServer {
        let mut server = NatsServer::reserve(dir, &[]);
        server.restart();
        server
    }

    /// A server on a free loopback port, storing in `dir/js`, with `options` (e.g. `--user`),
    /// not started yet: [`NatsServer::restart`] starts it.
    pub fn reserve(dir: &Path, options: &[&str]) -> NatsServer {
        NatsServer {
            child: None,
            port: free_port(),
            store: dir.join("js"),
            log: dir.join("nats.log"),
            options: options.iter().map(|o| o.to_string()).collect(),
            port_given: std::cell::Cell::new(false),
        }
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port_given.set(true);
        self.port
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port())
    }

    /// Starts the server again on the same port and store (after [`NatsServer::kill`]). A
    /// server that finds its port taken (by a process the test does not know) moves to another
    /// one, unless the test already gave its port to clients.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "the server runs already");
        for _ in 0..5 {
            match self.start_once() {
                Ok(()) => return,
                Err(log) if !self.port_given.get() && log.contains("address already in use") => {
                    self.port = free_port();
                }
                Err(log) => panic!("nats-server on port {} did not start:\n{log}", self.port),
            }
        }
        panic!("nats-server found every port it tried taken");
    }

    /// Starts the server and waits until its log says it is ready (a client that reached the
    /// port might have reached another process): `Err` with what it logged if it exited first.
    fn start_once(&mut self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let logged_before = log.metadata().map(|m| m.len() as usize).unwrap_or(0);
        let logged_since = || {
            let text = std::fs::read(&self.log).unwrap_or_default();
            String::from_utf8_lossy(text.get(logged_before..).unwrap_or_default()).into_owned()
        };
        let mut child = Command::new(server_binary::nats_server())
            .args(["-js", "-a", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .arg("-sd")
            .arg(&self.store)
            .args(&self.options)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                let server = server_binary::nats_server().display();
                panic!("{server} does not start: {e}")
            });
        let until = Instant::now() + Duration::from_secs(10);
        loop {
            if child.try_wait().ok().flatten().is_some() {
                return Err(logged_since());
            }
            if logged_since().contains("Server is ready") {
                self.child = Some(child);
                return Ok(());
            }
            if Instant::now() >= until {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("not ready after 10 s\n{}", logged_since()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the server (SIGKILL), deletes its store (as a power cut may lose what was not
    /// synced to disk) and starts it again: its streams start again from sequence 1.
    pub fn lose_state(&mut self) {
        self.kill();
        std::fs::remove_dir_all(&self.store).expect("the server's store is deleted");
        self.restart();
    }

    /// Kills the server (SIGKILL).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.kill();
    }
}

thread_local! {
    /// Processes started by [`touchmove`] from this test's thread, killed by [`Reaper`] when
    /// the test fails. Per thread: the tests of one binary run side by side, and a failing
    /// test must not kill the processes of the others.
    static SPAWNED: std::cell::RefCell<Vec<u32>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Hold one for the test's duration: if the test panics, the touchmove processes it started
/// are killed instead of being left running.
pub struct Reaper;

impl Drop for Reaper {
    fn drop(&mut self) {
        let pids = SPAWNED.with(|s| std::mem::take(&mut *s.borrow_mut()));
        if std::thread::panicking() {
            for pid in pids {
                let pid = nix::unistd::Pid::from_raw(pid as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
}

/// Has [`Reaper`] kill `child` (started otherwise than by [`touchmove`]) if the test fails.
pub fn reap_on_failure(child: &Child) {
    SPAWNED.with(|s| s.borrow_mut().push(child.id()));
}

/// A touchmove process writing its stderr to `log`.
pub fn touchmove(args: &[&str], extra: &[&Path], log: &Path) -> Child {
    touchmove_with_env(args, extra, &[], log)
}

/// [`touchmove`] with variables `env` set in its environment.
pub fn touchmove_with_env(
    args: &[&str],
    extra: &[&Path],
    env: &[(&str, &str)],
    log: &Path,
) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(args)
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the touchmove binary starts");
    SPAWNED.with(|s| s.borrow_mut().push(child.id()));
    child
}

/// `touchmove record` of `config` into `out` (no web server) as recorder `member` of `event`
/// on the cluster at `url`.
pub fn record_args<'a>(
    config: &'a str,
    out: &'a str,
    url: &'a str,
    event: &'a str,
    member: &'a str,
) -> Vec<&'a str> {
    vec![
        "record",
        "--config",
        config,
        "--out",
        out,
        "--no-server",
        "--cluster",
        url,
        "--cluster-event",
        event,
        "--cluster-member",
        member,
    ]
}

/// A `touchmove serve` node `member` of `event` on the cluster at `url`, writing its PGN
/// folder to `out`; its web server listens on `listen`, or there is none.
pub fn serve_node(
    url: &str,
    event: &str,
    member: &str,
    listen: Option<&str>,
    out: &Path,
    log: &Path,
) -> Child {
    let mut args = vec![
        "serve",
        "--cluster",
        url,
        "--cluster-event",
        event,
        "--cluster-member",
        member,
    ];
    match listen {
        Some(addr) => args.extend(["--listen", addr]),
        None => args.push("--no-server"),
    }
    args.push("--out");
    touchmove(&args, &[out], log)
}

/// Starts one virtual board per script in `dir` (`board-K`), playing `speed` times faster than
/// the scripts, with the cluster tests' clock (90 minutes, 30 s a move); returns the boards and
/// their ports.
pub fn spawn_cluster_boards(
    dir: &Path,
    scripts: Vec<Vec<touchmove::board::Observation>>,
    speed: f64,
) -> (
    Vec<touchmove::sim::virtual_board::VirtualBoard>,
    Vec<PathBuf>,
) {
    let boards =
        touchmove::bench::spawn_boards(dir, scripts, speed, 90 * 60 * 1000, 30_000).unwrap();
    let ports = boards.iter().map(|b| b.path().to_path_buf()).collect();
    (boards, ports)
}

/// The realistic games of `boards` boards from `seed` as board scripts (pauses up to
/// `max_pause_ms`), cut to their first `script_ms`.
pub fn short_scripts(
    boards: usize,
    seed: u64,
    max_pause_ms: u64,
    script_ms: u64,
) -> Vec<Vec<touchmove::board::Observation>> {
    played_round(boards, seed, max_pause_ms, script_ms).scripts
}

/// Board scripts and the moves they play: what a test judges every record against.
pub struct PlayedRound {
    /// One script per board.
    pub scripts: Vec<Vec<touchmove::board::Observation>>,
    /// The moves (UCI) each board's script plays, in order.
    pub moves: Vec<Vec<String>>,
    /// For each board, the index in its script at which each ply's hands begin.
    pub ply_starts: Vec<Vec<usize>>,
}

impl PlayedRound {
    /// Makes the players of `board` (0-based) wait `pause_ms` before the first ply whose hands
    /// begin at or after `at_ms` of its script; returns that ply (0-based), the number of plies
    /// played before the pause.
    pub fn pause(&mut self, board: usize, at_ms: u64, pause_ms: u64) -> usize {
        let script = &mut self.scripts[board];
        let (ply, &from) = self.ply_starts[board]
            .iter()
            .enumerate()
            .find(|&(_, &at)| script.get(at).is_some_and(|o| o.t_ms >= at_ms))
            .expect("the script goes on after the pause");
        for o in &mut script[from..] {
            o.t_ms += pause_ms;
        }
        ply
    }
}

/// The realistic games of `boards` boards from `seed` as board scripts (pauses up to
/// `max_pause_ms`), each cut before the first move whose hands start after `script_ms`:
/// every move kept is played whole, so the moves each board plays are known.
pub fn played_round(boards: usize, seed: u64, max_pause_ms: u64, script_ms: u64) -> PlayedRound {
    use crate::recorder_support::{realistic_games, scripts};
    let games = realistic_games(boards, seed);
    let compressed = scripts(&games, max_pause_ms);
    let mut round = PlayedRound {
        scripts: Vec::new(),
        moves: Vec::new(),
        ply_starts: Vec::new(),
    };
    for (game, script) in games.iter().zip(compressed) {
        // The observation at which each ply's hands begin, in the compressed script.
        let ply_starts: Vec<usize> = game
            .ply_start_ms
            .iter()
            .map(|&start| {
                game.observations
                    .iter()
                    .position(|o| o.t_ms >= start)
                    .unwrap_or(script.len())
            })
            .collect();
        let cut = ply_starts
            .iter()
            .copied()
            .enumerate()
            .find(|&(_, at)| script.get(at).is_some_and(|o| o.t_ms > script_ms));
        let (plies, end) = cut.unwrap_or((game.moves_uci.len(), script.len()));
        let plies = plies.min(game.moves_uci.len());
        round.moves.push(game.moves_uci[..plies].to_vec());
        round.ply_starts.push(ply_starts[..plies].to_vec());
        round.scripts.push(script[..end].to_vec());
    }
    round
}

/// The moves (UCI) of the last game in `out/round-1/game-K.pgn`, if the file is there and
/// reads.
pub fn recorded_moves(out: &Path, board: usize) -> Option<Vec<String>> {
    let text = game_file(out, board)?;
    let games = touchmove::record::pgn::read_games(&text).ok()?;
    let game = games.last()?.to_game().ok()?;
    Some(game.moves().iter().map(|m| m.uci.clone()).collect())
}

/// Waits (up to `limit`) until the PGN folder `out` holds exactly the moves played on every
/// board: `moves[i]` on board `first + i`. Returns the boards that still differ, each with
/// what the folder holds.
pub fn wait_played(
    out: &Path,
    first: usize,
    moves: &[Vec<String>],
    limit: Duration,
) -> Vec<(usize, Option<Vec<String>>)> {
    let until = Instant::now() + limit;
    loop {
        let differing: Vec<(usize, Option<Vec<String>>)> = (first..)
            .zip(moves)
            .filter_map(|(k, played)| {
                let held = recorded_moves(out, k);
                (held.as_ref() != Some(played)).then_some((k, held))
            })
            .collect();
        if differing.is_empty() || Instant::now() >= until {
            return differing;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Asserts that every folder of `outs` (named) holds exactly the moves played on every board
/// (see [`wait_played`]); `logs` is added to the failure message.
pub fn assert_played(
    outs: &[(&str, &Path)],
    first: usize,
    moves: &[Vec<String>],
    limit: Duration,
    logs: impl Fn() -> String,
) {
    for (name, out) in outs {
        let differing = wait_played(out, first, moves, limit);
        if !differing.is_empty() {
            let detail: Vec<String> = differing
                .iter()
                .map(|(k, held)| {
                    format!(
                        "board {k}: played {:?}, {name} holds {held:?}",
                        moves[k - first]
                    )
                })
                .collect();
            panic!(
                "{name} does not hold the moves played:\n{}\n{}",
                detail.join("\n"),
                logs()
            );
        }
    }
}

/// Stops `child` with SIGTERM, as Ctrl-C does, and fails the test unless it exits cleanly
/// (status 0) within 10 s: a process that panics or hangs on shutdown is a failure, never
/// killed silently.
pub fn stop(mut child: Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let until = Instant::now() + Duration::from_secs(10);
    loop {
        match child.try_wait() {
            Ok(Some(status)) => {
                assert!(
                    status.success(),
                    "process {pid} exited badly after SIGTERM: {status}"
                );
                return;
            }
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("process {pid} did not stop within 10 s of SIGTERM");
            }
        }
    }
}

/// An event file for DGT boards `first..` on `ports`, round 1.
pub fn event_file(dir: &Path, name: &str, first: usize, ports: &[PathBuf]) -> PathBuf {
    let boards: Vec<(PathBuf, BoardKind)> =
        ports.iter().map(|p| (p.clone(), BoardKind::Dgt)).collect();
    event_file_of_kinds(dir, name, first, &boards)
}

/// An event file for boards `first..`, each on its port and of its kind, round 1. A Pegasus
/// gets the developer key `dir/pegasus.key` (any key opens the virtual one).
pub fn event_file_of_kinds(
    dir: &Path,
    name: &str,
    first: usize,
    boards: &[(PathBuf, BoardKind)],
) -> PathBuf {
    let mut text = String::from(
        "event = \"Cluster test\"\nsite = \"Loopback\"\nround = 1\ntime_control = \"5400+30\"\n",
    );
    if boards.iter().any(|(_, kind)| *kind == BoardKind::Pegasus) {
        let key = dir.join("pegasus.key");
        std::fs::write(&key, "01 23 45 67 89 ab\n").unwrap();
        text.push_str(&format!("pegasus_key = \"{}\"\n", key.display()));
    }
    for (i, (p, kind)) in boards.iter().enumerate() {
        let n = first + i;
        text.push_str(&format!(
            "\n[[board]]\nnumber = {n}\nport = \"{}\"\nkind = \"{kind}\"\nwhite = {{ name = \"White, {n}\", fide_id = {} }}\nblack = {{ name = \"Black, {n}\" }}\n",
            p.display(),
            1000 + n
        ));
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `round-1/game-K.pgn` of a folder, if written.
pub fn game_file(out: &Path, board: usize) -> Option<String> {
    std::fs::read_to_string(out.join(format!("round-1/game-{board}.pgn"))).ok()
}

/// Waits (up to `limit`) until `serve_out` holds the same `game-K.pgn` as `recorder_out`
/// for every board in `boards`; returns the boards that still differ (a file missing on
/// either side differs).
pub fn wait_identical(
    serve_out: &Path,
    pairs: &[(&Path, Vec<usize>)],
    limit: Duration,
) -> Vec<usize> {
    let until = Instant::now() + limit;
    loop {
        let differing: Vec<usize> = pairs
            .iter()
            .flat_map(|(out, boards)| {
                boards
                    .iter()
                    .filter(|&&k| {
                        let served = game_file(serve_out, k);
                        served.is_none() || served != game_file(out, k)
                    })
                    .copied()
                    .collect::<Vec<_>>()
            })
            .collect();
        if differing.is_empty() || Instant::now() >= until {
            return differing;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Plies in a PGN text (moves of the last game), for messages.
pub fn plies(pgn: &str) -> usize {
    touchmove::record::pgn::read_games(pgn)
        .ok()
        .and_then(|g| g.last().map(|g| g.moves.len()))
        .unwrap_or(0)
}

/// Three nats-servers joined in one cluster (`--cluster`, `--routes`, `--cluster_name`), each
/// with JetStream, its own store directory `dir/nK/js` and server name `nK`.
pub fn nats_cluster(dir: &Path) -> Vec<NatsServer> {
    let routes: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let route_urls = |except: usize| {
        routes
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != except)
            .map(|(_, p)| format!("nats://127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    let mut servers: Vec<NatsServer> = (0..3)
        .map(|i| {
            let node = dir.join(format!("n{}", i + 1));
            std::fs::create_dir_all(&node).unwrap();
            let name = format!("n{}", i + 1);
            let cluster = format!("nats://127.0.0.1:{}", routes[i]);
            let others = route_urls(i);
            NatsServer::reserve(
                &node,
                &[
                    "--server_name",
                    &name,
                    "--cluster_name",
                    "touchmove-test",
                    "--cluster",
                    &cluster,
                    "--routes",
                    &others,
                ],
            )
        })
        .collect();
    for server in &mut servers {
        server.restart();
    }
    servers
}

/// The moves that an SSE client of a web server saw, per `(round, board)`, built from the
/// `move` and `revision` events of `/api/stream` as a browser page builds them.
#[derive(Debug, Clone, Default)]
pub struct SeenMoves {
    /// The SAN of every board's moves.
    pub moves: std::collections::BTreeMap<(u32, u32), Vec<String>>,
    /// `move` events received.
    pub move_events: usize,
    /// Moves withdrawn by `revision` events (a slide that went on, a move taken back).
    pub withdrawn: usize,
    /// `move` events whose ply did not follow the moves before (a gap or a repeat).
    pub out_of_order: Vec<String>,
    /// Why the stream ended, if it did.
    pub ended: Option<String>,
}

/// An SSE client of `/api/stream` reading in its own thread.
pub struct SseClient {
    seen: std::sync::Arc<std::sync::Mutex<SeenMoves>>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl SseClient {
    /// Connects to the web server at `addr` (`HOST:PORT`).
    pub fn open(addr: &str) -> SseClient {
        use std::io::Write;
        let mut stream = std::net::TcpStream::connect(addr).expect("the SSE client connects");
        write!(
            stream,
            "GET /api/stream HTTP/1.1\r\nHost: {addr}\r\nAccept: text/event-stream\r\n\r\n"
        )
        .unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(SeenMoves::default()));
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            std::thread::spawn(move || read_sse(stream, &seen, &stop))
        };
        SseClient {
            seen,
            stop,
            thread: Some(thread),
        }
    }

    /// What it saw so far.
    pub fn seen(&self) -> SeenMoves {
        self.seen.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for SseClient {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Reads the chunked SSE response into `seen` until the server closes it or `stop` is set.
fn read_sse(
    mut stream: std::net::TcpStream,
    seen: &std::sync::Mutex<SeenMoves>,
    stop: &std::sync::atomic::AtomicBool,
) {
    use std::io::Read;
    let mut raw: Vec<u8> = Vec::new();
    let mut body = false;
    let mut text = String::new();
    let mut chunk = [0u8; 16384];
    let end = |why: String| seen.lock().unwrap_or_else(|e| e.into_inner()).ended = Some(why);
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        match stream.read(&mut chunk) {
            Ok(0) => return end("closed by the server".to_string()),
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) => return end(e.to_string()),
        }
        if !body {
            let Some(head_end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            let head = String::from_utf8_lossy(&raw[..head_end]).into_owned();
            if !head.starts_with("HTTP/1.1 200") || !head.to_ascii_lowercase().contains("chunked") {
                return end(format!("unexpected response: {head}"));
            }
            raw.drain(..head_end + 4);
            body = true;
        }
        // Chunks: a hex size line, the data, CRLF.
        while let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") {
            let size_text = String::from_utf8_lossy(&raw[..line_end]).into_owned();
            let Ok(size) =
                usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            else {
                return end(format!("bad chunk size line {size_text:?}"));
            };
            if size == 0 {
                return end("the response ended".to_string());
            }
            if raw.len() < line_end + 2 + size + 2 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(
                &raw[line_end + 2..line_end + 2 + size],
            ));
            raw.drain(..line_end + 2 + size + 2);
        }
        while let Some(at) = text.find("\n\n") {
            let block: String = text.drain(..at + 2).collect();
            take_event(&block, &mut seen.lock().unwrap_or_else(|e| e.into_inner()));
        }
    }
}

/// Applies one SSE event block to `seen`.
fn take_event(block: &str, seen: &mut SeenMoves) {
    let kind = block
        .lines()
        .find_map(|l| l.strip_prefix("event: "))
        .unwrap_or("");
    if kind != "move" && kind != "revision" {
        return;
    }
    let Some(data) = block
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .and_then(|d| serde_json::from_str::<serde_json::Value>(d).ok())
    else {
        seen.out_of_order
            .push(format!("undecodable {kind} event: {block}"));
        return;
    };
    let number = |v: &serde_json::Value| v.as_u64().unwrap_or(0);
    let key = (number(&data["round"]) as u32, number(&data["board"]) as u32);
    let ply = number(&data["event"]["ply"]) as usize;
    let moves = seen.moves.entry(key).or_default();
    if kind == "revision" {
        let kept = ply.saturating_sub(1).min(moves.len());
        let withdrawn = moves.len() - kept;
        moves.truncate(kept);
        seen.withdrawn += withdrawn;
        return;
    }
    if ply != moves.len() + 1 {
        let message = format!(
            "board {:?}: move event of ply {ply} after {} moves",
            key,
            moves.len()
        );
        seen.out_of_order.push(message);
    }
    let moves = seen.moves.entry(key).or_default();
    moves.truncate(ply.saturating_sub(1));
    moves.push(data["event"]["san"].as_str().unwrap_or("?").to_string());
    seen.move_events += 1;
}

/// The SAN moves of the last game in a PGN text.
pub fn sans(pgn: &str) -> Vec<String> {
    touchmove::record::pgn::read_games(pgn)
        .ok()
        .and_then(|g| {
            g.last()
                .map(|g| g.moves.iter().map(|m| m.san.clone()).collect())
        })
        .unwrap_or_default()
}

/// The web server address (`HOST:PORT`) a serve node logged in `log`, waiting for it.
pub fn logged_address(log: &Path) -> String {
    let until = Instant::now() + Duration::from_secs(20);
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(addr) = text
            .split("live at http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
        {
            return addr.to_string();
        }
        assert!(
            Instant::now() < until,
            "the node logs its web address:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The SAN (with check marks, as the SSE `move` events carry it) of `moves` (UCI) from the
/// start position.
pub fn san_of(moves: &[String]) -> Vec<String> {
    use shakmaty::san::SanPlus;
    use shakmaty::uci::UciMove;
    let mut position = shakmaty::Chess::default();
    moves
        .iter()
        .map(|uci| {
            let m = UciMove::from_ascii(uci.as_bytes())
                .ok()
                .and_then(|u| u.to_move(&position).ok())
                .unwrap_or_else(|| panic!("{uci} is a legal move in {moves:?}"));
            SanPlus::from_move_and_play_unchecked(&mut position, m).to_string()
        })
        .collect()
}

/// The named logs in `dir`, for failure messages.
pub fn logs(dir: &std::path::Path, names: &[&str]) -> String {
    names
        .iter()
        .map(|n| {
            format!(
                "--- {n}\n{}",
                std::fs::read_to_string(dir.join(n)).unwrap_or_default()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
