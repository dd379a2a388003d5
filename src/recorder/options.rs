//! The options of a recorder run besides the event itself, and the names of the files it
//! keeps in its state directory.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::layout;
use super::session::WallClock;
use crate::driver::board_stream::Connector;
use crate::driver::probe::Candidates;
use crate::event::BoardOrigins;
use crate::server::Publication;
use crate::server::feed::Feed;

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
    /// event, the time from its arrival to its entry being durable in the journal and to the
    /// PGN files being rewritten.
    pub latency_probe: Option<mpsc::UnboundedSender<Latency>>,
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
    /// Listen on `STATE/arbiter.sock` for `touchmove arbiter` (the default). A simulation's
    /// arbiter speaks through the recorder's handle, and its runtime has no I/O driver to
    /// listen with.
    pub arbiter_socket: bool,
    /// Where the time of day is read. Under a simulation's clock
    /// ([`WallClock::Simulated`], on a runtime whose clock is paused) the recorder also starts
    /// no thread of its own (journal writer, file writer, dead-position analyses): all its work
    /// is done on the runtime's one thread, so that a run is a function of its inputs.
    pub wall_clock: WallClock,
    /// The transmission delay of the round started (`broadcast_delay` of the event file,
    /// `record --broadcast-delay`, or the arbiter's choice at the desk): the public sees the
    /// round this much later. A round started before keeps the delay it was journalled with,
    /// or this one if it is longer. `None`: none.
    pub broadcast_delay: Option<Duration>,
    /// What the public sees of `feed`, kept from round to round (the end of a delayed round is
    /// released while the next one is recorded); made by
    /// [`Recorder::start`](super::Recorder::start) when `None`. Its live feed must be `feed`.
    pub publication: Option<Arc<Publication>>,
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
            arbiter_socket: true,
            wall_clock: WallClock::System,
            broadcast_delay: None,
            publication: None,
        }
    }

    /// The publication of `feed` for this output folder: delayed rounds' public files go to
    /// `out_dir`, and the delay chosen at the desk is kept in the state directory.
    pub fn new_publication(&self) -> Arc<Publication> {
        // Rebuilt from the journal after a crash, like a serve node's: not synced.
        let public_folder = layout::OutputFolder::new(&self.out_dir)
            .unsynced()
            .with_spare_dir(&self.state_dir.join(SPARE_DIR_NAME));
        Arc::new(
            Publication::new(self.feed.clone())
                .with_public_folder(public_folder)
                .with_chosen_delay_file(self.state_dir.join(CHOSEN_DELAY_NAME)),
        )
    }
}

/// What [`RunOptions::latency_probe`] receives: how long after a chunk's arrival it reached
/// `stage`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Latency {
    /// How far the chunk had gone.
    pub stage: LatencyStage,
    /// Time since the chunk's arrival (the driver's receive stamp).
    pub since_arrival: Duration,
}

/// Where a chunk of bytes has got to, for [`Latency`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LatencyStage {
    /// The chunk and its events are committed to the journal (on disk).
    Durable,
    /// The board's `game-K.pgn` shows what it changed.
    File,
}

/// The folder in the state directory where the arbiter's live copy of a delayed round's
/// files is written (the output folder then holds what the public may see).
pub const LIVE_DIR_NAME: &str = "live";

/// The spare copies of the files of [`LIVE_DIR_NAME`].
pub const LIVE_SPARE_DIR_NAME: &str = "live-spare";

/// The file in the state directory keeping the delay the arbiter chose at the desk.
pub const CHOSEN_DELAY_NAME: &str = "broadcast-delay.json";

/// Default of [`RunOptions::journal_backlog_limit`]: 64 MiB per board, hours of play.
pub const DEFAULT_BACKLOG_LIMIT: usize = 64 << 20;

/// The journal's file name in the state directory.
pub const JOURNAL_NAME: &str = "journal.sqlite";

/// The folder in the state directory with a spare copy of each file of the output folder,
/// through which the files are rewritten ([`OutputFolder::with_spare_dir`]).
pub const SPARE_DIR_NAME: &str = "spare";

/// The lock file in the state directory that keeps a second recorder out of the folder.
pub const LOCK_NAME: &str = "recorder.lock";
