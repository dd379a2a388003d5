//! The task of one board: owns its serial link, journals every chunk before using it, runs the
//! pipeline and rewrites the files.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::discovery::{Found, Target};
use super::layout::BoardSummary;
use super::pipeline::{BoardPipeline, GameTags};
use super::replay::{BOUND_SERIAL, History, LINK_LOST, Step, board_key};
use super::{Shared, loud, say};
use crate::act::{AnalysisRequest, Event};
use crate::board::Millis;
use crate::board::kind::BoardKind;
use crate::clock::TimeControl;
use crate::driver::dgt::{LinkConfig, LinkEvent, LinkHandle, spawn_link};
use crate::driver::snapshot_link::{SnapshotLinkConfig, spawn_snapshot_link};
use crate::event::{BoardConfig, BoardSource};
use crate::record::arbiter::{ArbiterAction, ArbiterRequest};
use crate::recorder::leds::{LedPlan, led_command};
use crate::server::feed::GameInfo;
use crate::store::{BoardKey, NewEntry, Record};
use crate::wire::dgt::{Command, CommandDecoder};

/// Journal metadata key of what a board's EEPROM move log told (`LogReport`).
pub(crate) const BOARD_LOG_REPORT: &str = "board-log-report";

/// How long a board on a named port waits before opening it again when it could not be
/// opened or did not answer: on event day cables are plugged in after the recorder starts,
/// and another program may let go of the port.
const PORT_RETRY: Duration = Duration::from_secs(2);
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
        let tags = GameTags::new(&shared.config, board.number);
        let mut pipeline = BoardPipeline::new(tags, control)
            .with_board_log()
            .with_kind(board.kind);
        // The feed gets the events and the accepted arbiter actions in the order they
        // happened, as it did live: an action settles only the alerts raised before it.
        let mut replayed = Vec::new();
        let mut events = Vec::new();
        let mut chunks = 0;
        let mut applied_keys = HashSet::new();
        for step in &history.steps {
            match step {
                Step::Bytes(t_ms, bytes) => {
                    chunks += 1;
                    pipeline.on_bytes(*t_ms, bytes, &mut events);
                    replayed.extend(events.drain(..).map(Replayed::Event));
                }
                Step::Arbiter(t_ms, request) => {
                    // Live, the clock ticks went on up to the action: what they judged (a
                    // press without a move, an illegal move's verdict) came before it.
                    pipeline.tick(*t_ms, &mut events);
                    replayed.extend(events.drain(..).map(Replayed::Event));
                    if pipeline.on_arbiter(*t_ms, request, &mut events).is_ok() {
                        replayed.push(Replayed::Arbiter(request.action.clone()));
                        applied_keys.extend(request.key.clone());
                    }
                    replayed.extend(events.drain(..).map(Replayed::Event));
                }
                Step::LinkLost => pipeline.link_lost(),
            }
        }
        // Journalled when they were first made; a log asked for then is read in the next
        // handshake anyway.
        pipeline.take_log_reports();
        pipeline.take_log_request();
        pipeline.tick(shared.session.now_ms(), &mut events);
        replayed.extend(events.drain(..).map(Replayed::Event));
        let tags = GameTags::new(&shared.config, board.number);
        shared.feed.upsert_game(GameInfo {
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
                Replayed::Event(e) => Some(e),
                Replayed::Arbiter(_) => None,
            })
            .skip(history.events)
            .map(|e| task.event_entry(t_ms, e))
            .collect();
        task.commit(new).await;
        if chunks > 0 {
            task.link_lost("the recorder started again").await;
        }
        for item in replayed {
            match item {
                Replayed::Event(event) => {
                    task.shared
                        .feed
                        .publish(task.shared.config.round, task.number, event);
                }
                Replayed::Arbiter(action) => {
                    task.shared.feed.note_arbiter_action(
                        task.shared.config.round,
                        task.number,
                        &action,
                    );
                }
            }
        }
        task.keep_longer_file();
        task.write_files(true);
        task
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
        let mut link: Option<Link> = None;
        let mut finding: Option<oneshot::Receiver<Found>> = None;
        // When the named port is opened again, and the failure last told (told once).
        let mut reopen: Option<tokio::time::Instant> = None;
        let mut failure_told: Option<String> = None;
        match self.source.clone() {
            BoardSource::Port(p) => link = self.open_link(p.to_string_lossy().into_owned()),
            BoardSource::Bus { port, serial } => link = self.open_bus_link(&port, &serial),
            _ => finding = Some(self.find()),
        }
        // Each board ticks at its own phase: boards started together would otherwise all
        // rewrite their files in the same instant.
        let phase = Duration::from_millis(u64::from(self.number) * 97 % TICK.as_millis() as u64);
        let mut tick = tokio::time::interval_at(tokio::time::Instant::now() + phase, TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tokio::select! {
                event = next_link_event(&mut link) => {
                    let port = link.as_ref().map(|l| l.port.clone()).unwrap_or_default();
                    let keep = match event {
                        Some(LinkEvent::Bytes { t_ms, data }) => {
                            self.on_bytes(t_ms, data).await;
                            true
                        }
                        Some(LinkEvent::Connected { port, version, serial }) => {
                            failure_told = None;
                            self.on_connected(&port, version.as_deref(), serial.as_deref())
                        }
                        Some(LinkEvent::Disconnected { reason }) => {
                            self.on_lost(&port, &reason);
                            self.link_lost(&reason).await;
                            !self.found_by_probing()
                        }
                        Some(LinkEvent::Failed { message }) => {
                            if failure_told.as_ref() != Some(&message) {
                                let retry = match self.source {
                                    BoardSource::Port(_) => format!(
                                        "; trying again every {} s until it answers",
                                        PORT_RETRY.as_secs()
                                    ),
                                    _ => String::new(),
                                };
                                loud(&format!("board {}: {message}{retry}", self.number));
                                failure_told = Some(message.clone());
                            }
                            self.link_lost(&message).await;
                            false
                        }
                        None => false,
                    };
                    if !keep && let Some(old) = link.take() {
                        old.handle.shutdown();
                        if self.found_by_probing() {
                            finding = Some(self.find());
                        }
                        if matches!(self.source, BoardSource::Port(_)) {
                            reopen = Some(tokio::time::Instant::now() + PORT_RETRY);
                        }
                    }
                }
                () = until(reopen) => {
                    reopen = None;
                    if let BoardSource::Port(p) = self.source.clone() {
                        link = self.open_link(p.to_string_lossy().into_owned());
                    }
                }
                found = next_found(&mut finding) => {
                    finding = None;
                    match found {
                        Some(mut found) => {
                            self.on_found(&found).await;
                            let epoch = self.shared.session.epoch();
                            for (at, data) in std::mem::take(&mut found.received) {
                                let t_ms = at.saturating_duration_since(epoch).as_millis() as u64;
                                self.on_bytes(t_ms, data).await;
                            }
                            link = self.open_link(found.port.to_string_lossy().into_owned());
                        }
                        None => loud(&format!(
                            "board {}: the port search stopped; restart the recorder",
                            self.number
                        )),
                    }
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
            self.ask_for_log(link.as_ref());
        }
        if self.files_behind_since.is_some() {
            self.write_files(true);
        }
        if let Some(link) = link {
            link.handle.shutdown();
        }
    }

    /// True when the board's port is found by probing (by serial number or "auto").
    fn found_by_probing(&self) -> bool {
        matches!(self.source, BoardSource::Serial(_) | BoardSource::Auto)
    }

    /// The board the prober must find for this task.
    fn target(&self) -> Target {
        match (&self.source, &self.bound_serial) {
            (BoardSource::Serial(s), _) | (BoardSource::Auto, Some(s)) => Target::Serial(s.clone()),
            _ => Target::Auto,
        }
    }

    fn find(&self) -> oneshot::Receiver<Found> {
        self.shared.discovery.want(self.number, self.target())
    }

    /// Opens the link of the board's kind on `port`; `None` for a Pegasus without its
    /// developer key (said loudly; the recorder refuses to start without it, so only a
    /// caller that skipped that check gets here).
    fn open_link(&mut self, port: String) -> Option<Link> {
        let epoch = self.shared.session.epoch();
        let connector = self.shared.links.get(std::path::Path::new(&port)).cloned();
        let (handle, events) = match self.pipeline.kind() {
            BoardKind::Dgt => spawn_link(
                LinkConfig {
                    connector,
                    ..LinkConfig::new(port.clone())
                },
                epoch,
            ),
            BoardKind::Pegasus => {
                let Some(key) = self.shared.pegasus_key.clone() else {
                    loud(&format!(
                        "board {}: {port} is a DGT Pegasus and no developer key is given, so it \
                         is not read: {}",
                        self.number,
                        crate::event::pegasus_key::HOW_TO_GIVE_THE_KEY
                    ));
                    return None;
                };
                let config = LinkConfig {
                    connector,
                    ..LinkConfig::pegasus(port.clone(), key)
                };
                let (handle, events) = spawn_link(config, epoch);
                self.lights = Some(forward_lights(handle.clone()));
                (handle, events)
            }
            kind => {
                let config = SnapshotLinkConfig {
                    connector,
                    ..SnapshotLinkConfig::new(kind, port.clone())
                };
                let (handle, events, lights) = spawn_snapshot_link(config, epoch);
                self.lights = Some(lights);
                (handle, events)
            }
        };
        Some(Link {
            handle: LinkControl::Own(handle),
            events,
            port,
        })
    }

    /// The board's share of its bus chain's link.
    fn open_bus_link(&self, port: &std::path::Path, serial: &str) -> Option<Link> {
        let chain = self.shared.buses.get(port)?.clone();
        let address = crate::wire::dgt::bus::address_of_serial(serial)?;
        say(&format!(
            "board {}: DGT bus board serial {serial} (address {address}) on {}",
            self.number,
            port.display()
        ));
        Some(Link {
            events: chain.subscribe(address),
            handle: LinkControl::Bus(chain, address),
            port: port.to_string_lossy().into_owned(),
        })
    }

    /// A port was found: an "auto" board keeps the serial number it took, in the journal too.
    async fn on_found(&mut self, found: &Found) {
        say(&format!(
            "board {}: found {} on {}",
            self.number,
            found
                .serial
                .as_deref()
                .map_or("a DGT board".to_string(), |s| format!(
                    "DGT board serial {s}"
                )),
            found.port.display()
        ));
        if self.source != BoardSource::Auto || self.bound_serial.is_some() {
            return;
        }
        let Some(serial) = found.serial.clone() else {
            return;
        };
        let entry = NewEntry {
            board: Some(self.key.clone()),
            t_ms: self.shared.session.now_ms(),
            record: Record::Metadata {
                key: BOUND_SERIAL.to_string(),
                value: serde_json::Value::String(serial.clone()),
            },
        };
        self.commit(vec![entry]).await;
        self.bound_serial = Some(serial);
    }

    /// The link's handshake succeeded; false when it is not the board this task wants.
    fn on_connected(&mut self, port: &str, version: Option<&str>, serial: Option<&str>) -> bool {
        if let Target::Serial(wanted) = self.target()
            && !matches!(self.source, BoardSource::Port(_))
            && serial.is_some_and(|s| s != wanted)
        {
            loud(&format!(
                "board {}: the board on {port} now reports serial {}, not {wanted}; looking for \
                 board serial {wanted} again",
                self.number,
                serial.unwrap_or("unknown")
            ));
            return false;
        }
        self.pipeline.set_link(port, serial);
        match self.pipeline.kind() {
            BoardKind::Dgt => say(&format!(
                "board {}: connected on {port} (DGT board serial {}, version {})",
                self.number,
                serial.unwrap_or("unknown"),
                version.unwrap_or("unknown")
            )),
            kind => say(&format!(
                "board {}: connected on {port} ({kind} board, version {})",
                self.number,
                version.unwrap_or("unknown")
            )),
        }
        true
    }

    /// The connection to the board is gone (`why`), or the recorder started again: what the
    /// board sends next is on a new connection, part of the gap until it has been read again.
    /// Journalled, so that a replay reads the next bytes as this run does.
    async fn link_lost(&mut self, why: &str) {
        if std::mem::replace(&mut self.connection_lost, true) {
            return;
        }
        self.pipeline.link_lost();
        let entry = NewEntry {
            board: Some(self.key.clone()),
            t_ms: self.shared.session.now_ms(),
            record: Record::Metadata {
                key: LINK_LOST.to_string(),
                value: serde_json::Value::String(why.to_string()),
            },
        };
        self.commit(vec![entry]).await;
    }

    fn on_lost(&self, port: &str, reason: &str) {
        let next = match (&self.source, self.target()) {
            (BoardSource::Port(_), _) => "this one resumes when it is plugged in again".to_string(),
            (BoardSource::Bus { .. }, _) => {
                "this one resumes when it answers on the bus again (switched on, cable back)"
                    .to_string()
            }
            (_, Target::Serial(s)) => {
                format!("board serial {s} is looked for on every candidate port until it is back")
            }
            (_, Target::Auto) => "a free board is looked for on every candidate port".to_string(),
        };
        loud(&format!(
            "board {}: port {port} lost ({reason}); the other boards keep recording, and {next}",
            self.number
        ));
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
            self.publish(&mut events);
            self.write_files(true);
        }
        self.events = events;
    }

    async fn on_tick(&mut self) {
        let t_ms = self.shared.session.now_ms();
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        self.pipeline.tick(t_ms, &mut events);
        let entries: Vec<NewEntry> = events.iter().map(|e| self.event_entry(t_ms, e)).collect();
        // Also retries what the journal refused, so that it recovers without new bytes.
        if (!entries.is_empty() || !self.backlog.is_empty()) && self.commit(entries).await {
            self.release_held_game();
        }
        if !events.is_empty() {
            self.publish(&mut events);
            self.files_changed(t_ms);
        }
        self.events = events;
        if self.files_behind_since.is_some() {
            self.write_files(false);
        }
    }

    /// Asks the board for its move log when the pipeline found updates lost on the line:
    /// the log tells which, and in what order (DGT `SEND_EE_MOVES`).
    fn ask_for_log(&mut self, link: Option<&Link>) {
        if self.pipeline.take_log_request()
            && let Some(link) = link
        {
            tracing::info!(
                board = self.number,
                "the board's picture shows updates lost on the line; reading its move log to \
                 put them back"
            );
            link.handle.ask_for_log();
        }
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
            self.publish(&mut events);
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
            self.shared.feed.note_arbiter_action(
                self.shared.config.round,
                self.number,
                &request.action,
            );
        }
        let entries = events.iter().map(|e| self.event_entry(t_ms, e)).collect();
        self.commit(entries).await;
        self.publish(&mut events);
        self.write_files(true);
        answer
    }

    fn event_entry(&self, t_ms: Millis, event: &Event) -> NewEntry {
        NewEntry {
            board: Some(self.key.clone()),
            t_ms,
            record: Record::Event(event.clone()),
        }
    }

    /// Journals `entries` after the entries the journal refused before, in one transaction.
    /// False when the journal refuses again: they all wait, in order, for the next attempt
    /// (the next chunk, or the next tick), up to the backlog's bound.
    async fn commit(&mut self, entries: Vec<NewEntry>) -> bool {
        self.hold(entries);
        if self.backlog.is_empty() {
            return true;
        }
        let held = self.backlog.len();
        let pending = std::mem::take(&mut self.backlog);
        match self.shared.journal.append_or_return(pending).await {
            Ok(_) => {
                self.backlog_bytes = 0;
                let dropped = std::mem::take(&mut self.backlog_dropped);
                if self.shared.board_recovered(self.number) {
                    let lost = if dropped == 0 {
                        ", nothing was lost".to_string()
                    } else {
                        format!(
                            "; {dropped} later entries did not fit in memory and are NOT in the \
                             journal (the PGN files have the moves; a restart would not rebuild \
                             them: check the game with `touchmove arbiter`)"
                        )
                    };
                    loud(&format!(
                        "board {}: the journal {} accepts writes again; the {held} entries held \
                         in memory are journalled{lost}",
                        self.number,
                        self.shared.journal_path.display()
                    ));
                }
                true
            }
            Err((e, returned)) => {
                self.backlog_bytes = returned.iter().map(entry_size).sum();
                self.backlog = returned;
                if self.shared.board_failed(self.number) {
                    loud(&format!(
                        "JOURNAL FAILING (board {}): {e}. The games in progress go on in memory \
                         and in the PGN files and are journalled as soon as the journal accepts \
                         writes again; no new game is recorded until then, and a crash before \
                         then would lose the moves since now.",
                        self.number
                    ));
                }
                false
            }
        }
    }

    /// Adds `entries` to the backlog, up to [`Shared::backlog_limit`]: beyond it they are
    /// not kept (said once), so that a long outage cannot exhaust the memory.
    fn hold(&mut self, entries: Vec<NewEntry>) {
        for entry in entries {
            let size = entry_size(&entry);
            if !self.backlog.is_empty()
                && self.backlog_bytes.saturating_add(size) > self.shared.backlog_limit
            {
                if self.backlog_dropped == 0 {
                    loud(&format!(
                        "board {}: JOURNAL BACKLOG FULL: {} entries ({} KiB) wait for the journal \
                         {}; newer ones are not kept for it. The game goes on in memory and in \
                         the PGN files, but a restart would not rebuild the moves from now on: \
                         free space on the disk now",
                        self.number,
                        self.backlog.len(),
                        self.backlog_bytes / 1024,
                        self.shared.journal_path.display()
                    ));
                }
                self.backlog_dropped += 1;
                continue;
            }
            self.backlog_bytes += size;
            self.backlog.push(entry);
        }
    }

    /// The journal took the new game that was held back: publish it.
    fn release_held_game(&mut self) {
        if std::mem::take(&mut self.holding_new_game) {
            say(&format!(
                "board {}: the new game is journalled and recorded now",
                self.number
            ));
            self.write_files(true);
        }
    }

    /// Publishes events to the live feed.
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

    fn publish(&self, events: &mut Vec<Event>) {
        for event in events.drain(..) {
            self.shared
                .feed
                .publish(self.shared.config.round, self.number, event);
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
        let summary = BoardSummary {
            board: self.number,
            result: self.pipeline.result().to_string(),
            live: self.pipeline.live(),
        };
        let pgn = self.pipeline.board_pgn();
        let arrived = self.files_behind_since.take();
        self.shared
            .publish_board(self.number, pgn, summary, arrived, wait);
    }
}

