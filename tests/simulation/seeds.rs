//! Seeds of small events (three boards, games of 20 to 60 plies): every kind of board, every
//! kind of hands, every fault. `touchmove simulate --seeds 10000` runs the large ones.

use touchmove::sim::world::scenario::{FaultKind, Hands, Scenario, Shape};
use touchmove::sim::world::{RunDir, simulate};

/// A small event of three boards of every kind, games of 20 to 60 plies.
pub fn small() -> Shape {
    Shape {
        boards: 3,
        plies: (20, 60),
        ..Shape::default()
    }
}

/// Runs seeds `seeds` of `shape` and fails naming every failing seed's command, and every
/// seed listed as open that passes now.
pub fn all_pass(shape: &Shape, seeds: std::ops::Range<u64>) {
    let temp = touchmove::cli::simulate::default_dir();
    let open = crate::open_cases();
    let mut failures = Vec::new();
    for seed in seeds {
        let scenario = Scenario::draw(seed, shape);
        let dir = RunDir::new(&temp, seed, false).expect("a folder for the run");
        let report = simulate(&scenario, dir.path());
        let listed = open.contains(&report.command);
        match (report.passed(), listed) {
            (true, false) | (false, true) => {}
            (false, false) => failures.push(format!(
                "{}\n    {:?}",
                report.command, report.verdict.problems
            )),
            (true, true) => failures.push(format!(
                "{} passes: take it off fixtures/simulation/open.txt",
                report.command
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "failing seeds:\n{}",
        failures.join("\n")
    );
}

#[test]
fn every_kind_records_whole_games_with_no_fault() {
    let shape = Shape {
        faults: 0,
        ..small()
    };
    all_pass(&shape, 1..26);
}

#[test]
fn every_kind_through_every_fault() {
    all_pass(&small(), 100..140);
}

#[test]
fn every_kind_through_recorder_kills() {
    let shape = Shape {
        fault_kinds: vec![FaultKind::RecorderKill],
        faults: 3,
        ..small()
    };
    all_pass(&shape, 200..220);
}

#[test]
fn hostile_hands_on_every_kind_through_unplugs_and_power_cycles() {
    let shape = Shape {
        hands: vec![Hands::Hostile],
        fault_kinds: vec![FaultKind::Unplug, FaultKind::PowerCycle],
        ..small()
    };
    all_pass(&shape, 300..320);
}
