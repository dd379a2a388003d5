//! What travels on an event's stream, and under which subjects and ids.
//!
//! - `touchmove.EVENT.journal.RECORDER`: one message per journal entry of that recorder
//!   ([`WireEntry`], JSON), message id `RECORDER/EPOCH/SEQ`;
//! - `touchmove.EVENT.layout.RECORDER`: the recorder's event, round, boards and players
//!   ([`Layout`], JSON), published before its entries at every connection;
//! - `touchmove-replay.EVENT.RECORDER` (request/reply, not stored): a serve node that misses
//!   entries of the recorder's journal asks the recorder for them ([`ReplayRequest`],
//!   answered with a [`ReplayReply`] read from its journal).
//!
//! EPOCH is the wall-clock start of the recorder's journal (its first session): a journal
//! started afresh under the same recorder id gets new message ids instead of being taken for
//! duplicates of the old one.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};

use crate::act::Event;
use crate::board::kind::BoardKind;
use crate::record::arbiter::ArbiterRequest;
use crate::recorder::{BoardConfig, BoardSource, EventConfig, Player};
use crate::store::{BoardKey, Entry, GameBoundary, Record};

/// How long the servers remember message ids to drop re-published entries.
pub const DUPLICATE_WINDOW: Duration = Duration::from_secs(10 * 60);

/// The event's stream.
pub fn stream_name(event: &str) -> String {
    format!("TOUCHMOVE_{event}")
}

/// Every subject of the event.
pub fn all_subjects(event: &str) -> String {
    format!("touchmove.{event}.>")
}

/// The subject of a recorder's journal entries.
pub fn journal_subject(event: &str, recorder: &str) -> String {
    format!("touchmove.{event}.journal.{recorder}")
}

/// The subject of a recorder's layout.
pub fn layout_subject(event: &str, recorder: &str) -> String {
    format!("touchmove.{event}.layout.{recorder}")
}

/// The subject on which a recorder answers requests for entries of its journal.
pub fn replay_subject(event: &str, recorder: &str) -> String {
    format!("touchmove-replay.{event}.{recorder}")
}

/// A serve node's request for journal entries it misses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayRequest {
    /// The journal's epoch.
    pub epoch: u64,
    /// The entries wanted follow this sequence number…
    pub after: u64,
    /// … up to this one (at most [`REPLAY_LIMIT`] are sent).
    pub until: u64,
}

/// Entries sent in one [`ReplayReply`] at most.
pub const REPLAY_LIMIT: u64 = 256;

/// A recorder's answer to a [`ReplayRequest`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayReply {
    /// The entries of the journal after `after`, in order, up to `until` (the journal's own
    /// numbering: a number missing between `after` and the first entry has no entry).
    pub entries: Vec<WireEntry>,
    /// Why no entries were sent (another epoch, a journal that cannot be read).
    pub refused: Option<String>,
}

/// The deterministic id of journal entry `seq`: the same entry always gets the same id, so a
/// re-publish after an outage is dropped by the server as a duplicate.
pub fn message_id(recorder: &str, epoch: u64, seq: u64) -> String {
    format!("{recorder}/{epoch}/{seq}")
}

/// A journal entry on the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WireEntry {
    /// The recorder that journalled it.
    pub recorder: String,
    /// Its journal's epoch.
    pub epoch: u64,
    /// Its sequence number in that journal.
    pub seq: u64,
    /// The board (`BoardKey` text), if any.
    pub board: Option<String>,
    /// Session milliseconds.
    pub t_ms: u64,
    /// What was journalled.
    pub record: WireRecord,
}

/// A journal record on the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireRecord {
    /// Bytes received from a board (base64).
    Bytes {
        /// The bytes, base64.
        data: String,
    },
    /// An event of the act-of-moving machine.
    Event {
        /// The event.
        event: Event,
    },
    /// An arbiter action.
    Arbiter {
        /// The request.
        request: ArbiterRequest,
    },
    /// A game boundary.
    Boundary {
        /// The boundary.
        boundary: GameBoundary,
    },
    /// Other metadata.
    Metadata {
        /// Key.
        key: String,
        /// Value.
        value: serde_json::Value,
    },
}

