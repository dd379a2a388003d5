//! A board's move log downloading over DGT's 9600 baud line (≈ 8 s) after an unplug, over
//! real pseudo-terminals, the real driver and the real recorder: the other boards are
//! recorded meanwhile. (Outages, unplugs and restarts on every kind of board are judged game
//! by game in the simulation: tests/simulation.)
//!
//! Scaled down: the boards play 10 times faster than real time, so the 10 s of play missed
//! are 1 s of wall time (about three moves per board); the serial line is not scaled.

use std::time::Duration;

use crate::recorder_support::{read_board, uci_moves};
use touchmove::bench::BoardMake;
use touchmove::bench::outage::{OutagePlan, record_boards, wall};
use touchmove::sim::virtual_board::ResumeMode;

const SPEED: f64 = 10.0;
const UNPLUGGED_GAME_MS: u64 = 10_000;

/// `plan`'s games played on virtual boards with DGT's serial line (9600 baud) in `dir`, and
/// the recorder reading them.
async fn record_dgt_boards(
    dir: &tempfile::TempDir,
    plan: &OutagePlan,
    resume: ResumeMode,
) -> (
    Vec<touchmove::sim::virtual_board::VirtualBoard>,
    std::path::PathBuf,
    touchmove::recorder::RecorderHandle,
) {
    record_boards(
        dir.path(),
        plan.scripts.clone(),
        SPEED,
        BoardMake::dgt().resuming(resume),
        "Outage test",
    )
    .await
    .unwrap()
}

/// A move log takes ≈ 8 s to arrive at 9600 baud. Meanwhile the board that sends it is not
/// recorded further (its moves made during the download queue behind the log and are read
/// after the recovered ones), and the other board's moves reach its file as they are made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_downloading_for_8_s_holds_up_no_other_board() {
    let plan = OutagePlan::new(2).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (boards, out, recorder) = record_dgt_boards(&dir, &plan, ResumeMode::Idle).await;
    let plies = |k: usize| uci_moves(&read_board(&out, k)).len();
    for board in &boards {
        board.playing().await;
    }
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + wall(plan.outage_at_ms, SPEED)).await;
    boards[0].unplug().await.unwrap();
    tokio::time::sleep(wall(UNPLUGGED_GAME_MS, SPEED)).await;
    let (first_before, other_before) = (plies(1), plies(2));
    boards[0].replug().await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (first_during, other_during) = (plies(1), plies(2));
    for board in &boards {
        let limit = wall(plan.end_ms, SPEED) + Duration::from_secs(60);
        tokio::time::timeout(limit, board.finished())
            .await
            .expect("the board finishes its game");
        board.drained(Duration::from_secs(30)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    recorder.shutdown().await;

    assert_eq!(
        first_during, first_before,
        "5 s into the download the unplugged board's record waits for its log"
    );
    assert!(
        other_during >= other_before + 4,
        "the other board is recorded meanwhile: {other_before} plies, then {other_during}"
    );
    for (k, game) in plan.games.iter().enumerate() {
        assert_eq!(
            uci_moves(&read_board(&out, k + 1)),
            game.moves_uci,
            "board {}: the game exactly",
            k + 1
        );
    }
}
