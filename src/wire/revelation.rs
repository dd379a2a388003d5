//! The Phoenix Revelation II's LED command, byte-exact and without I/O.
//!
//! A Revelation II speaks the DGT board protocol (`super::dgt`) and adds one command,
//! `60 04 pattern start end 00` (`protocols`, DGT variants: Revelation II): pattern 0 turns
//! the LEDs of fields `start`..=`end` off, 1 on (DGT field numbering, 0 = a8 … 63 = h1);
//! firmware after 3.21 also takes pattern 0 with start 0x40 for "all off", and pattern 2 as
//! a setting (`02 01 b`: LEDs go off by themselves when a piece moves; `02 02 b`: the board
//! detects its own rotation). It is told apart from a DGT board by its long serial number,
//! which begins with its firmware version (`3.25…`) where a DGT board's holds digits only.

use super::dgt::Command;

/// The start field that means "every LED" in an off command.
const ALL_FIELDS: u8 = 0x40;

/// A Revelation II LED command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RevelationLeds {
    /// The LEDs of fields `start`..=`end` on or off.
    Fields {
        /// On (pattern 1) or off (pattern 0).
        on: bool,
        /// First field (0 to 63).
        start: u8,
        /// Last field (0 to 63).
        end: u8,
    },
    /// Every LED off (firmware after 3.21).
    AllOff,
    /// LEDs go off by themselves when a piece moves (setting 1).
    AutoOff(bool),
    /// The board detects its rotation itself (setting 2).
    AutoReverse(bool),
}

/// An LED command a Revelation II does not take, naming the byte.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Revelation II LED command {bytes:02x?}: byte {byte} ({value:#04x}) {why}")]
pub struct LedError {
    /// The whole command.
    pub bytes: Vec<u8>,
    /// The offending byte's offset in the command (0 = 0x60).
    pub byte: usize,
    /// Its value.
    pub value: u8,
    /// What is wrong.
    pub why: &'static str,
}

impl RevelationLeds {
    /// The three bytes between the size and the terminator.
    fn payload(self) -> [u8; 3] {
        match self {
            RevelationLeds::Fields { on, start, end } => [u8::from(on), start & 63, end & 63],
            RevelationLeds::AllOff => [0, ALL_FIELDS, ALL_FIELDS],
            RevelationLeds::AutoOff(b) => [2, 1, u8::from(b)],
            RevelationLeds::AutoReverse(b) => [2, 2, u8::from(b)],
        }
    }

    /// The DGT command carrying it.
    pub fn to_command(self) -> Command {
        Command::Leds(self.payload().to_vec())
    }

    /// The bytes to send: `60 04 pattern start end 00`.
    pub fn encode(self) -> Vec<u8> {
        self.to_command().encode()
    }

    /// The LED command in a decoded DGT LED command's payload (the board side).
    pub fn decode(payload: &[u8]) -> Result<Self, LedError> {
        let error = |byte: usize, why| {
            let bytes = Command::Leds(payload.to_vec()).encode();
            let value = bytes.get(byte).copied().unwrap_or(0);
            Err(LedError {
                bytes,
                byte,
                value,
                why,
            })
        };
        // Offsets in the whole command: 0x60, size, then the payload.
        let &[pattern, start, end] = payload else {
            return error(1, "is not the size 4 of a Revelation II LED command");
        };
        match (pattern, start, end) {
            (0, ALL_FIELDS, ALL_FIELDS) => Ok(RevelationLeds::AllOff),
            (0 | 1, s, _) if s > 63 => error(3, "is not a field (0 to 63)"),
            (0 | 1, _, e) if e > 63 => error(4, "is not a field (0 to 63)"),
            (0 | 1, start, end) => Ok(RevelationLeds::Fields {
                on: pattern == 1,
                start,
                end,
            }),
            (2, 1, b @ (0 | 1)) => Ok(RevelationLeds::AutoOff(b == 1)),
            (2, 2, b @ (0 | 1)) => Ok(RevelationLeds::AutoReverse(b == 1)),
            (2, 1 | 2, _) => error(4, "is not a setting's value (0 or 1)"),
            (2, _, _) => error(3, "is not a setting (1 auto-off, 2 auto-reverse)"),
            _ => error(2, "is not a pattern (0 off, 1 on, 2 setting)"),
        }
    }
}

/// True when a long serial number (DGT 0x55 → 0xA2) is a Revelation II's: it begins with a
/// firmware version, a digit and a dot ("3.250010001"), where a DGT board's is all digits.
pub fn is_revelation_long_serial(long_serial: &str) -> bool {
    let b = long_serial.as_bytes();
    b.len() >= 3 && b[0].is_ascii_digit() && b[1] == b'.' && b[2].is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_the_documented_bytes() {
        let show = RevelationLeds::Fields {
            on: true,
            start: 12,
            end: 28,
        };
        assert_eq!(show.encode(), [0x60, 0x04, 0x01, 12, 28, 0x00]);
        assert_eq!(
            RevelationLeds::AllOff.encode(),
            [0x60, 0x04, 0x00, 0x40, 0x40, 0x00]
        );
        assert_eq!(
            RevelationLeds::AutoReverse(true).encode(),
            [0x60, 0x04, 0x02, 0x02, 0x01, 0x00]
        );
    }

    #[test]
    fn a_bad_command_names_its_byte() {
        let e = RevelationLeds::decode(&[1, 70, 3]).unwrap_err();
        assert_eq!((e.byte, e.value), (3, 70));
        assert!(e.to_string().contains("byte 3 (0x46)"), "{e}");
        let e = RevelationLeds::decode(&[7, 0, 0]).unwrap_err();
        assert_eq!(e.byte, 2);
        let e = RevelationLeds::decode(&[5, 2, 2, 2, 12]).unwrap_err();
        assert_eq!((e.byte, e.value), (1, 6));
    }

    #[test]
    fn a_revelation_is_told_by_its_long_serial() {
        assert!(is_revelation_long_serial("3.250010001"));
        assert!(!is_revelation_long_serial("0000024587"));
        assert!(!is_revelation_long_serial("3"));
    }
}
