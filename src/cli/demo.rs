//! `touchmove demo`.

use std::process::ExitCode;

/// Arguments of `touchmove demo`.
#[derive(Debug, clap::Args)]
pub struct DemoArgs {}

/// Runs `touchmove demo`.
pub fn run(_args: DemoArgs) -> ExitCode {
    eprintln!("touchmove demo: not built yet");
    ExitCode::FAILURE
}
