use shakmaty::Square;

use super::*;
use crate::board::ObservationKind;
use crate::sim::devices::test_host::{TestHost, start};

/// A command as a host sends it: the characters, the block check, odd parity.
fn command(text: &str) -> Vec<u8> {
    seal(text.as_bytes().to_vec(), true)
}

/// The 7-bit characters of what the board sent, every byte's parity checked.
fn text(bytes: &[u8]) -> String {
    assert!(bytes.iter().all(|&b| b.count_ones() % 2 == 1), "odd parity");
    bytes.iter().map(|&b| char::from(b & 0x7F)).collect()
}

fn board() -> TestHost {
    let mut host = TestHost::new(Box::new(MillenniumBoard::new(&DeviceOptions::new(4))));
    host.physical(0, start());
    host
}

const START: &str = "rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR";

#[test]
fn v56_and_s53_are_answered_and_a_wrong_check_or_parity_is_not() {
    assert_eq!(
        command("V"),
        [0xD6, 0xB5, 0xB6],
        "V56: 'V' 0x56, '5', '6' with parity"
    );
    assert_eq!(text(&command("S")), "S53");
    let mut host = board();
    let mut bad_parity = command("V");
    bad_parity[2] ^= 0x80;
    host.host(0, &bad_parity);
    host.host(10, &seal(b"V".to_vec(), false));
    host.host(20, &b"V57".map(with_odd_parity));
    host.run_until(1000);
    assert!(host.chunks.is_empty(), "{:?}", host.chunks);
    host.host(1000, &command("V"));
    host.host(1000, &command("S"));
    host.run_until(1020);
    let replies = text(&host.sent_since(1000));
    let check = (b"s".iter().chain(START.as_bytes())).fold(0, |x, c| x ^ c);
    assert_eq!(
        replies,
        format!(
            "v0102{:02X}s{START}{check:02X}",
            b'v' ^ b'0' ^ b'1' ^ b'0' ^ b'2'
        )
    );
}

#[test]
fn once_spoken_to_it_reports_every_scan_or_as_register_2_says() {
    let mut host = board();
    host.run_until(2000);
    assert!(host.chunks.is_empty(), "silent until a host speaks");
    host.host(2000, &command("V"));
    host.run_until(3000);
    let reports = host
        .chunks
        .iter()
        .filter(|(_, b)| b[0] & 0x7F == b's')
        .count();
    assert!(
        (23..=25).contains(&reports),
        "{reports} reports in a second"
    );
    host.host(3000, &command("W0203"));
    host.run_until(3100);
    host.clear();
    host.run_until(5000);
    assert!(host.chunks.is_empty(), "on change only");
    host.physical(5000, ObservationKind::Emptied(Square::E2));
    host.run_until(6000);
    let sent = text(&host.sent_since(5000));
    assert_eq!(sent.matches('s').count(), 1, "{sent}");
    assert!(sent.contains("PPPP.PPP"));
}

#[test]
fn registers_survive_power_and_the_reports_wait_for_a_host_again() {
    let mut host = board();
    host.host(0, &command("W0201"));
    host.power(1000, false);
    host.power(2000, true);
    host.run_until(3000);
    assert!(
        host.chunks.iter().all(|(t, _)| *t < 1000),
        "silent after power-on"
    );
    host.host(3000, &command("R02"));
    host.run_until(4000);
    let reply = text(&host.sent_since(3000));
    assert!(
        reply.starts_with("r0201"),
        "{reply}: still no automatic reports"
    );
}

#[test]
fn a_reset_silences_the_board_for_three_seconds_and_a_closed_link_does_not() {
    let mut host = board();
    host.host(0, &command("V"));
    host.host(500, &command("T"));
    host.host(1000, &command("V"));
    host.run_until(3600);
    assert!(
        host.sent_since(600).is_empty(),
        "deaf and silent while resetting"
    );
    host.host(3600, &command("S"));
    host.run_until(4000);
    assert!(text(&host.sent_since(3600)).starts_with('s'));
    host.connection(5000, false);
    host.connection(6000, true);
    host.run_until(7000);
    let after = host.chunks.iter().filter(|(t, _)| *t > 6000).count();
    assert!(after > 20, "reports go on after the link is back: {after}");
}

#[test]
fn a_scan_time_register_sets_the_reports_pace() {
    let mut host = board();
    host.host(0, &command("W0132"));
    host.run_until(100);
    host.clear();
    host.run_until(1100);
    // 0x32 = 50 units of 2.048 ms: a scan of 103 ms.
    assert!(
        (9..=10).contains(&host.chunks.len()),
        "{}",
        host.chunks.len()
    );
}
