//! `touchmove bench boards`: how many boards one recorder process keeps up with.
//!
//! N virtual boards (pseudo-terminals driven by this process) play real games at blitz pace
//! while an in-process recorder records them. Once every board has made its first move (what
//! comes before is the boards connecting), from the arrival of the chunk of bytes that
//! completed a move (the driver's receive stamp), the benchmark measures three paths: to the
//! move's event read by an SSE client over a real socket from the recorder's own web server;
//! to the chunk's journal entry being durable (the recorder's probe, for every chunk that
//! produced an event); and to the board's `game-K.pgn` rewritten (the probe, likewise). It
//! prints median, p99 and max of each per N, the moves recorded against the moves played, the
//! resident memory added per board, the journal's syncs per second and the process's CPU time
//! per move seen (recorder, virtual boards and SSE client together: they share the process).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use shakmaty::Chess;

use crate::board::Observation;
use crate::record::pgn::read_games;
use crate::recorder::{
    BoardConfig, BoardSource, EventConfig, LatencyStage, Player, Recorder, RunOptions,
};
use crate::server::feed::Feed;
use crate::sim::virtual_board::timeline::{Pace, lift_place};
use crate::sim::virtual_board::{
    DGT_LINE_BYTES_PER_S, ResumeMode, StartWhen, VirtualBoard, VirtualBoardConfig,
};

/// The real games the benchmark (and the recorder's tests) play.
pub const FIXTURE_GAMES: &str = include_str!("../../fixtures/recorder-games.pgn");

/// A game to play: its moves in UCI and its result.
#[derive(Debug, Clone)]
pub struct ScriptGame {
    /// Moves in UCI.
    pub moves_uci: Vec<String>,
    /// PGN result.
    pub result: String,
}

/// The fixture games as UCI move lists.
pub fn fixture_games() -> Vec<ScriptGame> {
    let Ok(records) = read_games(FIXTURE_GAMES) else {
        return Vec::new();
    };
    records
        .iter()
        .filter_map(|r| {
            let game = r.to_game().ok()?;
            Some(ScriptGame {
                moves_uci: game.moves().iter().map(|m| m.uci.clone()).collect(),
                result: r.result.clone(),
            })
        })
        .collect()
}

/// One script per board at blitz pace (`think_ms` per move, 150 ms per hand step), taking the
/// fixture games in turn; `None` when the fixture games cannot be read.
pub fn blitz_scripts(boards: usize, think_ms: u64) -> Option<Vec<Vec<Observation>>> {
    let games = fixture_games();
    if games.is_empty() {
        return None;
    }
    let pace = Pace {
        think_ms,
        step_ms: 150,
    };
    Some(
        (0..boards)
            .map(|i| plain_timeline(&games[i % games.len()], pace))
            .collect(),
    )
}

/// A plain lift/place/press timeline of a game at `pace`.
pub fn plain_timeline(game: &ScriptGame, pace: Pace) -> Vec<Observation> {
    let pos = Chess::default();
    let mut g = crate::rules::Game::standard();
    let mut moves = Vec::new();
    for uci in &game.moves_uci {
        match g.play_uci(uci) {
            Ok(played) => moves.push(played.mv),
            Err(_) => break,
        }
    }
    lift_place(&pos, &moves, pace)
}

/// Starts one virtual board per script at `dir/board-K` (K from 1), playing `speed` times
/// faster than the script's times, with a clock of `base_ms` + `increment_ms`.
pub fn spawn_boards(
    dir: &Path,
    scripts: Vec<Vec<Observation>>,
    speed: f64,
    base_ms: u64,
    increment_ms: u64,
) -> std::io::Result<Vec<VirtualBoard>> {
    spawn_boards_with_log(
        dir,
        scripts,
        speed,
        base_ms,
        increment_ms,
        BoardMake::default(),
    )
}

/// What the virtual boards of a benchmark or test are like, beyond their scripts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoardMake {
    /// The boards keep (and answer with) their EEPROM move log.
    pub eeprom_log: bool,
    /// The speed of their serial line in bytes per second (`None`: as fast as the
    /// pseudo-terminal takes them).
    pub line_bytes_per_s: Option<u32>,
    /// What they are like when plugged in again.
    pub resume: ResumeMode,
}

