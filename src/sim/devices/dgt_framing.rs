//! DGT's framing, board side (protocols 1.2–1.6), shared by DGT boards and the Pegasus:
//! messages with a 3-byte header, host commands of one byte or with a size byte, and piece
//! codes.

use shakmaty::{Color, Role};

use super::arrangement::{Man, Shape};
use crate::board::MagicPiece;

/// Message ids as they go on the wire (the id with the MSB set), protocols 1.4.
pub const BOARD_DUMP: u8 = 0x86;
pub const BWTIME: u8 = 0x8D;
pub const FIELD_UPDATE: u8 = 0x8E;
pub const EE_MOVES: u8 = 0x8F;
pub const BUSADRES: u8 = 0x90;
pub const SERIALNR: u8 = 0x91;
pub const TRADEMARK: u8 = 0x92;
pub const VERSION: u8 = 0x93;
pub const HARDWARE_VERSION: u8 = 0x96;
pub const BATTERY_STATUS: u8 = 0xA0;
pub const LONG_SERIALNR: u8 = 0xA2;

/// A message: the id, the total length (header included) as two 7-bit bytes, the data.
/// Data bytes keep their MSB clear.
pub fn message(id: u8, data: &[u8]) -> Vec<u8> {
    let total = data.len() + 3;
    let mut out = Vec::with_capacity(total);
    out.push(id | 0x80);
    out.push(((total >> 7) & 0x7F) as u8);
    out.push((total & 0x7F) as u8);
    out.extend(data.iter().map(|b| b & 0x7F));
    out
}

/// A field update: the field and the new piece code (0 = emptied).
pub fn field_update(field: usize, code: u8) -> Vec<u8> {
    message(FIELD_UPDATE, &[field as u8, code])
}

/// A chess piece's code (protocols 1.6: the order is P R N B K Q, White 1–6, Black 7–12)
/// and the result pieces' 13–15.
pub fn piece_code(man: Option<Man>) -> u8 {
    let Some(man) = man else { return 0 };
    let piece = match man.shape {
        Shape::Result(MagicPiece::Draw) => return 0x0D,
        Shape::Result(MagicPiece::WhiteWins) => return 0x0E,
        Shape::Result(MagicPiece::BlackWins) => return 0x0F,
        Shape::Piece(piece) => piece,
    };
    let rank = match piece.role {
        Role::Pawn => 1,
        Role::Rook => 2,
        Role::Knight => 3,
        Role::Bishop => 4,
        Role::King => 5,
        Role::Queen => 6,
    };
    match piece.color {
        Color::White => rank,
        Color::Black => rank + 6,
    }
}

/// A command from the host (protocols 1.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostCommand {
    /// A one-byte command, 0x40–0x5F.
    Single(u8),
    /// A command with data (0x2B clock, 0x2C I2C clock, 0x60 LEDs, 0x63 developer key):
    /// its first byte and the bytes after the size byte, the terminating zero included.
    Data(u8, Vec<u8>),
}

/// The first bytes of the commands that carry a size byte and data.
const DATA_COMMANDS: [u8; 4] = [0x2B, 0x2C, 0x60, 0x63];

/// Reads host commands from bytes arriving in any pieces. Bytes that start no command are
/// skipped; a bus-mode frame (MSB set, four bytes, protocols 1.14) is skipped whole.
#[derive(Debug, Clone, Default)]
pub struct CommandReader {
    pending: Vec<u8>,
}

impl CommandReader {
    /// Feeds `bytes`, appending the commands they complete to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<HostCommand>) {
        for &b in bytes {
            let Some(&first) = self.pending.first() else {
                match b {
                    0x40..=0x5F => out.push(HostCommand::Single(b)),
                    _ if DATA_COMMANDS.contains(&b) || b & 0x80 != 0 => self.pending.push(b),
                    _ => {}
                }
                continue;
            };
            self.pending.push(b);
            let whole = if first & 0x80 != 0 {
                self.pending.len() == 4
            } else {
                self.pending.len() >= 2 + usize::from(self.pending[1])
            };
            if whole {
                if first & 0x80 == 0 && self.pending[1] > 0 {
                    out.push(HostCommand::Data(first, self.pending[2..].to_vec()));
                }
                self.pending.clear();
            }
        }
    }

    /// Forgets a command cut short (the link closed).
    pub fn clear(&mut self) {
        self.pending.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_header_holds_the_total_length_in_two_seven_bit_bytes() {
        assert_eq!(field_update(52, 0), [0x8E, 0x00, 0x05, 0x34, 0x00]);
        let log = message(EE_MOVES, &[0; 0x1F00]);
        assert_eq!(&log[..3], &[0x8F, 0x3E, 0x03], "0x1F03 bytes");
        assert_eq!(log.len(), 0x1F03);
    }

    #[test]
    fn commands_are_read_across_chunks_and_bus_frames_and_noise_are_skipped() {
        let mut reader = CommandReader::default();
        let mut out = Vec::new();
        reader.push(&[0x12, 0x40, 0x2B, 0x03, 0x03], &mut out);
        reader.push(&[0x09, 0x00, 0x81, 0x10, 0x06, 0x17, 0x42], &mut out);
        assert_eq!(
            out,
            [
                HostCommand::Single(0x40),
                HostCommand::Data(0x2B, vec![0x03, 0x09, 0x00]),
                HostCommand::Single(0x42),
            ]
        );
    }
}
