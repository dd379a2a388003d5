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
//! # A transmission delay
//!
//! A round opened with a delay ([`RunOptions::broadcast_delay`]) journals it, and the round
//! keeps it across restarts (a restart may lengthen it, never shorten it). Everything the
//! boards do goes through the [`Publication`](crate::server::Publication), stamped with the
//! time it happened: the arbiter's desk and API see it at once; the public's pages, SSE, PGN
//! URLs, PGN folder (`OUT`) and lichess push that much later. The arbiter's own copy of the
//! round's files is then written to `OUT.state/live`, which the web server does not serve.
//! A restart rebuilds what is still to be released from the journal, with the times the
//! journal gives, so nothing is published early.
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

mod board_task;
pub mod channel;
mod delay;
mod discovery;
pub mod earlier_rounds;
mod error;
pub mod event_run;
mod file_replacement;
mod game_files;
mod handle;
pub mod layout;
pub mod leds;
mod options;
pub mod pipeline;
pub mod replay;
pub mod round_results;
mod session;
mod shared;
mod supervision;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

pub use crate::event::{BoardConfig, BoardOrigins, BoardSource, EventConfig, Player};
pub use channel::ArbiterSink;
pub use discovery::PROBE_INTERVAL;
pub use error::RecorderError;
pub use handle::RecorderHandle;
pub use options::{
    CHOSEN_DELAY_NAME, DEFAULT_BACKLOG_LIMIT, JOURNAL_NAME, LIVE_DIR_NAME, LIVE_SPARE_DIR_NAME,
    LOCK_NAME, Latency, LatencyStage, RunOptions, SPARE_DIR_NAME,
};
pub use pipeline::{BoardPipeline, GameTags};
pub use replay::{BROADCAST_DELAY, LINK_LOST, RoundDelay};
pub use session::WallClock;
pub use shared::ROUND_FILES_DELAY;
pub(crate) use shared::Shared;
use shared::{RoundBoards, write_round_files};
use supervision::{dispatch, supervise};

use crate::store::{Journal, SharedJournal};
use board_task::BoardTask;
use discovery::{Discovery, DiscoverySetup};
use layout::OutputFolder;

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
        let control = check_event(&config, &options)?;
        let (public, folder_lock) = open_folders(&config, &options)?;
        warn_about_places(&options);
        let publication = options
            .publication
            .clone()
            .unwrap_or_else(|| options.new_publication());
        let OpenedJournal {
            journal,
            session,
            mut replay,
            opened,
        } = open_journal(&config, &options, &publication)?;
        let delayed = publication.is_delayed(config.round);
        let out = round_folder(&config, &options, public, delayed)?;
        publication.round_config(&config);
        let pusher = lichess_pusher(&options)?
            .and_then(|pusher| publication.push_delayed(config.round, pusher));
        let opened_at = session.epoch() + std::time::Duration::from_millis(opened);
        let (discovery, prober) = Discovery::start(discovery_setup(&config, &options, &replay));
        let buses = bus_chains(&config, session.epoch());
        let on_one_thread = options.wall_clock.is_simulated();
        let shared = Arc::new_cyclic(|shared| Shared {
            config: config.clone(),
            out,
            publication: publication.clone(),
            delayed,
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
        let (boards, tasks) = start_boards(&shared, &control, &mut replay).await;
        publication.current_round(opened_at, config.round);
        let (sink, requests) = mpsc::channel(64);
        let mut background = vec![
            tokio::spawn(dispatch(requests, boards.clone())),
            prober,
            tokio::spawn(write_round_files(shared.clone())),
        ];
        let (listener, server) = start_arbiter_access(&options, &publication, &sink).await?;
        background.extend(listener);
        Ok(RecorderHandle {
            boards,
            tasks,
            background,
            sink,
            server,
            shared,
            state_dir: options.state_dir.clone(),
            out_dir: options.out_dir.clone(),
            _folder_lock: folder_lock,
        })
    }
}

/// Opens the arbiter's ways in: the local socket (`touchmove arbiter`) with the event's
/// token unless the options leave it out, and the web server when they ask for one.
async fn start_arbiter_access(
    options: &RunOptions,
    publication: &Arc<crate::server::Publication>,
    sink: &ArbiterSink,
) -> Result<
    (
        Option<tokio::task::JoinHandle<()>>,
        Option<crate::server::ServerHandle>,
    ),
    RecorderError,
> {
    let state_error = |source| RecorderError::StateDir {
        path: options.state_dir.clone(),
        source,
    };
    let token = channel::event_token(&options.state_dir).map_err(state_error)?;
    let listener = if options.arbiter_socket {
        Some(
            channel::listen(&options.state_dir, token.clone(), sink.clone())
                .map_err(state_error)?,
        )
    } else {
        None
    };
    let server = start_server(options, publication, sink, token).await?;
    Ok((listener, server))
}

