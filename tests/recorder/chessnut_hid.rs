//! Chessnut boards over USB HID recorded by `touchmove record`: virtual Chessnuts that speak
//! in HID reports (one message a report, as a `/dev/hidraw*` node reads and writes) behind
//! the HID transport, named `kind = "chessnut"` in the event file. One sends `01 24`
//! positions in bare 64-byte reports padded with zeros; the other `01 3D` positions with a
//! report number first and other padding. Each plays the opening of a different real game;
//! both games must come out exactly as played, the LEDs must show the last move, and the
//! recorder's writes must keep the 200 ms Chessnut's SDK keeps between them.

use std::fmt::Write as _;
use std::time::Duration;

use crate::recorder_support::{demo_openings, read_board, record_logged, stop, uci_moves};
use shakmaty::Square;
use touchmove::bench::plain_timeline;
use touchmove::sim::virtual_board::timeline::Pace;
use touchmove::sim::virtual_chessnut_hid::{ChessnutHidConfig, VirtualChessnutHid};

const PLIES: usize = 16;
const PACE: Pace = Pace {
    think_ms: 700,
    step_ms: 300,
};

/// The DGT field (0 = a8) of a square named in a UCI move.
fn field(name: &str) -> u8 {
    let square: Square = name.parse().expect("a square");
    (7 - u8::from(square.rank())) * 8 + u8::from(square.file())
}

#[test]
fn chessnut_boards_on_usb_hid_are_recorded_exactly_in_either_report_layout() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let games = demo_openings(PLIES);
    let games = &games[3..5];
    let _guard = runtime.enter();
    let mut boards = Vec::new();
    let mut event = String::from("event = \"Chessnut HID\"\nround = 1\nleds = \"last-move\"\n");
    for (i, game) in games.iter().enumerate() {
        let path = dir.path().join(format!("chessnut-{}", i + 1));
        let mut config = ChessnutHidConfig::new(&path, plain_timeline(game, PACE));
        if i == 1 {
            config.position_length = 0x3D;
            config.report_number = true;
            config.padding = 0xA5;
        }
        boards.push(VirtualChessnutHid::spawn(config).unwrap());
        write!(
            event,
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nkind = \"chessnut\"\n",
            i + 1,
            path.display()
        )
        .unwrap();
    }
    let config = dir.path().join("event.toml");
    std::fs::write(&config, &event).unwrap();
    let out = dir.path().join("out");
    let log = dir.path().join("recorder.log");
    let recorder = record_logged(&config, &out, ["--no-server"], &log);
    runtime.block_on(async {
        for board in &boards {
            tokio::time::timeout(Duration::from_secs(90), board.finished())
                .await
                .expect("every board plays its game once the recorder started its stream");
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    });
    stop(recorder);
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    for (i, (game, board)) in games.iter().zip(&boards).enumerate() {
        assert_eq!(
            uci_moves(&read_board(&out, i + 1)),
            game.moves_uci,
            "board {} recorded exactly; recorder log:\n{log}",
            i + 1
        );
        assert!(board.refused().is_empty(), "{:02X?}", board.refused());
        let last = game.moves_uci.last().unwrap();
        let mut lit = vec![field(&last[..2]), field(&last[2..4])];
        lit.sort_unstable();
        assert_eq!(board.lit_fields(), lit, "board {} shows {last}", i + 1);
        assert!(
            board.host_reports() > PLIES as u64 / 2,
            "the recorder wrote the stream start and the LEDs of the moves: {} reports",
            board.host_reports()
        );
        let gap = board.shortest_write_gap().unwrap();
        assert!(
            gap >= Duration::from_millis(195),
            "board {}: two writes {gap:?} apart",
            i + 1
        );
    }
}
