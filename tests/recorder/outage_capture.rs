//! The capture of issue 28 (`fixtures/outage/`): a board that kept its update mode through
//! a 10 s outage sent its next move (Nd7-c5) as soon as the link was back, before the log
//! and the dump the handshake asked for. Played: 13...a5 14.b3 Nc5. Read as live, Nc5 came
//! first and the gap's moves after it, with no mark (13...Nc5 14.b3 a5).

use std::path::{Path, PathBuf};

use crate::recorder_support::{self, uci_moves, with_marked_orders_as_played};
use touchmove::clock::TimeControl;
use touchmove::record::pgn::read_games;
use touchmove::recorder::{BoardPipeline, EventConfig, GameTags};
use touchmove::wire::capture::read_capture;

fn fixture(ext: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/outage")
        .join(format!("board-resumes-before-the-download.{ext}"))
}

/// The moves played (the `.uci` file without its result).
fn played() -> Vec<String> {
    let text = std::fs::read_to_string(fixture("uci")).unwrap();
    text.split_whitespace()
        .filter(|w| !w.contains('-'))
        .map(str::to_string)
        .collect()
}

/// `touchmove replay`, which reads no move log: the moves of the gap, Nc5 among them, are
/// read from the board's dump, in an order the record marks with the order played among
/// those it names; every other move is the one played.
#[test]
fn replay_marks_the_gap_and_names_the_order_played() {
    let capture = fixture("tcap");
    let out = recorder_support::touchmove(&["replay", capture.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pgn = String::from_utf8(out.stdout).unwrap();
    let games = read_games(&pgn).unwrap();
    let game = games.last().expect("a game");
    let played = played();
    let fixed = with_marked_orders_as_played(game, &played).unwrap();
    assert_eq!(fixed, played, "{pgn}");
    let recorded = uci_moves(game);
    if recorded != played {
        assert!(pgn.contains("order not observed"), "{pgn}");
    }
}

/// The recorder's pipeline, which reads the board's move log: the log orders the gap's moves
/// and the move sent before the handshake comes after them. The game exactly, no mark.
#[test]
fn the_recorder_reads_the_gap_from_the_log_in_the_order_played() {
    let chunks = read_capture(&std::fs::read_to_string(fixture("tcap")).unwrap()).unwrap();
    let config = EventConfig {
        event: "Outage capture".into(),
        ..EventConfig::default()
    };
    let mut pipeline = BoardPipeline::new(
        GameTags::new(&config, 1),
        TimeControl::parse("1800").unwrap(),
    )
    .with_board_log();
    let mut events = Vec::new();
    let mut last = 0;
    for chunk in &chunks {
        pipeline.on_bytes(chunk.t_ms, &chunk.bytes, &mut events);
        last = chunk.t_ms;
    }
    pipeline.tick(last + 10_000, &mut events);
    let pgn = pipeline.pgn();
    let recorded = uci_moves(&pipeline.record());
    assert_eq!(recorded, played(), "{pgn}");
    assert!(!pgn.contains("order not observed"), "{pgn}");
    let reports = pipeline.take_log_reports();
    assert!(
        reports
            .iter()
            .any(|r| r.refused.is_none() && !r.recovered.is_empty()),
        "the log after the outage is used: {reports:?}"
    );
}
