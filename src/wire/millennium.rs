//! The Millennium ChessLink protocol (Exclusive, Performance, eONE), byte-exact and without
//! I/O.
//!
//! Every message is printable ASCII followed by two upper-case hex digits of the XOR of all
//! its 7-bit characters (the "block check"), and every byte carries odd parity in bit 7 (the
//! line is 38400 baud 7O1; opening it 8N1 and setting bit 7 here puts the same bits on the
//! wire). The board acts only on commands whose parity and block check are right.
//!
//! * [`Decoder`] reads what the board sends ([`Message`]): status snapshots `s` (64 piece
//!   letters), the version `v`, register replies `r`/`w`, LED acknowledgements `l`/`x`.
//! * [`CommandDecoder`] reads what a host sends ([`Command`]), for the virtual board.
//!
//! Squares are in wire order: index 0 is the first letter of `s`, which is a8 (then b8 … h8,
//! a7 … h1) with the board the way round its document draws it, and h1 turned round: the
//! same numbering as a DGT board's fields, so the orientation is found the same way.

use shakmaty::Piece;

use super::frame_error::{FrameError, FrameParser};

/// The protocol's name in errors.
const PROTOCOL: &str = "millennium";

/// Register 0x00: serial set-up (bit 0 set turns the block check off).
pub const REG_SERIAL_SETUP: u8 = 0x00;
/// Register 0x01: scan time in 2.048 ms units (default 20, about 24 scans a second; minimum
/// 15).
pub const REG_SCAN_TIME: u8 = 0x01;
/// Register 0x02: automatic status reports (0 every scan, 1 off, 2 timed, 3 on change, 4–7
/// on change after 2–5 equal scans).
pub const REG_AUTO_REPORT: u8 = 0x02;
/// [`REG_AUTO_REPORT`]'s value for a status report after each scan that found a change.
pub const REPORT_ON_CHANGE: u8 = 3;
/// Register 0x03: report period of timed reports, in 4.096 ms units.
pub const REG_REPORT_PERIOD: u8 = 0x03;
/// Register 0x04: LED brightness (0 dim … 15 and above full).
pub const REG_LED_BRIGHTNESS: u8 = 0x04;

/// The scan time register's unit in microseconds.
pub const SCAN_TIME_UNIT_US: u64 = 2048;
/// The scan time register's default value (about 24 scans a second).
pub const DEFAULT_SCAN_TIME: u8 = 20;
/// The number of LEDs: one at each corner of the 64 squares, a 9 × 9 grid.
pub const LED_COUNT: usize = 81;

/// One message from the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// A status report `s`: the 64 squares in wire order, `None` where empty.
    Status([Option<Piece>; 64]),
    /// The LEDs were set (`l`).
    LedsSet,
    /// The LEDs were switched off (`x`).
    LedsOff,
    /// The firmware version `v` (major 0 Exclusive, 1 Performance, 2 eONE).
    Version {
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// A register was written (`w`).
    Written {
        /// Register address.
        address: u8,
        /// The value now in it.
        value: u8,
    },
    /// A register was read (`r`).
    Register {
        /// Register address.
        address: u8,
        /// Its value.
        value: u8,
    },
}

/// One command from a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `S`: send a status report.
    Status,
    /// `L`: light the LEDs, each an 8-slot on/off pattern played bit 7 first.
    Leds {
        /// The length of one slot in 4.096 ms units.
        slot_time: u8,
        /// The 81 patterns, LED 1 (the a8 corner) first, column by column from the a-file.
        patterns: Box<[u8; LED_COUNT]>,
    },
    /// `X`: all LEDs off.
    LedsOff,
    /// `T`: reset (about 3 s; no reply).
    Reset,
    /// `V`: send the version.
    Version,
    /// `W`: write a register.
    Write {
        /// Register address.
        address: u8,
        /// Value.
        value: u8,
    },
    /// `R`: read a register.
    Read {
        /// Register address.
        address: u8,
    },
}

/// `byte` with bit 7 set or cleared so that the eight bits hold an odd number of ones.
pub fn with_odd_parity(byte: u8) -> u8 {
    let low = byte & 0x7F;
    if low.count_ones().is_multiple_of(2) {
        low | 0x80
    } else {
        low
    }
}

/// The XOR of the 7-bit characters (the block check).
pub fn block_check(chars: &[u8]) -> u8 {
    chars.iter().fold(0, |acc, c| acc ^ (c & 0x7F))
}

/// The wire bytes of `body` (ASCII): the body, its block check in two hex digits, odd parity
/// on every byte.
fn seal(mut body: Vec<u8>) -> Vec<u8> {
    let check = block_check(&body);
    push_hex(&mut body, check);
    body.into_iter().map(with_odd_parity).collect()
}

fn push_hex(out: &mut Vec<u8>, value: u8) {
    const DIGITS: &[u8; 16] = b"0123456789ABCDEF";
    out.push(DIGITS[usize::from(value >> 4)]);
    out.push(DIGITS[usize::from(value & 15)]);
}

