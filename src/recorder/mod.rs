//! The recorder (shell): runs every board of an event — driver, decoder, act-of-moving
//! machine, journal, PGN files, clocks and arbiter controls.
//!
//! # Using it from code
//!
//! ```no_run
//! # async fn demo(pty: std::path::PathBuf) -> Result<(), touchmove::recorder::RecorderError> {
//! use std::sync::Arc;
//! use touchmove::recorder::{BoardConfig, BoardSource, EventConfig, Player, Recorder, RunOptions};
//!
//! let config = EventConfig {
//!     event: "Demo".into(),
//!     time_control: Some("300+2".into()),
//!     boards: vec![BoardConfig {
//!         number: 1,
//!         source: BoardSource::Port(pty),
//!         white: Player::named("White, W"),
//!         black: Player::named("Black, B"),
//!     }],
//!     ..EventConfig::default()
//! };
//! let feed = Arc::new(touchmove::server::feed::Feed::new());
//! let handle = Recorder::start(config, RunOptions::new("out".as_ref(), feed)).await?;
//! // … the boards play; the PGN folder and the feed follow every move …
//! let sink = handle.arbiter_sink(); // hand it to the web server's arbiter API
//! # drop(sink);
//! handle.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! # What happens to a byte
//!
//! Each board has a task that owns its serial link. Every chunk of bytes goes through the
//! board's [`BoardPipeline`] (decoder, observer, act-of-moving machine, clock); the chunk and
//! the events that come out are committed to the journal together (sharing a disk sync with
//! the other boards' commits of the moment), and only then published to the feed and written
//! to the board's `game-K.pgn` and the round's `games.pgn`, atomically. Arbiter requests
//! reach the same task, are journalled with their author and time, and are applied between
//! two chunks of bytes.
//!
//! # Restart
//!
//! On start the recorder replays the journal — every board's bytes and the arbiter actions,
//! in time order — through fresh pipelines, so after `kill -9` the games, clocks and alerts
//! are exactly where they were, and recording continues. Session time (`t_ms`) is counted from
//! the first start of the journal, so times stay comparable across restarts.
//!
//! # Times of a burst
//!
//! A board does not date its messages: a chunk's time is when the recorder read it. What the
//! board sent while the recorder was down (killed, restarting) queues in the operating system
//! and comes in one read, with one time, right after the restart; so may a backlog after a
//! stall. The pipeline keeps the order of the messages of a chunk exactly, and gives them all
//! the chunk's time: equal times within a chunk mean "the interval is not known", never
//! "simultaneous". The act-of-moving machine and the clock must read them so.
//!
//! # Boards found by serial number or "auto"
//!
//! Boards configured with `serial = "…"` or `port = "auto"` are found by probing the
//! candidate ports ([`RunOptions::candidates`]) for a DGT board and its serial number, at the
//! start and whenever the board's port disappears; see the `discovery` module.
//!
//! # A full or read-only disk
//!
//! A chunk and the events it caused are committed to the journal in one transaction before
//! they are published or written to the PGN files. When the journal refuses (disk full,
//! read-only), the recorder says so loudly, keeps the refused entries in memory in order and
//! commits them as soon as it can, goes on with the games in progress, and records no new
//! game until then. PGN files that cannot be written are reported once, with the fix.

pub mod bench;
mod board_task;
pub mod channel;
pub mod config;
mod discovery;
pub mod layout;
pub mod outage_bench;
pub mod pairings;
pub mod pipeline;
mod replay;
pub mod rounds;
mod session;
pub mod trf;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

pub use channel::ArbiterSink;
pub use config::{BoardConfig, BoardOrigins, BoardSource, EventConfig, Player};
pub use discovery::PROBE_INTERVAL;
pub use pipeline::{BoardPipeline, GameTags};

use crate::driver::probe::Candidates;
use crate::server::feed::Feed;
use crate::store::{Journal, SharedJournal};
use board_task::{BoardCommand, BoardTask};
use discovery::{Discovery, DiscoverySetup};
use layout::{BoardSummary, OutputFolder};

