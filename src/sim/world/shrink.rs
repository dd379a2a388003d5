//! Shrinking a failing scenario to a smaller one that still fails: fewer boards, fewer
//! faults, shorter games. Each try is a whole run, so the number of tries is bounded.

use std::path::Path;

use super::scenario::{Kept, Scenario};
use super::{Report, RunDir, simulate};

/// Most runs a shrink makes.
pub const MOST_TRIES: usize = 40;

/// The smallest scenario found that still fails, with its report; `failing` must fail.
pub fn shrink(failing: &Scenario, report: Report, temp: &Path) -> (Scenario, Report) {
    let mut best = (failing.clone(), report);
    let mut tries = 0;
    let mut fails = |kept: Kept, best: &mut (Scenario, Report)| -> bool {
        if tries >= MOST_TRIES {
            return false;
        }
        tries += 1;
        let candidate = Scenario::draw_kept(best.0.seed, &best.0.shape, &kept);
        let Ok(dir) = RunDir::new(temp, candidate.seed, false) else {
            return false;
        };
        let report = simulate(&candidate, dir.path());
        if report.passed() {
            return false;
        }
        *best = (candidate, report);
        true
    };
    // The boards the problems name, alone.
    let named: Vec<u32> = best
        .1
        .verdict
        .problems
        .iter()
        .filter_map(|p| p.board)
        .collect();
    if !named.is_empty() && named.len() < best.0.boards.len() {
        let mut kept = best.0.kept.clone();
        let mut boards = named.clone();
        boards.sort_unstable();
        boards.dedup();
        kept.boards = Some(boards);
        fails(kept, &mut best);
    }
    // Then each other board, and each fault, one at a time.
    let numbers: Vec<u32> = best.0.boards.iter().map(|b| b.number).collect();
    for number in numbers {
        if best.0.boards.len() <= 1 {
            break;
        }
        let mut kept = best.0.kept.clone();
        kept.boards = Some(
            best.0
                .boards
                .iter()
                .map(|b| b.number)
                .filter(|&n| n != number)
                .collect(),
        );
        fails(kept, &mut best);
    }
    let drawn = Scenario::draw(best.0.seed, &best.0.shape).faults;
    let mut indices: Vec<usize> = match &best.0.kept.faults {
        Some(indices) => indices.clone(),
        None => (0..drawn.len()).collect(),
    };
    let mut i = 0;
    while i < indices.len() {
        let mut fewer = indices.clone();
        fewer.remove(i);
        let mut kept = best.0.kept.clone();
        kept.faults = Some(fewer.clone());
        if fails(kept, &mut best) {
            indices = fewer;
        } else {
            i += 1;
        }
    }
    // Then shorter games, halving while it still fails.
    let longest = best.0.boards.iter().map(|b| b.plies).max().unwrap_or(0);
    let mut plies = longest / 2;
    while plies >= 2 {
        let mut kept = best.0.kept.clone();
        kept.plies = Some(plies);
        if !fails(kept, &mut best) {
            break;
        }
        plies /= 2;
    }
    best
}
