//! What a board's LEDs are asked to show, as the event file names it.

use std::fmt;
use std::str::FromStr;

/// What the LEDs show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LedMode {
    /// Nothing (the default: at an event, lights would assist the players).
    #[default]
    Off,
    /// The squares of the last move.
    LastMove,
    /// The squares to put right while play is held.
    Errors,
}

impl LedMode {
    /// The name used in event files.
    pub fn name(self) -> &'static str {
        match self {
            LedMode::Off => "off",
            LedMode::LastMove => "last-move",
            LedMode::Errors => "errors",
        }
    }
}

impl fmt::Display for LedMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for LedMode {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        [LedMode::Off, LedMode::LastMove, LedMode::Errors]
            .into_iter()
            .find(|m| m.name() == text.trim())
            .ok_or_else(|| {
                format!("unknown LED mode `{text}`: give \"off\", \"last-move\" or \"errors\"")
            })
    }
}
