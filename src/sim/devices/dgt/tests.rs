use shakmaty::{Color, Role, Square};

use super::*;
use crate::board::MagicPiece;
use crate::sim::devices::test_host::{TestHost, start};

/// Splits a DGT byte stream into its messages by their headers.
fn messages(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut rest = bytes;
    while rest.len() >= 3 {
        let total = (usize::from(rest[1]) << 7) | usize::from(rest[2]);
        out.push(rest[..total].to_vec());
        rest = &rest[total..];
    }
    assert!(rest.is_empty(), "a message cut short: {rest:02X?}");
    out
}

fn board(options: &DeviceOptions) -> TestHost {
    let mut host = TestHost::new(Box::new(DgtBoard::new(options)));
    host.physical(0, start());
    host
}

fn placed(square: Square, role: Role, color: Color) -> ObservationKind {
    ObservationKind::Placed(square, Some(role.of(color)))
}

#[test]
fn the_dump_the_updates_and_the_clock_give_the_real_captures_bytes() {
    // protocols 1.8: the first messages of `johan.inbytes`, a 5 + 5 game.
    let mut host = board(&DeviceOptions::new(1));
    host.host(10, &[0x42, 0x4B]);
    host.physical(1000, ObservationKind::ClockPressed { by: Color::Black });
    host.physical(2050, ObservationKind::Emptied(Square::E2));
    host.physical(2350, placed(Square::E4, Role::Pawn, Color::White));
    host.physical(2650, ObservationKind::ClockPressed { by: Color::White });
    host.run_until(2700);
    let mut dump = vec![0x86, 0x00, 0x43, 8, 9, 10, 12, 11, 10, 9, 8];
    dump.extend([7; 8]);
    dump.extend([0; 32]);
    dump.extend([1; 8]);
    dump.extend([2, 3, 4, 6, 5, 4, 3, 2]);
    let clock = |left_s: u8, status: u8| vec![0x8D, 0, 0x0A, 0x20, 5, 5, 0x20, 5, left_s, status];
    assert_eq!(
        messages(&host.sent_since(0)),
        [
            dump,
            clock(0x05, 0x09),
            clock(0x04, 0x09),
            vec![0x8E, 0x00, 0x05, 0x34, 0x00],
            vec![0x8E, 0x00, 0x05, 0x24, 0x01],
            clock(0x09, 0x13),
        ]
    );
}

#[test]
fn identification_is_answered_as_documented() {
    let mut host = board(&DeviceOptions::new(1));
    host.host(0, &[0x4D, 0x45, 0x46, 0x55, 0x47]);
    host.run_until(1000);
    let replies = messages(&host.sent_since(0));
    assert_eq!(replies[0], [0x93, 0, 5, 1, 80], "version 1.80");
    assert_eq!(replies[1], b"\x91\x00\x0801025", "serial number");
    assert_eq!(replies[2], [0x90, 0, 5, 0x08, 0x01], "bus address of 01025");
    assert_eq!(replies[3], b"\xA2\x00\x0D0000001025", "long serial number");
    assert_eq!(replies[4][0], 0x92);
    assert!(replies[4].ends_with(b"Serial nr. 01025 1.0"));
}

#[test]
fn updates_come_within_a_scan_in_the_order_the_sweep_finds_them() {
    let mut orders = Vec::new();
    for seed in 0..16 {
        let mut host = board(&DeviceOptions::new(seed));
        host.host(0, &[0x44]);
        host.physical(1000, ObservationKind::Emptied(Square::E2));
        host.physical(1040, placed(Square::E4, Role::Pawn, Color::White));
        host.run_until(2000);
        let updates: Vec<(Millis, u8)> = host.chunks.iter().map(|(t, b)| (*t, b[3])).collect();
        for &(t, field) in &updates {
            let changed_at = if field == 52 { 1000 } else { 1040 };
            // A scan, and two updates' time on the line.
            let latest = changed_at + 250 + 11;
            assert!(t > changed_at && t <= latest, "seed {seed}: {updates:?}");
        }
        assert_eq!(updates.len(), 2);
        orders.push(updates[0].1);
    }
    assert!(orders.contains(&52) && orders.contains(&36), "{orders:?}");
}

#[test]
fn a_quick_touch_is_rarely_seen_and_a_result_piece_sends_its_code() {
    let mut seen = 0;
    for seed in 0..20 {
        let mut host = board(&DeviceOptions::new(seed));
        host.host(0, &[0x44]);
        host.physical(1000, ObservationKind::Emptied(Square::G1));
        host.physical(1020, placed(Square::G1, Role::Knight, Color::White));
        host.run_until(2000);
        assert!(
            matches!(host.chunks.len(), 0 | 2),
            "a lift seen is a put-back seen"
        );
        seen += usize::from(!host.chunks.is_empty());
        host.physical(
            3000,
            ObservationKind::MagicPiece(Square::D5, MagicPiece::WhiteWins),
        );
        host.run_until(4000);
        assert_eq!(host.sent_since(3000), [0x8E, 0, 5, 27, 0x0E]);
    }
    assert!(seen < 6, "{seen} of 20 quick touches seen");
}

