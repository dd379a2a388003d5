//! Seeds that once failed, kept so that they never fail again: each line of
//! `fixtures/simulation/regressions.txt` is the `touchmove simulate` command that replays one,
//! with what it found.

use std::process::Command;

#[test]
fn every_seed_that_once_failed_passes() {
    let list = include_str!("../../fixtures/simulation/regressions.txt");
    let commands: Vec<&str> = list
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("touchmove simulate"))
        .collect();
    assert!(!commands.is_empty(), "the list of regressions is read");
    let mut failures = Vec::new();
    for command in &commands {
        let args: Vec<&str> = command.split_whitespace().skip(1).collect();
        let out = Command::new(env!("CARGO_BIN_EXE_touchmove"))
            .args(&args)
            .output()
            .expect("touchmove runs");
        if !out.status.success() {
            failures.push(format!(
                "{command}\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
