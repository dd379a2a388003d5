//! `touchmove bench cluster`: virtual boards recorded by several recorders that forward to a
//! private nats-server, and broadcast nodes rebuilding them; latency from the byte that
//! completed a move (its receive time on the recorder) to the move's event on a broadcast
//! node's live feed (what its SSE clients are sent).
//!
//! Recorders, forwarders and broadcast nodes run in this one process (the nats-server in its
//! own), so the figures include all of them sharing the machine's cores.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use super::boards_per_recorder::{
    blitz_scripts, event_for_ports, percentile, resident_bytes, spawn_boards,
};
use crate::cluster::broadcast::Broadcast;
use crate::cluster::forwarder::{Forwarder, journal_epoch};
use crate::cluster::{ClusterSettings, Credentials};
use crate::recorder::{Recorder, RunOptions};
use crate::server::feed::{Feed, Scope};

/// Figures of one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ClusterFigures {
    /// Boards.
    pub boards: usize,
    /// Recorders they were split over.
    pub recorders: usize,
    /// Broadcast nodes.
    pub serve_nodes: usize,
    /// Seconds measured.
    pub seconds: f64,
    /// Move events seen on the first broadcast node's feed, of moves completed in the window
    /// (including those that reached it after the window closed).
    pub moves: usize,
    /// Median latency, completing byte → broadcast node's feed, in milliseconds.
    pub median_ms: f64,
    /// 99th percentile of the same.
    pub p99_ms: f64,
    /// Largest.
    pub max_ms: f64,
    /// Feed events the benchmark's own subscriber fell too far behind to receive (their
    /// latencies are missing from the figures above; 0 in a run whose figures are whole).
    pub feed_events_missed: u64,
    /// Stream messages read per second by each broadcast node while the window was open.
    pub messages_per_s: f64,
    /// Resident memory of this process added per board (recorders, forwarders, broadcast
    /// nodes and virtual boards), in KiB.
    pub memory_per_board_kib: u64,
    /// Resident memory of this process at the end (everything but the nats-server), in MiB.
    pub process_resident_mib: u64,
    /// Resident memory of the nats-server at the end, in MiB.
    pub nats_server_resident_mib: u64,
    /// CPU time used by this process and the nats-server, per second measured: 2.0 is both
    /// cores of this machine.
    pub cpu_cores_used: f64,
    /// Seconds from the last recorder's start until every forwarder was connected and caught
    /// up, when the measured window opened (moves completed before are not counted).
    pub warmup_s: f64,
    /// Every board moves at the same moments (`--in-step`); otherwise the boards' games start
    /// spread over one move's time, as in a hall where nobody moves together for long.
    pub in_step: bool,
}

/// The nats-server of the benchmark.
struct Server {
    child: Child,
    dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn start_server(dir: &Path) -> Result<(Server, String), String> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map_err(|e| e.to_string())?
        .port();
    let child = Command::new("nats-server")
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(dir.join("js"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            format!("cannot start nats-server ({e}); install it (apt-get install nats-server)")
        })?;
    let server = Server {
        child,
        dir: dir.to_path_buf(),
    };
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return Ok((server, format!("nats://127.0.0.1:{port}")));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err("nats-server did not start".to_string())
}

