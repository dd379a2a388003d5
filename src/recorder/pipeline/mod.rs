//! One board's pipeline, without I/O: bytes → decoder → observer → act-of-moving machine →
//! events → clock → game record. Arbiter actions act on the same state.
//!
//! The recorder runs it live and, after a restart, replays the journal through it: the same
//! bytes and arbiter actions in the same order give the same game, clocks and alerts.
//!
//! Here, the byte pipeline and the record it keeps; the arbiter's actions (results,
//! penalties, claims, corrections of the moves) are in `arbiter`.

mod after_game;
mod arbiter;
mod board_log;
mod game_record;
mod gaps;
mod log_rereading;
#[cfg(test)]
mod tests;

use shakmaty::Color;

use crate::act::{AnalysisRequest, Event, Machine, MachineConfig, Severity};
use crate::board::dgt::DgtObserver;
use crate::board::kind::{BoardKind, KindDecoder};
use crate::board::resumption::{Resumed, Resumption};
use crate::board::{Millis, Observation, ObservationKind};
use crate::clock::{ClockState, TimeControl};
use crate::record::{GameRecord, RecordedMove};
use crate::rules::Game;
use crate::wire::certabo::PiecesUnread;
use crate::wire::dgt::Message;

use after_game::AfterGame;
pub use after_game::RESTART_PLIES;
use board_log::BoardLog;
pub use board_log::LogReport;
use game_record::Ending;
pub use game_record::{GameTags, NOT_SEEN_BEGUN};
use gaps::{BeforeGap, OrderSpan};
pub use gaps::{MOVES_BEFORE_GAP, ORDER_NOT_OBSERVED};

/// One board's game in the making.
#[derive(Debug, Clone)]
pub struct BoardPipeline {
    tags: GameTags,
    control: TimeControl,
    kind: BoardKind,
    decoder: KindDecoder,
    observer: DgtObserver,
    machine: Machine,
    /// The game as recorded: the machine's moves after `offset` plies fixed by the arbiter.
    game: Game,
    /// Plies before the current machine's first move (set by arbiter corrections).
    offset: u32,
    /// The machine was restarted from a corrected position: its start is not a new game.
    resuming: bool,
    scratch: Vec<Event>,
    clock: ClockState,
    start_fen: Option<String>,
    chess960: bool,
    moves: Vec<RecordedMove>,
    /// Comments by the ply they follow (0 = before the first move).
    notes: Vec<(u32, String)>,
    ending: Option<Ending>,
    accepted_penalties: [u32; 2],
    /// Penalties proposed by Article 7.5 alerts: (ply, offender).
    penalties: Vec<(u32, Color)>,
    /// The plies whose irregularity the arbiter decided, and whether a penalty was applied:
    /// one irregularity gets one decision, however many of its alerts the desk shows.
    decided_penalties: Vec<(u32, bool)>,
    earlier_games: Vec<GameRecord>,
    messages: Vec<Message>,
    observations: Vec<Observation>,
    started: bool,
    /// Recovery of changes missed while the link was down, from the board's move log.
    board_log: BoardLog,
    /// What arrives after a reconnect is part of the gap until the board is read again.
    resumption: Resumption,
    /// The dead-position analysis is left to the caller.
    defer_analysis: bool,
    /// Spans of moves made during a gap whose order was not observed, until the arbiter
    /// settles them.
    order_spans: Vec<OrderSpan>,
    /// The game before a gap no legal sequence explained, while the record goes on from the
    /// board's position.
    before_gap: Option<BeforeGap>,
    /// Play is held because the board does not match the game (as last told).
    held: bool,
    /// The alerts of this game that added to the record, for a later alert to withdraw.
    noted_alerts: Vec<crate::act::Alert>,
    /// The game was closed by a new set-up: the board is after the game.
    after: Option<AfterGame>,
    /// What starts a game besides the standard position: a FEN game's set-up, any Chess960
    /// start ([`BoardPipeline::with_start`]).
    starts: (Option<String>, bool),
    /// The board is read as one that senses occupancy only, whatever its kind.
    occupancy_only: bool,
    /// The plies recorded when the link last came back after being down: a set-up the board
    /// shows with none recorded since closes a game whose last moves nobody may have seen.
    link_back_plies: Option<usize>,
}

