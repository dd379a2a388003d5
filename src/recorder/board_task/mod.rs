//! The task of one board: owns its serial link, journals every chunk before using it, runs the
//! pipeline and rewrites the files.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

mod journal;
mod link;
mod rebuild;

use super::pipeline::{BoardPipeline, GameTags};
use super::replay::{History, board_key};
use super::{Shared, loud, say};
use crate::act::{AnalysisRequest, Event};
use crate::board::Millis;
use crate::clock::TimeControl;
use crate::event::{BoardConfig, BoardSource};
use crate::record::arbiter::{ArbiterAction, ArbiterRequest};
use crate::recorder::leds::{LedPlan, led_command};
use crate::recorder::options::LatencyStage;
use crate::server::feed::GameInfo;
use crate::store::{BoardKey, NewEntry, Record};
use journal::entry_size;
use link::{next_found, next_link_event, until};
use rebuild::{Rebuilt, replay_history, summary};

/// Journal metadata key of what a board's EEPROM move log told (`LogReport`).
pub(crate) const BOARD_LOG_REPORT: &str = "board-log-report";

/// How often a board's timers are looked at and its files rewritten if the game changed.
const TICK: Duration = Duration::from_millis(250);

/// What the recorder asks of a board task.
pub(crate) enum BoardCommand {
    /// Apply an arbiter request and answer.
    Arbiter(ArbiterRequest, oneshot::Sender<Result<String, String>>),
    /// Close the port and stop.
    Shutdown,
    /// Panic, as a bug would (tests of the supervision).
    Panic,
}

/// The commands of a board, shared by its task and the task that replaces it after a panic.
pub(crate) type Commands = Arc<tokio::sync::Mutex<mpsc::Receiver<BoardCommand>>>;

pub(crate) struct BoardTask {
    shared: Arc<Shared>,
    key: BoardKey,
    number: u32,
    source: BoardSource,
    /// The serial number of the board an "auto" entry took (kept across restarts).
    bound_serial: Option<String>,
    pipeline: BoardPipeline,
    events: Vec<Event>,
    /// Entries the journal refused (disk full, read-only), in order: they are committed,
    /// before anything newer, as soon as it accepts writes again.
    backlog: Vec<NewEntry>,
    /// The backlog's size, about ([`entry_size`]).
    backlog_bytes: usize,
    /// Entries not kept since the backlog reached its bound.
    backlog_dropped: u64,
    /// A new game began while the journal was failing: it is not published until the
    /// journal has it.
    holding_new_game: bool,
    /// Positions waiting for their dead-position analysis, oldest first.
    analyses: VecDeque<AnalysisRequest>,
    /// The analysis running on a blocking thread: one at a time, so that the answers come
    /// in the order of the requests.
    analysing: Option<tokio::task::JoinHandle<(AnalysisRequest, Option<bool>)>>,
    /// What the board's LEDs show, from the events.
    led_plan: LedPlan,
    /// Where LED commands go: the link of a board with LEDs.
    lights: Option<mpsc::UnboundedSender<Vec<u8>>>,
    /// The keys of the arbiter actions applied to this board (journalled, so kept across
    /// restarts): a retry of one is answered as applied and not applied again.
    applied_keys: HashSet<String>,
    /// The connection was marked lost and the board has sent nothing since (a port that
    /// keeps failing is marked once).
    connection_lost: bool,
    /// Arrival time of the oldest change the PGN files do not show yet: the files are
    /// rewritten at the next tick, so that the few chunks of one move (and the clock reading
    /// after it) cost one rewrite, not one each.
    files_behind_since: Option<Millis>,
}

