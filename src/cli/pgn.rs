//! `touchmove pgn`: check and normalise PGN files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::record::GameRecord;
use crate::record::pgn::{read_games_bytes, write_games};

/// `touchmove pgn` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum PgnCommand {
    /// Replay every game of the files; print the number of games and plies per file, or
    /// `file:game:ply: reason` for the first move that cannot be played.
    Check {
        /// PGN files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Read any PGN and write it to stdout in touchmove's canonical form.
    Normalize {
        /// A PGN file.
        file: PathBuf,
    },
}

/// Runs a `touchmove pgn` subcommand.
pub fn run(cmd: PgnCommand) -> ExitCode {
    match cmd {
        PgnCommand::Check { files } => {
            let mut ok = true;
            for file in &files {
                match load(file) {
                    Ok(games) => {
                        let plies: usize = games.iter().map(|g| g.moves.len()).sum();
                        println!("{}: {} games, {plies} plies", file.display(), games.len());
                        for (i, game) in games.iter().enumerate() {
                            if game.moves.is_empty() {
                                eprintln!(
                                    "{}:{}: warning: game without moves (result {})",
                                    file.display(),
                                    i + 1,
                                    game.result
                                );
                            }
                        }
                    }
                    Err(message) => {
                        eprintln!("{message}");
                        ok = false;
                    }
                }
            }
            if ok {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        PgnCommand::Normalize { file } => match load(&file) {
            Ok(games) => {
                print!("{}", write_games(&games));
                ExitCode::SUCCESS
            }
            Err(message) => {
                eprintln!("{message}");
                ExitCode::FAILURE
            }
        },
    }
}

/// Reads and replays every game of a file; the error names the file, game, ply and line.
pub fn load(file: &Path) -> Result<Vec<GameRecord>, String> {
    let bytes = std::fs::read(file)
        .map_err(|e| format!("{}: cannot read the file: {e}", file.display()))?;
    read_games_bytes(&bytes).map_err(|e| {
        format!(
            "{}:{}:{}: {} (line {}, token {:?})",
            file.display(),
            e.game,
            e.ply,
            e.reason,
            e.line,
            e.token
        )
    })
}
