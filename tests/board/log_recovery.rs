//! Property tests of recovering missed changes from the board's EEPROM log: whatever the gap,
//! the wrap of the ring, a power-up inside the gap, overwritten records or garbage, the answer
//! is either exactly the records the board wrote after the last change the host saw, or a
//! refusal — never a wrong sequence.

use proptest::prelude::*;
use touchmove::board::log_recovery::{
    FieldTrail, RecoveredRecord, Refusal, picture, recover, schedule,
};
use touchmove::sim::virtual_board::memory::BoardMemory;
use touchmove::wire::dgt::{ClockSide, EepromLog, EepromRecord, LogEnd};

/// Something that happens on the board.
#[derive(Debug, Clone, Copy)]
enum Deed {
    /// Change a field `after_ms` after the deed before (under 250 ms the board marks it
    /// quick): pick it (the same as the last one when `again`) and a piece.
    Change {
        field: u8,
        piece: u8,
        again: bool,
        after_ms: u64,
    },
    /// Press the lever.
    Press { left: bool, used_ms: u64 },
    /// A host downloads the log (the board writes a DOWNLOADED tag).
    Download,
}

fn deed() -> impl Strategy<Value = Deed> {
    prop_oneof![
        12 => (0u8..64, 0u8..13, prop::bool::weighted(0.25), 0u64..1500).prop_map(
            |(field, piece, again, after_ms)| Deed::Change { field, piece, again, after_ms }
        ),
        2 => (any::<bool>(), 0u64..20_000).prop_map(|(left, used_ms)| Deed::Press { left, used_ms }),
        1 => Just(Deed::Download),
    ]
}

/// A board played by `deeds`: its memory, an independent model of the records it wrote (with
/// the overwrite rule), its fields, and the host's trail of what it saw before `cut`.
struct Played {
    memory: BoardMemory,
    fields: [u8; 64],
    /// Records written after the host's last seen change (the oracle).
    expected: Vec<RecoveredRecord>,
    trail: FieldTrail,
    /// Bytes the board wrote to its ring in all, and after the cut.
    bytes_written: usize,
    bytes_after_cut: usize,
    /// Bytes written before each deed.
    bytes_before: Vec<usize>,
    /// The record after a power-up in the gap does not place a piece on an empty field (a
    /// record the power-up's own list of pieces could end with).
    power_up_readable: bool,
    /// A DOWNLOADED tag split the board's run of records of the host's last field (the
    /// field changed again after it, a new record): the host, which sees presses but not
    /// downloads, cannot tell which record of the run is its last, so exact or refused.
    split_last_run: bool,
}

/// What a power-up inside the gap finds on the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PowerUp {
    /// The pieces as they stood when it was switched off.
    Unmoved,
    /// A piece moved while it was off (not logged).
    Moved,
}

fn start_fields() -> [u8; 64] {
    let mut fields = [0; 64];
    for f in 0..16 {
        fields[f] = 1 + (f % 6) as u8;
        fields[63 - f] = 7 + (f % 6) as u8;
    }
    fields
}

