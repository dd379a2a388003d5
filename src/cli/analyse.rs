//! `touchmove analyse`.

use std::process::ExitCode;

/// Arguments of `touchmove analyse`.
#[derive(Debug, clap::Args)]
pub struct AnalyseArgs {}

/// Runs `touchmove analyse`.
pub fn run(_args: AnalyseArgs) -> ExitCode {
    eprintln!("touchmove analyse: not built yet");
    ExitCode::FAILURE
}
