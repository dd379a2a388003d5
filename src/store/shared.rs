//! The journal shared by the recorder's tokio tasks, with group commit.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use super::board_key::BoardKey;
use super::error::JournalError;
use super::journal::{Journal, NewEntry, Record};
use crate::act::Event;
use crate::board::Millis;
use crate::record::arbiter::ArbiterRequest;

/// Most entries committed in one transaction (a caller's batch is never split).
const MAX_GROUP: usize = 8192;

/// A [`Journal`] shared by many tasks, with group commit.
///
/// Appends go to one writer thread, which commits everything that is waiting in a single
/// transaction (one disk sync) and then answers each caller with its sequence number. So an
/// append still returns only once its entry is on disk, but when many boards append at once
/// they share the cost of a sync instead of queueing for one each. Sequence numbers follow
/// the order in which appends reached the writer; the appends of one task keep their order.
/// Cloning is cheap; the writer thread ends when the last clone is dropped.
#[derive(Clone)]
pub struct SharedJournal {
    journal: Arc<Mutex<Journal>>,
    /// Where appends go to the writer thread; `None` when the callers commit themselves.
    queue: Option<mpsc::Sender<Pending>>,
    path: PathBuf,
    stats: Arc<Stats>,
    writer: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
    /// Counts the groups the writer thread has been through, for those who wait for entries.
    committed: Arc<tokio::sync::watch::Sender<u64>>,
}

/// What the writer thread has committed.
#[derive(Default)]
struct Stats {
    commits: AtomicU64,
    entries: AtomicU64,
}

/// Entries of one caller, committed together.
struct Pending {
    entries: Vec<NewEntry>,
    reply: oneshot::Sender<Result<Vec<u64>, Refused>>,
}

/// Entries the journal refused, handed back to their caller with the reason.
pub type Refused = (JournalError, Vec<NewEntry>);

impl SharedJournal {
    /// Shares `journal` and starts its writer thread.
    pub fn new(journal: Journal) -> SharedJournal {
        let path = journal.path().to_path_buf();
        let journal = Arc::new(Mutex::new(journal));
        let (queue, waiting) = mpsc::channel();
        let writer = Arc::clone(&journal);
        let stats = Arc::new(Stats::default());
        let counted = Arc::clone(&stats);
        let committed = Arc::new(tokio::sync::watch::Sender::new(0));
        let told = Arc::clone(&committed);
        let thread = std::thread::Builder::new()
            .name("journal-writer".into())
            .spawn(move || write_groups(&writer, &waiting, &counted, &told))
            .map_err(|e| tracing::error!("cannot start the journal writer thread: {e}"))
            .ok();
        SharedJournal {
            journal,
            queue: Some(queue),
            path,
            stats,
            writer: Arc::new(Mutex::new(thread)),
            committed,
        }
    }

    /// Shares `journal` without a writer thread: each append commits on the caller's thread
    /// before it resolves (a simulation, where all work is done on the runtime's one thread).
    pub fn on_caller_thread(journal: Journal) -> SharedJournal {
        SharedJournal {
            path: journal.path().to_path_buf(),
            journal: Arc::new(Mutex::new(journal)),
            queue: None,
            stats: Arc::new(Stats::default()),
            writer: Arc::new(Mutex::new(None)),
            committed: Arc::new(tokio::sync::watch::Sender::new(0)),
        }
    }

    /// Closes the journal now: the writer thread commits what is queued and stops, and the
    /// file and its lock are let go before this returns, so that a recorder started next in
    /// the same process opens the journal at once. Blocks while the writer finishes; call it
    /// from a blocking thread. Refused (handing the journal back) while another clone exists:
    /// closing under another task's feet would fail its appends.
    pub fn close(self) -> Result<(), SharedJournal> {
        if Arc::strong_count(&self.writer) > 1 {
            return Err(self);
        }
        let SharedJournal {
            journal,
            queue,
            writer,
            ..
        } = self;
        drop(queue);
        let thread = writer.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(thread) = thread {
            let _ = thread.join();
        }
        drop(journal);
        Ok(())
    }

    /// Changes each time the writer thread has committed a group (or failed to): readers of
    /// the journal, such as a cluster forwarder, wait on it instead of polling.
    pub fn committed(&self) -> tokio::sync::watch::Receiver<u64> {
        self.committed.subscribe()
    }

    /// Transactions (disk syncs) committed by the writer thread, and the entries they held.
    pub fn commits(&self) -> (u64, u64) {
        (
            self.stats.commits.load(Ordering::Relaxed),
            self.stats.entries.load(Ordering::Relaxed),
        )
    }

    /// The journal itself, for reads (blocks the calling thread: do not hold it across an
    /// `.await`).
    pub fn lock(&self) -> MutexGuard<'_, Journal> {
        // A panic while appending leaves no half-written entry (SQLite rolls it back).
        self.journal.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Journals bytes received from `board`; resolves once they are on disk.
    pub async fn append_bytes(
        &self,
        board: BoardKey,
        t_ms: Millis,
        bytes: Vec<u8>,
    ) -> Result<u64, JournalError> {
        self.append(Some(board), t_ms, Record::Bytes(bytes)).await
    }

    /// Journals an event of `board`'s act-of-moving machine.
    pub async fn append_event(
        &self,
        board: BoardKey,
        t_ms: Millis,
        event: Event,
    ) -> Result<u64, JournalError> {
        self.append(Some(board), t_ms, Record::Event(event)).await
    }

    /// Journals an arbiter action on `board` (round and board number).
    pub async fn append_arbiter(
        &self,
        board: BoardKey,
        t_ms: Millis,
        request: ArbiterRequest,
    ) -> Result<u64, JournalError> {
        self.append(Some(board), t_ms, Record::Arbiter(request))
            .await
    }

