//! Bluetooth LE boards through the transport trait: a virtual peripheral written from the
//! documents (GATT services, fragments, two notify characteristics, one write's size) in
//! front of a virtual board of each kind, read by the recorder's own links and pipeline.
//! Every game must come out as played. With the `ble` feature, the BlueZ side must say what
//! is missing on a machine without Bluetooth, and never panic.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use touchmove::bench::{ScriptGame, fixture_games, plain_timeline};
use touchmove::board::kind::BoardKind;
use touchmove::driver::ble::stream::{BleConnector, open_ble_stream};
use touchmove::driver::dgt::{LinkConfig, LinkEvent, spawn_link};
use touchmove::driver::snapshot_link::{SnapshotLinkConfig, spawn_snapshot_link};
use touchmove::event::config::EventConfig;
use touchmove::recorder::pipeline::{BoardPipeline, GameTags};
use touchmove::sim::snapshot_board::{SnapshotBoard, SnapshotBoardConfig};
use touchmove::sim::virtual_board::timeline::Pace;
use touchmove::sim::virtual_pegasus::{VirtualPegasus, VirtualPegasusConfig};
use touchmove::sim::virtual_peripheral::VirtualPeripheral;
use touchmove::wire::gatt::{self, GattProfile};
use touchmove::wire::pegasus::DeveloperKey;
use touchmove::wire::{chessnut, millennium};

const PACE: Pace = Pace {
    think_ms: 400,
    step_ms: 150,
};

/// The first `plies` of the fixture game `index`, without promotions (an occupancy-only
/// board cannot show the piece).
fn game(index: usize, plies: usize) -> ScriptGame {
    let mut game = fixture_games().remove(index);
    game.moves_uci.truncate(plies);
    assert!(game.moves_uci.iter().all(|m| m.len() == 4));
    game
}

/// What the recorder's pipeline for `kind` makes of a link: the moves it recorded, the
/// number of connections, and every byte received.
struct Recording {
    pipeline: BoardPipeline,
    connections: usize,
    losses: usize,
    received: Vec<u8>,
}

impl Recording {
    fn new(kind: BoardKind) -> Recording {
        let config = EventConfig {
            event: "Bluetooth LE".into(),
            ..EventConfig::default()
        };
        let control = touchmove::clock::TimeControl::parse("1800").unwrap();
        Recording {
            pipeline: BoardPipeline::new(GameTags::new(&config, 1), control).with_kind(kind),
            connections: 0,
            losses: 0,
            received: Vec::new(),
        }
    }

    fn moves(&self) -> Vec<String> {
        self.pipeline
            .record()
            .moves
            .iter()
            .map(|m| m.uci.clone())
            .collect()
    }

    /// Follows the link until `done` holds (checked after each event) or `limit` passes.
    async fn follow(
        &mut self,
        events: &mut mpsc::Receiver<LinkEvent>,
        limit: Duration,
        done: impl Fn(&Recording) -> bool,
    ) {
        let deadline = Instant::now() + limit;
        let mut out = Vec::new();
        while !done(self) {
            let Ok(Some(event)) = tokio::time::timeout_at(deadline, events.recv()).await else {
                return;
            };
            match event {
                LinkEvent::Connected { .. } => self.connections += 1,
                LinkEvent::Bytes { t_ms, data } => {
                    self.received.extend_from_slice(&data);
                    self.pipeline.on_bytes(t_ms, &data, &mut out);
                }
                LinkEvent::Disconnected { .. } => {
                    self.losses += 1;
                    self.pipeline.link_lost();
                }
                LinkEvent::Failed { message } => panic!("the link failed: {message}"),
            }
        }
    }

    /// Follows the link while the board plays its script, until the game's moves are in.
    async fn follow_game(
        &mut self,
        events: &mut mpsc::Receiver<LinkEvent>,
        played: impl std::future::Future<Output = ()>,
        game: &ScriptGame,
    ) {
        let plies = game.moves_uci.len();
        tokio::time::timeout(Duration::from_secs(60), async {
            tokio::join!(
                played,
                self.follow(events, Duration::from_secs(60), |r| r.moves().len()
                    >= plies)
            )
        })
        .await
        .expect("the game is played");
    }
}

