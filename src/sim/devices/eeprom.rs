//! A DGT board's EEPROM move log (protocols 1.13): an 8 KB ring of 0x1F00 bytes, written
//! whether or not a host listens, and kept without power.
//!
//! * Power-on: three no-operations, the power-up tag, one field record per piece present,
//!   in no particular order.
//! * A field change: `010r nnnn` (piece code, `r` set within 250 ms of the field record
//!   before), then the field. While the same field keeps changing, its record is
//!   overwritten instead of a new one appended.
//! * A lever change: the halted side's time, `011f hhhh` (`f` set for the left side), then
//!   minutes and seconds, three bits of tens and four of units each.
//! * The start position (or the start turned round) set up, the board emptied: a tag; the
//!   start is tagged again only after more than two pieces left it.
//! * A download: the ring from its oldest byte to the end-of-log tag, then the "downloaded"
//!   tag written where it happened.

use crate::board::Millis;

/// Bytes of the ring.
pub const LOG_BYTES: usize = 0x1F00;

const NOP2: u8 = 0x00;
const POWERUP: u8 = 0x6A;
const EOF: u8 = 0x6B;
const EMPTYBOARD: u8 = 0x6D;
const DOWNLOADED: u8 = 0x6E;
const BEGINPOS: u8 = 0x6F;
const NOP: u8 = 0x7F;
const BEGINPOS_ROT: u8 = 0x7A;

/// A field record within this long of the one before has its `r` bit set.
const QUICK_MS: Millis = 250;

/// The start position in DGT piece codes, field 0 (a8) first.
const START: [u8; 64] = {
    let mut codes = [0; 64];
    let back = [2, 3, 4, 6, 5, 4, 3, 2];
    let mut i = 0;
    while i < 8 {
        codes[i] = back[i] + 6;
        codes[8 + i] = 7;
        codes[48 + i] = 1;
        codes[56 + i] = back[i];
        i += 1;
    }
    codes
};

/// The log and where the board writes next.
#[derive(Debug, Clone)]
pub struct MoveLog {
    ring: Vec<u8>,
    /// Where the end-of-log tag stands: the next record goes there.
    head: usize,
    /// Where the last record starts and its field, while it is a field record.
    last_field: Option<(usize, usize)>,
    last_field_ms: Option<Millis>,
    /// The start position would be tagged if it were set up now.
    start_armed: bool,
    empty: bool,
}

impl MoveLog {
    /// A log never written: no-operations and the end-of-log tag.
    pub fn new() -> MoveLog {
        let mut ring = vec![NOP2; LOG_BYTES];
        ring[0] = EOF;
        MoveLog {
            ring,
            head: 0,
            last_field: None,
            last_field_ms: None,
            start_armed: true,
            empty: true,
        }
    }

    /// The board was switched on: its tags, then [`MoveLog::list_pieces`].
    pub fn power_up(&mut self) {
        self.append(&[NOP, NOP, NOP, POWERUP]);
    }

    /// The pieces found at power-on: `codes` on the fields, listed in `order` (every field
    /// once, in the order the board happens to list them).
    pub fn list_pieces(&mut self, codes: &[u8; 64], order: &[usize]) {
        for &field in order {
            if codes[field] != 0 {
                self.append(&[0x40 | codes[field], field as u8]);
            }
        }
        self.last_field_ms = None;
        self.empty = codes.iter().all(|&c| c == 0);
        self.start_armed = differences_from_start(codes) > 2;
    }

    /// `field` changed to `code` at `t_ms`; `codes` are the fields after it.
    pub fn field_changed(&mut self, t_ms: Millis, field: usize, code: u8, codes: &[u8; 64]) {
        let quick = self
            .last_field_ms
            .is_some_and(|before| t_ms.saturating_sub(before) < QUICK_MS);
        self.last_field_ms = Some(t_ms);
        let record = [0x40 | u8::from(quick) << 4 | (code & 0x0F), field as u8];
        match self.last_field {
            Some((at, last)) if last == field => self.write_at(at, &record),
            _ => {
                let at = self.head;
                self.append(&record);
                self.last_field = Some((at, field));
            }
        }
        self.tag_position(codes);
    }

