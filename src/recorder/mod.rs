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
//!         kind: touchmove::board::kind::BoardKind::Dgt,
//!         leds: touchmove::recorder::leds::LedMode::Off,
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
mod discovery;
pub mod event_bench;
pub mod event_run;
mod game_files;
pub mod layout;
pub mod leds;
pub mod outage_bench;
pub mod pipeline;
mod replay;
pub mod rounds;
mod session;

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

pub use crate::event::{BoardConfig, BoardOrigins, BoardSource, EventConfig, Player};
pub use channel::ArbiterSink;
pub use discovery::PROBE_INTERVAL;
pub use pipeline::{BoardPipeline, GameTags};
pub use replay::LINK_LOST;
pub use session::WallClock;

use crate::board::Millis;
use crate::driver::board_stream::Connector;
use crate::driver::probe::Candidates;
use crate::server::feed::Feed;
use crate::store::{Journal, SharedJournal};
use board_task::{BoardCommand, BoardTask};
use discovery::{Discovery, DiscoverySetup};
use layout::{BoardSummary, OutputFolder};

/// Options of a recorder run besides the event itself.
#[derive(Clone)]
pub struct RunOptions {
    /// The PGN folder (`tournament.json`, `round-N/…`): what broadcast tools read and
    /// operators publish.
    pub out_dir: PathBuf,
    /// The event's state directory, kept out of the published folder (mode 0700): the
    /// journal by default, the arbiter's token and socket, the recorder's lock. Default:
    /// `OUT.state` ([`layout::state_dir`]).
    pub state_dir: PathBuf,
    /// The journal (SQLite). Default: `OUT.state/journal.sqlite`, or `OUT/journal.sqlite`
    /// when that exists (a folder recorded by an older touchmove).
    pub journal_path: PathBuf,
    /// Address of the web server (live view, PGN, arbiter API), or `None` for no server.
    pub listen: Option<SocketAddr>,
    /// The live feed the server and the lichess pusher read.
    pub feed: Arc<Feed>,
    /// Push the round to this lichess broadcast round id, with the token in this file.
    pub lichess: Option<(String, PathBuf)>,
    /// The lichess server pushed to: `https://lichess.org` unless a test gives a local one.
    pub lichess_url: String,
    /// Limits of the web server's connections (cap, header and idle timeouts).
    pub connection_limits: crate::server::ConnectionLimits,
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
    /// Most bytes (about) of journal entries one board holds in memory while the journal
    /// refuses them (disk full, read-only). Beyond, newer entries are not kept for the
    /// journal — the games go on in memory and in the PGN files, and the recorder says that a
    /// restart would not rebuild them. Default [`DEFAULT_BACKLOG_LIMIT`].
    pub journal_backlog_limit: usize,
    /// Bytes read from ports by probes before the start (`record --port auto`), with their
    /// receive times: recorded for the board found there.
    pub probed_bytes: BTreeMap<PathBuf, Vec<(tokio::time::Instant, Vec<u8>)>>,
    /// Where the web server sends the arbiter's "next round" (see [`event_run`]).
    pub next_round: Option<crate::server::NextRoundSink>,
    /// The developer key given to DGT Pegasus boards (`pegasus_key`); an event with a
    /// Pegasus board and no key does not start.
    pub pegasus_key: Option<crate::wire::pegasus::DeveloperKey>,
    /// Links to boards that the caller provides instead of opening their ports, by the port
    /// path configured for the board: a simulation's boards in memory.
    pub links: BTreeMap<PathBuf, Arc<dyn Connector>>,
    /// Where the time of day is read. Under a simulation's clock
    /// ([`WallClock::Simulated`], on a runtime whose clock is paused) the recorder also starts
    /// no thread of its own (journal writer, file writer, dead-position analyses): all its work
    /// is done on the runtime's one thread, so that a run is a function of its inputs.
    pub wall_clock: WallClock,
}

