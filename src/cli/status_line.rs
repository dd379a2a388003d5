//! The status line on the terminal: what the operator must see about the process's links to
//! the outside (lichess push, cluster backlog, web connections), printed when it changes.

use std::sync::Arc;
use std::time::Duration;

use crate::server::feed::Feed;

/// How often the status is looked at.
const CHECK_EVERY: Duration = Duration::from_secs(1);

/// How often the line is repeated while something needs attention.
const REPEAT_PROBLEMS: Duration = Duration::from_secs(30);

/// How often the line is repeated while all is well (a sign of life with the counts).
const REPEAT_WELL: Duration = Duration::from_secs(600);

/// Prints `touchmove COMMAND: status: …` on stderr whenever the set of problems changes
/// (one appears, or all are gone), every [`REPEAT_PROBLEMS`] while there are any, and every
/// [`REPEAT_WELL`] otherwise. Runs until aborted.
pub(crate) async fn run(command: &'static str, feed: Arc<Feed>) {
    use std::io::Write;
    let mut shown: (Vec<String>, tokio::time::Instant) = (Vec::new(), tokio::time::Instant::now());
    loop {
        tokio::time::sleep(CHECK_EVERY).await;
        let report = feed.status().report();
        let kinds: Vec<String> = report.problems.iter().map(|p| problem_kind(p)).collect();
        let now = tokio::time::Instant::now();
        let repeat = if kinds.is_empty() {
            REPEAT_WELL
        } else {
            REPEAT_PROBLEMS
        };
        if shown.0 != kinds || now.duration_since(shown.1) >= repeat {
            let _ = writeln!(std::io::stderr(), "touchmove {command}: {}", report.line());
            shown = (kinds, now);
        }
    }
}

/// What a problem is about (its first word: lichess, cluster, web), so that changing
/// numbers alone do not print the line again.
fn problem_kind(problem: &str) -> String {
    problem
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string()
}