/// The machine's configuration for games under `control`: its 7.5.5 proposals name the
/// time the arbiter's decision adds, one minute in rapid and blitz.
fn machine_config_for(control: &TimeControl) -> MachineConfig {
    MachineConfig {
        one_minute_penalty: control.is_blitz() || control.is_rapid(),
        ..MachineConfig::default()
    }
}

/// `machine` reading a board the recorder has not seen before: its round may have started
/// without the recorder (6.1; the recorder started, or started again on a new round, after
/// it), and a board a short sequence of legal moves from the start shows a game begun unseen.
fn unseen(mut machine: Machine) -> Machine {
    machine.not_read_before();
    machine
}

impl BoardPipeline {
    /// A board waiting for its start position, not seen yet.
    pub fn new(tags: GameTags, control: TimeControl) -> BoardPipeline {
        BoardPipeline {
            tags,
            clock: ClockState::new(control.clone()),
            machine: unseen(Machine::new(machine_config_for(&control))),
            control,
            kind: BoardKind::Dgt,
            decoder: KindDecoder::new(BoardKind::Dgt),
            observer: DgtObserver::new(),
            game: Game::standard(),
            offset: 0,
            resuming: false,
            scratch: Vec::new(),
            start_fen: None,
            chess960: false,
            moves: Vec::new(),
            notes: Vec::new(),
            ending: None,
            accepted_penalties: [0, 0],
            penalties: Vec::new(),
            decided_penalties: Vec::new(),
            earlier_games: Vec::new(),
            messages: Vec::new(),
            observations: Vec::new(),
            started: false,
            board_log: BoardLog::new(),
            resumption: Resumption::new(),
            defer_analysis: false,
            order_spans: Vec::new(),
            before_gap: None,
            held: false,
            noted_alerts: Vec::new(),
            after: None,
            starts: (None, false),
            occupancy_only: false,
            link_back_plies: None,
        }
    }

    /// The configuration of the machines this pipeline starts: the default, with the
    /// dead-position analysis deferred when asked to.
    fn machine_config(&self) -> MachineConfig {
        let config = MachineConfig {
            defer_dead_position_analysis: self.defer_analysis,
            start_fen: self.starts.0.clone(),
            chess960: self.starts.1,
            ..machine_config_for(&self.control)
        }
        .on_board(self.kind);
        MachineConfig {
            identifies_pieces: config.identifies_pieces && !self.occupancy_only,
            ..config
        }
    }

    /// Reads a board of `kind` (DGT by default): its bytes are decoded as that kind's, and
    /// a board that senses only occupancy takes the occupancy-only path. Boards other than
    /// DGT's have no move log: they are read again from their position.
    pub fn with_kind(mut self, kind: BoardKind) -> BoardPipeline {
        self.kind = kind;
        if !kind.has_move_log() {
            self.board_log.enabled = false;
        }
        self.decoder = KindDecoder::new(kind);
        self.observer = if kind.identifies_pieces() {
            DgtObserver::new()
        } else {
            DgtObserver::occupancy_only()
        };
        self.machine = unseen(Machine::new(self.machine_config()));
        self
    }

    /// Games start from `start_fen` (a FEN game's set-up) instead of the standard position,
    /// or, with `chess960`, from any Chess960 start. Call after [`BoardPipeline::with_kind`].
    pub fn with_start(mut self, start_fen: Option<String>, chess960: bool) -> BoardPipeline {
        if let Some(game) = start_fen
            .as_deref()
            .and_then(|fen| Game::from_fen(fen, chess960).ok())
        {
            use shakmaty::Position;
            self.observer.expect_setup(game.start().board().clone());
        }
        self.starts = (start_fen, chess960);
        self.machine = unseen(Machine::new(self.machine_config()));
        self
    }

    /// Reads the board as one that cannot tell pieces apart, whatever its kind (a DGT
    /// capture read as an occupancy-only board would show it). Call after
    /// [`BoardPipeline::with_kind`].
    pub fn sensing_occupancy_only(mut self) -> BoardPipeline {
        self.occupancy_only = true;
        self.observer = DgtObserver::occupancy_only();
        self.machine = unseen(Machine::new(self.machine_config()));
        self
    }

    /// When time next decides something the machine waits on (a press, a move's
    /// completion, a result signal standing), if anything waits.
    pub fn next_deadline(&self) -> Option<Millis> {
        self.machine.next_deadline()
    }