impl BoardTask {
    /// Rebuilds board `board`'s game from the journal (its bytes and `actions`, in time order)
    /// and publishes it.
    pub(crate) async fn resume(
        shared: Arc<Shared>,
        board: &BoardConfig,
        control: TimeControl,
        history: History,
    ) -> BoardTask {
        let (pipeline, replayed, chunks, applied_keys) = rebuild(&shared, board, control, &history);
        let tags = GameTags::new(&shared.config, board.number);
        shared.publication.game(GameInfo {
            round: shared.config.round,
            board: board.number,
            white: board.white.name.clone(),
            black: board.black.name.clone(),
            tags: tags.tags().to_vec(),
        });
        if chunks > 0 {
            say(&format!(
                "board {}: rebuilt from the journal ({} chunks, {} plies)",
                board.number,
                chunks,
                pipeline.plies()
            ));
        }
        let mut task = BoardTask {
            key: board_key(shared.config.round, board.number),
            shared,
            number: board.number,
            source: board.source.clone(),
            bound_serial: history.serial.clone(),
            pipeline,
            events: Vec::new(),
            backlog: Vec::new(),
            backlog_bytes: 0,
            backlog_dropped: 0,
            holding_new_game: false,
            analyses: VecDeque::new(),
            analysing: None,
            led_plan: LedPlan::new(board.leds),
            lights: None,
            applied_keys,
            connection_lost: false,
            files_behind_since: None,
        };
        // Live, no chunk of bytes waits on an analysis; the replay above analysed at once, and
        // so does a simulation, where everything is done on the runtime's one thread.
        if !task.shared.on_one_thread {
            task.pipeline.defer_dead_position_analysis();
        }
        // The replay regenerates the events journalled before; only those beyond (a flag
        // that fell while the recorder was down) are new.
        let t_ms = task.shared.session.now_ms();
        let new: Vec<NewEntry> = replayed
            .iter()
            .filter_map(|r| match r {
                Rebuilt::Event(_, e) => Some(e),
                Rebuilt::Applied(..) | Rebuilt::Text(..) => None,
            })
            .skip(history.event_times.len())
            .map(|e| task.event_entry(t_ms, e))
            .collect();
        task.commit(new).await;
        if chunks > 0 {
            task.link_lost("the recorder started again").await;
        }
        task.publish_replayed(replayed);
        task.keep_longer_file();
        task.write_files(true);
        task
    }

    /// Hands the publication the replay's events and accepted arbiter actions in the order
    /// they happened, with the times they happened, as it got them live: an action settles
    /// only the alerts raised before it. A game rebuilt after its task failed sends the
    /// public only what it had not sent.
    fn publish_replayed(&self, replayed: Vec<Rebuilt>) {
        let (round, number) = (self.shared.config.round, self.number);
        let publication = &self.shared.publication;
        let sent = publication.sent_until(round, number);
        for item in replayed {
            let at = self.shared.at(item.t_ms());
            let unsent = sent.is_none_or(|sent| at > sent);
            match item {
                Rebuilt::Event(_, event) if unsent => publication.event(at, round, number, event),
                Rebuilt::Event(_, event) => {
                    publication.live().publish(round, number, event);
                }
                Rebuilt::Applied(_, action) if unsent => {
                    publication.arbiter(at, round, number, &action)
                }
                Rebuilt::Applied(_, action) => {
                    publication
                        .live()
                        .note_arbiter_action(round, number, &action);
                }
                Rebuilt::Text(_, pgn, summary) if unsent => {
                    publication.public_text(at, round, number, pgn, summary)
                }
                Rebuilt::Text(..) => {}
            }
        }
    }

