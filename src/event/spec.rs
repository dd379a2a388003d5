//! One description of an event and the round to open, and what each of its rounds is.
//!
//! The command line, the demo and the arbiter's "Start round N+1" all describe the event the
//! same way, with an [`EventSpec`]: the event file, what the command line changes in it, the
//! boards it adds and the pairings file. [`EventSpec::read`] reads the event file, once, and
//! gives the event's boards before any pairings; [`EventSpec::round`] puts round N's players on
//! them, reading the pairings file again (the pairing program has written the new round into
//! it).

use std::path::{Path, PathBuf};

use super::bounds::{check_board, check_round};
use super::config::{BoardConfig, BoardSource, EventConfig, check_time_control};
use super::file::EventFile;
use super::pairings::{self, RoundPairings};
use super::player::Player;
use super::trf::Encoding;
use crate::board::kind::BoardKind;
use crate::board::leds::LedMode;
use crate::wire::gatt::check_ble_port;
use crate::wire::pegasus::DeveloperKey;

/// An event as its organiser describes it: everything a recorder needs to open any round.
#[derive(Debug, Clone, Default)]
pub struct EventSpec {
    /// The event as given without a file (the demo's virtual boards); the file, when there is
    /// one, takes its place.
    pub given: EventConfig,
    /// The event file (TOML).
    pub file: Option<PathBuf>,
    /// Event name over the file's.
    pub event: Option<String>,
    /// The round to open first, over the file's.
    pub round: Option<u32>,
    /// Time control (PGN syntax) over the file's.
    pub time_control: Option<String>,
    /// Serial ports of further boards, numbered after the file's (or taken by its `auto`
    /// boards).
    pub ports: Vec<PathBuf>,
    /// Also record every DGT board found by probing (`--port auto`); the recorder probes.
    pub detect_boards: bool,
    /// Pairings read for each round: a FIDE TRF, a PGN of headers or a CSV.
    pub pairings: Option<PathBuf>,
    /// The DGT Pegasus developer key over the file's `pegasus_key`: its six bytes in hex, or
    /// a file holding them (relative to the working directory).
    pub pegasus_key: Option<String>,
    /// The encoding of a TRF of pairings over the file's `encoding`; `None`: guessed.
    pub encoding: Option<Encoding>,
}

/// A round ready to be recorded: its boards with their players, and what the arbiter should
/// read about it.
#[derive(Debug, Clone)]
pub struct RoundPlan {
    /// The event with this round's number and players.
    pub config: EventConfig,
    /// How the pairings were read, byes, forfeits.
    pub notes: Vec<String>,
    /// Pairings that could not be used, each naming its file and line; the others stand.
    pub problems: Vec<String>,
}

impl EventSpec {
    /// The event `config` exactly (the demo's boards and players).
    pub fn of(config: EventConfig) -> EventSpec {
        EventSpec {
            given: config,
            ..EventSpec::default()
        }
    }

    /// Reads the event file (once) and puts the command line over it: the event's boards
    /// before any pairings, with where each was configured, the round to open first, the
    /// Pegasus key and the TRF's encoding.
    pub fn read(&self) -> Result<EventFile, String> {
        let mut event = match &self.file {
            Some(path) => EventFile::load(path).map_err(|e| e.to_string())?,
            None => EventFile::of(self.given.clone()),
        };
        let config = &mut event.config;
        if let Some(name) = &self.event {
            config.event = name.clone();
        }
        if let Some(round) = self.round {
            config.round = check_round(i64::from(round)).map_err(|e| format!("--round: {e}"))?;
        }
        if let Some(tc) = &self.time_control {
            check_time_control(tc).map_err(|e| format!("--time-control: {e}"))?;
            config.time_control = Some(tc.clone());
        }
        for given in &self.ports {
            add_port(&mut event, given)?;
        }
        if let Some(given) = &self.pegasus_key {
            let key = DeveloperKey::read(given, Path::new("."))
                .map_err(|e| format!("--pegasus-key: {e}"))?;
            event.pegasus_key = Some(key);
        }
        if self.encoding.is_some() {
            event.encoding = self.encoding;
        }
        Ok(event)
    }

