//! What a restarted recorder replays: each board's journalled bytes and arbiter actions, in
//! journal order.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::board::Millis;
use crate::record::arbiter::ArbiterRequest;
use crate::store::{BoardKey, Entry, Record};

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
pub(crate) enum Step {
    /// Bytes received.
    Bytes(Millis, Vec<u8>),
    /// An arbiter action applied.
    Arbiter(Millis, ArbiterRequest),
    /// The link lost its connection (or the recorder restarted).
    LinkLost,
}

/// A board's journalled history.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct History {
    /// Bytes and arbiter actions in journal order.
    pub steps: Vec<Step>,
    /// The times of the events journalled for the board (a replay regenerates them, in
    /// order; they are not journalled again).
    pub event_times: Vec<Millis>,
    /// The serial number of the board an "auto" entry took.
    pub serial: Option<String>,
}

/// The journal key of board `board` of `round`.
pub(crate) fn board_key(round: u32, board: u32) -> BoardKey {
    BoardKey::Pairing { round, board }
}

/// Splits the journal's entries by board of `round`.
pub(crate) fn split(entries: &[Entry], round: u32) -> BTreeMap<u32, History> {
    let mut boards: BTreeMap<u32, History> = BTreeMap::new();
    for entry in entries {
        // Arbiter actions carry their round in the key too (journals that did not are
        // migrated when opened): a decision in one round never touches another's game.
        let board = match &entry.board {
            Some(BoardKey::Pairing { round: r, board }) if *r == round => *board,
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
                history.steps.push(Step::LinkLost);
            }
            Record::Boundary(_) | Record::Metadata { .. } => {}
        }
    }
    boards
}
