//! One board's pipeline, without I/O: bytes → decoder → observer → act-of-moving machine →
//! events → clock → game record. Arbiter actions act on the same state.
//!
//! The recorder runs it live and, after a restart, replays the journal through it: the same
//! bytes and arbiter actions in the same order give the same game, clocks and alerts.

use shakmaty::{Color, Position};

use crate::act::{Event, Machine, MachineConfig, Severity};
use crate::board::ClockReading;
use crate::board::dgt::DgtObserver;
use crate::board::log_recovery::{FieldTrail, RecoveredRecord, recover, schedule};
use crate::board::{Millis, Observation, ObservationKind, Snapshot};
use crate::clock::{ClockState, TimeControl};
use crate::record::arbiter::{ArbiterAction, ArbiterRequest, DrawClaim};
use crate::record::{GameRecord, RecordedMove};
use crate::rules::Game;
use crate::wire::dgt::{ClockSide, Decoder, EepromLog, EepromRecord, Message};

use super::config::{EventConfig, Player};

/// The tags that identify a board's game for its lifetime (lichess matches games on them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameTags {
    tags: Vec<(String, String)>,
}

impl GameTags {
    /// The tags of board `board` of the configured round.
    pub fn new(config: &EventConfig, board: u32) -> GameTags {
        let cfg = config.board(board);
        let unknown = Player::named("?");
        let white = cfg.map_or(&unknown, |b| &b.white);
        let black = cfg.map_or(&unknown, |b| &b.black);
        let mut tags = vec![
            ("Event".to_string(), config.event.clone()),
            ("Site".to_string(), config.site.clone()),
            ("Date".to_string(), config.date.clone()),
            ("Round".to_string(), format!("{}.{board}", config.round)),
            ("White".to_string(), white.name.clone()),
            ("Black".to_string(), black.name.clone()),
            ("Board".to_string(), board.to_string()),
        ];
        if let Some(tc) = &config.time_control {
            tags.push(("TimeControl".to_string(), tc.clone()));
        }
        for (colour, p) in [("White", white), ("Black", black)] {
            if let Some(title) = &p.title {
                tags.push((format!("{colour}Title"), title.clone()));
            }
            if let Some(elo) = p.rating {
                tags.push((format!("{colour}Elo"), elo.to_string()));
            }
            if let Some(id) = p.fide_id {
                tags.push((format!("{colour}FideId"), id.to_string()));
            }
            if let Some(fed) = &p.federation {
                tags.push((format!("{colour}Federation"), fed.clone()));
            }
        }
        GameTags { tags }
    }

    /// The tags, in the order they are written.
    pub fn tags(&self) -> &[(String, String)] {
        &self.tags
    }
}

/// A result and why.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Ending {
    result: String,
    reason: String,
    by_arbiter: bool,
}

/// One board's game in the making.
pub struct BoardPipeline {
    tags: GameTags,
    control: TimeControl,
    decoder: Decoder,
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
    earlier_games: Vec<GameRecord>,
    messages: Vec<Message>,
    observations: Vec<Observation>,
    started: bool,
    /// Recovery of changes missed while the link was down, from the board's move log.
    board_log: BoardLog,
}

/// What the pipeline keeps to recover missed changes from the board's EEPROM log.
#[derive(Debug, Clone)]
struct BoardLog {
    /// Logs are used (the recorder's links ask for them in every handshake).
    enabled: bool,
    /// The field changes seen, in the board's own form.
    trail: FieldTrail,
    /// When the board was last heard before the current message.
    last_heard_ms: Option<Millis>,
    /// The gap the last handshake closed: last heard before it, and the handshake.
    gap: Option<(Millis, Millis)>,
    /// The last clock reading: when, and the remaining times of the left and right sides.
    reading: Option<(Millis, ClockReading)>,
    /// What each log told (recovered records or the refusal), for the journal.
    reports: Vec<LogReport>,
    /// Recovered observations are being passed on: their times are not observed.
    untimed: bool,
}

/// What one EEPROM log told the pipeline, for the journal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogReport {
    /// When the log arrived.
    pub t_ms: Millis,
    /// The records recovered, each with the time given to it.
    pub recovered: Vec<(Millis, RecoveredRecord)>,
    /// Why the log was not used, if it was not.
    pub refused: Option<String>,
}

