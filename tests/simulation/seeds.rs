//! Seeds drawn at random shapes: every kind of board, every fault.

use touchmove::board::kind::BoardKind;
use touchmove::sim::world::scenario::{FaultKind, Hands, Scenario, Shape};
use touchmove::sim::world::{RunDir, simulate};

/// Runs seeds `seeds` of `shape` and fails naming every failing seed's command.
fn all_pass(shape: &Shape, seeds: std::ops::Range<u64>) {
    let temp = std::env::temp_dir();
    let mut failures = Vec::new();
    for seed in seeds {
        let scenario = Scenario::draw(seed, shape);
        let dir = RunDir::new(&temp, seed, false).expect("a folder for the run");
        let report = simulate(&scenario, dir.path());
        if !report.passed() {
            failures.push(format!(
                "{}\n    {:?}",
                report.command, report.verdict.problems
            ));
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
        boards: 6,
        kinds: BoardKind::ALL.to_vec(),
        faults: 0,
        ..Shape::default()
    };
    all_pass(&shape, 1..11);
}

#[test]
fn every_kind_through_every_fault() {
    all_pass(&Shape::default(), 100..140);
}

#[test]
fn every_kind_through_recorder_kills() {
    let shape = Shape {
        boards: 6,
        fault_kinds: vec![FaultKind::RecorderKill],
        faults: 3,
        ..Shape::default()
    };
    all_pass(&shape, 200..220);
}

#[test]
fn hostile_hands_on_every_kind_through_unplugs_and_power_cycles() {
    let shape = Shape {
        boards: 6,
        hands: vec![Hands::Hostile],
        fault_kinds: vec![FaultKind::Unplug, FaultKind::PowerCycle],
        ..Shape::default()
    };
    all_pass(&shape, 300..320);
}
