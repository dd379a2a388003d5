//! Helpers of the cluster tests: a private `nats-server -js` on a loopback port with its own
//! store directory, recorder and serve processes, and comparing PGN folders.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A nats-server started by the test (never the machine's own).
pub struct NatsServer {
    child: Option<Child>,
    port: u16,
    store: PathBuf,
    log: PathBuf,
    options: Vec<String>,
}

/// A free loopback port (the OS picks it; the server binds it right after).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
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
        }
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server again on the same port and store (after [`NatsServer::kill`]).
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "the server runs already");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .unwrap();
        let child = Command::new("nats-server")
            .args(["-js", "-a", "127.0.0.1", "-p"])
            .arg(self.port.to_string())
            .arg("-sd")
            .arg(&self.store)
            .args(&self.options)
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("nats-server runs (apt-get install -y nats-server; .ci/run installs it)");
        self.child = Some(child);
        let until = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < until, "nats-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
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

/// Processes started by [`touchmove`], killed by [`Reaper`] when a test fails.
static SPAWNED: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Hold one for the test's duration: if the test panics, the touchmove processes it started
/// are killed instead of being left running.
pub struct Reaper;

impl Drop for Reaper {
    fn drop(&mut self) {
        let pids = std::mem::take(&mut *SPAWNED.lock().unwrap_or_else(|e| e.into_inner()));
        if std::thread::panicking() {
            for pid in pids {
                let pid = nix::unistd::Pid::from_raw(pid as i32);
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
            }
        }
    }
}

/// A touchmove process writing its stderr to `log`.
pub fn touchmove(args: &[&str], extra: &[&Path], log: &Path) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(args)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the touchmove binary starts");
    SPAWNED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(child.id());
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

/// The realistic games of `boards` boards from `seed` as board scripts (pauses up to
/// `max_pause_ms`), cut to their first `script_ms`.
pub fn short_scripts(
    boards: usize,
    seed: u64,
    max_pause_ms: u64,
    script_ms: u64,
) -> Vec<Vec<touchmove::board::Observation>> {
    use crate::recorder_support::{realistic_games, scripts};
    scripts(&realistic_games(boards, seed), max_pause_ms)
        .into_iter()
        .map(|s| s.into_iter().filter(|o| o.t_ms <= script_ms).collect())
        .collect()
}

/// An event file for boards `first..` on `ports`, round 1.
pub fn event_file(dir: &Path, name: &str, first: usize, ports: &[PathBuf]) -> PathBuf {
    let mut text = String::from(
        "event = \"Cluster test\"\nsite = \"Loopback\"\nround = 1\ntime_control = \"5400+30\"\n",
    );
    for (i, p) in ports.iter().enumerate() {
        let n = first + i;
        text.push_str(&format!(
            "\n[[board]]\nnumber = {n}\nport = \"{}\"\nwhite = {{ name = \"White, {n}\", fide_id = {} }}\nblack = {{ name = \"Black, {n}\" }}\n",
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
/// for every board in `boards`; returns the boards that still differ.
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
                    .filter(|&&k| game_file(serve_out, k) != game_file(out, k))
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