/// Runs `boards` virtual boards at blitz pace over `recorders` recorders and `serve` broadcast
/// nodes for `seconds`.
pub async fn measure(
    recorders: usize,
    boards: usize,
    serve: usize,
    seconds: u64,
    think_ms: u64,
    in_step: bool,
) -> Result<ClusterFigures, String> {
    let recorders = recorders.clamp(1, boards.max(1));
    let dir = std::env::temp_dir().join(format!(
        "touchmove-bench-cluster-{}-{boards}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let (server, url) = start_server(&dir)?;
    let mut scripts = blitz_scripts(boards, think_ms)
        .ok_or_else(|| "the fixture games could not be read".to_string())?;
    if !in_step {
        spread_starts(&mut scripts, think_ms);
    }
    let before = resident_bytes();
    let settings = |member: String| ClusterSettings {
        urls: vec![url.clone()],
        credentials: Credentials::None,
        event: "bench".to_string(),
        member,
        tls_ca: None,
        replicas: 1,
    };
    let mut nodes = Vec::new();
    let mut feeds = Vec::new();
    for s in 0..serve.max(1) {
        let feed = Arc::new(Feed::new());
        nodes.push(Broadcast::start(
            settings(format!("node{s}")),
            &dir.join(format!("serve-{s}")),
            feed.clone(),
        ));
        feeds.push(feed);
    }
    let mut subscription = feeds[0].subscribe(Scope::All, None);
    let virtual_boards =
        spawn_boards(&dir, scripts, 1.0, 180_000, 2_000).map_err(|e| e.to_string())?;
    let ports: Vec<PathBuf> = virtual_boards
        .iter()
        .map(|b| b.path().to_path_buf())
        .collect();
    let per = boards.div_ceil(recorders);
    let mut running = Vec::new();
    let mut epochs: HashMap<u32, u64> = HashMap::new();
    for (r, group) in ports.chunks(per).enumerate() {
        let mut config = event_for_ports("touchmove bench cluster", "180+2", group);
        for (i, b) in config.boards.iter_mut().enumerate() {
            b.number = (r * per + i + 1) as u32;
        }
        let out = dir.join(format!("rec-{r}"));
        let options = RunOptions::new(&out, Arc::new(Feed::new()));
        let journal = options.journal_path.clone();
        let handle = Recorder::start(config.clone(), options)
            .await
            .map_err(|e| e.to_string())?;
        let epoch = journal_epoch(&journal)?;
        for b in &config.boards {
            epochs.insert(b.number, epoch);
        }
        let forwarder = Forwarder::for_recorder(
            settings(format!("rec{r}")),
            &config,
            &journal,
            &out,
            None,
            Some(handle.journal_committed()),
        )?;
        running.push((handle, forwarder));
    }
    // As at an event, where the PCs are up before the clocks start: the window opens once
    // every forwarder is connected and has caught up with the start of its boards, and every
    // broadcast node has read as many messages as the forwarders had acked.
    let warming = std::time::Instant::now();
    let ready_by = warming + Duration::from_secs(WARMUP_LIMIT_S);
    loop {
        let mut acked = 0;
        let forwarded = running.iter().all(|(_, forwarder)| {
            let backlog = forwarder.backlog();
            acked += backlog.acked;
            backlog.connected && backlog.oldest_ms < CAUGHT_UP_MS
        });
        let read = nodes.iter().all(|n| n.stats().messages >= acked);
        if (forwarded && read) || std::time::Instant::now() >= ready_by {
            break;
        }
        while subscription.live.try_recv().is_ok() {}
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let warmup_s = warming.elapsed().as_secs_f64();
    let window_opened_ms = crate::cluster::unix_ms();
    let started = std::time::Instant::now();
    let cpu_before = cpu_ticks(None) + cpu_ticks(Some(server.child.id()));
    let messages_before: u64 = nodes.iter().map(|n| n.stats().messages).sum();
    let window_closes_ms = window_opened_ms + seconds * 1000;
    let until = tokio::time::Instant::now() + Duration::from_secs(seconds);
    let mut samples = Vec::new();
    let mut feed_events_missed = 0;
    let mut measured = None;
    // After the window closes, the moves completed in it that are still on their way are
    // waited for too: leaving them out would hide exactly the slowest ones.
    let mut deadline = until;
    loop {
        if measured.is_none() && tokio::time::Instant::now() >= until {
            measured = Some(window_figures(
                started,
                cpu_before,
                server.child.id(),
                &nodes,
            ));
            deadline = until + LATE_MOVE_WAIT;
        }
        let next = tokio::time::timeout_at(deadline, subscription.live.recv()).await;
        let event = match next {
            Err(_) if measured.is_none() => continue,
            Err(_) => break,
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(missed))) => {
                feed_events_missed += missed;
                continue;
            }
            Ok(Err(_)) => break,
            Ok(Ok(e)) => e,
        };
        if event.kind != "move" {
            continue;
        }
        let now = crate::cluster::unix_ms();
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&event.json) else {
            continue;
        };
        let t_ms = json["event"]["t_ms"].as_u64();
        if let (Some(t_ms), Some(epoch)) = (t_ms, epochs.get(&event.board))
            && (window_opened_ms..window_closes_ms).contains(&(epoch + t_ms))
        {
            samples.push(Duration::from_millis(now.saturating_sub(epoch + t_ms)));
            if measured.is_some() {
                deadline = tokio::time::Instant::now() + LATE_MOVE_WAIT;
            }
        }
    }
    let (elapsed, cpu_used, messages) =
        measured.unwrap_or_else(|| window_figures(started, cpu_before, server.child.id(), &nodes));
    let after = resident_bytes();
    let nats_resident = resident_of(server.child.id());
    for node in nodes {
        node.stop();
    }
    for (handle, forwarder) in running {
        forwarder.stop();
        handle.shutdown().await;
    }
    drop(virtual_boards);
    drop(server);
    samples.sort();
    Ok(ClusterFigures {
        boards,
        recorders,
        serve_nodes: serve.max(1),
        seconds: elapsed,
        moves: samples.len(),
        median_ms: percentile(&samples, 0.5),
        p99_ms: percentile(&samples, 0.99),
        max_ms: percentile(&samples, 1.0),
        feed_events_missed,
        messages_per_s: messages.saturating_sub(messages_before) as f64
            / elapsed
            / serve.max(1) as f64,
        memory_per_board_kib: after.saturating_sub(before) / 1024 / boards.max(1) as u64,
        process_resident_mib: after >> 20,
        nats_server_resident_mib: nats_resident >> 20,
        cpu_cores_used: cpu_used as f64 / clock_ticks_per_second() / elapsed,
        warmup_s,
        in_step,
    })
}

