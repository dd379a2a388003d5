//! The recorder's outbox: forwards every journal entry to the event's stream, in journal
//! order, and never makes recording wait.
//!
//! The forwarder reads the journal through its own read-only connection (the recorder keeps
//! writing), publishes up to [`BATCH`] entries at a time with their deterministic message ids
//! ([`wire::message_id`]), waits for the acks and only then moves its cursor. The cursor is
//! kept in `OUT.state/cluster-forwarded.json` (the recorder's state directory) and, at every connection, lowered to the last entry the
//! stream holds for this recorder: a stream that lost messages (a server that was not synced
//! to disk) gets them again, and entries published twice are dropped by the server (same id)
//! or by the broadcast nodes (same sequence number). When the cluster is unreachable the
//! entries wait in the journal; the backlog (entries, age) is reported on stderr and by
//! [`Forwarder::backlog`].
//!
//! Given the recorder's commit signal ([`crate::store::SharedJournal::committed`]), the
//! forwarder reads the journal as soon as a commit has happened instead of looking every
//! [`POLL`]: an entry waits for no poll interval, and an idle recorder costs no reads.
//!
//! While connected, the forwarder also answers the serve nodes' requests for entries they
//! miss ([`wire::ReplayRequest`]): a hole in the middle of the stream (a server that lost
//! messages there) is filled from the journal, which re-publishing after the last entry the
//! stream holds would never do.
//!
//! One file for one concept, the outbox: reading the journal, publishing, the cursor and the
//! answers to replay requests share one connection and cursor.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::message::PublishMessage;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::desk::{self, OwnedBoards};
use super::wire::{self, Layout, ReplayReply, ReplayRequest, WireEntry};
use super::{ClusterSettings, connect, event_layout, event_stream, loud, say};
use crate::recorder::ArbiterSink;
use crate::store::{Entry, Journal};

/// Entries published before waiting for their acks.
pub const BATCH: usize = 256;
/// How often the journal is looked at for new entries when there were none and no commit
/// signal tells when there are.
const POLL: Duration = Duration::from_millis(10);
/// How often it is looked at anyway with a commit signal (entries journalled another way).
const IDLE_POLL: Duration = Duration::from_millis(250);
/// Wait between attempts to reach the cluster.
const RETRY: Duration = Duration::from_secs(1);
/// How often a waiting backlog is reported.
const REPORT_EVERY: Duration = Duration::from_secs(2);
/// How long a publish may wait for its ack.
const ACK_TIMEOUT: Duration = Duration::from_secs(2);
/// While entries flow, the cursor file is rewritten at most this often (and when they stop).
const CURSOR_EVERY: Duration = Duration::from_secs(1);

/// The cursor file in the output folder.
pub const CURSOR_FILE: &str = "cluster-forwarded.json";

/// What has not reached the cluster yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backlog {
    /// Journal entries not acked by the stream.
    pub entries: u64,
    /// How long the oldest of them has waited (milliseconds).
    pub oldest_ms: u64,
    /// True while the stream answers.
    pub connected: bool,
    /// The last journal sequence number acked.
    pub acked: u64,
}

#[derive(Default)]
struct Status {
    acked: AtomicU64,
    journalled: AtomicU64,
    /// Session time of the oldest entry not acked; `u64::MAX` when there is none.
    oldest_t_ms: AtomicU64,
    connected: AtomicBool,
}

/// The cursor as kept on disk.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Cursor {
    event: String,
    recorder: String,
    epoch: u64,
    acked: u64,
}

