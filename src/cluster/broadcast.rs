//! A broadcast node: rebuilds every board of the event from the stream, with the recorders'
//! own pipeline, and feeds the same pages, SSE, JSON and PGN files as `touchmove record`.
//!
//! The node reads the stream through a durable pull consumer named after it and this run of
//! it (`serve-MEMBER-RUN`), so two nodes with one member name (two hosts of one name) never
//! take each other's consumer; one left behind by an ended run is removed by the server after
//! [`CONSUMER_IDLE`]. At its start
//! the consumer is made to begin at the stream's first message, so a node started late or
//! restarted rebuilds everything; within a run, a consumer lost with a server restart is
//! made again after the last message read, or from the first message when the stream is not
//! the one read before (made anew, or holding fewer messages: a server that lost its state).
//!
//! Whatever the stream delivers, each recorder's entries are applied exactly once and in
//! journal order, by their own key (recorder, journal epoch, journal sequence number), never
//! by the stream's sequence numbers, which start again lower on a server that lost its state:
//! an entry at or below the last applied sequence number is a duplicate and dropped, one
//! beyond the next is held (at most [`MAX_HELD`] per journal) until the entries before it
//! arrive. Entries missing for [`GAP_ASK`] are asked from the recorder itself
//! ([`wire::ReplayRequest`]), which answers from its journal; until they arrive, that
//! recorder's later entries wait, so the node never serves a board with a move missing.
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
//!
//! A round broadcast with a transmission delay (the recorders journal it when they open the
//! round, [`RoundDelay`]) is published as the recorders publish it: everything goes to the
//! node's [`Publication`] stamped with the time the recorder journalled it, the arbiter's desk
//! sees it at once, the public that much later, and the round's own files are the arbiter's
//! copy in `OUT.state/live` while the public folder is written as the public sees it. A node
//! started late releases at once only what is due. Recorders giving a round different delays
//! are said once; the longest counts.
//!
//! One file for one concept, a node rebuilding boards from the stream: the consumer, the
//! exactly-once ordering and the pipelines it feeds share one state and are read together.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream;
use async_nats::jetstream::consumer::{AckPolicy, DeliverPolicy, pull};
use futures_util::StreamExt;

use super::wire::{self, Layout, ReplayReply, ReplayRequest, WireEntry};
use super::{ClusterSettings, connect, event_stream, loud, say};
use crate::act::{AnalysisRequest, Event};
use crate::clock::TimeControl;
use crate::recorder::layout::{BoardSummary, FileJob, FolderWriter, OutputFolder, combine};
use crate::recorder::{BoardPipeline, EventConfig, GameTags, LINK_LOST, RoundDelay};
use crate::server::Publication;
use crate::server::feed::{Feed, GameInfo};
use crate::store::{BoardKey, Record};

/// The feed's PGN and the acks are brought up to date at least this often while messages flow.
const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// A round's combined PGN (all its boards) is rebuilt, and the files rewritten, at most this
/// often.
pub const FILES_EVERY: Duration = Duration::from_millis(200);
/// … or after this many messages.
const FLUSH_AFTER: usize = 512;
/// Boards whose entries caused no event are looked at this often.
const QUIET_EVERY: Duration = Duration::from_secs(1);
/// Wait between attempts to reach the cluster.
const RETRY: Duration = Duration::from_secs(1);
/// How long entries may be missing before the recorder is asked for them (a retried publish
/// arrives out of order within that time).
const GAP_ASK: Duration = Duration::from_millis(500);
/// How often a recorder that did not answer is asked again.
const ASK_AGAIN: Duration = Duration::from_secs(2);
/// How long a recorder's answer may take.
const REPLAY_TIMEOUT: Duration = Duration::from_secs(3);
/// Entries held back per journal behind a gap at most; later ones are dropped and asked from
/// the recorder once the gap is filled.
pub const MAX_HELD: usize = 20_000;

/// How often the server tells the node's consumer that it is there while no message comes;
/// the consumer fails when nothing came for twice that.
const HEARTBEAT: Duration = Duration::from_secs(15);

/// The environment variable that sets [`HEARTBEAT`] in milliseconds instead, for the test that
/// holds a node up longer than that.
pub const HEARTBEAT_ENV: &str = "TOUCHMOVE_TEST_HEARTBEAT_MS";

/// The consumer's heartbeat: [`HEARTBEAT`], or what [`HEARTBEAT_ENV`] says.
fn heartbeat() -> Duration {
    std::env::var(HEARTBEAT_ENV)
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map_or(HEARTBEAT, Duration::from_millis)
}

/// How long the server keeps a node's consumer that nobody reads.
pub const CONSUMER_IDLE: Duration = Duration::from_secs(10 * 60);

/// What a broadcast node has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BroadcastStats {
    /// Stream messages read.
    pub messages: u64,
    /// Journal entries applied.
    pub applied: u64,
    /// Entries delivered again and dropped.
    pub duplicates: u64,
    /// Messages that did not decode, or that name another recorder than their subject
    /// (logged with their stream sequence and skipped).
    pub undecodable: u64,
    /// Entries of boards no layout names, or owned by another recorder.
    pub unowned: u64,
    /// Event entries the node's pipeline did not reproduce.
    pub mismatches: u64,
    /// The last stream sequence read.
    pub stream_seq: u64,
    /// Entries missing from the stream that their recorder sent when asked.
    pub replayed: u64,
    /// Entries held back behind a gap, now.
    pub held: u64,
}

/// A running broadcast node.
pub struct Broadcast {
    stats: Arc<Mutex<BroadcastStats>>,
    task: tokio::task::JoinHandle<()>,
}

impl Broadcast {
    /// Starts reading the event's stream into `feed` and the PGN folder `out_dir`.
    pub fn start(settings: ClusterSettings, out_dir: &Path, feed: Arc<Feed>) -> Broadcast {
        Broadcast::publish(settings, out_dir, Arc::new(Publication::new(feed)))
    }