impl RunOptions {
    /// Options writing into `out_dir`, state (journal, token, socket) in
    /// [`layout::state_dir`]`(out_dir)`, no web server. A journal an older touchmove left in
    /// `out_dir` is used where it is.
    pub fn new(out_dir: &Path, feed: Arc<Feed>) -> RunOptions {
        let state_dir = layout::state_dir(out_dir);
        let legacy = out_dir.join(JOURNAL_NAME);
        let journal_path = if legacy.exists() {
            legacy
        } else {
            state_dir.join(JOURNAL_NAME)
        };
        RunOptions {
            out_dir: out_dir.to_path_buf(),
            state_dir,
            journal_path,
            listen: None,
            feed,
            lichess: None,
            lichess_url: crate::server::lichess::LICHESS.to_string(),
            connection_limits: crate::server::ConnectionLimits::default(),
            latency_probe: None,
            candidates: Candidates::default(),
            board_origins: BoardOrigins::new(),
            journal_limit: None,
            journal_backlog_limit: DEFAULT_BACKLOG_LIMIT,
            probed_bytes: BTreeMap::new(),
            next_round: None,
            pegasus_key: None,
            links: BTreeMap::new(),
            wall_clock: WallClock::System,
        }
    }
}

/// Default of [`RunOptions::journal_backlog_limit`]: 64 MiB per board, hours of play.
pub const DEFAULT_BACKLOG_LIMIT: usize = 64 << 20;

/// The journal's file name in the state directory.
pub const JOURNAL_NAME: &str = "journal.sqlite";

/// The folder in the state directory with a spare copy of each file of the output folder,
/// through which the files are rewritten ([`OutputFolder::with_spare_dir`]).
pub const SPARE_DIR_NAME: &str = "spare";

/// The lock file in the state directory that keeps a second recorder out of the folder.
pub const LOCK_NAME: &str = "recorder.lock";

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
    /// The state directory could not be created or written.
    #[error(
        "cannot use the state directory {path}: {source} (it holds the journal, token and socket; \
         make it writable or choose another --out)"
    )]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another recorder writes into the same output folder.
    #[error(
        "another `touchmove record` is recording into {out} (it holds {lock}); stop it first, or \
         give this one another --out"
    )]
    Busy {
        /// The output folder.
        out: PathBuf,
        /// The lock it holds.
        lock: PathBuf,
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
    /// A board or round number is out of bounds.
    #[error("{0}")]
    Numbers(String),
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
    /// A DGT Pegasus board and no developer key to open it with.
    #[error("{0}")]
    PegasusKey(String),
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
    /// See [`RunOptions::journal_backlog_limit`].
    pub backlog_limit: usize,
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
    /// The DGT bus chains, by port: each polls its boards and hands each board task its own
    /// board's events.
    pub buses: BTreeMap<PathBuf, crate::driver::bus_boards::BusBoards>,
    /// Pushes the round to lichess after every change, when asked to.
    pub pusher: Mutex<Option<crate::server::lichess::Pusher>>,
    /// Rewrites the boards' PGN files off the runtime's threads.
    pub game_files: game_files::GameFiles,
    /// See [`RunOptions::pegasus_key`].
    pub pegasus_key: Option<crate::wire::pegasus::DeveloperKey>,
    /// See [`RunOptions::links`].
    pub links: BTreeMap<PathBuf, Arc<dyn Connector>>,
    /// All work is done on the runtime's thread (a simulation, [`RunOptions::wall_clock`]).
    pub on_one_thread: bool,
}

impl Shared {
    /// Runs `work`, which waits for the disk or the journal, on a blocking thread; in a
    /// simulation at once on this one.
    pub(crate) async fn blocking<R: Send + 'static>(
        &self,
        work: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, tokio::task::JoinError> {
        if self.on_one_thread {
            Ok(work())
        } else {
            tokio::task::spawn_blocking(work).await
        }
    }

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