impl BoardPipeline {
    /// A board waiting for its start position.
    pub fn new(tags: GameTags, control: TimeControl) -> BoardPipeline {
        BoardPipeline {
            tags,
            clock: ClockState::new(control.clone()),
            control,
            decoder: Decoder::new(),
            observer: DgtObserver::new(),
            machine: Machine::new(MachineConfig::default()),
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
            earlier_games: Vec::new(),
            messages: Vec::new(),
            observations: Vec::new(),
            started: false,
            board_log: BoardLog {
                enabled: false,
                trail: FieldTrail::new([0; 64]),
                last_heard_ms: None,
                gap: None,
                reading: None,
                reports: Vec::new(),
                untimed: false,
            },
        }
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
        self.messages.clear();
        self.decoder.push(bytes, &mut self.messages);
        let messages = std::mem::take(&mut self.messages);
        for m in &messages {
            if let Message::EepromMoves(records) = m
                && self.board_log.enabled
            {
                self.recover_from_log(t_ms, records, out);
                continue;
            }
            self.observations.clear();
            self.observer.on_message(t_ms, m, &mut self.observations);
            self.follow_trail(t_ms, m);
            let observations = std::mem::take(&mut self.observations);
            self.take_observations(&observations, out);
            self.observations = observations;
        }
        self.messages = messages;
        self.check_flag(t_ms, out);
    }

    fn take_observations(&mut self, observations: &[Observation], out: &mut Vec<Event>) {
        for obs in observations {
            self.observe(obs, out);
            // After the machine: a reading that completes a move settles that move's time.
            if let ObservationKind::ClockTimes(reading) = &obs.kind {
                self.clock.observe_reading(obs.t_ms, reading);
                self.board_log.reading = Some((obs.t_ms, *reading));
            }
            if matches!(obs.kind, ObservationKind::ClockPressed { .. }) {
                self.board_log.trail.pressed();
            }
        }
    }

    /// Passes recovered observations on. Their times are estimates, not observed: the
    /// judgments that rest on timing (7.4 "quicker than a reply", 7.5.4 two hands) are not
    /// made from them (Laws 7.4, 7.5.4; a gap is never the players' fault).
    fn take_recovered(&mut self, observations: &[Observation], out: &mut Vec<Event>) {
        self.board_log.untimed = true;
        self.take_observations(observations, out);
        self.board_log.untimed = false;
    }

    /// Keeps the trail of field changes seen and the gap a handshake closes.
    fn follow_trail(&mut self, t_ms: Millis, m: &Message) {
        let log = &mut self.board_log;
        match m {
            &Message::FieldUpdate { field, piece } => log.trail.push(field, piece),
            Message::BoardDump(fields) => log.trail.restart_if_different(*fields),
            Message::Version { .. } => {
                let from = log.last_heard_ms.unwrap_or(t_ms);
                // A second handshake right after the first (prober, then link) keeps the gap.
                if log.gap.is_none_or(|(_, to)| to < from) {
                    log.gap = Some((from, t_ms));
                }
            }
            _ => {}
        }
        log.last_heard_ms = Some(t_ms);
    }

    /// The board's move log arrived: the changes missed since the trail's last one are
    /// recovered and passed on in their true order, marked as recovered, before anything
    /// received after the log.
    fn recover_from_log(&mut self, t_ms: Millis, records: &[EepromRecord], out: &mut Vec<Event>) {
        let log = EepromLog::from_records(records);
        let (from, to) = self
            .board_log
            .gap
            .take()
            .unwrap_or((self.board_log.last_heard_ms.unwrap_or(t_ms), t_ms));
        let mut report = LogReport {
            t_ms,
            recovered: Vec::new(),
            refused: None,
        };
        match recover(&self.board_log.trail, &log, None) {
            Err(refusal) => {
                tracing::warn!("board's move log not used: {refusal}");
                report.refused = Some(refusal.to_string());
            }
            Ok(recovery) => {
                let reading = self.board_log.reading.and_then(|(t, r)| {
                    let white_left = self.observer.white_side()? == ClockSide::Left;
                    let sides = if white_left {
                        [r.white_ms, r.black_ms]
                    } else {
                        [r.black_ms, r.white_ms]
                    };
                    Some((t, sides))
                });
                let times = schedule(&recovery.records, from, to.max(from + 1), reading);
                for (&t, record) in times.iter().zip(&recovery.records) {
                    report.recovered.push((t, *record));
                    self.observations.clear();
                    match *record {
                        RecoveredRecord::Field { field, piece, .. } => {
                            let m = Message::FieldUpdate { field, piece };
                            self.observer.on_message(t, &m, &mut self.observations);
                            self.board_log.trail.push(field, piece);
                        }
                        RecoveredRecord::Press { halted, .. } => {
                            let by = self.observer.recovered_press(halted);
                            self.observations.push(Observation {
                                t_ms: t,
                                kind: ObservationKind::ClockPressed { by },
                            });
                        }
                    }
                    let observations = std::mem::take(&mut self.observations);
                    self.take_recovered(&observations, out);
                    self.observations = observations;
                }
            }
        }
        self.board_log.reports.push(report);
    }

