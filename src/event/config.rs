//! The event configuration: a TOML file naming the event, its round, time control and boards.
//!
//! ```toml
//! event = "Club Championship 2026"
//! site = "Oslo, Norway"
//! round = 3
//! time_control = "40/5400+30:1800+30"
//! pairings = "round-3.csv"          # optional, relative to this file
//! encoding = "windows-1250"         # a TRF's encoding, when it is not to be guessed
//! pegasus_key = "pegasus.key"       # DGT Pegasus boards: DGT's developer key, as six hex
//!                                   # bytes or a file holding them (`pegasus_key`)
//! broadcast_delay = "15m"           # the public sees the games this much later (default 0;
//!                                   # `EventFile::broadcast_delay`)
//!
//! [[board]]
//! number = 1
//! port = "/dev/ttyACM0"             # or port = "auto", or serial = "24587", or a Bluetooth
//!                                   # LE board: port = "ble:ADDRESS-OR-NAME" (feature `ble`)
//! kind = "dgt"                      # or "millennium", "certabo", "sentio", "chessnut",
//!                                   # "pegasus"
//! leds = "off"                      # boards with LEDs: or "last-move", "errors" (at home)
//! white = { name = "Carlsen, Magnus", fide_id = 1503014, title = "GM", rating = 2830 }
//! black = { name = "Nepomniachtchi, Ian", fide_id = 4168119 }
//!
//! [[board]]
//! number = 2
//! bus = "/dev/ttyUSB0"              # a DGT bus chain's port: the board with this serial
//! serial = "01025"                  # number on the chain
//! ```
//!
//! Every error names the file, the line and the field. The file is parsed once, into the
//! event and what it says besides ([`super::file::EventFile`]).
//!
//! One file for one concept, the event file's fields: each is read, checked and named in its
//! errors in one place.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::bounds::{check_board, check_round};
use super::error::ConfigError;
use super::player::Player;
use super::trf::Encoding;
use crate::board::kind::BoardKind;
use crate::board::leds::LedMode;
use crate::wire::gatt::check_ble_port;
use crate::wire::pegasus::DeveloperKey;

/// Where the recorder finds a board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardSource {
    /// A serial port path (`/dev/ttyACM0`, `COM3`, a PTY from `touchmove sim`).
    Port(PathBuf),
    /// The board whose DGT serial number is this, on whichever port it is found.
    Serial(String),
    /// The next detected board not claimed by another entry.
    Auto,
    /// The board with this serial number on the DGT bus chain at `port`: its bus address is
    /// the serial number's value.
    Bus {
        /// The chain's serial port.
        port: PathBuf,
        /// The board's serial number (1 to 16383).
        serial: String,
    },
}

impl std::fmt::Display for BoardSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BoardSource::Port(p) => write!(f, "port {}", p.display()),
            BoardSource::Serial(s) => write!(f, "board serial {s}"),
            BoardSource::Auto => write!(f, "auto-detected port"),
            BoardSource::Bus { port, serial } => {
                write!(f, "board serial {serial} on the bus at {}", port.display())
            }
        }
    }
}

/// One board of the event: where it is and who plays on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardConfig {
    /// Board number within the round (the `K` of `game-K.pgn` and `Round "N.K"`).
    pub number: u32,
    /// Where the board is connected.
    pub source: BoardSource,
    /// The kind of board (DGT unless the event file or `--port KIND:PATH` says otherwise).
    pub kind: BoardKind,
    /// What the board's LEDs show (boards with LEDs only): the event's `leds` unless the
    /// board's entry says otherwise.
    pub leds: LedMode,
    /// The player of the white pieces.
    pub white: Player,
    /// The player of the black pieces.
    pub black: Player,
}

/// An event: what the recorder needs to know to write its PGN files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventConfig {
    /// Event tag.
    pub event: String,
    /// Site tag.
    pub site: String,
    /// Date tag (`YYYY.MM.DD`; `????.??.??` when unknown).
    pub date: String,
    /// Round number.
    pub round: u32,
    /// Time control in PGN TimeControl syntax, e.g. `40/5400+30:1800+30`, `300+2`, `d5400+30`
    /// (a `d` before the increment marks a delay). `None` when not known: no software clock.
    pub time_control: Option<String>,
    /// What the LEDs of boards that have them show, unless a board's entry says otherwise:
    /// off at an event (lights that guide a player are assistance).
    pub leds: LedMode,
    /// The boards, in the order given.
    pub boards: Vec<BoardConfig>,
}

