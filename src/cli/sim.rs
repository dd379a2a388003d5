//! `touchmove sim`: a virtual board (DGT, or with `--kind` another kind) on a pseudo-terminal
//! playing a game from a PGN file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use shakmaty::{Board, Chess, Move, Position};

use crate::board::Observation;
use crate::board::kind::BoardKind;
use crate::board::orientation::Orientation;
use crate::record::GameRecord;
use crate::sim::hands::pgn_games::{read_record, start_and_moves};
use crate::sim::hands::{Noise, simulate_game};
use crate::sim::snapshot_board::{SnapshotBoard, SnapshotBoardConfig};
use crate::sim::virtual_chessnut_hid::{ChessnutHidConfig, VirtualChessnutHid};
use crate::sim::virtual_pegasus::{VirtualPegasus, VirtualPegasusConfig};

use crate::sim::virtual_board::timeline::{Pace, lift_place};
use crate::sim::virtual_board::{VirtualBoard, VirtualBoardConfig};

/// Arguments of `touchmove sim`.
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// PGN file holding the game to play.
    #[arg(long)]
    pub pgn: PathBuf,
    /// Which game of the file to play (1 = the first).
    #[arg(long, default_value_t = 1)]
    pub game: usize,
    /// Speed factor: 1 plays in real time (2 s per move), 10 ten times faster.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Present the board turned round (White at the connector end).
    #[arg(long)]
    pub rotated: bool,
    /// Port path to create (a symbolic link to the pseudo-terminal); default
    /// `$TMPDIR/touchmove-sim-<pid>/dgt0`.
    #[arg(long)]
    pub port: Option<PathBuf>,
    /// Time control of the clock, minutes+increment seconds.
    #[arg(long, default_value = "5+5")]
    pub clock: String,
    /// Play the game with a model of human hands (scan effects, slides, adjustments, …)
    /// instead of one careful lift and place per move.
    #[arg(long, value_enum)]
    pub hands: Option<Noise>,
    /// Seed of the hand model.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// The serial line's speed in baud (8N1), as a real board's 9600; 0 for no limit.
    #[arg(long, default_value_t = 0)]
    pub baud: u32,
    /// Keep no EEPROM move log (a board without one: the recorder then reads what it missed
    /// from the board's position alone).
    #[arg(long)]
    pub no_log: bool,
    /// Exit when the game has been played instead of waiting for Ctrl-C.
    #[arg(long)]
    pub exit_when_done: bool,
    /// The kind of board: dgt, millennium, certabo, sentio, chessnut or pegasus.
    #[arg(long, default_value = "dgt")]
    pub kind: BoardKind,
    /// A Chessnut on USB HID instead of a serial link: the port is a socket whose messages
    /// are the board's reports, which `record --port chessnut:PATH` opens as a hidraw node.
    #[arg(long)]
    pub hid: bool,
}