/// After the window, how long the benchmark goes on waiting for a move completed in it once the
/// last such move has arrived.
const LATE_MOVE_WAIT: Duration = Duration::from_secs(3);

/// Seconds since the window opened, the CPU ticks this process and the nats-server (`pid`)
/// used since `cpu_before`, and the stream messages the broadcast nodes have read.
fn window_figures(
    started: std::time::Instant,
    cpu_before: u64,
    pid: u32,
    nodes: &[Broadcast],
) -> (f64, u64, u64) {
    let used = (cpu_ticks(None) + cpu_ticks(Some(pid))).saturating_sub(cpu_before);
    let messages = nodes.iter().map(|n| n.stats().messages).sum();
    (started.elapsed().as_secs_f64(), used, messages)
}

/// The longest wait for the forwarders before the window opens anyway.
const WARMUP_LIMIT_S: u64 = 15;
/// A forwarder whose oldest entry waiting is younger than this has caught up.
const CAUGHT_UP_MS: u64 = 250;

/// Shifts each board's script so that the games start spread evenly over one move's time
/// (thinking plus about three hand steps), board by board.
fn spread_starts(scripts: &mut [Vec<crate::board::Observation>], think_ms: u64) {
    let period = think_ms + 3 * 150;
    let boards = scripts.len().max(1) as u64;
    for (i, script) in scripts.iter_mut().enumerate() {
        let offset = period * i as u64 / boards;
        for observation in script {
            observation.t_ms += offset;
        }
    }
}

/// User and system CPU time of this process (`None`) or of process `pid`, in clock ticks
/// (Linux; 0 when unknown).
fn cpu_ticks(pid: Option<u32>) -> u64 {
    let path = pid.map_or("/proc/self/stat".to_string(), |p| format!("/proc/{p}/stat"));
    std::fs::read_to_string(path)
        .ok()
        .and_then(|s| {
            // The fields after the command name, which is in parentheses and may hold spaces.
            let rest = s.rsplit_once(')')?.1;
            let fields: Vec<&str> = rest.split_whitespace().collect();
            let user: u64 = fields.get(11)?.parse().ok()?;
            let system: u64 = fields.get(12)?.parse().ok()?;
            Some(user + system)
        })
        .unwrap_or(0)
}

/// Resident memory of process `pid` in bytes (Linux), 0 when unknown.
fn resident_of(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/statm"))
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

fn clock_ticks_per_second() -> f64 {
    // SAFETY: sysconf only reads a configuration value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 { ticks as f64 } else { 100.0 }
}

/// Runs the benchmark and prints its figures as one JSON line.
pub fn run(
    recorders: usize,
    boards: usize,
    serve: usize,
    seconds: u64,
    think_ms: u64,
    in_step: bool,
) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let figures = measure(recorders, boards, serve, seconds, think_ms, in_step).await?;
        println!(
            "{}",
            serde_json::to_string(&figures).map_err(|e| e.to_string())?
        );
        Ok(())
    })
}
