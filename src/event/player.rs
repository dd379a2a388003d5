//! A player as pairings and event files name him.

use serde::Deserialize;

/// A player as the pairings name him.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Player {
    /// Name as written in PGN, "Last, First".
    pub name: String,
    /// FIDE id, when known.
    #[serde(default)]
    pub fide_id: Option<u64>,
    /// FIDE title (GM, IM, WGM, …).
    #[serde(default)]
    pub title: Option<String>,
    /// Rating (written as WhiteElo/BlackElo).
    #[serde(default)]
    pub rating: Option<u32>,
    /// Three-letter federation code.
    #[serde(default)]
    pub federation: Option<String>,
}

impl Player {
    /// A player known by name only.
    pub fn named(name: &str) -> Player {
        Player {
            name: name.to_string(),
            ..Player::default()
        }
    }
}