fn play(deeds: &[Deed], cut: usize, power_up_in_gap: Option<(usize, PowerUp)>) -> Played {
    let mut memory = BoardMemory::blank();
    let mut fields = start_fields();
    memory.power_up(&fields);
    let pieces = |fields: &[u8; 64]| fields.iter().filter(|&&p| p != 0).count();
    let mut bytes_written = 4 + 2 * pieces(&fields);
    let mut bytes_at_cut = None;
    let mut bytes_before = Vec::with_capacity(deeds.len());
    let mut power_up_readable = true;
    let mut just_powered = false;
    // The field of the board's run of records (presses and downloads do not end it), a
    // download since its last record, and whether the run the host's last record is in
    // is still going on, and was split.
    let mut run_field: Option<u8> = None;
    let mut downloaded_in_run = false;
    let mut run_split = false;
    let mut host_run = false;
    let mut split_last_run = false;
    let mut written: Vec<RecoveredRecord> = Vec::new();
    let mut trail = FieldTrail::new(fields);
    let mut last_field: Option<u8> = None;
    let mut boundary: Option<(usize, Option<RecoveredRecord>)> = None;
    let mut remaining = [3_600_000u64, 3_600_000];
    let mut t_ms = 0;
    for (i, d) in deeds.iter().enumerate() {
        if i == cut {
            boundary = Some((written.len(), written.last().copied()));
            bytes_at_cut = Some(bytes_written);
            host_run = run_field.is_some();
            split_last_run = host_run && run_split;
        }
        bytes_before.push(bytes_written);
        if let Some((at, kind)) = power_up_in_gap
            && at == i
            && i >= cut
        {
            if kind == PowerUp::Moved {
                // A piece moved while the board was off: nothing logs it.
                let from = (0..64).find(|&f| fields[f] != 0).unwrap_or(0);
                let to = (0..64).rev().find(|&f| fields[f] == 0).unwrap_or(63);
                fields.swap(from, to);
            }
            memory.power_up(&fields);
            bytes_written += 4 + 2 * pieces(&fields);
            last_field = None;
            just_powered = true;
            run_field = None;
            host_run = false;
        }
        match *d {
            Deed::Change {
                field,
                piece,
                again,
                after_ms,
            } => {
                t_ms += after_ms;
                let field = match (again, last_field) {
                    (true, Some(f)) => f,
                    _ => field,
                };
                let slot = &mut fields[usize::from(field)];
                let piece = if *slot != 0 && piece % 3 == 0 {
                    0
                } else {
                    piece.max(1)
                };
                if *slot == piece {
                    continue;
                }
                if std::mem::take(&mut just_powered) && *slot == 0 {
                    power_up_readable = false;
                }
                *slot = piece;
                if run_field == Some(field) {
                    run_split |= std::mem::take(&mut downloaded_in_run);
                    split_last_run |= host_run && run_split;
                } else {
                    run_field = Some(field);
                    downloaded_in_run = false;
                    run_split = false;
                    host_run = false;
                }
                memory.field_changed(field, piece, t_ms);
                if last_field != Some(field) {
                    bytes_written += 2;
                }
                if i < cut {
                    trail.push(field, piece);
                }
                let record = RecoveredRecord::Field {
                    field,
                    piece,
                    quick: false,
                };
                match written.last_mut() {
                    Some(last) if last_field == Some(field) => *last = record,
                    _ => written.push(record),
                }
                last_field = Some(field);
            }
            Deed::Press { left, used_ms } => {
                just_powered = false;
                t_ms += 1000;
                bytes_written += 3;
                let side = usize::from(!left);
                remaining[side] = remaining[side].saturating_sub(used_ms);
                let halted = if left {
                    ClockSide::Left
                } else {
                    ClockSide::Right
                };
                memory.lever_changed(halted, remaining[side]);
                if i < cut {
                    trail.pressed();
                }
                written.push(RecoveredRecord::Press {
                    halted,
                    remaining_ms: remaining[side].div_ceil(1000) * 1000,
                });
                last_field = None;
            }
            Deed::Download => {
                just_powered = false;
                downloaded_in_run = run_field.is_some();
                memory.download();
                bytes_written += 1;
                last_field = None;
            }
        }
    }
    if boundary.is_none() {
        // The host saw every deed: its last run is the board's last run.
        split_last_run = run_field.is_some() && run_split;
    }
    let (at, before) = boundary.unwrap_or((written.len(), written.last().copied()));
    // The first missed change overwrote the last seen record: it starts the sequel.
    let from = if at > 0 && written.get(at - 1).copied() != before {
        at - 1
    } else {
        at
    };
    Played {
        memory,
        fields,
        expected: written[from..].to_vec(),
        trail,
        bytes_written,
        bytes_after_cut: bytes_written - bytes_at_cut.unwrap_or(bytes_written),
        bytes_before,
        power_up_readable,
        split_last_run,
    }
}