    /// Before the rebuilt game replaces the board's PGN file: a file that knows more moves
    /// (written while the journal was failing, before a restart) is kept beside it.
    fn keep_longer_file(&self) {
        let path = self
            .shared
            .out
            .game_path(self.shared.config.round, self.number);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return;
        };
        let Ok(games) = crate::record::pgn::read_games(&text) else {
            return;
        };
        let before = games.last().map_or(0, |g| g.moves.len());
        if before <= self.pipeline.plies() {
            return;
        }
        let kept = path.with_extension("before-restart.pgn");
        match std::fs::rename(&path, &kept) {
            Ok(()) => loud(&format!(
                "board {}: {} had {before} plies, the journal only {}: the file is kept as {} \
                 (moves made while the journal could not be written); compare and correct with \
                 `touchmove arbiter`",
                self.number,
                path.display(),
                self.pipeline.plies(),
                kept.display()
            )),
            Err(e) => loud(&format!(
                "board {}: cannot keep {} ({e}) before rewriting it from the journal",
                self.number,
                path.display()
            )),
        }
    }

    /// Runs until shut down: link events, arbiter requests and a clock tick. A board named
    /// by serial number or "auto" first waits for the prober to find its port, and goes back
    /// to it whenever its port disappears (it may come back on another one).
    pub(crate) async fn run(mut self, commands: Commands) {
        // Released when this task ends, also by a panic, for the task that replaces it.
        let mut commands = commands.lock_owned().await;
        let mut linking = self.start_linking();
        // Each board ticks at its own phase: boards started together would otherwise all
        // rewrite their files in the same instant.
        let phase = Duration::from_millis(u64::from(self.number) * 97 % TICK.as_millis() as u64);
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + phase, TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                event = next_link_event(&mut linking.link) => {
                    self.on_link_event(&mut linking, event).await;
                }
                () = until(linking.reopen) => self.reopen(&mut linking),
                found = next_found(&mut linking.finding) => {
                    self.on_port_found(&mut linking, found).await;
                }
                command = commands.recv() => match command {
                    Some(BoardCommand::Arbiter(request, reply)) => {
                        let answer = self.on_arbiter(request).await;
                        let _ = reply.send(answer);
                    }
                    Some(BoardCommand::Shutdown) | None => break,
                    Some(BoardCommand::Panic) => panic!("board {}: panic asked for", self.number),
                },
                _ = tick.tick() => self.on_tick().await,
                answer = next_analysis(&mut self.analysing) => {
                    self.analysing = None;
                    match answer {
                        Ok((request, dead)) => self.on_analysis(&request, dead).await,
                        Err(e) => loud(&format!(
                            "board {}: a dead-position analysis failed ({e}); the game goes on \
                             without it",
                            self.number
                        )),
                    }
                }
            }
            self.start_analysis();
            self.ask_for_log(linking.link.as_ref());
        }
        if self.files_behind_since.is_some() {
            self.write_files(true);
        }
        if let Some(link) = linking.link {
            link.handle.shutdown();
        }
    }

    /// Starts the next dead-position analysis the pipeline asked for, unless one is running.
    fn start_analysis(&mut self) {
        self.analyses.extend(self.pipeline.take_analysis_requests());
        if self.analysing.is_some() {
            return;
        }
        if let Some(request) = self.analyses.pop_front() {
            self.analysing = Some(tokio::task::spawn_blocking(move || {
                let dead = request.analyse();
                (request, dead)
            }));
        }
    }

    /// An analysis answered: a dead position ends the game (5.2.2).
    async fn on_analysis(&mut self, request: &AnalysisRequest, dead: Option<bool>) {
        let t_ms = self.shared.session.now_ms();
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        self.pipeline
            .analysis_answered(t_ms, request, dead, &mut events);
        let entries: Vec<NewEntry> = events.iter().map(|e| self.event_entry(t_ms, e)).collect();
        if !entries.is_empty() && self.commit(entries).await {
            self.release_held_game();
        }
        if !events.is_empty() {
            self.publish(&mut events, t_ms);
            self.write_files(true);
        }
        self.events = events;
    }

    async fn on_tick(&mut self) {
        self.pass_time(self.shared.session.now_ms()).await;
        if self.files_behind_since.is_some() {
            self.write_files(false);
        }
    }

    /// Lets time pass up to `t_ms`: what fell due (a press judged, a result signal that
    /// stood) is journalled and published.
    async fn pass_time(&mut self, t_ms: Millis) {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        self.pipeline.tick(t_ms, &mut events);
        let entries: Vec<NewEntry> = events.iter().map(|e| self.event_entry(t_ms, e)).collect();
        // Also retries what the journal refused, so that it recovers without new bytes.
        if (!entries.is_empty() || !self.backlog.is_empty()) && self.commit(entries).await {
            self.release_held_game();
        }
        if !events.is_empty() {
            self.publish(&mut events, t_ms);
            self.files_changed(t_ms);
        }
        self.events = events;
    }

    /// A chunk of bytes: through the pipeline, then the chunk and the events it caused are
    /// committed together (one transaction, one disk sync shared with the other boards),
    /// and only then published (and the PGN files rewritten at the next tick).
    async fn on_bytes(&mut self, t_ms: Millis, data: Vec<u8>) {
        self.connection_lost = false;
        let was_live = self.pipeline.live();
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        self.pipeline.on_bytes(t_ms, &data, &mut events);
        let mut entries = Vec::with_capacity(events.len() + 1);
        entries.push(NewEntry {
            board: Some(self.key.clone()),
            t_ms,
            record: Record::Bytes(data),
        });
        entries.extend(events.iter().map(|e| self.event_entry(t_ms, e)));
        // What the board's move log told (recovered records or why it was not used); the
        // log's own bytes are in the chunk above.
        for report in self.pipeline.take_log_reports() {
            entries.push(NewEntry {
                board: Some(self.key.clone()),
                t_ms,
                record: Record::Metadata {
                    key: BOARD_LOG_REPORT.to_string(),
                    value: serde_json::to_value(&report).unwrap_or_default(),
                },
            });
        }
        if self.commit(entries).await {
            if !events.is_empty() {
                self.shared.probe_latency(LatencyStage::Durable, Some(t_ms));
            }
            self.release_held_game();
        } else if !was_live && self.pipeline.live() && !self.holding_new_game {
            self.holding_new_game = true;
            loud(&format!(
                "board {}: a new game began on the board, but the journal {} cannot be written: \
                 it is NOT recorded (the files keep the previous game) until the journal \
                 accepts writes again",
                self.number,
                self.shared.journal_path.display()
            ));
        }
        if !events.is_empty() && !self.holding_new_game {
            self.light(&events);
            self.publish(&mut events, t_ms);
            self.files_changed(t_ms);
        }
        self.events = events;
    }

    async fn on_arbiter(&mut self, request: ArbiterRequest) -> Result<String, String> {
        if let Some(key) = request.key.as_deref()
            && self.applied_keys.contains(key)
        {
            return Ok(format!(
                "already applied (action {key:?} was journalled before)"
            ));
        }
        if matches!(request.action, ArbiterAction::NewGame) && self.shared.journal_failing() {
            return Err(format!(
                "the journal {} cannot be written (disk full or read-only): no new game is started \
                 until it can; the games recorded so far are kept",
                self.shared.journal_path.display()
            ));
        }
        let t_ms = self.shared.session.now_ms();
        // What fell due before the action is told before it, as a replay of the journal
        // tells it: the action settles the alerts raised before it.
        self.pass_time(t_ms).await;
        let entry = NewEntry {
            board: Some(self.key.clone()),
            t_ms,
            record: Record::Arbiter(request.clone()),
        };
        if !self.commit(vec![entry.clone()]).await {
            // Not applied, so not to be journalled later either.
            if self.backlog.last() == Some(&entry) {
                self.backlog.pop();
                self.backlog_bytes = self.backlog_bytes.saturating_sub(entry_size(&entry));
            }
            return Err(format!(
                "not applied: the journal {} cannot record it (disk full or read-only); free \
                 space or fix its permissions and ask again",
                self.shared.journal_path.display()
            ));
        }
        let mut events = Vec::new();
        let answer = self.pipeline.on_arbiter(t_ms, &request, &mut events);
        if answer.is_ok() {
            self.applied_keys.extend(request.key.clone());
            self.shared.publication.arbiter(
                self.shared.at(t_ms),
                self.shared.config.round,
                self.number,
                &request.action,
            );
        }
        let entries = events.iter().map(|e| self.event_entry(t_ms, e)).collect();
        self.commit(entries).await;
        self.publish(&mut events, t_ms);
        self.write_files(true);
        answer
    }

    /// Lights the squares the events call for, on a board with LEDs.
    fn light(&mut self, events: &[Event]) {
        let Some(lights) = &self.lights else {
            return;
        };
        for event in events {
            if let Some(squares) = self.led_plan.on_event(event) {
                let orientation = self.pipeline.orientation();
                let fields: Vec<u8> = squares
                    .iter()
                    .map(|&sq| orientation.square_to_field(sq))
                    .collect();
                if let Some(bytes) = led_command(self.pipeline.kind(), &fields) {
                    let _ = lights.send(bytes);
                }
            }
        }
    }

    /// Publishes `events`, which happened at `t_ms`.
    fn publish(&self, events: &mut Vec<Event>, t_ms: Millis) {
        let at = self.shared.at(t_ms);
        for event in events.drain(..) {
            self.shared
                .publication
                .event(at, self.shared.config.round, self.number, event);
        }
    }

    /// The game changed by what arrived at `t_ms`: its files are rewritten at the next tick,
    /// or at once while the journal fails (the files then hold what it does not).
    fn files_changed(&mut self, t_ms: Millis) {
        self.files_behind_since.get_or_insert(t_ms);
        if self.shared.journal_failing() {
            self.write_files(true);
        }
    }

    /// Has the board's PGN file and the round's files rewritten; with `wait`, returns once
    /// the board's file is written.
    fn write_files(&mut self, wait: bool) {
        let summary = summary(&self.pipeline, self.number);
        let pgn = self.pipeline.board_pgn();
        let arrived = self.files_behind_since.take();
        self.shared
            .publish_board(self.number, pgn, summary, arrived, wait);
    }
}