impl Default for EventConfig {
    fn default() -> EventConfig {
        EventConfig {
            event: "touchmove".to_string(),
            site: "?".to_string(),
            date: "????.??.??".to_string(),
            round: 1,
            time_control: None,
            leds: LedMode::Off,
            boards: Vec::new(),
        }
    }
}

/// Where each board was configured, by board number ("event.toml:12, serial = \"24587\""),
/// for messages about it.
pub type BoardOrigins = std::collections::BTreeMap<u32, String>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    leds: Option<Spanned<String>>,
    event: Option<String>,
    site: Option<String>,
    date: Option<String>,
    round: Option<Spanned<i64>>,
    time_control: Option<Spanned<String>>,
    pairings: Option<Spanned<String>>,
    encoding: Option<Spanned<String>>,
    /// A secret, kept out of [`EventConfig`] (which travels to the cluster's other PCs).
    pegasus_key: Option<Spanned<String>>,
    /// The round's, not the event's boards: kept out of [`EventConfig`], which travels to the
    /// cluster's other PCs.
    broadcast_delay: Option<Spanned<String>>,
    #[serde(default)]
    board: Vec<Spanned<RawBoard>>,
    /// Read by `cluster::settings`; kept as written so that the file stays one file.
    cluster: Option<toml::Table>,
}

/// What an event file says besides the event itself, from the same parse.
#[derive(Debug, Clone, Default)]
pub(super) struct FileExtras {
    /// `pegasus_key`, read.
    pub pegasus_key: Option<DeveloperKey>,
    /// `encoding`: the TRF's.
    pub encoding: Option<Encoding>,
    /// The `[cluster]` table as written.
    pub cluster: Option<toml::Table>,
    /// `broadcast_delay`: the public broadcast's transmission delay.
    pub broadcast_delay: Option<Duration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBoard {
    number: Spanned<i64>,
    port: Option<Spanned<String>>,
    serial: Option<Spanned<String>>,
    bus: Option<Spanned<String>>,
    kind: Option<Spanned<String>>,
    leds: Option<Spanned<String>>,
    white: Option<Player>,
    black: Option<Player>,
}

/// 1-based line number of a byte offset.
pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The field named in a toml error message ("unknown field `x`", "missing field `x`").
fn field_in_message(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(message[start..start + len].to_string())
}

impl EventConfig {
    /// Parses configuration text; `path` is used in messages and to resolve `pairings`.
    pub fn parse(text: &str, path: &Path) -> Result<EventConfig, ConfigError> {
        Self::parse_file(text, path).map(|(config, _, _)| config)
    }

