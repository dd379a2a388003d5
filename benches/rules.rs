//! Cost per ply of the legality core on real games: play (legality, SAN with suffix, UCI,
//! repetition key) plus `automatic_end` (mate, stalemate, 75 moves, fivefold, the dead-position
//! filter and, where it lets a position through, the unwinnability analysis).
//!
//! `cargo bench --bench rules`; ns/ply = reported time per iteration / plies (printed first).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use shakmaty::Move;
use touchmove::record::pgn::read_games_bytes;
use touchmove::rules::{Budget, Game, dead_position_possible};

fn real_games() -> Vec<Vec<Move>> {
    let mut games = Vec::new();
    for file in ["twic1599_1000k.pgn", "lichess_db_1000k.pgn"] {
        let path = format!("{}/fixtures/pgn/{file}", env!("CARGO_MANIFEST_DIR"));
        let bytes = std::fs::read(&path).expect("fixture");
        for record in read_games_bytes(&bytes).expect("fixture replays") {
            if record.start_fen.is_some() {
                continue;
            }
            let game = record.to_game().expect("fixture replays");
            games.push(game.moves().iter().map(|m| m.mv).collect());
        }
    }
    games
}

fn replay(games: &[Vec<Move>], budget: &Budget) -> usize {
    let mut ends = 0;
    for moves in games {
        let mut game = Game::standard();
        for &mv in moves {
            game.play(mv).expect("legal");
            if game.automatic_end(budget).is_some() {
                ends += 1;
            }
        }
    }
    ends
}

fn bench(c: &mut Criterion) {
    let games = real_games();
    let plies: usize = games.iter().map(Vec::len).sum();
    let mut analysed = 0;
    for moves in &games {
        let mut game = Game::standard();
        for &mv in moves {
            game.play(mv).expect("legal");
            analysed += usize::from(dead_position_possible(game.position()));
        }
    }
    println!(
        "{} games, {plies} plies; the dead-position filter sends {analysed} plies ({:.1}%) to the analysis",
        games.len(),
        100.0 * analysed as f64 / plies as f64
    );
    let mut group = c.benchmark_group("rules");
    group.throughput(Throughput::Elements(plies as u64));
    group.sample_size(10);
    group.bench_function("play+automatic_end, static tier only", |b| {
        b.iter(|| black_box(replay(&games, &Budget::static_only())))
    });
    group.bench_function("play+automatic_end, 1000 ms budget", |b| {
        b.iter(|| black_box(replay(&games, &Budget::millis(1000))))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