/// A virtual board of `kind` at `dir/KIND` playing `game` behind a virtual peripheral, and
/// the snapshot link to it through `profile`, followed until it connected.
struct SnapshotBoardOverBle {
    board: SnapshotBoard,
    peripheral: VirtualPeripheral,
    link: touchmove::driver::dgt::LinkHandle,
    events: mpsc::Receiver<LinkEvent>,
    lights: touchmove::driver::snapshot_link::Lights,
    recording: Recording,
}

async fn snapshot_board_over_ble(
    dir: &std::path::Path,
    game: &ScriptGame,
    profile: &'static GattProfile,
) -> SnapshotBoardOverBle {
    let kind = profile.kind;
    let path = dir.join(kind.name());
    let board = SnapshotBoard::spawn(SnapshotBoardConfig::new(
        kind,
        &path,
        plain_timeline(game, PACE),
    ))
    .unwrap();
    let peripheral = VirtualPeripheral::new(kind, &path);
    let mut config = SnapshotLinkConfig::new(kind, format!("ble:virtual {kind}"));
    config.connector = Some(connector(&peripheral, profile));
    let (link, mut events, lights) = spawn_snapshot_link(config, Instant::now());
    let mut recording = Recording::new(kind);
    recording
        .follow(&mut events, Duration::from_secs(10), |r| r.connections > 0)
        .await;
    assert_eq!(recording.connections, 1, "the first frame connects");
    SnapshotBoardOverBle {
        board,
        peripheral,
        link,
        events,
        lights,
        recording,
    }
}

