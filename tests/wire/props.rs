//! Property tests of the DGT codec: round trips, chunking independence, resynchronisation
//! after garbage, bounded memory.

use proptest::prelude::*;
use touchmove::wire::capture::{CaptureChunk, read_capture, write_timestamped};
use touchmove::wire::dgt::bus::{
    BusCommand, BusCommandKind, BusFrame, BusReply, BusReplyBody, BusReplyDecoder,
};
use touchmove::wire::dgt::{
    BatteryStatus, ClockAck, ClockCommand, ClockMessage, ClockSide, ClockStatus, ClockTimes,
    Command, CommandDecoder, Decoder, EepromLog, EepromRecord, Hms, LogEnd, MAX_FRAME_LEN, Message,
    SideTime,
};

fn side_time() -> impl Strategy<Value = SideTime> {
    (0u8..10, 0u8..60, 0u8..60, any::<[bool; 3]>()).prop_map(|(hours, minutes, seconds, f)| {
        SideTime {
            hours,
            minutes,
            seconds,
            flag_fallen: f[0],
            time_per_move: f[1],
            flag_shown: f[2],
        }
    })
}

fn clock_message() -> impl Strategy<Value = ClockMessage> {
    prop_oneof![
        (side_time(), side_time(), 0u8..0x80)
            .prop_map(|(left, right, s)| ClockMessage::Times(ClockTimes {
                left,
                right,
                status: ClockStatus::from_byte(s),
            }))
            .prop_filter("all-zero data is a blank", |c| c.encode() != [0; 7]),
        any::<[u8; 4]>().prop_map(|a| ClockMessage::Ack(ClockAck::new(a))),
        Just(ClockMessage::Blank),
    ]
}

fn eeprom_record() -> impl Strategy<Value = EepromRecord> {
    prop_oneof![
        (0u8..64, 0u8..16, any::<bool>()).prop_map(|(field, piece, quick)| {
            EepromRecord::FieldChange {
                field,
                piece,
                quick,
            }
        }),
        (any::<bool>(), 0u8..10, 0u8..80, 0u8..80).prop_map(|(left, hours, minutes, seconds)| {
            EepromRecord::ClockTime {
                side: if left {
                    ClockSide::Left
                } else {
                    ClockSide::Right
                },
                hours,
                minutes,
                seconds,
            }
        }),
        prop::sample::select(vec![
            EepromRecord::PowerUp,
            EepromRecord::EndOfLog,
            EepromRecord::FourRows,
            EepromRecord::EmptyBoard,
            EepromRecord::Downloaded,
            EepromRecord::BeginPosition,
            EepromRecord::BeginPositionRotated,
            EepromRecord::StartTag,
            EepromRecord::WatchdogAction,
            EepromRecord::Reserved(0x7D),
            EepromRecord::Reserved(0x7E),
            EepromRecord::Nop,
            EepromRecord::Nop2,
        ]),
        (1u8..0x40).prop_map(EepromRecord::Unknown),
    ]
}

fn ascii(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(0u8..0x80, 0..max).prop_map(|b| b.into_iter().map(char::from).collect())
}

const KNOWN_IDS: [u8; 13] = [
    0x86, 0x8D, 0x8E, 0x8F, 0x90, 0x91, 0x92, 0x93, 0x94, 0x95, 0x96, 0xA0, 0xA2,
];

/// Every message type, with sizes kept moderate (`big` bounds the variable-length ones).
fn message(big: usize) -> impl Strategy<Value = Message> {
    prop_oneof![
        prop::collection::vec(0u8..16, 64)
            .prop_map(|v| Message::BoardDump(v.try_into().unwrap_or([0; 64]))),
        (0u8..64, 0u8..0x80).prop_map(|(field, piece)| Message::FieldUpdate { field, piece }),
        clock_message().prop_map(Message::Clock),
        "[0-9]{5}".prop_map(Message::SerialNumber),
        "[0-9]{5} 1\\.0".prop_map(Message::SerialNumber),
        "[0-9]{10}".prop_map(Message::LongSerialNumber),
        (0u8..0x80, 0u8..0x80).prop_map(|(major, minor)| Message::Version { major, minor }),
        (0u8..0x80, 0u8..0x80).prop_map(|(major, minor)| Message::HardwareVersion { major, minor }),
        ascii(big).prop_map(Message::Trademark),
        prop::array::uniform9(0u8..0x80)
            .prop_map(|d| Message::BatteryStatus(BatteryStatus::from_bytes(d))),
        (0u16..1 << 14).prop_map(Message::BusAddress),
        prop::collection::vec(eeprom_record(), 0..big).prop_map(Message::EepromMoves),
        (
            (0x80u8..=0xFF).prop_filter("unknown id", |id| !KNOWN_IDS.contains(id)),
            prop::collection::vec(0u8..0x80, 0..big)
        )
            .prop_map(|(id, data)| Message::Unknown { id, data }),
    ]
}