    /// Parses event file text: the event, where each board was configured, and what the
    /// file says besides; `path` is used in messages and to resolve the paths the file
    /// names. A `pairings` file named in it is loaded too.
    pub(super) fn parse_file(
        text: &str,
        path: &Path,
    ) -> Result<(EventConfig, BoardOrigins, FileExtras), ConfigError> {
        let invalid = |offset: usize, field: &str, message: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            line: line_of(text, offset),
            field: field.to_string(),
            message,
        };
        let raw: RawEvent = toml::from_str(text).map_err(|e| {
            let offset = e.span().map(|s| s.start).unwrap_or(0);
            let field = field_in_message(e.message()).unwrap_or_else(|| "syntax".to_string());
            invalid(offset, &field, e.message().trim().to_string())
        })?;
        let mut config = EventConfig::default();
        if let Some(event) = raw.event {
            config.event = event;
        }
        if let Some(site) = raw.site {
            config.site = site;
        }
        if let Some(date) = raw.date {
            config.date = date;
        }
        if let Some(round) = raw.round {
            config.round = check_round(*round.get_ref())
                .map_err(|message| invalid(round.span().start, "round", message))?;
        }
        if let Some(tc) = raw.time_control {
            if let Err(message) = check_time_control(tc.get_ref()) {
                return Err(invalid(tc.span().start, "time_control", message));
            }
            config.time_control = Some(tc.into_inner());
        }
        let base = path.parent().unwrap_or_else(|| Path::new("."));
        let mut extras = FileExtras {
            cluster: raw.cluster,
            ..FileExtras::default()
        };
        if let Some(key) = raw.pegasus_key {
            let read = DeveloperKey::read(key.get_ref(), base)
                .map_err(|message| invalid(key.span().start, "pegasus_key", message))?;
            extras.pegasus_key = Some(read);
        }
        if let Some(encoding) = raw.encoding {
            let read = encoding
                .get_ref()
                .parse()
                .map_err(|message| invalid(encoding.span().start, "encoding", message))?;
            extras.encoding = Some(read);
        }
        if let Some(delay) = raw.broadcast_delay {
            let read = parse_broadcast_delay(delay.get_ref())
                .map_err(|message| invalid(delay.span().start, "broadcast_delay", message))?;
            extras.broadcast_delay = Some(read);
        }
        if let Some(mode) = raw.leds {
            config.leds = mode
                .get_ref()
                .parse()
                .map_err(|message| invalid(mode.span().start, "leds", message))?;
        }
        let mut origins = BoardOrigins::new();
        let mut lines: std::collections::BTreeMap<u32, usize> = Default::default();
        for spanned in raw.board {
            let board = spanned.into_inner();
            let number = check_board(*board.number.get_ref())
                .map_err(|message| invalid(board.number.span().start, "number", message))?;
            if config.boards.iter().any(|b| b.number == number) {
                return Err(invalid(
                    board.number.span().start,
                    "number",
                    format!("board {number} is listed twice"),
                ));
            }
            let (source, offset) = match (board.bus, board.port, board.serial) {
                (Some(b), None, Some(s)) => {
                    if crate::wire::dgt::bus::address_of_serial(s.get_ref()).is_none() {
                        return Err(invalid(
                            s.span().start,
                            "serial",
                            format!(
                                "{:?} is not a bus board's serial number: give the number on \
                                 the board's label, from 1 to 16383",
                                s.get_ref()
                            ),
                        ));
                    }
                    let source = BoardSource::Bus {
                        port: PathBuf::from(b.get_ref()),
                        serial: s.get_ref().trim().to_string(),
                    };
                    (source, b.span().start)
                }
                (Some(b), _, None) => {
                    return Err(invalid(
                        b.span().start,
                        "bus",
                        "a board on a bus chain is found by its serial number: add serial = \
                         \"…\" (the number on the board's label)"
                            .to_string(),
                    ));
                }
                (Some(_), Some(p), Some(_)) => {
                    return Err(invalid(
                        p.span().start,
                        "port",
                        "give either `port` or `bus` for a board, not both".to_string(),
                    ));
                }
                (None, port, serial) => match (port, serial) {
                    (Some(p), None) if p.get_ref() == "auto" => (BoardSource::Auto, p.span().start),
                    (Some(p), None) => (
                        BoardSource::Port(PathBuf::from(p.get_ref())),
                        p.span().start,
                    ),
                    (None, Some(s)) if s.get_ref().trim().is_empty() => {
                        return Err(invalid(
                            s.span().start,
                            "serial",
                            "the serial number is empty; give the number on the board's label, or \
                         port = \"auto\""
                                .to_string(),
                        ));
                    }
                    (None, Some(s)) => (
                        BoardSource::Serial(s.get_ref().trim().to_string()),
                        s.span().start,
                    ),
                    (None, None) => (BoardSource::Auto, board.number.span().start),
                    (Some(p), Some(_)) => {
                        return Err(invalid(
                            p.span().start,
                            "port",
                            "give either `port` or `serial` for a board, not both".to_string(),
                        ));
                    }
                },
            };
            let line = line_of(text, offset);
            if source != BoardSource::Auto
                && let Some(other) = config.boards.iter().find(|b| b.source == source)
            {
                let field = match source {
                    BoardSource::Serial(_) | BoardSource::Bus { .. } => "serial",
                    _ => "port",
                };
                let other_line = lines.get(&other.number).copied().unwrap_or(0);
                return Err(invalid(
                    offset,
                    field,
                    format!(
                        "board {number} (line {line}) and board {} (line {other_line}) both name \
                         {source}; each board needs its own {field}",
                        other.number
                    ),
                ));
            }
            lines.insert(number, line);
            let origin = match &source {
                BoardSource::Serial(s) => format!("{}:{line}, serial = \"{s}\"", path.display()),
                BoardSource::Auto => format!("{}:{line}, auto", path.display()),
                BoardSource::Port(_) | BoardSource::Bus { .. } => {
                    format!("{}:{line}", path.display())
                }
            };
            origins.insert(number, origin);
            let kind = match &board.kind {
                None => BoardKind::Dgt,
                Some(k) => k
                    .get_ref()
                    .parse()
                    .map_err(|message| invalid(k.span().start, "kind", message))?,
            };
            let leds = match &board.leds {
                None => config.leds,
                Some(m) => m
                    .get_ref()
                    .parse()
                    .map_err(|message| invalid(m.span().start, "leds", message))?,
            };
            if let BoardSource::Port(p) = &source {
                check_ble_port(kind, &p.to_string_lossy())
                    .map_err(|message| invalid(offset, "port", message))?;
            }
            if kind != BoardKind::Dgt && !matches!(source, BoardSource::Port(_)) {
                let at = board.kind.as_ref().map_or(offset, |k| k.span().start);
                return Err(invalid(
                    at,
                    "kind",
                    format!(
                        "a {kind} board is found by its port only: give port = \"/dev/…\" \
                         (`touchmove ports` lists them)"
                    ),
                ));
            }
            config.boards.push(BoardConfig {
                number,
                source,
                kind,
                leds,
                white: board.white.unwrap_or_else(|| Player::named("?")),
                black: board.black.unwrap_or_else(|| Player::named("?")),
            });
        }
        if let Some(pairings) = raw.pairings {
            let file = path
                .parent()
                .unwrap_or_else(|| Path::new("."))
                .join(pairings.get_ref());
            let list = super::pairings::load_round(&file, config.round, extras.encoding)
                .map_err(|e| invalid(pairings.span().start, "pairings", e.to_string()))?;
            if let Some(problem) = list.problems.first() {
                return Err(invalid(
                    pairings.span().start,
                    "pairings",
                    problem.to_string(),
                ));
            }
            config.apply_pairings(&list.pairings);
            for b in &config.boards {
                origins
                    .entry(b.number)
                    .or_insert_with(|| format!("pairings {}, auto", file.display()));
            }
        }
        Ok((config, origins, extras))
    }