/// Rebuilds each board's game from what the journal holds of it (`replay`) and starts its
/// task, watched over; returns where each board takes commands, and the tasks.
async fn start_boards(
    shared: &Arc<Shared>,
    control: &crate::clock::TimeControl,
    replay: &mut BTreeMap<u32, replay::History>,
) -> (
    BTreeMap<u32, mpsc::Sender<board_task::BoardCommand>>,
    Vec<tokio::task::JoinHandle<()>>,
) {
    let mut boards = BTreeMap::new();
    let mut tasks = Vec::new();
    for board in &shared.config.boards {
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
    (boards, tasks)
}

/// Checks what the event asks of the recorder (its round and board numbers, the Pegasus key
/// its boards need); returns its time control.
fn check_event(
    config: &EventConfig,
    options: &RunOptions,
) -> Result<crate::clock::TimeControl, RecorderError> {
    if config.boards.is_empty() {
        return Err(RecorderError::NoBoards);
    }
    crate::event::bounds::check_round(i64::from(config.round)).map_err(RecorderError::Numbers)?;
    for board in &config.boards {
        crate::event::bounds::check_board(i64::from(board.number))
            .map_err(RecorderError::Numbers)?;
    }
    crate::event::pegasus_key::check_boards(config, options.pegasus_key.as_ref())
        .map_err(RecorderError::PegasusKey)?;
    match &config.time_control {
        Some(tc) => crate::clock::TimeControl::parse(tc)
            .map_err(|e| RecorderError::TimeControl(e.to_string())),
        None => Ok(crate::clock::TimeControl::Unknown),
    }
}

/// Prepares the output folder for the round and the state directory, and takes the folder's
/// lock.
fn open_folders(
    config: &EventConfig,
    options: &RunOptions,
) -> Result<(OutputFolder, nix::fcntl::Flock<std::fs::File>), RecorderError> {
    let out = OutputFolder::new(&options.out_dir);
    out.prepare(config.round)
        .map_err(|source| RecorderError::OutDir {
            path: options.out_dir.clone(),
            source,
        })?;
    layout::prepare_state_dir(&options.state_dir).map_err(|source| RecorderError::StateDir {
        path: options.state_dir.clone(),
        source,
    })?;
    let folder_lock = lock_folder(options)?;
    Ok((out, folder_lock))
}

/// Where the round's files are written: the output folder `public`, or, when the round has
/// a transmission delay, the arbiter's copy in the state directory (the output folder then
/// holds what the public may see).
fn round_folder(
    config: &EventConfig,
    options: &RunOptions,
    public: OutputFolder,
    delayed: bool,
) -> Result<OutputFolder, RecorderError> {
    if !delayed {
        return Ok(public.with_spare_dir(&options.state_dir.join(SPARE_DIR_NAME)));
    }
    let live = OutputFolder::new(&options.state_dir.join(LIVE_DIR_NAME))
        .with_spare_dir(&options.state_dir.join(LIVE_SPARE_DIR_NAME));
    live.prepare(config.round)
        .map_err(|source| RecorderError::StateDir {
            path: options.state_dir.clone(),
            source,
        })?;
    Ok(live)
}

/// Says what is where it should not be: a journal in the published folder, a web server
/// reachable from other computers without TLS.
fn warn_about_places(options: &RunOptions) {
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
}

/// The journal opened, and what it says.
struct OpenedJournal {
    journal: Journal,
    /// This run's session, its time counted from the journal's first start.
    session: session::Session,
    /// What each board of the round journalled.
    replay: BTreeMap<u32, replay::History>,
    /// When the round opened (session time).
    opened: crate::board::Millis,
}

/// Opens the journal and begins this run's session in it, and gives `publication` the
/// transmission delays it holds (journalling the round's, when it opens with one).
fn open_journal(
    config: &EventConfig,
    options: &RunOptions,
    publication: &crate::server::Publication,
) -> Result<OpenedJournal, RecorderError> {
    let journal_error = |e: crate::store::JournalError| RecorderError::Journal {
        path: options.journal_path.clone(),
        message: e.to_string(),
    };
    let mut journal = Journal::open(&options.journal_path).map_err(journal_error)?;
    if options.wall_clock.is_simulated() {
        journal.without_disk_syncs().map_err(journal_error)?;
    }
    if let Some(limit) = options.journal_limit {
        journal.limit_size(limit).map_err(journal_error)?;
    }
    let first_start = journal
        .sessions()
        .map_err(journal_error)?
        .first()
        .map_or_else(|| options.wall_clock.unix_ms(), |s| s.started_unix_ms);
    let run = journal.begin_session(first_start).map_err(journal_error)?;
    publication.begin_run(run);
    publication.set_time_origin(first_start);
    let entries = journal.entries_after(0).map_err(journal_error)?;
    let replay = replay::split(&entries, config.round);
    let session = session::Session::since(first_start, options.wall_clock);
    let opened = delay::delay_round(
        config,
        options,
        publication,
        &mut journal,
        &session,
        &replay::broadcasts(&entries),
    )
    .map_err(|message| RecorderError::Journal {
        path: options.journal_path.clone(),
        message,
    })?;
    Ok(OpenedJournal {
        journal,
        session,
        replay,
        opened,
    })
}

/// The lichess pusher the options ask for, shown on the status.
fn lichess_pusher(
    options: &RunOptions,
) -> Result<Option<crate::server::lichess::Pusher>, RecorderError> {
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
    Ok(pusher)
}

/// Where the boards are looked for: the ports the event names, the serial numbers it (or an
/// earlier run of an "auto" board) reserves, the bytes probes read before the start.
fn discovery_setup(
    config: &EventConfig,
    options: &RunOptions,
    replay: &BTreeMap<u32, replay::History>,
) -> DiscoverySetup {
    DiscoverySetup {
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
    }
}

/// Starts the web server when the options ask for one.
async fn start_server(
    options: &RunOptions,
    publication: &Arc<crate::server::Publication>,
    sink: &ArbiterSink,
    token: String,
) -> Result<Option<crate::server::ServerHandle>, RecorderError> {
    let Some(addr) = options.listen else {
        return Ok(None);
    };
    crate::server::serve_with_next_round(
        addr,
        publication.clone(),
        Some(sink.clone()),
        options.next_round.clone(),
        token,
        options.connection_limits,
    )
    .await
    .map(Some)
    .map_err(|e| RecorderError::Server {
        addr,
        message: e.to_string(),
    })
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