fn hex_digit(c: u8) -> Option<u8> {
    char::from(c).to_digit(16).map(|d| d as u8)
}

/// The byte written as two hex digits at `at` of `chars`, or the offset of the bad digit.
fn hex_at(chars: &[u8], at: usize) -> Result<u8, (usize, &'static str)> {
    let digit = |i: usize| hex_digit(chars[i]).ok_or((i, "not a hex digit"));
    Ok(digit(at)? << 4 | digit(at + 1)?)
}

impl Message {
    /// The wire bytes the board sends for this message.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(67);
        match self {
            Message::Status(squares) => {
                body.push(b's');
                body.extend(squares.iter().map(|p| p.map_or(b'.', |p| p.char() as u8)));
            }
            Message::LedsSet => body.push(b'l'),
            Message::LedsOff => body.push(b'x'),
            Message::Version { major, minor } => {
                body.push(b'v');
                push_hex(&mut body, *major);
                push_hex(&mut body, *minor);
            }
            Message::Written { address, value } | Message::Register { address, value } => {
                body.push(if matches!(self, Message::Written { .. }) {
                    b'w'
                } else {
                    b'r'
                });
                push_hex(&mut body, *address);
                push_hex(&mut body, *value);
            }
        }
        seal(body)
    }

    /// The length in bytes of a message starting with `letter` (block check included).
    fn length(letter: u8) -> Option<usize> {
        match letter {
            b's' => Some(67),
            b'l' | b'x' => Some(3),
            b'v' | b'w' | b'r' => Some(7),
            _ => None,
        }
    }

    fn parse(chars: &[u8]) -> Result<Message, (usize, &'static str)> {
        Ok(match chars[0] {
            b's' => {
                let mut squares = [None; 64];
                for (i, (slot, &c)) in squares.iter_mut().zip(&chars[1..65]).enumerate() {
                    if c != b'.' {
                        *slot = Some(
                            Piece::from_char(char::from(c))
                                .ok_or((i + 1, "not a piece letter or '.'"))?,
                        );
                    }
                }
                Message::Status(squares)
            }
            b'l' => Message::LedsSet,
            b'x' => Message::LedsOff,
            letter => {
                let (a, b) = (hex_at(chars, 1)?, hex_at(chars, 3)?);
                match letter {
                    b'v' => Message::Version { major: a, minor: b },
                    b'w' => Message::Written {
                        address: a,
                        value: b,
                    },
                    _ => Message::Register {
                        address: a,
                        value: b,
                    },
                }
            }
        })
    }
}

impl Command {
    /// The wire bytes a host sends for this command.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::with_capacity(167);
        match self {
            Command::Status => body.push(b'S'),
            Command::Leds {
                slot_time,
                patterns,
            } => {
                body.push(b'L');
                push_hex(&mut body, *slot_time);
                for &p in patterns.iter() {
                    push_hex(&mut body, p);
                }
            }
            Command::LedsOff => body.push(b'X'),
            Command::Reset => body.push(b'T'),
            Command::Version => body.push(b'V'),
            Command::Write { address, value } => {
                body.push(b'W');
                push_hex(&mut body, *address);
                push_hex(&mut body, *value);
            }
            Command::Read { address } => {
                body.push(b'R');
                push_hex(&mut body, *address);
            }
        }
        seal(body)
    }

    fn length(letter: u8) -> Option<usize> {
        match letter {
            b'S' | b'X' | b'T' | b'V' => Some(3),
            b'L' => Some(3 + 2 * LED_COUNT + 2),
            b'W' => Some(7),
            b'R' => Some(5),
            _ => None,
        }
    }

    fn parse(chars: &[u8]) -> Result<Command, (usize, &'static str)> {
        Ok(match chars[0] {
            b'S' => Command::Status,
            b'X' => Command::LedsOff,
            b'T' => Command::Reset,
            b'V' => Command::Version,
            b'L' => {
                let mut patterns = Box::new([0; LED_COUNT]);
                for (i, p) in patterns.iter_mut().enumerate() {
                    *p = hex_at(chars, 3 + 2 * i)?;
                }
                Command::Leds {
                    slot_time: hex_at(chars, 1)?,
                    patterns,
                }
            }
            b'W' => Command::Write {
                address: hex_at(chars, 1)?,
                value: hex_at(chars, 3)?,
            },
            _ => Command::Read {
                address: hex_at(chars, 1)?,
            },
        })
    }
}

/// The LED patterns that light the squares `fields` (wire order, 0 = a8) with `pattern`:
/// each square by its four corners; every other LED off.
pub fn square_leds(fields: impl IntoIterator<Item = u8>, pattern: u8) -> Box<[u8; LED_COUNT]> {
    let mut leds = Box::new([0; LED_COUNT]);
    for field in fields {
        let (row, col) = (usize::from(field & 63) / 8, usize::from(field & 63) % 8);
        for (c, r) in [
            (col, row),
            (col + 1, row),
            (col, row + 1),
            (col + 1, row + 1),
        ] {
            leds[c * 9 + r] = pattern;
        }
    }
    leds
}