    /// Round `round` on `boards` (from [`EventSpec::read`], with any detected boards): the
    /// players from the pairings file when there is one (a TRF read in `encoding`, or
    /// guessing it), else those of the event file or the demo for its first round and unknown
    /// players for later rounds. A pairings file without that round, or unreadable, is an
    /// error: recording the wrong round helps nobody.
    pub fn round(
        &self,
        boards: &EventConfig,
        round: u32,
        encoding: Option<Encoding>,
    ) -> Result<RoundPlan, String> {
        let mut config = boards.clone();
        config.round = check_round(i64::from(round))?;
        if round != boards.round {
            for b in &mut config.boards {
                b.white = Player::named("?");
                b.black = Player::named("?");
            }
        }
        let mut plan = RoundPlan {
            config,
            notes: Vec::new(),
            problems: Vec::new(),
        };
        if let Some(path) = &self.pairings {
            let loaded = pairings::load_round(path, round, encoding).map_err(|e| e.to_string())?;
            plan.notes.extend(loaded.notes.iter().cloned());
            plan.problems = place_pairings(&mut plan.config, &loaded);
        }
        if plan.config.boards.is_empty() {
            return Err(format!(
                "no boards to record in round {round}: list [[board]] entries in the event file \
                 or give pairings (`touchmove record` also takes --port PATH or --port auto)"
            ));
        }
        Ok(plan)
    }
}

/// Adds the board of a `--port` value (taking an `auto` board of the file when there is one).
fn add_port(event: &mut EventFile, given: &Path) -> Result<(), String> {
    let port = format!("--port {}", given.display());
    let (kind, path) = port_of_kind(given)?;
    let source = BoardSource::Port(path.clone());
    let config = &mut event.config;
    if let Some(b) = config.boards.iter().find(|b| b.source == source) {
        return Err(format!(
            "port {} is given twice (board {} already uses it); two boards cannot share a port",
            path.display(),
            b.number
        ));
    }
    if let Some(b) = config
        .boards
        .iter_mut()
        .find(|b| b.source == BoardSource::Auto)
    {
        b.source = source;
        b.kind = kind;
        event.origins.insert(b.number, port);
        return Ok(());
    }
    let number = next_board_number(config).map_err(|e| format!("{port}: {e}"))?;
    let mut board = unpaired_board(number, source);
    board.kind = kind;
    board.leds = config.leds;
    config.boards.push(board);
    event.origins.insert(number, port);
    Ok(())
}

/// A board with unknown players.
pub fn unpaired_board(number: u32, source: BoardSource) -> BoardConfig {
    BoardConfig {
        number,
        source,
        kind: BoardKind::Dgt,
        leds: LedMode::Off,
        white: Player::named("?"),
        black: Player::named("?"),
    }
}

/// A `--port` value: `PATH` (a DGT board) or `KIND:PATH`, e.g. `millennium:/dev/ttyUSB0`;
/// a Bluetooth LE board is `KIND:ble:ADDRESS-OR-NAME` (the address has colons of its own).
fn port_of_kind(given: &Path) -> Result<(BoardKind, PathBuf), String> {
    let value = given.to_string_lossy();
    match value.split_once(':') {
        Some(("ble", _)) => Err(format!(
            "--port {value}: a Bluetooth LE port needs the board's kind in front: \
             --port pegasus:{value}, millennium:{value} or chessnut:{value}"
        )),
        Some((kind, path)) if !kind.contains('/') && !kind.contains('\\') => {
            let kind = kind.parse().map_err(|e| format!("--port {value}: {e}"))?;
            check_ble_port(kind, path).map_err(|e| format!("--port {value}: {e}"))?;
            Ok((kind, PathBuf::from(path)))
        }
        _ => Ok((BoardKind::Dgt, given.to_path_buf())),
    }
}

/// The number after the highest board's, within [`super::bounds::MAX_BOARD`].
pub fn next_board_number(config: &EventConfig) -> Result<u32, String> {
    let highest = config.boards.iter().map(|b| b.number).max().unwrap_or(0);
    check_board(i64::from(highest) + 1)
        .map_err(|e| format!("no board number left after board {highest} ({e})"))
}