    /// Starts reading the event's stream into `publication` and the PGN folder `out_dir`,
    /// whose rounds with a transmission delay are the public's (the arbiter's copy then in
    /// `OUT.state/live`).
    pub fn publish(
        settings: ClusterSettings,
        out_dir: &Path,
        publication: Arc<Publication>,
    ) -> Broadcast {
        let rebuild = Rebuild::new(out_dir, publication);
        let stats = rebuild.stats.clone();
        let task = super::spawn(run(settings, rebuild));
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
    let mut stream = event_stream(js, settings)
        .await
        .map_err(|e| e.to_string())?;
    let info = stream
        .info()
        .await
        .map_err(|e| format!("stream info: {e}"))?;
    let created = format!("{:?}", info.created);
    let held_last = info.state.last_sequence;
    let name = format!("serve-{}-{}", settings.member, rebuild.run);
    let _ = stream.delete_consumer(&name).await;
    let mut last = lock(&rebuild.stats).stream_seq;
    let same_stream = rebuild
        .stream_created
        .as_ref()
        .is_none_or(|c| *c == created);
    if last > 0 && (!same_stream || held_last < last) {
        say(
            "serve",
            &format!(
                "cluster: the stream holds {held_last} messages where this node had read {last} \
                 ({}): reading it again from the first message; entries applied already are \
                 recognised by their journal sequence numbers",
                if same_stream {
                    "the server lost messages"
                } else {
                    "it was made anew"
                }
            ),
        );
        last = 0;
    }
    rebuild.stream_created = Some(created);
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
            inactive_threshold: CONSUMER_IDLE,
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
            if first || last == 0 {
                "from the first message".to_string()
            } else {
                format!("after message {last}")
            }
        ),
    );
    let heartbeat = heartbeat();
    let mut messages = consumer
        .stream()
        .heartbeat(heartbeat)
        .expires(heartbeat * 2)
        .messages()
        .await
        .map_err(|e| format!("reading the consumer {name}: {e}"))?;
    let client = js.client();
    let mut unacked: Option<jetstream::Message> = None;
    let mut since_flush = 0usize;
    let mut flush_at = tokio::time::Instant::now() + FLUSH_EVERY;
    let mut missed_heartbeat: Option<tokio::time::Instant> = None;
    loop {
        let next = tokio::time::timeout_at(flush_at, messages.next()).await;
        match next {
            Ok(Some(Ok(message))) => {
                missed_heartbeat = None;
                let seq = message.info().map(|i| i.stream_sequence).unwrap_or(0);
                rebuild.apply(&message.subject, &message.payload, seq);
                unacked = Some(message);
                since_flush += 1;
                // A steady flow must not hold the feed's PGN back until it pauses.
                if since_flush >= FLUSH_AFTER || tokio::time::Instant::now() >= flush_at {
                    since_flush = 0;
                    flush_at = tokio::time::Instant::now() + FLUSH_EVERY;
                    rebuild.flush();
                    repair_gaps(&client, &settings.event, rebuild).await;
                    ack(&mut unacked).await;
                }
            }
            Ok(Some(Err(e)))
                if e.kind() == pull::MessagesErrorKind::MissingHeartbeat
                    && missed_heartbeat.is_none_or(|at| at.elapsed() > heartbeat * 6) =>
            {
                // A node held up (an overloaded machine) finds its heartbeat's time over before
                // it has read the heartbeat waiting on its socket: the consumer goes on, and
                // only a second miss soon after (the next check, twice the heartbeat later),
                // with no message between, is a lost stream.
                missed_heartbeat = Some(tokio::time::Instant::now());
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
                repair_gaps(&client, &settings.event, rebuild).await;
                ack(&mut unacked).await;
            }
        }
    }
}