/// Splits a stream into frames by their first letter and length, checks parity and the block
/// check, and parses them. A frame that fails is dropped from its first byte only, so that a
/// lost byte costs one frame: the next one is found again.
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
        length: fn(u8) -> Option<usize>,
        parse: FrameParser<M>,
        out: &mut Vec<Result<M, FrameError>>,
    ) {
        for &b in bytes {
            self.buf.push(b);
            self.drain(length, parse, out);
        }
    }

    fn drain<M>(
        &mut self,
        length: fn(u8) -> Option<usize>,
        parse: FrameParser<M>,
        out: &mut Vec<Result<M, FrameError>>,
    ) {
        while let Some(&first) = self.buf.first() {
            // A byte with even parity ends the frame at once, whatever length its first
            // letter promised: a damaged first letter must not hold back the frames after it.
            let checked = match length(first & 0x7F) {
                None => Err((0, "no message starts with this letter")),
                Some(len) => match even_parity_at(&self.buf[..len.min(self.buf.len())]) {
                    Some(at) => Err(at),
                    None if self.buf.len() < len => return,
                    None => check(&self.buf[..len], parse).map(|m| (m, len)),
                },
            };
            match checked {
                Ok((message, len)) => {
                    self.frames += 1;
                    self.resyncing = false;
                    self.buf.drain(..len);
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

/// The first byte of `bytes` with even parity, as a frame error.
fn even_parity_at(bytes: &[u8]) -> Option<(usize, &'static str)> {
    let i = bytes
        .iter()
        .position(|b| b.count_ones().is_multiple_of(2))?;
    Some((
        i,
        "even parity (the line is 7O1: every byte has odd parity)",
    ))
}

/// Checks the block check of a whole frame (its parity already checked) and parses its
/// characters.
fn check<M>(frame: &[u8], parse: FrameParser<M>) -> Result<M, (usize, &'static str)> {
    let chars: Vec<u8> = frame.iter().map(|b| b & 0x7F).collect();
    let body = chars.len() - 2;
    let sent = hex_at(&chars, body)?;
    if sent != block_check(&chars[..body]) {
        return Err((body, "block check does not match the XOR of the message"));
    }
    parse(&chars[..body])
}

/// Decodes what a Millennium board sends, fed in chunks of any size. Memory is bounded by one
/// frame (67 bytes).
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    framer: Framer,
}

impl Decoder {
    /// A decoder waiting for the first message.
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Feeds `bytes`, appending each message (or the reason a frame was dropped) to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<Message, FrameError>>) {
        self.framer
            .push(bytes, Message::length, Message::parse, out);
    }

    /// The link to the board was lost: the message in progress is dropped, since the bytes
    /// that come next belong to a later one (the board sent on while they were lost), and one
    /// spliced from both would picture no moment of the board.
    pub fn restart(&mut self) {
        self.framer.restart();
    }

    /// Bytes dropped so far because they did not make a valid message.
    pub fn skipped_bytes(&self) -> u64 {
        self.framer.skipped
    }
}

/// Decodes what a host sends to a Millennium board (the virtual board's side).
#[derive(Debug, Clone, Default)]
pub struct CommandDecoder {
    framer: Framer,
}

impl CommandDecoder {
    /// A decoder waiting for the first command.
    pub fn new() -> Self {
        CommandDecoder::default()
    }

    /// Feeds `bytes`, appending each command (or the reason a frame was dropped) to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<Command, FrameError>>) {
        self.framer
            .push(bytes, Command::length, Command::parse, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_request_is_v56_with_odd_parity() {
        let bytes = Command::Version.encode();
        let chars: Vec<u8> = bytes.iter().map(|b| b & 0x7F).collect();
        assert_eq!(chars, b"V56");
        assert!(bytes.iter().all(|b| b.count_ones() % 2 == 1));
        assert_eq!(
            Command::Status
                .encode()
                .iter()
                .map(|b| b & 0x7F)
                .collect::<Vec<_>>(),
            b"S53"
        );
    }

    #[test]
    fn a_wrong_block_check_names_its_byte_and_the_next_frame_is_read() {
        let mut bytes = Message::Version { major: 2, minor: 7 }.encode();
        bytes[5] = with_odd_parity(b'0');
        bytes.extend(Message::LedsOff.encode());
        let mut out = Vec::new();
        Decoder::new().push(&bytes, &mut out);
        let err = out[0].as_ref().unwrap_err();
        assert_eq!((err.frame, err.offset), (1, 5));
        assert!(err.to_string().contains("block check"), "{err}");
        assert_eq!(out[1..], [Ok(Message::LedsOff)]);
    }

    #[test]
    fn corner_leds_of_a8_and_h1() {
        let leds = square_leds([0, 63], 0xFF);
        let lit: Vec<usize> = (0..LED_COUNT).filter(|&i| leds[i] != 0).collect();
        assert_eq!(lit, [0, 1, 9, 10, 70, 71, 79, 80]);
    }
}