/// About what an entry costs in memory while it waits for the journal.
fn entry_size(entry: &NewEntry) -> usize {
    match &entry.record {
        Record::Bytes(bytes) => bytes.len() + 64,
        _ => 512,
    }
}

/// What a replay hands the feed, in order.
enum Replayed {
    /// An event of the pipeline.
    Event(Event),
    /// An arbiter action the pipeline accepted.
    Arbiter(ArbiterAction),
}

/// Controls the board's link: its own port's, or its share of a bus chain's.
enum LinkControl {
    Own(LinkHandle),
    Bus(crate::driver::bus_boards::BusBoards, u16),
}

impl LinkControl {
    fn shutdown(&self) {
        match self {
            LinkControl::Own(handle) => handle.shutdown(),
            LinkControl::Bus(chain, address) => chain.unsubscribe(*address),
        }
    }

    /// Asks for the board's move log (`SEND_EE_MOVES`). A bus board's changes come in its
    /// polls, and what it missed while off is read from its position.
    fn ask_for_log(&self) {
        if let LinkControl::Own(handle) = self {
            handle.send(Command::SendEepromMoves);
        }
    }
}

/// Where the LED commands of a board on a DGT link (Pegasus) go: decoded and sent through
/// `handle`, which writes them while the link is up and drops them while it is down. The
/// forwarding ends when the sender is dropped (the next link's replaces it).
fn forward_lights(handle: LinkHandle) -> mpsc::UnboundedSender<Vec<u8>> {
    let (lights, mut received) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut decoder = CommandDecoder::new();
        let mut commands = Vec::new();
        while let Some(bytes) = received.recv().await {
            decoder.push(&bytes, &mut commands);
            for command in commands.drain(..) {
                handle.send(command);
            }
        }
    });
    lights
}

/// A running link to the board.
struct Link {
    handle: LinkControl,
    events: mpsc::Receiver<LinkEvent>,
    port: String,
}

/// The next event of the link, if there is one (otherwise waits forever).
async fn next_link_event(link: &mut Option<Link>) -> Option<LinkEvent> {
    match link {
        Some(link) => link.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Waits until `at`, or forever when there is no `at`.
async fn until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
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

/// The port found for the board, if it is being looked for (otherwise waits forever); `None`
/// when the prober stopped.
async fn next_found(finding: &mut Option<oneshot::Receiver<Found>>) -> Option<Found> {
    match finding {
        Some(answer) => answer.await.ok(),
        None => std::future::pending().await,
    }
}