/// Options of a recorder run besides the event itself.
#[derive(Clone)]
pub struct RunOptions {
    /// The PGN folder (`tournament.json`, `round-N/…`); also holds the arbiter socket and
    /// token.
    pub out_dir: PathBuf,
    /// The journal (SQLite). Default: `OUT/journal.sqlite`.
    pub journal_path: PathBuf,
    /// Address of the web server (live view, PGN, arbiter API), or `None` for no server.
    pub listen: Option<SocketAddr>,
    /// The live feed the server and the lichess pusher read.
    pub feed: Arc<Feed>,
    /// Push the round to this lichess broadcast round id, with the token in this file.
    pub lichess: Option<(String, PathBuf)>,
    /// For `touchmove bench boards`: receives, for every chunk of bytes that produced an
    /// event, the time from its arrival to the PGN files being rewritten.
    pub latency_probe: Option<mpsc::UnboundedSender<Duration>>,
    /// Where boards named by serial number or "auto" are looked for.
    pub candidates: Candidates,
    /// Where each board was configured, for messages (from [`EventConfig::load_located`]).
    pub board_origins: BoardOrigins,
    /// Keep the journal under about this many bytes (SQLite `max_page_count`): appends beyond
    /// fail as on a full disk. For tests of a full disk, or to leave room on a shared one.
    pub journal_limit: Option<u64>,
    /// Bytes read from ports by probes before the start (`record --port auto`), with their
    /// receive times: recorded for the board found there.
    pub probed_bytes: BTreeMap<PathBuf, Vec<(tokio::time::Instant, Vec<u8>)>>,
    /// Where the web server sends the arbiter's "next round" (see [`rounds`]).
    pub next_round: Option<crate::server::NextRoundSink>,
    /// Keep this arbiter token instead of creating a new one (the next round of the same run).
    pub arbiter_token: Option<String>,
}

impl RunOptions {
    /// Options writing into `out_dir`, journal `out_dir/journal.sqlite`, no web server.
    pub fn new(out_dir: &Path, feed: Arc<Feed>) -> RunOptions {
        RunOptions {
            out_dir: out_dir.to_path_buf(),
            journal_path: out_dir.join("journal.sqlite"),
            listen: None,
            feed,
            lichess: None,
            latency_probe: None,
            candidates: Candidates::default(),
            board_origins: BoardOrigins::new(),
            journal_limit: None,
            probed_bytes: BTreeMap::new(),
            next_round: None,
            arbiter_token: None,
        }
    }
}

/// Why the recorder could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    /// The output folder could not be created or written.
    #[error("cannot write the output folder {path}: {source} (choose another with --out)")]
    OutDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The journal could not be opened or read.
    #[error("journal {path}: {message}")]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The time control is not valid.
    #[error("{0}")]
    TimeControl(String),
    /// The event has no boards.
    #[error(
        "no boards to record: give --port PATH (or --port auto), or list [[board]] entries in the event file"
    )]
    NoBoards,
    /// The web server could not start.
    #[error("web server on {addr}: {message}")]
    Server {
        /// The address.
        addr: SocketAddr,
        /// Why.
        message: String,
    },
    /// The lichess pusher could not start.
    #[error("lichess: {0}")]
    Lichess(String),
}

/// The state shared by the board tasks: each board's latest PGN and summary, for
/// `games.pgn` and `index.json`.
pub(crate) struct Shared {
    pub config: EventConfig,
    pub out: OutputFolder,
    pub feed: Arc<Feed>,
    pub journal: SharedJournal,
    pub journal_path: PathBuf,
    /// Boards whose entries the journal refuses (disk full, read-only): while there is one,
    /// no new game is recorded.
    pub journal_failing: Mutex<BTreeSet<u32>>,
    /// Output files that could not be written, so that each failure is said once.
    pub unwritable: Mutex<BTreeSet<PathBuf>>,
    pub boards: Mutex<RoundBoards>,
    /// Set when a board's PGN changed: the round's files are to be rewritten.
    pub round_changed: tokio::sync::Notify,
    /// The generation of the boards last written to the round's files.
    pub round_written: Mutex<u64>,
    pub latency_probe: Option<mpsc::UnboundedSender<Duration>>,
    pub session: session::Session,
    /// Finds the ports of boards named by serial number or "auto".
    pub discovery: Discovery,
    /// Pushes the round to lichess after every change, when asked to.
    pub pusher: Mutex<Option<crate::server::lichess::Pusher>>,
}

impl Shared {
    /// True while the journal refuses some board's entries.
    pub(crate) fn journal_failing(&self) -> bool {
        !lock(&self.journal_failing).is_empty()
    }

    /// Notes that the journal refused board `board`'s entries; true the first time.
    pub(crate) fn board_failed(&self, board: u32) -> bool {
        lock(&self.journal_failing).insert(board)
    }

    /// Notes that the journal took board `board`'s entries; true if it had refused them.
    pub(crate) fn board_recovered(&self, board: u32) -> bool {
        lock(&self.journal_failing).remove(&board)
    }

