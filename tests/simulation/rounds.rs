//! Events of several rounds: the pairings of a real TRF, the boards set up again between
//! rounds, the recorder killed within and between rounds, results by signal and by the
//! arbiter, post-mortems; every round's games judged against what was played, under their
//! paired names, and every result in the TRF `touchmove results` writes. These seeds replace
//! the real-time event day (`touchmove bench event` on pseudo-terminals).

use touchmove::sim::world::rounds::Round;
use touchmove::sim::world::scenario::{AfterGame, Fault, FaultKind, Scenario, Shape};

use crate::seeds::{all_pass, small};

/// Two rounds of four boards of every kind, with every fault.
fn two_rounds() -> Shape {
    Shape {
        boards: 4,
        rounds: 2,
        ..small()
    }
}

/// When the recorder is killed in `scenario`.
fn kills(scenario: &Scenario) -> impl Iterator<Item = u64> + '_ {
    scenario.faults.iter().filter_map(|f| match f {
        Fault::RecorderKill { at_ms, .. } => Some(*at_ms),
        _ => None,
    })
}

/// The second round of `scenario`, if it has one.
fn second(scenario: &Scenario) -> Option<Round> {
    scenario.rounds.first().cloned()
}

/// Something a scenario does or not.
type Holds = dyn Fn(&Scenario) -> bool;

/// What the seeds of `shape` in `seeds` put the recorder through, over all rounds: fails
/// naming what none of them does.
fn covers_an_event_day(shape: &Shape, seeds: std::ops::Range<u64>) {
    let scenarios: Vec<Scenario> = seeds.map(|s| Scenario::draw(s, shape)).collect();
    let checks: [(&str, &Holds); 6] = [
        ("the recorder killed between rounds", &|s| {
            let Some(r) = second(s) else { return false };
            let first_over = s
                .boards
                .iter()
                .map(|b| b.starts_ms + b.play().physical.last().map_or(0, |o| o.t_ms))
                .max()
                .unwrap_or(0);
            kills(s).any(|t| t > first_over && t < r.opens_ms)
        }),
        (
            "the recorder killed during the second round's games",
            &|s| {
                let Some(r) = second(s) else { return false };
                let begins = r.boards.iter().map(|b| b.starts_ms).min().unwrap_or(0);
                kills(s).any(|t| t > begins)
            },
        ),
        ("a post-mortem in the second round", &|s| {
            second(s).is_some_and(|r| r.boards.iter().any(|b| b.after == AfterGame::PostMortem))
        }),
        (
            "a board left standing set up again for the next round",
            &|s| s.boards.iter().any(|b| b.after == AfterGame::Leave),
        ),
        (
            "the arbiter's result on a board that cannot show the kings' signal",
            &|s| {
                second(s).is_some_and(|r| {
                    r.boards
                        .iter()
                        .any(|b| !b.kind.identifies_pieces() && b.play().result_signal.is_some())
                })
            },
        ),
        ("a result signalled on the board", &|s| {
            second(s).is_some_and(|r| {
                r.boards
                    .iter()
                    .any(|b| b.kind.identifies_pieces() && b.play().result_signal.is_some())
            })
        }),
    ];
    let missing: Vec<&str> = checks
        .iter()
        .filter(|(_, holds)| !scenarios.iter().any(holds))
        .map(|(name, _)| *name)
        .collect();
    assert!(missing.is_empty(), "no seed has {missing:?}");
    assert!(
        scenarios
            .iter()
            .all(|s| s.rounds.len() + 1 == shape.rounds as usize),
        "every seed plays {} rounds",
        shape.rounds
    );
}

#[test]
fn every_round_of_an_event_is_recorded_and_its_results_reach_the_trf() {
    let seeds = 400..412;
    covers_an_event_day(&two_rounds(), seeds.clone());
    all_pass(&two_rounds(), seeds);
}

#[test]
fn three_rounds_through_recorder_kills_and_power_cycles_on_every_kind() {
    let shape = Shape {
        rounds: 3,
        fault_kinds: vec![FaultKind::RecorderKill, FaultKind::PowerCycle],
        faults: 2,
        ..two_rounds()
    };
    let seeds = 500..506;
    covers_an_event_day(&shape, seeds.clone());
    all_pass(&shape, seeds);
}

#[test]
fn a_single_round_seed_is_the_first_round_of_the_same_seed_with_more_rounds() {
    for seed in 1..20 {
        let one = Scenario::draw(seed, &small());
        let two = Scenario::draw(
            seed,
            &Shape {
                rounds: 2,
                ..small()
            },
        );
        assert_eq!(one.boards, two.boards, "seed {seed}");
        assert!(
            one.rounds.is_empty() && two.rounds.len() == 1,
            "seed {seed}"
        );
        let first_round_faults: Vec<&Fault> = two
            .faults
            .iter()
            .filter(|f| f.at_ms() < two.rounds[0].opens_ms)
            .collect();
        assert!(
            one.faults.iter().all(|f| first_round_faults.contains(&f)),
            "seed {seed}: the first round's faults are kept"
        );
    }
}