    fn tag_position(&mut self, codes: &[u8; 64]) {
        let differences = differences_from_start(codes);
        if self.start_armed && differences == 0 {
            let normal = codes == &START;
            self.append(&[if normal { BEGINPOS } else { BEGINPOS_ROT }]);
            self.start_armed = false;
        } else if differences > 2 {
            self.start_armed = true;
        }
        let empty = codes.iter().all(|&c| c == 0);
        if empty && !self.empty {
            self.append(&[EMPTYBOARD]);
        }
        self.empty = empty;
    }

    /// The lever changed: the halted side (left or not) and its time in the log's form.
    pub fn lever_changed(&mut self, left: bool, (hours, minutes, seconds): (u8, u8, u8)) {
        let side = if left { 0x70 } else { 0x60 };
        self.append(&[side | hours.min(9), minutes & 0x7F, seconds & 0x7F]);
    }

    /// The log as EE_MOVES sends it, oldest byte first, ending at the end-of-log tag; the
    /// download is then tagged.
    pub fn download(&mut self) -> Vec<u8> {
        let start = self.head + 1;
        let mut bytes = Vec::with_capacity(LOG_BYTES);
        bytes.extend_from_slice(&self.ring[start.min(LOG_BYTES)..]);
        bytes.extend_from_slice(&self.ring[..start]);
        self.append(&[DOWNLOADED]);
        bytes
    }

    fn append(&mut self, record: &[u8]) {
        let at = self.head;
        self.write_at(at, record);
        self.head = (at + record.len()) % LOG_BYTES;
        self.ring[self.head] = EOF;
        self.last_field = None;
    }

    fn write_at(&mut self, at: usize, bytes: &[u8]) {
        for (i, &b) in bytes.iter().enumerate() {
            self.ring[(at + i) % LOG_BYTES] = b;
        }
    }
}

/// Fields that differ from the start position, the board either way round.
fn differences_from_start(codes: &[u8; 64]) -> usize {
    let count = |rotated: bool| {
        (0..64)
            .filter(|&f| codes[f] != START[if rotated { 63 - f } else { f }])
            .count()
    };
    count(false).min(count(true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::devices::dgt_clock::Dgt3000;

    fn records(log: &mut MoveLog) -> Vec<u8> {
        let dump = log.download();
        let end = dump.iter().rposition(|&b| b == EOF).unwrap();
        dump[..=end]
            .iter()
            .copied()
            .skip_while(|&b| b == NOP2)
            .collect()
    }

    #[test]
    fn records_are_written_as_documented() {
        let mut log = MoveLog::new();
        let mut codes = [0u8; 64];
        codes[52] = 1;
        codes[4] = 11;
        log.power_up();
        log.list_pieces(&codes, &[52, 4, 0]);
        codes[52] = 0;
        log.field_changed(1000, 52, 0, &codes);
        codes[36] = 1;
        log.field_changed(1100, 36, 1, &codes);
        codes[36] = 0;
        log.field_changed(2000, 36, 0, &codes);
        codes[36] = 1;
        log.field_changed(2100, 36, 1, &codes);
        log.lever_changed(true, Dgt3000::log_time(306_500));
        assert_eq!(
            records(&mut log),
            [
                NOP, NOP, NOP, POWERUP, 0x41, 52, 0x4B, 4, // power-up and its pieces
                0x40, 52, 0x51, 36, // e2 emptied, e4 placed 100 ms later
                0x70, 0x05, 0x07, EOF // e4's record overwritten; the left side halted
            ]
        );
        let again = records(&mut log);
        assert_eq!(&again[again.len() - 2..], [DOWNLOADED, EOF]);
    }

    #[test]
    fn the_start_is_tagged_once_until_more_than_two_pieces_left_it() {
        let mut log = MoveLog::new();
        log.power_up();
        let mut codes = [0u8; 64];
        for f in 0..64 {
            codes[f] = START[f];
            log.field_changed(f as Millis * 1000, f, START[f], &codes);
        }
        let mut lift_and_replace = |log: &mut MoveLog, fields: &[usize]| {
            for &f in fields {
                codes[f] = 0;
                log.field_changed(70_000, f, 0, &codes);
            }
            for &f in fields {
                codes[f] = START[f];
                log.field_changed(80_000, f, START[f], &codes);
            }
            let records = records(log);
            records.iter().filter(|&&b| b == BEGINPOS).count()
        };
        assert_eq!(lift_and_replace(&mut log, &[52, 51]), 1);
        assert_eq!(lift_and_replace(&mut log, &[52, 51, 50]), 2);
    }
}
