//! Recovering what a host missed from the board's own memory (the EEPROM log, EE_MOVES).
//!
//! A DGT board logs every field change and, at every lever press, the time of the side whose
//! clock stopped. After an outage the host reads the log and needs the changes it missed, in
//! their true order. [`FieldTrail`] keeps the field changes the host saw, in the form the board
//! logs them; [`recover`] finds where that trail sits in the log and returns what follows it —
//! or refuses, with the reason, whenever the log cannot say for certain: it is incomplete, the
//! trail is too short or found nowhere (the ring wrapped past it, the memory belongs to another
//! game) or in several places, the board was powered up inside the gap with pieces its log
//! does not explain, or the records contradict the pieces the host knows. A refusal is never a guess: the caller falls back to
//! what the board's position alone can tell.
//!
//! The match is always on a sequence of field records, never on one record. The board
//! overwrites its last record instead of appending when the same field changes again, so the
//! trail and the log are compared with consecutive changes of one field folded into the last;
//! the host's last change may itself have been overwritten by a missed change of the same
//! field, which the match allows for.

use std::collections::VecDeque;

use serde::Serialize;

use super::Millis;
use crate::wire::dgt::{ClockSide, EepromLog, EepromRecord, Hms, LogEntry};

/// The longest trail kept (and matched): enough to make a match unique in an 8 KB log.
pub const TRAIL_LEN: usize = 48;

/// Fewest field changes a match needs (never a single record).
pub const MIN_MATCH: usize = 3;

/// One field change as the board logs it: a DGT field 0..=63 and its new piece code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct FieldChange {
    /// The DGT field.
    pub field: u8,
    /// The new piece code (0 = emptied).
    pub piece: u8,
}

/// The field changes a host saw, oldest first, folded like the board folds them, with the
/// fields as they stand after the last one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldTrail {
    changes: VecDeque<FieldChange>,
    fields: [u8; 64],
    /// Lever presses seen since the last change (the log has them after it).
    presses_since: usize,
    /// Records the board wrote for the last field, counted since another field changed: a
    /// change of the same field after a press is a new record, without a press it overwrites.
    run_records: usize,
}

impl FieldTrail {
    /// A trail that starts from `fields` (the host's picture of the board) with no change.
    pub fn new(fields: [u8; 64]) -> FieldTrail {
        FieldTrail {
            changes: VecDeque::new(),
            fields,
            presses_since: 0,
            run_records: 0,
        }
    }

    /// A field changed (a field update, or a recovered record). No change is no record.
    pub fn push(&mut self, field: u8, piece: u8) {
        let slot = &mut self.fields[usize::from(field & 63)];
        if *slot == piece {
            return;
        }
        *slot = piece;
        let presses = std::mem::take(&mut self.presses_since);
        let change = FieldChange { field, piece };
        match self.changes.back_mut() {
            Some(last) if last.field == field => {
                *last = change;
                if presses > 0 {
                    self.run_records += 1;
                }
            }
            _ => {
                self.run_records = 1;
                self.changes.push_back(change);
                if self.changes.len() > TRAIL_LEN {
                    self.changes.pop_front();
                }
            }
        }
    }

    /// The lever was pressed (seen live, or recovered).
    pub fn pressed(&mut self) {
        self.presses_since += 1;
    }

    /// Lever presses seen since the last change.
    pub fn presses_since_change(&self) -> usize {
        self.presses_since
    }

    /// A full picture of the board: if it differs from the trail's, changes were missed
    /// somewhere in between, so the trail starts again from it.
    pub fn restart_if_different(&mut self, fields: [u8; 64]) {
        if fields != self.fields {
            *self = FieldTrail::new(fields);
        }
    }

    /// The changes kept, oldest first.
    pub fn changes(&self) -> impl Iterator<Item = &FieldChange> {
        self.changes.iter()
    }

    /// The fields after the last change.
    pub fn fields(&self) -> [u8; 64] {
        self.fields
    }
}

/// A record found after the trail in the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "record", rename_all = "snake_case")]
pub enum RecoveredRecord {
    /// A field changed.
    Field {
        /// The DGT field.
        field: u8,
        /// The new piece code (0 = emptied).
        piece: u8,
        /// The board marked it as less than ~250 ms after the change before.
        quick: bool,
    },
    /// The lever changed; `halted` is the side whose clock stopped (the side that pressed).
    Press {
        /// The clock side that stopped.
        halted: ClockSide,
        /// Its remaining time as logged, in milliseconds.
        remaining_ms: u64,
    },
}

/// What the log tells about the gap.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Recovery {
    /// The missed records, in their true order (empty when nothing was missed).
    pub records: Vec<RecoveredRecord>,
    /// Field changes the match rests on.
    pub matched: usize,
}

