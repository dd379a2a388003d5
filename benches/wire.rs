//! Decoder benchmarks and the opt-in fuzz run.
//!
//! * `cargo bench --bench wire` — throughput of the DGT decoder on a realistic stream (the
//!   real capture repeated) and on random bytes, per-message cost, and the observer.
//! * `cargo bench --bench wire -- fuzz [N]` — feeds N (default 1 000 000) random inputs of
//!   random length and chunking to the decoders and checks that nothing panics and memory
//!   stays bounded; prints the figures.

use std::hint::black_box;

use base64::Engine;
use criterion::{Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use touchmove::board::dgt::DgtObserver;
use touchmove::wire::dgt::bus::BusReplyDecoder;
use touchmove::wire::dgt::{CommandDecoder, Decoder, MAX_FRAME_LEN, Message};

const JOHAN: &str = include_str!("../fixtures/real-dgt/johan.inbytes");

fn johan_stream() -> Vec<u8> {
    let engine = base64::engine::general_purpose::STANDARD;
    JOHAN
        .lines()
        .filter_map(|l| engine.decode(l.trim()).ok())
        .flatten()
        .collect()
}

fn decode_all(stream: &[u8], chunk: usize) -> usize {
    let mut decoder = Decoder::new();
    let mut out = Vec::with_capacity(1024);
    let mut count = 0;
    for c in stream.chunks(chunk) {
        decoder.push(c, &mut out);
        count += out.len();
        out.clear();
    }
    count
}

fn benches(c: &mut Criterion) {
    let one_game = johan_stream();
    let stream: Vec<u8> = one_game.repeat(100);
    let mut group = c.benchmark_group("dgt_decoder");
    group.throughput(Throughput::Bytes(stream.len() as u64));
    for chunk in [1usize, 64, 4096] {
        group.bench_function(format!("real_stream_chunks_of_{chunk}"), |b| {
            b.iter(|| decode_all(black_box(&stream), chunk))
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let noise: Vec<u8> = (0..stream.len()).map(|_| rng.r#gen()).collect();
    group.bench_function("random_bytes_chunks_of_64", |b| {
        b.iter(|| decode_all(black_box(&noise), 64))
    });
    group.finish();

    let messages = decode_all(&one_game, 4096) as u64;
    let mut group = c.benchmark_group("dgt_per_message");
    group.throughput(Throughput::Elements(messages));
    group.bench_function("real_game_messages", |b| {
        b.iter(|| decode_all(black_box(&one_game), 64))
    });
    let mut decoded = Vec::new();
    Decoder::new().push(&one_game, &mut decoded);
    group.bench_function("observer_real_game_messages", |b| {
        b.iter(|| {
            let mut observer = DgtObserver::new();
            let mut out = Vec::with_capacity(2048);
            for (t, m) in (0u64..).zip(&decoded) {
                observer.on_message(t, m, &mut out);
            }
            out.len()
        })
    });
    group.bench_function("encode_real_game_messages", |b| {
        b.iter(|| {
            decoded
                .iter()
                .map(|m: &Message| m.encode().len())
                .sum::<usize>()
        })
    });
    group.finish();
}

/// Random inputs of random length (up to 4 KiB, sometimes a long run to exercise large
/// frames), fed in random chunks to every decoder.
fn fuzz(cases: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(0x7417_c0de);
    let start = std::time::Instant::now();
    let (mut bytes_total, mut messages, mut max_memory) = (0u64, 0u64, 0usize);
    let mut input = Vec::new();
    for case in 0..cases {
        input.clear();
        let len = if case % 1000 == 0 {
            rng.gen_range(0..40_000)
        } else {
            rng.gen_range(0..4096)
        };
        // Bias towards protocol-like bytes: headers and small data values.
        let style = rng.gen_range(0..3);
        input.extend((0..len).map(|_| match style {
            0 => rng.r#gen::<u8>(),
            1 => {
                if rng.gen_ratio(1, 20) {
                    0x80 | rng.gen_range(0..0x30)
                } else {
                    rng.gen_range(0..0x80)
                }
            }
            _ => [0x8E, 0x8D, 0x86, 0x00, 0x05, 0x0A, 0x43, 0x7F][rng.gen_range(0..8)],
        }));
        let mut decoder = Decoder::new();
        let mut commands = CommandDecoder::new();
        let mut bus = BusReplyDecoder::new();
        let (mut out, mut cmd_out, mut bus_out) = (Vec::new(), Vec::new(), Vec::new());
        let mut rest = &input[..];
        while !rest.is_empty() {
            let n = rng.gen_range(1..=rest.len().min(300));
            let (chunk, tail) = rest.split_at(n);
            decoder.push(chunk, &mut out);
            commands.push(chunk, &mut cmd_out);
            bus.push(chunk, &mut bus_out);
            max_memory = max_memory.max(decoder.memory_bytes());
            assert!(
                decoder.memory_bytes() <= MAX_FRAME_LEN,
                "decoder memory unbounded"
            );
            messages += out.len() as u64;
            for m in out.drain(..) {
                black_box(m.encode());
            }
            cmd_out.clear();
            bus_out.clear();
            rest = tail;
        }
        bytes_total += input.len() as u64;
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "fuzz: {cases} random inputs, {:.1} MB, {messages} messages decoded, no panic, \
         max decoder memory {max_memory} B (bound {MAX_FRAME_LEN} B), {secs:.1} s",
        bytes_total as f64 / 1e6
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "fuzz") {
        let cases = args
            .get(i + 1)
            .and_then(|n| n.parse().ok())
            .unwrap_or(1_000_000);
        fuzz(cases);
        return;
    }
    let mut criterion = Criterion::default().configure_from_args();
    benches(&mut criterion);
    criterion.final_summary();
}
