//! `touchmove bench sse`: N SSE spectators on loopback against a server in a child process.
//!
//! The parent raises its file limit, starts `touchmove bench sse --serve-only` (the server
//! with a feed of a few boards), connects N clients to the round stream, reads the server's
//! RSS before and after they connect (memory per client), then asks the server to publish
//! events. Each event carries its publish time (CLOCK_MONOTONIC, microseconds, shared by
//! both processes) in `white_ms`; each client records arrival − publish for every event and
//! checks that the event ids it receives are contiguous after its snapshot.

use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::act::Event;
use crate::server::{Feed, GameInfo};

/// What the benchmark measures.
#[derive(Debug, Clone)]
pub struct SseBench {
    /// Number of SSE clients.
    pub clients: usize,
    /// Events published.
    pub events: u64,
    /// Pause between two events.
    pub interval: Duration,
}

/// The figures printed as JSON.
#[derive(Debug, Serialize)]
pub struct SseReport {
    /// Clients connected.
    pub clients: usize,
    /// Events published.
    pub events: u64,
    /// Milliseconds between events.
    pub interval_ms: u64,
    /// Deliveries expected (clients × events) and received.
    pub deliveries_expected: u64,
    /// Deliveries received.
    pub deliveries_received: u64,
    /// Clients whose ids were not contiguous or that missed events.
    pub clients_with_gaps: usize,
    /// Delay from publish to arrival at a client, milliseconds.
    pub latency_ms_p50: f64,
    /// 90th percentile.
    pub latency_ms_p90: f64,
    /// 99th percentile.
    pub latency_ms_p99: f64,
    /// Worst.
    pub latency_ms_max: f64,
    /// Server RSS before the clients connected, KiB.
    pub server_rss_idle_kib: u64,
    /// Server RSS with every client connected, KiB.
    pub server_rss_connected_kib: u64,
    /// (connected − idle) / clients, KiB.
    pub server_kib_per_client: f64,
    /// Seconds to connect every client and receive its snapshot.
    pub connect_seconds: f64,
}

/// Microseconds of CLOCK_MONOTONIC: the same clock in every process of the machine.
fn monotonic_us() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000 + ts.tv_nsec as u64 / 1000
}

/// Raises the open-file limit to its hard maximum (10,000 clients need as many sockets).
pub fn raise_fd_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write one rlimit struct we own.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 0;
        }
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
    }
    limit.rlim_cur
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Boards in the benchmark round.
const BOARDS: u32 = 8;

/// The child side: serves a feed, answers `rss` and `publish COUNT INTERVAL_MS` on stdin.
pub async fn serve_only() -> Result<(), String> {
    let feed = Arc::new(Feed::new());
    for board in 1..=BOARDS {
        feed.upsert_game(GameInfo {
            round: 1,
            board,
            white: format!("White player {board}"),
            black: format!("Black player {board}"),
            tags: vec![("Event".into(), "touchmove bench".into())],
        });
    }
    let addr: SocketAddr = "127.0.0.1:0".parse().map_err(|e| format!("{e}"))?;
    let server = crate::server::serve(
        addr,
        Arc::clone(&feed),
        None,
        crate::server::token::generate(),
    )
    .await
    .map_err(|e| e.to_string())?;
    println!("listening {}", server.local_addr());
    let mut lines = BufReader::new(std::io::stdin()).lines();
    while let Some(Ok(line)) = tokio::task::block_in_place(|| lines.next()) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["rss"] => println!("rss {}", rss_kib()),
            ["publish", count, interval] => {
                let count: u64 = count.parse().map_err(|_| "bad count")?;
                let interval: u64 = interval.parse().map_err(|_| "bad interval")?;
                let mut last = 0;
                for i in 0..count {
                    let board = (i % u64::from(BOARDS)) as u32 + 1;
                    last = feed.publish(
                        1,
                        board,
                        Event::Clock {
                            white_ms: monotonic_us(),
                            black_ms: 600_000,
                            ply: i as u32,
                            t_ms: i,
                        },
                    );
                    tokio::time::sleep(Duration::from_millis(interval)).await;
                }
                println!("published {last}");
            }
            _ => println!("error unknown command"),
        }
    }
    server.shutdown().await;
    Ok(())
}

/// One client's view: latencies (µs) and whether its ids were contiguous.
struct ClientResult {
    latencies_us: Vec<u64>,
    contiguous: bool,
}

