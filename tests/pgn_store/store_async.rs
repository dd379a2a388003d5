//! The shared journal under many tokio tasks: every acknowledged append is there, once, and
//! each board's entries keep the order its task appended them in.

use touchmove::act::Event;
use touchmove::store::{BoardKey, Journal, NewEntry, Record, SharedJournal};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_tasks_append_without_loss_or_reordering() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("async.journal");
    let shared = SharedJournal::new(Journal::open(&path).unwrap());
    let mut tasks = Vec::new();
    for b in 1..=8u32 {
        let shared = shared.clone();
        tasks.push(tokio::spawn(async move {
            let key = BoardKey::Pairing { round: 1, board: b };
            let mut seqs = Vec::new();
            for i in 0..25u64 {
                let seq = if i % 10 == 9 {
                    let event = Event::Clock {
                        white_ms: i,
                        black_ms: u64::from(b),
                        ply: 0,
                        t_ms: i,
                    };
                    shared.append_event(key.clone(), i, event).await.unwrap()
                } else {
                    shared
                        .append_bytes(key.clone(), i, vec![b as u8, i as u8])
                        .await
                        .unwrap()
                };
                seqs.push(seq);
            }
            let batch = (0..5)
                .map(|k| NewEntry {
                    board: Some(key.clone()),
                    t_ms: 100 + k,
                    record: Record::Bytes(vec![b as u8, 0xff]),
                })
                .collect();
            seqs.extend(shared.append_all(batch).await.unwrap());
            (key, seqs)
        }));
    }
    let mut all_seqs = Vec::new();
    for task in tasks {
        let (key, seqs) = task.await.unwrap();
        assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{key}: {seqs:?}");
        let journal = shared.lock();
        let entries = journal.board_entries(&key, 0).unwrap();
        assert_eq!(entries.iter().map(|e| e.seq).collect::<Vec<_>>(), seqs);
        all_seqs.extend(seqs);
    }
    all_seqs.sort_unstable();
    all_seqs.dedup();
    assert_eq!(all_seqs.len(), 8 * 30);
    assert_eq!(shared.lock().last_seq().unwrap(), *all_seqs.last().unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unstorable_entry_fails_alone_within_a_group() {
    let dir = tempfile::tempdir().unwrap();
    let shared = SharedJournal::new(Journal::open(dir.path().join("j")).unwrap());
    let key = BoardKey::Serial("1".into());
    let mut pending = Vec::new();
    for i in 0..200u64 {
        let shared = shared.clone();
        let key = key.clone();
        // u64::MAX does not fit SQLite's signed integers.
        let t_ms = if i == 100 { u64::MAX } else { i };
        pending.push(tokio::spawn(async move {
            shared.append_bytes(key, t_ms, vec![i as u8]).await
        }));
    }
    let mut stored = 0;
    for (i, task) in pending.into_iter().enumerate() {
        match task.await.unwrap() {
            Ok(_) => stored += 1,
            Err(e) => {
                assert_eq!(i, 100, "{e}");
                assert!(
                    e.to_string().contains("beyond SQLite's integer range"),
                    "{e}"
                );
            }
        }
    }
    assert_eq!(stored, 199);
    assert_eq!(shared.lock().bytes(&key).unwrap().len(), 199);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_journal_fails_every_waiting_append_as_disk_full() {
    let dir = tempfile::tempdir().unwrap();
    let mut journal = Journal::open(dir.path().join("j")).unwrap();
    journal.limit_size(48 * 1024).unwrap();
    let shared = SharedJournal::new(journal);
    let key = BoardKey::Pairing { round: 1, board: 1 };
    let mut failures = 0;
    for i in 0..200u64 {
        match shared.append_bytes(key.clone(), i, vec![0; 1000]).await {
            Ok(_) => assert_eq!(failures, 0, "an append succeeded after the disk was full"),
            Err(e) => {
                assert!(e.is_disk_full(), "{e}");
                failures += 1;
            }
        }
    }
    assert!(failures > 100, "{failures}");
    let kept = shared.lock().bytes(&key).unwrap().len();
    assert_eq!(kept as u64, 200 - failures);
}
