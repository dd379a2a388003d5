//! The Chessnut protocol (Air, Air+, Pro), byte-exact and without I/O.
//!
//! Every frame is `[command] [length] [length bytes]`. After the host writes `21 01 00`
//! (real-time mode) the board sends its position `01 24` + 32 bytes of squares + 4 bytes
//! on every scan; `29 01 00` asks for the battery (`2A 02 …`), and `0A 08` + 8 bytes lights
//! squares.
//!
//! * [`Decoder`] reads what the board sends ([`Message`]); [`CommandDecoder`] reads what a
//!   host sends ([`Command`]), for the virtual board.
//!
//! Squares come two to a byte, the first in the low nibble, in the order h8, g8 … a8, h7 …
//! a1 ([`Message::Position`] keeps that wire order; [`field_of`] maps it to the DGT field
//! numbering, 0 = a8, used by the rest of the board layer).

use shakmaty::{Color, Piece, Role};

use super::frame_error::{FrameError, FrameParser};

const PROTOCOL: &str = "chessnut";

/// The first byte of a position frame.
pub const POSITION: u8 = 0x01;
/// The first byte of a battery reply.
pub const BATTERY: u8 = 0x2A;
/// The first byte of the acknowledgement of a mode change.
pub const MODE_ACK: u8 = 0x23;

/// One message from the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// The position (`01 24`): 64 squares in wire order, `None` where empty, then the four
    /// bytes the board sends after them (their meaning is not documented).
    Position {
        /// The squares, h8 first.
        squares: [Option<Piece>; 64],
        /// The trailing bytes.
        tail: [u8; 4],
    },
    /// The battery (`2A 02`).
    Battery {
        /// Charge in percent (0–100).
        percent: u8,
        /// On the charger.
        charging: bool,
    },
    /// A mode change was acknowledged (`23 01`), with the board's status byte.
    ModeAck(u8),
}

/// One command from a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `21 01 00`: send the position on every scan.
    RealTime,
    /// `21 01 01`: file-upload mode (stored games).
    FileUpload,
    /// `0A 08`: light the squares whose bits are set; byte 0 is rank 8, bit 7 the a-file.
    Leds([u8; 8]),
    /// `29 01 00`: send the battery.
    Battery,
    /// `0B 04`: beep.
    Beep {
        /// Frequency in Hz.
        hz: u16,
        /// Duration in milliseconds.
        ms: u16,
    },
}

/// The piece of a square nibble; `Err` for the undefined codes 13–15.
fn piece_of(nibble: u8) -> Result<Option<Piece>, ()> {
    use Role::*;
    let (color, role) = match nibble {
        0 => return Ok(None),
        1 => (Color::Black, Queen),
        2 => (Color::Black, King),
        3 => (Color::Black, Bishop),
        4 => (Color::Black, Pawn),
        5 => (Color::Black, Knight),
        6 => (Color::White, Rook),
        7 => (Color::White, Pawn),
        8 => (Color::Black, Rook),
        9 => (Color::White, Bishop),
        10 => (Color::White, Knight),
        11 => (Color::White, Queen),
        12 => (Color::White, King),
        _ => return Err(()),
    };
    Ok(Some(role.of(color)))
}

fn nibble_of(piece: Option<Piece>) -> u8 {
    let Some(p) = piece else { return 0 };
    match (p.color, p.role) {
        (Color::Black, Role::Queen) => 1,
        (Color::Black, Role::King) => 2,
        (Color::Black, Role::Bishop) => 3,
        (Color::Black, Role::Pawn) => 4,
        (Color::Black, Role::Knight) => 5,
        (Color::White, Role::Rook) => 6,
        (Color::White, Role::Pawn) => 7,
        (Color::Black, Role::Rook) => 8,
        (Color::White, Role::Bishop) => 9,
        (Color::White, Role::Knight) => 10,
        (Color::White, Role::Queen) => 11,
        (Color::White, Role::King) => 12,
    }
}

/// The DGT field number (0 = a8 … 63 = h1) of wire square `index` (0 = h8 … 63 = a1).
pub fn field_of(index: usize) -> u8 {
    let (row, from_h) = (index / 8 % 8, index % 8);
    (row * 8 + (7 - from_h)) as u8
}

/// The LED bytes that light the DGT fields `fields` (0 = a8).
pub fn led_bytes(fields: impl IntoIterator<Item = u8>) -> [u8; 8] {
    let mut bytes = [0; 8];
    for f in fields {
        bytes[usize::from(f & 63) / 8] |= 0x80 >> (f % 8);
    }
    bytes
}