/// Asks the recorders for the entries missing for [`GAP_ASK`] or more, and applies what they
/// send.
async fn repair_gaps(client: &async_nats::Client, event: &str, rebuild: &mut Rebuild) {
    for (recorder, request) in rebuild.gaps_to_ask() {
        let Ok(payload) = serde_json::to_vec(&request) else {
            continue;
        };
        let asked = tokio::time::timeout(
            REPLAY_TIMEOUT,
            client.request(wire::replay_subject(event, &recorder), payload.into()),
        )
        .await;
        let reply = match asked {
            Ok(Ok(message)) => serde_json::from_slice::<ReplayReply>(&message.payload)
                .map_err(|e| format!("it answered unreadably ({e})")),
            Ok(Err(e)) if e.kind() == async_nats::client::RequestErrorKind::NoResponders => {
                Err("it is not connected to the cluster".to_string())
            }
            Ok(Err(e)) => Err(format!("it cannot be asked ({e})")),
            Err(_) => Err(format!(
                "it did not answer within {} s",
                REPLAY_TIMEOUT.as_secs()
            )),
        };
        rebuild.replayed(&recorder, &request, reply);
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
    /// The highest sequence number seen (above `applied` while entries are missing).
    highest: u64,
    /// Entries held back behind a gap (at most [`MAX_HELD`]).
    waiting: BTreeMap<u64, WireEntry>,
    gap_since: Option<tokio::time::Instant>,
    /// When the recorder was last asked for the missing entries.
    asked: Option<tokio::time::Instant>,
}

impl JournalProgress {
    /// The entries missing now, if any: `(after, until)`.
    fn missing(&self) -> Option<(u64, u64)> {
        if self.highest <= self.applied {
            return None;
        }
        let until = self
            .waiting
            .keys()
            .next()
            .map_or(self.highest, |next| next - 1);
        Some((self.applied, until))
    }
}

/// One board rebuilt on this node.
struct NodeBoard {
    /// The recorder whose entries make the board, and the epoch of its journal: the last
    /// layout naming the board wins (a recorder names a board only once it holds the claim).
    owner: String,
    owner_epoch: u64,
    /// The epoch the pipeline's time counts from: entries of a later owner are moved onto its
    /// timeline.
    time_base: u64,
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
    publication: Arc<Publication>,
    /// The arbiter's copy of the delayed rounds' files, once there is one.
    live_files: Option<(OutputFolder, FolderWriter)>,
    /// Rounds whose folder in the arbiter's copy is made.
    live_rounds: BTreeSet<u32>,
    /// The last text of each board of a delayed round sent to the public.
    public_texts: HashMap<(u32, u32), (String, BoardSummary)>,
    /// Rounds whose opening was told to the public side.
    opened: BTreeSet<u32>,
    /// Now, as an instant and in milliseconds since 1970: the times recorders journal turned
    /// into instants of this node's clock.
    anchor: (tokio::time::Instant, u64),
    /// The latest layout of each recorder.
    layouts: HashMap<String, Layout>,
    journals: HashMap<(String, u64), JournalProgress>,
    boards: BTreeMap<(u32, u32), NodeBoard>,
    /// Each round's event configuration, with the boards of every recorder.
    rounds: BTreeMap<u32, EventConfig>,
    /// Boards whose entries caused events since the last flush.
    dirty: BTreeSet<(u32, u32)>,
    /// Boards that took entries that caused no event (a piece lifted, a clock reading that
    /// changed nothing): their text rarely changes, so they are looked at only every
    /// [`QUIET_EVERY`], and the flushes in between stay short.
    quiet: BTreeSet<(u32, u32)>,
    /// When the quiet boards were last looked at.
    quiet_checked: Option<tokio::time::Instant>,
    /// Rounds whose combined PGN waits for its next rebuild (true: a board's summary changed).
    rounds_due: BTreeMap<u32, bool>,
    /// When the combined PGN of each round was last rebuilt.
    rounds_built: HashMap<u32, tokio::time::Instant>,
    files: FolderWriter,
    stats: Arc<Mutex<BroadcastStats>>,
    /// Messages said once.
    said: BTreeSet<String>,
    /// When the stream read was made (another time: a stream made anew).
    stream_created: Option<String>,
    /// This run's part of the consumer's name.
    run: String,
}

impl Rebuild {
    /// Nothing rebuilt yet; files go to the PGN folder `out_dir`.
    fn new(out_dir: &Path, publication: Arc<Publication>) -> Rebuild {
        let spares =
            crate::recorder::layout::state_dir(out_dir).join(crate::recorder::SPARE_DIR_NAME);
        let out = OutputFolder::new(out_dir)
            .unsynced()
            .with_spare_dir(&spares);
        Rebuild {
            files: FolderWriter::spawn(out.clone(), FILES_EVERY, "serve-files", |m| {
                loud("serve", m)
            }),
            out,
            publication,
            live_files: None,
            live_rounds: BTreeSet::new(),
            public_texts: HashMap::new(),
            opened: BTreeSet::new(),
            // The one reading of the wall clock: the recorders' journals count from theirs.
            anchor: (
                tokio::time::Instant::now(),
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64),
            ),
            layouts: HashMap::new(),
            journals: HashMap::new(),
            boards: BTreeMap::new(),
            rounds: BTreeMap::new(),
            dirty: BTreeSet::new(),
            quiet: BTreeSet::new(),
            quiet_checked: None,
            rounds_due: BTreeMap::new(),
            rounds_built: HashMap::new(),
            stats: Arc::new(Mutex::new(BroadcastStats::default())),
            said: BTreeSet::new(),
            stream_created: None,
            run: crate::server::token::generate()[..12].to_string(),
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
            stats.stream_seq = stream_seq;
        }
        let mut parts = subject.split('.').skip(2);
        let (kind, publisher) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
        // A recorder may write only under its own subject (which the servers' permissions can
        // enforce per PC): what it says about another recorder is refused.
        let impostor = |named: &str| {
            (named != publisher).then(|| {
                format!(
                    "recorder {publisher:?} published for recorder {named:?}: refused (a PC \
                     writes only under its own recorder id)"
                )
            })
        };
        let decoded = match kind {
            "layout" => serde_json::from_slice::<Layout>(payload)
                .map_err(|e| e.to_string())
                .and_then(|l| match impostor(&l.recorder) {
                    Some(why) => Err(why),
                    None => {
                        self.apply_layout(l);
                        Ok(())
                    }
                }),
            "journal" => serde_json::from_slice::<WireEntry>(payload)
                .map_err(|e| e.to_string())
                .and_then(|entry| match impostor(&entry.recorder) {
                    Some(why) => Err(why),
                    None => self.receive(entry),
                }),
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
        if self.layouts.get(&layout.recorder) == Some(&layout) {
            return;
        }
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
        self.publication.round_config(round);
        for board in &config.boards {
            let key = (config.round, board.number);
            if let Some(read_as) = self.boards.get(&key).map(|b| b.pipeline.kind())
                && read_as != board.kind
            {
                let message = format!(
                    "board {} of round {} is a {} board in the layout of PC {:?}; this node \
                     reads it as the {read_as} board it began with, so the moves of the new \
                     board are not shown here. Give a board replaced by one of another kind \
                     during a round a number of its own",
                    board.number, config.round, board.kind, layout.recorder
                );
                self.once(format!("kind {key:?} {}", board.kind), &message);
            }
            match self.boards.get(&key) {
                Some(existing)
                    if (existing.owner.as_str(), existing.owner_epoch)
                        != (layout.recorder.as_str(), layout.epoch) =>
                {
                    let message = format!(
                        "board {} of round {} is recorded by PC {:?} (journal started at {}) from \
                         now on, no longer by PC {:?} (journal started at {}): its game goes on \
                         here with the entries of the new one",
                        board.number,
                        config.round,
                        layout.recorder,
                        layout.epoch,
                        existing.owner,
                        existing.owner_epoch
                    );
                    self.once(
                        format!("owner {key:?} {} {}", layout.recorder, layout.epoch),
                        &message,
                    );
                    if let Some(existing) = self.boards.get_mut(&key) {
                        existing.owner = layout.recorder.clone();
                        existing.owner_epoch = layout.epoch;
                        existing.pending_events = 0;
                    }
                }
                Some(_) => {}
                None => {
                    let tags = GameTags::new(&config, board.number);
                    self.publication.game(GameInfo {
                        round: config.round,
                        board: board.number,
                        white: board.white.name.clone(),
                        black: board.black.name.clone(),
                        tags: tags.tags().to_vec(),
                    });
                    let mut pipeline = BoardPipeline::new(tags, control.clone())
                        .with_board_log()
                        .with_kind(board.kind);
                    pipeline.defer_dead_position_analysis();
                    self.boards.insert(
                        key,
                        NodeBoard {
                            owner: layout.recorder.clone(),
                            owner_epoch: layout.epoch,
                            time_base: layout.epoch,
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
        progress.highest = progress.highest.max(entry.seq);
        if entry.seq > progress.applied + 1 {
            // Beyond the bound an entry is dropped: it is asked from the recorder later.
            if progress.waiting.len() < MAX_HELD {
                progress.waiting.insert(entry.seq, entry);
                lock(&self.stats).held += 1;
            }
            progress
                .gap_since
                .get_or_insert_with(tokio::time::Instant::now);
            return Ok(());
        }
        progress.applied = entry.seq;
        self.apply_entry(&entry.recorder, entry.epoch, entry.t_ms, key, record);
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
                if progress.highest <= progress.applied {
                    progress.gap_since = None;
                    progress.asked = None;
                } else if progress.waiting.is_empty() {
                    // Held entries dropped at the bound are missing now.
                    progress
                        .gap_since
                        .get_or_insert_with(tokio::time::Instant::now);
                }
                return;
            };
            lock(&self.stats).held -= 1;
            progress.applied = next;
            if let (Ok(record), Ok(key)) = (entry.record(), entry.board_key()) {
                self.apply_entry(&entry.recorder, entry.epoch, entry.t_ms, key, record);
            }
        }
    }

    /// The requests for entries missing for [`GAP_ASK`] or more, by recorder (each recorder
    /// asked at most every [`ASK_AGAIN`] while it does not answer).
    fn gaps_to_ask(&mut self) -> Vec<(String, ReplayRequest)> {
        let now = tokio::time::Instant::now();
        let mut asks = Vec::new();
        for ((recorder, epoch), progress) in &mut self.journals {
            let Some((after, until)) = progress.missing() else {
                continue;
            };
            let due = progress
                .gap_since
                .is_some_and(|since| now.duration_since(since) >= GAP_ASK)
                && progress
                    .asked
                    .is_none_or(|at| now.duration_since(at) >= ASK_AGAIN);
            if due {
                progress.asked = Some(now);
                asks.push((
                    recorder.clone(),
                    ReplayRequest {
                        epoch: *epoch,
                        after,
                        until,
                    },
                ));
            }
        }
        asks
    }

    /// Takes a recorder's answer to `request` (or why there is none): applies the entries
    /// sent, or says what is missing and what helps.
    fn replayed(
        &mut self,
        recorder: &str,
        request: &ReplayRequest,
        reply: Result<ReplayReply, String>,
    ) {
        let journal = (recorder.to_string(), request.epoch);
        let reply = reply.and_then(|r| match r.refused {
            Some(why) => Err(format!("it refused: {why}")),
            None => Ok(r.entries),
        });
        let entries = match reply {
            Ok(entries) => entries,
            Err(why) => {
                let message = format!(
                    "recorder {recorder:?}: journal entries {}..{} are missing from the stream; \
                     its boards here wait for them and PC {recorder:?} is asked for them every \
                     {} s, but {why}: start that PC's recorder with --cluster (it sends them from \
                     its journal)",
                    request.after + 1,
                    request.until,
                    ASK_AGAIN.as_secs()
                );
                self.once(
                    format!("gap {recorder} {} {}", request.epoch, request.after),
                    &message,
                );
                return;
            }
        };
        let Some(progress) = self
            .journals
            .get_mut(&journal)
            .filter(|_| !entries.is_empty())
        else {
            return;
        };
        // Asked again at once while entries come.
        progress.asked = None;
        let count = entries.len() as u64;
        let mut before = request.after;
        for entry in entries {
            if entry.recorder != recorder || entry.epoch != request.epoch {
                continue;
            }
            // The journal sends what it holds in order: a number it skipped has no entry.
            if let Some(progress) = self.journals.get_mut(&journal)
                && progress.applied == before
                && entry.seq > before + 1
            {
                progress.applied = entry.seq - 1;
            }
            before = entry.seq;
            let _ = self.receive(entry);
        }
        lock(&self.stats).replayed += count;
        self.release(&journal);
        if self
            .journals
            .get(&journal)
            .is_some_and(|p| p.missing().is_none())
        {
            say(
                "serve",
                &format!(
                    "recorder {recorder:?}: the journal entries missing from the stream were sent \
                     by the recorder; its boards are complete here"
                ),
            );
        }
    }

    /// The instant of this node's clock at `epoch + t_ms` (milliseconds since 1970).
    fn instant_of(&self, epoch: u64, t_ms: u64) -> tokio::time::Instant {
        let (instant, unix_ms) = self.anchor;
        let at = epoch.saturating_add(t_ms);
        if at >= unix_ms {
            instant + Duration::from_millis(at - unix_ms)
        } else {
            instant
                .checked_sub(Duration::from_millis(unix_ms - at))
                .unwrap_or(instant)
        }
    }

    /// A recorder gave round `round`'s delay: the longest given counts.
    fn delay_round(&mut self, recorder: &str, at: tokio::time::Instant, given: RoundDelay) {
        let round = given.round;
        let before = self.publication.delay(round);
        let now = self.publication.delay_round(round, at, given.delay());
        if before.is_zero() && !now.is_zero() {
            say(
                "serve",
                &format!(
                    "round {round} is broadcast with a delay of {}: the public sees it that much                      later; the arbiter's copy of its files is in {}",
                    crate::event::config::describe_delay(now),
                    self.live_dir().display()
                ),
            );
        } else if given.delay() < now {
            let message = format!(
                "recorder {recorder:?} gives round {round} a broadcast delay of {}, another                  recorder {}: the longest counts; give every PC's event file the same                  broadcast_delay",
                crate::event::config::describe_delay(given.delay()),
                crate::event::config::describe_delay(now)
            );
            self.once(format!("delay {recorder} {round}"), &message);
        }
        self.open(round, at);
    }

    /// The public's pages follow round `round` from `at` on (once).
    fn open(&mut self, round: u32, at: tokio::time::Instant) {
        if self.opened.insert(round) {
            self.publication.public_current_round(at, round);
        }
    }

    fn live_dir(&self) -> std::path::PathBuf {
        crate::recorder::layout::state_dir(self.out.root()).join(crate::recorder::LIVE_DIR_NAME)
    }

    /// Where the files of `round` go: the arbiter's copy when it is delayed.
    fn files_of(&mut self, round: u32) -> &FolderWriter {
        if !self.publication.is_delayed(round) {
            return &self.files;
        }
        let state = crate::recorder::layout::state_dir(self.out.root());
        let (folder, writer) = self.live_files.get_or_insert_with(|| {
            let folder = OutputFolder::new(&state.join(crate::recorder::LIVE_DIR_NAME))
                .unsynced()
                .with_spare_dir(&state.join(crate::recorder::LIVE_SPARE_DIR_NAME));
            let writer = FolderWriter::spawn(folder.clone(), FILES_EVERY, "serve-live", |m| {
                loud("serve", m)
            });
            (folder, writer)
        });
        if self.live_rounds.insert(round)
            && let Err(e) = folder.prepare(round)
        {
            loud(
                "serve",
                &format!("cannot create {}: {e}", folder.round_dir(round).display()),
            );
        }
        writer
    }

    fn apply_entry(
        &mut self,
        recorder: &str,
        epoch: u64,
        t_ms: u64,
        key: Option<BoardKey>,
        record: Record,
    ) {
        let at = self.instant_of(epoch, t_ms);
        if let Some(given) = RoundDelay::of(&record) {
            self.delay_round(recorder, at, given);
            return;
        }
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
        self.open(target.0, at);
        let Some(board) = self
            .boards
            .get_mut(&target)
            .filter(|b| b.owner == recorder && b.owner_epoch == epoch)
        else {
            if matches!(record, Record::Bytes(_) | Record::Arbiter(_)) {
                lock(&self.stats).unowned += 1;
            }
            return;
        };
        // Session milliseconds count from the journal's epoch.
        let t_ms =
            (i128::from(t_ms) + i128::from(epoch) - i128::from(board.time_base)).max(0) as u64;
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
                    self.publication.arbiter(at, round, number, &request.action);
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
            Record::Metadata { key, .. } if key == LINK_LOST => {
                // The recorder's next bytes for the board are on a new connection.
                board.pipeline.link_lost();
                return;
            }
            Record::Boundary(_) | Record::Metadata { .. } => return,
        }
        lock(&self.stats).applied += 1;
        if events.is_empty() {
            self.quiet.insert(target);
            return;
        }
        // The public side of a delayed round gets the game as it stood after each entry.
        let text = self.publication.is_delayed(round).then(|| {
            let summary = BoardSummary {
                board: number,
                result: board.pipeline.result().to_string(),
                live: board.pipeline.live(),
            };
            (board.pipeline.board_pgn(), summary)
        });
        for event in events {
            self.publication.event(at, round, number, event);
        }
        self.dirty.insert(target);
        if let Some(text) = text
            && self.public_texts.get(&target) != Some(&text)
        {
            let (pgn, summary) = text.clone();
            self.public_texts.insert(target, text);
            self.publication
                .public_text(at, round, number, pgn, summary);
        }
    }

    /// Publishes the changed boards' PGN to the feed and has their files and their rounds'
    /// files rewritten (by the file writer, so that writing never holds up the stream). A
    /// round's combined PGN is rebuilt at most every [`FILES_EVERY`]; a later flush does it.
    fn flush(&mut self) {
        let now = tokio::time::Instant::now();
        if !self.quiet.is_empty()
            && self
                .quiet_checked
                .is_none_or(|at| now.duration_since(at) >= QUIET_EVERY)
        {
            self.quiet_checked = Some(now);
            let quiet = std::mem::take(&mut self.quiet);
            self.dirty.extend(quiet);
        }
        if self.dirty.is_empty() && self.rounds_due.is_empty() {
            return;
        }
        let dirty = std::mem::take(&mut self.dirty);
        for (round, number) in dirty {
            let Some(board) = self.boards.get_mut(&(round, number)) else {
                continue;
            };
            let pgn = board.pipeline.board_pgn();
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
            board.summary = Some(summary.clone());
            *self.rounds_due.entry(round).or_default() |= index_changed;
            let pgn = board.pgn.clone();
            if self.publication.is_delayed(round) {
                self.publication.live().set_pgn(round, number, pgn.clone());
            } else {
                self.publication
                    .text(now, round, number, pgn.clone(), summary);
            }
            self.files_of(round).send(FileJob::Game {
                round,
                board: number,
                pgn,
            });
        }
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
            self.publication.live().set_round_pgn(round, pgn.clone());
            self.files_of(round).send(FileJob::Round { round, pgn });
            if index_changed && let Some(config) = self.rounds.get(&round).cloned() {
                let summaries: Vec<BoardSummary> = self
                    .boards
                    .range((round, 0)..=(round, u32::MAX))
                    .filter_map(|(_, b)| b.summary.clone())
                    .collect();
                self.files_of(round)
                    .send(FileJob::Index { config, summaries });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Entry;

    fn layout() -> Layout {
        layout_of(crate::board::kind::BoardKind::Dgt)
    }

    /// pc1's layout: board 1 of round 1, of `kind`.
    fn layout_of(kind: crate::board::kind::BoardKind) -> Layout {
        let mut config = EventConfig::default();
        config.boards.push(crate::recorder::BoardConfig {
            number: 1,
            source: crate::recorder::BoardSource::Auto,
            kind,
            leds: crate::recorder::leds::LedMode::Off,
            white: crate::recorder::Player::named("W"),
            black: crate::recorder::Player::named("B"),
        });
        Layout::of(&config, "pc1", 5, "host")
    }

    fn entry(seq: u64) -> Vec<u8> {
        serde_json::to_vec(&wire_entry(seq)).unwrap()
    }

    fn wire_entry(seq: u64) -> WireEntry {
        wire_entry_of(seq, seq * 10, Record::Bytes(vec![]))
    }

    fn wire_entry_of(seq: u64, t_ms: u64, record: Record) -> WireEntry {
        WireEntry::from_entry(
            "pc1",
            5,
            &Entry {
                seq,
                session: 1,
                board: Some(BoardKey::Pairing { round: 1, board: 1 }),
                t_ms,
                record,
            },
        )
    }

    fn entry_of(seq: u64, t_ms: u64, record: Record) -> Vec<u8> {
        serde_json::to_vec(&wire_entry_of(seq, t_ms, record)).unwrap()
    }

    /// A node that has read pc1's layout.
    fn node(dir: &Path) -> Rebuild {
        let mut r = Rebuild::new(dir, Arc::new(Publication::new(Arc::new(Feed::new()))));
        r.apply(
            "touchmove.e.layout.pc1",
            &serde_json::to_vec(&layout()).unwrap(),
            1,
        );
        r
    }

    fn applied(r: &Rebuild) -> u64 {
        r.journals[&("pc1".to_string(), 5)].applied
    }

    /// The field changes (field, piece code) of lifting and placing each piece of `moves`
    /// from the start position, and the board they leave.
    fn move_changes(moves: &[&str]) -> (Vec<(u8, u8)>, shakmaty::Board) {
        let mut board = shakmaty::Board::new();
        let field = |sq: shakmaty::Square| (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
        let mut changes = Vec::new();
        for uci in moves {
            let from: shakmaty::Square = uci[..2].parse().unwrap();
            let to: shakmaty::Square = uci[2..4].parse().unwrap();
            let piece = board.remove_piece_at(from).unwrap();
            board.set_piece_at(to, piece);
            changes.push((field(from), 0));
            changes.push((field(to), crate::board::dgt::code_from_piece(piece)));
        }
        (changes, board)
    }

    /// The start position, then the lift and the placing of each piece of `moves`.
    fn board_chunks(moves: &[&str]) -> Vec<Vec<u8>> {
        use crate::board::dgt::fields_from_board;
        use crate::board::orientation::Orientation;
        use crate::wire::dgt::Message;
        let start = fields_from_board(&shakmaty::Board::new(), Orientation::Normal);
        let mut chunks = vec![Message::BoardDump(start).encode()];
        for (field, piece) in move_changes(moves).0 {
            chunks.push(Message::FieldUpdate { field, piece }.encode());
        }
        chunks
    }

    /// The recorder's mark of a lost connection reaches the serve node: the board's next move,
    /// sent before a handshake answered late, is part of the gap there too, and the board's
    /// log puts every move in the order played, as on the recorder. Read as live, that move
    /// would come before the moves of the gap.
    #[test]
    fn a_serve_node_reads_the_lost_connection_mark_as_the_recorder_does() {
        use crate::board::dgt::fields_from_board;
        use crate::board::orientation::Orientation;
        use crate::sim::virtual_board::memory::BoardMemory;
        use crate::wire::dgt::{EepromRecord, Message};
        let played = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5", "c2c3"];
        let start = fields_from_board(&shakmaty::Board::new(), Orientation::Normal);
        let (changes, board) = move_changes(&played);
        let mut memory = BoardMemory::blank();
        memory.power_up(&start);
        let log = |memory: &mut BoardMemory| {
            Record::Bytes(
                Message::EepromMoves(EepromRecord::parse_all(&memory.download())).encode(),
            )
        };
        let update = |(field, piece): (u8, u8)| {
            Record::Bytes(Message::FieldUpdate { field, piece }.encode())
        };
        let version = || Record::Bytes(Message::Version { major: 1, minor: 2 }.encode());

        let dir = tempfile::tempdir().unwrap();
        let mut r = node(dir.path());
        let mut seq = 0;
        let mut send = |r: &mut Rebuild, record: Record, t_ms: u64| {
            seq += 1;
            r.apply(
                "touchmove.e.journal.pc1",
                &entry_of(seq, t_ms, record),
                seq + 1,
            );
        };
        send(&mut r, version(), 5);
        send(&mut r, log(&mut memory), 100);
        send(
            &mut r,
            Record::Bytes(Message::BoardDump(start).encode()),
            200,
        );
        let mut t = 1_000;
        for &change in &changes[..6] {
            memory.field_changed(change.0, change.1, t);
            send(&mut r, update(change), t);
            t += 450;
        }
        let mark = Record::Metadata {
            key: LINK_LOST.to_string(),
            value: serde_json::Value::String("the port was closed".into()),
        };
        send(&mut r, mark, t);
        t += 10_000;
        for &change in &changes[6..12] {
            memory.field_changed(change.0, change.1, t);
            t += 450;
        }
        for &change in &changes[12..] {
            memory.field_changed(change.0, change.1, t);
            send(&mut r, update(change), t);
            t += 200;
        }
        send(&mut r, version(), t + 700);
        send(&mut r, log(&mut memory), t + 800);
        let dump = fields_from_board(&board, Orientation::Normal);
        send(
            &mut r,
            Record::Bytes(Message::BoardDump(dump).encode()),
            t + 900,
        );
        let pipeline = &r.boards[&(1, 1)].pipeline;
        assert_recorded(pipeline, &played);
    }

    /// Asserts that `pipeline` recorded exactly the moves `played` (UCI).
    fn assert_recorded(pipeline: &BoardPipeline, played: &[&str]) {
        let recorded: Vec<String> = pipeline
            .record()
            .moves
            .iter()
            .map(|m| m.uci.clone())
            .collect();
        assert_eq!(recorded, played, "{}", pipeline.pgn());
    }

    /// A Millennium board's version reply, then its status frame after each lift and each
    /// placing of `moves` from the start position.
    fn millennium_chunks(moves: &[&str]) -> Vec<Vec<u8>> {
        use crate::board::orientation::Orientation;
        use crate::wire::millennium::Message;
        let status = |board: &shakmaty::Board| {
            let mut fields = [None; 64];
            for (square, piece) in board.iter() {
                fields[usize::from(Orientation::Normal.square_to_field(square))] = Some(piece);
            }
            Message::Status(fields).encode()
        };
        let mut board = shakmaty::Board::new();
        let mut chunks = vec![
            Message::Version { major: 2, minor: 1 }.encode(),
            status(&board),
        ];
        for uci in moves {
            let from: shakmaty::Square = uci[..2].parse().unwrap();
            let to: shakmaty::Square = uci[2..4].parse().unwrap();
            let piece = board.remove_piece_at(from).unwrap();
            chunks.push(status(&board));
            board.set_piece_at(to, piece);
            chunks.push(status(&board));
        }
        chunks
    }

    #[test]
    fn a_board_is_read_as_the_kind_its_layout_names() {
        use crate::board::kind::BoardKind;
        let played = ["e2e4", "e7e5", "g1f3", "b8c6"];
        let dir = tempfile::tempdir().unwrap();
        let mut r = Rebuild::new(
            dir.path(),
            Arc::new(Publication::new(Arc::new(Feed::new()))),
        );
        r.apply(
            "touchmove.e.layout.pc1",
            &serde_json::to_vec(&layout_of(BoardKind::Millennium)).unwrap(),
            1,
        );
        for (seq, chunk) in (1..).zip(millennium_chunks(&played)) {
            r.apply(
                "touchmove.e.journal.pc1",
                &entry_of(seq, 1_000 + 600 * seq, Record::Bytes(chunk)),
                seq + 1,
            );
        }
        let pipeline = &r.boards[&(1, 1)].pipeline;
        assert_eq!(pipeline.kind(), BoardKind::Millennium);
        assert_recorded(pipeline, &played);
        // The recorder, started again with another kind of board under that number: said,
        // and the board is still read as it began.
        let mut changed = layout_of(BoardKind::Chessnut);
        changed.host = "host after a restart".into();
        r.apply(
            "touchmove.e.layout.pc1",
            &serde_json::to_vec(&changed).unwrap(),
            20,
        );
        assert!(r.said.iter().any(|k| k.starts_with("kind (1, 1) chessnut")));
        assert_eq!(r.boards[&(1, 1)].pipeline.kind(), BoardKind::Millennium);
    }

    #[test]
    fn a_dead_position_analysis_waits_for_an_event_no_step_of_the_node_produced() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = Rebuild::new(
            dir.path(),
            Arc::new(Publication::new(Arc::new(Feed::new()))),
        );
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
        let mut r = Rebuild::new(
            dir.path(),
            Arc::new(Publication::new(Arc::new(Feed::new()))),
        );
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
        // The same stream sequence again (a server restarted without its state) with a new
        // entry: applied.
        r.apply("touchmove.e.journal.pc1", &entry(3), 5);
        let stats = lock(&r.stats).clone();
        assert_eq!(r.journals[&("pc1".to_string(), 5)].applied, 3);
        assert_eq!(stats.applied, 3);
        assert_eq!(stats.duplicates, 1, "{stats:?}");
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

    #[test]
    fn a_stream_that_starts_again_lower_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = node(dir.path());
        for seq in 1..=3 {
            r.apply("touchmove.e.journal.pc1", &entry(seq), 100 + seq);
        }
        // The server lost its state: the recorder publishes its layout and entries 3.. again,
        // numbered from 1 by the stream.
        r.apply(
            "touchmove.e.layout.pc1",
            &serde_json::to_vec(&layout()).unwrap(),
            1,
        );
        for seq in 3..=5 {
            r.apply("touchmove.e.journal.pc1", &entry(seq), seq - 1);
        }
        let stats = lock(&r.stats).clone();
        assert_eq!(applied(&r), 5);
        assert_eq!((stats.applied, stats.duplicates), (5, 1), "{stats:?}");
        assert_eq!(stats.stream_seq, 4);
    }

    /// Has `r` ask for what it misses (as if the gaps were old enough) and answers from
    /// pc1's `journal` as the recorder does, until nothing is asked; returns the requests.
    fn repair_from(r: &mut Rebuild, journal: &[WireEntry]) -> Vec<ReplayRequest> {
        let mut requests = Vec::new();
        loop {
            for progress in r.journals.values_mut() {
                progress.gap_since = progress.gap_since.map(|t| t - GAP_ASK);
            }
            let asks = r.gaps_to_ask();
            if asks.is_empty() {
                return requests;
            }
            for (recorder, request) in asks {
                let entries: Vec<WireEntry> = journal
                    .iter()
                    .filter(|e| e.seq > request.after)
                    .take(wire::REPLAY_LIMIT as usize)
                    .cloned()
                    .collect();
                r.replayed(
                    &recorder,
                    &request,
                    Ok(ReplayReply {
                        entries,
                        refused: None,
                    }),
                );
                requests.push(request);
            }
        }
    }

    #[test]
    fn a_hole_in_the_stream_is_filled_from_the_recorders_journal() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = node(dir.path());
        // The journal numbers 1..=8, without 6 (a number the journal never used).
        let journal: Vec<WireEntry> = (1..=8).filter(|&s| s != 6).map(wire_entry).collect();
        for seq in [1, 4, 5] {
            r.apply("touchmove.e.journal.pc1", &entry(seq), seq + 1);
        }
        assert_eq!(applied(&r), 1);
        assert!(r.gaps_to_ask().is_empty(), "asked before GAP_ASK");
        // The recorder did not answer: said, nothing skipped.
        r.journals
            .get_mut(&("pc1".to_string(), 5))
            .unwrap()
            .gap_since = Some(tokio::time::Instant::now() - GAP_ASK);
        let (recorder, request) = r.gaps_to_ask().remove(0);
        assert_eq!((request.after, request.until), (1, 3));
        r.replayed(&recorder, &request, Err("it is not connected".into()));
        assert_eq!(applied(&r), 1);
        assert!(r.said.iter().any(|k| k.starts_with("gap pc1")));
        // Asked again, it sends 2.. from its journal; 6 is known not to exist.
        r.journals.get_mut(&("pc1".to_string(), 5)).unwrap().asked = None;
        r.apply("touchmove.e.journal.pc1", &entry(8), 9);
        let requests = repair_from(&mut r, &journal);
        assert_eq!(requests.len(), 1, "{requests:?}");
        let stats = lock(&r.stats).clone();
        assert_eq!(applied(&r), 8);
        assert_eq!(stats.applied, 7, "{stats:?}");
        assert_eq!(stats.held, 0);
        assert!(r.journals.values().all(|p| p.missing().is_none()));
        // A late copy of a repaired entry is a duplicate.
        let duplicates = stats.duplicates;
        r.apply("touchmove.e.journal.pc1", &entry(3), 10);
        assert_eq!(lock(&r.stats).duplicates, duplicates + 1);
    }

    #[test]
    fn entries_held_behind_a_gap_are_bounded_and_asked_for_again() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = node(dir.path());
        let last = MAX_HELD as u64 + 300;
        let journal: Vec<WireEntry> = (1..=last).map(wire_entry).collect();
        r.receive(journal[0].clone()).unwrap();
        for entry in &journal[2..] {
            r.receive(entry.clone()).unwrap();
        }
        let progress = &r.journals[&("pc1".to_string(), 5)];
        assert_eq!(progress.waiting.len(), MAX_HELD);
        assert_eq!(progress.missing(), Some((1, 2)));
        repair_from(&mut r, &journal);
        assert_eq!(applied(&r), last);
        assert_eq!(lock(&r.stats).held, 0);
    }

    #[test]
    fn a_board_follows_the_last_layout_that_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = node(dir.path());
        let chunks = board_chunks(&["e2e4", "e7e5", "g1f3"]);
        let from = |recorder: &str, epoch: u64, seq: u64, t_ms: u64, chunk: &[u8]| {
            let mut wire = wire_entry_of(seq, t_ms, Record::Bytes(chunk.to_vec()));
            (wire.recorder, wire.epoch) = (recorder.to_string(), epoch);
            serde_json::to_vec(&wire).unwrap()
        };
        let subject = |recorder: &str| format!("touchmove.e.journal.{recorder}");
        // pc1 (journal epoch 5) records 1.e4 …
        for (i, chunk) in chunks[..3].iter().enumerate() {
            let seq = i as u64 + 1;
            r.apply(
                &subject("pc1"),
                &from("pc1", 5, seq, 1_000 * seq, chunk),
                seq + 1,
            );
        }
        // … the board goes to pc2, whose journal began 60 s later, and is dumped again there.
        let mut moved = layout();
        (moved.recorder, moved.epoch) = ("pc2".to_string(), 60_005);
        r.apply(
            "touchmove.e.layout.pc2",
            &serde_json::to_vec(&moved).unwrap(),
            10,
        );
        // pc1's late entries for it no longer count.
        r.apply(&subject("pc1"), &from("pc1", 5, 4, 4_000, &chunks[3]), 11);
        assert_eq!(lock(&r.stats).unowned, 1);
        let mut dump = shakmaty::Board::new();
        let e4: shakmaty::Square = "e4".parse().unwrap();
        let e2: shakmaty::Square = "e2".parse().unwrap();
        let pawn = dump.remove_piece_at(e2).unwrap();
        dump.set_piece_at(e4, pawn);
        let dump = crate::wire::dgt::Message::BoardDump(crate::board::dgt::fields_from_board(
            &dump,
            crate::board::orientation::Orientation::Normal,
        ))
        .encode();
        let rest = [&dump, &chunks[3], &chunks[4], &chunks[5], &chunks[6]];
        for (i, chunk) in rest.into_iter().enumerate() {
            let seq = i as u64 + 1;
            r.apply(
                &subject("pc2"),
                &from("pc2", 60_005, seq, 100 * seq, chunk),
                20 + seq,
            );
        }
        let board = &r.boards[&(1, 1)];
        assert_eq!(board.pipeline.plies(), 3, "{}", board.pipeline.pgn());
        assert_eq!((board.owner.as_str(), board.owner_epoch), ("pc2", 60_005));
    }

    #[test]
    fn a_recorder_cannot_write_for_another() {
        let dir = tempfile::tempdir().unwrap();
        let mut r = node(dir.path());
        // pc2 publishes under its own subject an entry and a layout naming pc1.
        r.apply("touchmove.e.journal.pc2", &entry(1), 2);
        let mut forged = layout();
        forged.epoch = 6;
        r.apply(
            "touchmove.e.layout.pc2",
            &serde_json::to_vec(&forged).unwrap(),
            3,
        );
        let stats = lock(&r.stats).clone();
        assert_eq!((stats.applied, stats.undecodable), (0, 2), "{stats:?}");
        assert_eq!(r.layouts["pc1"].epoch, 5);
        r.apply("touchmove.e.journal.pc1", &entry(1), 4);
        assert_eq!(lock(&r.stats).applied, 1);
    }

    /// A round a recorder journalled with a delay: the arbiter's feed has each move at once,
    /// the public's the delay after the recorder journalled it (however soon the node read
    /// it), and the round's files are the arbiter's copy until the public folder gets them.
    #[tokio::test(start_paused = true)]
    async fn a_delayed_round_reaches_the_public_the_delay_after_the_recorder_journalled_it() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let live = Arc::new(Feed::new());
        let public_folder = OutputFolder::new(&out).unsynced();
        let publication =
            Arc::new(Publication::new(live.clone()).with_public_folder(public_folder));
        let mut r = Rebuild::new(&out, publication.clone());
        let unix_now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        // The recorder's journal began a minute ago; the round opened 10 s ago.
        let epoch = unix_now - 60_000;
        let mut config = layout().event_config();
        config.boards.truncate(1);
        let pc1 = Layout::of(&config, "pc1", epoch, "host");
        r.apply(
            "touchmove.e.layout.pc1",
            &serde_json::to_vec(&pc1).unwrap(),
            1,
        );
        let journal = |seq: u64, t_ms: u64, board: Option<BoardKey>, record: Record| {
            let entry = Entry {
                seq,
                session: 1,
                board,
                t_ms,
                record,
            };
            serde_json::to_vec(&WireEntry::from_entry("pc1", epoch, &entry)).unwrap()
        };
        let delay = RoundDelay {
            round: 1,
            delay_ms: 10_000,
        };
        r.apply(
            "touchmove.e.journal.pc1",
            &journal(1, 50_000, None, delay.record()),
            2,
        );
        let key = Some(BoardKey::Pairing { round: 1, board: 1 });
        for (i, chunk) in board_chunks(&["e2e4", "e7e5"]).into_iter().enumerate() {
            let seq = i as u64 + 2;
            let t_ms = 50_000 + 1_000 * seq;
            r.apply(
                "touchmove.e.journal.pc1",
                &journal(seq, t_ms, key.clone(), Record::Bytes(chunk)),
                seq + 1,
            );
        }
        r.flush();
        let public = publication.public_feed();
        let plies = |feed: &Feed| feed.game(1, 1).map_or(0, |g| g.summary.ply);
        assert_eq!(plies(&live), 2, "the arbiter sees the moves at once");
        // e4 was journalled when its piece was placed, 6 s ago; e5 4 s ago.
        tokio::time::sleep(Duration::from_millis(3_900)).await;
        assert_eq!(plies(&public), 0, "nothing before its time");
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(plies(&public), 1);
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(plies(&public), 2);
        let arbiter = crate::recorder::layout::state_dir(&out).join("live/round-1/game-1.pgn");
        let mut written = false;
        for _ in 0..100 {
            written = arbiter.exists() && out.join("round-1/game-1.pgn").exists();
            if written {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(written, "the arbiter's copy and, now, the public file");
    }
}
