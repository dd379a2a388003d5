//! A broadcast node: rebuilds every board of the event from the stream, with the recorders'
//! own pipeline, and feeds the same pages, SSE, JSON and PGN files as `touchmove record`.
//!
//! The node reads the stream through a durable pull consumer named after it. At its start
//! the consumer is made to begin at the stream's first message, so a node started late or
//! restarted rebuilds everything; within a run, a consumer lost with a server restart is
//! made again from the last message applied. Whatever the stream redelivers, each recorder's
//! entries are applied exactly once and in journal order: an entry at or below the last
//! applied sequence number is a duplicate and dropped, one beyond the next is held until the
//! entries before it arrive.
//!
//! Entries are applied as the recorder made them: bytes and arbiter actions through the
//! board's [`BoardPipeline`]; an event entry that the node's pipeline did not produce with the
//! step before came from the recorder's clock tick, and is reproduced by a tick at that
//! entry's time.
//!
//! The node does not run the dead-position analysis (5.2.2) while reading: its pipelines defer
//! it and keep the positions asked for, in order. The recorder journals the end an analysis
//! found as event entries that no step of the node's pipeline produces; only at such an entry
//! does the node answer the positions waiting, in order, until one ends the game as the
//! recorder's did. The unwinnability search, the costliest part of a step, thus runs only
//! for the rare game it ends.
//!
//! The node's files are rebuilt from the stream at every start, so they are replaced without
//! a disk sync, and at most every [`FILES_EVERY`]: a spectator reads the latest state, never a
//! part of a file.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::consumer::{AckPolicy, DeliverPolicy, pull};
use futures_util::StreamExt;

use super::wire::{Layout, WireEntry};
use super::{ClusterSettings, connect, event_stream, loud, say};
use crate::act::{AnalysisRequest, Event};
use crate::clock::TimeControl;
use crate::recorder::layout::{BoardSummary, OutputFolder, combine};
use crate::recorder::{BoardPipeline, EventConfig, GameTags};
use crate::server::feed::{Feed, GameInfo};
use crate::store::{BoardKey, Record};

/// The feed's PGN and the acks are brought up to date at least this often while messages flow.
const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// A round's combined PGN (all its boards) is rebuilt, and the files rewritten, at most this
/// often.
pub const FILES_EVERY: Duration = Duration::from_millis(200);
/// … or after this many messages.
const FLUSH_AFTER: usize = 512;
/// Wait between attempts to reach the cluster.
const RETRY: Duration = Duration::from_secs(1);
/// How long entries after a gap wait for the missing ones before the gap is skipped.
const GAP_PATIENCE: Duration = Duration::from_secs(10);

/// What a broadcast node has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BroadcastStats {
    /// Stream messages read.
    pub messages: u64,
    /// Journal entries applied.
    pub applied: u64,
    /// Entries delivered again and dropped.
    pub duplicates: u64,
    /// Messages that did not decode (logged with their stream sequence and skipped).
    pub undecodable: u64,
    /// Entries of boards no layout names, or owned by another recorder.
    pub unowned: u64,
    /// Event entries the node's pipeline did not reproduce.
    pub mismatches: u64,
    /// The last stream sequence applied.
    pub stream_seq: u64,
}

/// A running broadcast node.
pub struct Broadcast {
    stats: Arc<Mutex<BroadcastStats>>,
    task: tokio::task::JoinHandle<()>,
}

impl Broadcast {
    /// Starts reading the event's stream into `feed` and the PGN folder `out_dir`.
    pub fn start(settings: ClusterSettings, out_dir: &Path, feed: Arc<Feed>) -> Broadcast {
        let rebuild = Rebuild::new(out_dir, feed);
        let stats = rebuild.stats.clone();
        let task = tokio::spawn(run(settings, rebuild));
        Broadcast { stats, task }
    }

    /// What the node has done so far.
    pub fn stats(&self) -> BroadcastStats {
        lock(&self.stats).clone()
    }

