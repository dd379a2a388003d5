//! Bus mode: daisy-chained tournament boards addressed by a 14-bit number.
//!
//! Host → boards: four-byte frames `cmd addrHi addrLo checksum`. Boards → host: frames
//! `id lenHi lenLo addrHi addrLo data… checksum` (length covers everything). Checksums are the
//! sum of the preceding bytes of the frame, masked to seven bits.

use serde::Serialize;

use super::clock::ClockMessage;
use super::eeprom::EepromRecord;
use super::frame::{Framer, HEADER_LEN, MAX_FRAME_LEN, push_header};

/// The seven-bit checksum of bus frames.
pub fn checksum(bytes: &[u8]) -> u8 {
    (bytes.iter().map(|&b| u32::from(b)).sum::<u32>() & 0x7F) as u8
}

/// The bus address of the board with this serial number (its decimal value, 14 bits), or
/// `None` when it is not a number from 1 to 16383.
pub fn address_of_serial(serial: &str) -> Option<u16> {
    serial
        .trim()
        .parse::<u16>()
        .ok()
        .filter(|a| (1..=0x3FFF).contains(a))
}

/// A bus command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BusCommandKind {
    /// 0x81: send the clock.
    SendClock,
    /// 0x82: send the board.
    SendBoard,
    /// 0x83: send the changes since the last request.
    SendChanges,
    /// 0x84: repeat the last changes (after a checksum error, so nothing is lost).
    RepeatChanges,
    /// 0x85: write a start-of-game tag.
    SetStartGame,
    /// 0x86: send everything since the start tag.
    SendFromStart,
    /// 0x87: ping (address 0 = every board answers).
    Ping,
    /// 0x88: leave bus mode.
    EndBusMode,
    /// 0x89: reset.
    Reset,
    /// 0x8A: do not answer the next broadcast ping.
    IgnoreNextBusPing,
    /// 0x8B: send the version.
    SendVersion,
    /// 0x8C: send the draughts board.
    SendBoard50B,
    /// 0x8D: send changes, clock and board.
    SendAllData,
    /// Any other command code (0x80 or more).
    Other(u8),
}

const BUS_COMMANDS: [(u8, BusCommandKind); 13] = [
    (0x81, BusCommandKind::SendClock),
    (0x82, BusCommandKind::SendBoard),
    (0x83, BusCommandKind::SendChanges),
    (0x84, BusCommandKind::RepeatChanges),
    (0x85, BusCommandKind::SetStartGame),
    (0x86, BusCommandKind::SendFromStart),
    (0x87, BusCommandKind::Ping),
    (0x88, BusCommandKind::EndBusMode),
    (0x89, BusCommandKind::Reset),
    (0x8A, BusCommandKind::IgnoreNextBusPing),
    (0x8B, BusCommandKind::SendVersion),
    (0x8C, BusCommandKind::SendBoard50B),
    (0x8D, BusCommandKind::SendAllData),
];

impl BusCommandKind {
    /// The command byte.
    pub fn code(self) -> u8 {
        match self {
            BusCommandKind::Other(b) => b | 0x80,
            known => BUS_COMMANDS
                .iter()
                .find(|(_, k)| *k == known)
                .map_or(0x80, |(code, _)| *code),
        }
    }

    /// The command for a byte (MSB set).
    pub fn from_code(code: u8) -> Self {
        BUS_COMMANDS
            .iter()
            .find(|(c, _)| *c == code)
            .map_or(BusCommandKind::Other(code | 0x80), |(_, k)| *k)
    }
}

/// A bus command addressed to one board (address 0 = broadcast).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct BusCommand {
    /// What to do.
    pub kind: BusCommandKind,
    /// The board's bus address (14 bits).
    pub address: u16,
}

impl BusCommand {
    /// The four bytes to send.
    pub fn encode(&self) -> [u8; 4] {
        let head = [
            self.kind.code(),
            ((self.address >> 7) & 0x7F) as u8,
            (self.address & 0x7F) as u8,
        ];
        [head[0], head[1], head[2], checksum(&head)]
    }

    /// Decodes a four-byte frame; `None` when the framing or checksum is wrong.
    pub fn decode(frame: &[u8]) -> Option<Self> {
        let [code, hi, lo, sum] = *frame else {
            return None;
        };
        let valid = code & 0x80 != 0 && (hi | lo | sum) & 0x80 == 0;
        (valid && checksum(&[code, hi, lo]) == sum).then(|| BusCommand {
            kind: BusCommandKind::from_code(code),
            address: address(hi, lo),
        })
    }
}

fn address(hi: u8, lo: u8) -> u16 {
    (u16::from(hi) << 7) | u16::from(lo)
}

