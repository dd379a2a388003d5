//! Field updates lost on the line in mid-game, over a real pseudo-terminal with the real
//! driver and recorder: the board dump after the next press shows the loss, the recorder
//! asks the board for its EEPROM move log (beyond the one read in the handshake) and the
//! game is recorded exactly.

use std::sync::Arc;
use std::time::Duration;

use crate::recorder_support::{fixture_opening, read_board, uci_moves};
use touchmove::bench::{event_for_ports, plain_timeline};
use touchmove::board::ObservationKind;
use touchmove::recorder::{Recorder, RunOptions};
use touchmove::server::feed::Feed;
use touchmove::sim::virtual_board::timeline::Pace;
use touchmove::sim::virtual_board::{VirtualBoard, VirtualBoardConfig};
use touchmove::wire::dgt::Command;

const PLIES: usize = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updates_lost_mid_game_are_put_back_from_the_boards_log() {
    let dir = tempfile::tempdir().unwrap();
    let game = fixture_opening(0, PLIES);
    let script = plain_timeline(&game, Pace::default());
    let mut config = VirtualBoardConfig::new(dir.path().join("board-1"), script.clone());
    config.speed = 8.0;
    config.base_time_ms = 30 * 60 * 1000;
    config.eeprom_log = true;
    config.log_traffic = true;
    // The lift and the placement of a move after the twelfth press, and the placement of
    // one after the twentieth: neither reaches the host.
    let after_press = |n: usize| {
        script
            .iter()
            .enumerate()
            .filter(|(_, o)| matches!(o.kind, ObservationKind::ClockPressed { .. }))
            .nth(n)
            .map(|(i, _)| i)
            .unwrap()
    };
    let (a, b) = (after_press(12), after_press(20));
    config.lose_updates = vec![a + 1, a + 2, b + 2];
    let board = VirtualBoard::spawn(config).unwrap();
    let ports = vec![board.path().to_path_buf()];
    let event = event_for_ports("Lost updates", "1800", &ports);
    let out = dir.path().join("out");
    let feed = Arc::new(Feed::with_replay_capacity(1 << 16));
    let recorder = Recorder::start(event, RunOptions::new(&out, feed.clone()))
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(90), board.finished())
        .await
        .expect("the board plays its game");
    // The last log download (≈ 1 s for a short log) and the last dump.
    tokio::time::sleep(Duration::from_secs(4)).await;
    recorder.shutdown().await;

    let asked = board
        .commands()
        .iter()
        .filter(|c| matches!(c, Command::SendEepromMoves))
        .count();
    assert!(
        asked >= 2,
        "the log is read in the handshake and again after the loss: asked {asked} time(s)"
    );
    let reread = feed
        .alerts(1)
        .iter()
        .filter(|a| a.alert.alert.article == "8.5.3" && a.alert.alert.message.contains("move log"))
        .count();
    assert!(
        reread >= 1,
        "the moves were read again from the log: {:?}",
        feed.alerts(1)
    );
    let record = read_board(&out, 1);
    assert_eq!(uci_moves(&record), game.moves_uci, "recorded exactly");
    let pgn = std::fs::read_to_string(out.join("round-1/game-1.pgn")).unwrap();
    for article in ["7.5.", "order not observed"] {
        assert!(!pgn.contains(article), "nothing against the players: {pgn}");
    }
}
