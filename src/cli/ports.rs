//! `touchmove ports`.

use std::process::ExitCode;

/// Arguments of `touchmove ports`.
#[derive(Debug, clap::Args)]
pub struct PortsArgs {}

/// Runs `touchmove ports`.
pub fn run(_args: PortsArgs) -> ExitCode {
    eprintln!("touchmove ports: not built yet");
    ExitCode::FAILURE
}