    /// Stores board `board`'s PGN and summary and has its `game-K.pgn` rewritten by the file
    /// writer, waiting for it with `wait`; the round's files follow within
    /// [`ROUND_FILES_DELAY`]. `arrived` is the arrival of the oldest change the text shows
    /// (for the latency probe).
    /// Most chunks (a piece lifted, a clock reading) leave the game's text as it was: then
    /// nothing is rewritten, unless the last write of the file failed.
    pub(crate) fn publish_board(
        &self,
        board: u32,
        pgn: String,
        summary: BoardSummary,
        arrived: Option<Millis>,
        wait: bool,
    ) {
        let round = self.config.round;
        let path = self.out.game_path(round, board);
        let unchanged = lock(&self.boards)
            .games
            .get(&board)
            .is_some_and(|(p, s)| *p == pgn && *s == summary);
        if unchanged && !lock(&self.unwritable).contains(&path) {
            self.probe_latency(arrived);
            return;
        }
        self.feed.set_pgn(round, board, pgn.clone());
        let file = game_files::GameFile {
            board,
            pgn: pgn.clone(),
            synced: self.journal_failing(),
            arrived,
        };
        match self.game_files.queue(file) {
            Some(file) => off_the_runtime(|| self.write_game_file(file)),
            None if wait => off_the_runtime(|| self.game_files.flush()),
            None => {}
        }
        let mut boards = lock(&self.boards);
        if boards.games.get(&board).is_none_or(|(_, s)| *s != summary) {
            boards.index_changed = true;
        }
        boards.games.insert(board, (pgn, summary));
        boards.generation += 1;
        drop(boards);
        self.round_changed.notify_one();
    }

    /// Rewrites a board's `game-K.pgn` (blocking).
    fn write_game_file(&self, file: game_files::GameFile) {
        let round = self.config.round;
        let written = self
            .out
            .clone()
            .synced(file.synced)
            .write_game(round, file.board, &file.pgn);
        self.check_written(&self.out.game_path(round, file.board), written);
        self.probe_latency(file.arrived);
    }

    /// Tells the latency probe, if there is one, how long ago a change that the files now
    /// show arrived.
    fn probe_latency(&self, arrived: Option<Millis>) {
        if let (Some(t_ms), Some(probe)) = (arrived, &self.latency_probe) {
            let since_arrival = self
                .session
                .epoch()
                .elapsed()
                .saturating_sub(Duration::from_millis(t_ms));
            let _ = probe.send(since_arrival);
        }
    }

    /// The output folder as the journal's state asks. While the journal takes every entry,
    /// the files are not synced: each change is committed (and synced) to the journal before
    /// it is written here, and a restart rewrites every file from the journal. While the
    /// journal refuses entries, the files hold moves it does not, so each rewrite is synced.
    fn files(&self) -> OutputFolder {
        self.out.clone().synced(self.journal_failing())
    }

    /// Syncs the round's files to disk, so that what a clean stop leaves is there after a
    /// power cut too (the journal would rebuild it, but only at the recorder's next start).
    pub(crate) fn sync_round_files(&self) {
        let round = self.config.round;
        let boards: Vec<u32> = lock(&self.boards).games.keys().copied().collect();
        let mut paths: Vec<PathBuf> = boards
            .iter()
            .map(|b| self.out.game_path(round, *b))
            .collect();
        paths.push(self.out.round_path(round));
        paths.push(self.out.round_dir(round).join("index.json"));
        paths.push(self.out.root().join("tournament.json"));
        for path in &paths {
            if let Ok(file) = std::fs::File::open(path) {
                let _ = file.sync_data();
            }
        }
        for dir in [self.out.round_dir(round), self.out.root().to_path_buf()] {
            if let Ok(dir) = std::fs::File::open(dir) {
                let _ = dir.sync_all();
            }
        }
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
        let folder = self.files();
        let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
        self.check_written(
            &self.out.round_path(round),
            folder.write_round(round, &texts),
        );
        let combined = layout::combine(&texts);
        if let Some(pusher) = lock(&self.pusher).as_ref() {
            pusher.push(combined.clone());
        }
        self.feed.set_round_pgn(round, combined);
        if let Some(summaries) = summaries {
            self.check_written(
                &self.out.round_dir(round).join("index.json"),
                folder.write_index(&self.config, &summaries),
            );
        }
    }
}

