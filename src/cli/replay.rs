//! `touchmove replay`: reads a DGT capture file (public base64 format or our timestamped
//! format) and prints what it contains: the recognised games as PGN (default), one line of
//! UCI moves per game (`--format uci`), every event as JSON (`--events`), or the decoded
//! board messages (`--messages`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::act::{Event, Machine, MachineConfig};
use crate::board::Millis;
use crate::board::dgt::DgtObserver;
use crate::record::pgn::write_game;
use crate::record::{GameRecord, RecordedMove};
use crate::wire::capture::{CaptureChunk, read_capture};
use crate::wire::dgt::{Decoder, Message};

/// Arguments of `touchmove replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The capture file: one base64 DGT message per line, or `<ms> <hex bytes>` lines
    /// (see protocols/capture-format.md). `-` reads standard input.
    pub file: PathBuf,
    /// Print every decoded board message as one JSON object per line.
    #[arg(long)]
    pub messages: bool,
    /// Print every event of the act-of-moving machine as one JSON object per line.
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
    /// The board senses occupancy only (DGT Pegasus style): promotions are assumed queens.
    #[arg(long)]
    pub occupancy_only: bool,
}

/// How `touchmove replay` prints games.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum GameFormat {
    /// PGN with the irregularities as comments.
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

/// Reads and parses the capture named in the arguments; the error names file and line.
pub fn load_capture(file: &std::path::Path) -> Result<Vec<CaptureChunk>, String> {
    let text = if file.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin())
    } else {
        std::fs::read_to_string(file)
    }
    .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    read_capture(&text).map_err(|e| format!("{}: {e}", file.display()))
}

/// Decodes every chunk, calling `each` with the arrival time and message; returns the number
/// of bytes the decoder skipped.
pub fn for_each_message(chunks: &[CaptureChunk], mut each: impl FnMut(Millis, &Message)) -> u64 {
    let mut decoder = Decoder::new();
    let mut messages = Vec::new();
    for chunk in chunks {
        decoder.push(&chunk.bytes, &mut messages);
        for m in messages.drain(..) {
            each(chunk.t_ms, &m);
        }
    }
    decoder.skipped_bytes()
}

/// Runs a capture through the DGT observer and the act-of-moving machine; returns every event
/// and the number of bytes the decoder skipped.
pub fn replay_events(chunks: &[CaptureChunk], config: MachineConfig) -> (Vec<Event>, u64) {
    let mut observer = if config.identifies_pieces {
        DgtObserver::new()
    } else {
        DgtObserver::occupancy_only()
    };
    if let Some(game) = config
        .start_fen
        .as_deref()
        .and_then(|fen| crate::rules::Game::from_fen(fen, config.chess960).ok())
    {
        use shakmaty::Position;
        observer.expect_setup(game.start().board().clone());
    }
    let mut machine = Machine::new(config);
    let mut observations = Vec::new();
    let mut events = Vec::new();
    let mut last_t = 0;
    let skipped = for_each_message(chunks, |t_ms, message| {
        observer.on_message(t_ms, message, &mut observations);
        for obs in observations.drain(..) {
            machine.observe(&obs, &mut events);
        }
        last_t = t_ms;
    });
    // The capture is over: whatever was waiting for time to pass (a press, a result
    // signal standing) is decided as the clock would have decided it.
    machine.advance(
        last_t.saturating_add(machine.config().press_grace_ms),
        &mut events,
    );
    for _ in 0..16 {
        let Some(due) = machine.next_deadline() else {
            break;
        };
        machine.advance(due, &mut events);
    }
    (events, skipped)
}

