//! `touchmove sim`.

use std::process::ExitCode;

/// Arguments of `touchmove sim`.
#[derive(Debug, clap::Args)]
pub struct SimArgs {}

/// Runs `touchmove sim`.
pub fn run(_args: SimArgs) -> ExitCode {
    eprintln!("touchmove sim: not built yet");
    ExitCode::FAILURE
}
