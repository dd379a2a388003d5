//! The DGT Pegasus developer key an event names: `pegasus_key = "…"` in the event file (or
//! `record --pegasus-key`), as the six bytes in hex or as the path of a file holding them.
//!
//! The key is DGT's, given to developers on request; touchmove ships none. A Pegasus streams
//! its board only after the host gave it the key, so an event with a Pegasus board and no
//! key is refused before recording starts ([`check_boards`]), naming the board and the fix.

use std::path::Path;

use super::config::{EventConfig, line_of};
use super::error::ConfigError;
use crate::board::kind::BoardKind;
use crate::wire::pegasus::DeveloperKey;

/// How a user gives the key, for messages.
pub const HOW_TO_GIVE_THE_KEY: &str = "ask DGT for a developer key (touchmove ships none) \
     and give it as pegasus_key = \"01 23 45 67 89 ab\" (its six bytes in hex), or as \
     pegasus_key = \"pegasus.key\" (a file holding them, relative to the event file), in the \
     event file; or with `touchmove record --pegasus-key KEY_OR_FILE`";

/// Reads `value`: the key's six bytes in hex, or else the path of a file holding them
/// (relative to `base`, the folder of the file that named it). The error names what was
/// tried.
pub fn read_key(value: &str, base: &Path) -> Result<DeveloperKey, String> {
    let as_text = match DeveloperKey::parse(value) {
        Ok(key) => return Ok(key),
        Err(e) => e,
    };
    let path = base.join(value.trim());
    if path.is_file() {
        return DeveloperKey::from_file(&path).map_err(|e| e.to_string());
    }
    Err(format!(
        "{value:?} is neither a Pegasus developer key ({as_text}) nor a file ({} does not \
         exist)",
        path.display()
    ))
}

/// The `pegasus_key` of the event file at `path` (`None` when it names none).
pub fn key_in_event_file(path: &Path) -> Result<Option<DeveloperKey>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    key_in_event_text(&text, path)
}

/// The `pegasus_key` of event file text read from `path` (which resolves a key file's
/// relative path); the error names the file, the line and the field.
pub fn key_in_event_text(text: &str, path: &Path) -> Result<Option<DeveloperKey>, ConfigError> {
    #[derive(serde::Deserialize)]
    struct OnlyTheKey {
        pegasus_key: Option<toml::Spanned<String>>,
    }
    let invalid = |offset: usize, message: String| ConfigError::Invalid {
        path: path.to_path_buf(),
        line: line_of(text, offset),
        field: "pegasus_key".to_string(),
        message,
    };
    let raw: OnlyTheKey = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        invalid(offset, e.message().trim().to_string())
    })?;
    let Some(value) = raw.pegasus_key else {
        return Ok(None);
    };
    let base = path.parent().unwrap_or_else(|| Path::new("."));
    read_key(value.get_ref(), base)
        .map(Some)
        .map_err(|message| invalid(value.span().start, message))
}

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
    fn a_key_is_read_from_text_or_from_a_file_beside_the_event_file() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.toml");
        std::fs::write(&event, "pegasus_key = \"01 02 03 04 05 06\"\n").unwrap();
        let key = key_in_event_file(&event).unwrap().unwrap();
        assert_eq!(key.bytes(), [1, 2, 3, 4, 5, 6]);

        std::fs::write(dir.path().join("pegasus.key"), "0a:0b:0c:0d:0e:0f\n").unwrap();
        std::fs::write(&event, "event = \"x\"\npegasus_key = \"pegasus.key\"\n").unwrap();
        let key = key_in_event_file(&event).unwrap().unwrap();
        assert_eq!(key.bytes(), [10, 11, 12, 13, 14, 15]);

        std::fs::write(&event, "event = \"x\"\n").unwrap();
        assert!(key_in_event_file(&event).unwrap().is_none());
    }

    #[test]
    fn a_bad_key_names_the_line_and_what_was_tried() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.toml");
        std::fs::write(&event, "event = \"x\"\npegasus_key = \"missing.key\"\n").unwrap();
        let e = key_in_event_file(&event).unwrap_err().to_string();
        assert!(
            e.contains("event.toml:2: pegasus_key")
                && e.contains("not a hex digit")
                && e.contains("missing.key does not exist"),
            "{e}"
        );
        std::fs::write(dir.path().join("short.key"), "01 02").unwrap();
        std::fs::write(&event, "pegasus_key = \"short.key\"\n").unwrap();
        let e = key_in_event_file(&event).unwrap_err().to_string();
        assert!(e.contains("4 hex digits, not 12"), "{e}");
    }

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
