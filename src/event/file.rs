//! The event file read once: everything a command needs from it at start-up, from one read
//! and one parse of the file.

use std::path::{Path, PathBuf};

use super::config::{BoardOrigins, EventConfig};
use super::error::ConfigError;
use super::trf::Encoding;
use crate::wire::pegasus::DeveloperKey;

/// What an event file says (or, without a file, what a command gives in its place).
#[derive(Debug, Clone, Default)]
pub struct EventFile {
    /// The file, if the event was read from one.
    pub path: Option<PathBuf>,
    /// The event: name, round, time control, boards and players.
    pub config: EventConfig,
    /// Where each board was configured, for messages.
    pub origins: BoardOrigins,
    /// The DGT Pegasus developer key (`pegasus_key`).
    pub pegasus_key: Option<DeveloperKey>,
    /// The encoding of the TRF the pairings are read from (`encoding`); `None`: guessed.
    pub encoding: Option<Encoding>,
    /// The `[cluster]` table as written, for [`crate::cluster::ClusterSettings`].
    pub cluster: Option<toml::Table>,
    /// The public broadcast's transmission delay (`broadcast_delay`).
    pub broadcast_delay: Option<std::time::Duration>,
}

impl EventFile {
    /// Reads and checks the event file at `path`.
    pub fn load(path: &Path) -> Result<EventFile, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        EventFile::parse(&text, path)
    }

    /// Parses event file text; `path` is used in messages and to resolve the paths the file
    /// names (its pairings, its Pegasus key file).
    pub fn parse(text: &str, path: &Path) -> Result<EventFile, ConfigError> {
        let (config, origins, extras) = EventConfig::parse_file(text, path)?;
        Ok(EventFile {
            path: Some(path.to_path_buf()),
            config,
            origins,
            pegasus_key: extras.pegasus_key,
            encoding: extras.encoding,
            cluster: extras.cluster,
            broadcast_delay: extras.broadcast_delay,
        })
    }

    /// An event given without a file (the demo's boards and players).
    pub fn of(config: EventConfig) -> EventFile {
        EventFile {
            config,
            ..EventFile::default()
        }
    }

    /// The folder paths in the file are relative to.
    pub fn folder(&self) -> Option<&Path> {
        self.path.as_deref().and_then(Path::parent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_read_from_text_or_from_a_file_beside_the_event_file() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.toml");
        std::fs::write(&event, "pegasus_key = \"01 02 03 04 05 06\"\n").unwrap();
        let key = EventFile::load(&event).unwrap().pegasus_key.unwrap();
        assert_eq!(key.bytes(), [1, 2, 3, 4, 5, 6]);

        std::fs::write(dir.path().join("pegasus.key"), "0a:0b:0c:0d:0e:0f\n").unwrap();
        std::fs::write(&event, "event = \"x\"\npegasus_key = \"pegasus.key\"\n").unwrap();
        let key = EventFile::load(&event).unwrap().pegasus_key.unwrap();
        assert_eq!(key.bytes(), [10, 11, 12, 13, 14, 15]);

        std::fs::write(&event, "event = \"x\"\n").unwrap();
        assert!(EventFile::load(&event).unwrap().pegasus_key.is_none());
    }

    #[test]
    fn a_bad_key_names_the_line_and_what_was_tried() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.toml");
        std::fs::write(&event, "event = \"x\"\npegasus_key = \"missing.key\"\n").unwrap();
        let e = EventFile::load(&event).unwrap_err().to_string();
        assert!(
            e.contains("event.toml:2: pegasus_key")
                && e.contains("not a hex digit")
                && e.contains("missing.key does not exist"),
            "{e}"
        );
        std::fs::write(dir.path().join("short.key"), "01 02").unwrap();
        std::fs::write(&event, "pegasus_key = \"short.key\"\n").unwrap();
        let e = EventFile::load(&event).unwrap_err().to_string();
        assert!(e.contains("4 hex digits, not 12"), "{e}");
    }

    #[test]
    fn one_read_gives_the_event_the_encoding_and_the_cluster_table() {
        let dir = tempfile::tempdir().unwrap();
        let event = dir.path().join("event.toml");
        std::fs::write(
            &event,
            "event = \"Open\"\nencoding = \"cp1250\"\n[cluster]\nurls = [\"nats://a:4222\"]\n",
        )
        .unwrap();
        let file = EventFile::load(&event).unwrap();
        assert_eq!(file.config.event, "Open");
        assert_eq!(file.encoding, Some(Encoding::Windows1250));
        assert!(file.cluster.as_ref().unwrap().contains_key("urls"));
        assert_eq!(file.folder(), Some(dir.path()));
        std::fs::write(&event, "event = \"Open\"\nencoding = \"ebcdic\"\n").unwrap();
        let e = EventFile::load(&event).unwrap_err().to_string();
        assert!(
            e.contains("event.toml:2: encoding") && e.contains("windows-1250"),
            "{e}"
        );
    }
}
