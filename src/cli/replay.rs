//! `touchmove replay`: reads a board's capture (public base64 DGT format or our timestamped
//! format) or its journal, and prints what it contains: the games the recorder's pipeline
//! records from it as PGN (default), one line of UCI moves per game (`--format uci`), every
//! event as JSON (`--events`), or the decoded board messages (`--messages`).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde::Serialize;

use crate::board::Millis;
use crate::board::kind::{BoardKind, KindDecoder};
use crate::clock::TimeControl;
use crate::record::GameRecord;
use crate::record::pgn::write_game;
use crate::recorder::replay::{
    History, ReplayOptions, Step, capture_history, journal_history, replay_board,
};
use crate::store::BoardKey;
use crate::wire::capture::read_capture;
use crate::wire::dgt::Message;

/// Arguments of `touchmove replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The capture file — one base64 DGT message per line, or `<ms> <hex bytes>` lines (see
    /// protocols/capture-format.md) — or the journal `touchmove record` wrote. `-` reads a
    /// capture from standard input.
    pub file: PathBuf,
    /// In a journal, the board: ROUND.BOARD (e.g. 3.12). Needed when it holds several.
    #[arg(long, value_name = "ROUND.BOARD")]
    pub board: Option<BoardKey>,
    /// The kind of board whose bytes these are: dgt, millennium, certabo, sentio, chessnut
    /// or pegasus.
    #[arg(long, default_value = "dgt")]
    pub kind: BoardKind,
    /// The event's time control (PGN syntax, e.g. 300+2), as `touchmove record` was given
    /// it; without it there is no software clock, and only a board's clock ends a game on
    /// time.
    #[arg(long, value_name = "TC")]
    pub time_control: Option<String>,
    /// Print every decoded board message as one JSON object per line.
    #[arg(long)]
    pub messages: bool,
    /// Print every event of the recorder's pipeline as one JSON object per line.
    #[arg(long, conflicts_with = "messages")]
    pub events: bool,
    /// How to print the recognised games.
    #[arg(long, value_enum, default_value_t = GameFormat::Pgn)]
    pub format: GameFormat,
    /// Accept any Chess960 start position.
    #[arg(long)]
    pub chess960: bool,
    /// The games start from this position (a FEN game) instead of the standard start.
    #[arg(long)]
    pub fen: Option<String>,
    /// Read the board as one that senses occupancy only (DGT Pegasus style): promotions are
    /// assumed queens.
    #[arg(long)]
    pub occupancy_only: bool,
}

/// How `touchmove replay` prints games.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GameFormat {
    /// PGN, as the recorder writes `game-K.pgn`.
    Pgn,
    /// One line per game: UCI moves separated by spaces, then the result token.
    Uci,
}

/// One line of `--messages` output: the arrival time and the message's own fields.
#[derive(Serialize)]
struct TimedMessage<'a> {
    t_ms: Millis,
    #[serde(flatten)]
    message: &'a Message,
}

/// The first bytes of an SQLite database, which a journal is.
const SQLITE_HEADER: &[u8] = b"SQLite format 3\0";

/// Reads the file named in the arguments: a journal's board, or a capture (round 1, board
/// 1). The error names the file and what is wrong.
fn load(args: &ReplayArgs) -> Result<((u32, u32), History), String> {
    let file = &args.file;
    if file.as_os_str() != "-" && starts_with(file, SQLITE_HEADER) {
        return journal_history(file, args.board.as_ref());
    }
    if let Some(board) = &args.board {
        return Err(format!(
            "--board {board}: {} is a capture, which holds one board; --board is for a journal",
            file.display()
        ));
    }
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(file)
    }
    .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let chunks = read_capture(&text).map_err(|e| format!("{}: {e}", file.display()))?;
    Ok(((1, 1), capture_history(chunks)))
}

/// True when the file begins with `header`.
fn starts_with(file: &Path, header: &[u8]) -> bool {
    use std::io::Read;
    let mut start = vec![0; header.len()];
    std::fs::File::open(file)
        .and_then(|mut f| f.read_exact(&mut start))
        .is_ok_and(|()| start == header)
}

fn print_events(events: &[crate::act::Event]) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for event in events {
        serde_json::to_writer(&mut out, event).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn print_games(games: &[GameRecord], format: GameFormat) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for game in games {
        match format {
            GameFormat::Pgn => out.write_all(write_game(game).as_bytes())?,
            GameFormat::Uci => {
                let mut line: Vec<&str> = game.moves.iter().map(|m| m.uci.as_str()).collect();
                line.push(&game.result);
                writeln!(out, "{}", line.join(" "))?;
            }
        }
    }
    out.flush()
}

/// Prints every message the board's bytes decode to, as its kind's decoder reads them;
/// returns the bytes it skipped.
fn print_messages(history: &History, kind: BoardKind) -> std::io::Result<u64> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut decoder = KindDecoder::new(kind);
    let mut messages = Vec::new();
    for step in &history.steps {
        let Step::Bytes(t_ms, bytes) = step else {
            continue;
        };
        decoder.push(bytes, &mut messages);
        for message in messages.drain(..) {
            let line = TimedMessage {
                t_ms: *t_ms,
                message: &message,
            };
            serde_json::to_writer(&mut out, &line).map_err(std::io::Error::other)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(decoder.skipped_bytes())
}

/// The options of the replay the arguments give.
fn options(args: &ReplayArgs) -> Result<ReplayOptions, String> {
    let time_control = match &args.time_control {
        Some(tc) => TimeControl::parse(tc).map_err(|e| format!("--time-control: {e}"))?,
        None => TimeControl::Unknown,
    };
    if let Some(fen) = &args.fen {
        crate::rules::Game::from_fen(fen, args.chess960).map_err(|e| format!("--fen: {e}"))?;
    }
    Ok(ReplayOptions {
        event: args.file.display().to_string(),
        kind: args.kind,
        time_control,
        start_fen: args.fen.clone(),
        chess960: args.chess960,
        occupancy_only: args.occupancy_only,
    })
}

/// Runs `touchmove replay`.
pub fn run(args: ReplayArgs) -> ExitCode {
    let read = load(&args).and_then(|board| Ok((board, options(&args)?)));
    let ((key, history), options) = match read {
        Ok(read) => read,
        Err(e) => {
            eprintln!("touchmove replay: {e}");
            return ExitCode::FAILURE;
        }
    };
    let printed = if args.messages {
        print_messages(&history, args.kind)
    } else {
        let replayed = replay_board(&history, key, &options);
        if args.events {
            print_events(&replayed.events)
        } else {
            print_games(&replayed.games, args.format)
        }
        .map(|()| replayed.skipped_bytes)
    };
    match printed {
        Ok(0) => ExitCode::SUCCESS,
        Ok(skipped) => {
            eprintln!(
                "touchmove replay: {skipped} bytes of {} did not form {} messages and were skipped",
                args.file.display(),
                args.kind
            );
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("touchmove replay: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}
