//! A running recorder's handle: its arbiter sink, its web server's address, its journal, and
//! its orderly shutdown.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::board_task::BoardCommand;
use super::shared::Shared;
use super::{ArbiterSink, channel, say};

/// A handle on a running recorder.
pub struct RecorderHandle {
    pub(super) boards: BTreeMap<u32, mpsc::Sender<BoardCommand>>,
    pub(super) tasks: Vec<tokio::task::JoinHandle<()>>,
    pub(super) background: Vec<tokio::task::JoinHandle<()>>,
    pub(super) sink: ArbiterSink,
    pub(super) server: Option<crate::server::ServerHandle>,
    pub(super) shared: Arc<Shared>,
    pub(super) state_dir: PathBuf,
    pub(super) out_dir: PathBuf,
    /// Held while the recorder runs: a second recorder on the same folder is refused.
    pub(super) _folder_lock: nix::fcntl::Flock<std::fs::File>,
}

/// How long a shutdown waits for the last task of the run to let go of the journal.
const JOURNAL_CLOSE_WAIT: Duration = Duration::from_secs(5);

/// A journal size limit that no disk reaches (1 TiB).
const NO_JOURNAL_LIMIT: u64 = 1 << 40;

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

    /// The instant session time 0 stands for: a journalled or published `t_ms` happened at
    /// `session_epoch() + t_ms`.
    pub fn session_epoch(&self) -> tokio::time::Instant {
        self.shared.session.epoch()
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

    /// The output folder: what broadcast tools read and operators publish.
    pub fn out_dir(&self) -> &Path {
        &self.out_dir
    }

    /// Where this round's files are written: the output folder, or the arbiter's copy in
    /// the state directory (`OUT.state/live`) when the round has a transmission delay.
    pub fn live_dir(&self) -> &Path {
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
        // A delayed round's push goes on while its end is released.
        if !self.shared.delayed {
            self.shared.feed().status().set_lichess(None);
        }
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
            match super::shared::blocking(on_one_thread, move || journal.close()).await {
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