/// How long a shutdown waits for the last task of the run to let go of the journal.
const JOURNAL_CLOSE_WAIT: Duration = Duration::from_secs(5);

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

/// Runs `work`, which waits for the disk (a PGN rewrite; synced while the journal fails),
/// without stalling the other tasks of a multi-threaded runtime: a slow write on one board
/// must not starve the links of the others (or the virtual boards of the demo).
fn off_the_runtime<R>(work: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(work),
        _ => work(),
    }
}

/// Rewrites the round's files after changes, at most every [`ROUND_FILES_DELAY`].
async fn write_round_files(shared: Arc<Shared>) {
    loop {
        shared.round_changed.notified().await;
        tokio::time::sleep(ROUND_FILES_DELAY).await;
        let writer = Arc::clone(&shared);
        let _ = shared.blocking(move || writer.write_round_files()).await;
    }
}

/// Locks a mutex whose holder may have panicked (the data is still consistent: every update
/// is a single insert or remove).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Says something the arbiter must see, on stderr (a closed terminal is no reason to stop).
pub(crate) fn loud(message: &str) {
    say(message);
}

/// Set when the recorders of this process keep their messages to themselves.
static SILENT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on, the recorders of this process print nothing on stderr: a simulation runs
/// thousands of them, and judges what they record, not what they say.
pub fn silence_messages() {
    SILENT.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Says something the arbiter should know, on stderr.
pub(crate) fn say(message: &str) {
    use std::io::Write;
    if SILENT.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let _ = writeln!(std::io::stderr(), "touchmove record: {message}");
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
    state_dir: PathBuf,
    /// Held while the recorder runs: a second recorder on the same folder is refused.
    _folder_lock: nix::fcntl::Flock<std::fs::File>,
}

/// Takes the output folder's lock (in the state directory; the kernel releases it when the
/// process dies, so a killed recorder never blocks its restart).
fn lock_folder(options: &RunOptions) -> Result<nix::fcntl::Flock<std::fs::File>, RecorderError> {
    use nix::fcntl::{Flock, FlockArg};
    let path = options.state_dir.join(LOCK_NAME);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| RecorderError::StateDir {
            path: path.clone(),
            source,
        })?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        if errno == nix::errno::Errno::EWOULDBLOCK {
            RecorderError::Busy {
                out: options.out_dir.clone(),
                lock: path.clone(),
            }
        } else {
            RecorderError::StateDir {
                path: path.clone(),
                source: std::io::Error::from(errno),
            }
        }
    })
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
        crate::event::bounds::check_round(i64::from(config.round))
            .map_err(RecorderError::Numbers)?;
        for board in &config.boards {
            crate::event::bounds::check_board(i64::from(board.number))
                .map_err(RecorderError::Numbers)?;
        }
        crate::event::pegasus_key::check_boards(&config, options.pegasus_key.as_ref())
            .map_err(RecorderError::PegasusKey)?;
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
        let state_error = |source| RecorderError::StateDir {
            path: options.state_dir.clone(),
            source,
        };
        layout::prepare_state_dir(&options.state_dir).map_err(state_error)?;
        let folder_lock = lock_folder(&options)?;
        let out = out.with_spare_dir(&options.state_dir.join(SPARE_DIR_NAME));
        if options.journal_path == options.out_dir.join(JOURNAL_NAME) {
            say(&format!(
                "the journal {} is in the published output folder (an older touchmove put it \
                 there); it is used where it is. To keep it private, stop the recorder and move \
                 it (with its -wal and -shm files) to {}",
                options.journal_path.display(),
                options.state_dir.join(JOURNAL_NAME).display()
            ));
        }
        if let Some(addr) = options.listen
            && !addr.ip().is_loopback()
        {
            loud(&format!(
                "the web server listens on {addr}, reachable from other computers, without TLS: \
                 the arbiter's token and actions travel in clear. Put a TLS reverse proxy in \
                 front of it, or listen on 127.0.0.1"
            ));
        }
        let journal_error = |message: String| RecorderError::Journal {
            path: options.journal_path.clone(),
            message,
        };
        let mut journal =
            Journal::open(&options.journal_path).map_err(|e| journal_error(e.to_string()))?;
        let on_one_thread = matches!(options.wall_clock, WallClock::Simulated { .. });
        if on_one_thread {
            journal
                .without_disk_syncs()
                .map_err(|e| journal_error(e.to_string()))?;
        }
        if let Some(limit) = options.journal_limit {
            journal
                .limit_size(limit)
                .map_err(|e| journal_error(e.to_string()))?;
        }
        let first_start = journal
            .sessions()
            .map_err(|e| journal_error(e.to_string()))?
            .first()
            .map_or_else(|| options.wall_clock.unix_ms(), |s| s.started_unix_ms);
        let run = journal
            .begin_session(first_start)
            .map_err(|e| journal_error(e.to_string()))?;
        options.feed.begin_run(run);
        options.feed.set_time_origin(first_start);
        let session = session::Session::since(first_start, options.wall_clock);
        let mut replay = replay::split(
            &journal
                .entries_after(0)
                .map_err(|e| journal_error(e.to_string()))?,
            config.round,
        );
        let pusher = match &options.lichess {
            Some((round_id, token_file)) => Some(
                crate::server::lichess::Pusher::from_token_file(
                    &options.lichess_url,
                    round_id,
                    token_file,
                )
                .map_err(|e| RecorderError::Lichess(e.to_string()))?,
            ),
            None => None,
        };
        options
            .feed
            .status()
            .set_lichess(pusher.as_ref().map(|p| p.monitor()));
        let setup = DiscoverySetup {
            candidates: options.candidates.clone(),
            fixed: config
                .boards
                .iter()
                .filter_map(|b| match &b.source {
                    BoardSource::Port(p) | BoardSource::Bus { port: p, .. } => {
                        Some((p.clone(), b.number))
                    }
                    _ => None,
                })
                .collect(),
            reserved: config
                .boards
                .iter()
                .filter_map(|b| match &b.source {
                    BoardSource::Serial(s) => Some(s.clone()),
                    BoardSource::Auto => replay.get(&b.number)?.serial.clone(),
                    BoardSource::Port(_) | BoardSource::Bus { .. } => None,
                })
                .collect(),
            origins: options.board_origins.clone(),
            unread: options.probed_bytes.clone(),
        };
        let (discovery, prober) = Discovery::start(setup);
        let buses = bus_chains(&config, session.epoch());
        let shared = Arc::new_cyclic(|shared| Shared {
            config: config.clone(),
            out,
            feed: options.feed.clone(),
            journal: if on_one_thread {
                SharedJournal::on_caller_thread(journal)
            } else {
                SharedJournal::new(journal)
            },
            journal_path: options.journal_path.clone(),
            journal_failing: Mutex::new(BTreeSet::new()),
            backlog_limit: options.journal_backlog_limit,
            unwritable: Mutex::new(BTreeSet::new()),
            boards: Mutex::new(RoundBoards::default()),
            round_changed: tokio::sync::Notify::new(),
            round_written: Mutex::new(0),
            latency_probe: options.latency_probe.clone(),
            session,
            discovery,
            buses,
            pusher: Mutex::new(pusher),
            pegasus_key: options.pegasus_key.clone(),
            game_files: if on_one_thread {
                game_files::GameFiles::on_caller_thread()
            } else {
                game_files::GameFiles::start(shared.clone())
            },
            links: options.links.clone(),
            on_one_thread,
        });
        let mut boards = BTreeMap::new();
        let mut tasks = Vec::new();
        for board in &config.boards {
            let history = replay.remove(&board.number).unwrap_or_default();
            let task = BoardTask::resume(shared.clone(), board, control.clone(), history).await;
            let (tx, rx) = mpsc::channel(64);
            boards.insert(board.number, tx);
            tasks.push(tokio::spawn(supervise(
                shared.clone(),
                board.clone(),
                control.clone(),
                task,
                Arc::new(tokio::sync::Mutex::new(rx)),
            )));
        }
        let (sink, requests) = mpsc::channel(64);
        let mut background = vec![
            tokio::spawn(dispatch(requests, boards.clone())),
            prober,
            tokio::spawn(write_round_files(shared.clone())),
        ];
        let token = channel::event_token(&options.state_dir).map_err(state_error)?;
        options.feed.set_current_round(config.round);
        background.push(
            channel::listen(&options.state_dir, token.clone(), sink.clone())
                .map_err(state_error)?,
        );
        let server = match options.listen {
            Some(addr) => Some(
                crate::server::serve_with_next_round(
                    addr,
                    options.feed.clone(),
                    Some(sink.clone()),
                    options.next_round.clone(),
                    token,
                    options.connection_limits,
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
            state_dir: options.state_dir.clone(),
            _folder_lock: folder_lock,
        })
    }
}