impl WireEntry {
    /// The stream form of a journal entry of `recorder`'s journal `epoch`.
    pub fn from_entry(recorder: &str, epoch: u64, entry: &Entry) -> WireEntry {
        let record = match &entry.record {
            Record::Bytes(b) => WireRecord::Bytes {
                data: BASE64.encode(b),
            },
            Record::Event(event) => WireRecord::Event {
                event: event.clone(),
            },
            Record::Arbiter(request) => WireRecord::Arbiter {
                request: request.clone(),
            },
            Record::Boundary(boundary) => WireRecord::Boundary {
                boundary: boundary.clone(),
            },
            Record::Metadata { key, value } => WireRecord::Metadata {
                key: key.clone(),
                value: value.clone(),
            },
        };
        WireEntry {
            recorder: recorder.to_string(),
            epoch,
            seq: entry.seq,
            board: entry.board.as_ref().map(BoardKey::to_string),
            t_ms: entry.t_ms,
            record,
        }
    }

    /// The journal record back, or why it cannot be read.
    pub fn record(&self) -> Result<Record, String> {
        Ok(match &self.record {
            WireRecord::Bytes { data } => Record::Bytes(
                BASE64
                    .decode(data)
                    .map_err(|e| format!("bytes that are not base64 ({e})"))?,
            ),
            WireRecord::Event { event } => Record::Event(event.clone()),
            WireRecord::Arbiter { request } => Record::Arbiter(request.clone()),
            WireRecord::Boundary { boundary } => Record::Boundary(boundary.clone()),
            WireRecord::Metadata { key, value } => Record::Metadata {
                key: key.clone(),
                value: value.clone(),
            },
        })
    }

    /// The board key, or why it cannot be read.
    pub fn board_key(&self) -> Result<Option<BoardKey>, String> {
        self.board
            .as_deref()
            .map(|k| k.parse().map_err(|e| format!("board {k:?}: {e}")))
            .transpose()
    }
}

/// A player as the layout carries it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutPlayer {
    /// Name.
    pub name: String,
    /// FIDE id.
    pub fide_id: Option<u64>,
    /// Title.
    pub title: Option<String>,
    /// Rating.
    pub rating: Option<u32>,
    /// Federation.
    pub federation: Option<String>,
}

impl From<&Player> for LayoutPlayer {
    fn from(p: &Player) -> LayoutPlayer {
        LayoutPlayer {
            name: p.name.clone(),
            fide_id: p.fide_id,
            title: p.title.clone(),
            rating: p.rating,
            federation: p.federation.clone(),
        }
    }
}

impl From<&LayoutPlayer> for Player {
    fn from(p: &LayoutPlayer) -> Player {
        Player {
            name: p.name.clone(),
            fide_id: p.fide_id,
            title: p.title.clone(),
            rating: p.rating,
            federation: p.federation.clone(),
        }
    }
}

/// A board of a layout.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayoutBoard {
    /// Board number.
    pub number: u32,
    /// The kind of board, whose bytes the journal holds. A layout written before kinds
    /// travelled has none and is read as DGT, as every board was then.
    #[serde(default)]
    pub kind: BoardKind,
    /// White.
    pub white: LayoutPlayer,
    /// Black.
    pub black: LayoutPlayer,
}

/// What a broadcast node needs to know about a recorder's event to rebuild its games as the
/// recorder does (the PGN tags, the time control, the boards it owns).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// The recorder.
    pub recorder: String,
    /// Its journal's epoch.
    pub epoch: u64,
    /// The host it runs on (for messages about two recorders with one id).
    pub host: String,
    /// Event name.
    pub event: String,
    /// Site.
    pub site: String,
    /// Date.
    pub date: String,
    /// Round.
    pub round: u32,
    /// Time control.
    pub time_control: Option<String>,
    /// The boards this recorder records.
    pub boards: Vec<LayoutBoard>,
}

