//! `touchmove replay`: reads a DGT capture file (public base64 format or our timestamped
//! format) and prints what it contains.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use serde::Serialize;

use crate::board::Millis;
use crate::wire::capture::{CaptureChunk, read_capture};
use crate::wire::dgt::{Decoder, Message};

/// Arguments of `touchmove replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The capture file: one base64 DGT message per line, or `<ms> <hex bytes>` lines
    /// (see protocols/capture-format.md).
    pub file: PathBuf,
    /// Print every decoded board message as one JSON object per line.
    #[arg(long)]
    pub messages: bool,
}

/// One line of `--messages` output: the arrival time and the message's own fields.
#[derive(Serialize)]
struct TimedMessage<'a> {
    t_ms: Millis,
    #[serde(flatten)]
    message: &'a Message,
}

/// Reads and parses the capture named in the arguments; the error names file and line.
pub fn load_capture(file: &std::path::Path) -> Result<Vec<CaptureChunk>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    read_capture(&text).map_err(|e| format!("{}: {e}", file.display()))
}

/// Decodes every chunk, calling `each` with the arrival time and message; returns the number
/// of bytes the decoder skipped.
pub fn for_each_message(chunks: &[CaptureChunk], mut each: impl FnMut(Millis, &Message)) -> u64 {
    let mut decoder = Decoder::new();
    let mut messages = Vec::new();
    for chunk in chunks {
        decoder.push(&chunk.bytes, &mut messages);
        for m in messages.drain(..) {
            each(chunk.t_ms, &m);
        }
    }
    decoder.skipped_bytes()
}

fn print_messages(chunks: &[CaptureChunk]) -> std::io::Result<u64> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut result = Ok(());
    let skipped = for_each_message(chunks, |t_ms, message| {
        if result.is_ok() {
            result = serde_json::to_writer(&mut out, &TimedMessage { t_ms, message })
                .map_err(std::io::Error::other)
                .and_then(|()| out.write_all(b"\n"));
        }
    });
    result?;
    out.flush()?;
    Ok(skipped)
}

/// Runs `touchmove replay`.
pub fn run(args: ReplayArgs) -> ExitCode {
    let chunks = match load_capture(&args.file) {
        Ok(chunks) => chunks,
        Err(e) => {
            eprintln!("touchmove replay: {e}");
            return ExitCode::FAILURE;
        }
    };
    if !args.messages {
        eprintln!(
            "touchmove replay: game output is not available yet; printing the decoded messages (--messages)"
        );
    }
    match print_messages(&chunks) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(skipped) => {
            eprintln!(
                "touchmove replay: {skipped} bytes of {} did not form DGT messages and were skipped",
                args.file.display()
            );
            ExitCode::SUCCESS
        }
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("touchmove replay: cannot write the output: {e}");
            ExitCode::FAILURE
        }
    }
}
