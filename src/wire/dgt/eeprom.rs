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

/// Size of the board's EEPROM ring as dumped by EE_MOVES (data bytes of one 0x8F message).
pub const EEPROM_LOG_BYTES: usize = 0x1F00;

/// Why decoding of a log stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "end", rename_all = "snake_case")]
pub enum LogEnd {
    /// The end-of-log tag (0x6B) was reached: the log is complete.
    EndOfLog,
    /// The bytes ran out before the end-of-log tag, or inside a record.
    Truncated {
        /// Offset in the dump where decoding stopped.
        offset: usize,
    },
    /// A byte that starts no record the documents describe (or a record with impossible
    /// contents): nothing after it is trusted, since the record boundaries are lost.
    Unknown {
        /// Offset of the byte in the dump.
        offset: usize,
        /// The byte.
        byte: u8,
    },
}

impl LogEnd {
    /// True when the whole log was read.
    pub fn complete(self) -> bool {
        self == LogEnd::EndOfLog
    }

    /// Why the log is incomplete, in words (empty reason for a complete log).
    pub fn reason(self) -> String {
        match self {
            LogEnd::EndOfLog => String::new(),
            LogEnd::Truncated { offset } => {
                format!("the log is cut short at byte {offset} (no end-of-log tag)")
            }
            LogEnd::Unknown { offset, byte } => format!(
                "byte {offset} of the log (0x{byte:02X}) starts no known record; the rest is \
                 not trusted"
            ),
        }
    }
}

/// One record of a decoded log and where it starts in the dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct LogEntry {
    /// Offset of the record's first byte in the dump.
    pub offset: usize,
    /// The record (never [`EepromRecord::Unknown`] nor a no-operation).
    pub record: EepromRecord,
}

/// An EEPROM log decoded defensively, oldest record first: no-operation fillers are left
/// out, and decoding stops at the end-of-log tag, at the first byte that starts no known
/// record, or where the bytes run out ([`EepromLog::end`] says which).
///
/// A ring that wrapped may begin inside an overwritten record: when decoding from the first
/// byte meets an unknown record, up to two leading bytes are skipped if decoding from there
/// reaches the end-of-log tag cleanly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EepromLog {
    /// The records, oldest first.
    pub entries: Vec<LogEntry>,
    /// Why decoding stopped.
    pub end: LogEnd,
    /// Leading bytes skipped as the remains of an overwritten record.
    pub skipped_lead: usize,
}

impl EepromLog {
    /// Decodes the data bytes of an EE_MOVES message (or a bus FROM_START reply).
    pub fn decode(data: &[u8]) -> EepromLog {
        let from_start = decode_from(data, 0);
        if from_start.end.complete() {
            return from_start;
        }
        (1..=2.min(data.len()))
            .map(|lead| decode_from(data, lead))
            .find(|log| log.end.complete())
            .unwrap_or(from_start)
    }

    /// Decodes records already split by [`EepromRecord::parse_all`] (as carried by
    /// [`crate::wire::dgt::Message::EepromMoves`]).
    pub fn from_records(records: &[EepromRecord]) -> EepromLog {
        let mut bytes = Vec::with_capacity(records.len() * 2);
        for record in records {
            record.encode_into(&mut bytes);
        }
        EepromLog::decode(&bytes)
    }
}

fn decode_from(data: &[u8], lead: usize) -> EepromLog {
    let mut entries = Vec::new();
    let mut offset = lead;
    let end = loop {
        let Some(rest) = data.get(offset..).filter(|r| !r.is_empty()) else {
            break LogEnd::Truncated { offset };
        };
        let (record, used) = parse_one(rest);
        match record {
            EepromRecord::EndOfLog => break LogEnd::EndOfLog,
            EepromRecord::Unknown(byte) => {
                let cut_short = offset + record_len(byte) > data.len();
                break if cut_short {
                    LogEnd::Truncated { offset }
                } else {
                    LogEnd::Unknown { offset, byte }
                };
            }
            EepromRecord::Nop | EepromRecord::Nop2 => {}
            record => entries.push(LogEntry { offset, record }),
        }
        offset += used;
    };
    EepromLog {
        entries,
        end,
        skipped_lead: lead,
    }
}

/// The length a record starting with `byte` would have.
fn record_len(byte: u8) -> usize {
    match byte {
        0x40..=0x5F => 2,
        0x60..=0x69 | 0x70..=0x79 => 3,
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(field: u8, piece: u8) -> EepromRecord {
        EepromRecord::FieldChange {
            field,
            piece,
            quick: false,
        }
    }

    #[test]
    fn a_log_decodes_to_its_records_and_ends_at_the_end_tag() {
        let data = [
            0x00, 0x00, 0x7F, 0x6A, 0x41, 0x34, 0x70, 0x12, 0x34, 0x6B, 0x00,
        ];
        let log = EepromLog::decode(&data);
        assert_eq!(log.end, LogEnd::EndOfLog);
        let records: Vec<_> = log.entries.iter().map(|e| e.record).collect();
        assert_eq!(
            records,
            vec![
                EepromRecord::PowerUp,
                field(0x34, 1),
                EepromRecord::ClockTime {
                    side: ClockSide::Left,
                    hours: 0,
                    minutes: 12,
                    seconds: 34
                }
            ]
        );
        assert_eq!(log.entries[1].offset, 4);
    }

    #[test]
    fn an_unknown_record_ends_decoding_with_its_offset() {
        let log = EepromLog::decode(&[0x41, 0x34, 0x41, 0x70, 0x42, 0x10, 0x6B]);
        assert_eq!(
            log.end,
            LogEnd::Unknown {
                offset: 2,
                byte: 0x41
            }
        );
        assert_eq!(log.entries.len(), 1);
        assert!(!log.end.reason().is_empty());
    }

    #[test]
    fn a_record_cut_short_is_a_truncation() {
        assert_eq!(
            EepromLog::decode(&[0x41, 0x34, 0x71, 0x12]).end,
            LogEnd::Truncated { offset: 2 }
        );
        assert_eq!(
            EepromLog::decode(&[0x41, 0x34]).end,
            LogEnd::Truncated { offset: 2 }
        );
        assert_eq!(EepromLog::decode(&[]).end, LogEnd::Truncated { offset: 0 });
    }

    #[test]
    fn the_remains_of_an_overwritten_record_at_the_start_are_skipped() {
        // The last two bytes of a clock record (0x33 is no record) before a clean log.
        let log = EepromLog::decode(&[0x33, 0x07, 0x41, 0x34, 0x6B]);
        assert_eq!(log.end, LogEnd::EndOfLog);
        assert_eq!(log.skipped_lead, 2);
        assert_eq!(log.entries.len(), 1);
    }

    #[test]
    fn records_split_by_the_message_decoder_give_the_same_log() {
        let data = [0x6A, 0x41, 0x34, 0x60, 0x05, 0x09, 0x6E, 0x6B];
        let records = EepromRecord::parse_all(&data);
        assert_eq!(EepromLog::from_records(&records), EepromLog::decode(&data));
    }
}
