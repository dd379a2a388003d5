//! What a restarted recorder replays: each board's journalled bytes and arbiter actions, in
//! journal order; and `touchmove replay`, which reads a board's journal or capture again
//! through the recorder's own pipeline, so that it gives what `touchmove record` gave.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::pipeline::{BoardPipeline, GameTags};
use crate::act::Event;
use crate::board::Millis;
use crate::board::kind::BoardKind;
use crate::clock::TimeControl;
use crate::event::EventConfig;
use crate::record::GameRecord;
use crate::record::arbiter::ArbiterRequest;
use crate::store::{BoardKey, Entry, Journal, Record};
use crate::wire::capture::CaptureChunk;

/// Journal metadata key: the serial number of the board an "auto" entry took.
pub(crate) const BOUND_SERIAL: &str = "board-serial";

/// Journal metadata key: the link to the board lost its connection, or the recorder started
/// again on a journal (its value says which). What the board sends next is on a new
/// connection: a replay must read it as the live run did.
pub const LINK_LOST: &str = "link-lost";

/// Journal metadata key (journal-wide): the transmission delay of a round from the entry's
/// time on ([`RoundDelay`]). Journalled when a round opens with a delay, or when a restart
/// lengthens it; a round without one has none.
pub const BROADCAST_DELAY: &str = "broadcast-delay";

/// The value of a [`BROADCAST_DELAY`] entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RoundDelay {
    /// The round.
    pub round: u32,
    /// Its delay from the entry's time on, in milliseconds.
    pub delay_ms: u64,
}

impl RoundDelay {
    /// The delay an entry gives, if it is a [`BROADCAST_DELAY`] entry.
    pub fn of(record: &Record) -> Option<RoundDelay> {
        match record {
            Record::Metadata { key, value } if key == BROADCAST_DELAY => {
                serde_json::from_value(value.clone()).ok()
            }
            _ => None,
        }
    }

    /// The entry's record.
    pub fn record(&self) -> Record {
        Record::Metadata {
            key: BROADCAST_DELAY.to_string(),
            value: serde_json::to_value(self).unwrap_or_default(),
        }
    }

    /// The delay.
    pub fn delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms)
    }
}

/// What the journal says of each round's transmission delay: the times and delays of its
/// [`BROADCAST_DELAY`] entries, and the time of the round's last entry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct RoundBroadcast {
    /// When each delay was given, and the delay.
    pub delays: Vec<(Millis, Duration)>,
    /// The time of the round's last entry.
    pub last_ms: Millis,
}

/// The broadcast of every round of the journal that had a delay.
pub(crate) fn broadcasts(entries: &[Entry]) -> BTreeMap<u32, RoundBroadcast> {
    let mut rounds: BTreeMap<u32, RoundBroadcast> = BTreeMap::new();
    for entry in entries {
        if let Some(given) = RoundDelay::of(&entry.record) {
            let round = rounds.entry(given.round).or_default();
            round.delays.push((entry.t_ms, given.delay()));
            round.last_ms = round.last_ms.max(entry.t_ms);
        } else if let Some(BoardKey::Pairing { round, .. }) = &entry.board
            && let Some(broadcast) = rounds.get_mut(round)
        {
            broadcast.last_ms = broadcast.last_ms.max(entry.t_ms);
        }
    }
    rounds
}

/// One thing that happened to a board.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Bytes received.
    Bytes(Millis, Vec<u8>),
    /// An arbiter action applied.
    Arbiter(Millis, ArbiterRequest),
    /// The link lost its connection (or the recorder restarted), at that time. Live, time
    /// passed up to it first: what fell due before it was decided on a board still linked.
    LinkLost(Millis),
}

/// A board's journalled history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct History {
    /// Bytes and arbiter actions in journal order.
    pub steps: Vec<Step>,
    /// The times of the events journalled for the board (a replay regenerates them, in
    /// order; they are not journalled again).
    pub event_times: Vec<Millis>,
    /// The serial number of the board an "auto" entry took.
    pub serial: Option<String>,
    /// The bytes the board sent in the round before, in order: a board that learns its
    /// pieces from the start position (Certabo) knows them from there when the recorder
    /// starts on a round whose game began before it could see one.
    pub round_before: Vec<Vec<u8>>,
}

