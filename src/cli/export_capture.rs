//! `touchmove export-capture`: a board's raw bytes from a journal, as a timestamped capture.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::store::{BoardKey, Journal, Session, Stamped, continuous_times};
use crate::wire::capture::{CaptureChunk, write_timestamped};

/// Arguments of `touchmove export-capture`.
#[derive(Debug, clap::Args)]
pub struct ExportCaptureArgs {
    /// The journal the recorder wrote.
    #[arg(long, value_name = "FILE")]
    pub journal: PathBuf,
    /// The board: ROUND.BOARD (e.g. 3.12), serial:NUMBER or port:PATH.
    #[arg(long, value_name = "KEY")]
    pub board: BoardKey,
    /// Where to write the capture (default: standard output).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `touchmove export-capture`.
pub fn run(args: ExportCaptureArgs) -> ExitCode {
    match export(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("touchmove export-capture: {message}");
            ExitCode::FAILURE
        }
    }
}

fn export(args: &ExportCaptureArgs) -> Result<(), String> {
    let journal = Journal::open_read_only(&args.journal).map_err(|e| e.to_string())?;
    let chunks = journal.bytes(&args.board).map_err(|e| e.to_string())?;
    if chunks.is_empty() {
        let boards = journal.boards().map_err(|e| e.to_string())?;
        let known = boards
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        return Err(format!(
            "journal {} holds no bytes of board {}; boards in it: {}",
            args.journal.display(),
            args.board,
            if known.is_empty() { "none" } else { &known }
        ));
    }
    let sessions = journal.sessions().map_err(|e| e.to_string())?;
    let text = capture_text(&args.board, &sessions, &chunks);
    match &args.out {
        Some(path) => {
            std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
        }
        None => {
            use std::io::Write;
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .map_err(|e| format!("cannot write to standard output: {e}"))
        }
    }
}

/// The capture text in the timestamped capture format ([`write_timestamped`]), with the times
/// of all sessions on one timeline and comments naming the board and each recorder session.
pub fn capture_text(board: &BoardKey, sessions: &[Session], chunks: &[Stamped<Vec<u8>>]) -> String {
    let times = continuous_times(sessions, chunks.iter().map(|c| (c.session, c.t_ms)));
    let capture: Vec<CaptureChunk> = chunks
        .iter()
        .zip(&times)
        .map(|(chunk, &t_ms)| CaptureChunk {
            t_ms,
            bytes: chunk.value.clone(),
        })
        .collect();
    let mut notes = format!("# board {board}, exported from a touchmove journal\n");
    let mut previous = None;
    for (chunk, t_ms) in chunks.iter().zip(&times) {
        if previous != Some(chunk.session) {
            previous = Some(chunk.session);
            let started = sessions
                .iter()
                .find(|s| s.id == chunk.session)
                .map_or(0, |s| s.started_unix_ms);
            let _ = writeln!(
                notes,
                "# recorder session {} (started at unix time {started} ms) begins at {t_ms} ms",
                chunk.session
            );
        }
    }
    let text = write_timestamped(&capture);
    match text.split_once('\n') {
        Some((header, body)) => format!("{header}\n{notes}{body}"),
        None => text,
    }
}