/// Records compared without the "quick" bit (a matter of timing, not of order).
fn plain(records: &[RecoveredRecord]) -> Vec<RecoveredRecord> {
    records
        .iter()
        .map(|r| match *r {
            RecoveredRecord::Field { field, piece, .. } => RecoveredRecord::Field {
                field,
                piece,
                quick: false,
            },
            other => other,
        })
        .collect()
}

fn trail_len(trail: &FieldTrail) -> usize {
    trail.changes().count()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Random games cut at a random place: the exact missed records or a refusal, and with a
    /// long enough trail in an unwrapped ring, always the exact records.
    #[test]
    fn a_random_gap_is_recovered_exactly_or_refused(
        deeds in prop::collection::vec(deed(), 1..300),
        cut in any::<prop::sample::Index>(),
    ) {
        let cut = cut.index(deeds.len() + 1);
        let mut played = play(&deeds, cut, None);
        let log = EepromLog::decode(&played.memory.download());
        match recover(&played.trail, &log, Some(&played.fields)) {
            Ok(recovery) => prop_assert_eq!(plain(&recovery.records), played.expected.clone()),
            Err(refusal) => {
                // Only a short trail may be ambiguous in an unwrapped log of random changes.
                prop_assert!(
                    trail_len(&played.trail) < 8 || played.split_last_run,
                    "refused: {refusal}"
                );
            }
        }
    }

    /// A ring that wrapped (its power-up long overwritten). A gap that wrote more than the
    /// ring holds wrapped past the host's last seen change too: always refused. A gap that
    /// left the host's last changes in the ring: always the exact records.
    #[test]
    fn a_wrapped_ring_is_recovered_exactly_or_refused(
        deeds in prop::collection::vec(deed(), 5000..6000),
        gap_bytes in 0usize..12_000,
    ) {
        // The cut that leaves about `gap_bytes` bytes written after it.
        let all = play(&deeds, deeds.len(), None);
        prop_assume!(all.bytes_written > 0x1F00 + 200, "the ring wrapped");
        let wanted = gap_bytes.min(all.bytes_written - 300);
        let cut = (0..deeds.len())
            .rev()
            .find(|&c| all.bytes_written - all.bytes_before[c] >= wanted)
            .unwrap_or(0);
        let mut played = play(&deeds, cut, None);
        let log = EepromLog::decode(&played.memory.download());
        prop_assert!(picture(&log).is_none(), "the ring no longer reaches its power-up");
        let result = recover(&played.trail, &log, Some(&played.fields));
        // The trail's records take 2 bytes each, with a margin for the presses among them.
        let trail_bytes = 8 * trail_len(&played.trail) + 16;
        if played.bytes_after_cut > 0x1F00 {
            prop_assert!(result.is_err(), "the host's last change was overwritten: {result:?}");
        } else if played.bytes_after_cut + trail_bytes < 0x1F00
            && trail_len(&played.trail) >= 8
            && !played.split_last_run
        {
            let recovery = result.map_err(|r| TestCaseError::fail(format!("refused: {r}")))?;
            prop_assert_eq!(plain(&recovery.records), played.expected.clone());
        } else if let Ok(recovery) = result {
            prop_assert_eq!(plain(&recovery.records), played.expected.clone());
        }
    }

    /// A power-up inside the gap with the pieces as they stood: read through, the exact
    /// records (the pieces it lists are no moves), unless the next record places a piece on
    /// an empty field (it could be the list's last): then exact or refused. With a piece
    /// moved while the board was off: always refused.
    #[test]
    fn a_power_up_inside_the_gap_is_read_through_or_refused(
        deeds in prop::collection::vec(deed(), 20..200),
        cut in 10usize..20,
        after in 0usize..100,
        moved in any::<bool>(),
    ) {
        let power_up = (cut + after).min(deeds.len() - 1);
        let kind = if moved { PowerUp::Moved } else { PowerUp::Unmoved };
        let mut played = play(&deeds, cut, Some((power_up, kind)));
        let log = EepromLog::decode(&played.memory.download());
        prop_assume!(trail_len(&played.trail) >= 8);
        let result = recover(&played.trail, &log, None);
        match kind {
            PowerUp::Moved => prop_assert!(result.is_err(), "{:?}", result),
            PowerUp::Unmoved if played.power_up_readable && !played.split_last_run => {
                let recovery = result.map_err(|r| TestCaseError::fail(format!("refused: {r}")))?;
                prop_assert_eq!(plain(&recovery.records), played.expected.clone());
            }
            PowerUp::Unmoved => {
                if let Ok(recovery) = result {
                    prop_assert_eq!(plain(&recovery.records), played.expected.clone());
                }
            }
        }
    }

    /// Random garbage written over the dump: any recovery leads to the board's real pieces
    /// (checked against its dump after the gap), and damage after the trail is never taken for
    /// a shorter gap.
    #[test]
    fn garbage_in_the_dump_never_gives_a_sequence_that_misses_the_board(
        deeds in prop::collection::vec(deed(), 20..300),
        cut in any::<prop::sample::Index>(),
        damage in prop::collection::vec((any::<prop::sample::Index>(), 0u8..0x80), 1..20),
    ) {
        let cut = cut.index(deeds.len() + 1);
        let mut played = play(&deeds, cut, None);
        let mut dump = played.memory.download();
        for (at, byte) in &damage {
            let at = at.index(dump.len());
            dump[at] = *byte;
        }
        let log = EepromLog::decode(&dump);
        if let Ok(recovery) = recover(&played.trail, &log, Some(&played.fields)) {
            let mut fields = played.trail.fields();
            for r in &recovery.records {
                if let RecoveredRecord::Field { field, piece, .. } = *r {
                    fields[usize::from(field)] = piece;
                }
            }
            prop_assert_eq!(fields, played.fields);
        }
    }

    /// The log of a board nobody has seen yet pictures it exactly while the ring still reaches
    /// back to its power-up, and not at all once it does not.
    #[test]
    fn a_log_pictures_the_board_exactly_or_not_at_all(
        deeds in prop::collection::vec(deed(), 0..5000),
    ) {
        let mut played = play(&deeds, deeds.len(), None);
        let log = EepromLog::decode(&played.memory.download());
        match picture(&log) {
            Some(fields) => prop_assert_eq!(fields, played.fields),
            // Power-up, one record per piece and the changes: 2 bytes a record at most.
            None => prop_assert!(deeds.len() > 0x1F00 / 4 - 40, "no picture"),
        }
    }

    /// Pure garbage is never taken for a log.
    #[test]
    fn a_dump_of_pure_garbage_is_refused(
        deeds in prop::collection::vec(deed(), 20..100),
        garbage in prop::collection::vec(0u8..0x80, 0..0x1F00),
    ) {
        let played = play(&deeds, deeds.len(), None);
        let log = EepromLog::decode(&garbage);
        prop_assert!(recover(&played.trail, &log, None).is_err());
    }

    /// Recovered times are in order and inside the gap.
    #[test]
    fn recovered_times_are_ordered_inside_the_gap(
        deeds in prop::collection::vec(deed(), 0..60),
        from in 0u64..1_000_000,
        length in 0u64..100_000,
        read_before in 0u64..10_000,
    ) {
        let played = play(&deeds, 0, None);
        let records = played.expected;
        let to = from + length;
        let reading = Some((from.saturating_sub(read_before), [3_600_000, 3_600_000]));
        let times = schedule(&records, from, to, reading);
        prop_assert_eq!(times.len(), records.len());
        let mut prev = from;
        for &t in &times {
            prop_assert!(t > prev);
            prev = t;
        }
        if length > 4 * records.len() as u64 + 4 {
            prop_assert!(times.last().is_none_or(|&t| t <= to), "{times:?} {to}");
        }
    }
}

