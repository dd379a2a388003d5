//! The state the board tasks of a run share: the event, the output folder, the feed, the
//! journal, and every board's latest PGN and summary, from which the round's files
//! (`games.pgn`, `index.json`) are rewritten.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;

use super::discovery::Discovery;
use super::layout::{self, BoardSummary, OutputFolder};
use super::options::{Latency, LatencyStage};
use super::{game_files, loud, say, session};
use crate::board::Millis;
use crate::event::EventConfig;
use crate::server::Publication;
use crate::server::feed::Feed;
use crate::store::SharedJournal;

/// The state shared by the board tasks: each board's latest PGN and summary, for
/// `games.pgn` and `index.json`.
pub(crate) struct Shared {
    pub config: EventConfig,
    pub out: OutputFolder,
    /// The live feed, and what the public sees of it.
    pub publication: Arc<Publication>,
    /// The round has a transmission delay: the public side writes its files and pushes it.
    pub delayed: bool,
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
    pub latency_probe: Option<mpsc::UnboundedSender<Latency>>,
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
    /// See [`RunOptions::links`](super::RunOptions::links).
    pub links: BTreeMap<PathBuf, Arc<dyn crate::driver::board_stream::Connector>>,
    /// All work is done on the runtime's thread (a simulation,
    /// [`RunOptions::wall_clock`](super::RunOptions::wall_clock)).
    pub on_one_thread: bool,
}

/// Runs `work`, which waits for the disk or the journal, on a blocking thread, or at once on
/// this one when everything runs `on_one_thread` (a simulation).
pub(crate) async fn blocking<R: Send + 'static>(
    on_one_thread: bool,
    work: impl FnOnce() -> R + Send + 'static,
) -> Result<R, tokio::task::JoinError> {
    if on_one_thread {
        Ok(work())
    } else {
        tokio::task::spawn_blocking(work).await
    }
}

impl Shared {
    /// The instant of session time `t_ms`, as the publication stamps what happened then.
    pub(crate) fn at(&self, t_ms: Millis) -> tokio::time::Instant {
        self.session.epoch() + Duration::from_millis(t_ms)
    }

    /// The live feed.
    pub(crate) fn feed(&self) -> &Feed {
        self.publication.live()
    }

    /// Runs `work`, which waits for the disk or the journal, on a blocking thread; in a
    /// simulation at once on this one.
    pub(crate) async fn blocking<R: Send + 'static>(
        &self,
        work: impl FnOnce() -> R + Send + 'static,
    ) -> Result<R, tokio::task::JoinError> {
        blocking(self.on_one_thread, work).await
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
            self.probe_latency(LatencyStage::File, arrived);
            return;
        }
        self.publication.text(
            self.at(self.session.now_ms()),
            round,
            board,
            pgn.clone(),
            summary.clone(),
        );
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
    pub(super) fn write_game_file(&self, file: game_files::GameFile) {
        let round = self.config.round;
        let written = self
            .out
            .clone()
            .synced(file.synced)
            .write_game(round, file.board, &file.pgn);
        self.check_written(&self.out.game_path(round, file.board), written);
        self.probe_latency(LatencyStage::File, file.arrived);
    }

    /// Tells the latency probe, if there is one, how long ago a change that reached `stage`
    /// arrived.
    pub(crate) fn probe_latency(&self, stage: LatencyStage, arrived: Option<Millis>) {
        if let (Some(t_ms), Some(probe)) = (arrived, &self.latency_probe) {
            let since_arrival = self
                .session
                .epoch()
                .elapsed()
                .saturating_sub(Duration::from_millis(t_ms));
            let _ = probe.send(Latency {
                stage,
                since_arrival,
            });
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
        self.feed().set_round_pgn(round, combined);
        if let Some(summaries) = summaries {
            self.check_written(
                &self.out.round_dir(round).join("index.json"),
                folder.write_index(&self.config, &summaries),
            );
        }
    }
}

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
pub(super) async fn write_round_files(shared: Arc<Shared>) {
    loop {
        shared.round_changed.notified().await;
        tokio::time::sleep(ROUND_FILES_DELAY).await;
        let writer = Arc::clone(&shared);
        let _ = shared.blocking(move || writer.write_round_files()).await;
    }
}

/// Locks a mutex whose holder may have panicked (the data is still consistent: every update
/// is a single insert or remove).
pub(super) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
