//! Properties of the Pegasus and Revelation II codecs and of the bus translation: what is
//! encoded decodes to itself, and arbitrary bytes never make a decoder panic.
//!
//! The case counts are small for CI. A fuzz run is the same tests with more cases:
//! `TOUCHMOVE_FUZZ_CASES=200000 cargo test --release --test wire variants_props:: -- --nocapture`
//! (each fuzz test prints how many inputs and bytes it tried).

use proptest::prelude::*;
use touchmove::driver::bus::BusEvent;
use touchmove::driver::bus_boards::BusTranslator;
use touchmove::wire::dgt::bus::{BusReply, BusReplyBody, BusReplyDecoder};
use touchmove::wire::dgt::{CommandDecoder, EepromRecord};
use touchmove::wire::pegasus::{
    DeveloperKey, LedPattern, PegasusCommand, PegasusDecoder, PegasusMessage,
};
use touchmove::wire::revelation::RevelationLeds;

/// Cases of the fuzz tests: `TOUCHMOVE_FUZZ_CASES`, or 256.
fn fuzz_cases() -> u32 {
    std::env::var("TOUCHMOVE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn pegasus_message() -> impl Strategy<Value = PegasusMessage> {
    prop_oneof![
        prop::array::uniform32(any::<bool>()).prop_flat_map(|half| {
            prop::array::uniform32(any::<bool>()).prop_map(move |other| {
                let mut all = [false; 64];
                all[..32].copy_from_slice(&half);
                all[32..].copy_from_slice(&other);
                PegasusMessage::Occupancy(all)
            })
        }),
        (0u8..64, any::<bool>())
            .prop_map(|(field, occupied)| PegasusMessage::Field { field, occupied }),
    ]
}

fn pegasus_command() -> impl Strategy<Value = PegasusCommand> {
    prop_oneof![
        Just(PegasusCommand::Reset),
        Just(PegasusCommand::SendBoard),
        Just(PegasusCommand::UpdateBoard),
        Just(PegasusCommand::SendSerialNumber),
        Just(PegasusCommand::SendLongSerialNumber),
        Just(PegasusCommand::SendTrademark),
        Just(PegasusCommand::SendVersion),
        Just(PegasusCommand::SendHardwareVersion),
        Just(PegasusCommand::SendBatteryStatus),
        Just(PegasusCommand::AfterKey),
        Just(PegasusCommand::LedsOff),
        any::<[u8; 6]>().prop_map(|k| PegasusCommand::DeveloperKey(DeveloperKey::new(k))),
        (
            1u8..8,
            0u8..4,
            0u8..4,
            prop::collection::vec(0u8..64, 0..20)
        )
            .prop_map(|(speed, repeat, brightness, fields)| PegasusCommand::Leds(
                LedPattern {
                    speed,
                    repeat,
                    brightness,
                    fields,
                }
            )),
    ]
}

fn revelation_leds() -> impl Strategy<Value = RevelationLeds> {
    prop_oneof![
        (any::<bool>(), 0u8..64, 0u8..64).prop_map(|(on, start, end)| RevelationLeds::Fields {
            on,
            start,
            end
        }),
        Just(RevelationLeds::AllOff),
        any::<bool>().prop_map(RevelationLeds::AutoOff),
        any::<bool>().prop_map(RevelationLeds::AutoReverse),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pegasus_messages_round_trip_in_any_chunks(
        messages in prop::collection::vec(pegasus_message(), 1..20),
        cut in any::<prop::sample::Index>(),
    ) {
        let bytes: Vec<u8> = messages.iter().flat_map(PegasusMessage::encode).collect();
        let at = cut.index(bytes.len() + 1);
        let mut decoder = PegasusDecoder::new();
        let mut out = Vec::new();
        decoder.push(&bytes[..at], &mut out);
        decoder.push(&bytes[at..], &mut out);
        prop_assert_eq!(out, messages);
        prop_assert_eq!(decoder.skipped_bytes(), 0);
    }

    #[test]
    fn pegasus_commands_round_trip_through_the_board_side(
        commands in prop::collection::vec(pegasus_command(), 1..10),
    ) {
        let bytes: Vec<u8> = commands.iter().flat_map(PegasusCommand::encode).collect();
        let mut decoded = Vec::new();
        CommandDecoder::new().push(&bytes, &mut decoded);
        let back: Vec<PegasusCommand> = decoded
            .iter()
            .map(|c| PegasusCommand::from_command(c).expect("a Pegasus command"))
            .collect();
        prop_assert_eq!(back, commands);
    }

    #[test]
    fn revelation_leds_round_trip(leds in revelation_leds()) {
        let mut decoded = Vec::new();
        CommandDecoder::new().push(&leds.encode(), &mut decoded);
        let [touchmove::wire::dgt::Command::Leds(payload)] = decoded.as_slice() else {
            panic!("{decoded:?}")
        };
        prop_assert_eq!(RevelationLeds::decode(payload), Ok(leds));
    }

    #[test]
    fn a_translated_bus_board_reads_back_its_change_records(
        fields in prop::collection::vec((0u8..64, 0u8..13), 1..40),
    ) {
        let mut t = BusTranslator::new("/dev/bus");
        t.on_event(BusEvent::Version { address: 5, major: 1, minor: 2 });
        t.on_event(BusEvent::Board { address: 5, fields: vec![0; 64] });
        let records = fields
            .iter()
            .map(|&(field, piece)| EepromRecord::FieldChange { field, piece, quick: false })
            .collect();
        let out = t.on_event(BusEvent::Changes { address: 5, records });
        let mut messages = Vec::new();
        for item in out {
            if let touchmove::driver::bus_boards::Translated::Event(
                5,
                touchmove::driver::dgt::LinkEvent::Bytes { data, .. },
            ) = item
            {
                touchmove::wire::dgt::Decoder::new().push(&data, &mut messages);
            }
        }
        let expected: Vec<touchmove::wire::dgt::Message> = fields
            .iter()
            .map(|&(field, piece)| touchmove::wire::dgt::Message::FieldUpdate { field, piece })
            .collect();
        prop_assert_eq!(messages, expected);
    }
}

/// Bytes shaped like frames more often than uniform bytes would be: ids, lengths, data.
fn frame_like_bytes() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![any::<u8>(), 0x80u8..0xA6, 0u8..0x10, Just(0x43u8)],
        0..600,
    )
}

