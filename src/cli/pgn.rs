//! `touchmove pgn`.

use std::process::ExitCode;

/// `touchmove pgn` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum PgnCommand {
    /// Replay every game of the files.
    Check {
        /// PGN files.
        files: Vec<std::path::PathBuf>,
    },
}

/// Runs a `touchmove pgn` subcommand.
pub fn run(_cmd: PgnCommand) -> ExitCode {
    eprintln!("touchmove pgn: not built yet");
    ExitCode::FAILURE
}