impl Default for BoardMake {
    /// Boards with their move log, on a line with no speed limit, idle when plugged in again.
    fn default() -> Self {
        BoardMake {
            eeprom_log: true,
            line_bytes_per_s: None,
            resume: ResumeMode::Idle,
        }
    }
}

impl BoardMake {
    /// Boards like real DGT boards: the move log, and a 9600-baud line (the log takes ≈ 8 s).
    pub fn dgt() -> Self {
        BoardMake {
            eeprom_log: true,
            line_bytes_per_s: Some(DGT_LINE_BYTES_PER_S),
            resume: ResumeMode::Idle,
        }
    }

    /// The same boards, as `resume` says when plugged in again.
    pub fn resuming(self, resume: ResumeMode) -> Self {
        BoardMake { resume, ..self }
    }

    /// The same boards, with their move log on or off.
    pub fn with_log(self, eeprom_log: bool) -> Self {
        BoardMake { eeprom_log, ..self }
    }
}

/// [`spawn_boards`], with boards made as `make` says.
pub fn spawn_boards_with_log(
    dir: &Path,
    scripts: Vec<Vec<Observation>>,
    speed: f64,
    base_ms: u64,
    increment_ms: u64,
    make: BoardMake,
) -> std::io::Result<Vec<VirtualBoard>> {
    scripts
        .into_iter()
        .enumerate()
        .map(|(i, script)| {
            let mut config = VirtualBoardConfig::new(dir.join(format!("board-{}", i + 1)), script);
            config.speed = speed;
            config.base_time_ms = base_ms;
            config.increment_ms = increment_ms;
            config.serial = format!("{:05}", 10_000 + i);
            config.eeprom_log = make.eeprom_log;
            config.line_bytes_per_s = make.line_bytes_per_s;
            config.resume = make.resume;
            // Play begins once the recorder has the board, whatever its line's speed.
            config.start = StartWhen::HostReady;
            VirtualBoard::spawn(config)
        })
        .collect()
}

/// An event with one board per port, numbered from 1.
pub fn event_for_ports(event: &str, time_control: &str, ports: &[PathBuf]) -> EventConfig {
    EventConfig {
        event: event.to_string(),
        site: "touchmove bench".to_string(),
        time_control: Some(time_control.to_string()),
        boards: ports
            .iter()
            .enumerate()
            .map(|(i, p)| BoardConfig {
                number: i as u32 + 1,
                source: BoardSource::Port(p.clone()),
                kind: crate::board::kind::BoardKind::Dgt,
                leds: crate::recorder::leds::LedMode::Off,
                white: Player::named(&format!("White, Board {}", i + 1)),
                black: Player::named(&format!("Black, Board {}", i + 1)),
            })
            .collect(),
        ..EventConfig::default()
    }
}

/// Resident memory of this process in bytes (Linux), 0 when unknown.
pub fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// A scratch folder removed when dropped.
pub(crate) struct BenchDir(PathBuf);