/// The records of a move log dump, from its first non-blank byte to its end tag.
fn log_records(host: &TestHost, since: Millis) -> Vec<u8> {
    let log = messages(&host.sent_since(since))
        .into_iter()
        .find(|m| m[0] == 0x8F);
    let log = log.expect("the move log");
    assert_eq!(log.len(), 0x1F03);
    let data = &log[3..];
    let first = data.iter().position(|&b| b != 0).unwrap();
    assert_eq!(data.last(), Some(&0x6B), "ends at the end-of-log tag");
    data[first..].to_vec()
}

#[test]
fn power_loses_the_mode_and_keeps_the_pieces_and_the_move_log() {
    let mut host = board(&DeviceOptions::new(2));
    host.host(0, &[0x4B]);
    host.physical(1000, ObservationKind::Emptied(Square::E2));
    host.physical(1600, placed(Square::E4, Role::Pawn, Color::White));
    host.power(2000, false);
    host.physical(3000, ObservationKind::Emptied(Square::D7));
    host.physical(3300, placed(Square::D5, Role::Pawn, Color::Black));
    host.power(4000, true);
    host.physical(5000, ObservationKind::Emptied(Square::G1));
    host.run_until(6000);
    assert!(
        host.sent_since(2000).is_empty(),
        "idle after the power cycle"
    );
    host.host(6000, &[0x42, 0x49]);
    host.run_until(16_000);
    let dump = &messages(&host.sent_since(6000))[0];
    assert_eq!(
        (dump[3 + 27], dump[3 + 11], dump[3 + 62]),
        (7, 0, 0),
        "d5, d7, g1"
    );
    let records = log_records(&host, 6000);
    let power_ups: Vec<usize> = (0..records.len()).filter(|&i| records[i] == 0x6A).collect();
    assert_eq!(power_ups.len(), 2, "{records:02X?}");
    let before = &records[..power_ups[1]];
    assert!(
        before.ends_with(&[0x40, 52, 0x41, 36, 0x7F, 0x7F, 0x7F]),
        "{before:02X?}"
    );
    let listed = &records[power_ups[1] + 1..power_ups[1] + 1 + 64];
    assert!(
        listed.chunks(2).any(|r| r == [0x47, 27]),
        "d5 listed at power-on"
    );
    assert!(!listed.chunks(2).any(|r| r[1] == 11), "d7 not listed");
    assert!(
        records.ends_with(&[0x40, 62, 0x6B]),
        "g1 lifted after power-on"
    );
}

#[test]
fn a_closed_link_loses_the_updates_but_not_the_mode_or_the_log() {
    let mut host = board(&DeviceOptions::new(3));
    host.host(0, &[0x44]);
    host.connection(1000, false);
    host.physical(1500, ObservationKind::Emptied(Square::E2));
    host.connection(2000, true);
    host.physical(2500, placed(Square::E4, Role::Pawn, Color::White));
    host.run_until(3000);
    assert_eq!(
        host.sent_since(0),
        [0x8E, 0, 5, 36, 1],
        "only the change after"
    );
    host.host(3000, &[0x49]);
    host.run_until(12_000);
    assert!(log_records(&host, 3000).ends_with(&[0x40, 52, 0x41, 36, 0x6B]));
}

#[test]
fn clock_commands_are_acknowledged_in_the_clock_modes_only() {
    let version = [0x2B, 0x03, 0x03, 0x09, 0x00];
    let mut host = board(&DeviceOptions::new(1));
    host.host(0, &[0x44]);
    host.host(10, &version);
    host.run_until(3000);
    assert!(host.chunks.is_empty(), "no acknowledgement in UPDATE_BOARD");
    host.host(3000, &[0x4B]);
    host.host(3010, &version);
    host.run_until(6000);
    let sent = messages(&host.sent_since(3000));
    let ack = &sent[0];
    assert_eq!(
        host.chunks[0].0,
        4010 + 11,
        "one second later, ten bytes on the line"
    );
    let ack1 = (ack[5] & 0x7F) | ((ack[6] << 2) & 0x80);
    let ack2 = (ack[7] & 0x7F) | ((ack[3] << 3) & 0x80);
    assert_eq!(
        (ack[3] & 0x0F, ack1, ack2),
        (0x0A, 0x09, 0x20),
        "version 2.0"
    );
}

#[test]
fn update_mode_sends_the_clock_every_second_and_without_a_clock_says_so() {
    let mut host = board(&DeviceOptions::new(1));
    host.host(0, &[0x43]);
    host.run_until(3500);
    let times: Vec<Millis> = host.chunks.iter().map(|c| c.0).collect();
    assert_eq!(
        times,
        [11, 1011, 2011, 3011],
        "a stopped clock, every second"
    );
    let no_clock = DeviceOptions {
        clock: None,
        ..DeviceOptions::new(1)
    };
    let mut host = board(&no_clock);
    host.host(0, &[0x43, 0x41]);
    host.run_until(3000);
    assert_eq!(host.sent_since(0), [0x8D, 0, 0x0A, 0, 0, 0, 0, 0, 0, 0x20]);
}

#[test]
fn a_late_board_answers_after_its_delay() {
    let late = DeviceOptions {
        reply_delay_ms: 3000,
        ..DeviceOptions::new(1)
    };
    let mut host = board(&late);
    host.host(100, &[0x40, 0x4D]);
    host.run_until(10_000);
    assert_eq!(host.chunks, [(3106, vec![0x93, 0, 5, 1, 80])]);
}