/// What replaying a step gave, in the order it happened live.
#[derive(Debug)]
pub enum Replayed<'a> {
    /// An event of the pipeline.
    Event(Event),
    /// An arbiter action the pipeline applied.
    Applied(&'a ArbiterRequest),
}

/// Applies one step to `pipeline` as the live recorder did, handing `each` what it gave, in
/// order. Live, time passes up to an arbiter action or a link lost before it is applied:
/// what fell due (a press without a move, a result signal that stood) comes before it.
pub fn replay_step<'a>(
    pipeline: &mut BoardPipeline,
    step: &'a Step,
    each: &mut impl FnMut(Replayed<'a>),
) {
    let mut events = Vec::new();
    match step {
        Step::Bytes(t_ms, bytes) => pipeline.on_bytes(*t_ms, bytes, &mut events),
        Step::Arbiter(t_ms, request) => {
            pipeline.tick(*t_ms, &mut events);
            events.drain(..).for_each(|e| each(Replayed::Event(e)));
            if pipeline.on_arbiter(*t_ms, request, &mut events).is_ok() {
                each(Replayed::Applied(request));
            }
        }
        Step::LinkLost(t_ms) => {
            pipeline.tick(*t_ms, &mut events);
            pipeline.link_lost();
        }
    }
    events.into_iter().for_each(|e| each(Replayed::Event(e)));
}

/// The journal key of board `board` of `round`.
pub(crate) fn board_key(round: u32, board: u32) -> BoardKey {
    BoardKey::Pairing { round, board }
}

/// Splits the journal's entries by board of `round` (with the bytes of the round before).
pub(crate) fn split(entries: &[Entry], round: u32) -> BTreeMap<u32, History> {
    let mut boards: BTreeMap<u32, History> = BTreeMap::new();
    for entry in entries {
        // Arbiter actions carry their round in the key too (journals that did not are
        // migrated when opened): a decision in one round never touches another's game.
        let board = match &entry.board {
            Some(BoardKey::Pairing { round: r, board }) if *r == round => *board,
            Some(BoardKey::Pairing { round: r, board }) if *r + 1 == round => {
                if let Record::Bytes(bytes) = &entry.record {
                    let history = boards.entry(*board).or_default();
                    history.round_before.push(bytes.clone());
                }
                continue;
            }
            _ => continue,
        };
        let history = boards.entry(board).or_default();
        match &entry.record {
            Record::Bytes(bytes) => history.steps.push(Step::Bytes(entry.t_ms, bytes.clone())),
            Record::Arbiter(request) => history
                .steps
                .push(Step::Arbiter(entry.t_ms, request.clone())),
            Record::Event(_) => history.event_times.push(entry.t_ms),
            Record::Metadata { key, value } if key == BOUND_SERIAL => {
                history.serial = value.as_str().map(str::to_string);
            }
            Record::Metadata { key, .. } if key == LINK_LOST => {
                history.steps.push(Step::LinkLost(entry.t_ms));
            }
            Record::Boundary(_) | Record::Metadata { .. } => {}
        }
    }
    boards
}

/// How `touchmove replay` reads a board: what the recorder's event file would have said.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// The Event tag of the games.
    pub event: String,
    /// The kind of board whose bytes these are.
    pub kind: BoardKind,
    /// The event's time control (`Unknown`: no software clock; a DGT clock's flag still falls).
    pub time_control: TimeControl,
    /// A FEN game's set-up, instead of the standard start.
    pub start_fen: Option<String>,
    /// Any Chess960 start begins a game.
    pub chess960: bool,
    /// Read the board as one that cannot tell pieces apart, whatever its kind.
    pub occupancy_only: bool,
}

impl Default for ReplayOptions {
    /// A DGT board, an unknown time control, the standard start.
    fn default() -> ReplayOptions {
        ReplayOptions {
            event: "touchmove replay".to_string(),
            kind: BoardKind::Dgt,
            time_control: TimeControl::Unknown,
            start_fen: None,
            chess960: false,
            occupancy_only: false,
        }
    }
}

/// A board read again: every event the pipeline gave, the games it recorded (as the
/// recorder writes them to `game-K.pgn`), and the bytes its decoder could not read.
#[derive(Debug, Clone, Default)]
pub struct ReplayedBoard {
    /// The events, in order.
    pub events: Vec<Event>,
    /// The games, the earlier ones first.
    pub games: Vec<GameRecord>,
    /// Bytes that did not form messages of the board's kind.
    pub skipped_bytes: u64,
}

