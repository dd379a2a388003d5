//! `touchmove arbiter`.

use std::process::ExitCode;

/// Arguments of `touchmove arbiter`.
#[derive(Debug, clap::Args)]
pub struct ArbiterArgs {}

/// Runs `touchmove arbiter`.
pub fn run(_args: ArbiterArgs) -> ExitCode {
    eprintln!("touchmove arbiter: not built yet");
    ExitCode::FAILURE
}