impl BenchDir {
    pub(crate) fn create(boards: usize) -> std::io::Result<BenchDir> {
        let path = std::env::temp_dir().join(format!(
            "touchmove-bench-boards-{}-{boards}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)?;
        Ok(BenchDir(path))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for BenchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Median, 99th percentile and largest of a set of latencies, in milliseconds.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub struct Spread {
    /// How many were measured.
    pub count: usize,
    /// Median.
    pub median_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Largest.
    pub max_ms: f64,
}

impl Spread {
    /// The spread of `samples` (sorted here).
    pub fn of(mut samples: Vec<Duration>) -> Spread {
        samples.sort();
        Spread {
            count: samples.len(),
            median_ms: percentile(&samples, 0.5),
            p99_ms: percentile(&samples, 0.99),
            max_ms: samples.last().map_or(0.0, |d| d.as_secs_f64() * 1000.0),
        }
    }
}

/// Figures for one number of boards.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BoardsFigures {
    /// Boards recorded at once.
    pub boards: usize,
    /// Seconds from the recorder's start until every board had made a move (connecting,
    /// reading the boards' move logs): not measured.
    pub warmup_s: f64,
    /// Seconds of play measured, from then on.
    pub seconds: f64,
    /// Moves the boards played in that time.
    pub moves_played: usize,
    /// Moves in the PGN files at the end.
    pub moves_recorded: usize,
    /// From the arrival of the chunk that completed a move to its `move` event read by an SSE
    /// client of the recorder's web server.
    pub sse: Spread,
    /// From the arrival of a chunk that produced events to its journal entry being durable.
    pub durable: Spread,
    /// From the arrival of a chunk that produced events to the board's PGN file rewritten.
    pub file: Spread,
    /// Resident memory added per board (recorder + its virtual board), in KiB.
    pub memory_per_board_kib: u64,
    /// Journal entries written per second (byte chunks, events, metadata).
    pub journal_entries_per_s: f64,
    /// Journal transactions, each one disk sync, per second.
    pub journal_syncs_per_s: f64,
    /// CPU time (user + system) of the whole process per move seen on SSE, in milliseconds.
    pub cpu_ms_per_move: f64,
}

/// The `p` quantile (0–1) of sorted durations, in milliseconds; 0 when there are none.
pub fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// CPU time (user + system) this process has used so far.
fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes one rusage struct into the valid pointer it is given.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) } != 0 {
        return Duration::ZERO;
    }
    // SAFETY: getrusage succeeded, so the struct is written.
    let usage = unsafe { usage.assume_init() };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Reads round 1's event stream from the recorder's server at `addr` and sends, for each
/// `move` event, the time since the arrival its `t_ms` gives (session time from `epoch`).
async fn watch_moves(
    addr: SocketAddr,
    epoch: tokio::time::Instant,
    moves: tokio::sync::mpsc::UnboundedSender<Duration>,
) -> std::io::Result<()> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /api/round/1/stream HTTP/1.1\r\nHost: bench\r\n\r\n")
        .await?;
    let mut buffer: Vec<u8> = Vec::with_capacity(1 << 16);
    let mut chunk = vec![0u8; 1 << 16];
    loop {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            return Ok(());
        }
        let now = tokio::time::Instant::now();
        buffer.extend_from_slice(&chunk[..n]);
        let mut start = 0;
        while let Some(end) = buffer[start..].windows(2).position(|w| w == b"\n\n") {
            let frame = &buffer[start..start + end];
            start += end + 2;
            if let Some(t_ms) = move_time(frame) {
                let arrived = epoch + Duration::from_millis(t_ms);
                let _ = moves.send(now.saturating_duration_since(arrived));
            }
        }
        buffer.drain(..start);
    }
}