/// Why the log cannot tell what was missed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "refusal", rename_all = "snake_case")]
pub enum Refusal {
    /// The log could not be read to its end.
    Incomplete {
        /// Where and why decoding stopped.
        reason: String,
    },
    /// The host saw too few changes to find them in the log with certainty.
    TrailTooShort {
        /// Changes seen.
        seen: usize,
    },
    /// The changes the host saw are not in the log: the ring wrapped past them, or the
    /// memory belongs to another game (another board, a board reset).
    NotFound,
    /// The changes the host saw are in the log more than once.
    Ambiguous {
        /// Places they were found.
        places: usize,
    },
    /// The host saw more lever presses after its last change than the log has there.
    PressesMissing {
        /// Presses seen.
        seen: usize,
    },
    /// The board was powered up inside the gap and the pieces it then found are not the
    /// board its log reached before: what was moved while it was off is not logged.
    PowerUpInGap,
    /// A record after the match contradicts the pieces the host knows (or the board's own
    /// picture taken after the gap).
    Contradiction {
        /// The DGT field concerned.
        field: u8,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Incomplete { reason } => write!(f, "the board's log is incomplete: {reason}"),
            Refusal::TrailTooShort { seen } => write!(
                f,
                "only {seen} field change(s) were seen before the gap; at least {MIN_MATCH} \
                 are needed to find them in the board's log"
            ),
            Refusal::NotFound => write!(
                f,
                "the last changes seen are not in the board's log (its memory wrapped past them \
                 or belongs to another game)"
            ),
            Refusal::Ambiguous { places } => write!(
                f,
                "the last changes seen appear {places} times in the board's log"
            ),
            Refusal::PressesMissing { seen } => write!(
                f,
                "{seen} clock press(es) were seen after the last change, but the board's log \
                 does not have them there"
            ),
            Refusal::PowerUpInGap => write!(
                f,
                "the board was powered up during the gap with pieces its log does not explain"
            ),
            Refusal::Contradiction { field } => write!(
                f,
                "the board's log contradicts the known pieces at field {field}"
            ),
        }
    }
}

/// Finds the trail in the log and returns what follows it. `board_after`, when given, is the
/// board's own picture taken after the gap (with no change in between): the recovered
/// changes must lead to it.
pub fn recover(
    trail: &FieldTrail,
    log: &EepromLog,
    board_after: Option<&[u8; 64]>,
) -> Result<Recovery, Refusal> {
    if !log.end.complete() {
        return Err(Refusal::Incomplete {
            reason: log.end.reason(),
        });
    }
    let seen: Vec<FieldChange> = trail.changes().copied().collect();
    if seen.len() < MIN_MATCH {
        return Err(Refusal::TrailTooShort { seen: seen.len() });
    }
    let folded = folded_fields(log);
    let mut places = Vec::new();
    for end in 0..folded.len() {
        places.extend(match_ending_at(&folded, end, &seen, trail.run_records));
    }
    // Two places always have different sequels (one sequel is longer).
    let recovery = match places[..] {
        [] => return Err(Refusal::NotFound),
        [place] => sequel(log, place, trail.presses_since, trail.fields())?,
        _ => {
            return Err(Refusal::Ambiguous {
                places: places.len(),
            });
        }
    };
    check_against_pieces(trail.fields(), &recovery.records, board_after)?;
    Ok(recovery)
}

/// The board as the log last shows it, for a host that has not seen the board yet: at
/// power-up the board logs one record per piece present, and every change after, so the log
/// from its last power-up on is a whole picture. `None` when the log is incomplete or its
/// ring no longer reaches back to a power-up.
pub fn picture(log: &EepromLog) -> Option<[u8; 64]> {
    if !log.end.complete() {
        return None;
    }
    let mut fields = None;
    for e in &log.entries {
        match e.record {
            EepromRecord::PowerUp => fields = Some([0u8; 64]),
            EepromRecord::FieldChange { field, piece, .. } => {
                if let Some(fields) = &mut fields {
                    fields[usize::from(field & 63)] = piece;
                }
            }
            _ => {}
        }
    }
    fields
}

/// A run of the log's records of one field, folded into its last change.
#[derive(Debug, Clone)]
struct Folded {
    change: FieldChange,
    /// The log's records of the run (index, piece, and whether a record the host does not
    /// see, such as a DOWNLOADED tag, came before it rather than a press): more than one when
    /// other records came between changes of the field.
    run: Vec<(usize, u8, bool)>,
}

