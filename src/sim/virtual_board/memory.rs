//! The virtual board's EEPROM move log, written the way `protocols/dgt.md` describes a DGT
//! board writing it: an 8 KB ring (0x1F00 bytes) of records ending at an end-of-log tag,
//! three no-operations and a power-up tag then one record per piece at power-on, a field
//! record per change (overwritten instead of appended when the same field changes again),
//! the halted side's time at every lever change, and a "downloaded" tag after every dump.

use crate::board::Millis;
use crate::wire::dgt::{ClockSide, EEPROM_LOG_BYTES, EepromRecord};

/// A change closer than this to the field change before is marked "quick".
const QUICK_MS: Millis = 250;

/// The ring and where the board writes next.
#[derive(Debug, Clone)]
pub struct BoardMemory {
    ring: Vec<u8>,
    /// Where the end-of-log tag stands (the next record is written there).
    head: usize,
    /// Where the last record starts, if it is a field record (it may be overwritten).
    last_field: Option<(usize, u8)>,
    last_field_ms: Option<Millis>,
}

impl BoardMemory {
    /// A memory that has never been written (filled with no-operations).
    pub fn blank() -> BoardMemory {
        let mut memory = BoardMemory {
            ring: vec![0; EEPROM_LOG_BYTES],
            head: 0,
            last_field: None,
            last_field_ms: None,
        };
        memory.ring[0] = 0x6B;
        memory
    }

    /// The board is switched on with `fields` on it: three no-operations, the power-up tag,
    /// then one record per piece present.
    pub fn power_up(&mut self, fields: &[u8; 64]) {
        for record in [
            EepromRecord::Nop,
            EepromRecord::Nop,
            EepromRecord::Nop,
            EepromRecord::PowerUp,
        ] {
            self.append(record);
        }
        for (field, &piece) in (0u8..).zip(fields) {
            if piece != 0 {
                self.append(EepromRecord::FieldChange {
                    field,
                    piece,
                    quick: false,
                });
            }
        }
        self.last_field_ms = None;
    }

    /// A field changed at `t_ms`: one record, or the last one overwritten when it was a
    /// change of the same field.
    pub fn field_changed(&mut self, field: u8, piece: u8, t_ms: Millis) {
        let quick = self
            .last_field_ms
            .is_some_and(|before| t_ms.saturating_sub(before) < QUICK_MS);
        self.last_field_ms = Some(t_ms);
        let record = EepromRecord::FieldChange {
            field,
            piece,
            quick,
        };
        match self.last_field {
            Some((at, last)) if last == field => {
                let mut bytes = Vec::with_capacity(2);
                record.encode_into(&mut bytes);
                self.write_at(at, &bytes);
            }
            _ => {
                let at = self.head;
                self.append(record);
                self.last_field = Some((at, field));
            }
        }
    }

    /// The lever changed: the side that stopped, with its remaining time.
    pub fn lever_changed(&mut self, halted: ClockSide, remaining_ms: u64) {
        let seconds = remaining_ms.div_ceil(1000);
        let hours = u8::try_from((seconds / 3600).min(9)).unwrap_or(9);
        let minutes = u8::try_from((seconds / 60) % 60).unwrap_or(0);
        let seconds = u8::try_from(seconds % 60).unwrap_or(0);
        self.append(EepromRecord::ClockTime {
            side: halted,
            hours,
            minutes,
            seconds,
        });
    }

    /// The log as EE_MOVES sends it (oldest byte first, ending at the end-of-log tag); the
    /// download is then marked in the log.
    pub fn download(&mut self) -> Vec<u8> {
        let start = (self.head + 1) % self.ring.len();
        let mut dump = Vec::with_capacity(self.ring.len());
        dump.extend_from_slice(&self.ring[start..]);
        dump.extend_from_slice(&self.ring[..start]);
        self.append(EepromRecord::Downloaded);
        dump
    }

    fn append(&mut self, record: EepromRecord) {
        let mut bytes = Vec::with_capacity(4);
        record.encode_into(&mut bytes);
        bytes.push(0x6B);
        let at = self.head;
        self.write_at(at, &bytes);
        self.head = (at + bytes.len() - 1) % self.ring.len();
        self.last_field = None;
    }

    fn write_at(&mut self, at: usize, bytes: &[u8]) {
        let len = self.ring.len();
        for (i, &b) in bytes.iter().enumerate() {
            self.ring[(at + i) % len] = b;
        }
    }
}

impl Default for BoardMemory {
    fn default() -> Self {
        BoardMemory::blank()
    }
}