/// A running forwarder.
pub struct Forwarder {
    status: Arc<Status>,
    reader: Arc<Mutex<Journal>>,
    epoch: u64,
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

/// The epoch of the journal at `path`: its first session's wall-clock start (milliseconds
/// since 1970), or an error naming the file.
pub fn journal_epoch(path: &Path) -> Result<u64, String> {
    let journal = Journal::open_read_only(path).map_err(|e| e.to_string())?;
    let sessions = journal.sessions().map_err(|e| e.to_string())?;
    sessions
        .first()
        .map(|s| s.started_unix_ms)
        .ok_or_else(|| format!("journal {}: no session started yet", path.display()))
}

impl Forwarder {
    /// Starts forwarding the journal at `journal_path` (already opened by the recorder) as
    /// recorder `settings.member`, announcing `layout` (whose epoch must be the journal's)
    /// after claiming its boards in the event layout. The cursor is kept in `out_dir`. With
    /// `desk`, the arbiter actions the serve nodes send for its boards go there.
    /// `committed`, the recorder's commit signal, wakes the forwarder when there are new
    /// entries; without it the journal is polled.
    pub fn start(
        settings: ClusterSettings,
        journal_path: &Path,
        out_dir: &Path,
        layout: Layout,
        desk: Option<ArbiterSink>,
        committed: Option<tokio::sync::watch::Receiver<u64>>,
    ) -> Result<Forwarder, String> {
        let reader = Journal::open_read_only(journal_path).map_err(|e| e.to_string())?;
        let status = Arc::new(Status {
            oldest_t_ms: AtomicU64::new(u64::MAX),
            ..Status::default()
        });
        let epoch = layout.epoch;
        let reader = Arc::new(Mutex::new(reader));
        let run = Run {
            settings,
            reader: reader.clone(),
            cursor_path: out_dir.join(CURSOR_FILE),
            layout,
            status: status.clone(),
            desk,
            committed,
            claimed: Mutex::default(),
        };
        let report = super::spawn(report(status.clone(), epoch));
        let task = super::spawn(run.run());
        Ok(Forwarder {
            status,
            reader,
            epoch,
            tasks: vec![task, report],
        })
    }

    /// Starts forwarding for a recorder that has opened the journal at `journal_path` and
    /// records `config` into `out_dir`; with `desk`, it answers the serve nodes' arbiter
    /// actions for its boards through it.
    /// `committed` is its journal's commit signal
    /// ([`crate::recorder::RecorderHandle::journal_committed`]).
    pub fn for_recorder(
        settings: ClusterSettings,
        config: &crate::recorder::EventConfig,
        journal_path: &Path,
        out_dir: &Path,
        desk: Option<ArbiterSink>,
        committed: Option<tokio::sync::watch::Receiver<u64>>,
    ) -> Result<Forwarder, String> {
        let epoch = journal_epoch(journal_path)?;
        let layout = Layout::of(
            config,
            &settings.member,
            epoch,
            &super::settings::host_name(),
        );
        Forwarder::start(settings, journal_path, out_dir, layout, desk, committed)
    }

    /// What waits to be forwarded now.
    pub fn backlog(&self) -> Backlog {
        backlog(&self.status, self.epoch)
    }

    /// Reads the backlog from elsewhere (a status page), for as long as it is kept.
    pub fn watch(&self) -> BacklogWatch {
        BacklogWatch {
            status: self.status.clone(),
            epoch: self.epoch,
        }
    }