    /// Says loudly when writing `path` starts failing (once) and when it works again.
    fn check_written(&self, path: &Path, result: std::io::Result<()>) {
        let mut unwritable = lock(&self.unwritable);
        match result {
            Ok(()) => {
                if unwritable.remove(path) {
                    say(&format!("{} is written again", path.display()));
                }
            }
            Err(e) => {
                if unwritable.insert(path.to_path_buf()) {
                    let why = match e.kind() {
                        std::io::ErrorKind::StorageFull => "the disk is full".to_string(),
                        std::io::ErrorKind::PermissionDenied
                        | std::io::ErrorKind::ReadOnlyFilesystem => "it is read-only".to_string(),
                        _ => e.to_string(),
                    };
                    loud(&format!(
                        "CANNOT WRITE {}: {why} ({e}). The games are kept in memory and in the \
                         journal {}; free space on the disk or make the folder writable, and the \
                         file is rewritten at the next move",
                        path.display(),
                        self.journal_path.display()
                    ));
                }
            }
        }
    }

    /// Stores board `board`'s PGN and summary and rewrites its `game-K.pgn`; the round's
    /// files follow within [`ROUND_FILES_DELAY`].
    pub(crate) fn publish_board(&self, board: u32, pgn: String, summary: BoardSummary) {
        let round = self.config.round;
        self.feed.set_pgn(round, board, pgn.clone());
        self.check_written(
            &self.out.game_path(round, board),
            self.out.write_game(round, board, &pgn),
        );
        let mut boards = lock(&self.boards);
        if boards.games.get(&board).is_none_or(|(_, s)| *s != summary) {
            boards.index_changed = true;
        }
        boards.games.insert(board, (pgn, summary));
        boards.generation += 1;
        drop(boards);
        self.round_changed.notify_one();
    }

    /// Rewrites `games.pgn` (and `index.json` when a board's result or state changed) and
    /// passes the round on to the feed and lichess, unless a newer state was written already.
    pub(crate) fn write_round_files(&self) {
        let mut written = lock(&self.round_written);
        let (texts, summaries) = {
            let mut boards = lock(&self.boards);
            if boards.generation <= *written {
                return;
            }
            *written = boards.generation;
            let summaries: Option<Vec<BoardSummary>> = std::mem::take(&mut boards.index_changed)
                .then(|| boards.games.values().map(|(_, s)| s.clone()).collect());
            let texts: Vec<String> = boards.games.values().map(|(p, _)| p.clone()).collect();
            (texts, summaries)
        };
        let round = self.config.round;
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.check_written(
            &self.out.round_path(round),
            self.out.write_round(round, &texts),
        );
        let combined = layout::combine(&texts);
        if let Some(pusher) = lock(&self.pusher).as_ref() {
            pusher.push(combined.clone());
        }
        self.feed.set_round_pgn(round, combined);
        if let Some(summaries) = summaries {
            self.check_written(
                &self.out.round_dir(round).join("index.json"),
                self.out.write_index(&self.config, &summaries),
            );
        }
    }
}

/// A journal size limit that no disk reaches (1 TiB).
const NO_JOURNAL_LIMIT: u64 = 1 << 40;

/// How long the round's files wait after a change, so that the moves of many boards share one
/// rewrite of `games.pgn` (each board's own `game-K.pgn` is rewritten at once).
pub const ROUND_FILES_DELAY: Duration = Duration::from_millis(200);

/// Every board's latest PGN and summary, for the round's files.
#[derive(Default)]
pub(crate) struct RoundBoards {
    games: BTreeMap<u32, (String, BoardSummary)>,
    /// Counts changes, so that an older state never overwrites a newer one.
    generation: u64,
    /// A summary changed since `index.json` was written.
    index_changed: bool,
}

/// Rewrites the round's files after changes, at most every [`ROUND_FILES_DELAY`].
async fn write_round_files(shared: Arc<Shared>) {
    loop {
        shared.round_changed.notified().await;
        tokio::time::sleep(ROUND_FILES_DELAY).await;
        let writer = Arc::clone(&shared);
        let _ = tokio::task::spawn_blocking(move || writer.write_round_files()).await;
    }
}

/// Locks a mutex whose holder may have panicked (the data is still consistent: every update
/// is a single insert or remove).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Says something the arbiter must see, on stderr and in the log.
pub(crate) fn loud(message: &str) {
    eprintln!("touchmove record: {message}");
    tracing::error!("{message}");
}

