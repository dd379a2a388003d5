//! `touchmove record`.

use std::process::ExitCode;

/// Arguments of `touchmove record`.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {}

/// Runs `touchmove record`.
pub fn run(_args: RecordArgs) -> ExitCode {
    eprintln!("touchmove record: not built yet");
    ExitCode::FAILURE
}