    /// Passes one observation to the machine.
    fn observe(&mut self, obs: &Observation, out: &mut Vec<Event>) {
        self.run_machine(out, |machine, events| machine.observe(obs, events));
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
        for mut event in events.drain(..) {
            let timing =
                matches!(&event, Event::Alert(a) if a.article == "7.4" || a.article == "7.5.4");
            if self.board_log.untimed && timing {
                continue;
            }
            if self.resuming && matches!(event, Event::GameStart { .. }) {
                self.resuming = false;
                continue;
            }
            shift_plies(&mut event, self.offset);
            self.take(&event);
            out.push(event);
        }
        self.scratch = events;
    }

    /// Lets time pass at `t_ms` (call it now and then): a press the board did not follow is
    /// judged, and a software clock's flag falls, without any byte arriving.
    pub fn tick(&mut self, t_ms: Millis, out: &mut Vec<Event>) {
        self.run_machine(out, |machine, events| machine.advance(t_ms, events));
        self.check_flag(t_ms, out);
    }

    /// Bytes the decoder could not read so far (line noise).
    pub fn skipped_bytes(&self) -> u64 {
        self.decoder.skipped_bytes()
    }

    fn check_flag(&mut self, t_ms: Millis, out: &mut Vec<Event>) {
        if !self.started || self.ending.is_some() || self.moves.is_empty() {
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

    /// Updates the record from one event.
    fn take(&mut self, event: &Event) {
        self.clock.apply(event);
        match event {
            Event::GameStart { fen, chess960, .. } => {
                if !self.moves.is_empty() || self.ending.is_some() {
                    let finished = self.record();
                    self.earlier_games.push(finished);
                }
                self.moves.clear();
                self.notes.clear();
                self.ending = None;
                self.accepted_penalties = [0, 0];
                self.penalties.clear();
                self.started = true;
                self.offset = 0;
                self.game = Game::from_fen(fen, *chess960).unwrap_or_else(|_| Game::standard());
                self.chess960 = *chess960;
                self.start_fen = (fen != crate::record::STANDARD_START_FEN).then(|| fen.clone());
            }
            Event::Move {
                ply,
                uci,
                san,
                t_ms,
                ..
            } => {
                RecordedMove::place(&mut self.moves, *ply, san, uci, *t_ms);
                let kept = ply.saturating_sub(1) as usize;
                self.game.truncate(kept.min(self.game.plies()));
                let _ = self.game.play_uci(uci);
            }
            Event::Revision { ply, .. } => {
                let kept = ply.saturating_sub(1) as usize;
                self.moves.truncate(kept);
                self.game.truncate(kept.min(self.game.plies()));
            }
            Event::Alert(alert) if alert.severity != Severity::Info => {
                if alert.article.starts_with("7.5")
                    && let Some(side) = alert.side
                {
                    self.penalties.push((alert.ply, side.into()));
                }
                self.notes
                    .push((alert.ply, format!("{}: {}", alert.article, alert.message)));
            }
            Event::Result { result, reason, .. }
                if self.ending.as_ref().is_none_or(|e| !e.by_arbiter) =>
            {
                self.ending = Some(Ending {
                    result: result.clone(),
                    reason: reason.clone(),
                    by_arbiter: false,
                });
            }
            _ => {}
        }
    }

    /// Applies an arbiter action at `t_ms`. Events it causes (results, revised moves) are
    /// appended to `out`. Returns a sentence for the arbiter, or why it was refused (nothing
    /// changed then).
    pub fn on_arbiter(
        &mut self,
        t_ms: Millis,
        request: &ArbiterRequest,
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        let who = &request.who;
        let ply_now = self.moves.len() as u32;
        match &request.action {
            ArbiterAction::SetResult { result, reason } => {
                if !["1-0", "0-1", "1/2-1/2", "*"].contains(&result.as_str()) {
                    return Err(format!(
                        "result {result:?} is not one of 1-0, 0-1, 1/2-1/2, *"
                    ));
                }
                self.note(
                    ply_now,
                    format!("Arbiter {who}: result {result} ({reason})"),
                );
                if result == "*" {
                    self.ending = None;
                } else {
                    self.ending = Some(Ending {
                        result: result.clone(),
                        reason: reason.clone(),
                        by_arbiter: true,
                    });
                    out.push(Event::Result {
                        result: result.clone(),
                        reason: reason.clone(),
                        t_ms,
                    });
                }
                Ok(format!("board {}: result {result}", request.board))
            }
            ArbiterAction::DecidePenalty { ply, accept } => {
                let side = self.penalty_side(*ply).ok_or_else(|| {
                    format!(
                        "no penalty was proposed at ply {ply} on board {}",
                        request.board
                    )
                })?;
                let (offender, opponent) = (side_name(side), side_name(!side));
                if !accept {
                    self.note(
                        *ply,
                        format!("Arbiter {who}: penalty for {offender} rejected"),
                    );
                    return Ok(format!("penalty for {offender} at ply {ply} rejected"));
                }
                let index = usize::from(side == Color::Black);
                self.accepted_penalties[index] += 1;
                if self.accepted_penalties[index] >= 2 {
                    let result = if side == Color::White { "0-1" } else { "1-0" };
                    let reason = format!("{offender} completed a second illegal move (7.5.5)");
                    self.note(*ply, format!("Arbiter {who}: {reason}: game lost"));
                    self.ending = Some(Ending {
                        result: result.to_string(),
                        reason: reason.clone(),
                        by_arbiter: true,
                    });
                    out.push(Event::Result {
                        result: result.to_string(),
                        reason,
                        t_ms,
                    });
                    Ok(format!(
                        "{offender} loses: second illegal move, result {result}"
                    ))
                } else {
                    let bonus = self.penalty_bonus_ms();
                    self.clock.adjust(!side, bonus as i64);
                    self.note(
                        *ply,
                        format!(
                            "Arbiter {who}: illegal move by {offender} (7.5.5): {} added to {opponent}",
                            duration_text(bonus),
                        ),
                    );
                    Ok(format!(
                        "{} added to {opponent}'s clock",
                        duration_text(bonus)
                    ))
                }
            }
            ArbiterAction::AdjustTime { side, delta_ms } => {
                let side = Color::from(*side);
                self.clock.adjust(side, *delta_ms);
                let sign = if *delta_ms < 0 { "-" } else { "+" };
                let text = format!(
                    "{sign}{} for {}",
                    duration_text(delta_ms.unsigned_abs()),
                    side_name(side)
                );
                self.note(ply_now, format!("Arbiter {who}: time adjusted {text}"));
                Ok(text)
            }
            ArbiterAction::ReplaceMoves { from_ply, moves } => {
                self.correct(t_ms, who, *from_ply, moves, out)
            }
            ArbiterAction::TakeBack { to_ply } => {
                self.correct(t_ms, who, to_ply.saturating_add(1), &[], out)
            }
            ArbiterAction::CheckClaim {
                claim,
                intended_move,
            } => {
                let game = &self.game;
                let intended = match intended_move {
                    Some(text) => Some(parse_move(game, text)?),
                    None => None,
                };
                let verdict = match claim {
                    DrawClaim::Threefold => game.claim_threefold(intended),
                    DrawClaim::FiftyMoves => game.claim_fifty(intended),
                };
                let name = match claim {
                    DrawClaim::Threefold => "threefold repetition (9.2)",
                    DrawClaim::FiftyMoves => "fifty-move rule (9.3)",
                };
                let mover = side_name(game.position().turn());
                let verdict_word = if verdict.valid {
                    "correct"
                } else {
                    "incorrect"
                };
                self.note(
                    ply_now,
                    format!(
                        "Arbiter {who}: {mover}'s claim of {name} is {verdict_word}: {}",
                        verdict.explanation
                    ),
                );
                if verdict.valid {
                    let reason = format!("draw claimed by {mover}: {name}");
                    self.ending = Some(Ending {
                        result: "1/2-1/2".to_string(),
                        reason: reason.clone(),
                        by_arbiter: true,
                    });
                    out.push(Event::Result {
                        result: "1/2-1/2".to_string(),
                        reason,
                        t_ms,
                    });
                }
                Ok(format!("claim {verdict_word}: {}", verdict.explanation))
            }
            ArbiterAction::NewGame => {
                if !self.moves.is_empty() || self.ending.is_some() {
                    let finished = self.record();
                    self.earlier_games.push(finished);
                }
                self.machine = Machine::new(MachineConfig::default());
                self.game = Game::standard();
                self.offset = 0;
                self.resuming = false;
                self.clock = ClockState::new(self.control.clone());
                self.moves.clear();
                self.notes.clear();
                self.ending = None;
                self.accepted_penalties = [0, 0];
                self.penalties.clear();
                self.started = false;
                self.start_fen = None;
                self.chess960 = false;
                Ok(format!(
                    "board {}: new game; set up the start position",
                    request.board
                ))
            }
            ArbiterAction::Annotate { ply, text } => {
                if *ply > ply_now {
                    return Err(format!(
                        "ply {ply} has not been played (the game has {ply_now})"
                    ));
                }
                self.note(*ply, format!("{who}: {text}"));
                Ok(format!("note added after ply {ply}"))
            }
        }
    }

    fn note(&mut self, ply: u32, text: String) {
        self.notes.push((ply, text));
    }

    /// The side of the penalty alert (7.5.x) raised at `ply`.
    fn penalty_side(&self, ply: u32) -> Option<Color> {
        self.penalties
            .iter()
            .find(|(p, _)| *p == ply)
            .map(|(_, side)| *side)
    }

    /// 7.5.5: two minutes to the opponent in standard play, one in rapid and blitz (A.4.2,
    /// B.3 of the Laws: "one minute").
    fn penalty_bonus_ms(&self) -> u64 {
        if self.control.is_blitz() || self.control.is_rapid() {
            60_000
        } else {
            120_000
        }
    }

    /// Replaces the moves from `from_ply` on by `moves` (SAN or UCI).
    fn correct(
        &mut self,
        t_ms: Millis,
        who: &str,
        from_ply: u32,
        moves: &[String],
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        let kept = from_ply.saturating_sub(1) as usize;
        let current = &self.game;
        if from_ply == 0 || kept > current.plies() {
            return Err(format!(
                "ply {from_ply} is out of range: the game has {} plies",
                current.plies()
            ));
        }
        let mut game = current.clone();
        game.truncate(kept);
        for (i, text) in moves.iter().enumerate() {
            let mv =
                parse_move(&game, text).map_err(|e| format!("move {} ({text}): {e}", i + 1))?;
            game.play(mv).map_err(|e| e.to_string())?;
        }
        let withdrawn: Vec<String> = current.moves()[kept..]
            .iter()
            .map(|m| m.uci.clone())
            .collect();
        let was: Vec<String> = current.moves()[kept..]
            .iter()
            .map(|m| m.san.clone())
            .collect();
        let physical = self.machine.physical_board().clone();
        self.machine = Machine::new(MachineConfig {
            start_fen: Some(game.fen()),
            chess960: self.chess960,
            ..MachineConfig::default()
        });
        self.offset = game.plies() as u32;
        self.resuming = true;
        let revision = Event::Revision {
            ply: from_ply,
            withdrawn,
            t_ms,
        };
        self.take(&revision);
        out.push(revision);
        for (i, played) in game.moves()[kept..].iter().enumerate() {
            let ply = (kept + i + 1) as u32;
            let side = if game.positions()[kept + i].turn() == Color::White {
                crate::board::ColorName::White
            } else {
                crate::board::ColorName::Black
            };
            let event = Event::Move {
                ply,
                uci: played.uci.clone(),
                san: played.san.clone(),
                t_ms,
                side,
                fen: shakmaty::fen::Fen::from_position(
                    &game.positions()[kept + i + 1],
                    shakmaty::EnPassantMode::Legal,
                )
                .to_string(),
            };
            self.take(&event);
            out.push(event);
        }
        // The new machine starts from the corrected position as soon as the board shows it;
        // it may already.
        let snapshot = Observation {
            t_ms,
            kind: ObservationKind::Snapshot(Snapshot {
                board: physical,
                identifies_pieces: true,
            }),
        };
        self.observe(&snapshot, out);
        let now: Vec<&str> = game.moves()[kept..]
            .iter()
            .map(|m| m.san.as_str())
            .collect();
        let was = if was.is_empty() {
            String::new()
        } else {
            format!(" (were {})", was.join(" "))
        };
        let text = if now.is_empty() {
            format!("Arbiter {who}: moves from ply {from_ply} taken back{was}")
        } else {
            format!(
                "Arbiter {who}: moves from ply {from_ply} corrected to {}{was}",
                now.join(" ")
            )
        };
        self.note(kept as u32 + now.len() as u32, text.clone());
        Ok(text)
    }

    /// The game as PGN record: tags, moves with `[%clk]`/`[%emt]`, notes, result.
    pub fn record(&self) -> GameRecord {
        let mut tags = self.tags.tags.clone();
        let result = self
            .ending
            .as_ref()
            .map_or("*".to_string(), |e| e.result.clone());
        if let Some(e) = &self.ending {
            tags.push(("Termination".to_string(), termination(e).to_string()));
        }
        let mut moves = self.moves.clone();
        for (i, m) in moves.iter_mut().enumerate() {
            if let Some(time) = self.clock.move_time(i as u32 + 1) {
                m.clock_ms = time.corrected_ms.or(time.clock_ms);
                m.elapsed_ms = time.elapsed_ms;
            }
        }
        let mut initial_comments = Vec::new();
        for (ply, text) in &self.notes {
            let at = (*ply as usize).min(moves.len());
            match at.checked_sub(1) {
                Some(i) => moves[i].comments.push(text.clone()),
                None => initial_comments.push(text.clone()),
            }
        }
        if let Some(e) = &self.ending {
            let text = format!("{} {}", e.result, e.reason);
            match moves.last_mut() {
                Some(m) => m.comments.push(text),
                None => initial_comments.push(text),
            }
        }
        GameRecord {
            tags,
            start_fen: self.start_fen.clone(),
            chess960: self.chess960,
            initial_comments,
            moves,
            result,
        }
    }

    /// The game as PGN text.
    pub fn pgn(&self) -> String {
        crate::record::pgn::write_game(&self.record())
    }

    /// Games finished earlier on this board (before a new game started on it).
    pub fn earlier_games(&self) -> &[GameRecord] {
        &self.earlier_games
    }

    /// Plies recorded.
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// The PGN result token.
    pub fn result(&self) -> &str {
        self.ending.as_ref().map_or("*", |e| e.result.as_str())
    }

    /// True while the game runs: started, no result.
    pub fn live(&self) -> bool {
        self.started && self.ending.is_none()
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
        Event::Alert(alert) => alert.ply += offset,
        Event::GameStart { .. } | Event::BoardState { .. } | Event::Result { .. } => {}
    }
}

/// The PGN Termination value for an ending.
fn termination(e: &Ending) -> &'static str {
    let reason = e.reason.to_ascii_lowercase();
    if reason.contains("on time") || reason.contains("flag") {
        "time forfeit"
    } else if reason.contains("forfeit") || reason.contains("illegal") {
        "rules infraction"
    } else if e.by_arbiter && !reason.contains("claim") {
        "adjudication"
    } else {
        "normal"
    }
}

/// A move given by the arbiter in SAN or UCI.
fn parse_move(game: &Game, text: &str) -> Result<shakmaty::Move, String> {
    if let Ok(mv) = game.parse_san(text) {
        return Ok(mv);
    }
    let uci: shakmaty::uci::UciMove = text
        .parse()
        .map_err(|_| format!("{text:?} is neither SAN nor UCI"))?;
    uci.to_move(game.position())
        .map_err(|_| format!("{text} is illegal in {}", game.fen()))
}

/// "White" or "Black".
fn side_name(side: Color) -> &'static str {
    match side {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// `m:ss` or `h:mm:ss`.
fn duration_text(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::dgt::fields_from_board;
    use crate::board::orientation::Orientation;
    use crate::record::pgn::{read_games, write_game};

    fn pipeline() -> BoardPipeline {
        let config = EventConfig {
            event: "Test".into(),
            time_control: Some("300+2".into()),
            ..EventConfig::default()
        };
        let control = TimeControl::parse("300+2").unwrap();
        let mut p = BoardPipeline::new(GameTags::new(&config, 1), control);
        let dump = Message::BoardDump(fields_from_board(
            &shakmaty::Board::new(),
            Orientation::Normal,
        ))
        .encode();
        let mut events = Vec::new();
        p.on_bytes(10, &dump, &mut events);
        assert!(
            events.iter().any(|e| matches!(e, Event::GameStart { .. })),
            "the start position starts a game: {events:?}"
        );
        p
    }

    /// The field updates of lifting and placing each piece of `moves` (plain moves only),
    /// board in normal orientation.
    fn lift_place_messages(moves: &[&str]) -> Vec<Vec<u8>> {
        let mut board = shakmaty::Board::new();
        let field = |sq: shakmaty::Square| (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
        let mut out = Vec::new();
        for uci in moves {
            let from: shakmaty::Square = uci[..2].parse().unwrap();
            let to: shakmaty::Square = uci[2..4].parse().unwrap();
            let piece = board.remove_piece_at(from).unwrap();
            board.set_piece_at(to, piece);
            out.push(
                Message::FieldUpdate {
                    field: field(from),
                    piece: 0,
                }
                .encode(),
            );
            out.push(
                Message::FieldUpdate {
                    field: field(to),
                    piece: crate::board::dgt::code_from_piece(piece),
                }
                .encode(),
            );
        }
        out
    }

    fn recorded_uci(p: &BoardPipeline) -> Vec<String> {
        p.record()
            .to_game()
            .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
            .unwrap_or_default()
    }

    /// What queued in the operating system while the recorder was down arrives in one read,
    /// with one receive time: the pipeline keeps the messages' order, so the moves come out
    /// the same as when each message arrived on its own (the act machine must read equal
    /// times as "interval unknown", not "simultaneous").
    #[test]
    fn a_burst_read_at_once_keeps_the_order_of_its_messages() {
        let played = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6"];
        let messages = lift_place_messages(&played);
        let mut paced = pipeline();
        let mut events = Vec::new();
        for (i, m) in messages.iter().enumerate() {
            paced.on_bytes(1000 + 900 * i as u64, m, &mut events);
        }
        assert_eq!(recorded_uci(&paced), played);
        let mut burst = pipeline();
        burst.on_bytes(1000, &messages.concat(), &mut events);
        assert_eq!(recorded_uci(&burst), played);
    }

    /// A clock message with the clock running on the side whose lever is low (`right`:
    /// the right-hand side runs).
    fn clock_running(right: bool) -> Vec<u8> {
        use crate::wire::dgt::{ClockMessage, ClockStatus, ClockTimes, SideTime};
        let side = SideTime {
            minutes: 5,
            ..SideTime::default()
        };
        let times = ClockTimes {
            left: side,
            right: side,
            status: ClockStatus {
                running: true,
                right_lever_high: right,
                ..ClockStatus::default()
            },
        };
        Message::Clock(ClockMessage::Times(times)).encode()
    }

    /// A press the board never follows (7.5.3) is judged by the tick once its grace period
    /// is over, though no byte arrives after it.
    #[test]
    fn a_press_without_a_move_is_judged_on_the_tick() {
        let mut p = pipeline();
        let mut events = Vec::new();
        p.on_bytes(100, &clock_running(false), &mut events);
        for (i, m) in lift_place_messages(&["e2e4"]).iter().enumerate() {
            p.on_bytes(1000 + 100 * i as u64, m, &mut events);
        }
        p.on_bytes(1500, &clock_running(true), &mut events);
        p.on_bytes(3000, &clock_running(false), &mut events);
        let judged = |events: &[Event]| {
            events
                .iter()
                .any(|e| matches!(e, Event::Alert(a) if a.article == "7.5.3"))
        };
        assert!(!judged(&events), "not before the grace period: {events:?}");
        p.tick(3100, &mut events);
        assert!(
            !judged(&events),
            "still within the grace period: {events:?}"
        );
        p.tick(3500, &mut events);
        assert!(
            judged(&events),
            "no 7.5.3 after the grace period: {events:?}"
        );
        assert_eq!(recorded_uci(&p), ["e2e4"]);
    }

    fn arbiter(p: &mut BoardPipeline, action: ArbiterAction) -> Result<String, String> {
        let request = ArbiterRequest {
            who: "Anna".into(),
            board: 1,
            action,
        };
        p.on_arbiter(1000, &request, &mut Vec::new())
    }

    fn moves(list: &[&str]) -> Vec<String> {
        list.iter().map(|m| m.to_string()).collect()
    }

    #[test]
    fn corrections_claims_and_results_reach_the_pgn() {
        let mut p = pipeline();
        let shuffle = moves(&[
            "e4", "e5", "Nf3", "Nc6", "Ng1", "Nb8", "g1f3", "Nc6", "Ng1", "Nb8",
        ]);
        arbiter(
            &mut p,
            ArbiterAction::ReplaceMoves {
                from_ply: 1,
                moves: shuffle,
            },
        )
        .unwrap();
        assert_eq!(p.plies(), 10);
        let verdict = arbiter(
            &mut p,
            ArbiterAction::CheckClaim {
                claim: DrawClaim::Threefold,
                intended_move: None,
            },
        )
        .unwrap();
        assert!(verdict.starts_with("claim correct"), "{verdict}");
        assert_eq!(p.result(), "1/2-1/2");
        arbiter(
            &mut p,
            ArbiterAction::SetResult {
                result: "*".into(),
                reason: "claim withdrawn".into(),
            },
        )
        .unwrap();
        let refused = arbiter(
            &mut p,
            ArbiterAction::ReplaceMoves {
                from_ply: 3,
                moves: moves(&["Ke2", "Ke3"]),
            },
        );
        assert!(refused.unwrap_err().contains("move 2 (Ke3)"));
        assert_eq!(p.plies(), 10, "a refused correction changes nothing");
        arbiter(&mut p, ArbiterAction::TakeBack { to_ply: 2 }).unwrap();
        assert_eq!(p.plies(), 2);
        arbiter(
            &mut p,
            ArbiterAction::Annotate {
                ply: 1,
                text: "scoresheet checked".into(),
            },
        )
        .unwrap();
        let fifty = arbiter(
            &mut p,
            ArbiterAction::CheckClaim {
                claim: DrawClaim::FiftyMoves,
                intended_move: Some("Nf3".into()),
            },
        )
        .unwrap();
        assert!(fifty.starts_with("claim incorrect"), "{fifty}");
        arbiter(
            &mut p,
            ArbiterAction::SetResult {
                result: "1-0".into(),
                reason: "forfeit: Black absent".into(),
            },
        )
        .unwrap();
        let record = p.record();
        assert_eq!(record.result, "1-0");
        let tag = |name: &str| {
            record
                .tags
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(tag("Termination").as_deref(), Some("rules infraction"));
        assert_eq!(tag("Round").as_deref(), Some("1.1"));
        assert_eq!(tag("TimeControl").as_deref(), Some("300+2"));
        let comments: Vec<&String> = record.moves.iter().flat_map(|m| &m.comments).collect();
        let has = |text: &str| comments.iter().any(|c| c.contains(text));
        assert!(
            has("Arbiter Anna: moves from ply 3 taken back"),
            "{comments:?}"
        );
        assert!(has("Anna: scoresheet checked"), "{comments:?}");
        assert!(
            has("White's claim of threefold repetition (9.2) is correct"),
            "{comments:?}"
        );
        let text = write_game(&record);
        let back = read_games(&text).unwrap();
        assert_eq!(back[0].moves.len(), 2);
        assert_eq!(back[0].result, "1-0");
    }

    #[test]
    fn bad_requests_are_refused_with_reasons() {
        let mut p = pipeline();
        let bad_result = arbiter(
            &mut p,
            ArbiterAction::SetResult {
                result: "2-0".into(),
                reason: "x".into(),
            },
        );
        assert!(bad_result.unwrap_err().contains("not one of"));
        let illegal = arbiter(
            &mut p,
            ArbiterAction::ReplaceMoves {
                from_ply: 1,
                moves: moves(&["e4", "e5", "Qh5", "Nc6", "Qxe8"]),
            },
        );
        assert!(illegal.unwrap_err().contains("move 5"));
        assert_eq!(p.plies(), 0);
        assert!(arbiter(&mut p, ArbiterAction::TakeBack { to_ply: 4 }).is_err());
        assert!(
            arbiter(
                &mut p,
                ArbiterAction::DecidePenalty {
                    ply: 3,
                    accept: true
                }
            )
            .unwrap_err()
            .contains("no penalty")
        );
        assert!(
            arbiter(
                &mut p,
                ArbiterAction::Annotate {
                    ply: 9,
                    text: "x".into()
                }
            )
            .is_err()
        );
    }

    #[test]
    fn time_adjustments_and_new_games() {
        let mut p = pipeline();
        let text = arbiter(
            &mut p,
            ArbiterAction::AdjustTime {
                side: crate::board::ColorName::Black,
                delta_ms: -30_000,
            },
        )
        .unwrap();
        assert_eq!(text, "-0:30 for Black");
        arbiter(
            &mut p,
            ArbiterAction::ReplaceMoves {
                from_ply: 1,
                moves: moves(&["d4"]),
            },
        )
        .unwrap();
        arbiter(&mut p, ArbiterAction::NewGame).unwrap();
        assert_eq!(p.plies(), 0);
        assert_eq!(p.earlier_games().len(), 1);
        assert_eq!(p.earlier_games()[0].moves.len(), 1);
        assert!(!p.live());
    }
}
