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