#[test]
fn a_log_cut_short_pictures_nothing() {
    let mut memory = BoardMemory::blank();
    memory.power_up(&start_fields());
    memory.field_changed(12, 0, 1000);
    let mut dump = memory.download();
    let end = dump.iter().rposition(|&b| b == 0x6B).unwrap();
    dump.truncate(end);
    assert_eq!(picture(&EepromLog::decode(&dump)), None);
}

#[test]
fn a_trail_of_two_changes_is_too_short() {
    let mut trail = FieldTrail::new(start_fields());
    trail.push(12, 0);
    trail.push(28, 1);
    let mut memory = BoardMemory::blank();
    memory.power_up(&start_fields());
    let log = EepromLog::decode(&memory.download());
    assert_eq!(
        recover(&trail, &log, None),
        Err(Refusal::TrailTooShort { seen: 2 })
    );
}

/// The board switched off and on in the gap lists the field of the host's last change first,
/// with the same piece: the listing is no change the host saw, so the gap is read exactly.
#[test]
fn a_power_up_listing_the_last_field_seen_first_is_read_through() {
    let change = |field, piece| Deed::Change {
        field,
        piece,
        again: false,
        after_ms: 1000,
    };
    let deeds = [
        change(12, 0),
        change(28, 1),
        change(52, 0),
        change(36, 7),
        change(1, 0),
        change(18, 2),
        change(0, 0),
        change(0, 1),
        Deed::Press {
            left: true,
            used_ms: 4000,
        },
        change(18, 0),
        change(27, 2),
    ];
    let mut played = play(&deeds, 8, Some((8, PowerUp::Unmoved)));
    let log = EepromLog::decode(&played.memory.download());
    let recovery = recover(&played.trail, &log, None).expect("read through the power-up");
    assert_eq!(plain(&recovery.records), played.expected);
    assert_eq!(played.expected.len(), 3, "{:?}", played.expected);
}