/// The log's field changes folded into runs. A power-up ends a run: the picture it writes
/// after is never seen live, so a host's last change is never one of its records.
fn folded_fields(log: &EepromLog) -> Vec<Folded> {
    let mut folded: Vec<Folded> = Vec::new();
    let mut untold = false;
    let mut powered_up = false;
    for (entry, e) in log.entries.iter().enumerate() {
        match e.record {
            EepromRecord::FieldChange { field, piece, .. } => {
                let change = FieldChange { field, piece };
                match folded.last_mut() {
                    Some(last)
                        if last.change.field == field && !std::mem::take(&mut powered_up) =>
                    {
                        last.change = change;
                        last.run.push((entry, piece, untold));
                    }
                    _ => folded.push(Folded {
                        change,
                        run: vec![(entry, piece, untold)],
                    }),
                }
                untold = false;
                powered_up = false;
            }
            EepromRecord::ClockTime { .. } => {}
            EepromRecord::PowerUp => {
                untold = true;
                powered_up = true;
            }
            _ => untold = true,
        }
    }
    folded
}

/// Where a match leaves off.
#[derive(Debug, Clone, Copy)]
struct Place {
    /// Index in the log of the record the sequel starts at.
    first_missed: usize,
    /// Field changes matched.
    matched: usize,
    /// The host's last record was overwritten by a missed change of the same field.
    overwritten: bool,
}

/// Where the trail ends at folded record `end`, if it does. The log's run of the last field
/// seen may go on after the host's record (changes after presses); the host's record itself
/// may have been overwritten by a missed change of the same field, which then is the first
/// missed. The host counts the run's records by the presses it saw; a record it does not see
/// (a DOWNLOADED tag) also starts a new one, so every record of the run the host's count
/// fits is a place (several are refused as ambiguous).
fn match_ending_at(
    folded: &[Folded],
    end: usize,
    seen: &[FieldChange],
    run_records: usize,
) -> Vec<Place> {
    let Some(last) = seen.last() else {
        return Vec::new();
    };
    let at_end = &folded[end];
    if at_end.change.field != last.field {
        return Vec::new();
    }
    let before = &seen[..seen.len() - 1];
    let available = end.min(before.len());
    let all_before = before
        .iter()
        .rev()
        .zip(folded[..end].iter().rev())
        .take(available)
        .all(|(s, f)| *s == f.change);
    // The whole trail must match, unless the log's oldest records were overwritten (the
    // match then runs to the log's start), and it is never shorter than MIN_MATCH.
    let whole = available == before.len();
    if !all_before || !(whole || end == available) || available + 1 < MIN_MATCH {
        return Vec::new();
    }
    let pressed_before = run_records.max(1) - 1;
    let mut presses = 0;
    let mut places = Vec::new();
    for (i, &(entry, piece, untold)) in at_end.run.iter().enumerate() {
        presses += usize::from(i > 0 && !untold);
        if presses > pressed_before {
            break;
        }
        if presses == pressed_before {
            let overwritten = piece != last.piece;
            places.push(Place {
                first_missed: if overwritten { entry } else { entry + 1 },
                matched: available + 1,
                overwritten,
            });
        }
    }
    places
}

/// The records after `place`, less the `presses_seen` presses the host saw after its last
/// change; `fields` is the board as the host last saw it. A power-up inside the gap is read
/// through when the pieces it lists are exactly the board the records before it reached
/// (the board was switched off and on with nothing moved meanwhile); otherwise it is refused.
fn sequel(
    log: &EepromLog,
    place: Place,
    presses_seen: usize,
    mut fields: [u8; 64],
) -> Result<Recovery, Refusal> {
    if place.overwritten && presses_seen > 0 {
        // A record followed by a press is never overwritten.
        return Err(Refusal::PressesMissing { seen: presses_seen });
    }
    let mut records = Vec::new();
    let mut to_skip = presses_seen;
    let entries = &log.entries[place.first_missed.min(log.entries.len())..];
    let mut i = 0;
    while let Some(e) = entries.get(i) {
        i += 1;
        match e.record {
            EepromRecord::FieldChange { .. } if to_skip > 0 => {
                return Err(Refusal::PressesMissing { seen: presses_seen });
            }
            EepromRecord::ClockTime { .. } if to_skip > 0 => to_skip -= 1,
            EepromRecord::FieldChange {
                field,
                piece,
                quick,
            } => {
                fields[usize::from(field & 63)] = piece;
                records.push(RecoveredRecord::Field {
                    field,
                    piece,
                    quick,
                });
            }
            EepromRecord::ClockTime {
                side,
                hours,
                minutes,
                seconds,
            } => records.push(RecoveredRecord::Press {
                halted: side,
                remaining_ms: Hms {
                    hours,
                    minutes,
                    seconds,
                }
                .millis(),
            }),
            EepromRecord::PowerUp => i += power_up_picture(&entries[i..], &fields)?,
            EepromRecord::WatchdogAction => return Err(Refusal::PowerUpInGap),
            _ => {}
        }
    }
    if to_skip > 0 {
        return Err(Refusal::PressesMissing { seen: presses_seen });
    }
    Ok(Recovery {
        records,
        matched: place.matched,
    })
}

