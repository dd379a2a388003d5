//! The DGT Pegasus protocol, byte-exact and without I/O.
//!
//! A Pegasus speaks DGT's framing (`protocols`, DGT variants: Pegasus) over Bluetooth LE,
//! with three differences from a DGT board:
//!
//! * it cannot tell pieces apart: its board dump holds 0 (empty) or 1 (occupied) per field,
//!   and a field update says 0 (lifted) or 1 (placed);
//! * the host gives it a developer key (`63 07 k1..k6 00`) before it streams; the key is DGT's,
//!   given to developers on request, so touchmove ships none: the user names it
//!   ([`DeveloperKey`] reads it from text or a file);
//! * its LEDs take `60 <n+5> 05 speed repeat brightness sq1..sqn 00`, all off `60 02 00 00`.
//!
//! [`PegasusCommand`] is what a host sends (and [`PegasusCommand::from_command`] the board
//! side of it); [`PegasusDecoder`] turns the board's bytes into [`PegasusMessage`]s, with a
//! dump or field update that is not occupancy-only reported as
//! [`PegasusMessage::Invalid`], naming the frame and the byte. The messages themselves are
//! DGT [`Message`]s: the occupancy-only observer (`board::dgt::DgtObserver::occupancy_only`)
//! reads them.

use std::fmt;
use std::path::Path;

use super::dgt::{Command, Decoder, Message};
use super::frame_error;

/// Bytes of a developer key.
pub const KEY_LEN: usize = 6;

/// The LED command's mode byte for "these squares".
const LEDS_SQUARES: u8 = 0x05;

/// A Pegasus developer key (six bytes). Its `Debug` output hides the bytes: the key is the
/// user's, not to be printed in logs.
#[derive(Clone, PartialEq, Eq)]
pub struct DeveloperKey([u8; KEY_LEN]);

impl fmt::Debug for DeveloperKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DeveloperKey(hidden)")
    }
}

/// Why a developer key could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// A character that is not a hex digit or a separator.
    #[error(
        "character {position} ({found:?}) of the Pegasus developer key is not a hex digit; \
         write the six bytes DGT gave you as hex, e.g. \"01 23 45 67 89 ab\""
    )]
    NotHex {
        /// 1-based position in the text.
        position: usize,
        /// The character.
        found: char,
    },
    /// Not six bytes.
    #[error(
        "the Pegasus developer key has {digits} hex digits, not 12; write the six bytes DGT \
         gave you as hex, e.g. \"01 23 45 67 89 ab\""
    )]
    Length {
        /// Hex digits found.
        digits: usize,
    },
    /// The key file could not be read.
    #[error("cannot read the Pegasus developer key file {path}: {reason}")]
    File {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
}

impl DeveloperKey {
    /// The key of these bytes.
    pub fn new(bytes: [u8; KEY_LEN]) -> Self {
        DeveloperKey(bytes)
    }

    /// The key's bytes.
    pub fn bytes(&self) -> [u8; KEY_LEN] {
        self.0
    }

    /// Reads a key written as hex: twelve digits, with spaces, colons, commas or `0x`
    /// prefixes between the bytes allowed.
    pub fn parse(text: &str) -> Result<Self, KeyError> {
        let cleaned = text.replace("0x", "  ").replace("0X", "  ");
        let mut digits = Vec::new();
        for (i, c) in cleaned.chars().enumerate() {
            match c.to_digit(16) {
                Some(d) => digits.push(d as u8),
                None if c.is_whitespace() || matches!(c, ':' | ',' | '-') => {}
                None => {
                    return Err(KeyError::NotHex {
                        position: i + 1,
                        found: c,
                    });
                }
            }
        }
        if digits.len() != KEY_LEN * 2 {
            return Err(KeyError::Length {
                digits: digits.len(),
            });
        }
        let mut key = [0u8; KEY_LEN];
        for (slot, pair) in key.iter_mut().zip(digits.chunks(2)) {
            *slot = (pair[0] << 4) | pair[1];
        }
        Ok(DeveloperKey(key))
    }

    /// Reads the key from a file holding it as hex (see [`DeveloperKey::parse`]).
    pub fn from_file(path: &Path) -> Result<Self, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|e| KeyError::File {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::parse(&text)
    }

