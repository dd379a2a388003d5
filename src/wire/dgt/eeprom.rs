//! Records of the board's EEPROM move log (EE_MOVES, 0x8F; bus replies 0x85/0x86).

use serde::Serialize;

use super::clock::ClockSide;

/// One record of the EEPROM log. Decoding is lossless: bytes that do not form a known
/// record are kept one by one as [`EepromRecord::Unknown`], so encoding the records gives
/// back the original bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum EepromRecord {
    /// A square changed (`0x40..=0x5F`, then the field).
    FieldChange {
        /// The field 0..=63 in DGT order.
        field: u8,
        /// The new piece code (0 = emptied).
        piece: u8,
        /// Set when the change came less than ~250 ms after the previous one.
        quick: bool,
    },
    /// The time of the side that was halted when the lever changed (`0x60..=0x69` right,
    /// `0x70..=0x79` left, then minutes and seconds).
    ClockTime {
        /// The halted side.
        side: ClockSide,
        /// Hours 0..=9.
        hours: u8,
        /// Minutes 0..=79 (three bits of tens, four of units).
        minutes: u8,
        /// Seconds 0..=79.
        seconds: u8,
    },
    /// The board was powered up (0x6A).
    PowerUp,
    /// End of the log (0x6B).
    EndOfLog,
    /// Sixteen pieces on the four outer rows, but not the standard start (0x6C).
    FourRows,
    /// The board became empty (0x6D).
    EmptyBoard,
    /// A previous download of the log happened here (0x6E).
    Downloaded,
    /// The standard start position was set up (0x6F).
    BeginPosition,
    /// The start position was set up with the board turned round (0x7A).
    BeginPositionRotated,
    /// A bus-mode start-of-game tag (0x7B).
    StartTag,
    /// The watchdog reset the board (0x7C).
    WatchdogAction,
    /// Reserved for future use (0x7D, 0x7E).
    Reserved(u8),
    /// No operation (0x7F).
    Nop,
    /// No operation (0x00).
    Nop2,
    /// A byte that does not start a known record (or a record cut short).
    Unknown(u8),
}

impl EepromRecord {
    /// Parses a whole log.
    pub fn parse_all(data: &[u8]) -> Vec<EepromRecord> {
        let mut records = Vec::new();
        let mut rest = data;
        while !rest.is_empty() {
            let (record, used) = parse_one(rest);
            records.push(record);
            rest = &rest[used..];
        }
        records
    }

    /// Appends the bytes of this record.
    pub fn encode_into(&self, out: &mut Vec<u8>) {
        match *self {
            EepromRecord::FieldChange {
                field,
                piece,
                quick,
            } => out.extend([0x40 | (u8::from(quick) << 4) | (piece & 0x0F), field & 0x3F]),
            EepromRecord::ClockTime {
                side,
                hours,
                minutes,
                seconds,
            } => {
                let base = if side == ClockSide::Left { 0x70 } else { 0x60 };
                out.extend([base | hours.min(9), to_digits(minutes), to_digits(seconds)]);
            }
            EepromRecord::PowerUp => out.push(0x6A),
            EepromRecord::EndOfLog => out.push(0x6B),
            EepromRecord::FourRows => out.push(0x6C),
            EepromRecord::EmptyBoard => out.push(0x6D),
            EepromRecord::Downloaded => out.push(0x6E),
            EepromRecord::BeginPosition => out.push(0x6F),
            EepromRecord::BeginPositionRotated => out.push(0x7A),
            EepromRecord::StartTag => out.push(0x7B),
            EepromRecord::WatchdogAction => out.push(0x7C),
            EepromRecord::Reserved(b) | EepromRecord::Unknown(b) => out.push(b & 0x7F),
            EepromRecord::Nop => out.push(0x7F),
            EepromRecord::Nop2 => out.push(0x00),
        }
    }
}

fn from_digits(b: u8) -> Option<u8> {
    let (tens, units) = ((b >> 4) & 0x07, b & 0x0F);
    (b < 0x80 && units <= 9).then_some(tens * 10 + units)
}

fn to_digits(v: u8) -> u8 {
    let v = v.min(79);
    ((v / 10) << 4) | (v % 10)
}

fn parse_one(d: &[u8]) -> (EepromRecord, usize) {
    let b = d[0];
    let unknown = (EepromRecord::Unknown(b), 1);
    match b {
        0x40..=0x5F => match d.get(1) {
            Some(&field) if field < 64 => (
                EepromRecord::FieldChange {
                    field,
                    piece: b & 0x0F,
                    quick: b & 0x10 != 0,
                },
                2,
            ),
            _ => unknown,
        },
        0x60..=0x69 | 0x70..=0x79 => {
            let digits = (d.get(1).and_then(|&m| from_digits(m)))
                .zip(d.get(2).and_then(|&s| from_digits(s)));
            match digits {
                Some((minutes, seconds)) => (
                    EepromRecord::ClockTime {
                        side: if b & 0x10 != 0 {
                            ClockSide::Left
                        } else {
                            ClockSide::Right
                        },
                        hours: b & 0x0F,
                        minutes,
                        seconds,
                    },
                    3,
                ),
                None => unknown,
            }
        }
        0x6A => (EepromRecord::PowerUp, 1),
        0x6B => (EepromRecord::EndOfLog, 1),
        0x6C => (EepromRecord::FourRows, 1),
        0x6D => (EepromRecord::EmptyBoard, 1),
        0x6E => (EepromRecord::Downloaded, 1),
        0x6F => (EepromRecord::BeginPosition, 1),
        0x7A => (EepromRecord::BeginPositionRotated, 1),
        0x7B => (EepromRecord::StartTag, 1),
        0x7C => (EepromRecord::WatchdogAction, 1),
        0x7D | 0x7E => (EepromRecord::Reserved(b), 1),
        0x7F => (EepromRecord::Nop, 1),
        0x00 => (EepromRecord::Nop2, 1),
        _ => unknown,
    }
}