/// What a board answered in bus mode.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "reply", rename_all = "snake_case")]
pub enum BusReplyBody {
    /// 0x83: the 64 piece codes.
    BoardDump {
        /// Fields in DGT order.
        fields: Vec<u8>,
    },
    /// 0x84: the clock.
    Clock {
        /// The decoded clock message.
        clock: ClockMessage,
    },
    /// 0x85: changes since the last SEND_CHANGES, as EEPROM records.
    Changes {
        /// The records.
        records: Vec<EepromRecord>,
    },
    /// 0x86: everything since the start tag.
    FromStart {
        /// The records.
        records: Vec<EepromRecord>,
    },
    /// 0x87: answer to a ping.
    Ping,
    /// 0x88: the start tag was written.
    StartGameWritten,
    /// 0x89: the firmware version.
    Version {
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// Any other reply (or a known id with unexpected content), kept raw.
    Unknown {
        /// The wire id (MSB set).
        id: u8,
        /// Data between the address and the checksum.
        data: Vec<u8>,
    },
}

/// One bus reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BusReply {
    /// The answering board.
    pub address: u16,
    /// What it said.
    pub body: BusReplyBody,
}

/// An item decoded from the bus.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "frame", rename_all = "snake_case")]
pub enum BusFrame {
    /// A reply with a correct checksum.
    Reply(BusReply),
    /// A well-framed reply whose checksum is wrong: ask that board to repeat (for changes,
    /// with REPEAT_CHANGES so that nothing is lost).
    ChecksumError {
        /// The wire id.
        id: u8,
        /// The address as received (may itself be corrupt).
        address: u16,
    },
}

/// Address plus checksum bytes around the data of a bus reply.
const BUS_OVERHEAD: usize = HEADER_LEN + 3;

fn accepts_bus_length(id: u8, total: usize) -> bool {
    let data = |n: usize| total == BUS_OVERHEAD + n;
    match id {
        0x83 => data(64),
        0x84 => data(7),
        0x87 | 0x88 => data(0),
        0x89 => data(0) || data(2),
        0x8A => data(50),
        _ => (BUS_OVERHEAD..=MAX_FRAME_LEN).contains(&total),
    }
}

impl BusReply {
    fn from_frame(frame: &[u8]) -> BusFrame {
        let id = frame[0];
        let address = address(frame[3], frame[4]);
        let (body, sum) = frame.split_at(frame.len() - 1);
        if checksum(body) != sum[0] {
            return BusFrame::ChecksumError { id, address };
        }
        let data = &body[5..];
        let unknown = || BusReplyBody::Unknown {
            id,
            data: data.to_vec(),
        };
        let body = match id {
            0x83 => BusReplyBody::BoardDump {
                fields: data.to_vec(),
            },
            0x84 => data
                .try_into()
                .ok()
                .and_then(ClockMessage::decode)
                .map_or_else(unknown, |clock| BusReplyBody::Clock { clock }),
            0x85 => BusReplyBody::Changes {
                records: EepromRecord::parse_all(data),
            },
            0x86 => BusReplyBody::FromStart {
                records: EepromRecord::parse_all(data),
            },
            0x87 => BusReplyBody::Ping,
            0x88 => BusReplyBody::StartGameWritten,
            0x89 => match *data {
                [major, minor] => BusReplyBody::Version { major, minor },
                _ => unknown(),
            },
            _ => unknown(),
        };
        BusFrame::Reply(BusReply { address, body })
    }

    /// The frame as a board sends it.
    pub fn encode(&self) -> Vec<u8> {
        let mut data = Vec::new();
        let id = match &self.body {
            BusReplyBody::BoardDump { fields } => {
                data.extend(fields);
                0x83
            }
            BusReplyBody::Clock { clock } => {
                data.extend(clock.encode());
                0x84
            }
            BusReplyBody::Changes { records } | BusReplyBody::FromStart { records } => {
                records.iter().for_each(|r| r.encode_into(&mut data));
                if matches!(self.body, BusReplyBody::Changes { .. }) {
                    0x85
                } else {
                    0x86
                }
            }
            BusReplyBody::Ping => 0x87,
            BusReplyBody::StartGameWritten => 0x88,
            BusReplyBody::Version { major, minor } => {
                data.extend([*major, *minor]);
                0x89
            }
            BusReplyBody::Unknown { id, data: d } => {
                data.extend(d);
                *id
            }
        };
        data.truncate(MAX_FRAME_LEN - BUS_OVERHEAD);
        let mut out = Vec::with_capacity(data.len() + BUS_OVERHEAD);
        push_header(&mut out, id, data.len() + BUS_OVERHEAD);
        out.extend([
            ((self.address >> 7) & 0x7F) as u8,
            (self.address & 0x7F) as u8,
        ]);
        out.extend(data.iter().map(|b| b & 0x7F));
        out.push(checksum(&out));
        out
    }
}

/// The streaming decoder of bus replies (same framing and resynchronisation as
/// [`super::Decoder`]).
#[derive(Debug, Default, Clone)]
pub struct BusReplyDecoder {
    framer: Framer,
}

impl BusReplyDecoder {
    /// A decoder waiting for the first reply.
    pub fn new() -> Self {
        BusReplyDecoder::default()
    }

    /// Feeds `bytes`, appending every reply (or checksum error) completed by them.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<BusFrame>) {
        self.framer.push(bytes, accepts_bus_length, |frame| {
            out.push(BusReply::from_frame(frame))
        });
    }

    /// Bytes dropped so far.
    pub fn skipped_bytes(&self) -> u64 {
        self.framer.skipped()
    }
}