/// The steps of a capture: its chunks, in order.
pub fn capture_history(chunks: Vec<CaptureChunk>) -> History {
    History {
        steps: chunks
            .into_iter()
            .map(|c| Step::Bytes(c.t_ms, c.bytes))
            .collect(),
        ..History::default()
    }
}

/// Board `board`'s history in the journal at `path` (opened read-only: the recorder may
/// still be writing it); without `board`, that of the one board the journal holds. Returns
/// the board's round and number with it; the error names the boards there are.
pub fn journal_history(
    path: &Path,
    board: Option<&BoardKey>,
) -> Result<((u32, u32), History), String> {
    let journal = Journal::open_read_only(path).map_err(|e| e.to_string())?;
    let boards = journal.boards().map_err(|e| e.to_string())?;
    let known = || {
        let names: Vec<String> = boards.iter().map(ToString::to_string).collect();
        if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        }
    };
    let key = match board {
        Some(key) => key.clone(),
        None if boards.len() == 1 => boards[0].clone(),
        None => {
            return Err(format!(
                "journal {} holds several boards ({}); give --board ROUND.BOARD",
                path.display(),
                known()
            ));
        }
    };
    let BoardKey::Pairing { round, board } = key else {
        return Err(format!(
            "board {key}: only a board of a round (ROUND.BOARD) is replayed; boards in the \
             journal {}: {}",
            path.display(),
            known()
        ));
    };
    let mut entries = Vec::new();
    let before = (round > 1).then(|| board_key(round - 1, board));
    for key in before.iter().chain([&key]) {
        entries.extend(journal.board_entries(key, 0).map_err(|e| e.to_string())?);
    }
    match split(&entries, round).remove(&board) {
        Some(history) if !history.steps.is_empty() => Ok(((round, board), history)),
        _ => Err(format!(
            "journal {} holds nothing of board {key}; boards in it: {}",
            path.display(),
            known()
        )),
    }
}

/// Reads board `board` of round `round` from `history` through a fresh pipeline, as a
/// restarted recorder does (the bytes with the board's kind and its move log, the arbiter's
/// actions, the links lost), and lets time pass after the last step until nothing waits on
/// it any more (a press, a result signal), as the recorder's clock would have.
pub fn replay_board(
    history: &History,
    (round, board): (u32, u32),
    options: &ReplayOptions,
) -> ReplayedBoard {
    let config = EventConfig {
        event: options.event.clone(),
        round,
        ..EventConfig::default()
    };
    let mut pipeline =
        BoardPipeline::new(GameTags::new(&config, board), options.time_control.clone())
            .with_board_log()
            .with_kind(options.kind);
    if options.occupancy_only {
        pipeline = pipeline.sensing_occupancy_only();
    }
    let mut pipeline = pipeline.with_start(options.start_fen.clone(), options.chess960);
    pipeline.learn_pieces(&history.round_before);
    let mut events = Vec::new();
    let mut last = 0;
    for step in &history.steps {
        replay_step(&mut pipeline, step, &mut |replayed| {
            if let Replayed::Event(event) = replayed {
                events.push(event);
            }
        });
        if let Step::Bytes(t_ms, _) | Step::Arbiter(t_ms, _) = step {
            last = *t_ms;
        }
    }
    pipeline.tick(last.saturating_add(TICK_AFTER_THE_END), &mut events);
    for _ in 0..DEADLINES_AFTER_THE_END {
        let Some(due) = pipeline.next_deadline() else {
            break;
        };
        pipeline.tick(due, &mut events);
    }
    let mut games = pipeline.earlier_games().to_vec();
    if pipeline.plies() > 0 || pipeline.result() != "*" {
        games.push(pipeline.record());
    }
    ReplayedBoard {
        events,
        games,
        skipped_bytes: pipeline.skipped_bytes(),
    }
}

/// After the last step, time passes by one of the recorder's ticks and a press's grace.
const TICK_AFTER_THE_END: Millis = 650;

/// Most deadlines met after the last step (each may set another).
const DEADLINES_AFTER_THE_END: usize = 16;