fn decode(chunks: &[&[u8]]) -> (Vec<Message>, Decoder) {
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    for chunk in chunks {
        decoder.push(chunk, &mut out);
    }
    (out, decoder)
}

fn is_subsequence(wanted: &[Message], got: &[Message]) -> bool {
    let mut got = got.iter();
    wanted.iter().all(|w| got.any(|g| g == w))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn a_full_size_eeprom_log_round_trips(records in prop::collection::vec(eeprom_record(), 3000..3500)) {
        let m = Message::EepromMoves(records);
        let (out, _) = decode(&[&m.encode()]);
        prop_assert_eq!(out, vec![m]);
    }
}

proptest! {
    #[test]
    fn every_message_round_trips(m in message(400)) {
        let bytes = m.encode();
        let (out, decoder) = decode(&[&bytes]);
        prop_assert_eq!(out, vec![m]);
        prop_assert_eq!(decoder.skipped_bytes(), 0);
    }

    #[test]
    fn messages_survive_garbage_before_them(
        items in prop::collection::vec((prop::collection::vec(any::<u8>(), 0..40), message(60)), 1..12),
        tail in prop::collection::vec(any::<u8>(), 0..40),
    ) {
        let mut stream = Vec::new();
        for (garbage, m) in &items {
            stream.extend(garbage);
            stream.extend(m.encode());
        }
        stream.extend(&tail);
        let wanted: Vec<Message> = items.iter().map(|(_, m)| m.clone()).collect();
        let (out, decoder) = decode(&[&stream]);
        prop_assert!(is_subsequence(&wanted, &out), "lost a frame: wanted {:?}, got {:?}", wanted, out);
        prop_assert!(decoder.memory_bytes() <= MAX_FRAME_LEN);
    }

    #[test]
    fn arbitrary_bytes_never_panic_and_stay_bounded(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        let (out, decoder) = decode(&[&bytes]);
        let accounted: usize = out.iter().map(|m| m.encode().len()).sum();
        prop_assert!(decoder.memory_bytes() <= MAX_FRAME_LEN);
        prop_assert!(decoder.skipped_bytes() as usize + accounted <= bytes.len());
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn splitting_the_stream_at_any_point_gives_the_same_messages(
        messages in prop::collection::vec(message(40), 1..8),
        garbage in prop::collection::vec(any::<u8>(), 0..20),
    ) {
        let mut stream = garbage.clone();
        for m in &messages {
            stream.extend(m.encode());
        }
        let (whole, decoder) = decode(&[&stream]);
        for at in 0..=stream.len() {
            let (split, d) = decode(&[&stream[..at], &stream[at..]]);
            prop_assert_eq!(&split, &whole, "split at {}", at);
            prop_assert_eq!(d.skipped_bytes(), decoder.skipped_bytes());
        }
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        prop_assert_eq!(decode(&bytes).0, whole);
    }
}

fn hms() -> impl Strategy<Value = Hms> {
    (0u8..10, 0u8..60, 0u8..60).prop_map(|(hours, minutes, seconds)| Hms {
        hours,
        minutes,
        seconds,
    })
}

fn clock_command() -> impl Strategy<Value = ClockCommand> {
    prop_oneof![
        (any::<[u8; 6]>(), any::<u8>(), any::<u8>()).prop_map(|(segments, icons, beep)| {
            ClockCommand::Display {
                segments,
                icons,
                beep,
            }
        }),
        any::<[u8; 5]>().prop_map(|i| ClockCommand::Icons {
            left: i[0],
            right: i[1],
            left_period: i[2],
            right_period: i[3],
            special: i[4],
        }),
        Just(ClockCommand::End),
        Just(ClockCommand::Button),
        Just(ClockCommand::Version),
        (hms(), hms(), 0u8..16).prop_map(|(left, right, mode)| ClockCommand::SetAndRun {
            left,
            right,
            mode
        }),
        any::<u8>().prop_map(|duration| ClockCommand::Beep { duration }),
        (any::<[u8; 8]>(), any::<u8>()).prop_map(|(text, beep)| ClockCommand::Ascii { text, beep }),
        (any::<[u8; 11]>(), any::<u8>())
            .prop_map(|(text, beep)| ClockCommand::Rev2Ascii { text, beep }),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        (0x40u8..=0x5F).prop_filter_map("single", Command::from_single_byte),
        clock_command().prop_map(Command::Clock),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(Command::Leds),
        prop::collection::vec(any::<u8>(), 6).prop_map(Command::DeveloperKey),
        prop::collection::vec(any::<u8>(), 0..20).prop_map(Command::I2cClock),
        (0x81u8..=0x8D, 0u16..1 << 14).prop_map(|(code, address)| Command::Bus(BusCommand {
            kind: BusCommandKind::from_code(code),
            address,
        })),
    ]
}

fn bus_reply() -> impl Strategy<Value = BusReply> {
    let body = prop_oneof![
        prop::collection::vec(0u8..16, 64).prop_map(|fields| BusReplyBody::BoardDump { fields }),
        clock_message().prop_map(|clock| BusReplyBody::Clock { clock }),
        prop::collection::vec(eeprom_record(), 0..50)
            .prop_map(|records| BusReplyBody::Changes { records }),
        prop::collection::vec(eeprom_record(), 0..50)
            .prop_map(|records| BusReplyBody::FromStart { records }),
        Just(BusReplyBody::Ping),
        Just(BusReplyBody::StartGameWritten),
        (0u8..0x80, 0u8..0x80).prop_map(|(major, minor)| BusReplyBody::Version { major, minor }),
    ];
    (0u16..1 << 14, body).prop_map(|(address, body)| BusReply { address, body })
}

proptest! {
    #[test]
    fn every_command_round_trips_through_the_board_side_decoder(commands in prop::collection::vec(command(), 1..10)) {
        let stream: Vec<u8> = commands.iter().flat_map(|c| c.encode()).collect();
        let mut decoder = CommandDecoder::new();
        let mut out = Vec::new();
        for b in stream.chunks(3) {
            decoder.push(b, &mut out);
        }
        prop_assert_eq!(out, commands);
        prop_assert_eq!(decoder.skipped_bytes(), 0);
    }

    #[test]
    fn bus_replies_round_trip_and_corruption_is_reported(
        replies in prop::collection::vec(bus_reply(), 1..6),
        corrupt in any::<prop::sample::Index>(),
    ) {
        let stream: Vec<u8> = replies.iter().flat_map(|r| r.encode()).collect();
        let mut decoder = BusReplyDecoder::new();
        let mut out = Vec::new();
        decoder.push(&stream, &mut out);
        let wanted: Vec<BusFrame> = replies.iter().cloned().map(BusFrame::Reply).collect();
        prop_assert_eq!(out, wanted);

        let victim = corrupt.index(replies.len());
        let mut frame = replies[victim].encode();
        let last = frame.len() - 1;
        frame[last] = (frame[last] + 1) & 0x7F;
        let mut out = Vec::new();
        BusReplyDecoder::new().push(&frame, &mut out);
        let is_checksum_error = matches!(out.as_slice(), [BusFrame::ChecksumError { .. }]);
        prop_assert!(is_checksum_error);
    }

    #[test]
    fn timestamped_captures_round_trip(chunks in prop::collection::vec((0u64..5000, prop::collection::vec(any::<u8>(), 1..30)), 0..20)) {
        let mut t = 0;
        let chunks: Vec<CaptureChunk> = chunks
            .into_iter()
            .map(|(dt, bytes)| {
                t += dt;
                CaptureChunk { t_ms: t, bytes }
            })
            .collect();
        prop_assert_eq!(read_capture(&write_timestamped(&chunks)), Ok(chunks));
    }
}

#[test]
fn bus_command_checksum_matches_the_documented_example() {
    // `81 10 06` → checksum 0x17 (DGT's header).
    let c = BusCommand {
        kind: BusCommandKind::SendClock,
        address: (0x10 << 7) | 0x06,
    };
    assert_eq!(c.encode(), [0x81, 0x10, 0x06, 0x17]);
}

#[test]
fn documented_clock_command_frames_are_encoded_exactly() {
    let frame = |c: ClockCommand| Command::Clock(c).encode();
    assert_eq!(frame(ClockCommand::End), [0x2B, 0x03, 0x03, 0x03, 0x00]);
    assert_eq!(frame(ClockCommand::Version), [0x2B, 0x03, 0x03, 0x09, 0x00]);
    assert_eq!(
        frame(ClockCommand::Beep { duration: 16 }),
        [0x2B, 0x04, 0x03, 0x0B, 0x10, 0x00]
    );
    let set = ClockCommand::SetAndRun {
        left: Hms::from_millis(300_000),
        right: Hms::from_millis(3_723_000),
        mode: 0x01,
    };
    assert_eq!(
        frame(set),
        [0x2B, 0x0A, 0x03, 0x0A, 0, 5, 0, 1, 2, 3, 0x01, 0x00]
    );
    let ascii = frame(ClockCommand::ascii("hello", 0));
    assert_eq!(ascii.len(), 14);
    assert_eq!(&ascii[..4], &[0x2B, 0x0C, 0x03, 0x0C]);
    assert_eq!(&ascii[4..12], b"hello   ");
    assert_eq!(Command::SendUpdateNice.encode(), [0x4B]);
    assert_eq!(
        Command::Leds(vec![0x01, 12, 28]).encode(),
        [0x60, 0x04, 0x01, 12, 28, 0x00]
    );
}

#[test]
fn documented_acks_decode_to_their_meaning() {
    use touchmove::wire::dgt::{AckKind, ClockButton};
    let ack = |a| ClockAck::new(a).kind();
    assert_eq!(ack([16, 9, 32, 0]), AckKind::Version { major: 2, minor: 0 });
    assert_eq!(ack([16, 12, 0, 0]), AckKind::Accepted { command: 0x0C });
    assert_eq!(
        ack([32, 0, 0, 0]),
        AckKind::Error {
            code: 32,
            command: 0
        }
    );
    assert_eq!(ack([16, 0x81, 0, 0]), AckKind::Ready);
    assert_eq!(
        ClockAck::button(ClockButton::Plus).kind(),
        AckKind::Button {
            code: 0x32,
            button: Some(ClockButton::Plus)
        }
    );
    let mut out = Vec::new();
    Decoder::new().push(
        &Message::Clock(ClockMessage::Ack(ClockAck::new([16, 9, 32, 0]))).encode(),
        &mut out,
    );
    assert!(
        matches!(&out[..], [Message::Clock(ClockMessage::Ack(a))] if a.kind() == AckKind::Version { major: 2, minor: 0 })
    );
}

#[test]
fn a_frame_cut_by_a_new_frame_is_skipped_and_counted() {
    let dump = Message::BoardDump([1; 64]).encode();
    let update = Message::FieldUpdate {
        field: 12,
        piece: 0,
    }
    .encode();
    let mut stream = dump[..30].to_vec();
    stream.extend(&update);
    stream.extend([0x00, 0x12, 0x7F]);
    let (out, decoder) = decode(&[&stream]);
    assert_eq!(
        out,
        vec![Message::FieldUpdate {
            field: 12,
            piece: 0
        }]
    );
    assert_eq!(decoder.skipped_bytes(), 33);
}

#[test]
fn a_header_whose_length_does_not_fit_its_id_is_rejected() {
    // A field update claiming 6 bytes, then a real one.
    let mut stream = vec![0x8E, 0x00, 0x06, 0x01, 0x02, 0x03];
    stream.extend(Message::FieldUpdate { field: 1, piece: 2 }.encode());
    let (out, decoder) = decode(&[&stream]);
    assert_eq!(out, vec![Message::FieldUpdate { field: 1, piece: 2 }]);
    assert_eq!(decoder.skipped_bytes(), 6);
}

#[test]
fn an_eeprom_power_up_log_parses_into_its_records() {
    use touchmove::wire::dgt::EepromRecord as R;
    // 3×NOP, power-up, a white pawn placed on e2, the begin-position tag, e2 emptied quickly,
    // the left clock halted at 1:23:45, end of log.
    let data = [
        0x7F, 0x7F, 0x7F, 0x6A, 0x41, 52, 0x6F, 0x50, 52, 0x71, 0x23, 0x45, 0x6B,
    ];
    let mut frame = vec![0x8F, 0x00, (3 + data.len()) as u8];
    frame.extend(data);
    let (out, _) = decode(&[&frame]);
    let expected = vec![
        R::Nop,
        R::Nop,
        R::Nop,
        R::PowerUp,
        R::FieldChange {
            field: 52,
            piece: 1,
            quick: false,
        },
        R::BeginPosition,
        R::FieldChange {
            field: 52,
            piece: 0,
            quick: true,
        },
        R::ClockTime {
            side: ClockSide::Left,
            hours: 1,
            minutes: 23,
            seconds: 45,
        },
        R::EndOfLog,
    ];
    assert_eq!(out, vec![Message::EepromMoves(expected)]);
    assert_eq!(out[0].encode(), frame);
}

#[test]
fn the_command_decoder_skips_garbage_and_keeps_the_commands_after_it() {
    let mut stream = vec![0x00, 0x13, 0x7F];
    stream.extend(Command::SendBoard.encode());
    stream.extend([0x2B, 0x00]); // a clock wrapper with size 0 is dropped
    stream.extend(Command::Clock(ClockCommand::Version).encode());
    stream.extend([0x81, 0x10, 0x06, 0x00]); // bus frame with a wrong checksum
    stream.extend(Command::SendUpdateNice.encode());
    let mut decoder = CommandDecoder::new();
    let mut out = Vec::new();
    decoder.push(&stream, &mut out);
    assert_eq!(
        out,
        vec![
            Command::SendBoard,
            Command::Clock(ClockCommand::Version),
            Command::SendUpdateNice
        ]
    );
    assert_eq!(decoder.skipped_bytes(), 3 + 2 + 4);
}

proptest! {
    /// Garbage never panics the log decoder, and whatever it returns lies inside the bytes.
    #[test]
    fn eeprom_log_decoding_survives_garbage(data in prop::collection::vec(0u8..0x80, 0..600)) {
        let log = EepromLog::decode(&data);
        for entry in &log.entries {
            prop_assert!(entry.offset < data.len());
            prop_assert!(!matches!(entry.record, EepromRecord::Unknown(_)));
        }
        if let LogEnd::Unknown { offset, byte } = log.end {
            prop_assert_eq!(data[offset], byte);
        }
    }

    /// A well-formed log cut anywhere decodes to a prefix of its records, marked incomplete.
    #[test]
    fn a_truncated_eeprom_log_is_a_prefix_marked_incomplete(
        records in prop::collection::vec(eeprom_record(), 0..80),
        cut in any::<prop::sample::Index>(),
    ) {
        let records: Vec<EepromRecord> = records
            .into_iter()
            .filter(|r| !matches!(r, EepromRecord::Unknown(_) | EepromRecord::EndOfLog))
            .collect();
        let mut data = Vec::new();
        for r in &records {
            r.encode_into(&mut data);
        }
        data.push(0x6B);
        let whole = EepromLog::decode(&data);
        prop_assert_eq!(whole.end, LogEnd::EndOfLog);
        let kept: Vec<EepromRecord> = records
            .iter()
            .copied()
            .filter(|r| !matches!(r, EepromRecord::Nop | EepromRecord::Nop2))
            .collect();
        prop_assert_eq!(whole.entries.iter().map(|e| e.record).collect::<Vec<_>>(), kept.clone());
        let cut = cut.index(data.len());
        let part = EepromLog::decode(&data[..cut]);
        prop_assert!(!part.end.complete());
        let got: Vec<EepromRecord> = part.entries.iter().map(|e| e.record).collect();
        prop_assert!(got.len() <= kept.len());
        if part.skipped_lead == 0 {
            prop_assert_eq!(&got[..], &kept[..got.len()]);
        }
    }
}