/// Runs `touchmove sim`.
pub fn run(args: SimArgs) -> ExitCode {
    match tokio::runtime::Runtime::new() {
        Ok(rt) => match rt.block_on(simulate(args)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("touchmove sim: {message}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("touchmove sim: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn simulate(args: SimArgs) -> Result<(), String> {
    if !(args.speed > 0.0 && args.speed.is_finite()) {
        return Err(format!("--speed {} must be a positive number", args.speed));
    }
    let clock = parse_time_control(&args.clock)?;
    let record = read_record(&args.pgn, args.game)?;
    let (start, moves) = start_and_moves(&record)
        .map_err(|e| format!("{} game {}: {e}", args.pgn.display(), args.game))?;
    let script = script_of(&args, &record, &start, &moves)?;
    let (port, own_dir) = match args.port.clone() {
        Some(p) => (p, None),
        None => {
            let dir = std::env::temp_dir().join(format!("touchmove-sim-{}", std::process::id()));
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            (dir.join("dgt0"), Some(dir))
        }
    };
    let result = play_board(&args, &port, script, start.board(), moves.len(), clock).await;
    if let Some(dir) = own_dir {
        let _ = std::fs::remove_dir(dir);
    }
    result
}

/// What the board shows the game played: one careful lift and place per move, or the hands
/// of `--hands` (as a DGT board's sensors report them on a DGT board; as they happen on a
/// board of another kind, whose virtual board does its own sensing).
fn script_of(
    args: &SimArgs,
    record: &GameRecord,
    start: &Chess,
    moves: &[Move],
) -> Result<Vec<Observation>, String> {
    let Some(noise) = args.hands else {
        return Ok(lift_place(start, moves, Pace::default()));
    };
    let uci: Vec<String> = record.moves.iter().map(|m| m.uci.clone()).collect();
    let sim = simulate_game(
        record.start_fen.as_deref(),
        record.chess960,
        &uci,
        Some(&record.result),
        noise,
        args.seed,
    );
    match sim.error {
        Some(e) => Err(format!("{} game {}: {e}", args.pgn.display(), args.game)),
        None if args.kind == BoardKind::Dgt => Ok(sim.observations),
        None => Ok(sim.physical),
    }
}

/// Plays `script` on a virtual board of `args.kind` at `port`, starting from `initial`, with
/// a clock of `(base, increment)` milliseconds on a DGT board.
async fn play_board(
    args: &SimArgs,
    port: &Path,
    script: Vec<Observation>,
    initial: &Board,
    plies: usize,
    (base_ms, increment_ms): (u64, u64),
) -> Result<(), String> {
    if args.kind == BoardKind::Pegasus {
        let mut config = VirtualPegasusConfig::new(port, script);
        config.speed = args.speed;
        config.initial = initial.clone();
        return play_pegasus(config, plies, args.exit_when_done).await;
    }
    if args.hid {
        if args.kind != BoardKind::Chessnut {
            return Err(format!(
                "--hid: only a Chessnut speaks USB HID; use --kind chessnut, not {}",
                args.kind
            ));
        }
        let mut config = ChessnutHidConfig::new(port, script);
        config.speed = args.speed;
        config.initial = initial.clone();
        return play_chessnut_hid(config, plies, args.exit_when_done).await;
    }
    if args.kind != BoardKind::Dgt {
        let mut config = SnapshotBoardConfig::new(args.kind, port, script);
        config.speed = args.speed;
        config.initial = initial.clone();
        config.seed = args.seed;
        return play_snapshot(config, plies, args.exit_when_done).await;
    }
    let mut config = VirtualBoardConfig::new(port, script);
    config.speed = args.speed;
    if args.rotated {
        config.orientation = Orientation::Rotated;
    }
    config.base_time_ms = base_ms;
    config.increment_ms = increment_ms;
    config.initial = initial.clone();
    config.eeprom_log = !args.no_log;
    config.line_bytes_per_s = (args.baud > 0).then_some(args.baud / 10);
    play(config, plies, args.exit_when_done).await
}

/// Runs the board until the game is played (and then until Ctrl-C unless `exit_when_done`).
async fn play(
    config: VirtualBoardConfig,
    plies: usize,
    exit_when_done: bool,
) -> Result<(), String> {
    let port = config.path.clone();
    let board = VirtualBoard::spawn(config)
        .map_err(|e| format!("cannot open a pseudo-terminal at {}: {e}", port.display()))?;
    let target = std::fs::read_link(&port)
        .map(|t| t.display().to_string())
        .unwrap_or_default();
    println!("{}", port.display());
    eprintln!(
        "virtual DGT board on {} (-> {target}): {plies} moves, waiting for a host to set an \
         update mode; Ctrl-C stops",
        port.display()
    );
    tokio::select! {
        () = board.finished() => eprintln!("game played"),
        () = super::stop_requested() => return Ok(()),
    }
    // Let a connected host read the last messages before the port goes away.
    board.drained(Duration::from_secs(2)).await;
    if !exit_when_done {
        super::stop_requested().await;
    }
    Ok(())
}

/// Runs a virtual board of another kind until the game is played (and then until Ctrl-C
/// unless `exit_when_done`).
async fn play_snapshot(
    config: SnapshotBoardConfig,
    plies: usize,
    exit_when_done: bool,
) -> Result<(), String> {
    let port = config.path.clone();
    let kind = config.kind;
    let board = SnapshotBoard::spawn(config)
        .map_err(|e| format!("cannot open a pseudo-terminal at {}: {e}", port.display()))?;
    println!("{}", port.display());
    eprintln!(
        "virtual {kind} board on {}: {plies} moves, starting once a host reads it (record it \
         with --port {kind}:{}); Ctrl-C stops",
        port.display(),
        port.display()
    );
    until_played(board.finished(), exit_when_done).await;
    Ok(())
}

/// Runs a virtual Chessnut on USB HID until the game is played (and then until Ctrl-C
/// unless `exit_when_done`).
async fn play_chessnut_hid(
    config: ChessnutHidConfig,
    plies: usize,
    exit_when_done: bool,
) -> Result<(), String> {
    let port = config.path.clone();
    let board = VirtualChessnutHid::spawn(config)
        .map_err(|e| format!("cannot listen at {}: {e}", port.display()))?;
    println!("{}", port.display());
    eprintln!(
        "virtual chessnut board on USB HID at {}: {plies} moves, starting once a host starts \
         its stream (record it with --port chessnut:{}); Ctrl-C stops",
        port.display(),
        port.display()
    );
    until_played(board.finished(), exit_when_done).await;
    Ok(())
}

/// Runs a virtual DGT Pegasus until the game is played (and then until Ctrl-C unless
/// `exit_when_done`).
async fn play_pegasus(
    config: VirtualPegasusConfig,
    plies: usize,
    exit_when_done: bool,
) -> Result<(), String> {
    let port = config.path.clone();
    let board = VirtualPegasus::spawn(config)
        .map_err(|e| format!("cannot open a pseudo-terminal at {}: {e}", port.display()))?;
    println!("{}", port.display());
    eprintln!(
        "virtual DGT Pegasus on {}: {plies} moves, starting once a host gives it a developer \
         key (any key) and sets the update mode (record it with --port pegasus:{} and a \
         pegasus_key); it has no clock; Ctrl-C stops",
        port.display(),
        port.display()
    );
    until_played(board.finished(), exit_when_done).await;
    Ok(())
}

/// Waits until `finished` (the game played), then until Ctrl-C unless `exit_when_done`; a
/// Ctrl-C before the end stops at once.
async fn until_played(finished: impl std::future::Future<Output = ()>, exit_when_done: bool) {
    tokio::select! {
        () = finished => eprintln!("game played"),
        () = super::stop_requested() => return,
    }
    if exit_when_done {
        // Let a connected host read the last pictures or updates before the port goes away.
        tokio::time::sleep(Duration::from_secs(1)).await;
    } else {
        super::stop_requested().await;
    }
}

/// Parses "minutes+seconds" (e.g. `5+5`, `90+30`) into base and increment milliseconds.
fn parse_time_control(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--clock {text:?}: expected minutes+increment seconds, e.g. 5+5");
    let (minutes, increment) = text.split_once('+').ok_or_else(bad)?;
    let minutes: f64 = minutes.trim().parse().map_err(|_| bad())?;
    let increment: u64 = increment.trim().parse().map_err(|_| bad())?;
    if !(minutes > 0.0 && minutes <= 600.0) {
        return Err(bad());
    }
    Ok(((minutes * 60_000.0) as u64, increment * 1000))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_control_parses_and_rejects() {
        assert_eq!(parse_time_control("5+5"), Ok((300_000, 5000)));
        assert_eq!(parse_time_control("90+30"), Ok((5_400_000, 30_000)));
        assert!(parse_time_control("5").is_err());
        assert!(parse_time_control("x+1").is_err());
        assert!(parse_time_control("0+1").is_err());
    }
}
