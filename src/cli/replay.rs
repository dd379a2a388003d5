//! `touchmove replay`: reads a DGT capture file (public base64 format or our timestamped
//! format) and prints what it contains: the recognised games as PGN (default), one line of
//! UCI moves per game (`--format uci`), every event as JSON (`--events`), or the decoded
//! board messages (`--messages`).

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::act::{Event, GapAccount, Machine, MachineConfig};
use crate::board::Millis;
use crate::board::dgt::DgtObserver;
use crate::board::resumption::{Resumed, Resumption};
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

/// Runs a capture through the DGT observer and the act-of-moving machine, as the recorder
/// does: a handshake (the board's version) after a game began is a link that came back, what
/// the board sent from then on (and just before it, after a silence) is part of the gap until
/// its dump, and the moves that dump shows are read as a gap. Returns every event and the number
/// of bytes the decoder skipped.
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
    let mut started = false;
    let mut resumption = Resumption::new();
    let mut sorted = Vec::new();
    let mut read = |resumed: Resumed,
                    resumption: &mut Resumption,
                    events: &mut Vec<Event>,
                    started: &mut bool| {
        let (t_ms, message) = match resumed {
            Resumed::LinkBack { t_ms } => {
                machine.link_restored(t_ms);
                return;
            }
            // After a reconnect, what comes before the board's log or dump is part of the
            // gap: the dump tells what it changed.
            Resumed::InGap(..) => return,
            Resumed::Live(t_ms, message) => (t_ms, message),
        };
        if matches!(message, Message::EepromMoves(_)) {
            // The move log is not read here: the board's dump tells the gap.
            resumption.log_not_used();
        }
        let before = events.len();
        observer.on_message(t_ms, &message, &mut observations);
        for obs in observations.drain(..) {
            machine.observe(&obs, events);
        }
        *started = *started
            || events[before..]
                .iter()
                .any(|e| matches!(e, Event::GameStart { .. }));
    };
    let skipped = for_each_message(chunks, |t_ms, message| {
        resumption.push(t_ms, message.clone(), started, &mut sorted);
        for resumed in sorted.drain(..) {
            read(resumed, &mut resumption, &mut events, &mut started);
        }
        last_t = t_ms;
    });
    resumption.finish(&mut sorted);
    for resumed in sorted.drain(..) {
        read(resumed, &mut resumption, &mut events, &mut started);
    }
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
/// comments (those a later alert withdrew left out), clock readings after each completed
/// move, and the result. A game taken up from the board's position after a gap goes on as
/// a game from that position.
pub fn games_of(events: &[Event], event_name: &str) -> Vec<GameRecord> {
    let mut games: Vec<GameRecord> = Vec::new();
    let mut open = false;
    let mut awaiting_clock: Option<(usize, bool)> = None;
    // The comments alerts added, for a later alert to withdraw: (alert, game index).
    let mut commented: Vec<(&crate::act::Alert, usize)> = Vec::new();
    for event in events {
        if let Event::Alert(alert) = event {
            for r in &alert.withdraws {
                if let Some(i) = commented.iter().position(|(a, _)| a.is(r)) {
                    let (old, game) = commented.remove(i);
                    if let Some(game) = games.get_mut(game) {
                        remove_comment(game, &alert_comment(old));
                    }
                }
            }
        }
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
            Event::Alert(alert) if let Some(GapAccount::Reanchored { fen }) = &alert.gap => {
                awaiting_clock = None;
                let Some(game) = games.last_mut() else {
                    continue;
                };
                if game.moves.is_empty() && alert.severity == crate::act::Severity::Info {
                    // The side to move corrected before any move: the same game.
                    game.start_fen = Some(fen.clone());
                    continue;
                }
                // Plies are counted afresh from the board's position: a game of its own.
                let mut taken_up = GameRecord {
                    tags: game.tags.clone(),
                    start_fen: Some(fen.clone()),
                    chess960: game.chess960,
                    result: "*".to_string(),
                    ..GameRecord::default()
                };
                taken_up.tags.retain(|(name, _)| name != "Termination");
                taken_up.initial_comments.push(alert_comment(alert));
                games.push(taken_up);
            }
            Event::Alert(alert) if alert.severity != crate::act::Severity::Info => {
                if let Some(game) = games.last_mut() {
                    let comment = alert_comment(alert);
                    match game.moves.last_mut() {
                        Some(last) => last.comments.push(comment),
                        None => game.initial_comments.push(comment),
                    }
                    commented.push((alert, games.len() - 1));
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
            Event::Alert(_) | Event::BoardState { .. } | Event::GameClosed { .. } => {}
        }
    }
    games.retain(|g| !g.moves.is_empty() || g.result != "*");
    games
}

/// The comment an alert adds to the game.
fn alert_comment(alert: &crate::act::Alert) -> String {
    format!("{} ({} ms)", alert.message, alert.t_ms)
}

/// Removes the comment `text` from `game`, wherever it was put.
fn remove_comment(game: &mut GameRecord, text: &str) {
    let lists = std::iter::once(&mut game.initial_comments)
        .chain(game.moves.iter_mut().map(|m| &mut m.comments));
    for comments in lists {
        if let Some(i) = comments.iter().position(|c| c == text) {
            comments.remove(i);
            return;
        }
    }
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

#[cfg(test)]
mod tests {
    use shakmaty::Position;

    use super::*;
    use crate::board::dgt::{code_from_piece, fields_from_board};
    use crate::board::orientation::Orientation;
    use crate::clock::TimeControl;
    use crate::event::EventConfig;
    use crate::recorder::{BoardPipeline, GameTags};
    use crate::rules::Game;

    fn dump(game: &Game, t_ms: Millis) -> CaptureChunk {
        let fields = fields_from_board(game.position().board(), Orientation::Normal);
        CaptureChunk {
            t_ms,
            bytes: Message::BoardDump(fields).encode(),
        }
    }

    /// A capture: the start position, `before` played square by square, the link lost and
    /// back (the board's version, as in every handshake), and a dump showing `gap` played
    /// meanwhile.
    fn capture_with_reconnect(before: &[&str], gap: &[&str]) -> Vec<CaptureChunk> {
        let field = |sq: shakmaty::Square| (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
        let mut game = Game::standard();
        let mut chunks = vec![dump(&game, 10)];
        let mut t = 1_000;
        for uci in before {
            let from: shakmaty::Square = uci[..2].parse().unwrap();
            let to: shakmaty::Square = uci[2..4].parse().unwrap();
            let piece = game.position().board().piece_at(from).unwrap();
            game.play_uci(uci).unwrap();
            for (sq, code) in [(from, 0), (to, code_from_piece(piece))] {
                let bytes = Message::FieldUpdate {
                    field: field(sq),
                    piece: code,
                }
                .encode();
                chunks.push(CaptureChunk { t_ms: t, bytes });
                t += 450;
            }
        }
        chunks.push(CaptureChunk {
            t_ms: 60_000,
            bytes: Message::Version { major: 1, minor: 2 }.encode(),
        });
        for uci in gap {
            game.play_uci(uci).unwrap();
        }
        chunks.push(dump(&game, 60_100));
        chunks
    }

    fn moves_of(events: &[Event]) -> Vec<String> {
        games_of(events, "test")
            .last()
            .map(|g| g.moves.iter().map(|m| m.uci.clone()).collect())
            .unwrap_or_default()
    }

    /// A reconnect mid-game is read as the recorder reads it: the moves the dump shows after
    /// the handshake are a gap (more than a reconstruction of lost updates reaches), read
    /// and recorded, the game not held.
    #[test]
    fn a_reconnect_mid_game_is_read_as_the_recorder_reads_it() {
        let before = ["e2e4", "e7e5", "g1f3", "b8c6"];
        let gap = ["f1c4", "f8c5", "c2c3", "g8f6", "d2d4"];
        let chunks = capture_with_reconnect(&before, &gap);
        let (events, skipped) = replay_events(&chunks, MachineConfig::default());
        assert_eq!(skipped, 0);
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::BoardState { held: true, .. })),
            "not held: {events:?}"
        );
        // Several orders reach the board: one is recorded, the alert names the others.
        let read = moves_of(&events);
        let mut game = Game::standard();
        for m in &read {
            game.play_uci(m).unwrap();
        }
        let mut played = Game::standard();
        for m in before.iter().chain(&gap) {
            played.play_uci(m).unwrap();
        }
        assert_eq!(
            game.position().board(),
            played.position().board(),
            "{read:?}"
        );
        assert_eq!(read[..before.len()], before, "{read:?}");
        let order_alerts = events
            .iter()
            .filter(|e| matches!(e, Event::Alert(a) if a.gap.is_some()))
            .count();
        assert_eq!(order_alerts, 1, "{events:?}");

        let config = EventConfig::default();
        let mut recorder = BoardPipeline::new(
            GameTags::new(&config, 1),
            TimeControl::parse("300+2").unwrap(),
        );
        let mut recorded = Vec::new();
        for chunk in &chunks {
            recorder.on_bytes(chunk.t_ms, &chunk.bytes, &mut recorded);
        }
        assert_eq!(moves_of(&recorded), read, "the recorder reads it the same");
    }

    /// A gap no legal sequence explains: the game goes on from the board's position, and
    /// the replay prints it as a game from that position (valid PGN), after the game before.
    #[test]
    fn a_game_taken_up_after_a_gap_is_printed_from_the_boards_position() {
        let gap = [
            "d2d4", "d7d6", "c2c4", "c7c6", "b1c3", "g8f6", "g1f3", "b8d7", "f1d3", "f8e7",
        ];
        let mut chunks = capture_with_reconnect(&["e2e4", "e7e5"], &gap);
        let field = |sq: &str| {
            let sq: shakmaty::Square = sq.parse().unwrap();
            (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file())
        };
        let king = code_from_piece(shakmaty::Piece::from_char('K').unwrap());
        let rook = code_from_piece(shakmaty::Piece::from_char('R').unwrap());
        let castle = [("e1", 0), ("g1", king), ("h1", 0), ("f1", rook)];
        for (i, (sq, piece)) in castle.into_iter().enumerate() {
            chunks.push(CaptureChunk {
                t_ms: 63_000 + 300 * i as u64,
                bytes: Message::FieldUpdate {
                    field: field(sq),
                    piece,
                }
                .encode(),
            });
        }
        let (events, _) = replay_events(&chunks, MachineConfig::default());
        let games = games_of(&events, "test");
        assert_eq!(games.len(), 2, "{events:?}");
        let uci =
            |g: &GameRecord| -> Vec<String> { g.moves.iter().map(|m| m.uci.clone()).collect() };
        assert_eq!(uci(&games[0]), ["e2e4", "e7e5"]);
        assert_eq!(uci(&games[1]), ["e1g1"], "{events:?}");
        assert!(
            games[1].start_fen.as_deref().is_some_and(
                |f| f.starts_with("r1bqk2r/pp1nbppp/2pp1n2/4p3/2PPP3/2NB1N2/PP3PPP/R1BQK2R w")
            ),
            "{:?}",
            games[1].start_fen
        );
        for game in &games {
            let text = write_game(game);
            let read =
                crate::record::pgn::read_games(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
            read[0].to_game().unwrap_or_else(|e| panic!("{e}: {text}"));
        }
    }

    /// An alert a later one withdraws leaves no comment in the printed game.
    #[test]
    fn a_withdrawn_alert_leaves_no_comment() {
        let chunks = capture_with_reconnect(&["e2e4", "e7e5"], &[]);
        let (mut events, _) = replay_events(&chunks, MachineConfig::default());
        let alert = |severity, t_ms| crate::act::Alert {
            article: "8.5.3".to_string(),
            side: None,
            ply: 2,
            t_ms,
            evidence_ms: Vec::new(),
            squares: Vec::new(),
            severity,
            message: format!("read at {t_ms}"),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        };
        let first = alert(crate::act::Severity::Warning, 70_000);
        let mut second = alert(crate::act::Severity::Info, 71_000);
        second.withdraws = vec![first.reference()];
        events.push(Event::Alert(first));
        let games = games_of(&events, "test");
        assert!(write_game(&games[0]).contains("read at 70000"));
        events.push(Event::Alert(second));
        let games = games_of(&events, "test");
        assert!(!write_game(&games[0]).contains("read at"), "{:?}", games[0]);
    }
}