/// Board `board`'s pipeline rebuilt from `history`, what the replay gave up to now, the
/// chunks of bytes read and the keys of the arbiter actions applied.
fn rebuild(
    shared: &Shared,
    board: &BoardConfig,
    control: TimeControl,
    history: &History,
) -> (BoardPipeline, Vec<Rebuilt>, usize, HashSet<String>) {
    let tags = GameTags::new(&shared.config, board.number);
    let mut pipeline = BoardPipeline::new(tags, control)
        .with_board_log()
        .with_kind(board.kind);
    // A delayed round's public side also gets the game's text as it stood at each step it
    // has not seen yet.
    let delay = shared.publication.delay(shared.config.round).as_millis() as Millis;
    let unseen_from = shared
        .delayed
        .then(|| shared.session.now_ms().saturating_sub(delay));
    pipeline.learn_pieces(&history.round_before);
    let (mut replayed, chunks, applied_keys) =
        replay_history(&mut pipeline, history, board.number, unseen_from);
    // Journalled when they were first made; a log asked for then is read in the next
    // handshake anyway.
    pipeline.take_log_reports();
    pipeline.take_log_request();
    let mut events = Vec::new();
    let now = shared.session.now_ms();
    pipeline.tick(now, &mut events);
    replayed.extend(events.into_iter().map(|e| Rebuilt::Event(now, e)));
    (pipeline, replayed, chunks, applied_keys)
}

/// The answer of the running analysis, if one runs (otherwise waits forever).
async fn next_analysis(
    analysing: &mut Option<tokio::task::JoinHandle<(AnalysisRequest, Option<bool>)>>,
) -> Result<(AnalysisRequest, Option<bool>), tokio::task::JoinError> {
    match analysing {
        Some(handle) => handle.await,
        None => std::future::pending().await,
    }
}
