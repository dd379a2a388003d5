//! How the journal names a board.

use std::fmt;
use std::str::FromStr;

/// Identifies a board in the journal, the same way across restarts of the recorder.
///
/// Written as text (also in JSON and on the command line):
/// - `3.12`: round 3, board 12 (the numbers of the PGN `Round "3.12"` tag);
/// - `serial:12345`: the board's own serial number;
/// - `port:/dev/ttyACM0`: the serial port it is connected to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BoardKey {
    /// A board of a round's pairings.
    Pairing {
        /// Round number.
        round: u32,
        /// Board number within the round.
        board: u32,
    },
    /// A board known by its serial number.
    Serial(String),
    /// A board known by its port.
    Port(String),
}

/// A board key that cannot be read; says which forms are accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid board {text:?}: expected ROUND.BOARD (e.g. 3.12), serial:NUMBER or port:PATH (e.g. port:/dev/ttyACM0)"
)]
pub struct BoardKeyError {
    /// The text as given.
    pub text: String,
}

impl fmt::Display for BoardKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardKey::Pairing { round, board } => write!(f, "{round}.{board}"),
            BoardKey::Serial(serial) => write!(f, "serial:{serial}"),
            BoardKey::Port(port) => write!(f, "port:{port}"),
        }
    }
}

impl FromStr for BoardKey {
    type Err = BoardKeyError;

    fn from_str(text: &str) -> Result<BoardKey, BoardKeyError> {
        let error = || BoardKeyError {
            text: text.to_string(),
        };
        let named = |rest: &str, make: fn(String) -> BoardKey| {
            let rest = rest.trim();
            if rest.is_empty() {
                Err(error())
            } else {
                Ok(make(rest.to_string()))
            }
        };
        if let Some(serial) = text.strip_prefix("serial:") {
            return named(serial, BoardKey::Serial);
        }
        if let Some(port) = text.strip_prefix("port:") {
            return named(port, BoardKey::Port);
        }
        let (round, board) = text.trim().split_once('.').ok_or_else(error)?;
        let number = |s: &str| {
            s.parse::<u32>()
                .ok()
                .filter(|_| s.bytes().all(|b| b.is_ascii_digit()))
        };
        match (number(round), number(board)) {
            (Some(round), Some(board)) => Ok(BoardKey::Pairing { round, board }),
            _ => Err(error()),
        }
    }
}

impl serde::Serialize for BoardKey {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for BoardKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}