/// Starts polling every DGT bus chain of the event, each with the addresses of the boards
/// configured on it.
fn bus_chains(
    config: &EventConfig,
    epoch: tokio::time::Instant,
) -> BTreeMap<PathBuf, crate::driver::bus_boards::BusBoards> {
    let mut chains: BTreeMap<PathBuf, Vec<u16>> = BTreeMap::new();
    for board in &config.boards {
        if let BoardSource::Bus { port, serial } = &board.source
            && let Some(address) = crate::wire::dgt::bus::address_of_serial(serial)
        {
            chains.entry(port.clone()).or_default().push(address);
        }
    }
    chains
        .into_iter()
        .map(|(port, addresses)| {
            let settings =
                crate::driver::bus::BusConfig::new(port.to_string_lossy().into_owned(), addresses);
            let chain = crate::driver::bus_boards::BusBoards::spawn(settings, epoch);
            (port, chain)
        })
        .collect()
}

/// Most restarts of one board's task within [`RESTART_WINDOW`] before it is left stopped (a
/// bug that strikes again at once would otherwise spin).
const MAX_RESTARTS: usize = 5;

/// See [`MAX_RESTARTS`].
const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// Runs a board's task and, when it panics, says so loudly, raises a critical alert on the
/// arbiter's desk and starts the board again from the journal: a bug on one board must not
/// silently stop it.
async fn supervise(
    shared: Arc<Shared>,
    board: BoardConfig,
    control: crate::clock::TimeControl,
    first: BoardTask,
    commands: board_task::Commands,
) {
    let mut task = first;
    let mut restarts: Vec<tokio::time::Instant> = Vec::new();
    loop {
        let why = match tokio::spawn(task.run(Arc::clone(&commands))).await {
            Ok(()) => return,
            Err(e) if e.is_panic() => panic_text(e.into_panic()),
            Err(_) => return,
        };
        let now = tokio::time::Instant::now();
        restarts.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
        restarts.push(now);
        let again = restarts.len() <= MAX_RESTARTS;
        let message = format!(
            "board {}: its task failed ({why}); {}",
            board.number,
            if again {
                "it is rebuilt from the journal and records again. Check its game"
            } else {
                "it failed too often and is STOPPED: restart the recorder (nothing journalled is lost)"
            }
        );
        loud(&message);
        let desk = |message: String| {
            shared.feed.publish(
                shared.config.round,
                board.number,
                crate::act::Event::Alert(crate::act::Alert {
                    article: "recorder".to_string(),
                    side: None,
                    ply: 0,
                    t_ms: shared.session.now_ms(),
                    evidence_ms: Vec::new(),
                    squares: Vec::new(),
                    severity: crate::act::Severity::Critical,
                    message,
                    gap: None,
                    withdraws: Vec::new(),
                    before_game: false,
                }),
            );
        };
        if !again {
            desk(message);
            return;
        }
        let rebuilt = {
            let (shared, board, control) = (shared.clone(), board.clone(), control.clone());
            tokio::spawn(async move {
                let entries = {
                    let journal = shared.journal.clone();
                    let key = replay::board_key(shared.config.round, board.number);
                    shared
                        .blocking(move || journal.lock().board_entries(&key, 0))
                        .await
                };
                let history = match entries {
                    Ok(Ok(entries)) => replay::split(&entries, shared.config.round)
                        .remove(&board.number)
                        .unwrap_or_default(),
                    Ok(Err(e)) => {
                        loud(&format!(
                            "board {}: cannot read the journal to rebuild it: {e}",
                            board.number
                        ));
                        return None;
                    }
                    Err(_) => return None,
                };
                Some(BoardTask::resume(shared, &board, control, history).await)
            })
            .await
        };
        // On the desk after the rebuild, which replays the game from its start.
        task = match rebuilt {
            Ok(Some(task)) => {
                desk(message);
                task
            }
            _ => {
                let stopped = format!(
                    "board {}: it cannot be rebuilt from the journal and is STOPPED; restart the \
                     recorder",
                    board.number
                );
                loud(&stopped);
                desk(format!("{message}. {stopped}"));
                return;
            }
        };
    }
}