/// Runs `check` on [`fuzz_cases`] random byte strings; a panic fails the test (shrunk).
/// Prints the bytes tried.
fn fuzz(name: &str, check: impl Fn(&[u8])) {
    let cases = fuzz_cases();
    let tried = std::cell::Cell::new(0u64);
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig::with_cases(cases));
    runner
        .run(&frame_like_bytes(), |bytes| {
            tried.set(tried.get() + bytes.len() as u64);
            check(&bytes);
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    eprintln!(
        "fuzz {name}: {cases} inputs, {} bytes, no panic",
        tried.get()
    );
    assert!(tried.get() > 0, "{name}: bytes were tried");
}

#[test]
fn fuzz_the_pegasus_decoder() {
    fuzz("pegasus decoder", |bytes| {
        let mut out = Vec::new();
        PegasusDecoder::new().push(bytes, &mut out);
        for message in &out {
            if let PegasusMessage::Invalid(e) = message {
                assert!(e.byte >= 3 && e.value > 1, "{e}");
            }
        }
    });
}

#[test]
fn fuzz_the_board_side_command_decoders() {
    fuzz("pegasus and revelation commands", |bytes| {
        let mut commands = Vec::new();
        CommandDecoder::new().push(bytes, &mut commands);
        for command in &commands {
            let _ = PegasusCommand::from_command(command);
            if let touchmove::wire::dgt::Command::Leds(payload) = command {
                let _ = RevelationLeds::decode(payload);
            }
        }
    });
}

#[test]
fn fuzz_the_bus_reply_decoder_and_translator() {
    fuzz("bus replies and translator", |bytes| {
        let mut frames = Vec::new();
        BusReplyDecoder::new().push(bytes, &mut frames);
        let mut t = BusTranslator::new("/dev/bus");
        for frame in frames {
            let touchmove::wire::dgt::bus::BusFrame::Reply(BusReply { address, body }) = frame
            else {
                continue;
            };
            let event = match body {
                BusReplyBody::BoardDump { fields } => BusEvent::Board { address, fields },
                BusReplyBody::Changes { records } => BusEvent::Changes { address, records },
                BusReplyBody::Clock { clock } => BusEvent::Clock { address, clock },
                BusReplyBody::Version { major, minor } => BusEvent::Version {
                    address,
                    major,
                    minor,
                },
                _ => continue,
            };
            t.on_event(event);
        }
    });
}
