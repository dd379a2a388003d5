//! The real board + clock capture `fixtures/real-dgt/johan.inbytes` decodes exactly, and
//! every decoded message agrees with `johan.json` (the same capture decoded by another
//! project).

use serde_json::Value;
use touchmove::wire::capture::read_capture;
use touchmove::wire::dgt::{ClockMessage, Decoder, Message, SideTime, piece_char};

const INBYTES: &str = include_str!("../../fixtures/real-dgt/johan.inbytes");
const JSON: &str = include_str!("../../fixtures/real-dgt/johan.json");

fn decode_all() -> (Vec<Message>, u64) {
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    for chunk in read_capture(INBYTES).expect("fixture is a valid capture") {
        decoder.push(&chunk.bytes, &mut out);
    }
    (out, decoder.skipped_bytes())
}

#[test]
fn johan_decodes_with_zero_skipped_bytes_into_the_expected_counts() {
    let (messages, skipped) = decode_all();
    assert_eq!(skipped, 0);
    let count = |f: fn(&Message) -> bool| messages.iter().filter(|m| f(m)).count();
    assert_eq!(count(|m| matches!(m, Message::BoardDump(_))), 1);
    assert_eq!(
        count(|m| matches!(m, Message::Clock(ClockMessage::Times(_)))),
        854
    );
    assert_eq!(count(|m| matches!(m, Message::FieldUpdate { .. })), 101);
    assert_eq!(messages.len(), 956);
}

#[test]
fn johan_as_one_stream_gives_the_same_messages() {
    let chunks = read_capture(INBYTES).expect("fixture is a valid capture");
    let stream: Vec<u8> = chunks.iter().flat_map(|c| c.bytes.clone()).collect();
    assert_eq!(stream.len(), 9112);
    let mut decoder = Decoder::new();
    let mut out = Vec::new();
    decoder.push(&stream, &mut out);
    assert_eq!(out, decode_all().0);
    assert_eq!(decoder.skipped_bytes(), 0);
}

fn side_matches(side: &SideTime, json: &Value) -> bool {
    json["hours"] == u64::from(side.hours)
        && json["minutes"] == u64::from(side.minutes)
        && json["seconds"] == u64::from(side.seconds)
        && json["final_flag"] == side.flag_fallen
        && json["flag"] == side.flag_shown
        && json["time_per_move"] == side.time_per_move
}

#[test]
fn johan_matches_the_other_projects_decoding_message_by_message() {
    let (messages, _) = decode_all();
    let expected: Vec<Value> = JSON
        .lines()
        .map(|l| serde_json::from_str(l).expect("fixture json line"))
        .collect();
    assert_eq!(messages.len(), expected.len());
    for (i, (message, json)) in messages.iter().zip(&expected).enumerate() {
        let ok = match message {
            Message::BoardDump(fields) => {
                let board: Vec<String> =
                    fields.iter().map(|&c| piece_char(c).to_string()).collect();
                json["board"] == serde_json::json!(board)
            }
            Message::FieldUpdate { field, piece } => {
                let name = format!("{}{}", char::from(b'a' + field % 8), 8 - field / 8);
                json["field"] == name.as_str() && json["piece"] == piece_char(*piece).to_string()
            }
            Message::Clock(ClockMessage::Times(t)) => {
                side_matches(&t.left, &json["left_clock"])
                    && side_matches(&t.right, &json["right_clock"])
                    && json["clock_running"] == t.status.running
                    && json["right_high"] == t.status.right_lever_high
                    && json["battery_indicator"] == t.status.battery_low
                    && json["no_clock"] == t.status.no_clock
            }
            _ => false,
        };
        assert!(ok, "message {} differs: {message:?} vs {json}", i + 1);
    }
}

#[test]
fn johan_reencodes_byte_for_byte() {
    let chunks = read_capture(INBYTES).expect("fixture is a valid capture");
    for chunk in chunks {
        let mut out = Vec::new();
        Decoder::new().push(&chunk.bytes, &mut out);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].encode(), chunk.bytes);
    }
}