/// Says something the arbiter should know, on stderr and in the log.
pub(crate) fn say(message: &str) {
    eprintln!("touchmove record: {message}");
    tracing::info!("{message}");
}

/// The running recorder.
pub struct Recorder;

/// A handle on a running recorder.
pub struct RecorderHandle {
    boards: BTreeMap<u32, mpsc::Sender<BoardCommand>>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    background: Vec<tokio::task::JoinHandle<()>>,
    sink: ArbiterSink,
    server: Option<crate::server::ServerHandle>,
    shared: Arc<Shared>,
}

impl Recorder {
    /// Starts recording `config`'s boards: opens (or resumes) the journal, rebuilds every game
    /// from it, writes the PGN folder, starts one task per board, the arbiter socket and, when
    /// `options.listen` is set, the web server. Returns once everything runs.
    pub async fn start(
        config: EventConfig,
        options: RunOptions,
    ) -> Result<RecorderHandle, RecorderError> {
        if config.boards.is_empty() {
            return Err(RecorderError::NoBoards);
        }
        let control = match &config.time_control {
            Some(tc) => crate::clock::TimeControl::parse(tc)
                .map_err(|e| RecorderError::TimeControl(e.to_string()))?,
            None => crate::clock::TimeControl::Unknown,
        };
        let out = OutputFolder::new(&options.out_dir);
        out.prepare(config.round)
            .map_err(|source| RecorderError::OutDir {
                path: options.out_dir.clone(),
                source,
            })?;
        let journal_error = |message: String| RecorderError::Journal {
            path: options.journal_path.clone(),
            message,
        };
        let mut journal =
            Journal::open(&options.journal_path).map_err(|e| journal_error(e.to_string()))?;
        if let Some(limit) = options.journal_limit {
            journal
                .limit_size(limit)
                .map_err(|e| journal_error(e.to_string()))?;
        }
        let first_start = journal
            .sessions()
            .map_err(|e| journal_error(e.to_string()))?
            .first()
            .map_or_else(session::unix_ms, |s| s.started_unix_ms);
        journal
            .begin_session(first_start)
            .map_err(|e| journal_error(e.to_string()))?;
        let session = session::Session::since(first_start);
        let mut replay = replay::split(
            &journal
                .entries_after(0)
                .map_err(|e| journal_error(e.to_string()))?,
            config.round,
        );
        let pusher = match &options.lichess {
            Some((round_id, token_file)) => Some(
                crate::server::lichess::Pusher::from_token_file(round_id, token_file)
                    .map_err(|e| RecorderError::Lichess(e.to_string()))?,
            ),
            None => None,
        };
        let setup = DiscoverySetup {
            candidates: options.candidates.clone(),
            fixed: config
                .boards
                .iter()
                .filter_map(|b| match &b.source {
                    BoardSource::Port(p) => Some((p.clone(), b.number)),
                    _ => None,
                })
                .collect(),
            reserved: config
                .boards
                .iter()
                .filter_map(|b| match &b.source {
                    BoardSource::Serial(s) => Some(s.clone()),
                    BoardSource::Auto => replay.get(&b.number)?.serial.clone(),
                    BoardSource::Port(_) => None,
                })
                .collect(),
            origins: options.board_origins.clone(),
            unread: options.probed_bytes.clone(),
        };
        let (discovery, prober) = Discovery::start(setup);
        let shared = Arc::new(Shared {
            config: config.clone(),
            out,
            feed: options.feed.clone(),
            journal: SharedJournal::new(journal),
            journal_path: options.journal_path.clone(),
            journal_failing: Mutex::new(BTreeSet::new()),
            unwritable: Mutex::new(BTreeSet::new()),
            boards: Mutex::new(RoundBoards::default()),
            round_changed: tokio::sync::Notify::new(),
            round_written: Mutex::new(0),
            latency_probe: options.latency_probe.clone(),
            session,
            discovery,
            pusher: Mutex::new(pusher),
        });
        let mut boards = BTreeMap::new();
        let mut tasks = Vec::new();
        for board in &config.boards {
            let history = replay.remove(&board.number).unwrap_or_default();
            let task = BoardTask::resume(shared.clone(), board, control.clone(), history).await;
            let (tx, rx) = mpsc::channel(64);
            boards.insert(board.number, tx);
            tasks.push(tokio::spawn(task.run(rx)));
        }
        let (sink, requests) = mpsc::channel(64);
        let mut background = vec![
            tokio::spawn(dispatch(requests, boards.clone())),
            prober,
            tokio::spawn(write_round_files(shared.clone())),
        ];
        let token = match &options.arbiter_token {
            Some(token) => channel::write_token(&options.out_dir, token).map(|()| token.clone()),
            None => channel::create_token(&options.out_dir),
        }
        .map_err(|source| RecorderError::OutDir {
            path: options.out_dir.clone(),
            source,
        })?;
        options.feed.set_current_round(config.round);
        background.push(
            channel::listen(&options.out_dir, token.clone(), sink.clone()).map_err(|source| {
                RecorderError::OutDir {
                    path: options.out_dir.join(channel::SOCKET_NAME),
                    source,
                }
            })?,
        );
        let server = match options.listen {
            Some(addr) => Some(
                crate::server::serve_with_next_round(
                    addr,
                    options.feed.clone(),
                    Some(sink.clone()),
                    options.next_round.clone(),
                    token,
                )
                .await
                .map_err(|e| RecorderError::Server {
                    addr,
                    message: e.to_string(),
                })?,
            ),
            None => None,
        };
        Ok(RecorderHandle {
            boards,
            tasks,
            background,
            sink,
            server,
            shared,
        })
    }
}

