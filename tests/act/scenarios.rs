//! Runs every scenario in `fixtures/scenarios/`: each observation must cause exactly the
//! events listed after it.

use std::path::Path;

use touchmove::act::scenario::Scenario;
use touchmove::act::{Event, Severity};

#[test]
fn every_scenario_causes_exactly_its_events() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/scenarios exists")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "only {} scenarios", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let text = std::fs::read_to_string(path).expect("readable scenario");
        match Scenario::parse(&text) {
            Err(e) => failures.push(format!("{}: {e}", path.display())),
            Ok(s) => {
                if let Err(e) = s.check() {
                    failures.push(format!("{}: {e}", path.display()));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A reading that needs a piece on a square the board never showed it on is only logged when
/// its player pressed after lifting it; not when the board named that piece on another square
/// meanwhile: the press was for that move, and the arbiter is warned.
#[test]
fn an_unseen_arrival_whose_piece_was_named_elsewhere_is_a_warning() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/scenarios/pressed_arrival_unseen_with_the_piece_named_elsewhere.txt");
    let text = std::fs::read_to_string(path).expect("readable scenario");
    let events = Scenario::parse(&text)
        .expect("the scenario parses")
        .check()
        .expect("the scenario's events");
    let alert = events
        .iter()
        .find_map(|e| match e {
            Event::Alert(a) if a.article == "7.4" => Some(a),
            _ => None,
        })
        .expect("a 7.4 alert");
    assert_eq!(alert.severity, Severity::Warning, "{alert:?}");
}
