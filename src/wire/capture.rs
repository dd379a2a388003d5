//! Capture files: the bytes a board sent, with the time they arrived.
//!
//! Two text formats are read (and told apart automatically, see `protocols/capture-format.md`):
//!
//! * the public format of earlier projects: one complete DGT message per line, base64. It has
//!   no times, so [`read_capture`] assigns synthetic ones (see [`synthetic_times`]);
//! * our timestamped format: `<milliseconds since start> <hex bytes…>` per line, bytes as
//!   received (any chunking), `#` starts a comment. [`write_timestamped`] writes it.

use base64::Engine;

use super::Millis;
use crate::wire::dgt::{ClockMessage, ClockTimes, Decoder, Message};

/// Bytes received together, with the time they arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureChunk {
    /// Milliseconds since the capture started.
    pub t_ms: Millis,
    /// The bytes, exactly as received.
    pub bytes: Vec<u8>,
}

/// A capture file that cannot be read; names the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct CaptureError {
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

/// Milliseconds between two lines of a base64 capture (one message each) when no clock tick
/// places the later line.
pub const SYNTHETIC_STEP_MS: Millis = 100;

/// The first line of files written by [`write_timestamped`].
pub const TIMESTAMPED_HEADER: &str = "# touchmove capture v1: <ms since start> <hex bytes>";

/// Reads either capture format; the format is recognised from the first line that is neither
/// blank nor a comment: two or more fields starting with a decimal number mean timestamped,
/// a single field means base64.
pub fn read_capture(text: &str) -> Result<Vec<CaptureChunk>, CaptureError> {
    let first = meaningful_lines(text).next();
    match first {
        None => Ok(Vec::new()),
        Some((_, line)) => {
            let mut fields = line.split_whitespace();
            let timed =
                fields.next().is_some_and(|f| f.parse::<u64>().is_ok()) && fields.next().is_some();
            if timed {
                read_timestamped(text)
            } else {
                read_base64(text)
            }
        }
    }
}

/// Lines with their 1-based numbers, comments and blanks removed.
fn meaningful_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines().enumerate().filter_map(|(i, line)| {
        let content = line.split('#').next().unwrap_or("").trim();
        (!content.is_empty()).then_some((i + 1, content))
    })
}

fn read_timestamped(text: &str) -> Result<Vec<CaptureChunk>, CaptureError> {
    let mut chunks = Vec::new();
    let mut last_t = 0;
    for (line, content) in meaningful_lines(text) {
        let error = |reason: String| CaptureError { line, reason };
        let mut fields = content.split_whitespace();
        let t_field = fields.next().unwrap_or("");
        let t_ms: Millis = t_field.parse().map_err(|_| {
            error(format!(
                "expected a time in milliseconds at the start, found {t_field:?}"
            ))
        })?;
        if t_ms < last_t {
            return Err(error(format!(
                "time {t_ms} ms is earlier than the previous line's {last_t} ms; times must not decrease"
            )));
        }
        last_t = t_ms;
        let mut bytes = Vec::new();
        for field in fields {
            parse_hex(field, &mut bytes)
                .map_err(|()| error(format!("{field:?} is not a sequence of hex bytes")))?;
        }
        if !bytes.is_empty() {
            chunks.push(CaptureChunk { t_ms, bytes });
        }
    }
    Ok(chunks)
}

fn parse_hex(field: &str, out: &mut Vec<u8>) -> Result<(), ()> {
    if !field.len().is_multiple_of(2) || !field.is_ascii() {
        return Err(());
    }
    for pair in field.as_bytes().chunks(2) {
        let text = std::str::from_utf8(pair).map_err(|_| ())?;
        out.push(u8::from_str_radix(text, 16).map_err(|_| ())?);
    }
    Ok(())
}

fn read_base64(text: &str) -> Result<Vec<CaptureChunk>, CaptureError> {
    let engine = base64::engine::general_purpose::STANDARD;
    let messages = meaningful_lines(text)
        .map(|(line, content)| {
            engine.decode(content).map_err(|e| CaptureError {
                line,
                reason: format!("not base64 ({e}); expected one base64 DGT message per line"),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let times = synthetic_times(&messages);
    Ok(messages
        .into_iter()
        .zip(times)
        .map(|(bytes, t_ms)| CaptureChunk { t_ms, bytes })
        .collect())
}

/// Synthetic arrival times for a capture without times, one complete message per entry.
///
/// A board in "update nice" mode sends a clock message each time the running clock ticks,
/// so those messages mark real seconds: a clock message in which the running side shows one
/// second less than in the previous clock message is placed 1000 ms after the previous such
/// tick (or [`SYNTHETIC_STEP_MS`] after the previous line if that is later). Every other
/// line comes [`SYNTHETIC_STEP_MS`] after the previous one. Times start at 0 and never
/// decrease, and a move (a lift and a place between two ticks) takes a plausible few hundred
/// milliseconds.
pub fn synthetic_times(messages: &[Vec<u8>]) -> Vec<Millis> {
    let mut times = Vec::with_capacity(messages.len());
    let mut t: Millis = 0;
    let mut last_tick: Option<Millis> = None;
    let mut previous: Option<ClockTimes> = None;
    let mut decoded = Vec::new();
    for (i, bytes) in messages.iter().enumerate() {
        if i > 0 {
            t += SYNTHETIC_STEP_MS;
        }
        decoded.clear();
        Decoder::new().push(bytes, &mut decoded);
        for message in &decoded {
            if let Message::Clock(ClockMessage::Times(now)) = message {
                if previous.is_some_and(|before| is_tick(&before, now)) {
                    let tick = last_tick.map_or(t, |last| (last + 1000).max(t));
                    t = tick;
                    last_tick = Some(tick);
                }
                previous = Some(*now);
            }
        }
        times.push(t);
    }
    times
}

fn is_tick(before: &ClockTimes, now: &ClockTimes) -> bool {
    match now.status.running_side() {
        Some(side) if before.status.running_side() == Some(side) => {
            before.side(side).millis() == now.side(side).millis() + 1000
        }
        _ => false,
    }
}

/// Writes chunks in the timestamped format, one line per chunk, after a header comment.
pub fn write_timestamped(chunks: &[CaptureChunk]) -> String {
    use std::fmt::Write;
    let mut out = String::with_capacity(chunks.iter().map(|c| 12 + 3 * c.bytes.len()).sum());
    out.push_str(TIMESTAMPED_HEADER);
    out.push('\n');
    for chunk in chunks {
        let _ = write!(out, "{}", chunk.t_ms);
        for b in &chunk.bytes {
            let _ = write!(out, " {b:02x}");
        }
        out.push('\n');
    }
    out
}
