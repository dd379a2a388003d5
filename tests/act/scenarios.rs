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

/// The severity of the one 8.5.3 alert the scenario `name` raises.
fn order_alert_severity(name: &str) -> Severity {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/scenarios")
        .join(name);
    let text = std::fs::read_to_string(path).expect("readable scenario");
    let events = Scenario::parse(&text)
        .expect("the scenario parses")
        .check()
        .expect("the scenario's events");
    let alerts: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) if a.article == "8.5.3" => Some(a),
            _ => None,
        })
        .collect();
    let [alert] = alerts[..] else {
        panic!("one 8.5.3 alert: {alerts:?}");
    };
    alert.severity
}

/// A result signal on a board that shows a square no recorded move explains may hide a move
/// the board did not report: the arbiter is warned, not merely told (a game recorded short
/// without a warning is silently wrong).
#[test]
fn a_result_signal_beside_a_square_no_move_explains_is_a_warning() {
    assert_eq!(
        order_alert_severity("result_signal_with_a_square_no_move_explains.txt"),
        Severity::Warning
    );
    assert_eq!(
        order_alert_severity("outage_game_ended_with_a_signal_on_a_cleared_square.txt"),
        Severity::Warning
    );
}