fn connector(
    peripheral: &VirtualPeripheral,
    profile: &'static GattProfile,
) -> Arc<BleConnector<VirtualPeripheral>> {
    Arc::new(BleConnector::new(Arc::new(peripheral.clone()), profile))
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_millennium_game_is_recorded_from_fragmented_notifications_and_long_commands_are_cut() {
    let game = game(0, 16);
    let dir = tempfile::tempdir().unwrap();
    let mut ble = snapshot_board_over_ble(dir.path(), &game, &gatt::MILLENNIUM).await;

    // An `L` command is 167 bytes: the board takes 20 at a time.
    let lit = [12u8, 30];
    let leds = millennium::Command::Leds {
        slot_time: 50,
        patterns: millennium::square_leds(lit, 0xFF),
    }
    .encode();
    assert!(leds.len() > gatt::SMALLEST_WRITE);
    ble.lights.send(leds).unwrap();

    ble.recording
        .follow_game(&mut ble.events, ble.board.finished(), &game)
        .await;
    assert_eq!(ble.recording.moves(), game.moves_uci);
    assert_eq!(ble.board.lit_fields(), lit, "the cut command arrived whole");
    assert_eq!(ble.peripheral.largest_write(), gatt::SMALLEST_WRITE);
    assert_eq!(ble.peripheral.connections(), 1);
    ble.link.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chessnut_air_is_read_on_both_notify_characteristics() {
    let game = game(1, 12);
    let dir = tempfile::tempdir().unwrap();
    let mut ble = snapshot_board_over_ble(dir.path(), &game, &gatt::CHESSNUT).await;
    assert_eq!(
        ble.peripheral.subscribed(),
        [gatt::CHESSNUT_FEN_NOTIFY, gatt::CHESSNUT_OPERATION_NOTIFY].into(),
        "both characteristics"
    );
    ble.lights
        .send(chessnut::Command::Battery.encode())
        .unwrap();
    let battery = chessnut::Message::Battery {
        percent: 87,
        charging: false,
    }
    .encode();

    ble.recording
        .follow_game(&mut ble.events, ble.board.finished(), &game)
        .await;
    assert_eq!(ble.recording.moves(), game.moves_uci);
    // The answers come on the operation characteristic, the positions on the FEN one.
    assert!(contains(
        &ble.recording.received,
        &chessnut::Message::ModeAck(0).encode()
    ));
    assert!(
        contains(&ble.recording.received, &battery),
        "battery answered"
    );
    ble.link.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pegasus_game_is_recorded_through_the_dgt_link_with_its_key_and_a_lost_connection_comes_back()
 {
    let game = game(2, 14);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pegasus");
    let board = VirtualPegasus::spawn(VirtualPegasusConfig::new(
        &path,
        plain_timeline(&game, PACE),
    ))
    .unwrap();
    let peripheral = VirtualPeripheral::new(BoardKind::Pegasus, &path);
    let key = DeveloperKey::parse("01 02 03 04 05 06").unwrap();
    let mut config = LinkConfig::pegasus("ble:DGT_PEGASUS", key);
    config.connector = Some(connector(&peripheral, &gatt::PEGASUS));
    config.reconnect_initial = Duration::from_millis(50);
    config.reconnect_max = Duration::from_millis(200);
    let (link, mut events) = spawn_link(config, Instant::now());
    let mut recording = Recording::new(BoardKind::Pegasus);
    recording
        .follow_game(&mut events, board.finished(), &game)
        .await;
    assert!(
        board.keyed(),
        "the key went through the write characteristic"
    );
    assert_eq!(recording.moves(), game.moves_uci);
    assert!(board.refused().is_empty(), "{:?}", board.refused());

    // Out of reach for a moment: the link notices, comes back, gives the key and reads the
    // board again; the record stands.
    peripheral.set_in_reach(false);
    peripheral.lose_connection("out of reach");
    recording
        .follow(&mut events, Duration::from_secs(10), |r| r.losses > 0)
        .await;
    assert_eq!(recording.losses, 1, "the loss is reported");
    tokio::time::sleep(Duration::from_millis(300)).await;
    peripheral.set_in_reach(true);
    let before = recording.received.len();
    recording
        .follow(&mut events, Duration::from_secs(15), |r| {
            r.connections >= 2 && r.received.len() > before
        })
        .await;
    assert_eq!(recording.connections, 2, "connected again");
    assert!(peripheral.connections() >= 2);
    assert_eq!(recording.moves(), game.moves_uci);
    link.shutdown();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_without_the_kinds_characteristics_is_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("millennium");
    let _board = SnapshotBoard::spawn(SnapshotBoardConfig::new(
        BoardKind::Millennium,
        &path,
        Vec::new(),
    ))
    .unwrap();
    let peripheral = Arc::new(VirtualPeripheral::new(BoardKind::Millennium, &path));
    let e = open_ble_stream(Arc::clone(&peripheral), &gatt::PEGASUS)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a pegasus board"), "{e}");
    assert!(e.contains("6e400003-b5a3-f393-e0a9-e50e24dcca9e"), "{e}");
    assert!(e.contains("touchmove ports --ble"), "{e}");
}

/// `touchmove ARGS…`: exit success, stdout, stderr.
fn touchmove(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(not(feature = "ble"))]
#[test]
fn without_the_feature_a_ble_scan_or_port_says_how_to_build_with_it() {
    let (ok, _, err) = touchmove(&["ports", "--ble"]);
    assert!(!ok);
    assert!(err.contains("--features ble"), "{err}");
    assert!(err.contains("libdbus-1-dev"), "{err}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (ok, stdout, err) = touchmove(&[
        "record",
        "--port",
        "millennium:ble:C4:DE:E2:01:02:0F",
        "--out",
        out.to_str().unwrap(),
        "--no-server",
    ]);
    assert!(!ok, "{stdout}");
    assert!(err.contains("--features ble"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

/// The causes a machine without working Bluetooth LE may give, as the messages name them.
#[cfg(feature = "ble")]
const CAUSES: [&str; 5] = [
    "no system D-Bus",
    "bluetoothd",
    "no Bluetooth adapter",
    "switched off",
    "no such millennium board in reach",
];

#[cfg(feature = "ble")]
#[test]
fn a_scan_without_bluetooth_names_the_cause_and_never_panics() {
    let (ok, stdout, err) = touchmove(&["ports", "--ble", "--scan-seconds", "1"]);
    assert!(!err.contains("panicked"), "{err}");
    if ok {
        // A machine with Bluetooth: every line is a board or says none is in reach.
        assert!(
            stdout
                .lines()
                .skip(1)
                .all(|l| l.contains("(use --port") || l.contains("no Bluetooth LE board")),
            "{stdout}"
        );
    } else {
        assert!(CAUSES.iter().any(|c| err.contains(c)), "{err}");
    }
}

#[cfg(feature = "ble")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ble_port_without_bluetooth_fails_naming_the_cause() {
    let config = SnapshotLinkConfig::new(BoardKind::Millennium, "ble:touchmove-no-such-board");
    let (_link, mut events, _lights) = spawn_snapshot_link(config, Instant::now());
    let event = tokio::time::timeout(Duration::from_secs(30), events.recv())
        .await
        .expect("an answer within the scan time");
    match event {
        Some(LinkEvent::Failed { message }) => {
            assert!(CAUSES.iter().any(|c| message.contains(c)), "{message}");
        }
        other => panic!("no board of that name exists: {other:?}"),
    }
}
