//! The thread that rewrites the boards' `game-K.pgn` files, so that the board tasks never
//! wait for the disk on the runtime's threads: when every board moves at once, hundreds of
//! rewrites would otherwise each take a worker thread off the links and boards for a while.
//!
//! Of the rewrites of one board waiting, only the latest is made. A board task that must know
//! its file written (an arbiter's action, the journal failing) waits for it.

use std::collections::BTreeMap;
use std::sync::Weak;
use std::sync::mpsc;

use super::Shared;
use crate::board::Millis;

/// A board's new PGN text for its file.
pub(crate) struct GameFile {
    /// The board.
    pub board: u32,
    /// Its PGN.
    pub pgn: String,
    /// Written and synced to disk before it replaces the old one (while the journal fails).
    pub synced: bool,
    /// Arrival (session time) of the oldest change the text shows, for the latency probe.
    pub arrived: Option<Millis>,
}

enum Job {
    Write(GameFile),
    /// Answered once everything queued before is written.
    Flush(mpsc::Sender<()>),
}

/// Where a recorder's board tasks hand their files.
pub(crate) struct GameFiles {
    queue: Option<mpsc::Sender<Job>>,
}

impl GameFiles {
    /// Starts the writer of the recorder whose state `shared` will be; without its thread
    /// (it could not be started, said) the files are written by the caller.
    pub(crate) fn start(shared: Weak<Shared>) -> GameFiles {
        let (queue, jobs) = mpsc::channel();
        let started = std::thread::Builder::new()
            .name("recorder-files".into())
            .spawn(move || write(&shared, &jobs));
        if let Err(e) = &started {
            super::loud(&format!(
                "cannot start the thread that writes the PGN files ({e}); the board tasks write \
                 them"
            ));
        }
        GameFiles {
            queue: started.is_ok().then_some(queue),
        }
    }

    /// No writer thread: the board tasks write their files themselves (a simulation, where
    /// all work is done on the runtime's one thread).
    pub(crate) fn on_caller_thread() -> GameFiles {
        GameFiles { queue: None }
    }

    /// Queues `file`; gives it back when there is no writer thread.
    pub(crate) fn queue(&self, file: GameFile) -> Option<GameFile> {
        let Some(queue) = &self.queue else {
            return Some(file);
        };
        match queue.send(Job::Write(file)) {
            Err(mpsc::SendError(Job::Write(file))) => Some(file),
            _ => None,
        }
    }

    /// Blocks until every file queued so far is written.
    pub(crate) fn flush(&self) {
        let Some(queue) = &self.queue else {
            return;
        };
        let (done, written) = mpsc::channel();
        if queue.send(Job::Flush(done)).is_ok() {
            let _ = written.recv();
        }
    }
}

/// The writer thread: takes every job waiting, writes the latest text of each board, answers
/// the flushes, repeats; ends with the recorder.
fn write(shared: &Weak<Shared>, jobs: &mpsc::Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut latest: BTreeMap<u32, GameFile> = BTreeMap::new();
        let mut flushes = Vec::new();
        for job in std::iter::once(first).chain(jobs.try_iter()) {
            match job {
                Job::Write(mut file) => {
                    if let Some(older) = latest.remove(&file.board) {
                        file.synced |= older.synced;
                        file.arrived = older.arrived.or(file.arrived);
                    }
                    latest.insert(file.board, file);
                }
                Job::Flush(done) => flushes.push(done),
            }
        }
        let Some(shared) = shared.upgrade() else {
            return;
        };
        for file in latest.into_values() {
            shared.write_game_file(file);
        }
        drop(shared);
        for done in flushes {
            let _ = done.send(());
        }
    }
}