/// Puts the pairings on the boards. When the event names no board, every pairing gets a
/// board found by probing ("auto"); otherwise pairings beyond the boards are left out, each
/// with a message naming its line. Returns the problems for the arbiter.
fn place_pairings(config: &mut EventConfig, loaded: &RoundPairings) -> Vec<String> {
    let mut messages: Vec<String> = loaded.problems.iter().map(|e| e.to_string()).collect();
    if config.boards.is_empty() {
        config.apply_pairings(&loaded.pairings);
        return messages;
    }
    let (placed, extra): (Vec<_>, Vec<_>) = loaded
        .pairings
        .iter()
        .cloned()
        .partition(|p| config.board(p.board).is_some());
    let boards: Vec<String> = config.boards.iter().map(|b| b.number.to_string()).collect();
    for p in &extra {
        messages.push(format!(
            "{}:{}: board: more pairings than boards: board {} ({} – {}) has no board to \
             record on (boards: {}); connect one and add it with --port, or a [[board]] entry, \
             and restart",
            loaded.source.display(),
            p.line,
            p.board,
            p.white.name,
            p.black.name,
            boards.join(", ")
        ));
    }
    config.apply_pairings(&placed);
    messages
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ports(list: &[&str]) -> EventSpec {
        EventSpec {
            ports: list.iter().map(PathBuf::from).collect(),
            round: Some(4),
            ..EventSpec::default()
        }
    }

    #[test]
    fn ports_become_numbered_boards() {
        let EventFile {
            config: c, origins, ..
        } = ports(&["/dev/a", "/dev/b"]).read().unwrap();
        assert_eq!(origins[&2], "--port /dev/b");
        assert_eq!(c.round, 4);
        assert_eq!(c.boards.len(), 2);
        assert_eq!(c.boards[1].number, 2);
        assert_eq!(c.boards[1].source, BoardSource::Port("/dev/b".into()));
    }

    #[test]
    fn a_bluetooth_le_port_keeps_its_address_and_needs_a_kind_that_speaks_ble() {
        let given = ports(&["pegasus:ble:C4:DE:E2:01:02:0F"]).read();
        if cfg!(feature = "ble") {
            let c = given.unwrap().config;
            assert_eq!(c.boards[0].kind, BoardKind::Pegasus);
            assert_eq!(
                c.boards[0].source,
                BoardSource::Port("ble:C4:DE:E2:01:02:0F".into())
            );
        } else {
            let e = given.unwrap_err();
            assert!(e.contains("--features ble"), "{e}");
        }
        let e = ports(&["ble:C4:DE:E2:01:02:0F"]).read().unwrap_err();
        assert!(e.contains("--port pegasus:ble:C4:DE:E2:01:02:0F"), "{e}");
        let e = ports(&["dgt:ble:C4:DE:E2:01:02:0F"]).read().unwrap_err();
        assert!(e.contains("no Bluetooth LE link"), "{e}");
    }

    #[test]
    fn one_port_twice_and_a_bad_time_control_are_refused() {
        let e = ports(&["/dev/a", "/dev/a"]).read().unwrap_err();
        assert!(e.contains("two boards cannot share a port"), "{e}");
        let spec = EventSpec {
            time_control: Some("40/".into()),
            ..EventSpec::default()
        };
        assert!(spec.read().unwrap_err().contains("--time-control"));
    }

    #[test]
    fn a_later_round_reads_its_pairings_and_forgets_the_first_rounds_players() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("p.csv");
        std::fs::write(&csv, "round,board,white,black\n2,1,A,B\n2,3,C,D\n").unwrap();
        let mut spec = ports(&["/dev/a", "/dev/b"]);
        spec.round = Some(1);
        let mut boards = spec.read().unwrap().config;
        boards.boards[1].white = Player::named("Kept in round 1");
        let first = spec.round(&boards, 1, None).unwrap();
        assert_eq!(first.config.boards[1].white.name, "Kept in round 1");
        spec.pairings = Some(csv);
        let second = spec.round(&boards, 2, None).unwrap();
        assert_eq!(second.config.round, 2);
        assert_eq!(second.config.boards[0].white.name, "A");
        assert_eq!(second.config.boards[1].white.name, "?");
        assert_eq!(second.problems.len(), 1, "{:?}", second.problems);
        assert!(
            second.problems[0].contains("p.csv:3: board: more pairings than boards: board 3"),
            "{:?}",
            second.problems
        );
        let e = EventSpec::default()
            .round(&EventConfig::default(), 1, None)
            .unwrap_err();
        assert!(e.contains("no boards to record in round 1"), "{e}");
    }
}