/// The message of a panic.
fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".to_string())
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

    /// Makes board `board`'s task panic, as a bug would: for tests of the supervision.
    #[doc(hidden)]
    pub async fn crash_board_task(&self, board: u32) {
        if let Some(tx) = self.boards.get(&board) {
            let _ = tx.send(BoardCommand::Panic).await;
        }
    }

    /// Journal transactions (disk syncs) committed so far by this run, and the entries they
    /// held.
    pub fn journal_commits(&self) -> (u64, u64) {
        self.shared.journal.commits()
    }

    /// Changes each time the journal has committed what the boards appended: a reader of the
    /// journal (the cluster forwarder) waits on it rather than polling.
    pub fn journal_committed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.shared.journal.committed()
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

    /// The file holding the arbiter's token (for the socket and the web API).
    pub fn token_path(&self) -> PathBuf {
        self.state_dir.join(channel::TOKEN_NAME)
    }

    /// The arbiter's Unix socket.
    pub fn socket_path(&self) -> PathBuf {
        self.state_dir.join(channel::SOCKET_NAME)
    }

    /// The journal.
    pub fn journal_path(&self) -> &Path {
        &self.shared.journal_path
    }

    /// The state directory (journal by default, token, socket, lock).
    pub fn state_dir(&self) -> &Path {
        &self.state_dir
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
        for chain in self.shared.buses.values() {
            chain.shutdown();
        }
        for task in &self.background {
            task.abort();
        }
        // Awaited so that the aborted tasks have dropped what they held (the journal).
        for task in self.background {
            let _ = task.await;
        }
        let last = Arc::clone(&self.shared);
        let _ = self
            .shared
            .blocking(move || {
                last.game_files.flush();
                last.write_round_files();
                last.sync_round_files();
            })
            .await;
        if let Some(server) = self.server {
            server.shutdown().await;
        }
        let _ = std::fs::remove_file(self.state_dir.join(channel::SOCKET_NAME));
        let pusher = self
            .shared
            .pusher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        self.shared.feed.status().set_lichess(None);
        if let Some(pusher) = pusher {
            let stats = pusher.finish(Duration::from_secs(5)).await;
            if let Some(error) = stats.last_error {
                say(&format!("lichess: last push error: {error}"));
            }
        }
        let mut journal = self.shared.journal.clone();
        let journal_path = self.shared.journal_path.clone();
        let on_one_thread = self.shared.on_one_thread;
        drop(self.shared);
        // Every task of this run has ended, so the journal is ours alone; the wait only
        // covers a task still letting go of it.
        let deadline = tokio::time::Instant::now() + JOURNAL_CLOSE_WAIT;
        loop {
            let closing = move || journal.close();
            let closed = if on_one_thread {
                Ok(closing())
            } else {
                tokio::task::spawn_blocking(closing).await
            };
            match closed {
                Ok(Ok(())) => break,
                Ok(Err(back)) if tokio::time::Instant::now() < deadline => {
                    journal = back;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                _ => {
                    say(&format!(
                        "the journal {} is still in use by a task of this run; it is closed \
                         when that task ends",
                        journal_path.display()
                    ));
                    break;
                }
            }
        }
    }
}
