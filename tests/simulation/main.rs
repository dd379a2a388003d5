//! Whole events in simulated time: the real recorder on virtual boards of every kind, played
//! by simulated hands through seeded faults, each judged against what was played. A failing
//! seed prints the `touchmove simulate` command that replays it.

mod regressions;
mod rounds;
mod seeds;
mod slow_answers;
mod table;

/// The commands of `fixtures/simulation/open.txt`: runs known to fail today (open bugs).
pub fn open_cases() -> Vec<String> {
    include_str!("../../fixtures/simulation/open.txt")
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("touchmove simulate"))
        .map(str::to_string)
        .collect()
}