    /// Puts the players of `pairings` on the boards with the same numbers (boards missing from
    /// the configuration are added with an automatic port). Forfeited games are not recorded.
    pub fn apply_pairings(&mut self, pairings: &[super::pairings::Pairing]) {
        for p in pairings {
            if p.forfeit || p.round.is_some_and(|round| round != self.round) {
                continue;
            }
            match self.boards.iter_mut().find(|b| b.number == p.board) {
                Some(b) => {
                    b.white = p.white.clone();
                    b.black = p.black.clone();
                }
                None => self.boards.push(BoardConfig {
                    number: p.board,
                    source: BoardSource::Auto,
                    kind: BoardKind::Dgt,
                    leds: self.leds,
                    white: p.white.clone(),
                    black: p.black.clone(),
                }),
            }
        }
        self.boards.sort_by_key(|b| b.number);
    }

    /// The board with this number.
    pub fn board(&self, number: u32) -> Option<&BoardConfig> {
        self.boards.iter().find(|b| b.number == number)
    }
}

/// Longest transmission delay accepted: two hours (lichess's own delay setting stops at one).
pub const MAX_BROADCAST_DELAY: Duration = Duration::from_secs(2 * 3600);

/// Reads a transmission delay: `0`, or numbers with units `h`, `m` (or `min`), `s`, e.g.
/// `15m`, `90s`, `1h30m`; at most [`MAX_BROADCAST_DELAY`].
pub fn parse_broadcast_delay(text: &str) -> Result<Duration, String> {
    let wrong = || {
        format!(
            "{text:?} is not a delay: give a number with its unit, e.g. \"15m\", \"90s\" or              \"1h30m\" (\"0\" for none)"
        )
    };
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    match compact.as_str() {
        "0" => return Ok(Duration::ZERO),
        "" => return Err(wrong()),
        _ => {}
    }
    let mut total: u64 = 0;
    let mut rest = compact.as_str();
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let number: u64 = rest[..digits].parse().map_err(|_| wrong())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "h" => 3600,
            "m" | "min" => 60,
            "s" => 1,
            _ => return Err(wrong()),
        };
        rest = &rest[unit_len..];
        total = number
            .checked_mul(seconds)
            .and_then(|s| total.checked_add(s))
            .ok_or_else(wrong)?;
    }
    let delay = Duration::from_secs(total);
    if delay > MAX_BROADCAST_DELAY {
        return Err(format!(
            "{text:?} is longer than the longest delay accepted, {} hours",
            MAX_BROADCAST_DELAY.as_secs() / 3600
        ));
    }
    Ok(delay)
}

