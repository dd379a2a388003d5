//! Journal: append and read back, reopen, batches, sessions on one timeline, and the failures
//! a recorder must tell apart (locked, damaged, not a journal, disk full).

use touchmove::act::{Alert, Event, Severity};
use touchmove::board::ColorName;
use touchmove::record::arbiter::{ArbiterAction, ArbiterRequest};
use touchmove::store::{
    BoardKey, GameBoundary, Journal, NewEntry, Record, Session, continuous_times,
};

fn board(round: u32, number: u32) -> BoardKey {
    BoardKey::Pairing {
        round,
        board: number,
    }
}

fn sample_event(ply: u32) -> Event {
    Event::Move {
        ply,
        uci: "e2e4".into(),
        san: "e4".into(),
        t_ms: 1234,
        side: ColorName::White,
        fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
    }
}

fn sample_request() -> ArbiterRequest {
    ArbiterRequest {
        who: "IA Jane".into(),
        board: 2,
        action: ArbiterAction::AdjustTime {
            side: ColorName::Black,
            delta_ms: -60_000,
        },
        key: None,
    }
}

#[test]
fn appends_read_back_in_order_per_board() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event.journal");
    let mut j = Journal::open(&path).unwrap();
    let (a, b) = (board(1, 1), BoardKey::Port("/dev/ttyACM0".into()));
    let s1 = j.append_bytes(&a, 10, &[0x8e, 0x00, 0x05]).unwrap();
    let s2 = j.append_bytes(b.clone(), 11, &[0x01]).unwrap();
    let s3 = j.append_event(&a, 12, &sample_event(1)).unwrap();
    let s4 = j.append_bytes(&a, 13, &[0x0c, 0x01]).unwrap();
    let s5 = j.append_arbiter(&a, 14, &sample_request()).unwrap();
    assert!(s1 < s2 && s2 < s3 && s3 < s4 && s4 < s5);
    assert_eq!(j.last_seq().unwrap(), s5);
    assert_eq!(j.boards().unwrap(), vec![a.clone(), b.clone()]);
    let chunks = j.bytes(&a).unwrap();
    assert_eq!(
        chunks
            .iter()
            .map(|c| (c.seq, c.t_ms, c.value.clone()))
            .collect::<Vec<_>>(),
        vec![(s1, 10, vec![0x8e, 0, 5]), (s4, 13, vec![0x0c, 0x01])]
    );
    assert_eq!(j.bytes_after(&a, s1).unwrap().len(), 1);
    assert_eq!(j.events(&a).unwrap()[0].value, sample_event(1));
    assert!(j.events(&b).unwrap().is_empty());
    assert!(j.bytes(&board(9, 9)).unwrap().is_empty());
    let actions = j.arbiter_actions().unwrap();
    assert_eq!((actions[0].seq, &actions[0].value), (s5, &sample_request()));
    let all = j.entries_after(s2).unwrap();
    assert_eq!(
        all.iter().map(|e| e.seq).collect::<Vec<_>>(),
        vec![s3, s4, s5]
    );
    assert_eq!(all[2].board, Some(a.clone()));
    assert_eq!(j.board_entries(&a, 0).unwrap().len(), 4);
}

#[test]
fn everything_survives_reopening_and_each_writer_is_a_new_session() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j.sqlite");
    let a = board(3, 12);
    let alert = Event::Alert(Alert {
        article: "7.5.1".into(),
        side: Some(ColorName::Black),
        ply: 7,
        t_ms: 99,
        evidence_ms: vec![90, 95],
        squares: vec!["e5".into()],
        severity: Severity::Critical,
        message: "illegal move".into(),
        gap: None,
        withdraws: vec![],
        before_game: false,
    });
    {
        let mut j = Journal::open(&path).unwrap();
        j.begin_session(1_000_000).unwrap();
        j.append_boundary(
            &a,
            0,
            &GameBoundary::Started {
                game: "r3b12".into(),
            },
        )
        .unwrap();
        j.append_bytes(&a, 5, b"abc").unwrap();
        j.append_event(&a, 99, &alert).unwrap();
        j.append_metadata(None, 1, "config", &serde_json::json!({"round": 3}))
            .unwrap();
    }
    let mut j = Journal::open(&path).unwrap();
    j.begin_session(1_060_000).unwrap();
    j.append_bytes(&a, 2, b"def").unwrap();
    let sessions = j.sessions().unwrap();
    assert_eq!(
        sessions,
        vec![
            Session {
                id: 1,
                started_unix_ms: 1_000_000
            },
            Session {
                id: 2,
                started_unix_ms: 1_060_000
            }
        ]
    );
    let chunks = j.bytes(&a).unwrap();
    assert_eq!(
        chunks.iter().map(|c| c.session).collect::<Vec<_>>(),
        vec![1, 2]
    );
    assert_eq!(j.events(&a).unwrap()[0].value, alert);
    assert_eq!(
        j.boundaries(&a).unwrap()[0].value,
        GameBoundary::Started {
            game: "r3b12".into()
        }
    );
    let meta = j.entries_after(0).unwrap();
    assert!(meta.iter().any(|e| e.record
        == Record::Metadata {
            key: "config".into(),
            value: serde_json::json!({"round": 3})
        }));
    j.check_integrity().unwrap();
    // A reader sees the same while the writer holds the journal.
    let reader = Journal::open_read_only(&path).unwrap();
    assert_eq!(reader.bytes(&a).unwrap(), chunks);
}