/// The records a power-up wrote after its tag (one per piece present, each on its own field,
/// in any order) when they picture exactly `fields`: how many there are. The picture ends
/// where it holds every piece of `fields`: a piece placed on an empty square just after the
/// power-up (the board switched on while a piece was in the hand) looks like one more picture
/// record, but a picture that already holds the whole board has no more. A picture that
/// never matches (pieces moved while the board was off) is refused.
fn power_up_picture(after: &[LogEntry], fields: &[u8; 64]) -> Result<usize, Refusal> {
    let mut pictured = [0u8; 64];
    let mut count = 0;
    for e in after {
        if pictured == *fields {
            return Ok(count);
        }
        match e.record {
            EepromRecord::FieldChange { field, piece, .. }
                if piece != 0 && pictured[usize::from(field & 63)] == 0 =>
            {
                pictured[usize::from(field & 63)] = piece;
                count += 1;
            }
            _ => break,
        }
    }
    if pictured == *fields {
        Ok(count)
    } else {
        Err(Refusal::PowerUpInGap)
    }
}

fn check_against_pieces(
    mut fields: [u8; 64],
    records: &[RecoveredRecord],
    board_after: Option<&[u8; 64]>,
) -> Result<(), Refusal> {
    // A record may restore the piece already there (a change overwritten by its undoing),
    // so only the end is compared.
    for record in records {
        if let &RecoveredRecord::Field { field, piece, .. } = record {
            fields[usize::from(field & 63)] = piece;
        }
    }
    if let Some(after) = board_after
        && let Some(field) = (0u8..64).find(|&f| after[usize::from(f)] != fields[usize::from(f)])
    {
        return Err(Refusal::Contradiction { field });
    }
    Ok(())
}

/// The best times the log allows for recovered records, all inside `(from_ms, to_ms)` and in
/// order. Presses are timed from the clock: with the last reading seen before the gap
/// (`reading`: when, and each side's remaining time), a press comes after the time both
/// sides used since; field changes are spread between the presses around them, and a
/// "quick" change follows the one before closely.
pub fn schedule(
    records: &[RecoveredRecord],
    from_ms: Millis,
    to_ms: Millis,
    reading: Option<(Millis, [u64; 2])>,
) -> Vec<Millis> {
    let to_ms = to_ms.max(from_ms + 2 * records.len() as u64 + 2);
    let mut anchors: Vec<Option<Millis>> = vec![None; records.len()];
    if let Some((t_read, mut remaining)) = reading {
        let mut used = 0;
        let count = records.len();
        for (i, (slot, record)) in anchors.iter_mut().zip(records).enumerate() {
            if let &RecoveredRecord::Press {
                halted,
                remaining_ms,
            } = record
            {
                let side = usize::from(halted == ClockSide::Right);
                used += remaining[side].saturating_sub(remaining_ms);
                remaining[side] = remaining_ms;
                let t = t_read + used;
                if t > from_ms && t + ((count - i) as u64) < to_ms {
                    *slot = Some(t);
                }
            }
        }
    }
    // Keep only increasing anchors, then spread the rest evenly between them.
    // Each kept anchor leaves a millisecond for every record before it.
    let (mut last, mut last_i) = (from_ms, 0);
    for (i, slot) in anchors.iter_mut().enumerate() {
        match *slot {
            Some(t) if t > last + (i + 1 - last_i) as u64 => (last, last_i) = (t, i + 1),
            _ => *slot = None,
        }
    }
    let mut times = Vec::with_capacity(records.len());
    let mut prev = from_ms;
    for (i, record) in records.iter().enumerate() {
        let t = match anchors[i] {
            Some(t) => t.max(prev + 1),
            None => {
                let next = (i..records.len()).find_map(|j| anchors[j].map(|t| (j, t)));
                let (j, until) = next.unwrap_or((records.len(), to_ms));
                let share = until.saturating_sub(prev) / ((j - i) as u64 + 1);
                let step = if matches!(record, RecoveredRecord::Field { quick: true, .. }) {
                    share.min(QUICK_MS)
                } else {
                    share
                };
                prev + step.max(1)
            }
        };
        times.push(t);
        prev = t;
    }
    times
}

/// How soon a change the board marks "quick" is taken to follow the one before.
const QUICK_MS: Millis = 100;
