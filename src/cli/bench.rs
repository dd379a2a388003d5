//! `touchmove bench`: benchmarks that print JSON figures.

use std::process::ExitCode;

/// `touchmove bench` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Act-of-moving recognition on simulated hands.
    Recognition {},
    /// Boards per recorder process: virtual boards at blitz pace, latency from the completing
    /// byte to the PGN file rewritten, memory per board (one JSON line per board count).
    Boards(BoardsArgs),
}

/// Arguments of `touchmove bench boards`.
#[derive(Debug, clap::Args)]
pub struct BoardsArgs {
    /// Numbers of boards to try, e.g. 4,16,64.
    #[arg(long, value_delimiter = ',', default_value = "4,16,64")]
    pub boards: Vec<usize>,
    /// Seconds of play per board count.
    #[arg(long, default_value_t = 20)]
    pub seconds: u64,
    /// Thinking time before each move, in milliseconds (blitz: about 2000).
    #[arg(long, default_value_t = 2000)]
    pub think_ms: u64,
}

/// Runs a benchmark.
pub fn run(_cmd: BenchCommand) -> ExitCode {
    if let BenchCommand::Boards(args) = &_cmd {
        return match crate::recorder::bench::run(&args.boards, args.seconds, args.think_ms) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("touchmove bench boards: {e}");
                ExitCode::FAILURE
            }
        };
    }
    eprintln!("touchmove bench: not built yet");
    ExitCode::FAILURE
}