/// The `t_ms` of a `move` event's SSE frame (the first in its data: the event's own).
fn move_time(frame: &[u8]) -> Option<u64> {
    let frame = std::str::from_utf8(frame).ok()?;
    if !frame.lines().any(|l| l == "event: move") {
        return None;
    }
    let data = frame.lines().find_map(|l| l.strip_prefix("data: "))?;
    let rest = data.split("\"t_ms\":").nth(1)?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// Waits until every one of `boards` games of round 1 in `feed` has a move (at most a minute).
async fn every_game_moved(feed: &Feed, boards: usize) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while tokio::time::Instant::now() < deadline {
        let moved = feed
            .round(1)
            .map_or(0, |r| r.games.iter().filter(|g| g.ply > 0).count());
        if moved >= boards {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Records `boards` virtual boards playing blitz (one ply every ~`think_ms`) for `seconds`.
pub async fn measure(boards: usize, seconds: u64, think_ms: u64) -> std::io::Result<BoardsFigures> {
    let dir = BenchDir::create(boards)?;
    let scripts = blitz_scripts(boards, think_ms)
        .ok_or_else(|| std::io::Error::other("the fixture games could not be read"))?;
    let before = resident_bytes();
    let virtual_boards = spawn_boards(dir.path(), scripts.clone(), 1.0, 180_000, 2_000)?;
    let ports: Vec<PathBuf> = virtual_boards
        .iter()
        .map(|b| b.path().to_path_buf())
        .collect();
    let config = event_for_ports("touchmove bench boards", "180+2", &ports);
    let (probe, mut latencies) = tokio::sync::mpsc::unbounded_channel();
    let feed = Arc::new(Feed::new());
    let mut options = RunOptions::new(&dir.path().join("out"), feed.clone());
    options.latency_probe = Some(probe);
    options.listen = Some(SocketAddr::from(([127, 0, 0, 1], 0)));
    let recorder = Recorder::start(config, options)
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let addr = recorder
        .server_addr()
        .ok_or_else(|| std::io::Error::other("the recorder's web server did not start"))?;
    let (seen, mut moves_seen) = tokio::sync::mpsc::unbounded_channel();
    let watcher = tokio::spawn(watch_moves(addr, recorder.session_epoch(), seen));
    let warmup = std::time::Instant::now();
    every_game_moved(&feed, boards).await;
    let warmup_s = warmup.elapsed().as_secs_f64();
    // What was measured before is the boards connecting, not the play.
    while latencies.try_recv().is_ok() || moves_seen.try_recv().is_ok() {}
    let (commits_before, entries_before) = recorder.journal_commits();
    let cpu_before = cpu_time();
    let started = std::time::Instant::now();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let elapsed = started.elapsed();
    let cpu = cpu_time().saturating_sub(cpu_before);
    let after = resident_bytes();
    let (commits, entries) = recorder.journal_commits();
    let (commits, entries) = (commits - commits_before, entries - entries_before);
    let out = recorder.out_dir().to_path_buf();
    watcher.abort();
    recorder.shutdown().await;
    let played_ms = (warmup_s * 1000.0) as u64 + elapsed.as_millis() as u64;
    let moves_played: usize = scripts
        .iter()
        .map(|s| {
            s.iter()
                .filter(|o| {
                    o.t_ms <= played_ms
                        && matches!(o.kind, crate::board::ObservationKind::ClockPressed { .. })
                })
                .count()
        })
        .sum();
    let mut moves_recorded = 0;
    for k in 1..=boards {
        let text =
            std::fs::read_to_string(out.join(format!("round-1/game-{k}.pgn"))).unwrap_or_default();
        if let Ok(games) = read_games(&text) {
            moves_recorded += games.iter().map(|g| g.moves.len()).sum::<usize>();
        }
    }
    drop(virtual_boards);
    let (mut durable, mut file) = (Vec::new(), Vec::new());
    while let Ok(latency) = latencies.try_recv() {
        match latency.stage {
            LatencyStage::Durable => durable.push(latency.since_arrival),
            LatencyStage::File => file.push(latency.since_arrival),
        }
    }
    let mut sse = Vec::new();
    while let Ok(latency) = moves_seen.try_recv() {
        sse.push(latency);
    }
    let sse = Spread::of(sse);
    Ok(BoardsFigures {
        boards,
        warmup_s,
        seconds: elapsed.as_secs_f64(),
        moves_played,
        moves_recorded,
        sse,
        durable: Spread::of(durable),
        file: Spread::of(file),
        memory_per_board_kib: after.saturating_sub(before) / 1024 / boards.max(1) as u64,
        journal_entries_per_s: entries as f64 / elapsed.as_secs_f64(),
        journal_syncs_per_s: commits as f64 / elapsed.as_secs_f64(),
        cpu_ms_per_move: cpu.as_secs_f64() * 1000.0 / sse.count.max(1) as f64,
    })
}

/// Runs the benchmark for each number of boards and prints one JSON object per line.
pub fn run(boards: &[usize], seconds: u64, think_ms: u64) -> Result<(), String> {
    // Each board is a pseudo-terminal, and the recorder opens its port too.
    crate::bench::sse_spectators::raise_fd_limit();
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        for &n in boards {
            let figures = measure(n, seconds, think_ms)
                .await
                .map_err(|e| format!("{n} boards: {e}"))?;
            println!(
                "{}",
                serde_json::to_string(&figures).map_err(|e| e.to_string())?
            );
        }
        Ok(())
    })
}