    /// Waits (at most `limit`) until everything journalled so far is acked, while the
    /// cluster answers; true when nothing is left.
    pub async fn drain(&self, limit: Duration) -> bool {
        let until = tokio::time::Instant::now() + limit;
        let reader = self.reader.clone();
        let last = tokio::task::spawn_blocking(move || {
            let journal = reader.lock().unwrap_or_else(|e| e.into_inner());
            journal.last_seq().unwrap_or(0)
        })
        .await
        .unwrap_or(0);
        loop {
            let b = self.backlog();
            if b.acked >= last {
                return true;
            }
            if !b.connected || tokio::time::Instant::now() >= until {
                return false;
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Stops forwarding (what is not acked is forwarded at the next start).
    pub fn stop(self) {
        for task in self.tasks {
            task.abort();
        }
    }
}

/// True when recorder `recorder` of `event` is connected to the cluster (something answers
/// on its replay subject, or does not say that nobody listens).
async fn recorder_connected(client: &async_nats::Client, event: &str, recorder: &str) -> bool {
    let asked = tokio::time::timeout(
        ACK_TIMEOUT,
        client.request(wire::replay_subject(event, recorder), "{}".into()),
    )
    .await;
    !matches!(
        asked,
        Ok(Err(e)) if e.kind() == async_nats::client::RequestErrorKind::NoResponders
    )
}

/// Answers the replay requests arriving on `subscriber` from the journal `reader` (of
/// `recorder`, epoch `epoch`) until it ends.
async fn answer_replays(
    client: async_nats::Client,
    mut subscriber: async_nats::Subscriber,
    reader: Arc<Mutex<Journal>>,
    recorder: String,
    epoch: u64,
) {
    while let Some(message) = subscriber.next().await {
        let Some(reply_to) = message.reply.clone() else {
            continue;
        };
        let reply = match serde_json::from_slice::<ReplayRequest>(&message.payload) {
            Err(e) => ReplayReply {
                entries: Vec::new(),
                refused: Some(format!("a malformed replay request: {e}")),
            },
            Ok(request) if request.epoch != epoch => ReplayReply {
                entries: Vec::new(),
                refused: Some(format!(
                    "recorder {recorder:?} holds the journal started at {epoch}, not the one \
                     started at {}",
                    request.epoch
                )),
            },
            Ok(request) => {
                let reader = reader.clone();
                let limit = request
                    .until
                    .saturating_sub(request.after)
                    .clamp(1, wire::REPLAY_LIMIT) as usize;
                let read = tokio::task::spawn_blocking(move || {
                    let journal = reader.lock().unwrap_or_else(|e| e.into_inner());
                    journal.entries_after_limit(request.after, limit)
                })
                .await;
                match read {
                    Ok(Ok(entries)) => ReplayReply {
                        entries: entries
                            .iter()
                            .map(|e| WireEntry::from_entry(&recorder, epoch, e))
                            .collect(),
                        refused: None,
                    },
                    Ok(Err(e)) => ReplayReply {
                        entries: Vec::new(),
                        refused: Some(format!("cannot read the journal: {e}")),
                    },
                    Err(e) => ReplayReply {
                        entries: Vec::new(),
                        refused: Some(e.to_string()),
                    },
                }
            }
        };
        let payload = serde_json::to_vec(&reply).unwrap_or_default();
        // A lost answer is asked for again.
        let _ = client.publish(reply_to, payload.into()).await;
    }
}

/// A view of a [`Forwarder`]'s backlog (see [`Forwarder::watch`]).
#[derive(Clone)]
pub struct BacklogWatch {
    status: Arc<Status>,
    epoch: u64,
}

impl BacklogWatch {
    /// What waits to be forwarded now.
    pub fn backlog(&self) -> Backlog {
        backlog(&self.status, self.epoch)
    }
}

fn backlog(status: &Status, epoch: u64) -> Backlog {
    let acked = status.acked.load(Ordering::Relaxed);
    let journalled = status.journalled.load(Ordering::Relaxed);
    let oldest = status.oldest_t_ms.load(Ordering::Relaxed);
    let entries = journalled.saturating_sub(acked);
    let oldest_ms = if entries == 0 || oldest == u64::MAX {
        0
    } else {
        super::unix_ms().saturating_sub(epoch + oldest)
    };
    Backlog {
        entries,
        oldest_ms,
        connected: status.connected.load(Ordering::Relaxed),
        acked,
    }
}

/// Waits until the journal has committed something (at most [`IDLE_POLL`]), or [`POLL`]
/// without a commit signal; a signal whose recorder has stopped is dropped.
async fn wait_for_entries(committed: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    let Some(signal) = committed.as_mut() else {
        tokio::time::sleep(POLL).await;
        return;
    };
    if let Ok(Err(_)) = tokio::time::timeout(IDLE_POLL, signal.changed()).await {
        *committed = None;
    }
}

/// Reports a backlog that waits, and when it has been flushed.
async fn report(status: Arc<Status>, epoch: u64) {
    let mut reported = false;
    loop {
        tokio::time::sleep(REPORT_EVERY).await;
        let b = backlog(&status, epoch);
        if b.entries > 0 && (!b.connected || b.oldest_ms >= REPORT_EVERY.as_millis() as u64) {
            reported = true;
            say(
                "record",
                &format!(
                    "cluster: {} journal entries wait to be forwarded, the oldest for {:.1} s \
                     ({}); recording goes on",
                    b.entries,
                    b.oldest_ms as f64 / 1000.0,
                    if b.connected {
                        "the stream is slow"
                    } else {
                        "the cluster is unreachable"
                    }
                ),
            );
        } else if reported && b.entries == 0 {
            reported = false;
            say(
                "record",
                &format!(
                    "cluster: backlog flushed, every entry up to {} is in the stream",
                    b.acked
                ),
            );
        }
    }
}

/// The tasks that answer the serve nodes on one connection (arbiter desk, replays): they end
/// with it, also when the forwarder is stopped in the middle of it, rather than living on
/// in the cluster's runtime.
struct ConnectionTasks(Vec<tokio::task::JoinHandle<()>>);

impl Drop for ConnectionTasks {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

struct Run {
    settings: ClusterSettings,
    reader: Arc<Mutex<Journal>>,
    cursor_path: PathBuf,
    layout: Layout,
    status: Arc<Status>,
    desk: Option<ArbiterSink>,
    committed: Option<tokio::sync::watch::Receiver<u64>>,
    /// The boards of the layout this recorder holds the claim of (at the last connection).
    claimed: Mutex<std::collections::BTreeSet<u32>>,
}

impl Run {
    async fn run(mut self) {
        let mut committed = self.committed.take();
        let mut cursor = self.read_cursor();
        let mut unreachable_said = false;
        let mut refused: Option<String> = None;
        loop {
            self.status.connected.store(false, Ordering::Relaxed);
            self.note_journalled(cursor.unwrap_or(0)).await;
            let client = match connect(&self.settings).await {
                Ok(c) => c,
                Err(e) => {
                    if !unreachable_said {
                        unreachable_said = true;
                        loud(
                            "record",
                            &format!(
                                "{e}. Recording locally; the journal is forwarded when the \
                                 cluster answers (retrying every {} s)",
                                RETRY.as_secs()
                            ),
                        );
                    }
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            };
            let js = jetstream::ContextBuilder::new()
                .timeout(ACK_TIMEOUT)
                .build(client.clone());
            match self.open(&js, cursor).await {
                Ok(start) => {
                    refused = None;
                    unreachable_said = false;
                    cursor = Some(start);
                    self.status.acked.store(start, Ordering::Relaxed);
                    self.status.connected.store(true, Ordering::Relaxed);
                    let desk = self.start_desk(&client, &js).await;
                    let replay = self.start_replay(&client).await;
                    let helpers = ConnectionTasks([desk, replay].into_iter().flatten().collect());
                    say(
                        "record",
                        &format!(
                            "cluster: connected to {} as recorder {:?} of event {:?}; forwarding \
                             the journal after entry {start}",
                            self.settings.urls.join(","),
                            self.settings.member,
                            self.settings.event
                        ),
                    );
                    let why = self.pump(&js, &mut cursor, &mut committed).await;
                    drop(helpers);
                    loud(
                        "record",
                        &format!(
                            "cluster: {why}; recording goes on, the backlog is forwarded when the \
                             cluster is back"
                        ),
                    );
                }
                Err(why) => {
                    if refused.as_deref() != Some(why.as_str()) {
                        loud("record", &format!("cluster: {why}; recording locally"));
                        refused = Some(why);
                    }
                }
            }
            drop(client);
            tokio::time::sleep(RETRY).await;
        }
    }

    /// Checks the stream and this recorder's id, announces the layout and says where to
    /// resume.
    async fn open(&self, js: &jetstream::Context, cursor: Option<u64>) -> Result<u64, String> {
        let stream = event_stream(js, &self.settings)
            .await
            .map_err(|e| e.to_string())?;
        let event = &self.settings.event;
        let recorder = &self.settings.member;
        match stream
            .get_last_raw_message_by_subject(&wire::layout_subject(event, recorder))
            .await
        {
            Ok(message) => {
                if let Ok(other) = serde_json::from_slice::<Layout>(&message.payload)
                    && other.epoch != self.layout.epoch
                {
                    if recorder_connected(&js.client(), event, recorder).await {
                        return Err(format!(
                            "recorder id {recorder:?} is already used in event {event:?} by host \
                             {} with another journal (started at {} ms since 1970, this one at \
                             {}), which is connected now: two PCs with the same id. Give each PC \
                             its own id (--cluster-member or `recorder = \"…\"` in [cluster]); \
                             nothing of this journal is forwarded until then",
                            other.host, other.epoch, self.layout.epoch
                        ));
                    }
                    say(
                        "record",
                        &format!(
                            "cluster: recorder id {recorder:?} forwards a new journal (started at \
                             {} ms since 1970) in place of the one started at {} on host {}, \
                             which is not connected: the serve nodes follow the new one",
                            self.layout.epoch, other.epoch, other.host
                        ),
                    );
                }
            }
            Err(e) if e.kind() == jetstream::stream::LastRawMessageErrorKind::NoMessageFound => {}
            Err(e) => return Err(format!("reading the stream: {e}")),
        }
        let store = event_layout::open(js, &self.settings)
            .await
            .map_err(|e| e.to_string())?;
        let boards: Vec<u32> = self.layout.boards.iter().map(|b| b.number).collect();
        let refused = event_layout::claim_boards(
            &store,
            self.layout.round,
            &boards,
            recorder,
            &self.layout.host,
        )
        .await?;
        if let Some(why) = event_layout::refusal(&refused, recorder) {
            loud(
                "record",
                &format!(
                    "cluster: {why}; the serve nodes show those boards from the PC that has \
                     them, and this PC's other boards as usual"
                ),
            );
        }
        // Only the boards claimed are announced: a board named here is this recorder's.
        let mut layout = self.layout.clone();
        layout
            .boards
            .retain(|b| refused.iter().all(|(number, _)| *number != b.number));
        *self.claimed.lock().unwrap_or_else(|e| e.into_inner()) =
            layout.boards.iter().map(|b| b.number).collect();
        let layout = serde_json::to_vec(&layout).map_err(|e| e.to_string())?;
        js.send_publish(
            wire::layout_subject(event, recorder),
            PublishMessage::build().payload(layout.into()),
        )
        .await
        .map_err(|e| format!("publishing the layout: {e}"))?
        .await
        .map_err(|e| format!("publishing the layout: {e}"))?;
        let in_stream = match stream
            .get_last_raw_message_by_subject(&wire::journal_subject(event, recorder))
            .await
        {
            Ok(message) => serde_json::from_slice::<WireEntry>(&message.payload)
                .ok()
                .filter(|e| e.epoch == self.layout.epoch)
                .map_or(0, |e| e.seq),
            Err(e) if e.kind() == jetstream::stream::LastRawMessageErrorKind::NoMessageFound => 0,
            Err(e) => return Err(format!("reading the stream: {e}")),
        };
        Ok(cursor.map_or(in_stream, |c| c.min(in_stream)))
    }

    /// Starts answering the serve nodes' arbiter actions for this recorder's boards (claimed
    /// by [`Run::open`]); `None` without a desk, or (said) when the subscription fails.
    async fn start_desk(
        &self,
        client: &async_nats::Client,
        js: &jetstream::Context,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let sink = self.desk.clone()?;
        let store = match event_layout::open(js, &self.settings).await {
            Ok(s) => s,
            Err(e) => {
                loud("record", &format!("arbiter desk off: {e}"));
                return None;
            }
        };
        let subject = desk::desk_subject(&self.settings.event, &self.settings.member);
        let subscriber = match client.subscribe(subject.clone()).await {
            Ok(s) => s,
            Err(e) => {
                loud(
                    "record",
                    &format!("arbiter desk off: cannot subscribe to {subject}: {e}"),
                );
                return None;
            }
        };
        // Subscribed at the server before "connected" is said.
        let _ = client.flush().await;
        let owned = OwnedBoards {
            recorder: self.settings.member.clone(),
            round: self.layout.round,
            boards: self
                .claimed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone(),
        };
        let reader = self.reader.clone();
        let applied = tokio::task::spawn_blocking(move || {
            let journal = reader.lock().unwrap_or_else(|e| e.into_inner());
            journal.arbiter_actions()
        })
        .await;
        let applied = match applied {
            Ok(Ok(actions)) => actions.into_iter().filter_map(|a| a.value.key).collect(),
            Ok(Err(e)) => {
                loud(
                    "record",
                    &format!("arbiter desk off: cannot read the journal: {e}"),
                );
                return None;
            }
            Err(e) => {
                loud("record", &format!("arbiter desk off: {e}"));
                return None;
            }
        };
        Some(tokio::spawn(desk::answer_requests(
            client.clone(),
            subscriber,
            store,
            owned,
            sink,
            applied,
        )))
    }

    /// Starts answering the serve nodes' requests for entries of this journal; `None` (said)
    /// when the subscription fails.
    async fn start_replay(
        &self,
        client: &async_nats::Client,
    ) -> Option<tokio::task::JoinHandle<()>> {
        let subject = wire::replay_subject(&self.settings.event, &self.settings.member);
        let subscriber = match client.subscribe(subject.clone()).await {
            Ok(s) => s,
            Err(e) => {
                loud(
                    "record",
                    &format!(
                        "cannot subscribe to {subject}: {e}; serve nodes that miss entries of \
                         this journal cannot get them"
                    ),
                );
                return None;
            }
        };
        Some(tokio::spawn(answer_replays(
            client.clone(),
            subscriber,
            self.reader.clone(),
            self.settings.member.clone(),
            self.layout.epoch,
        )))
    }

    /// Forwards the journal from `cursor` until the cluster fails; returns why it stopped (the
    /// run tries again after a while).
    async fn pump(
        &self,
        js: &jetstream::Context,
        cursor: &mut Option<u64>,
        committed: &mut Option<tokio::sync::watch::Receiver<u64>>,
    ) -> String {
        let subject = wire::journal_subject(&self.settings.event, &self.settings.member);
        let mut cursor_written = tokio::time::Instant::now();
        let mut cursor_behind = false;
        loop {
            // Seen before reading: a commit during the read wakes the wait below at once.
            if let Some(signal) = committed.as_mut() {
                signal.borrow_and_update();
            }
            let after = cursor.unwrap_or(0);
            let batch = match self.read(after).await {
                Ok(b) => b,
                Err(e) => return format!("cannot read the journal: {e}"),
            };
            if batch.is_empty() {
                if std::mem::take(&mut cursor_behind) {
                    self.write_cursor(*cursor);
                    cursor_written = tokio::time::Instant::now();
                }
                self.status.oldest_t_ms.store(u64::MAX, Ordering::Relaxed);
                wait_for_entries(committed).await;
                continue;
            }
            self.status
                .oldest_t_ms
                .store(batch[0].t_ms, Ordering::Relaxed);
            let mut acks = Vec::with_capacity(batch.len());
            for entry in &batch {
                let wire = WireEntry::from_entry(&self.settings.member, self.layout.epoch, entry);
                let payload = match serde_json::to_vec(&wire) {
                    Ok(p) => p,
                    Err(e) => return format!("entry {}: {e}", entry.seq),
                };
                let id = wire::message_id(&self.settings.member, self.layout.epoch, entry.seq);
                match js
                    .send_publish(
                        subject.clone(),
                        PublishMessage::build()
                            .payload(payload.into())
                            .message_id(id),
                    )
                    .await
                {
                    Ok(ack) => acks.push((entry.seq, ack)),
                    Err(e) => return format!("publishing entry {}: {e}", entry.seq),
                }
            }
            for (seq, ack) in acks {
                if let Err(e) = ack.await {
                    self.write_cursor(*cursor);
                    return format!("no ack for entry {seq}: {e}");
                }
                *cursor = Some(seq);
                self.status.acked.store(seq, Ordering::Relaxed);
            }
            // Each write makes a file and drops one; while entries flow, a cursor up to
            // CURSOR_EVERY behind only re-publishes entries after a restart, dropped as
            // duplicates.
            cursor_behind = true;
            if cursor_written.elapsed() >= CURSOR_EVERY {
                self.write_cursor(*cursor);
                cursor_written = tokio::time::Instant::now();
                cursor_behind = false;
            }
        }
    }

    /// The next entries after `after`, and the journal's last sequence number (noted).
    async fn read(&self, after: u64) -> Result<Vec<Entry>, String> {
        let reader = self.reader.clone();
        let (entries, last) = tokio::task::spawn_blocking(move || {
            let journal = reader.lock().unwrap_or_else(|e| e.into_inner());
            let last = journal.last_seq().map_err(|e| e.to_string())?;
            if last <= after {
                return Ok((Vec::new(), last));
            }
            let entries = journal
                .entries_after_limit(after, BATCH)
                .map_err(|e| e.to_string())?;
            Ok::<_, String>((entries, last))
        })
        .await
        .map_err(|e| e.to_string())??;
        self.status.journalled.store(last, Ordering::Relaxed);
        Ok(entries)
    }

    /// Notes the journal's last sequence number (for the backlog while disconnected) and the
    /// time of the first entry after `after`.
    async fn note_journalled(&self, after: u64) {
        let reader = self.reader.clone();
        let found = tokio::task::spawn_blocking(move || {
            let journal = reader.lock().unwrap_or_else(|e| e.into_inner());
            let last = journal.last_seq().ok()?;
            let first = journal.entries_after_limit(after, 1).ok()?;
            Some((last, first.first().map(|e| e.t_ms)))
        })
        .await
        .ok()
        .flatten();
        if let Some((last, first)) = found {
            self.status.journalled.store(last, Ordering::Relaxed);
            self.status
                .oldest_t_ms
                .store(first.unwrap_or(u64::MAX), Ordering::Relaxed);
        }
    }

    fn read_cursor(&self) -> Option<u64> {
        let text = std::fs::read_to_string(&self.cursor_path).ok()?;
        let cursor: Cursor = serde_json::from_str(&text).ok()?;
        (cursor.event == self.settings.event
            && cursor.recorder == self.settings.member
            && cursor.epoch == self.layout.epoch)
            .then_some(cursor.acked)
    }

    /// Keeps the cursor on disk (not synced: a cursor that is behind only re-publishes
    /// entries, which are dropped as duplicates).
    fn write_cursor(&self, acked: Option<u64>) {
        let Some(acked) = acked else { return };
        let cursor = Cursor {
            event: self.settings.event.clone(),
            recorder: self.settings.member.clone(),
            epoch: self.layout.epoch,
            acked,
        };
        if let Ok(text) = serde_json::to_string(&cursor) {
            // Through a spare kept beside it: a new file for each rewrite costs the disk more
            // than the write.
            let spare = self.cursor_path.with_extension("json.spare");
            let _ = crate::recorder::layout::replace_through(
                &self.cursor_path,
                &spare,
                text.as_bytes(),
            );
        }
    }
}
