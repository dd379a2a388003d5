//! What a restarted recorder replays: each board's journalled bytes and arbiter actions, in
//! journal order.

use std::collections::BTreeMap;

use crate::board::Millis;
use crate::record::arbiter::ArbiterRequest;
use crate::store::{BoardKey, Entry, Record};

/// Journal metadata key: the serial number of the board an "auto" entry took.
pub(crate) const BOUND_SERIAL: &str = "board-serial";

/// Journal metadata key: the link to the board lost its connection, or the recorder started
/// again on a journal (its value says which). What the board sends next is on a new
/// connection: a replay must read it as the live run did.
pub const LINK_LOST: &str = "link-lost";

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
    /// Events journalled for the board (a replay regenerates them; they are not journalled
    /// again).
    pub events: usize,
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
            Record::Event(_) => history.events += 1,
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
