use std::collections::HashSet;

use shakmaty::Square;

use super::*;
use crate::sim::devices::test_host::{TestHost, start};

fn board(kind: BoardKind, options: &DeviceOptions) -> TestHost {
    let mut host = TestHost::new(Box::new(CertaboBoard::new(kind, options)));
    host.physical(0, start());
    host
}

/// The numbers of each frame sent (`:` … ` \r\n`).
fn frames(host: &TestHost) -> Vec<Vec<u8>> {
    let text = String::from_utf8(host.sent_since(0)).unwrap();
    text.split_terminator("\r\n")
        .map(|frame| {
            let numbers = frame.strip_prefix(':').expect("a frame starts with ':'");
            numbers
                .split_whitespace()
                .map(|n| n.parse().unwrap())
                .collect()
        })
        .collect()
}

#[test]
fn sentio_sends_rank_bitmasks_from_rank_8_with_the_a_file_highest() {
    let mut host = board(BoardKind::Sentio, &DeviceOptions::new(1));
    host.run_until(1000);
    let sent = String::from_utf8(host.sent_since(901)).unwrap();
    assert_eq!(sent, ":255 255 0 0 0 0 255 255 \r\n");
    host.physical(1000, ObservationKind::Emptied(Square::E2));
    host.physical(1000, ObservationKind::Placed(Square::E4, None));
    host.clear();
    host.run_until(2000);
    assert_eq!(
        frames(&host).last().unwrap(),
        &[255, 255, 0, 0, 8, 0, 247, 255]
    );
    assert!(
        (9..=10).contains(&frames(&host).len()),
        "ten frames a second"
    );
}

#[test]
fn certabo_streams_a_tag_per_piece_and_spare_queens_until_the_first_change() {
    let quiet = DeviceOptions {
        tag_noise: TagNoise {
            misread: 0.0,
            ghost: 0.0,
        },
        ..DeviceOptions::new(2)
    };
    let mut host = board(BoardKind::Certabo, &quiet);
    host.run_until(3000);
    let sent = frames(&host);
    let ends = host.chunks.iter().filter(|c| c.1.ends_with(b"\n"));
    let times: Vec<Millis> = ends.map(|c| c.0).collect();
    assert!(times.windows(2).all(|w| w[1] - w[0] == 300), "{times:?}");
    let length = host.sent_since(0).len() / sent.len();
    assert!((750..900).contains(&length), "{length} characters a frame");
    let (d6, d3) = (19, 43);
    let mut ids = HashSet::new();
    for field in (0..16).chain(48..64).chain([d6, d3]) {
        let tag = &sent[8][field * 5..field * 5 + 5];
        assert!(
            tag[..2] == [3, 0] && (83..=85).contains(&tag[2]),
            "{field}: {tag:?}"
        );
        ids.insert(tag.to_vec());
    }
    assert_eq!(ids.len(), 34, "every piece its own tag");
    host.physical(3000, ObservationKind::Emptied(Square::E2));
    host.clear();
    host.run_until(4000);
    let last = frames(&host).pop().unwrap();
    assert_eq!(
        &last[d3 * 5..d3 * 5 + 5],
        [0; 5],
        "the spare queen is off d3"
    );
}

#[test]
fn empty_squares_read_noise_at_the_measured_rate() {
    let mut host = board(BoardKind::Certabo, &DeviceOptions::new(3));
    host.run_until(60_000);
    let (mut ghosts, mut empty_reads) = (0, 0);
    for frame in frames(&host) {
        for field in (16..48).filter(|f| ![19, 43].contains(f)) {
            empty_reads += 1;
            ghosts += usize::from(frame[field * 5..field * 5 + 5] != [0; 5]);
        }
    }
    let rate = ghosts as f64 / empty_reads as f64;
    // 30 empty squares over 200 frames: 0.25 within a few standard deviations.
    assert!((0.22..0.28).contains(&rate), "{rate}");
}

#[test]
fn it_streams_from_power_up_unasked_and_through_a_closed_link() {
    let mut host = board(BoardKind::Sentio, &DeviceOptions::new(4));
    host.power(500, false);
    host.run_until(1500);
    assert!(host.sent_since(501).is_empty(), "nothing while off");
    host.power(1500, true);
    host.connection(2000, false);
    host.connection(2500, true);
    host.run_until(3000);
    let times: Vec<Millis> = host
        .chunks
        .iter()
        .map(|c| c.0)
        .filter(|&t| t > 1500)
        .collect();
    assert!(
        times.iter().filter(|&&t| t < 2000).count() >= 4,
        "{times:?}"
    );
    assert!(
        !times.iter().any(|&t| (2001..2500).contains(&t)),
        "{times:?}"
    );
    assert!(
        times.iter().filter(|&&t| t > 2500).count() >= 4,
        "{times:?}"
    );
}
