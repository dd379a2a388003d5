//! Property tests of recovering missed changes from the board's EEPROM log: whatever the gap,
//! the wrap of the ring, a power-up inside the gap, overwritten records or garbage, the answer
//! is either exactly the records the board wrote after the last change the host saw, or a
//! refusal — never a wrong sequence.

use proptest::prelude::*;
use touchmove::board::log_recovery::{
    FieldTrail, MIN_MATCH, RecoveredRecord, Refusal, picture, recover, schedule,
};
use touchmove::sim::virtual_board::memory::BoardMemory;
use touchmove::wire::dgt::{ClockSide, EepromLog};

/// Something that happens on the board.
#[derive(Debug, Clone, Copy)]
enum Deed {
    /// Change a field: pick it (the same as the last one when `again`) and a piece.
    Change { field: u8, piece: u8, again: bool },
    /// Press the lever.
    Press { left: bool, used_ms: u64 },
}

fn deed() -> impl Strategy<Value = Deed> {
    prop_oneof![
        6 => (0u8..64, 0u8..13, prop::bool::weighted(0.25))
            .prop_map(|(field, piece, again)| Deed::Change { field, piece, again }),
        1 => (any::<bool>(), 0u64..20_000).prop_map(|(left, used_ms)| Deed::Press { left, used_ms }),
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
}

fn start_fields() -> [u8; 64] {
    let mut fields = [0; 64];
    for f in 0..16 {
        fields[f] = 1 + (f % 6) as u8;
        fields[63 - f] = 7 + (f % 6) as u8;
    }
    fields
}

fn play(deeds: &[Deed], cut: usize, power_up_in_gap: Option<usize>) -> Played {
    let mut memory = BoardMemory::blank();
    let mut fields = start_fields();
    memory.power_up(&fields);
    let mut written: Vec<RecoveredRecord> = Vec::new();
    let mut trail = FieldTrail::new(fields);
    let mut last_field: Option<u8> = None;
    let mut boundary: Option<(usize, Option<RecoveredRecord>)> = None;
    let mut remaining = [3_600_000u64, 3_600_000];
    let mut t_ms = 0;
    for (i, d) in deeds.iter().enumerate() {
        if i == cut {
            boundary = Some((written.len(), written.last().copied()));
        }
        if power_up_in_gap == Some(i) && i >= cut {
            memory.power_up(&fields);
            // The oracle cannot say anything after a power-up: refusals are expected.
            last_field = None;
        }
        t_ms += 1000;
        match *d {
            Deed::Change {
                field,
                piece,
                again,
            } => {
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
                *slot = piece;
                memory.field_changed(field, piece, t_ms);
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
        }
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
                prop_assert!(trail_len(&played.trail) < 8, "refused: {refusal}");
            }
        }
    }

    /// A ring that wrapped: exact or refused; a host whose last change was overwritten by the
    /// wrap is always refused.
    #[test]
    fn a_wrapped_ring_is_recovered_exactly_or_refused(
        deeds in prop::collection::vec(deed(), 3000..5000),
        gap in 0usize..4000,
    ) {
        let cut = deeds.len().saturating_sub(gap);
        let mut played = play(&deeds, cut, None);
        let log = EepromLog::decode(&played.memory.download());
        if let Ok(recovery) = recover(&played.trail, &log, Some(&played.fields)) {
            prop_assert_eq!(plain(&recovery.records), played.expected.clone());
        }
        // The gap alone takes more bytes than the ring has: the trail cannot be in it.
        if played.expected.len() * 2 > 0x1F00 {
            prop_assert!(recover(&played.trail, &log, None).is_err());
        }
    }

    /// A power-up inside the gap: always refused.
    #[test]
    fn a_power_up_inside_the_gap_is_refused(
        deeds in prop::collection::vec(deed(), 20..200),
        cut in 10usize..20,
        after in 0usize..100,
    ) {
        let power_up = (cut + after).min(deeds.len() - 1);
        let mut played = play(&deeds, cut, Some(power_up));
        let log = EepromLog::decode(&played.memory.download());
        prop_assume!(trail_len(&played.trail) >= MIN_MATCH);
        let result = recover(&played.trail, &log, None);
        prop_assert!(result.is_err(), "{:?}", result);
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

#[test]
fn a_log_of_another_game_is_not_found() {
    let played = play(
        &[
            Deed::Change {
                field: 12,
                piece: 0,
                again: false,
            },
            Deed::Change {
                field: 28,
                piece: 1,
                again: false,
            },
            Deed::Change {
                field: 52,
                piece: 0,
                again: false,
            },
            Deed::Change {
                field: 36,
                piece: 7,
                again: false,
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
