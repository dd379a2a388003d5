//! Runs every scenario in `fixtures/scenarios/`: each observation must cause exactly the
//! events listed after it.

use std::path::Path;

use touchmove::act::scenario::Scenario;

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