    /// The kind of board read.
    pub fn kind(&self) -> BoardKind {
        self.kind
    }

    /// How the board lies (found from the start position).
    pub fn orientation(&self) -> crate::board::orientation::Orientation {
        self.observer.orientation()
    }

    /// From now on, leaves the dead-position analysis (5.2.2) to the caller, so that no
    /// chunk of bytes waits on it: the positions to analyse come from
    /// [`BoardPipeline::take_analysis_requests`], and their answers go back, in order, to
    /// [`BoardPipeline::analysis_answered`]. A replay leaves it off and records the same game.
    pub fn defer_dead_position_analysis(&mut self) {
        self.defer_analysis = true;
        self.machine.defer_dead_position_analysis(true);
    }

    /// The positions waiting for their dead-position analysis, oldest first.
    pub fn take_analysis_requests(&mut self) -> Vec<AnalysisRequest> {
        self.machine.take_analysis_requests()
    }

    /// The answer of [`AnalysisRequest::analyse`] for `request`, given at `t_ms`; the events
    /// it causes (the end of the game, moves withdrawn after it) are appended to `out`.
    pub fn analysis_answered(
        &mut self,
        t_ms: Millis,
        request: &AnalysisRequest,
        dead: Option<bool>,
        out: &mut Vec<Event>,
    ) {
        self.run_machine(out, |machine, events| {
            machine.advance(t_ms, events);
            machine.analysis_answered(request, dead, events);
        });
    }

    /// Recovers changes missed while the link was down from the board's EEPROM move log
    /// whenever one arrives (the recorder's links ask for it in every handshake).
    pub fn with_board_log(mut self) -> BoardPipeline {
        self.board_log.enabled = true;
        self
    }

    /// What the logs received since the last call told (for the journal).
    pub fn take_log_reports(&mut self) -> Vec<LogReport> {
        std::mem::take(&mut self.board_log.reports)
    }

    /// Feeds bytes received at `t_ms`; the events they cause are appended to `out`.
    pub fn on_bytes(&mut self, t_ms: Millis, bytes: &[u8], out: &mut Vec<Event>) {
        // Time passes up to the chunk before it is read, as the recorder's ticks let it pass
        // live: what fell due before it is decided on the game as it stood, before what the
        // chunk brings (the link back, a message that is no observation) changes it, whether
        // ticks came between or not (a replay of the journal has none).
        if !self.resumption.holding() {
            self.run_machine(out, |machine, events| machine.catch_up(t_ms, events));
        }
        self.messages.clear();
        self.decoder.push(bytes, &mut self.messages);
        let messages = std::mem::take(&mut self.messages);
        self.observations.clear();
        self.resumption.heard(t_ms);
        let mut sorted = Vec::new();
        for m in &messages {
            self.resumption
                .push(t_ms, m.clone(), self.started, &mut sorted);
            for resumed in sorted.drain(..) {
                self.on_resumed(resumed, out);
            }
        }
        self.messages = messages;
        if let Some(unread) = self.decoder.pieces_unread_due(t_ms) {
            out.push(self.pieces_unread_alert(t_ms, &unread));
        }
        self.take_pending_observations(out);
        if !self.resumption.holding() {
            self.check_flag(t_ms, out);
        }
        self.checkpoint_if_verified(t_ms);
    }

    /// 8.5.3: pieces are moved on a board whose pieces cannot be read, so no game on it is
    /// recorded: which board, why, and what to do.
    fn pieces_unread_alert(&self, t_ms: Millis, unread: &PiecesUnread) -> Event {
        Event::Alert(crate::act::Alert {
            article: "8.5.3".to_string(),
            side: None,
            ply: 0,
            t_ms,
            evidence_ms: vec![t_ms],
            squares: Vec::new(),
            severity: Severity::Warning,
            message: format!("{}: {unread}", self.board_name()),
            gap: None,
            withdraws: Vec::new(),
            before_game: true,
        })
    }

    /// Takes one observation of a board whose reports are already read (a simulation's, in
    /// game coordinates), as if its bytes had shown it at `obs.t_ms`; the events it causes are
    /// appended to `out`.
    pub fn on_observation(&mut self, obs: &Observation, out: &mut Vec<Event>) {
        self.observations.push(obs.clone());
        self.take_pending_observations(out);
        self.check_flag(obs.t_ms, out);
    }