/// The DGT fields lit by LED bytes (the inverse of [`led_bytes`]).
pub fn lit_fields(bytes: &[u8; 8]) -> Vec<u8> {
    (0..64u8)
        .filter(|&f| bytes[usize::from(f / 8)] & (0x80 >> (f % 8)) != 0)
        .collect()
}

impl Message {
    /// The wire bytes the board sends for this message.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Message::Position { squares, tail } => {
                let mut out = vec![POSITION, 0x24];
                out.extend(
                    squares
                        .chunks(2)
                        .map(|pair| nibble_of(pair[0]) | nibble_of(pair[1]) << 4),
                );
                out.extend(tail);
                out
            }
            Message::Battery { percent, charging } => vec![
                BATTERY,
                2,
                (percent & 0x7F) | u8::from(*charging) << 7,
                u8::from(*charging),
            ],
            Message::ModeAck(status) => vec![MODE_ACK, 1, *status],
        }
    }

    fn length(command: u8) -> Option<u8> {
        match command {
            POSITION => Some(0x24),
            BATTERY => Some(2),
            MODE_ACK => Some(1),
            _ => None,
        }
    }

    fn parse(frame: &[u8]) -> Result<Message, (usize, &'static str)> {
        let data = &frame[2..];
        Ok(match frame[0] {
            POSITION => {
                let mut squares = [None; 64];
                for (i, &byte) in data[..32].iter().enumerate() {
                    let undefined = (i + 2, "a square nibble above 12 names no piece");
                    squares[2 * i] = piece_of(byte & 15).map_err(|_| undefined)?;
                    squares[2 * i + 1] = piece_of(byte >> 4).map_err(|_| undefined)?;
                }
                let mut tail = [0; 4];
                tail.copy_from_slice(&data[32..]);
                Message::Position { squares, tail }
            }
            BATTERY => Message::Battery {
                // The documents disagree on where "charging" is: either is taken.
                percent: (data[0] & 0x7F).min(100),
                charging: data[0] & 0x80 != 0 || data[1] == 1,
            },
            _ => Message::ModeAck(data[0]),
        })
    }

    /// The pieces of a position in DGT field order (0 = a8); `None` for other messages.
    pub fn fields(&self) -> Option<[Option<Piece>; 64]> {
        let Message::Position { squares, .. } = self else {
            return None;
        };
        let mut fields = [None; 64];
        for (i, &p) in squares.iter().enumerate() {
            fields[usize::from(field_of(i))] = p;
        }
        Some(fields)
    }
}

impl Command {
    /// The wire bytes a host sends for this command.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Command::RealTime => vec![0x21, 1, 0],
            Command::FileUpload => vec![0x21, 1, 1],
            Command::Leds(bytes) => [&[0x0A, 8][..], bytes].concat(),
            Command::Battery => vec![0x29, 1, 0],
            Command::Beep { hz, ms } => {
                [&[0x0B, 4][..], &hz.to_be_bytes(), &ms.to_be_bytes()].concat()
            }
        }
    }

    fn length(command: u8) -> Option<u8> {
        match command {
            0x21 | 0x29 => Some(1),
            0x0A => Some(8),
            0x0B => Some(4),
            _ => None,
        }
    }

    fn parse(frame: &[u8]) -> Result<Command, (usize, &'static str)> {
        let data = &frame[2..];
        Ok(match frame[0] {
            0x21 => match data[0] {
                0 => Command::RealTime,
                1 => Command::FileUpload,
                _ => return Err((2, "mode is neither 0 (real time) nor 1 (file upload)")),
            },
            0x0A => Command::Leds(data.try_into().map_err(|_| (2, "short LED frame"))?),
            0x29 => Command::Battery,
            _ => Command::Beep {
                hz: u16::from_be_bytes([data[0], data[1]]),
                ms: u16::from_be_bytes([data[2], data[3]]),
            },
        })
    }
}

/// Splits `[command] [length] [data]` frames of known commands; an unknown command byte or a
/// wrong length drops one byte, so that the next frame is found again.
#[derive(Debug, Clone, Default)]
struct Framer {
    buf: Vec<u8>,
    frames: u64,
    skipped: u64,
    resyncing: bool,
}

impl Framer {
    /// Drops the bytes of the frame in progress (counted as skipped).
    fn restart(&mut self) {
        self.skipped += self.buf.len() as u64;
        self.buf.clear();
        self.resyncing = false;
    }

