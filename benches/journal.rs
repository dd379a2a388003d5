//! Journal throughput on this disk with `synchronous=FULL`: one durable commit per append,
//! batches of 64 entries per commit, and 64 concurrent appends through the shared journal's
//! group commit. Run with `cargo bench --bench journal`; the time per
//! iteration is the time per acknowledged append (or per batch).

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use touchmove::act::Event;
use touchmove::store::{BoardKey, Journal, NewEntry, Record, SharedJournal};

/// A typical DGT chunk: a field update and a clock message.
const CHUNK: [u8; 15] = [
    0x8e, 0x00, 0x05, 0x34, 0x00, 0x8d, 0x00, 0x0a, 0x20, 0x04, 0x59, 0x20, 0x05, 0x18, 0x13,
];

fn journal(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut j = Journal::open(dir.path().join("bench.journal")).expect("journal");
    let board = BoardKey::Pairing { round: 1, board: 1 };
    let mut t = 0u64;

    let mut group = c.benchmark_group("journal");
    group.throughput(Throughput::Elements(1));
    group.bench_function("append_bytes (fsync each)", |b| {
        b.iter(|| {
            t += 1;
            j.append_bytes(&board, t, &CHUNK).expect("append")
        })
    });
    let event = Event::Move {
        ply: 31,
        uci: "g1f3".into(),
        san: "Nf3".into(),
        t_ms: 0,
        side: touchmove::board::ColorName::White,
        fen: "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 2 2".into(),
    };
    group.bench_function("append_event (fsync each)", |b| {
        b.iter(|| {
            t += 1;
            j.append_event(&board, t, &event).expect("append")
        })
    });
    group.throughput(Throughput::Elements(64));
    group.bench_function("append_all 64 chunks (one fsync)", |b| {
        b.iter_batched(
            || {
                (0..64)
                    .map(|k| NewEntry {
                        board: Some(BoardKey::Pairing {
                            round: 1,
                            board: 1 + k % 8,
                        }),
                        t_ms: u64::from(k),
                        record: Record::Bytes(CHUNK.to_vec()),
                    })
                    .collect::<Vec<_>>()
            },
            |entries| j.append_all(&entries).expect("append"),
            BatchSize::SmallInput,
        )
    });
    drop(j);

    // 64 boards appending at the same moment through the shared journal's group commit.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let shared =
        SharedJournal::new(Journal::open(dir.path().join("shared.journal")).expect("journal"));
    group.bench_function("SharedJournal 64 concurrent appends (group commit)", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let tasks: Vec<_> = (0..64u32)
                    .map(|k| {
                        let shared = shared.clone();
                        tokio::spawn(async move {
                            let board = BoardKey::Pairing { round: 1, board: k };
                            shared.append_bytes(board, 0, CHUNK.to_vec()).await
                        })
                    })
                    .collect();
                for task in tasks {
                    task.await.expect("task").expect("append");
                }
            })
        })
    });
    group.finish();
}

criterion_group!(benches, journal);
criterion_main!(benches);