    /// A board that learns its pieces from the start position (Certabo) learns them from
    /// `earlier`, the bytes it sent before (in the round before): a recorder started on a
    /// round whose game began before it could see the start position reads the game all the
    /// same. Nothing else of them is kept.
    pub fn learn_pieces(&mut self, earlier: &[Vec<u8>]) {
        if self.kind != BoardKind::Certabo || earlier.is_empty() {
            return;
        }
        let mut ignored = Vec::new();
        for bytes in earlier {
            self.decoder.push(bytes, &mut ignored);
            ignored.clear();
        }
        self.decoder.link_lost();
    }

    /// The host's link lost its connection to the board, or the host restarted: what the
    /// next connection brings is part of the gap until the board has been read again (its
    /// move log, or its dump), however late the handshake's answer comes.
    pub fn link_lost(&mut self) {
        self.resumption.link_lost();
        self.decoder.link_lost();
        self.machine.link_lost();
    }

    /// Takes one message as [`Resumption`] sorted it around reconnects.
    fn on_resumed(&mut self, resumed: Resumed, out: &mut Vec<Event>) {
        match resumed {
            Resumed::LinkBack { t_ms } => {
                // The link was down, moves may have been made unseen: what the board shows
                // once read again (its move log, its dump) tells them.
                self.take_pending_observations(out);
                self.link_back_plies = Some(self.moves.len());
                self.machine.link_restored(t_ms);
                self.board_log.forget_checkpoint();
            }
            Resumed::InGap(t_ms, m) => self.board_log.keep_in_gap(t_ms, &m),
            Resumed::Live(t_ms, m) => self.on_message(t_ms, &m, out),
        }
    }

    /// Reads one message of the live line.
    fn on_message(&mut self, t_ms: Millis, m: &Message, out: &mut Vec<Event>) {
        if !self.board_log.enabled {
            if matches!(m, Message::EepromMoves(_)) {
                self.resumption.log_not_used();
            }
            self.observer.on_message(t_ms, m, &mut self.observations);
            return;
        }
        if let Message::EepromMoves(records) = m {
            // What came before the log is passed on before what the log recovers.
            self.take_pending_observations(out);
            if !self.reread_from_log(t_ms, records, out)
                && !self.recover_from_log(t_ms, records, out)
            {
                self.resumption.log_not_used();
            }
            return;
        }
        if matches!(m, Message::FieldUpdate { .. }) {
            self.picture_before_first_update(t_ms);
        }
        if matches!(m, Message::BoardDump(_)) && self.board_log.behind_log > 0 {
            // What the board queued behind its log has all arrived once the second dump
            // does: what came before it goes on with estimated times.
            if self.board_log.behind_log == 1 {
                self.take_pending_observations(out);
            }
            self.board_log.behind_log -= 1;
        }
        if matches!(m, Message::BoardDump(_)) {
            self.board_log.gap_read();
        }
        if !self.board_log.keep_since_checkpoint(t_ms, m) {
            tracing::warn!(
                "{}: the board's move log, asked for after field updates were lost on the \
                 line, did not come; the moves are read from the board's position: check the \
                 record's alerts and correct the moves with `touchmove arbiter` if needed",
                self.board_name()
            );
        }
        let seen = self.observations.len();
        self.observer.on_message(t_ms, m, &mut self.observations);
        self.follow_trail(t_ms, m, seen);
    }

    /// Passes the observations gathered so far on to the machine and clears them.
    fn take_pending_observations(&mut self, out: &mut Vec<Event>) {
        let mut observations = std::mem::take(&mut self.observations);
        for obs in &observations {
            if matches!(obs.kind, ObservationKind::ClockPressed { .. })
                && !self.observer.white_side_sure()
            {
                self.machine.presser_guessed(obs.t_ms);
            }
            self.observe(obs, out);
            // After the machine: a reading that completes a move settles that move's time.
            // Once the game has ended (5.1, 5.2, 6.9), the clock is no part of it: the press
            // after a mate adds no increment to the mating move's time (and after the game
            // the clock is the next game's).
            if let ObservationKind::ClockTimes(reading) = &obs.kind
                && self.after.is_none()
                && self.ending.is_none()
            {
                self.clock.observe_reading(obs.t_ms, reading);
            }
        }
        observations.clear();
        self.observations = observations;
    }