#[test]
fn append_all_commits_together_and_returns_sequence_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let mut j = Journal::open(dir.path().join("j")).unwrap();
    let a = board(1, 4);
    let entries: Vec<NewEntry> = (0..50)
        .map(|i| NewEntry {
            board: Some(a.clone()),
            t_ms: i,
            record: Record::Bytes(vec![i as u8; 3]),
        })
        .chain([NewEntry {
            board: None,
            t_ms: 60,
            record: Record::Arbiter(sample_request()),
        }])
        .collect();
    let seqs = j.append_all(&entries).unwrap();
    assert_eq!(seqs.len(), 51);
    assert!(seqs.windows(2).all(|w| w[0] < w[1]));
    let back = j.entries_after(0).unwrap();
    assert_eq!(
        back.iter()
            .map(|e| NewEntry {
                board: e.board.clone(),
                t_ms: e.t_ms,
                record: e.record.clone()
            })
            .collect::<Vec<_>>(),
        entries
    );
}

#[test]
fn a_second_writer_is_refused_while_the_first_holds_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let first = Journal::open(&path).unwrap();
    let err = Journal::open(&path).err().expect("second writer must fail");
    assert!(err.is_locked(), "{err}");
    assert!(err.to_string().contains("another recorder"), "{err}");
    assert!(Journal::open_read_only(&path).is_ok());
    drop(first);
    assert!(Journal::open(&path).is_ok());
}

#[test]
fn garbage_and_foreign_databases_are_refused_with_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage");
    std::fs::write(&garbage, vec![0x42u8; 8192]).unwrap();
    let err = Journal::open(&garbage).err().unwrap();
    assert!(err.is_corrupt(), "{err}");
    assert!(err.to_string().contains("damaged"), "{err}");
    assert_eq!(std::fs::read(&garbage).unwrap(), vec![0x42u8; 8192]);

    let foreign = dir.path().join("foreign.db");
    let conn = rusqlite::Connection::open(&foreign).unwrap();
    conn.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        .unwrap();
    drop(conn);
    let err = Journal::open(&foreign).err().unwrap();
    assert!(err.is_corrupt() && err.to_string().contains("not a touchmove journal"));

    let missing = dir.path().join("missing");
    let err = Journal::open_read_only(&missing).err().unwrap();
    assert!(err.to_string().contains("does not exist"), "{err}");
    let err = Journal::open(dir.path().join("no/such/dir/j"))
        .err()
        .unwrap();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn a_damaged_page_is_reported_as_corruption() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    {
        let mut j = Journal::open(&path).unwrap();
        for i in 0..400u64 {
            j.append_bytes(board(1, 1), i, &[7u8; 200]).unwrap();
        }
        // Move everything from the write-ahead log into the main file.
        drop(j);
    }
    let mut bytes = std::fs::read(&path).unwrap();
    assert!(bytes.len() > 16 * 4096, "{}", bytes.len());
    for b in &mut bytes[4096 * 3..4096 * 12] {
        *b = 0xa5;
    }
    std::fs::write(&path, &bytes).unwrap();
    let result = Journal::open_read_only(&path).and_then(|j| {
        j.check_integrity()?;
        j.bytes(&board(1, 1)).map(|_| ())
    });
    let err = result.expect_err("damaged pages must be noticed");
    assert!(err.is_corrupt(), "{err}");
}

#[test]
fn a_full_disk_stops_appends_and_keeps_what_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("j");
    let mut j = Journal::open(&path).unwrap();
    j.limit_size(64 * 1024).unwrap();
    let a = board(2, 5);
    let mut acknowledged = Vec::new();
    let err = loop {
        let i = acknowledged.len() as u64;
        match j.append_bytes(&a, i, &[i as u8; 500]) {
            Ok(seq) => acknowledged.push((seq, i)),
            Err(e) => break e,
        }
        assert!(acknowledged.len() < 10_000, "the size limit never hit");
    };
    assert!(err.is_disk_full(), "{err}");
    assert!(err.to_string().contains("disk is full"), "{err}");
    assert!(!acknowledged.is_empty());
    // Appends that do not fit keep failing the same way; reads still work.
    let again = j.append_bytes(&a, 1, &[1u8; 5000]).err().unwrap();
    assert!(again.is_disk_full(), "{again}");
    let batch = j
        .append_all(&[NewEntry {
            board: Some(a.clone()),
            t_ms: 1,
            record: Record::Bytes(vec![0; 5000]),
        }])
        .err()
        .unwrap();
    assert!(batch.is_disk_full(), "{batch}");
    drop(j);
    let j = Journal::open_read_only(&path).unwrap();
    let back = j.bytes(&a).unwrap();
    assert_eq!(
        back.iter().map(|c| (c.seq, c.t_ms)).collect::<Vec<_>>(),
        acknowledged
    );
    assert!(back.iter().all(|c| c.value == vec![c.t_ms as u8; 500]));
}

