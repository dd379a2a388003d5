//! `touchmove export-capture`.

use std::process::ExitCode;

/// Arguments of `touchmove export-capture`.
#[derive(Debug, clap::Args)]
pub struct ExportCaptureArgs {}

/// Runs `touchmove export-capture`.
pub fn run(_args: ExportCaptureArgs) -> ExitCode {
    eprintln!("touchmove export-capture: not built yet");
    ExitCode::FAILURE
}