    /// Journals any entry.
    pub async fn append(
        &self,
        board: Option<BoardKey>,
        t_ms: Millis,
        record: Record,
    ) -> Result<u64, JournalError> {
        let entry = NewEntry {
            board,
            t_ms,
            record,
        };
        let seqs = self.append_all(vec![entry]).await?;
        seqs.first().copied().ok_or_else(|| self.stopped())
    }

    /// Journals several entries in one transaction: all or none. They go through the writer
    /// thread like single appends, so they share a disk sync with what other tasks append at
    /// the same moment, and they stay together and in order.
    pub async fn append_all(&self, entries: Vec<NewEntry>) -> Result<Vec<u64>, JournalError> {
        self.append_or_return(entries).await.map_err(|(e, _)| e)
    }

    /// Like [`append_all`](Self::append_all), but a refusal hands the entries back (moved,
    /// not copied), so that a caller can keep them for the next attempt.
    pub async fn append_or_return(&self, entries: Vec<NewEntry>) -> Result<Vec<u64>, Refused> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let Some(queue) = &self.queue else {
            let committed = commit_on_caller_thread(&mut self.lock(), entries, &self.stats);
            self.committed
                .send_modify(|groups| *groups = groups.wrapping_add(1));
            // Counts against the task's budget as waiting for the writer's answer does, so
            // that the task yields to the others where it would have.
            tokio::task::consume_budget().await;
            return committed;
        };
        let (reply, answer) = oneshot::channel();
        if let Err(unsent) = queue.send(Pending { entries, reply }) {
            return Err((self.stopped(), unsent.0.entries));
        }
        answer.await.map_err(|_| (self.stopped(), Vec::new()))?
    }

    fn stopped(&self) -> JournalError {
        JournalError::Other {
            path: self.path.clone(),
            source: "the journal writer thread has stopped; restart the recorder".into(),
        }
    }
}

/// The environment variable that makes the journal's writer wait this many milliseconds
/// before writing each group: a slow disk, for the test that kills the recorder while entries
/// wait to be written (a move published before its entry is written is then lost).
pub const SLOW_DISK_ENV: &str = "TOUCHMOVE_TEST_SLOW_DISK_MS";

/// The writer thread: commits whatever is waiting as one group, answers, repeats.
fn write_groups(
    journal: &Mutex<Journal>,
    waiting: &mpsc::Receiver<Pending>,
    stats: &Stats,
    signal: &tokio::sync::watch::Sender<u64>,
) {
    let slow_disk = std::env::var(SLOW_DISK_ENV)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(std::time::Duration::from_millis);
    while let Ok(first) = waiting.recv() {
        if let Some(wait) = slow_disk {
            std::thread::sleep(wait);
        }
        let mut size = first.entries.len();
        let mut group = vec![first];
        while size < MAX_GROUP {
            match waiting.try_recv() {
                Ok(next) => {
                    size += next.entries.len();
                    group.push(next);
                }
                Err(_) => break,
            }
        }
        let mut journal = journal.lock().unwrap_or_else(PoisonError::into_inner);
        commit_group(&mut journal, group, stats, signal);
    }
}

/// Commits one caller's `entries` on its own thread, as [`commit_group`] commits a group of
/// one, without the answer's channel.
fn commit_on_caller_thread(
    journal: &mut Journal,
    entries: Vec<NewEntry>,
    stats: &Stats,
) -> Result<Vec<u64>, Refused> {
    match journal.append_all(&entries) {
        Ok(seqs) => {
            stats.commits.fetch_add(1, Ordering::Relaxed);
            stats
                .entries
                .fetch_add(seqs.len() as u64, Ordering::Relaxed);
            Ok(seqs)
        }
        Err(error) => Err((error, entries)),
    }
}

/// Commits the appends of `group` in one transaction and answers each.
fn commit_group(
    journal: &mut Journal,
    group: Vec<Pending>,
    stats: &Stats,
    signal: &tokio::sync::watch::Sender<u64>,
) {
    let (batches, replies): (Vec<Vec<NewEntry>>, Vec<_>) =
        group.into_iter().map(|p| (p.entries, p.reply)).unzip();
    let sizes: Vec<usize> = batches.iter().map(Vec::len).collect();
    let all: Vec<NewEntry> = batches.into_iter().flatten().collect();
    let committed = journal.append_all(&all);
    let mut all = all.into_iter();
    match committed {
        Ok(seqs) => {
            stats.commits.fetch_add(1, Ordering::Relaxed);
            stats
                .entries
                .fetch_add(seqs.len() as u64, Ordering::Relaxed);
            let mut seqs = seqs.into_iter();
            for (reply, size) in replies.into_iter().zip(sizes) {
                let _ = reply.send(Ok(seqs.by_ref().take(size).collect()));
            }
        }
        // One entry that cannot be stored must not fail the others: commit each caller's
        // batch on its own.
        Err(JournalError::Unstorable { .. }) => {
            for (reply, size) in replies.into_iter().zip(sizes) {
                let batch: Vec<NewEntry> = all.by_ref().take(size).collect();
                let answer = journal.append_all(&batch).map_err(|e| (e, batch));
                let _ = reply.send(answer);
            }
        }
        Err(error) => {
            for (reply, size) in replies.into_iter().zip(sizes) {
                let batch: Vec<NewEntry> = all.by_ref().take(size).collect();
                let _ = reply.send(Err((error.duplicate(), batch)));
            }
        }
    }
    signal.send_modify(|groups| *groups = groups.wrapping_add(1));
}