    /// Reads `value`: the key's six bytes in hex, or else the path of a file holding them
    /// (relative to `base`, the folder of the file that named it). The error names what was
    /// tried.
    pub fn read(value: &str, base: &Path) -> Result<Self, String> {
        let as_text = match Self::parse(value) {
            Ok(key) => return Ok(key),
            Err(e) => e,
        };
        let path = base.join(value.trim());
        if path.is_file() {
            return Self::from_file(&path).map_err(|e| e.to_string());
        }
        Err(format!(
            "{value:?} is neither a Pegasus developer key ({as_text}) nor a file ({} does not \
             exist)",
            path.display()
        ))
    }
}

/// A pattern shown on a Pegasus's square LEDs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedPattern {
    /// Blink speed, 1 (slow) to 7.
    pub speed: u8,
    /// Repeats: 0 forever, 1 to 3 that many times.
    pub repeat: u8,
    /// Brightness: 0 brightest to 3 dim (the scale is not sure).
    pub brightness: u8,
    /// The squares, in DGT field numbering (0 = a8 … 63 = h1).
    pub fields: Vec<u8>,
}

/// What a host sends a Pegasus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PegasusCommand {
    /// 0x40: back to idle. No reply.
    Reset,
    /// 0x42: send the occupancy of every field.
    SendBoard,
    /// 0x44: report every field change.
    UpdateBoard,
    /// 0x45: send the serial number.
    SendSerialNumber,
    /// 0x55: send the long serial number.
    SendLongSerialNumber,
    /// 0x47: send the trademark text.
    SendTrademark,
    /// 0x4D: send the firmware version.
    SendVersion,
    /// 0x48: send the hardware version.
    SendHardwareVersion,
    /// 0x4C: send the battery status.
    SendBatteryStatus,
    /// 0x5A: sent by DGT's own app after the key (its meaning is not documented).
    AfterKey,
    /// 0x63: the developer key.
    DeveloperKey(DeveloperKey),
    /// 0x60 with mode 5: light these squares.
    Leds(LedPattern),
    /// 0x60 with mode 0: every LED off.
    LedsOff,
}

/// A host command a Pegasus does not take, naming its bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a Pegasus command: {bytes:02x?} ({why})")]
pub struct CommandError {
    /// The command's bytes.
    pub bytes: Vec<u8>,
    /// What is wrong with it.
    pub why: &'static str,
}

impl PegasusCommand {
    /// The DGT command it is.
    pub fn to_command(&self) -> Command {
        match self {
            PegasusCommand::Reset => Command::Reset,
            PegasusCommand::SendBoard => Command::SendBoard,
            PegasusCommand::UpdateBoard => Command::SendUpdateBoard,
            PegasusCommand::SendSerialNumber => Command::SendSerialNumber,
            PegasusCommand::SendLongSerialNumber => Command::SendLongSerialNumber,
            PegasusCommand::SendTrademark => Command::SendTrademark,
            PegasusCommand::SendVersion => Command::SendVersion,
            PegasusCommand::SendHardwareVersion => Command::SendHardwareVersion,
            PegasusCommand::SendBatteryStatus => Command::SendBatteryStatus,
            PegasusCommand::AfterKey => Command::Other(0x5A),
            PegasusCommand::DeveloperKey(key) => Command::DeveloperKey(key.bytes().to_vec()),
            PegasusCommand::Leds(p) => {
                let mut payload = vec![LEDS_SQUARES, p.speed, p.repeat, p.brightness];
                payload.extend(p.fields.iter().map(|f| f & 63));
                Command::Leds(payload)
            }
            PegasusCommand::LedsOff => Command::Leds(vec![0]),
        }
    }

    /// The bytes to send.
    pub fn encode(&self) -> Vec<u8> {
        self.to_command().encode()
    }