    /// Passes one observation to the machine.
    fn observe(&mut self, obs: &Observation, out: &mut Vec<Event>) {
        if self.board_log.untimed || self.board_log.behind_log > 0 {
            self.run_machine(out, |machine, events| {
                machine.observe_recovered(obs, events)
            });
        } else {
            self.run_machine(out, |machine, events| machine.observe(obs, events));
        }
    }

    /// Runs one step of the machine and takes in its events, renumbered after an arbiter
    /// correction.
    fn run_machine(
        &mut self,
        out: &mut Vec<Event>,
        step: impl FnOnce(&mut Machine, &mut Vec<Event>),
    ) {
        let mut events = std::mem::take(&mut self.scratch);
        events.clear();
        step(&mut self.machine, &mut events);
        for event in events.drain(..) {
            if self.resuming && matches!(event, Event::GameStart { .. }) {
                self.resuming = false;
                continue;
            }
            let Some(mut event) = self.unless_after_game(event, out) else {
                continue;
            };
            shift_plies(&mut event, self.offset);
            if self.ending.is_some() {
                no_penalty_after_the_end(&mut event);
            }
            self.take(&event);
            out.push(event);
        }
        self.scratch = events;
    }

    /// Lets time pass at `t_ms` (call it now and then): a press the board did not follow is
    /// judged, and a software clock's flag falls, without any byte arriving.
    pub fn tick(&mut self, t_ms: Millis, out: &mut Vec<Event>) {
        let mut sorted = Vec::new();
        self.resumption.advance(t_ms, &mut sorted);
        for resumed in sorted {
            self.on_resumed(resumed, out);
        }
        self.take_pending_observations(out);
        if self.resumption.holding() {
            // What is held may be moves from before this moment: no time passes for the
            // game until it is read.
            return;
        }
        // Only what fell due by now, each at the time it fell due: a replay of the journal,
        // which has no ticks, decides it at the same times (the next chunk catches up to
        // them), so the game it rebuilds is the one recorded live.
        self.run_machine(out, |machine, events| {
            machine.catch_up(t_ms.saturating_add(1), events)
        });
        self.check_flag(t_ms, out);
    }

    /// Bytes the decoder could not read so far (line noise).
    pub fn skipped_bytes(&self) -> u64 {
        self.decoder.skipped_bytes()
    }

    /// Ends the game when a flag has fallen at `t_ms` (6.9), as the clock judges it.
    fn check_flag(&mut self, t_ms: Millis, out: &mut Vec<Event>) {
        if !self.started || self.ending.is_some() || self.moves.is_empty() || self.after.is_some() {
            return;
        }
        if let Some(verdict) = self.clock.judge_flag(t_ms, &self.game) {
            let event = Event::Result {
                result: verdict.result().to_string(),
                reason: verdict.reason(),
                t_ms,
            };
            self.take(&event);
            out.push(event);
        }
    }
}

/// A 7.5 finding made once the game's result stands is no irregularity of play: the game is
/// over (5.1.1, 5.2.1, 5.1.2, or the arbiter's result), and what the hands do next (the pieces
/// swept off with both hands, a post-mortem) earns no penalty. It is told as information.
fn no_penalty_after_the_end(event: &mut Event) {
    if let Event::Alert(alert) = event
        && alert.article.starts_with("7.5")
        && alert.severity != Severity::Info
    {
        alert.severity = Severity::Info;
        alert.message = format!("after the game's end: {}", alert.message);
    }
}

/// Renumbers the plies of a machine restarted after `offset` plies.
fn shift_plies(event: &mut Event, offset: u32) {
    if offset == 0 {
        return;
    }
    match event {
        Event::Move { ply, .. }
        | Event::Revision { ply, .. }
        | Event::MoveCompleted { ply, .. }
        | Event::Clock { ply, .. } => *ply += offset,
        Event::Alert(alert) => {
            alert.ply += offset;
            for r in &mut alert.withdraws {
                r.ply += offset;
            }
        }
        Event::GameStart { .. }
        | Event::BoardState { .. }
        | Event::Result { .. }
        | Event::GameClosed { .. } => {}
    }
}