/// Routes arbiter requests to their board's task.
async fn dispatch(
    mut requests: mpsc::Receiver<(
        crate::record::arbiter::ArbiterRequest,
        tokio::sync::oneshot::Sender<Result<String, String>>,
    )>,
    boards: BTreeMap<u32, mpsc::Sender<BoardCommand>>,
) {
    while let Some((request, reply)) = requests.recv().await {
        match boards.get(&request.board) {
            Some(tx) => {
                if let Err(e) = tx.send(BoardCommand::Arbiter(request, reply)).await {
                    let BoardCommand::Arbiter(_, reply) = e.0 else {
                        continue;
                    };
                    let _ = reply.send(Err("that board's task has stopped".to_string()));
                }
            }
            None => {
                let known: Vec<String> = boards.keys().map(u32::to_string).collect();
                let _ = reply.send(Err(format!(
                    "no board {} in this event (boards: {})",
                    request.board,
                    known.join(", ")
                )));
            }
        }
    }
}

impl RecorderHandle {
    /// Where arbiter requests go (the web API uses it; `touchmove arbiter` reaches it through
    /// the socket in the output folder).
    pub fn arbiter_sink(&self) -> ArbiterSink {
        self.sink.clone()
    }

    /// The address the web server listens on, if it runs.
    pub fn server_addr(&self) -> Option<SocketAddr> {
        self.server.as_ref().map(|s| s.local_addr())
    }

    /// Journal transactions (disk syncs) committed so far by this run, and the entries they
    /// held.
    pub fn journal_commits(&self) -> (u64, u64) {
        self.shared.journal.commits()
    }

    /// True while the journal refuses some board's entries (disk full, read-only).
    pub fn journal_failing(&self) -> bool {
        self.shared.journal_failing()
    }

    /// Changes the journal's size limit while recording (`None`: no limit but the disk's),
    /// like [`RunOptions::journal_limit`]. Entries refused for the old limit are committed at
    /// the next chunk or tick.
    pub fn limit_journal(&self, max_bytes: Option<u64>) -> Result<u64, crate::store::JournalError> {
        self.shared
            .journal
            .lock()
            .limit_size(max_bytes.unwrap_or(NO_JOURNAL_LIMIT))
    }

    /// The output folder.
    pub fn out_dir(&self) -> &Path {
        self.shared.out.root()
    }

    /// Stops every board (closing its port), the socket and the server. Everything recorded
    /// is already in the journal and the PGN files.
    pub async fn shutdown(self) {
        for tx in self.boards.values() {
            let _ = tx.send(BoardCommand::Shutdown).await;
        }
        for task in self.tasks {
            let _ = task.await;
        }
        for task in self.background {
            task.abort();
        }
        let last = Arc::clone(&self.shared);
        let _ = tokio::task::spawn_blocking(move || last.write_round_files()).await;
        if let Some(server) = self.server {
            server.shutdown().await;
        }
        let _ = std::fs::remove_file(self.shared.out.root().join(channel::SOCKET_NAME));
        let pusher = self
            .shared
            .pusher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(pusher) = pusher {
            let stats = pusher.finish(Duration::from_secs(5)).await;
            if let Some(error) = stats.last_error {
                say(&format!("lichess: last push error: {error}"));
            }
        }
    }
}
