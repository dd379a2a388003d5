//! DGT's Revelation II on a pseudo-terminal: a virtual one is recognised by the probe and
//! lights the LEDs it is told to.

use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::time::Instant;
use touchmove::driver::probe::probe;
use touchmove::sim::virtual_board::model::BoardModel;
use touchmove::sim::virtual_board::{VirtualBoard, VirtualBoardConfig};
use touchmove::wire::revelation::RevelationLeds;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revelation_is_recognised_by_the_probe_and_lights_its_leds() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = VirtualBoardConfig::new(dir.path().join("rev"), Vec::new());
    config.model = BoardModel::RevelationII;
    let revelation = VirtualBoard::spawn(config).unwrap();
    let dgt =
        VirtualBoard::spawn(VirtualBoardConfig::new(dir.path().join("dgt"), Vec::new())).unwrap();
    let found = probe(revelation.path(), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(found.model(), "Revelation II", "{found:?}");
    let plain = probe(dgt.path(), Duration::from_secs(2)).await.unwrap();
    assert_eq!(plain.model(), "DGT board", "{plain:?}");

    let path = revelation.path().to_str().unwrap().to_string();
    let mut port = touchmove::driver::serial::open(&path).unwrap();
    let mut bytes = RevelationLeds::Fields {
        on: true,
        start: 12,
        end: 14,
    }
    .encode();
    bytes.extend(
        RevelationLeds::Fields {
            on: false,
            start: 13,
            end: 13,
        }
        .encode(),
    );
    port.write_all(&bytes).await.unwrap();
    let lit = || {
        let leds = revelation.leds().0;
        (0..64).filter(|&f| leds[f]).collect::<Vec<usize>>()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while lit() != [12, 14] && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(lit(), [12, 14]);
    port.write_all(&RevelationLeds::AllOff.encode())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !lit().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(lit().is_empty());
}
