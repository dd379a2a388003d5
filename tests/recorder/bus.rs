//! A DGT bus chain of eight boards on one port, recorded by `touchmove record` like eight
//! boards on their own ports.
//!
//! A virtual chain (eight boards, serial numbers 10001–10008, one pseudo-terminal at 9600
//! baud) plays eight fixture games; the event file names each board by the chain's port and
//! its serial number. In the middle of its game board 3 is switched off while its players go
//! on moving, and switched on again: the other boards go on being polled, and board 3's game
//! resumes from the position it shows when it answers again.
//!
//! What must hold: every board's PGN file holds exactly the moves played on that board
//! (board 3's included), the recorder said that board 3 stopped answering and came back, and
//! the recorder stops cleanly.

use std::path::Path;
use std::process::Child;
use std::time::Duration;

use crate::recorder_support::{log, read_board, record_logged, uci_moves};
use touchmove::bench::outage::clock_presses;
use touchmove::bench::{ScriptGame, fixture_games, plain_timeline};
use touchmove::sim::virtual_board::VirtualBoardConfig;
use touchmove::sim::virtual_board::timeline::Pace;
use touchmove::sim::virtual_bus::{VirtualBus, VirtualBusConfig};

const BOARDS: usize = 8;
const PLIES: usize = 20;
const PACE: Pace = Pace {
    think_ms: 600,
    step_ms: 100,
};
/// The board switched off and on (index), after which of its presses, and for how long.
const OFF_BOARD: usize = 2;
const OFF_AFTER_PRESS: usize = 7;
const OFF_MS: u64 = 1_700;

fn games() -> Vec<ScriptGame> {
    let games = fixture_games();
    assert!(games.len() >= 2, "fixtures/recorder-games.pgn holds games");
    (0..BOARDS)
        .map(|i| {
            let mut g = games[i % games.len()].clone();
            g.moves_uci.truncate(PLIES + i % 3);
            g
        })
        .collect()
}

fn serial(i: usize) -> String {
    format!("{}", 10_001 + i)
}

fn write_config(path: &Path, port: &Path) {
    let mut text = "event = \"Bus test\"\nsite = \"Here\"\ntime_control = \"300+5\"\n".to_string();
    for i in 0..BOARDS {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nbus = \"{}\"\nserial = \"{}\"\nwhite = {{ name = \"White, {}\" }}\nblack = {{ name = \"Black, {}\" }}\n",
            i + 1,
            port.display(),
            serial(i),
            i + 1,
            i + 1
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// Stops the recorder as Ctrl-C would and checks that it exits cleanly.
fn stop_cleanly(mut child: Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    for _ in 0..200 {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "the recorder exits cleanly: {status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    panic!("the recorder did not stop within 10 s of SIGTERM");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_boards_on_one_bus_are_recorded_exactly_one_switched_off_and_on() {
    let dir = tempfile::tempdir().unwrap();
    let games = games();
    let scripts: Vec<_> = games.iter().map(|g| plain_timeline(g, PACE)).collect();
    let presses = clock_presses(&scripts[OFF_BOARD]);
    let off_at = presses[OFF_AFTER_PRESS] + 200;
    let missed = presses
        .iter()
        .filter(|&&t| t > off_at && t < off_at + OFF_MS)
        .count();
    assert!(missed >= 1, "moves are made while board 3 is off");
    let boards = scripts
        .into_iter()
        .enumerate()
        .map(|(i, script)| {
            let mut board = VirtualBoardConfig::new(dir.path().join("unused"), script);
            board.serial = serial(i);
            board
        })
        .collect();
    let port = dir.path().join("bus");
    let bus = VirtualBus::spawn(VirtualBusConfig::new(&port, boards)).unwrap();
    let config = dir.path().join("event.toml");
    write_config(&config, &port);
    let out = dir.path().join("out");
    let recorder = record_logged(
        &config,
        &out,
        std::iter::empty::<&str>(),
        &dir.path().join("recorder.log"),
    );

    let all_playing = async {
        for i in 0..BOARDS {
            bus.playing(i).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), all_playing)
        .await
        .unwrap_or_else(|_| panic!("every board is polled: {}", log(dir.path())));
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + Duration::from_millis(off_at)).await;
    bus.power(OFF_BOARD, false).await.unwrap();
    tokio::time::sleep(Duration::from_millis(OFF_MS)).await;
    bus.power(OFF_BOARD, true).await.unwrap();
    let all_finished = async {
        for i in 0..BOARDS {
            bus.finished(i).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(60), all_finished)
        .await
        .expect("every board finishes its game");
    // The last polls of every board, and the files written after them.
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop_cleanly(recorder);

    let text = log(dir.path());
    for (i, game) in games.iter().enumerate() {
        let record = read_board(&out, i + 1);
        assert_eq!(
            uci_moves(&record),
            game.moves_uci,
            "board {}: every move played, in order\n{text}",
            i + 1
        );
        assert_eq!(record.result, "*", "board {}: no result was played", i + 1);
    }
    let off_board = OFF_BOARD + 1;
    assert!(
        text.contains(&format!("board {off_board}: port"))
            && text.contains(&format!("bus board {}", serial(OFF_BOARD))),
        "the recorder said board {off_board} stopped answering:\n{text}"
    );
    let connected = format!("board {off_board}: connected");
    assert!(
        text.matches(&connected).count() >= 2,
        "the recorder said board {off_board} came back:\n{text}"
    );
    for other in (1..=BOARDS).filter(|&k| k != off_board) {
        assert_eq!(
            text.matches(&format!("board {other}: connected")).count(),
            1,
            "board {other} stayed connected:\n{text}"
        );
    }
}
