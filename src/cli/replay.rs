//! `touchmove replay`.

use std::process::ExitCode;

/// Arguments of `touchmove replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {}

/// Runs `touchmove replay`.
pub fn run(_args: ReplayArgs) -> ExitCode {
    eprintln!("touchmove replay: not built yet");
    ExitCode::FAILURE
}