    /// The Pegasus command a decoded DGT command is (the board side).
    pub fn from_command(command: &Command) -> Result<Self, CommandError> {
        let refuse = |why| {
            Err(CommandError {
                bytes: command.encode(),
                why,
            })
        };
        Ok(match command {
            Command::Reset => PegasusCommand::Reset,
            Command::SendBoard => PegasusCommand::SendBoard,
            Command::SendUpdateBoard => PegasusCommand::UpdateBoard,
            Command::SendSerialNumber => PegasusCommand::SendSerialNumber,
            Command::SendLongSerialNumber => PegasusCommand::SendLongSerialNumber,
            Command::SendTrademark => PegasusCommand::SendTrademark,
            Command::SendVersion => PegasusCommand::SendVersion,
            Command::SendHardwareVersion => PegasusCommand::SendHardwareVersion,
            Command::SendBatteryStatus => PegasusCommand::SendBatteryStatus,
            Command::Other(0x5A) => PegasusCommand::AfterKey,
            Command::DeveloperKey(bytes) => match <[u8; KEY_LEN]>::try_from(bytes.as_slice()) {
                Ok(key) => PegasusCommand::DeveloperKey(DeveloperKey(key)),
                Err(_) => return refuse("a developer key has six bytes"),
            },
            Command::Leds(payload) => match payload.as_slice() {
                [0] => PegasusCommand::LedsOff,
                [LEDS_SQUARES, speed, repeat, brightness, fields @ ..]
                    if fields.iter().all(|&f| f < 64) =>
                {
                    PegasusCommand::Leds(LedPattern {
                        speed: *speed,
                        repeat: *repeat,
                        brightness: *brightness,
                        fields: fields.to_vec(),
                    })
                }
                _ => return refuse("LEDs take mode 0 (all off) or 5 with fields 0 to 63"),
            },
            _ => return refuse("a DGT command the Pegasus does not take"),
        })
    }
}

/// What DGT's own app sends when it connects, with the user's `key`: reset, LEDs off, the
/// key, 0x5A, trademark, board, field updates.
pub fn connect_sequence(key: &DeveloperKey) -> Vec<u8> {
    [
        PegasusCommand::Reset,
        PegasusCommand::LedsOff,
        PegasusCommand::DeveloperKey(key.clone()),
        PegasusCommand::AfterKey,
        PegasusCommand::SendTrademark,
        PegasusCommand::SendBoard,
        PegasusCommand::UpdateBoard,
    ]
    .iter()
    .flat_map(PegasusCommand::encode)
    .collect()
}

/// A frame that is not what a Pegasus sends: which frame (counted from 1 since the decoder
/// started), which byte of it (0 = the id), the value, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Pegasus frame {frame} ({what}), byte {byte}: {value:#04x} {why}")]
pub struct FrameError {
    /// The frame's number, from 1.
    pub frame: u64,
    /// What the frame is.
    pub what: &'static str,
    /// The byte's offset in the frame (the 3-byte header included).
    pub byte: usize,
    /// The byte.
    pub value: u8,
    /// What is wrong.
    pub why: &'static str,
    /// The frame's first bytes (at most 8), to find it in a capture.
    pub start: Vec<u8>,
}

impl FrameError {
    /// The same error in the form every board decoder reports ([`frame_error::FrameError`]),
    /// for the recorder's log.
    pub fn to_frame_error(&self) -> frame_error::FrameError {
        frame_error::FrameError {
            protocol: "pegasus",
            frame: self.frame,
            start: self.start.clone(),
            offset: self.byte,
            byte: self.value,
            what: self.why,
        }
    }
}

/// What a Pegasus said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PegasusMessage {
    /// A board dump: which fields are occupied (DGT numbering).
    Occupancy([bool; 64]),
    /// A field update: a piece was lifted from (`false`) or placed on (`true`) the field.
    Field {
        /// The field (0 = a8 … 63 = h1).
        field: u8,
        /// Occupied after the change.
        occupied: bool,
    },
    /// Any other DGT message (version, serial number, trademark, battery, …).
    Other(Message),
    /// A dump or field update that is not occupancy-only: the board is not a Pegasus, or the
    /// line garbled it.
    Invalid(FrameError),
}

impl PegasusMessage {
    /// The DGT message carrying it (occupied fields as code 1); `None` for
    /// [`PegasusMessage::Invalid`].
    pub fn to_message(&self) -> Option<Message> {
        Some(match self {
            PegasusMessage::Occupancy(occupied) => Message::BoardDump(occupied.map(u8::from)),
            &PegasusMessage::Field { field, occupied } => Message::FieldUpdate {
                field,
                piece: u8::from(occupied),
            },
            PegasusMessage::Other(m) => m.clone(),
            PegasusMessage::Invalid(_) => return None,
        })
    }

    /// The bytes a Pegasus sends for it (nothing for [`PegasusMessage::Invalid`]).
    pub fn encode(&self) -> Vec<u8> {
        self.to_message().map(|m| m.encode()).unwrap_or_default()
    }
}

/// Offset of the first data byte in a frame.
const DATA_START: usize = 3;

/// The streaming decoder of what a Pegasus sends (DGT framing and resynchronisation).
#[derive(Debug, Default, Clone)]
pub struct PegasusDecoder {
    decoder: Decoder,
    messages: Vec<Message>,
    frames: u64,
}