    /// Stops reading (the files hold everything applied).
    pub fn stop(self) {
        self.task.abort();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

async fn run(settings: ClusterSettings, mut rebuild: Rebuild) {
    let who = "serve";
    let mut said_unreachable = false;
    let mut first = true;
    loop {
        let client = match connect(&settings).await {
            Ok(c) => c,
            Err(e) => {
                if !said_unreachable {
                    said_unreachable = true;
                    loud(who, &format!("{e}; retrying every {} s", RETRY.as_secs()));
                }
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        said_unreachable = false;
        let js = jetstream::new(client.clone());
        match consume(&js, &settings, &mut rebuild, first).await {
            Ok(()) => {}
            Err(why) => loud(who, &format!("cluster: {why}; reconnecting")),
        }
        first = false;
        rebuild.flush();
        drop(client);
        tokio::time::sleep(RETRY).await;
    }
}

/// Reads the stream until it fails.
async fn consume(
    js: &jetstream::Context,
    settings: &ClusterSettings,
    rebuild: &mut Rebuild,
    first: bool,
) -> Result<(), String> {
    let stream = event_stream(js, settings)
        .await
        .map_err(|e| e.to_string())?;
    let name = format!("serve-{}", settings.member);
    let _ = stream.delete_consumer(&name).await;
    let last = lock(&rebuild.stats).stream_seq;
    let deliver_policy = if last == 0 {
        DeliverPolicy::All
    } else {
        DeliverPolicy::ByStartSequence {
            start_sequence: last + 1,
        }
    };
    let consumer = stream
        .create_consumer(pull::Config {
            durable_name: Some(name.clone()),
            deliver_policy,
            ack_policy: AckPolicy::All,
            max_ack_pending: 20_000,
            ..Default::default()
        })
        .await
        .map_err(|e| format!("creating the consumer {name}: {e}"))?;
    say(
        "serve",
        &format!(
            "cluster: reading event {:?} from {} (consumer {name}, {})",
            settings.event,
            settings.urls.join(","),
            if first {
                "from the first message".to_string()
            } else {
                format!("after message {last}")
            }
        ),
    );
    let mut messages = consumer
        .messages()
        .await
        .map_err(|e| format!("reading the consumer {name}: {e}"))?;
    let mut unacked: Option<jetstream::Message> = None;
    let mut since_flush = 0usize;
    let mut flush_at = tokio::time::Instant::now() + FLUSH_EVERY;
    loop {
        let next = tokio::time::timeout_at(flush_at, messages.next()).await;
        match next {
            Ok(Some(Ok(message))) => {
                let seq = message.info().map(|i| i.stream_sequence).unwrap_or(0);
                rebuild.apply(&message.subject, &message.payload, seq);
                unacked = Some(message);
                since_flush += 1;
                // A steady flow must not hold the feed's PGN back until it pauses.
                if since_flush >= FLUSH_AFTER || tokio::time::Instant::now() >= flush_at {
                    since_flush = 0;
                    flush_at = tokio::time::Instant::now() + FLUSH_EVERY;
                    rebuild.flush();
                    ack(&mut unacked).await;
                }
            }
            Ok(Some(Err(e))) => {
                rebuild.flush();
                ack(&mut unacked).await;
                return Err(format!("the consumer failed: {e}"));
            }
            Ok(None) => {
                rebuild.flush();
                ack(&mut unacked).await;
                return Err("the consumer ended".to_string());
            }
            Err(_) => {
                since_flush = 0;
                flush_at = tokio::time::Instant::now() + FLUSH_EVERY;
                rebuild.flush();
                rebuild.check_gaps();
                ack(&mut unacked).await;
            }
        }
    }
}

/// Acks everything up to the last message applied (the consumer acks all before it).
async fn ack(unacked: &mut Option<jetstream::Message>) {
    if let Some(message) = unacked.take() {
        // A lost ack only means a redelivery, which is dropped as a duplicate.
        let _ = message.ack().await;
    }
}

/// Where one recorder's journal stands on this node.
#[derive(Default)]
struct JournalProgress {
    applied: u64,
    waiting: BTreeMap<u64, WireEntry>,
    gap_since: Option<tokio::time::Instant>,
}

/// One board rebuilt on this node.
struct NodeBoard {
    owner: String,
    pipeline: BoardPipeline,
    /// Events the pipeline produced with the last step that the journal has not shown yet.
    pending_events: usize,
    summary: Option<BoardSummary>,
    /// The PGN last published.
    pgn: String,
    /// Positions the pipeline asked to analyse, oldest first, not answered yet.
    analyses: VecDeque<AnalysisRequest>,
}

impl NodeBoard {
    /// Keeps the positions the last step asked to analyse; those of a game that has ended
    /// can no longer end it.
    fn keep_analysis_requests(&mut self) {
        self.analyses.extend(self.pipeline.take_analysis_requests());
        if !self.pipeline.live() {
            self.analyses.clear();
        }
    }

    /// The recorder journalled events that no step here produced, after its analysis: the
    /// positions waiting are answered, in order, until one ends the game.
    fn answer_analyses(&mut self, t_ms: u64, events: &mut Vec<Event>) {
        while events.is_empty()
            && let Some(request) = self.analyses.pop_front()
        {
            let dead = request.analyse();
            self.pipeline
                .analysis_answered(t_ms, &request, dead, events);
        }
        self.keep_analysis_requests();
    }
}

/// The state rebuilt from the stream.
struct Rebuild {
    out: OutputFolder,
    feed: Arc<Feed>,
    /// The latest layout of each recorder.
    layouts: HashMap<String, Layout>,
    journals: HashMap<(String, u64), JournalProgress>,
    boards: BTreeMap<(u32, u32), NodeBoard>,
    /// Each round's event configuration, with the boards of every recorder.
    rounds: BTreeMap<u32, EventConfig>,
    dirty: BTreeSet<(u32, u32)>,
    /// Rounds whose combined PGN waits for its next rebuild (true: a board's summary changed).
    rounds_due: BTreeMap<u32, bool>,
    /// When the combined PGN of each round was last rebuilt.
    rounds_built: HashMap<u32, tokio::time::Instant>,
    files: std::sync::mpsc::Sender<FileJob>,
    stats: Arc<Mutex<BroadcastStats>>,
    /// Messages said once.
    said: BTreeSet<String>,
}

impl Rebuild {
    /// Nothing rebuilt yet; files go to the PGN folder `out_dir`.
    fn new(out_dir: &Path, feed: Arc<Feed>) -> Rebuild {
        let spares =
            crate::recorder::layout::state_dir(out_dir).join(crate::recorder::SPARE_DIR_NAME);
        let out = OutputFolder::new(out_dir)
            .unsynced()
            .with_spare_dir(&spares);
        Rebuild {
            files: spawn_file_writer(out.clone()),
            out,
            feed,
            layouts: HashMap::new(),
            journals: HashMap::new(),
            boards: BTreeMap::new(),
            rounds: BTreeMap::new(),
            dirty: BTreeSet::new(),
            rounds_due: BTreeMap::new(),
            rounds_built: HashMap::new(),
            stats: Arc::new(Mutex::new(BroadcastStats::default())),
            said: BTreeSet::new(),
        }
    }

    fn once(&mut self, key: String, message: &str) {
        if self.said.insert(key) {
            loud("serve", message);
        }
    }

    /// Applies one stream message.
    fn apply(&mut self, subject: &str, payload: &[u8], stream_seq: u64) {
        {
            let mut stats = lock(&self.stats);
            stats.messages += 1;
            if stream_seq <= stats.stream_seq {
                stats.duplicates += 1;
                return;
            }
            stats.stream_seq = stream_seq;
        }
        let kind = subject.split('.').nth(2).unwrap_or("");
        let decoded = match kind {
            "layout" => serde_json::from_slice::<Layout>(payload)
                .map(|l| self.apply_layout(l))
                .map_err(|e| e.to_string()),
            "journal" => serde_json::from_slice::<WireEntry>(payload)
                .map_err(|e| e.to_string())
                .and_then(|entry| self.receive(entry)),
            other => Err(format!("unknown subject kind {other:?}")),
        };
        if let Err(why) = decoded {
            lock(&self.stats).undecodable += 1;
            loud(
                "serve",
                &format!("stream message {stream_seq} ({subject}) skipped: {why}"),
            );
        }
    }

    fn apply_layout(&mut self, layout: Layout) {
        if let Some(old) = self.layouts.get(&layout.recorder)
            && old.epoch != layout.epoch
        {
            let message = format!(
                "recorder id {:?} is used by two journals (host {}, started {}; host {}, \
                 started {}): two PCs with the same id, or a journal replaced; give each PC its \
                 own id",
                layout.recorder, old.host, old.epoch, layout.host, layout.epoch
            );
            self.once(
                format!("epoch {} {}", layout.recorder, layout.epoch),
                &message,
            );
        }
        let config = layout.event_config();
        let control = config
            .time_control
            .as_deref()
            .and_then(|tc| TimeControl::parse(tc).ok())
            .unwrap_or(TimeControl::Unknown);
        if let Err(e) = self.out.prepare(config.round) {
            self.once(
                format!("prepare {}", config.round),
                &format!(
                    "cannot create {}: {e}",
                    self.out.round_dir(config.round).display()
                ),
            );
        }
        let round = self
            .rounds
            .entry(config.round)
            .or_insert_with(|| EventConfig {
                boards: Vec::new(),
                ..config.clone()
            });
        for board in &config.boards {
            round.boards.retain(|b| b.number != board.number);
            round.boards.push(board.clone());
        }
        round.boards.sort_by_key(|b| b.number);
        for board in &config.boards {
            let key = (config.round, board.number);
            match self.boards.get(&key) {
                Some(existing) if existing.owner != layout.recorder => {
                    let message = format!(
                        "board {} of round {} is claimed by recorders {:?} and {:?}; the entries \
                         of {:?} for it are ignored: give the board to one PC only",
                        board.number,
                        config.round,
                        existing.owner,
                        layout.recorder,
                        layout.recorder
                    );
                    self.once(format!("claim {key:?} {}", layout.recorder), &message);
                }
                Some(_) => {}
                None => {
                    let tags = GameTags::new(&config, board.number);
                    self.feed.upsert_game(GameInfo {
                        round: config.round,
                        board: board.number,
                        white: board.white.name.clone(),
                        black: board.black.name.clone(),
                        tags: tags.tags().to_vec(),
                    });
                    let mut pipeline = BoardPipeline::new(tags, control.clone()).with_board_log();
                    pipeline.defer_dead_position_analysis();
                    self.boards.insert(
                        key,
                        NodeBoard {
                            owner: layout.recorder.clone(),
                            pipeline,
                            pending_events: 0,
                            summary: None,
                            pgn: String::new(),
                            analyses: VecDeque::new(),
                        },
                    );
                    self.dirty.insert(key);
                }
            }
        }
        self.layouts.insert(layout.recorder.clone(), layout);
    }

    /// Takes a journal entry: applies it and those it was holding back, in order.
    fn receive(&mut self, entry: WireEntry) -> Result<(), String> {
        let record = entry.record()?;
        let key = entry.board_key()?;
        let journal = (entry.recorder.clone(), entry.epoch);
        let progress = self.journals.entry(journal.clone()).or_default();
        if entry.seq <= progress.applied || progress.waiting.contains_key(&entry.seq) {
            lock(&self.stats).duplicates += 1;
            return Ok(());
        }
        if entry.seq > progress.applied + 1 {
            progress.waiting.insert(entry.seq, entry);
            progress
                .gap_since
                .get_or_insert_with(tokio::time::Instant::now);
            return Ok(());
        }
        progress.applied = entry.seq;
        self.apply_entry(&entry.recorder, entry.t_ms, key, record);
        self.release(&journal);
        Ok(())
    }

    /// Applies the entries held for `journal` that follow on now.
    fn release(&mut self, journal: &(String, u64)) {
        loop {
            let Some(progress) = self.journals.get_mut(journal) else {
                return;
            };
            let next = progress.applied + 1;
            let Some(entry) = progress.waiting.remove(&next) else {
                if progress.waiting.is_empty() {
                    progress.gap_since = None;
                }
                return;
            };
            progress.applied = next;
            if let (Ok(record), Ok(key)) = (entry.record(), entry.board_key()) {
                self.apply_entry(&entry.recorder, entry.t_ms, key, record);
            }
        }
    }

    /// Entries that waited too long for missing ones: the gap is said and skipped.
    fn check_gaps(&mut self) {
        let stuck: Vec<((String, u64), u64, u64)> = self
            .journals
            .iter()
            .filter(|(_, p)| p.gap_since.is_some_and(|t| t.elapsed() >= GAP_PATIENCE))
            .filter_map(|(j, p)| Some((j.clone(), p.applied, *p.waiting.keys().next()?)))
            .collect();
        for (journal, applied, next) in stuck {
            loud(
                "serve",
                &format!(
                    "recorder {:?}: journal entries {}..{} never reached the stream; the boards \
                     of that recorder may miss moves here (restart that recorder to forward them \
                     again)",
                    journal.0,
                    applied + 1,
                    next - 1
                ),
            );
            if let Some(progress) = self.journals.get_mut(&journal) {
                progress.applied = next - 1;
                progress.gap_since = None;
            }
            self.release(&journal);
        }
    }

    fn apply_entry(&mut self, recorder: &str, t_ms: u64, key: Option<BoardKey>, record: Record) {
        let target = match (&key, &record) {
            (Some(BoardKey::Pairing { round, board }), _) => Some((*round, *board)),
            (None, Record::Arbiter(request)) => {
                self.layouts.get(recorder).map(|l| (l.round, request.board))
            }
            _ => None,
        };
        let Some(target) = target else {
            return;
        };
        let Some(board) = self.boards.get_mut(&target).filter(|b| b.owner == recorder) else {
            if matches!(record, Record::Bytes(_) | Record::Arbiter(_)) {
                lock(&self.stats).unowned += 1;
            }
            return;
        };
        let mut events: Vec<Event> = Vec::new();
        let (round, number) = target;
        match record {
            Record::Bytes(bytes) => {
                board.pipeline.on_bytes(t_ms, &bytes, &mut events);
                board.keep_analysis_requests();
                board.pending_events = events.len();
            }
            Record::Arbiter(request) => {
                let answer = board.pipeline.on_arbiter(t_ms, &request, &mut events);
                board.keep_analysis_requests();
                if answer.is_ok() {
                    self.feed
                        .note_arbiter_action(round, number, &request.action);
                }
                board.pending_events = events.len();
            }
            Record::Event(_) => {
                if board.pending_events > 0 {
                    board.pending_events -= 1;
                    return;
                }
                board.pipeline.tick(t_ms, &mut events);
                board.answer_analyses(t_ms, &mut events);
                match events.len() {
                    0 => {
                        lock(&self.stats).mismatches += 1;
                        return;
                    }
                    n => board.pending_events = n - 1,
                }
            }
            Record::Boundary(_) | Record::Metadata { .. } => return,
        }
        lock(&self.stats).applied += 1;
        for event in events {
            self.feed.publish(round, number, event);
        }
        self.dirty.insert(target);
    }

    /// Publishes the changed boards' PGN to the feed and has their files and their rounds'
    /// files rewritten (by the file writer, so that writing never holds up the stream). A
    /// round's combined PGN is rebuilt at most every [`FILES_EVERY`]; a later flush does it.
    fn flush(&mut self) {
        if self.dirty.is_empty() && self.rounds_due.is_empty() {
            return;
        }
        let dirty = std::mem::take(&mut self.dirty);
        for (round, number) in dirty {
            let Some(board) = self.boards.get_mut(&(round, number)) else {
                continue;
            };
            let pgn = board.pipeline.pgn();
            let summary = BoardSummary {
                board: number,
                result: board.pipeline.result().to_string(),
                live: board.pipeline.live(),
            };
            let index_changed = board.summary.as_ref() != Some(&summary);
            // Most entries (a piece lifted, a clock reading) change nothing in the game: each
            // rewrite costs a new file, so only a changed game is rewritten.
            if pgn == board.pgn && !index_changed {
                continue;
            }
            board.pgn = pgn;
            board.summary = Some(summary);
            *self.rounds_due.entry(round).or_default() |= index_changed;
            self.feed.set_pgn(round, number, board.pgn.clone());
            let _ = self.files.send(FileJob::Game {
                round,
                board: number,
                pgn: board.pgn.clone(),
            });
        }
        let now = tokio::time::Instant::now();
        let due: Vec<(u32, bool)> = self
            .rounds_due
            .iter()
            .filter(|(round, _)| {
                self.rounds_built
                    .get(round)
                    .is_none_or(|at| now.duration_since(*at) >= FILES_EVERY)
            })
            .map(|(round, changed)| (*round, *changed))
            .collect();
        for (round, index_changed) in due {
            self.rounds_due.remove(&round);
            self.rounds_built.insert(round, now);
            let texts: Vec<&str> = self
                .boards
                .range((round, 0)..=(round, u32::MAX))
                .map(|(_, b)| b.pgn.as_str())
                .collect();
            let pgn = combine(&texts);
            self.feed.set_round_pgn(round, pgn.clone());
            let _ = self.files.send(FileJob::Round { round, pgn });
            if index_changed && let Some(config) = self.rounds.get(&round) {
                let summaries: Vec<BoardSummary> = self
                    .boards
                    .range((round, 0)..=(round, u32::MAX))
                    .filter_map(|(_, b)| b.summary.clone())
                    .collect();
                let _ = self.files.send(FileJob::Index {
                    config: config.clone(),
                    summaries,
                });
            }
        }
    }
}

/// A file for the writer thread to rewrite.
enum FileJob {
    /// `round-N/game-K.pgn`.
    Game { round: u32, board: u32, pgn: String },
    /// `round-N/games.pgn`: the games in board order, combined.
    Round { round: u32, pgn: String },
    /// `round-N/index.json` and `tournament.json`.
    Index {
        config: EventConfig,
        summaries: Vec<BoardSummary>,
    },
}

/// Starts the thread that rewrites the PGN folder: of the jobs waiting, only the latest for
/// each file is written, and the thread waits [`FILES_EVERY`] after each round of writes so
/// that a board's many moves in that time cost one rewrite.
fn spawn_file_writer(out: OutputFolder) -> std::sync::mpsc::Sender<FileJob> {
    let (tx, rx) = std::sync::mpsc::channel::<FileJob>();
    let spawned = std::thread::Builder::new()
        .name("serve-files".into())
        .spawn(move || {
            let mut failing: BTreeSet<std::path::PathBuf> = BTreeSet::new();
            while let Ok(first) = rx.recv() {
                let mut latest: BTreeMap<(u8, u32, u32), FileJob> = BTreeMap::new();
                for job in std::iter::once(first).chain(rx.try_iter()) {
                    let key = match &job {
                        FileJob::Game { round, board, .. } => (0, *round, *board),
                        FileJob::Round { round, .. } => (1, *round, 0),
                        FileJob::Index { config, .. } => (2, config.round, 0),
                    };
                    latest.insert(key, job);
                }
                for job in latest.into_values() {
                    let (path, result) = match job {
                        FileJob::Game { round, board, pgn } => (
                            out.game_path(round, board),
                            out.write_game(round, board, &pgn),
                        ),
                        FileJob::Round { round, pgn } => {
                            let path = out.round_path(round);
                            let written = out.replace(&path, pgn.as_bytes());
                            (path, written)
                        }
                        FileJob::Index { config, summaries } => (
                            out.round_dir(config.round).join("index.json"),
                            out.write_index(&config, &summaries),
                        ),
                    };
                    match result {
                        Ok(()) => {
                            failing.remove(&path);
                        }
                        Err(e) => {
                            if failing.insert(path.clone()) {
                                loud("serve", &format!("cannot write {}: {e}", path.display()));
                            }
                        }
                    }
                }
                std::thread::sleep(FILES_EVERY);
            }
        });
    if let Err(e) = spawned {
        loud(
            "serve",
            &format!("cannot start the file writer thread: {e}"),
        );
    }
    tx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Entry;

    fn layout() -> Layout {
        let mut config = EventConfig::default();
        config.boards.push(crate::recorder::BoardConfig {
            number: 1,
            source: crate::recorder::BoardSource::Auto,
            kind: crate::board::kind::BoardKind::Dgt,
            leds: crate::recorder::leds::LedMode::Off,
            white: crate::recorder::Player::named("W"),
            black: crate::recorder::Player::named("B"),
        });
        Layout::of(&config, "pc1", 5, "host")
    }

    fn entry(seq: u64) -> Vec<u8> {
        entry_of(seq, seq * 10, Record::Bytes(vec![]))
    }

    fn entry_of(seq: u64, t_ms: u64, record: Record) -> Vec<u8> {
        let wire = WireEntry::from_entry(
            "pc1",
            5,
            &Entry {
                seq,
                session: 1,
                board: Some(BoardKey::Pairing { round: 1, board: 1 }),
                t_ms,
                record,
            },
        );
        serde_json::to_vec(&wire).unwrap()
    }

    /// The start position, then the lift and the placing of each piece of `moves`.
    fn board_chunks(moves: &[&str]) -> Vec<Vec<u8>> {
        use crate::board::dgt::{code_from_piece, fields_from_board};
        use crate::board::orientation::Orientation;
        use crate::wire::dgt::Message;
        let mut board = shakmaty::Board::new();
        let mut chunks =
            vec![Message::BoardDump(fields_from_board(&board, Orientation::Normal)).encode()];
        let field = |sq: shakmaty::Square| (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
        for uci in moves {
            let from: shakmaty::Square = uci[..2].parse().unwrap();
            let to: shakmaty::Square = uci[2..4].parse().unwrap();
            let piece = board.remove_piece_at(from).unwrap();
            board.set_piece_at(to, piece);
            let lift = Message::FieldUpdate {
                field: field(from),
                piece: 0,
            };
            let place = Message::FieldUpdate {
                field: field(to),
                piece: code_from_piece(piece),
            };
            chunks.push(lift.encode());
            chunks.push(place.encode());
        }
        chunks
    }

    #[test]
    fn a_dead_position_analysis_waits_for_an_event_no_step_of_the_node_produced() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Rebuild::new(dir.path(), Arc::new(Feed::new()));
        r.apply(
            "touchmove.e.layout.pc1",
            &serde_json::to_vec(&layout()).unwrap(),
            1,
        );
        // After 2.Qh5+ Black has two moves: a position for the unwinnability analysis.
        let mut seq = 0;
        for chunk in board_chunks(&["e2e4", "f7f6", "d1h5"]) {
            seq += 1;
            let t_ms = 1_000 + 900 * seq;
            r.apply(
                "touchmove.e.journal.pc1",
                &entry_of(seq, t_ms, Record::Bytes(chunk)),
                seq + 1,
            );
        }
        let board = &r.boards[&(1, 1)];
        let waiting: Vec<usize> = board.analyses.iter().map(|a| a.ply()).collect();
        assert_eq!(waiting, [3], "analysed while reading bytes: {waiting:?}");
        // The recorder journals the events of those bytes …
        for _ in 0..board.pending_events {
            seq += 1;
            let event = Event::Result {
                result: "*".into(),
                reason: "as produced".into(),
                t_ms: 0,
            };
            r.apply(
                "touchmove.e.journal.pc1",
                &entry_of(seq, 5_000, Record::Event(event)),
                seq + 1,
            );
        }
        assert_eq!(r.boards[&(1, 1)].analyses.len(), 1);
        assert_eq!(lock(&r.stats).mismatches, 0);
        // … and then one that no step here produced: the waiting position is answered (not
        // dead, so nothing follows and the entry is a mismatch).
        seq += 1;
        let event = Event::Result {
            result: "1/2-1/2".into(),
            reason: "dead position".into(),
            t_ms: 5_000,
        };
        r.apply(
            "touchmove.e.journal.pc1",
            &entry_of(seq, 5_000, Record::Event(event)),
            seq + 1,
        );
        assert!(r.boards[&(1, 1)].analyses.is_empty());
        assert_eq!(lock(&r.stats).mismatches, 1);
        assert_eq!(r.boards[&(1, 1)].pipeline.plies(), 3);
    }

    #[test]
    fn entries_apply_once_and_in_journal_order() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Rebuild::new(dir.path(), Arc::new(Feed::new()));
        r.apply(
            "touchmove.e.layout.pc1",
            &serde_json::to_vec(&layout()).unwrap(),
            1,
        );
        // Entry 2 before entry 1 (a retried publish), entry 1 twice, garbage.
        r.apply("touchmove.e.journal.pc1", &entry(2), 2);
        assert_eq!(r.journals[&("pc1".to_string(), 5)].applied, 0);
        r.apply("touchmove.e.journal.pc1", &entry(1), 3);
        r.apply("touchmove.e.journal.pc1", &entry(1), 4);
        r.apply("touchmove.e.journal.pc1", b"{not json", 5);
        r.apply("touchmove.e.journal.pc1", &entry(3), 5);
        let stats = lock(&r.stats).clone();
        assert_eq!(r.journals[&("pc1".to_string(), 5)].applied, 2);
        assert_eq!(stats.applied, 2);
        assert_eq!(stats.duplicates, 2, "{stats:?}");
        assert_eq!(stats.undecodable, 1);
        r.flush();
        let path = dir.path().join("round-1/game-1.pgn");
        for _ in 0..200 {
            if path.exists() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let pgn = std::fs::read_to_string(&path).unwrap();
        assert!(pgn.contains("[White \"W\"]"), "{pgn}");
    }
}
