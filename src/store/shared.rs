//! The journal shared by the recorder's tokio tasks.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::board_key::BoardKey;
use super::error::JournalError;
use super::journal::{Journal, NewEntry};
use crate::act::Event;
use crate::board::Millis;
use crate::record::arbiter::ArbiterRequest;

/// A [`Journal`] shared by many tasks: each append runs on tokio's blocking pool (it waits
/// for the disk) and appends are serialised, so sequence numbers follow the order in which
/// appends obtained the journal. Cloning is cheap.
#[derive(Clone)]
pub struct SharedJournal {
    inner: Arc<Mutex<Journal>>,
}

impl SharedJournal {
    /// Shares `journal`.
    pub fn new(journal: Journal) -> SharedJournal {
        SharedJournal {
            inner: Arc::new(Mutex::new(journal)),
        }
    }

    /// The journal itself, for reads or a batch of calls (blocks the calling thread: do not
    /// hold it across an `.await`).
    pub fn lock(&self) -> MutexGuard<'_, Journal> {
        // A panic while appending leaves no half-written entry (SQLite rolls it back).
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`Journal::append_bytes`] on the blocking pool.
    pub async fn append_bytes(
        &self,
        board: BoardKey,
        t_ms: Millis,
        bytes: Vec<u8>,
    ) -> Result<u64, JournalError> {
        self.run(move |j| j.append_bytes(&board, t_ms, &bytes))
            .await
    }

    /// [`Journal::append_event`] on the blocking pool.
    pub async fn append_event(
        &self,
        board: BoardKey,
        t_ms: Millis,
        event: Event,
    ) -> Result<u64, JournalError> {
        self.run(move |j| j.append_event(&board, t_ms, &event))
            .await
    }

    /// [`Journal::append_arbiter`] on the blocking pool.
    pub async fn append_arbiter(
        &self,
        t_ms: Millis,
        request: ArbiterRequest,
    ) -> Result<u64, JournalError> {
        self.run(move |j| j.append_arbiter(t_ms, &request)).await
    }

    /// [`Journal::append_all`] on the blocking pool.
    pub async fn append_all(&self, entries: Vec<NewEntry>) -> Result<Vec<u64>, JournalError> {
        self.run(move |j| j.append_all(&entries)).await
    }

    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut Journal) -> Result<T, JournalError> + Send + 'static,
    ) -> Result<T, JournalError> {
        let shared = self.clone();
        let path = shared.lock().path().to_path_buf();
        tokio::task::spawn_blocking(move || work(&mut shared.lock()))
            .await
            .map_err(|e| JournalError::Other {
                path,
                source: format!("journal task failed: {e}").into(),
            })?
    }
}
