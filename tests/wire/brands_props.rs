//! Property tests of the Millennium, Certabo/Sentio and Chessnut codecs: round trips in any
//! chunking, any bytes never panic and keep memory bounded, a damaged frame costs only
//! itself, and the snapshot adapter reports exactly the squares that changed.
//!
//! `TOUCHMOVE_FUZZ_CASES=N cargo test --release --test wire brands_props::` runs the
//! arbitrary-bytes properties N times each (the fuzz run; default 256).

use proptest::prelude::*;
use shakmaty::{Color, Piece, Role};
use touchmove::board::kind::{BoardKind, KindDecoder};
use touchmove::board::snapshot::SnapshotAdapter;
use touchmove::wire::dgt::Message as DgtMessage;
use touchmove::wire::{certabo, chessnut, millennium};

fn fuzz_cases() -> u32 {
    std::env::var("TOUCHMOVE_FUZZ_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(256)
}

fn piece() -> impl Strategy<Value = Option<Piece>> {
    prop_oneof![
        3 => Just(None),
        2 => (any::<bool>(), 0usize..6).prop_map(|(white, r)| {
            let roles = [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen, Role::King];
            Some(roles[r].of(if white { Color::White } else { Color::Black }))
        }),
    ]
}

fn squares() -> impl Strategy<Value = [Option<Piece>; 64]> {
    prop::collection::vec(piece(), 64).prop_map(|v| v.try_into().unwrap())
}

fn millennium_message() -> impl Strategy<Value = millennium::Message> {
    use millennium::Message as M;
    prop_oneof![
        squares().prop_map(M::Status),
        Just(M::LedsSet),
        Just(M::LedsOff),
        any::<(u8, u8)>().prop_map(|(major, minor)| M::Version { major, minor }),
        any::<(u8, u8)>().prop_map(|(address, value)| M::Written { address, value }),
        any::<(u8, u8)>().prop_map(|(address, value)| M::Register { address, value }),
    ]
}

fn millennium_command() -> impl Strategy<Value = millennium::Command> {
    use millennium::Command as C;
    prop_oneof![
        Just(C::Status),
        Just(C::LedsOff),
        Just(C::Reset),
        Just(C::Version),
        (any::<u8>(), prop::collection::vec(any::<u8>(), 81)).prop_map(|(slot_time, p)| {
            C::Leds {
                slot_time,
                patterns: Box::new(p.try_into().unwrap()),
            }
        }),
        any::<(u8, u8)>().prop_map(|(address, value)| C::Write { address, value }),
        any::<u8>().prop_map(|address| C::Read { address }),
    ]
}

fn certabo_frame() -> impl Strategy<Value = certabo::Frame> {
    prop_oneof![
        prop::collection::vec(any::<[u8; 5]>(), 64)
            .prop_map(|v| certabo::Frame::Tags(Box::new(v.try_into().unwrap()))),
        any::<[u8; 8]>().prop_map(certabo::Frame::Occupancy),
    ]
}

fn chessnut_message() -> impl Strategy<Value = chessnut::Message> {
    use chessnut::Message as M;
    prop_oneof![
        (squares(), any::<[u8; 4]>()).prop_map(|(squares, tail)| M::Position { squares, tail }),
        (0u8..=100, any::<bool>()).prop_map(|(percent, charging)| M::Battery { percent, charging }),
        any::<u8>().prop_map(M::ModeAck),
    ]
}

fn chessnut_command() -> impl Strategy<Value = chessnut::Command> {
    use chessnut::Command as C;
    prop_oneof![
        Just(C::RealTime),
        Just(C::FileUpload),
        Just(C::Battery),
        any::<[u8; 8]>().prop_map(C::Leds),
        any::<(u16, u16)>().prop_map(|(hz, ms)| C::Beep { hz, ms }),
    ]
}

/// Splits `bytes` at the given cut points (taken modulo the length).
fn chunked(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut chunks = Vec::new();
    let mut from = 0;
    for p in points.into_iter().chain([bytes.len()]) {
        chunks.push(bytes[from..p.max(from)].to_vec());
        from = p.max(from);
    }
    chunks
}

proptest! {
    #[test]
    fn millennium_messages_round_trip_in_any_chunks(
        messages in prop::collection::vec(millennium_message(), 1..8),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let bytes: Vec<u8> = messages.iter().flat_map(|m| m.encode()).collect();
        prop_assert!(bytes.iter().all(|b| b.count_ones() % 2 == 1), "odd parity on every byte");
        let mut decoder = millennium::Decoder::new();
        let mut out = Vec::new();
        for chunk in chunked(&bytes, &cuts) {
            decoder.push(&chunk, &mut out);
        }
        let decoded: Vec<_> = out.into_iter().map(|r| r.unwrap()).collect();
        prop_assert_eq!(decoded, messages);
    }

    #[test]
    fn millennium_commands_round_trip(commands in prop::collection::vec(millennium_command(), 1..6)) {
        let bytes: Vec<u8> = commands.iter().flat_map(|c| c.encode()).collect();
        let mut out = Vec::new();
        millennium::CommandDecoder::new().push(&bytes, &mut out);
        let decoded: Vec<_> = out.into_iter().map(|r| r.unwrap()).collect();
        prop_assert_eq!(decoded, commands);
    }

    #[test]
    fn millennium_one_flipped_bit_costs_one_frame(
        messages in prop::collection::vec(millennium_message(), 3..6),
        at in any::<prop::sample::Index>(),
        bit in 0u8..8,
    ) {
        let lengths: Vec<usize> = messages.iter().map(|m| m.encode().len()).collect();
        let mut bytes: Vec<u8> = messages.iter().flat_map(|m| m.encode()).collect();
        let i = at.index(lengths[0]);
        bytes[i] ^= 1 << bit;
        let mut out = Vec::new();
        millennium::Decoder::new().push(&bytes, &mut out);
        let good: Vec<_> = out.iter().filter_map(|r| r.as_ref().ok().cloned()).collect();
        prop_assert!(out[0].is_err(), "the damaged frame is reported: {:?}", out[0]);
        prop_assert_eq!(&good[good.len() - (messages.len() - 1)..], &messages[1..]);
    }

    #[test]
    fn certabo_frames_round_trip_in_any_chunks(
        frames in prop::collection::vec(certabo_frame(), 1..5),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let bytes: Vec<u8> = frames.iter().flat_map(|f| f.encode()).collect();
        let mut decoder = certabo::Decoder::new();
        let mut out = Vec::new();
        for chunk in chunked(&bytes, &cuts) {
            decoder.push(&chunk, &mut out);
        }
        let decoded: Vec<_> = out.into_iter().map(|r| r.unwrap()).collect();
        prop_assert_eq!(decoded, frames);
    }

    /// Runs of ordinary bytes are taken in one go: any bytes (frames cut short, too long,
    /// damaged, between frames) read the same in one chunk as byte by byte, errors and
    /// skipped bytes included.
    #[test]
    fn certabo_bytes_read_alike_whole_and_byte_by_byte(
        pieces in prop::collection::vec(prop_oneof![
            600 => prop::sample::select(b"0123456789 ".to_vec()),
            4 => prop::sample::select(b"\r\nLDx".to_vec()),
            1 => Just(b':'),
        ], 0..6000),
    ) {
        let mut whole = certabo::Decoder::new();
        let mut at_once = Vec::new();
        whole.push(&pieces, &mut at_once);
        let mut bytewise = certabo::Decoder::new();
        let mut one_by_one = Vec::new();
        for b in &pieces {
            bytewise.push(std::slice::from_ref(b), &mut one_by_one);
        }
        prop_assert_eq!(at_once, one_by_one);
        prop_assert_eq!(whole.skipped_bytes(), bytewise.skipped_bytes());
    }

    #[test]
    fn chessnut_messages_round_trip_in_any_chunks(
        messages in prop::collection::vec(chessnut_message(), 1..8),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let bytes: Vec<u8> = messages.iter().flat_map(|m| m.encode()).collect();
        let mut decoder = chessnut::Decoder::new();
        let mut out = Vec::new();
        for chunk in chunked(&bytes, &cuts) {
            decoder.push(&chunk, &mut out);
        }
        let decoded: Vec<_> = out.into_iter().map(|r| r.unwrap()).collect();
        prop_assert_eq!(decoded, messages);
    }

    #[test]
    fn chessnut_commands_round_trip(commands in prop::collection::vec(chessnut_command(), 1..6)) {
        let bytes: Vec<u8> = commands.iter().flat_map(|c| c.encode()).collect();
        let mut out = Vec::new();
        chessnut::CommandDecoder::new().push(&bytes, &mut out);
        let decoded: Vec<_> = out.into_iter().map(|r| r.unwrap()).collect();
        prop_assert_eq!(decoded, commands);
    }

    #[test]
    fn led_bytes_light_exactly_the_fields_given(fields in prop::collection::btree_set(0u8..64, 0..10)) {
        let fields: Vec<u8> = fields.into_iter().collect();
        prop_assert_eq!(certabo::lit_fields(&certabo::led_bytes(fields.clone())), fields.clone());
        prop_assert_eq!(chessnut::lit_fields(&chessnut::led_bytes(fields.clone())), fields);
    }

    #[test]
    fn the_adapter_reports_exactly_the_changed_squares(frames in prop::collection::vec(squares(), 1..6)) {
        let mut adapter = SnapshotAdapter::new();
        let mut mirror = [0u8; 64];
        for frame in &frames {
            let mut out = Vec::new();
            adapter.on_pieces(frame, &mut out);
            for m in out {
                match m {
                    DgtMessage::BoardDump(fields) => mirror = fields,
                    DgtMessage::FieldUpdate { field, piece } => {
                        prop_assert_ne!(mirror[usize::from(field)], piece, "an update changes its field");
                        mirror[usize::from(field)] = piece;
                    }
                    other => prop_assert!(false, "unexpected {other:?}"),
                }
            }
            let mut expected = [0u8; 64];
            for (code, p) in expected.iter_mut().zip(frame) {
                *code = p.map_or(0, touchmove::board::dgt::code_from_piece);
            }
            prop_assert_eq!(mirror, expected);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(fuzz_cases()))]

    #[test]
    fn any_bytes_never_panic_and_memory_stays_bounded(
        bytes in prop::collection::vec(any::<u8>(), 0..2048),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        for kind in BoardKind::ALL {
            let mut decoder = KindDecoder::new(kind);
            let mut out = Vec::new();
            for chunk in chunked(&bytes, &cuts) {
                decoder.push(&chunk, &mut out);
            }
            prop_assert!(decoder.skipped_bytes() <= bytes.len() as u64);
        }
        let mut out = Vec::new();
        millennium::CommandDecoder::new().push(&bytes, &mut out);
        let mut out = Vec::new();
        chessnut::CommandDecoder::new().push(&bytes, &mut out);
    }

    #[test]
    fn frames_buried_in_garbage_are_found(
        garbage in prop::collection::vec(any::<u8>(), 0..64),
        status in squares(),
    ) {
        // Millennium: garbage then a frame (the garbage may hold a partial frame whose
        // resync consumes at most its own bytes).
        let frame = millennium::Message::Status(status);
        let mut bytes = garbage.clone();
        bytes.extend(frame.encode());
        bytes.extend(frame.encode());
        let mut out = Vec::new();
        millennium::Decoder::new().push(&bytes, &mut out);
        prop_assert_eq!(out.last().cloned(), Some(Ok(frame)));
        // Chessnut likewise.
        let frame = chessnut::Message::Position { squares: status, tail: [0xFF; 4] };
        let mut bytes = garbage.clone();
        bytes.extend(frame.encode());
        bytes.extend(frame.encode());
        let mut out = Vec::new();
        chessnut::Decoder::new().push(&bytes, &mut out);
        prop_assert_eq!(out.last().cloned(), Some(Ok(frame)));
        // Certabo: a `:` always starts a frame.
        let frame = certabo::Frame::Occupancy([0xFF, 0xFF, 0, 0, 0, 0, 0xFF, 0xFF]);
        let mut bytes = garbage;
        bytes.extend(frame.encode());
        let mut out = Vec::new();
        certabo::Decoder::new().push(&bytes, &mut out);
        prop_assert_eq!(out.last().cloned(), Some(Ok(frame)));
    }
}