#[test]
fn a_log_of_another_game_is_not_found() {
    let played = play(
        &[
            Deed::Change {
                field: 12,
                piece: 0,
                again: false,
                after_ms: 1000,
            },
            Deed::Change {
                field: 28,
                piece: 1,
                again: false,
                after_ms: 1000,
            },
            Deed::Change {
                field: 52,
                piece: 0,
                again: false,
                after_ms: 1000,
            },
            Deed::Change {
                field: 36,
                piece: 7,
                again: false,
                after_ms: 1000,
            },
        ],
        4,
        None,
    );
    let mut other = BoardMemory::blank();
    other.power_up(&start_fields());
    other.field_changed(11, 0, 1000);
    other.field_changed(27, 1, 2000);
    let log = EepromLog::decode(&other.download());
    assert_eq!(recover(&played.trail, &log, None), Err(Refusal::NotFound));
}

/// The data bytes of a hand-written log fixture (hex bytes, `#` comments).
fn hand_written(name: &str) -> Vec<u8> {
    let path = format!("{}/fixtures/eeprom-logs/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .flat_map(|line| line.split('#').next().unwrap_or("").split_whitespace())
        .map(|hex| u8::from_str_radix(hex, 16).unwrap_or_else(|e| panic!("{path}: {hex}: {e}")))
        .collect()
}

fn field(field: u8, piece: u8, quick: bool) -> EepromRecord {
    EepromRecord::FieldChange {
        field,
        piece,
        quick,
    }
}

fn time(side: ClockSide, minutes: u8, seconds: u8) -> EepromRecord {
    EepromRecord::ClockTime {
        side,
        hours: 0,
        minutes,
        seconds,
    }
}

/// The fixtures' position before 1.e4: White Ke1 Ra1 e2, Black Ke8 d7 Nb8.
fn fixture_start() -> [u8; 64] {
    let mut fields = [0; 64];
    for (f, piece) in [(60, 5), (4, 0x0B), (56, 2), (52, 1), (11, 7), (1, 9)] {
        fields[f] = piece;
    }
    fields
}

/// What the host saw of 1.e4 d5 2.exd5 and White's press after it, as field updates.
fn fixture_trail() -> FieldTrail {
    let mut trail = FieldTrail::new(fixture_start());
    for (f, piece) in [
        (52, 0),
        (36, 1),
        (11, 0),
        (27, 7),
        (36, 0),
        (27, 0),
        (27, 1),
    ] {
        trail.push(f, piece);
        if (f, piece) == (36, 1) || (f, piece) == (27, 7) {
            trail.pressed();
        }
    }
    trail.pressed();
    trail
}

/// The hand-written log decodes record by record as the document lays them out.
#[test]
fn a_hand_written_log_decodes_as_the_document_says() {
    let log = EepromLog::decode(&hand_written("moves-and-a-download.hex"));
    assert_eq!(log.end, LogEnd::EndOfLog);
    let records: Vec<EepromRecord> = log.entries.iter().map(|e| e.record).collect();
    let (left, right) = (ClockSide::Left, ClockSide::Right);
    assert_eq!(
        records,
        vec![
            EepromRecord::PowerUp,
            field(60, 5, false),
            field(4, 0x0B, false),
            field(56, 2, false),
            field(52, 1, false),
            field(11, 7, false),
            field(1, 9, false),
            field(52, 0, false),
            field(36, 1, false),
            time(left, 4, 58),
            field(11, 0, false),
            field(27, 7, false),
            time(right, 4, 55),
            field(36, 0, false),
            field(27, 1, true),
            time(left, 4, 50),
            EepromRecord::Downloaded,
            field(1, 0, false),
            field(18, 9, false),
            time(right, 4, 49),
        ]
    );
    assert_eq!(picture(&log), {
        let mut fields = fixture_start();
        for (f, piece) in [(52, 0), (11, 0), (36, 0), (27, 1), (1, 0), (18, 9)] {
            fields[f] = piece;
        }
        Some(fields)
    });
}

/// The host saw up to 2.exd5 (the capture's two changes of d5 folded, as the board
/// overwrote them) and White's press: the log gives 2...Nc6 and Black's press, past the
/// DOWNLOADED tag, and nothing else.
#[test]
fn the_gap_of_a_hand_written_log_is_recovered_past_a_download_tag() {
    let log = EepromLog::decode(&hand_written("moves-and-a-download.hex"));
    let recovery = recover(&fixture_trail(), &log, None).unwrap();
    assert_eq!(
        recovery.records,
        vec![
            RecoveredRecord::Field {
                field: 1,
                piece: 0,
                quick: false
            },
            RecoveredRecord::Field {
                field: 18,
                piece: 9,
                quick: false
            },
            RecoveredRecord::Press {
                halted: ClockSide::Right,
                remaining_ms: 289_000
            },
        ]
    );
}

/// The board switched off and on in the gap with nothing moved: its power-up records list
/// the pieces, which are no moves; 3.Ke2 after them is.
#[test]
fn a_hand_written_power_cycle_is_read_through() {
    assert_eq!(
        recovered_fields("power-cycle.hex"),
        [(1, 0), (18, 9), (60, 0), (52, 5)]
    );
}

/// The board switched off and on while a piece was in the hand: the piece put down just after
/// the power-up's list of pieces reads like one more record of the list, but the list already
/// holds the whole board, so it is the move's placement: 2...Nc6 and 3.Ke2, exactly.
#[test]
fn a_hand_written_power_cycle_with_a_piece_in_the_hand_is_read_through() {
    assert_eq!(
        recovered_fields("power-cycle-piece-in-hand.hex"),
        [(1, 0), (18, 9), (60, 0), (52, 5)]
    );
}

/// The field changes recovered from the hand-written log `name` after the fixture's trail.
fn recovered_fields(name: &str) -> Vec<(u8, u8)> {
    let log = EepromLog::decode(&hand_written(name));
    recover(&fixture_trail(), &log, None)
        .unwrap()
        .records
        .iter()
        .filter_map(|r| match *r {
            RecoveredRecord::Field { field, piece, .. } => Some((field, piece)),
            RecoveredRecord::Press { .. } => None,
        })
        .collect()
}

/// A piece moved while the board was off: its power-up records show a board the log does
/// not lead to, and the log is refused.
#[test]
fn a_hand_written_power_cycle_with_a_piece_moved_is_refused() {
    let log = EepromLog::decode(&hand_written("power-cycle-moved.hex"));
    assert_eq!(
        recover(&fixture_trail(), &log, None),
        Err(Refusal::PowerUpInGap)
    );
}
