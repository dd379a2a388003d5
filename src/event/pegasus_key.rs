//! The DGT Pegasus developer key an event names: `pegasus_key = "…"` in the event file (or
//! `record --pegasus-key`), as the six bytes in hex or as the path of a file holding them
//! (read by [`DeveloperKey::read`]).
//!
//! The key is DGT's, given to developers on request; touchmove ships none. A Pegasus streams
//! its board only after the host gave it the key, so an event with a Pegasus board and no
//! key is refused before recording starts ([`check_boards`]), naming the board and the fix.

use super::config::EventConfig;
use crate::board::kind::BoardKind;
use crate::wire::pegasus::DeveloperKey;

/// How a user gives the key, for messages.
pub const HOW_TO_GIVE_THE_KEY: &str = "ask DGT for a developer key (touchmove ships none) \
     and give it as pegasus_key = \"01 23 45 67 89 ab\" (its six bytes in hex), or as \
     pegasus_key = \"pegasus.key\" (a file holding them, relative to the event file), in the \
     event file; or with `touchmove record --pegasus-key KEY_OR_FILE`";

/// Refuses an event with a Pegasus board when no key is given, naming the boards and how
/// to give the key.
pub fn check_boards(config: &EventConfig, key: Option<&DeveloperKey>) -> Result<(), String> {
    if key.is_some() {
        return Ok(());
    }
    let boards: Vec<String> = config
        .boards
        .iter()
        .filter(|b| b.kind.needs_developer_key())
        .map(|b| format!("board {} ({})", b.number, b.source))
        .collect();
    if boards.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} {} a DGT Pegasus (kind = \"{}\"), which sends its board only after DGT's \
         developer key, and no key is given: {HOW_TO_GIVE_THE_KEY}",
        boards.join(", "),
        if boards.len() == 1 { "is" } else { "are" },
        BoardKind::Pegasus
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::config::{BoardConfig, BoardSource};

    #[test]
    fn a_pegasus_board_without_a_key_is_refused_naming_the_board_and_the_fix() {
        let board = |number, kind| BoardConfig {
            number,
            source: BoardSource::Port(format!("/dev/b{number}").into()),
            kind,
            leds: crate::board::leds::LedMode::Off,
            white: crate::event::Player::named("?"),
            black: crate::event::Player::named("?"),
        };
        let config = EventConfig {
            boards: vec![board(1, BoardKind::Dgt), board(2, BoardKind::Pegasus)],
            ..EventConfig::default()
        };
        let e = check_boards(&config, None).unwrap_err();
        assert!(
            e.starts_with("board 2 (port /dev/b2) is a DGT Pegasus")
                && e.contains("pegasus_key = ")
                && e.contains("--pegasus-key"),
            "{e}"
        );
        let key = DeveloperKey::new([0; 6]);
        assert_eq!(check_boards(&config, Some(&key)), Ok(()));
        let only_dgt = EventConfig {
            boards: vec![board(1, BoardKind::Dgt)],
            ..EventConfig::default()
        };
        assert_eq!(check_boards(&only_dgt, None), Ok(()));
    }
}
