//! `touchmove bench`: benchmarks that print JSON figures.

use std::process::ExitCode;

/// `touchmove bench` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Act-of-moving recognition on simulated hands.
    Recognition {},
}

/// Runs a benchmark.
pub fn run(_cmd: BenchCommand) -> ExitCode {
    eprintln!("touchmove bench: not built yet");
    ExitCode::FAILURE
}