    fn push<M>(
        &mut self,
        bytes: &[u8],
        length: fn(u8) -> Option<u8>,
        parse: FrameParser<M>,
        out: &mut Vec<Result<M, FrameError>>,
    ) {
        for &b in bytes {
            self.buf.push(b);
            while let Some(&first) = self.buf.first() {
                let checked = match (length(first), self.buf.get(1)) {
                    (None, _) => Err((0, "no frame starts with this command byte")),
                    (Some(_), None) => break,
                    (Some(want), Some(&len)) if len != want => {
                        Err((1, "the length byte does not fit the command"))
                    }
                    (Some(want), Some(_)) if self.buf.len() < usize::from(want) + 2 => break,
                    (Some(want), Some(_)) => {
                        let total = usize::from(want) + 2;
                        parse(&self.buf[..total]).map(|m| (m, total))
                    }
                };
                match checked {
                    Ok((message, total)) => {
                        self.frames += 1;
                        self.resyncing = false;
                        self.buf.drain(..total);
                        out.push(Ok(message));
                    }
                    Err((offset, what)) => {
                        if !self.resyncing {
                            self.frames += 1;
                            self.resyncing = true;
                            out.push(Err(FrameError::new(
                                PROTOCOL,
                                self.frames,
                                &self.buf,
                                offset,
                                what,
                            )));
                        }
                        self.skipped += 1;
                        self.buf.remove(0);
                    }
                }
            }
        }
    }
}

/// Decodes what a Chessnut board sends, fed in chunks of any size. Memory is bounded by one
/// frame (38 bytes).
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    framer: Framer,
}

impl Decoder {
    /// A decoder waiting for the first frame.
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Feeds `bytes`, appending each message (or the reason bytes were dropped) to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<Message, FrameError>>) {
        self.framer
            .push(bytes, Message::length, Message::parse, out);
    }

    /// The link to the board was lost: the frame in progress is dropped, since the bytes
    /// that come next belong to a later one (the board sent on while they were lost), and one
    /// spliced from both would picture no moment of the board.
    pub fn restart(&mut self) {
        self.framer.restart();
    }

    /// Bytes dropped so far because they did not make a valid frame.
    pub fn skipped_bytes(&self) -> u64 {
        self.framer.skipped
    }
}

/// Decodes what a host sends to a Chessnut board (the virtual board's side).
#[derive(Debug, Clone, Default)]
pub struct CommandDecoder {
    framer: Framer,
}

impl CommandDecoder {
    /// A decoder waiting for the first command.
    pub fn new() -> Self {
        CommandDecoder::default()
    }

    /// Feeds `bytes`, appending each command (or the reason bytes were dropped) to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<Command, FrameError>>) {
        self.framer
            .push(bytes, Command::length, Command::parse, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Board, File, Rank, Square};

    /// The start position as the board sends it (the vector of picochess's parser tests).
    const START: &str = "01 24 58 23 31 85 44 44 44 44 00 00 00 00 00 00 00 00 00 00 00 00 00 \
        00 00 00 77 77 77 77 A6 C9 9B 6A FF FF FF FF";

    fn hex(text: &str) -> Vec<u8> {
        text.split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).unwrap())
            .collect()
    }

    #[test]
    fn the_documented_start_frame_is_the_start_position() {
        let mut out = Vec::new();
        Decoder::new().push(&hex(START), &mut out);
        let fields = out[0].as_ref().unwrap().fields().unwrap();
        let normal = Board::new();
        for (field, piece) in fields.iter().enumerate() {
            // Field 0 is a8, as the board lies at the start.
            let sq =
                Square::from_coords(File::new(field as u32 % 8), Rank::new(7 - field as u32 / 8));
            assert_eq!(*piece, normal.piece_at(sq), "field {field}");
        }
    }

    #[test]
    fn battery_reads_either_documented_layout() {
        let mut out = Vec::new();
        Decoder::new().push(&hex("2A 02 64 01 2A 02 B2 00"), &mut out);
        assert_eq!(
            out,
            [
                Ok(Message::Battery {
                    percent: 100,
                    charging: true
                }),
                Ok(Message::Battery {
                    percent: 50,
                    charging: true
                }),
            ]
        );
    }

    #[test]
    fn an_undefined_nibble_names_its_byte() {
        let mut bytes = hex(START);
        bytes[7] = 0xD4;
        let mut out = Vec::new();
        Decoder::new().push(&bytes, &mut out);
        let err = out[0].as_ref().unwrap_err();
        assert_eq!((err.frame, err.offset, err.byte), (1, 7, 0xD4));
    }

    #[test]
    fn led_bit_seven_is_the_a_file() {
        assert_eq!(led_bytes([0, 63]), [0x80, 0, 0, 0, 0, 0, 0, 0x01]);
        assert_eq!(lit_fields(&led_bytes([5, 52])), [5, 52]);
    }
}