impl PegasusDecoder {
    /// A decoder waiting for the first frame.
    pub fn new() -> Self {
        PegasusDecoder::default()
    }

    /// Feeds `bytes`, appending every message completed by them to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<PegasusMessage>) {
        self.messages.clear();
        self.decoder.push(bytes, &mut self.messages);
        for message in self.messages.drain(..) {
            self.frames += 1;
            let frame = self.frames;
            let invalid = |what, byte, value, message: &Message| {
                PegasusMessage::Invalid(FrameError {
                    frame,
                    what,
                    byte,
                    value,
                    why: "is not an occupancy code (0 empty, 1 occupied)",
                    start: message.encode().into_iter().take(8).collect(),
                })
            };
            out.push(match message {
                Message::BoardDump(codes) => match codes.iter().position(|&c| c > 1) {
                    Some(i) => invalid("board dump", DATA_START + i, codes[i], &message),
                    None => PegasusMessage::Occupancy(codes.map(|c| c == 1)),
                },
                Message::FieldUpdate { piece, .. } if piece > 1 => {
                    invalid("field update", DATA_START + 1, piece, &message)
                }
                Message::FieldUpdate { field, piece } => PegasusMessage::Field {
                    field,
                    occupied: piece == 1,
                },
                other => PegasusMessage::Other(other),
            });
        }
    }

    /// Bytes dropped so far because they did not belong to a well-framed message.
    pub fn skipped_bytes(&self) -> u64 {
        self.decoder.skipped_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_connect_sequence_is_the_one_dgts_app_sends() {
        let key = DeveloperKey::parse("01:23:45:67:89:AB").unwrap();
        assert_eq!(
            connect_sequence(&key),
            [
                0x40, 0x60, 0x02, 0x00, 0x00, 0x63, 0x07, 0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0x00,
                0x5A, 0x47, 0x42, 0x44
            ]
        );
        assert_eq!(format!("{key:?}"), "DeveloperKey(hidden)");
    }

    #[test]
    fn a_bad_key_names_the_character_or_the_length() {
        assert_eq!(
            DeveloperKey::parse("01 23 4g 67 89 ab"),
            Err(KeyError::NotHex {
                position: 8,
                found: 'g'
            })
        );
        assert_eq!(
            DeveloperKey::parse("0x01 0x23"),
            Err(KeyError::Length { digits: 4 })
        );
        let missing = DeveloperKey::from_file(Path::new("/nonexistent/pegasus.key"));
        assert!(
            matches!(&missing, Err(KeyError::File { path, .. }) if path.contains("pegasus.key")),
            "{missing:?}"
        );
    }

    #[test]
    fn leds_encode_as_documented_and_decode_back() {
        let pattern = PegasusCommand::Leds(LedPattern {
            speed: 2,
            repeat: 0,
            brightness: 2,
            fields: vec![12, 28],
        });
        let bytes = pattern.encode();
        assert_eq!(bytes, [0x60, 0x07, 0x05, 2, 0, 2, 12, 28, 0x00]);
        let mut decoded = Vec::new();
        crate::wire::dgt::CommandDecoder::new().push(&bytes, &mut decoded);
        assert_eq!(PegasusCommand::from_command(&decoded[0]), Ok(pattern));
        assert_eq!(PegasusCommand::LedsOff.encode(), [0x60, 0x02, 0x00, 0x00]);
    }

    #[test]
    fn a_piece_code_is_reported_naming_frame_and_byte() {
        let mut bytes = PegasusMessage::Field {
            field: 3,
            occupied: true,
        }
        .encode();
        let mut dump = [0u8; 64];
        dump[10] = 0x05;
        bytes.extend(Message::BoardDump(dump).encode());
        let mut out = Vec::new();
        PegasusDecoder::new().push(&bytes, &mut out);
        assert_eq!(
            out[0],
            PegasusMessage::Field {
                field: 3,
                occupied: true
            }
        );
        let PegasusMessage::Invalid(e) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!((e.frame, e.byte, e.value), (2, 13, 5));
        assert_eq!(e.start, [0x86, 0x00, 0x43, 0, 0, 0, 0, 0]);
        let general = e.to_frame_error();
        assert_eq!(
            (general.protocol, general.offset, general.byte),
            ("pegasus", 13, 5)
        );
        assert!(
            e.to_string()
                .contains("frame 2 (board dump), byte 13: 0x05"),
            "{e}"
        );
    }
}
