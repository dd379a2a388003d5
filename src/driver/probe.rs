//! Asking a serial port which DGT board is behind it: open, request version and serial
//! number, close.
//!
//! The recorder probes candidate ports to find boards named by serial number (or "auto") in
//! an event file. A probe leaves the board as it found it apart from a reset to idle mode:
//! it never sets an update mode, so no move is sent to (and lost by) the probe.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::ports::{DgtLikelihood, list_ports};
use super::serial;
use crate::wire::dgt::{Command, Decoder, Message};

/// What a DGT board said about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardIdentity {
    /// Board firmware version, e.g. "1.02".
    pub version: String,
    /// The board's serial number (the five-digit one; the ten-digit one when that is all the
    /// board sends), or `None` when it did not answer that request.
    pub serial: Option<String>,
    /// The ten-digit serial number, when the board gave one.
    pub long_serial: Option<String>,
    /// Every chunk read from the port, in order, with its receive time: a board left in an
    /// update mode (by a recorder that was killed) may have queued moves, which must not be
    /// lost with the probe.
    pub received: Vec<(Instant, Vec<u8>)>,
}

impl BoardIdentity {
    /// What the board is, by its answers: "Revelation II" when its long serial number begins
    /// with a firmware version, "DGT board" otherwise.
    pub fn model(&self) -> &'static str {
        match &self.long_serial {
            Some(long) if crate::wire::revelation::is_revelation_long_serial(long) => {
                "Revelation II"
            }
            _ => "DGT board",
        }
    }
}

/// Why a probe found no board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeFailure {
    /// The port could not be opened (the message names the cause and the fix).
    Open(String),
    /// The port opened but nothing answered the DGT version request.
    NoReply,
    /// Reading or writing failed.
    Io(String),
}

impl std::fmt::Display for ProbeFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ProbeFailure::Open(message) => write!(f, "cannot open: {message}"),
            ProbeFailure::NoReply => write!(f, "no reply to the DGT version request"),
            ProbeFailure::Io(message) => write!(f, "{message}"),
        }
    }
}

/// Asks the board on `port` for its version and serial number, waiting at most `timeout`
/// for each answer.
pub async fn probe(port: &Path, timeout: Duration) -> Result<BoardIdentity, ProbeFailure> {
    let name = port.to_string_lossy();
    let mut stream = serial::open(&name).map_err(|e| ProbeFailure::Open(e.to_string()))?;
    let mut request = Command::Reset.encode();
    request.extend(Command::SendVersion.encode());
    // Before the five-digit one, whose answer ends the probe.
    request.extend(Command::SendLongSerialNumber.encode());
    request.extend(Command::SendSerialNumber.encode());
    stream
        .write_all(&request)
        .await
        .map_err(|e| ProbeFailure::Io(format!("write failed ({e})")))?;
    let mut decoder = Decoder::new();
    let mut messages = Vec::new();
    let mut version = None;
    let mut serial = None;
    let mut long_serial = None;
    let mut received = Vec::new();
    let mut deadline = Instant::now() + timeout;
    let mut buf = [0u8; 256];
    while serial.is_none() {
        let read = tokio::time::timeout_at(deadline, stream.read(&mut buf)).await;
        let n = match read {
            Err(_) => break,
            Ok(Ok(0)) => return Err(ProbeFailure::Io("the port was closed".to_string())),
            Ok(Ok(n)) => n,
            Ok(Err(e)) => return Err(ProbeFailure::Io(format!("read failed ({e})"))),
        };
        received.push((Instant::now(), buf[..n].to_vec()));
        messages.clear();
        decoder.push(&buf[..n], &mut messages);
        for message in &messages {
            match message {
                Message::Version { major, minor } if version.is_none() => {
                    version = Some(format!("{major}.{minor:02}"));
                    // The board is there: give the serial number its own full wait.
                    deadline = Instant::now() + timeout;
                }
                Message::SerialNumber(s) => serial = Some(s.trim().to_string()),
                Message::LongSerialNumber(s) => long_serial = Some(s.trim().to_string()),
                _ => {}
            }
        }
    }
    match version {
        Some(version) => Ok(BoardIdentity {
            version,
            serial: serial.or(long_serial.clone()),
            long_serial,
            received,
        }),
        None => Err(ProbeFailure::NoReply),
    }
}