async fn client(
    addr: SocketAddr,
    events: u64,
    connected: tokio::sync::mpsc::Sender<()>,
) -> Result<ClientResult, String> {
    let mut stream = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    stream
        .write_all(b"GET /api/round/1/stream HTTP/1.1\r\nHost: bench\r\n\r\n")
        .await
        .map_err(|e| e.to_string())?;
    let mut buffer: Vec<u8> = Vec::with_capacity(4096);
    let mut chunk = vec![0u8; 8192];
    let mut expected: Option<u64> = None;
    let mut first: Option<u64> = None;
    let mut result = ClientResult {
        latencies_us: Vec::with_capacity(events as usize),
        contiguous: true,
    };
    loop {
        let n = stream.read(&mut chunk).await.map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("server closed the stream".into());
        }
        let now = monotonic_us();
        buffer.extend_from_slice(&chunk[..n]);
        while let Some(end) = buffer.windows(2).position(|w| w == b"\n\n") {
            let frame = String::from_utf8_lossy(&buffer[..end]).to_string();
            buffer.drain(..end + 2);
            let id = frame
                .lines()
                .find_map(|l| l.strip_prefix("id: "))
                .and_then(|v| v.trim().parse::<u64>().ok());
            let Some(id) = id else { continue };
            if frame.contains("event: snapshot") {
                expected = Some(id + 1);
                first = Some(id + 1);
                let _ = connected.send(()).await;
                continue;
            }
            if expected != Some(id) {
                result.contiguous = false;
            }
            expected = Some(id + 1);
            if let Some(sent) = frame
                .split("\"white_ms\":")
                .nth(1)
                .and_then(|rest| rest.split(',').next())
                .and_then(|v| v.parse::<u64>().ok())
            {
                result.latencies_us.push(now.saturating_sub(sent));
            }
            if first.is_some_and(|f| id + 1 >= f + events) {
                return Ok(result);
            }
        }
    }
}

struct ServerProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl ServerProcess {
    fn ask(&mut self, command: &str, answer: &str) -> Result<String, String> {
        writeln!(self.stdin, "{command}").map_err(|e| e.to_string())?;
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| e.to_string())?;
        line.trim()
            .strip_prefix(answer)
            .map(|v| v.trim().to_string())
            .ok_or_else(|| format!("server said {line:?} to {command:?}"))
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[index] as f64 / 1000.0
}

/// Runs the benchmark (the parent side).
pub async fn run(bench: SseBench) -> Result<SseReport, String> {
    let limit = raise_fd_limit();
    if (limit as usize) < bench.clients + 64 {
        return Err(format!(
            "the open-file limit is {limit}, too low for {} clients; raise the hard limit \
             (ulimit -Hn) or use fewer --clients",
            bench.clients
        ));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut child = Command::new(exe)
        .args(["bench", "sse", "--serve-only"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start the server process: {e}"))?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the server process has no pipes".into());
    };
    let mut server = ServerProcess {
        child,
        stdin,
        stdout: BufReader::new(stdout),
    };
    let mut first = String::new();
    server
        .stdout
        .read_line(&mut first)
        .map_err(|e| e.to_string())?;
    let addr: SocketAddr = first
        .trim()
        .strip_prefix("listening ")
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("server did not start: {first:?}"))?;
    let idle: u64 = server.ask("rss", "rss")?.parse().unwrap_or(0);

    let started = std::time::Instant::now();
    let (connected_tx, mut connected_rx) = tokio::sync::mpsc::channel(1024);
    let mut tasks = Vec::with_capacity(bench.clients);
    for i in 0..bench.clients {
        tasks.push(tokio::spawn(client(
            addr,
            bench.events,
            connected_tx.clone(),
        )));
        // Connect in waves so the accept queue never overflows.
        if i % 256 == 255 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    drop(connected_tx);
    let mut connected = 0;
    while connected < bench.clients {
        match tokio::time::timeout(Duration::from_secs(60), connected_rx.recv()).await {
            Ok(Some(())) => connected += 1,
            _ => break,
        }
    }
    let connect_seconds = started.elapsed().as_secs_f64();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let with_clients: u64 = server.ask("rss", "rss")?.parse().unwrap_or(0);
    server.ask(
        &format!("publish {} {}", bench.events, bench.interval.as_millis()),
        "published",
    )?;

    let mut latencies = Vec::new();
    let mut gaps = 0;
    let mut received = 0u64;
    for task in tasks {
        match tokio::time::timeout(Duration::from_secs(30), task).await {
            Ok(Ok(Ok(result))) => {
                received += result.latencies_us.len() as u64;
                if !result.contiguous || (result.latencies_us.len() as u64) < bench.events {
                    gaps += 1;
                }
                latencies.extend(result.latencies_us);
            }
            _ => gaps += 1,
        }
    }
    let _ = server.child.kill();
    let _ = server.child.wait();
    latencies.sort_unstable();
    Ok(SseReport {
        clients: connected,
        events: bench.events,
        interval_ms: bench.interval.as_millis() as u64,
        deliveries_expected: bench.clients as u64 * bench.events,
        deliveries_received: received,
        clients_with_gaps: gaps,
        latency_ms_p50: percentile(&latencies, 0.5),
        latency_ms_p90: percentile(&latencies, 0.9),
        latency_ms_p99: percentile(&latencies, 0.99),
        latency_ms_max: percentile(&latencies, 1.0),
        server_rss_idle_kib: idle,
        server_rss_connected_kib: with_clients,
        server_kib_per_client: with_clients.saturating_sub(idle) as f64
            / bench.clients.max(1) as f64,
        connect_seconds,
    })
}
