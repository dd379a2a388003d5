//! A deterministic simulation of whole events: the real recorder (its board links, pipelines,
//! act-of-moving machines, journal, file writer and feed) records virtual boards of every
//! kind ([`crate::sim::devices`]) played by simulated hands, through seeded faults (unplugs,
//! power cycles, late answers, noisy lines, the recorder killed and restarted), in simulated
//! time.
//!
//! Time is tokio's paused clock: the recorder runs on a single-threaded runtime of its own
//! ([`incarnation`]), with no thread besides, and the loop ([`run`]) moves the clock from one
//! thing that happens to the next. Boards reach the recorder over cables in memory
//! ([`cable`]). Killing the recorder drops its runtime and everything in it; it starts again
//! from the journal on disk. A scenario is a pure function of its seed ([`scenario`]), so a
//! failing seed replays with one command, and [`shrink`] finds the smallest part of it that
//! still fails. Each run is judged against what the hands played ([`verdict`]), and the files
//! against what a restart rebuilds from the journal.

pub mod cable;
pub mod incarnation;
pub mod rounds;
pub mod run;
pub mod scenario;
pub mod shrink;
pub mod table;
pub mod verdict;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use crate::board::Millis;
use crate::recorder::layout::{OutputFolder, state_dir};
use crate::server::feed::Feed;
use incarnation::Incarnation;
use run::{RunFolders, port_of};
use scenario::Scenario;
use verdict::{Problem, Verdict};

/// What one simulated event gave.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The command that plays it again.
    pub command: String,
    /// The judgement.
    pub verdict: Verdict,
    /// Simulated time of the event, ms.
    pub simulated_ms: Millis,
    /// Plies the hands played on all boards.
    pub plies: usize,
}

impl Report {
    /// True when nothing was wrong.
    pub fn passed(&self) -> bool {
        self.verdict.problems.is_empty()
    }

    /// Simulated board-hours.
    pub fn board_hours(&self, boards: usize) -> f64 {
        self.simulated_ms as f64 * boards as f64 / 3_600_000.0
    }
}

/// A folder of its own for one run, removed when dropped unless kept.
pub struct RunDir {
    path: PathBuf,
    keep: bool,
}

impl RunDir {
    /// A new empty folder for the run of `seed` under `parent`.
    pub fn new(parent: &Path, seed: u64, keep: bool) -> std::io::Result<RunDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNT: AtomicU64 = AtomicU64::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let path = parent.join(format!(
            "touchmove-simulate-{}-{seed}-{n}",
            std::process::id()
        ));
        std::fs::create_dir_all(&path)?;
        Ok(RunDir { path, keep })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunDir {
    fn drop(&mut self) {
        if !self.keep {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Plays `scenario` in `dir` and judges it.
pub fn simulate(scenario: &Scenario, dir: &Path) -> Report {
    let folders = RunFolders::under(dir);
    let finished = run::play(scenario, &folders);
    let journal = state_dir(&folders.out).join(crate::recorder::JOURNAL_NAME);
    let mut verdict = verdict::judge(scenario, &finished, &folders.out, &journal);
    if let Err(problem) = files_equal_a_replay(scenario, &folders, finished.end_ms) {
        verdict.problems.push(problem);
    }
    Report {
        command: scenario.command(),
        verdict,
        simulated_ms: finished.end_ms,
        plies: finished
            .boards
            .iter()
            .map(|b| b.played.moves_uci.len())
            .sum(),
    }
}

/// Starts the recorder once more on the journal, every board unplugged, and compares the
/// files it rebuilds with those the run left.
fn files_equal_a_replay(
    scenario: &Scenario,
    folders: &RunFolders,
    now: Millis,
) -> Result<(), Problem> {
    let folder = &OutputFolder::new(&folders.out);
    let last_round = rounds::round_numbers(scenario).last().unwrap_or(1);
    let files: Vec<(u32, PathBuf)> = rounds::round_numbers(scenario)
        .flat_map(|round| {
            scenario
                .boards
                .iter()
                .map(move |b| (b.number, folder.game_path(round, b.number)))
        })
        .collect();
    let before: BTreeMap<&PathBuf, String> = files
        .iter()
        .map(|(_, p)| (p, std::fs::read_to_string(p).unwrap_or_default()))
        .collect();
    let written = Arc::new(tokio::sync::Notify::new());
    let cables: Vec<(u32, cable::Cable)> = scenario
        .boards
        .iter()
        .map(|b| {
            let cable = cable::Cable::new(&port_of(b.number).to_string_lossy(), written.clone());
            cable.set_plugged(false);
            (b.number, cable)
        })
        .collect();
    let options = run::recorder_options(
        &folders.out,
        Arc::new(Feed::new()),
        cables.iter().map(|(n, c)| (*n, c)),
    );
    let config = rounds::round_config(scenario, last_round);
    let replay =
        Incarnation::start(now + 1_000, scenario.seed, config, options).map_err(|e| Problem {
            board: None,
            what: format!("the recorder does not start again on its journal: {e}"),
        })?;
    replay.shut_down();
    for (number, path) in &files {
        let after = std::fs::read_to_string(path).unwrap_or_default();
        let before = before.get(path).map_or("", String::as_str);
        if before != after {
            // Kept beside it for whoever keeps the run's folder.
            let _ = std::fs::write(path.with_extension("before-replay.pgn"), before);
            let (line, was, is) = before
                .lines()
                .zip(after.lines())
                .enumerate()
                .find(|(_, (a, b))| a != b)
                .map_or((0, "", ""), |(i, (a, b))| (i + 1, a, b));
            return Err(Problem {
                board: Some(*number),
                what: format!(
                    "{} differs from what a restart rebuilds from the journal, from line {line}: \
                     {was:?} became {is:?}",
                    path.display()
                ),
            });
        }
    }
    Ok(())
}
