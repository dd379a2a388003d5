//! `touchmove bench event` in a small form: 8 boards of a real TRF, 2 rounds, real games
//! whose results are the TRF's, played by realistic hands; results by signal or by the
//! arbiter, pieces set back, post-mortems, boards switched off, the recorder restarted in
//! each round and between rounds, `touchmove results` after each round. Every game must be in
//! its `game-K.pgn` exactly (moves, paired names, played result) and every result in the
//! right lines of the TRF.

use serde_json::Value;

#[test]
fn an_event_day_loses_no_game_and_no_result() {
    let root = env!("CARGO_MANIFEST_DIR");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .current_dir(root)
        .args([
            "bench",
            "event",
            "--boards",
            "8",
            "--rounds",
            "2",
            "--speed",
            "4",
            "--max-pause-ms",
            "700",
            "--max-plies",
            "60",
            "--seed",
            "3",
        ])
        .output()
        .expect("the touchmove binary runs");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let figures: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("figures as JSON ({e}): {stdout}\n{stderr}"));
    let count = |name: &str| figures[name].as_u64().unwrap_or(0);
    assert_eq!(count("games_played"), 16, "{figures}");
    assert_eq!(count("games_exact"), 16, "{figures}");
    assert_eq!(count("results_in_trf"), 16, "{figures}");
    for happened in [
        "ended_on_the_board",
        "results_by_arbiter",
        "post_mortems",
        "switched_off",
    ] {
        assert!(count(happened) > 0, "{happened}: {figures}");
    }
    assert_eq!(count("recorder_starts"), 4, "{figures}");
    assert!(o.status.success(), "{stderr}");
}