/// A delay as people say it: "15 min", "90 s", "1 h 30 min", "none".
pub fn describe_delay(delay: Duration) -> String {
    let s = delay.as_secs();
    match (s / 3600, s % 3600 / 60, s % 60) {
        (0, 0, 0) => "none".to_string(),
        (0, 0, sec) => format!("{sec} s"),
        (0, min, 0) => format!("{min} min"),
        (0, min, sec) => format!("{min} min {sec} s"),
        (h, 0, 0) => format!("{h} h"),
        (h, min, _) => format!("{h} h {min} min"),
    }
}

/// Checks a PGN TimeControl value, saying what is wrong.
pub fn check_time_control(text: &str) -> Result<(), String> {
    crate::clock::TimeControl::parse(text)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<EventConfig, ConfigError> {
        EventConfig::parse(text, Path::new("event.toml"))
    }

    #[test]
    fn reads_a_full_event() {
        let c = parse(
            r#"
event = "Open"
site = "Oslo"
round = 3
time_control = "40/5400+30:1800+30"

[[board]]
number = 2
serial = "24587"
white = { name = "A, B", fide_id = 1503014, title = "GM", rating = 2830 }

[[board]]
number = 1
port = "auto"
"#,
        )
        .unwrap();
        assert_eq!(c.round, 3);
        assert_eq!(c.boards.len(), 2);
        assert_eq!(c.boards[0].source, BoardSource::Serial("24587".into()));
        assert_eq!(c.boards[0].white.fide_id, Some(1503014));
        assert_eq!(c.boards[1].source, BoardSource::Auto);
        assert_eq!(c.board(1).unwrap().black.name, "?");
    }

    #[test]
    fn a_typo_names_line_and_field() {
        let err = parse("event = \"x\"\n\n[[board]]\nnumber = 1\nprot = \"/dev/x\"\n").unwrap_err();
        match err {
            ConfigError::Invalid { line, field, .. } => {
                assert_eq!(line, 5);
                assert_eq!(field, "prot");
            }
            other => panic!("{other}"),
        }
    }

    #[test]
    fn two_boards_on_one_port_are_refused() {
        let err = parse(
            "[[board]]\nnumber = 1\nport = \"/dev/a\"\n[[board]]\nnumber = 2\nport = \"/dev/a\"\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("event.toml:6: port")
                && text.contains("board 2 (line 6) and board 1 (line 3)"),
            "{text}"
        );
    }

    #[test]
    fn two_boards_with_one_serial_are_refused_naming_both_lines() {
        let (config, origins, _) = EventConfig::parse_file(
            "[[board]]\nnumber = 1\nserial = \"10001\"\n[[board]]\nnumber = 2\nport = \"auto\"\n",
            Path::new("event.toml"),
        )
        .unwrap();
        assert_eq!(config.boards[0].source, BoardSource::Serial("10001".into()));
        assert_eq!(origins[&1], "event.toml:3, serial = \"10001\"");
        assert_eq!(origins[&2], "event.toml:6, auto");
        let err = parse(
            "[[board]]\nnumber = 1\nserial = \"10001\"\n\n[[board]]\nnumber = 2\nserial = \" 10001\"\n",
        )
        .unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("event.toml:7: serial")
                && text.contains("board 2 (line 7) and board 1 (line 3)")
                && text.contains("board serial 10001"),
            "{text}"
        );
        let err = parse("[[board]]\nnumber = 1\nserial = \"\"\n").unwrap_err();
        assert!(err.to_string().contains("event.toml:3: serial"), "{err}");
    }

    #[test]
    fn bus_boards_are_named_by_chain_port_and_serial() {
        let c = parse(
            "[[board]]\nnumber = 1\nbus = \"/dev/ttyUSB0\"\nserial = \"01025\"\n\
             [[board]]\nnumber = 2\nbus = \"/dev/ttyUSB0\"\nserial = \"1026\"\n",
        )
        .unwrap();
        assert_eq!(
            c.boards[0].source,
            BoardSource::Bus {
                port: "/dev/ttyUSB0".into(),
                serial: "01025".into()
            }
        );
        let e = parse("[[board]]\nnumber = 1\nbus = \"/dev/a\"\n").unwrap_err();
        assert!(e.to_string().contains("event.toml:3: bus"), "{e}");
        let e = parse("[[board]]\nnumber = 1\nbus = \"/dev/a\"\nserial = \"20000\"\n").unwrap_err();
        assert!(
            e.to_string().contains("event.toml:4: serial") && e.to_string().contains("16383"),
            "{e}"
        );
        let e = parse(
            "[[board]]\nnumber = 1\nbus = \"/dev/a\"\nserial = \"7\"\n\
             [[board]]\nnumber = 2\nbus = \"/dev/a\"\nserial = \"7\"\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("board 2 (line 7)"), "{e}");
    }

    #[test]
    fn a_pegasus_board_and_its_key_are_read_and_a_bad_key_names_its_line() {
        let c = parse(
            "pegasus_key = \"01 02 03 04 05 06\"\n[[board]]\nnumber = 1\nport = \"/dev/p\"\n\
             kind = \"pegasus\"\n",
        )
        .unwrap();
        assert_eq!(c.boards[0].kind, BoardKind::Pegasus);
        let e = parse("event = \"x\"\npegasus_key = \"01 02\"\n").unwrap_err();
        assert!(e.to_string().contains("event.toml:2: pegasus_key"), "{e}");
        let e = parse("[[board]]\nnumber = 1\nserial = \"1\"\nkind = \"pegasus\"\n").unwrap_err();
        assert!(e.to_string().contains("found by its port only"), "{e}");
    }

    #[test]
    fn a_broadcast_delay_is_read_with_its_unit_and_a_bad_one_names_its_line() {
        let minutes = |m: u64| Duration::from_secs(60 * m);
        assert_eq!(parse_broadcast_delay("15m"), Ok(minutes(15)));
        assert_eq!(parse_broadcast_delay("1h30m"), Ok(minutes(90)));
        assert_eq!(parse_broadcast_delay("90 s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_broadcast_delay("20min"), Ok(minutes(20)));
        assert_eq!(parse_broadcast_delay("0"), Ok(Duration::ZERO));
        for wrong in ["15", "", "m", "15 minutes", "-5m", "3h"] {
            assert!(parse_broadcast_delay(wrong).is_err(), "{wrong:?}");
        }
        let delay_of = |text: &str| {
            EventConfig::parse_file(text, Path::new("event.toml"))
                .map(|(_, _, e)| e.broadcast_delay)
        };
        assert_eq!(
            delay_of("event = \"x\"\nbroadcast_delay = \"15m\"\n").unwrap(),
            Some(minutes(15))
        );
        assert_eq!(delay_of("event = \"x\"\n").unwrap(), None);
        let e = delay_of("event = \"x\"\n\nbroadcast_delay = \"15\"\n").unwrap_err();
        assert!(
            e.to_string().contains("event.toml:3: broadcast_delay"),
            "{e}"
        );
        let e = parse("broadcast_delay = \"soon\"\n").unwrap_err();
        assert!(
            e.to_string().contains("event.toml:1: broadcast_delay"),
            "{e}"
        );
    }

    #[test]
    fn bad_round_and_duplicate_board() {
        assert!(
            parse("round = 0\n")
                .unwrap_err()
                .to_string()
                .contains("event.toml:1: round")
        );
        let e = parse("[[board]]\nnumber = 1\n[[board]]\nnumber = 1\n").unwrap_err();
        assert!(e.to_string().contains(":4: number"), "{e}");
    }
}