#[test]
fn board_keys_round_trip_and_bad_ones_are_explained() {
    for text in ["3.12", "serial:12345", "port:/dev/ttyACM0"] {
        let key: BoardKey = text.parse().unwrap();
        assert_eq!(key.to_string(), text);
        let json = serde_json::to_string(&key).unwrap();
        assert_eq!(serde_json::from_str::<BoardKey>(&json).unwrap(), key);
    }
    assert_eq!("3.12".parse::<BoardKey>().unwrap(), board(3, 12));
    for bad in ["12", "3.x", "serial:", "3.-1", "", "a.b"] {
        let err = bad.parse::<BoardKey>().unwrap_err();
        assert!(err.to_string().contains("ROUND.BOARD"), "{err}");
    }
}

#[test]
fn sessions_are_placed_on_one_non_decreasing_timeline() {
    let sessions = [
        Session {
            id: 1,
            started_unix_ms: 10_000,
        },
        Session {
            id: 2,
            started_unix_ms: 70_000,
        },
        // Wall clock set back before the third run.
        Session {
            id: 3,
            started_unix_ms: 5_000,
        },
    ];
    let times = continuous_times(
        &sessions,
        [(1, 0), (1, 500), (2, 0), (2, 100), (3, 0), (3, 40)],
    );
    assert_eq!(times, vec![0, 500, 60_000, 60_100, 60_100, 60_140]);
}

#[test]
fn a_simulations_journal_writes_its_file_directly_and_reopens_with_its_write_ahead_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event.journal");
    let wal = dir.path().join("event.journal-wal");
    let wal_bytes = || std::fs::metadata(&wal).map_or(0, |m| m.len());
    let a = board(1, 1);
    {
        let mut j = Journal::open(&path).unwrap();
        j.without_disk_syncs().unwrap();
        for t in 0..50 {
            j.append_bytes(&a, t, &[0x8e, 0x00, t as u8]).unwrap();
        }
        assert_eq!(wal_bytes(), 0, "the commits went through a write-ahead log");
    }
    // Opened again for writing (a recorder restarted for real), the journal keeps every
    // entry and logs ahead again.
    let mut j = Journal::open(&path).unwrap();
    assert_eq!(j.bytes(&a).unwrap().len(), 50);
    j.append_bytes(&a, 50, &[1]).unwrap();
    assert!(wal_bytes() > 0, "no write-ahead log after a real open");
    drop(j);
    let read = Journal::open_read_only(&path).unwrap();
    let times: Vec<u64> = read.bytes(&a).unwrap().iter().map(|c| c.t_ms).collect();
    assert_eq!(times, (0..=50).collect::<Vec<u64>>());
}

/// A simulation's journal keeps its appends in one open transaction: they read back at once,
/// and a journal dropped without being closed (the simulation's `kill -9`) has them on disk,
/// past the transaction's bound and with new boards and batches among them.
#[test]
fn a_simulations_journal_dropped_unclosed_keeps_every_append() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event.journal");
    let (a, b) = (board(1, 1), board(1, 2));
    let mut expected = Vec::new();
    {
        let mut j = Journal::open(&path).unwrap();
        j.without_disk_syncs().unwrap();
        for t in 0..2_500u64 {
            let byte = (t % 251) as u8;
            if t % 100 == 7 {
                let batch = [
                    NewEntry {
                        board: Some(b.clone()),
                        t_ms: t,
                        record: Record::Bytes(vec![byte]),
                    },
                    NewEntry {
                        board: Some(b.clone()),
                        t_ms: t,
                        record: Record::Event(sample_event(t as u32)),
                    },
                ];
                j.append_all(&batch).unwrap();
                expected.push((b.clone(), t));
            } else {
                j.append_bytes(&a, t, &[byte]).unwrap();
                expected.push((a.clone(), t));
            }
        }
        assert_eq!(
            j.last_seq().unwrap(),
            2_525,
            "an append not read back at once"
        );
    }
    let read = Journal::open_read_only(&path).unwrap();
    let mut got = Vec::new();
    for key in [&a, &b] {
        for chunk in read.bytes(key).unwrap() {
            assert_eq!(chunk.value, vec![(chunk.t_ms % 251) as u8]);
            got.push((chunk.seq, (key.clone(), chunk.t_ms)));
        }
    }
    got.sort();
    let got: Vec<(BoardKey, u64)> = got.into_iter().map(|(_, entry)| entry).collect();
    assert_eq!(got, expected, "appends lost or reordered when dropped");
    assert_eq!(read.events(&b).unwrap().len(), 25);
}