/// The games a stream of events recorded: moves (revisions applied), irregularities as
/// comments, clock readings after each completed move, and the result.
pub fn games_of(events: &[Event], event_name: &str) -> Vec<GameRecord> {
    let mut games: Vec<GameRecord> = Vec::new();
    let mut open = false;
    let mut awaiting_clock: Option<(usize, bool)> = None;
    for event in events {
        match event {
            Event::GameStart { fen, chess960, .. } => {
                let standard = !chess960 && fen == crate::record::STANDARD_START_FEN;
                games.push(GameRecord {
                    tags: vec![
                        ("Event".to_string(), event_name.to_string()),
                        ("Annotator".to_string(), "touchmove".to_string()),
                    ],
                    start_fen: (!standard).then(|| fen.clone()),
                    chess960: *chess960,
                    result: "*".to_string(),
                    ..GameRecord::default()
                });
                open = true;
                awaiting_clock = None;
            }
            _ if !open => {}
            Event::Move {
                ply,
                uci,
                san,
                t_ms,
                ..
            } => {
                if let Some(game) = games.last_mut() {
                    RecordedMove::place(&mut game.moves, *ply, san, uci, *t_ms);
                }
            }
            Event::Revision { ply, .. } => {
                if let Some(game) = games.last_mut() {
                    game.moves.truncate((*ply as usize).saturating_sub(1));
                }
            }
            Event::Alert(alert) if alert.severity != crate::act::Severity::Info => {
                if let Some(game) = games.last_mut() {
                    let comment = format!("{} ({} ms)", alert.message, alert.t_ms);
                    match game.moves.last_mut() {
                        Some(last) => last.comments.push(comment),
                        None => game.initial_comments.push(comment),
                    }
                }
            }
            Event::MoveCompleted { ply, side, .. } => {
                awaiting_clock = Some((
                    (*ply as usize).saturating_sub(1),
                    *side == crate::board::ColorName::White,
                ));
            }
            Event::Clock {
                white_ms, black_ms, ..
            } => {
                if let (Some((index, white)), Some(game)) =
                    (awaiting_clock.take(), games.last_mut())
                    && let Some(mv) = game.moves.get_mut(index)
                {
                    mv.clock_ms = Some(if white { *white_ms } else { *black_ms });
                }
            }
            Event::Result { result, reason, .. } => {
                if let Some(game) = games.last_mut() {
                    game.result = result.clone();
                    game.tags.push(("Termination".to_string(), reason.clone()));
                }
                open = false;
            }
            Event::Alert(_) | Event::BoardState { .. } => {}
        }
    }
    games.retain(|g| !g.moves.is_empty() || g.result != "*");
    games
}

fn print_events(events: &[Event]) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for event in events {
        serde_json::to_writer(&mut out, event).map_err(std::io::Error::other)?;
        out.write_all(b"\n")?;
    }
    out.flush()
}

fn print_games(games: &[GameRecord], format: GameFormat) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for game in games {
        match format {
            GameFormat::Pgn => {
                out.write_all(write_game(game).as_bytes())?;
                out.write_all(b"\n")?;
            }
            GameFormat::Uci => {
                let mut line: Vec<&str> = game.moves.iter().map(|m| m.uci.as_str()).collect();
                line.push(&game.result);
                writeln!(out, "{}", line.join(" "))?;
            }
        }
    }
    out.flush()
}

fn print_messages(chunks: &[CaptureChunk]) -> std::io::Result<u64> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut result = Ok(());
    let skipped = for_each_message(chunks, |t_ms, message| {
        if result.is_ok() {
            result = serde_json::to_writer(&mut out, &TimedMessage { t_ms, message })
                .map_err(std::io::Error::other)
                .and_then(|()| out.write_all(b"\n"));
        }
    });
    result?;
    out.flush()?;
    Ok(skipped)
}

/// Runs `touchmove replay`.
pub fn run(args: ReplayArgs) -> ExitCode {
    let chunks = match load_capture(&args.file) {
        Ok(chunks) => chunks,
        Err(e) => {
            eprintln!("touchmove replay: {e}");
            return ExitCode::FAILURE;
        }
    };
    let printed = if args.messages {
        print_messages(&chunks)
    } else {
        let config = MachineConfig {
            identifies_pieces: !args.occupancy_only,
            chess960: args.chess960,
            start_fen: args.fen.clone(),
            ..MachineConfig::default()
        };
        if let Some(fen) = &args.fen
            && let Err(e) = crate::rules::Game::from_fen(fen, args.chess960)
        {
            eprintln!("touchmove replay: --fen: {e}");
            return ExitCode::FAILURE;
        }
        let (events, skipped) = replay_events(&chunks, config);
        if args.events {
            print_events(&events).map(|()| skipped)
        } else {
            let name = args.file.display().to_string();
            print_games(&games_of(&events, &name), args.format).map(|()| skipped)
        }
    };
    match printed {
        Ok(0) => ExitCode::SUCCESS,
        Ok(skipped) => {
            eprintln!(
                "touchmove replay: {skipped} bytes of {} did not form DGT messages and were skipped",
                args.file.display()
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