/// Where to look for boards.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Candidates {
    /// The serial ports sysfs describes that may be DGT boards (USB with DGT's ids or
    /// names, Bluetooth serial links).
    #[default]
    Sysfs,
    /// These paths; a `*` in a path's last component matches any run of characters
    /// (`/dev/ttyACM*`, `/tmp/boards/board-*`).
    Patterns(Vec<PathBuf>),
}

impl Candidates {
    /// The candidate ports present now, sorted and without repeats.
    pub fn list(&self) -> Vec<PathBuf> {
        let mut found: Vec<PathBuf> = match self {
            Candidates::Sysfs => list_ports(Path::new("/sys"))
                .into_iter()
                .filter(|p| p.dgt != DgtLikelihood::Unlikely)
                .map(|p| PathBuf::from(p.path))
                .collect(),
            Candidates::Patterns(patterns) => patterns.iter().flat_map(|p| expand(p)).collect(),
        };
        found.sort();
        found.dedup();
        found
    }

    /// Says where the recorder looks, for messages.
    pub fn describe(&self) -> String {
        match self {
            Candidates::Sysfs => "the serial ports that look like DGT boards".to_string(),
            Candidates::Patterns(patterns) => patterns
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// The existing paths matching `pattern` (a `*` only in the last component).
fn expand(pattern: &Path) -> Vec<PathBuf> {
    let name = pattern
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !name.contains('*') {
        return if pattern.exists() {
            vec![pattern.to_path_buf()]
        } else {
            Vec::new()
        };
    }
    let dir = match pattern.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter(|e| wildcard_match(&name, &e.file_name().to_string_lossy()))
        .map(|e| dir.join(e.file_name()))
        // A symbolic link whose device is gone (an unplugged board) is not a port.
        .filter(|p| p.exists())
        .collect()
}

/// Matches `text` against `pattern`, where `*` stands for any run of characters.
fn wildcard_match(pattern: &str, text: &str) -> bool {
    let mut parts = pattern.split('*');
    let first = parts.next().unwrap_or("");
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for part in middle {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_runs_of_characters() {
        assert!(wildcard_match("ttyACM*", "ttyACM0"));
        assert!(wildcard_match("board-*", "board-12"));
        assert!(wildcard_match("*", "x"));
        assert!(wildcard_match("a*b*c", "aXbYc"));
        assert!(!wildcard_match("a*b*c", "aXcYb"));
        assert!(!wildcard_match("ttyACM*", "ttyUSB0"));
        assert!(!wildcard_match("ab*ba", "aba"));
        assert!(wildcard_match("exact", "exact"));
        assert!(!wildcard_match("exact", "exactly"));
    }

    #[test]
    fn patterns_list_existing_paths_sorted() {
        let dir = tempfile::tempdir().expect("tempdir");
        for name in ["board-2", "board-1", "other"] {
            std::fs::write(dir.path().join(name), b"").expect("write");
        }
        let candidates = Candidates::Patterns(vec![
            dir.path().join("board-*"),
            dir.path().join("other"),
            dir.path().join("missing"),
        ]);
        let names: Vec<String> = candidates
            .list()
            .iter()
            .map(|p| p.file_name().expect("name").to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, ["board-1", "board-2", "other"]);
    }

    #[tokio::test]
    async fn a_port_that_is_not_a_tty_is_reported() {
        let failure = probe(Path::new("/dev/null"), Duration::from_millis(100))
            .await
            .expect_err("not a board");
        assert!(matches!(failure, ProbeFailure::Open(_)), "{failure}");
    }
}