impl Layout {
    /// The layout of `config` recorded by `recorder` into journal `epoch` on `host`.
    pub fn of(config: &EventConfig, recorder: &str, epoch: u64, host: &str) -> Layout {
        Layout {
            recorder: recorder.to_string(),
            epoch,
            host: host.to_string(),
            event: config.event.clone(),
            site: config.site.clone(),
            date: config.date.clone(),
            round: config.round,
            time_control: config.time_control.clone(),
            boards: config
                .boards
                .iter()
                .map(|b| LayoutBoard {
                    number: b.number,
                    kind: b.kind,
                    white: (&b.white).into(),
                    black: (&b.black).into(),
                })
                .collect(),
        }
    }

    /// The event configuration it describes (without ports).
    pub fn event_config(&self) -> EventConfig {
        EventConfig {
            event: self.event.clone(),
            site: self.site.clone(),
            date: self.date.clone(),
            round: self.round,
            time_control: self.time_control.clone(),
            leds: crate::recorder::leds::LedMode::Off,
            boards: self
                .boards
                .iter()
                .map(|b| BoardConfig {
                    number: b.number,
                    source: BoardSource::Auto,
                    kind: b.kind,
                    leds: crate::recorder::leds::LedMode::Off,
                    white: (&b.white).into(),
                    black: (&b.black).into(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::arbiter::ArbiterAction;

    #[test]
    fn an_entry_survives_the_wire() {
        let entries = [
            Entry {
                seq: 7,
                session: 2,
                board: Some(BoardKey::Pairing { round: 3, board: 4 }),
                t_ms: 1234,
                record: Record::Bytes(vec![0, 1, 0xff, b'a']),
            },
            Entry {
                seq: 8,
                session: 2,
                board: None,
                t_ms: 1300,
                record: Record::Arbiter(ArbiterRequest {
                    who: "A".into(),
                    board: 4,
                    action: ArbiterAction::NewGame,
                    key: None,
                }),
            },
        ];
        for entry in &entries {
            let wire = WireEntry::from_entry("pc-1", 99, entry);
            let json = serde_json::to_vec(&wire).unwrap();
            let back: WireEntry = serde_json::from_slice(&json).unwrap();
            assert_eq!(back, wire);
            assert_eq!(back.record().unwrap(), entry.record);
            assert_eq!(back.board_key().unwrap(), entry.board);
        }
        assert_eq!(message_id("pc-1", 99, 7), "pc-1/99/7");
    }

    #[test]
    fn a_layout_carries_each_boards_kind_and_one_without_kinds_reads_as_dgt() {
        use crate::recorder::{BoardConfig, Player};
        let mut config = EventConfig::default();
        for (number, kind) in [(1, BoardKind::Sentio), (2, BoardKind::Dgt)] {
            config.boards.push(BoardConfig {
                number,
                source: BoardSource::Auto,
                kind,
                leds: crate::recorder::leds::LedMode::Off,
                white: Player::named("W"),
                black: Player::named("B"),
            });
        }
        let layout = Layout::of(&config, "pc-1", 9, "host");
        let json = serde_json::to_string(&layout).unwrap();
        let back: Layout = serde_json::from_str(&json).unwrap();
        let kinds = |l: &Layout| -> Vec<BoardKind> {
            l.event_config().boards.iter().map(|b| b.kind).collect()
        };
        assert_eq!(kinds(&back), [BoardKind::Sentio, BoardKind::Dgt]);
        // As a touchmove from before kinds travelled wrote it.
        let mut old: serde_json::Value = serde_json::from_str(&json).unwrap();
        for board in old["boards"].as_array_mut().unwrap() {
            board.as_object_mut().unwrap().remove("kind");
        }
        let old: Layout = serde_json::from_value(old).unwrap();
        assert_eq!(kinds(&old), [BoardKind::Dgt, BoardKind::Dgt]);
    }

    #[test]
    fn bad_bytes_and_keys_are_named() {
        let mut wire = WireEntry::from_entry(
            "r",
            1,
            &Entry {
                seq: 1,
                session: 1,
                board: None,
                t_ms: 0,
                record: Record::Bytes(vec![1]),
            },
        );
        wire.record = WireRecord::Bytes { data: "%%".into() };
        assert!(wire.record().unwrap_err().contains("base64"));
        wire.board = Some("nonsense key".into());
        assert!(wire.board_key().is_err());
    }
}
