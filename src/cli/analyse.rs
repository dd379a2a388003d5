//! `touchmove analyse`: who can still checkmate (5.2.2 dead position, 6.9 flag fall), one JSON
//! object per position.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::rules::{Budget, Winnability, parse_position};

/// Arguments of `touchmove analyse`.
#[derive(Debug, clap::Args)]
pub struct AnalyseArgs {
    /// Positions in FEN (X-FEN and Shredder-FEN castling accepted).
    pub fens: Vec<String>,
    /// A file with one FEN per line; `#` lines and blank lines are skipped, and a leading
    /// label `WB`, `W-`, `-B` or `--` (chasolver's test format) is checked against the answer.
    #[arg(long, value_name = "FILE")]
    pub batch: Option<PathBuf>,
    /// Budget per side and position, in milliseconds of the analysing thread's CPU time (so
    /// the answers do not depend on machine load); 0 = no limit but the solver's own node
    /// limits.
    #[arg(long, default_value_t = 1000, value_name = "N")]
    pub budget_ms: u64,
    /// Positions analysed at once (default: the number of cores).
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// One position to analyse: where it came from, its text and its label, if any.
struct Item {
    origin: String,
    fen: String,
    label: Option<(bool, bool)>,
}

/// Runs `touchmove analyse`.
pub fn run(args: AnalyseArgs) -> ExitCode {
    let mut items: Vec<Item> = args
        .fens
        .iter()
        .enumerate()
        .map(|(i, fen)| Item {
            origin: format!("argument {}", i + 1),
            fen: fen.clone(),
            label: None,
        })
        .collect();
    if let Some(path) = &args.batch {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("touchmove analyse: cannot read {}: {e}", path.display());
                return ExitCode::FAILURE;
            }
        };
        items.extend(batch_items(
            &path.display().to_string(),
            &String::from_utf8_lossy(&bytes),
        ));
    }
    if items.is_empty() {
        eprintln!("touchmove analyse: give FENs or --batch FILE (see touchmove help analyse)");
        return ExitCode::FAILURE;
    }
    let budget = match args.budget_ms {
        0 => Budget::deterministic(),
        ms => Budget::cpu_millis(ms),
    };
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let answers = analyse_all(&items, &budget, jobs);
    let mut failed = false;
    let mut tally = Tally::default();
    for (item, answer) in items.iter().zip(&answers) {
        match answer {
            Ok(w) => {
                println!("{}", json_line(&item.fen, w));
                if let Some(label) = item.label {
                    tally.count(label, w);
                }
            }
            Err(reason) => {
                failed = true;
                eprintln!("{}: invalid FEN {:?}: {reason}", item.origin, item.fen);
            }
        }
    }
    if tally.labelled > 0 {
        eprintln!(
            "{} labelled positions: {} agree, {} disagree, {} undetermined (per side: {} agree, {} disagree, {} undetermined)",
            tally.labelled,
            tally.positions_agree,
            tally.positions_disagree,
            tally.positions_undetermined,
            tally.sides_agree,
            tally.sides_disagree,
            tally.sides_undetermined
        );
        failed |= tally.positions_disagree > 0;
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn batch_items(origin: &str, text: &str) -> Vec<Item> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with('#'))
        .map(|(i, line)| {
            let line = line.trim();
            let (label, fen) = match line.split_once(' ') {
                Some((tag, rest)) if is_label(tag) => (
                    Some((tag.starts_with('W'), tag.ends_with('B'))),
                    rest.trim(),
                ),
                _ => (None, line),
            };
            Item {
                origin: format!("{origin}:{}", i + 1),
                fen: fen.to_string(),
                label,
            }
        })
        .collect()
}

fn is_label(tag: &str) -> bool {
    matches!(tag, "WB" | "W-" | "-B" | "--")
}

/// Analyses every item on `jobs` threads, keeping the input order.
fn analyse_all(items: &[Item], budget: &Budget, jobs: usize) -> Vec<Result<Winnability, String>> {
    let next = AtomicUsize::new(0);
    let mut answers: Vec<Option<Result<Winnability, String>>> = vec![None; items.len()];
    let chunks: Vec<Vec<(usize, Result<Winnability, String>)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..jobs.min(items.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        let answer =
                            parse_position(&item.fen).map(|pos| Winnability::of(&pos, budget));
                        done.push((i, answer));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().unwrap_or_default())
            .collect()
    });
    for (i, answer) in chunks.into_iter().flatten() {
        answers[i] = Some(answer);
    }
    answers
        .into_iter()
        .map(|a| a.unwrap_or_else(|| Err("analysis thread failed".to_string())))
        .collect()
}

fn json_bool(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "true",
        Some(false) => "false",
        None => "null",
    }
}

/// The JSON object printed for one position.
pub fn json_line(fen: &str, w: &Winnability) -> String {
    format!(
        "{{\"fen\":{},\"white_can_checkmate\":{},\"black_can_checkmate\":{},\"dead\":{}}}",
        serde_json::Value::String(fen.to_string()),
        json_bool(w.white_can_checkmate),
        json_bool(w.black_can_checkmate),
        json_bool(w.dead())
    )
}

/// Agreement with labels: a position agrees when both sides are determined and right.
#[derive(Default)]
struct Tally {
    labelled: usize,
    positions_agree: usize,
    positions_disagree: usize,
    positions_undetermined: usize,
    sides_agree: usize,
    sides_disagree: usize,
    sides_undetermined: usize,
}

impl Tally {
    fn count(&mut self, (white, black): (bool, bool), w: &Winnability) {
        self.labelled += 1;
        let mut wrong = false;
        let mut open = false;
        for (expected, got) in [
            (white, w.white_can_checkmate),
            (black, w.black_can_checkmate),
        ] {
            match got {
                Some(g) if g == expected => self.sides_agree += 1,
                Some(_) => {
                    self.sides_disagree += 1;
                    wrong = true;
                }
                None => {
                    self.sides_undetermined += 1;
                    open = true;
                }
            }
        }
        if wrong {
            self.positions_disagree += 1;
        } else if open {
            self.positions_undetermined += 1;
        } else {
            self.positions_agree += 1;
        }
    }
}
