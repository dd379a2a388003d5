//! The labelled dead-position set (chasolver's community test positions, `fixtures/dead/`):
//! the unwinnability analysis agrees with every label it determines, leaves at most 1%
//! undetermined, and the cheap filter of `Game::automatic_end` lets every dead position through
//! to the analysis.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use shakmaty::{Chess, Position};
use touchmove::rules::parse_position;
use touchmove::rules::{
    Budget, FEW_MOVES, Winnability, dead_position_possible, insufficient_material,
};

struct Labelled {
    line: usize,
    fen: String,
    white: bool,
    black: bool,
}

fn labelled_positions() -> Vec<Labelled> {
    let path = format!(
        "{}/fixtures/dead/cha-positions.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let (label, fen) = l.split_once(' ').unwrap();
            Labelled {
                line: i + 1,
                fen: fen.trim().to_string(),
                white: label.starts_with('W'),
                black: label.ends_with('B'),
            }
        })
        .collect()
}

#[test]
fn every_dead_position_passes_the_cheap_filter() {
    let mut skipped = Vec::new();
    let mut dead = 0;
    for item in labelled_positions() {
        if item.white || item.black {
            continue;
        }
        dead += 1;
        let pos: Chess = parse_position(&item.fen).unwrap();
        if !(insufficient_material(&pos)
            || dead_position_possible(&pos)
            || pos.legal_moves().len() <= FEW_MOVES)
        {
            skipped.push(format!("line {}: {}", item.line, item.fen));
        }
    }
    assert_eq!(dead, 1157);
    assert!(
        skipped.is_empty(),
        "dead positions automatic_end would skip: {skipped:#?}"
    );
}

#[test]
fn analysis_agrees_with_every_label_it_determines() {
    let items = labelled_positions();
    assert_eq!(items.len(), 3414);
    // The default budget of the CLI (CPU time, so the answers do not depend on machine load);
    // the work is shared by as many threads as there are cores.
    let budget = Budget::cpu_millis(1000);
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let pos = parse_position(&item.fen).unwrap();
                    let start = Instant::now();
                    let answer = Winnability::of(&pos, &budget);
                    results
                        .lock()
                        .unwrap()
                        .push((item.line, answer, start.elapsed()));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|r| std::cmp::Reverse(r.2));
    let mut undetermined = 0;
    let mut wrong = Vec::new();
    for (line, answer, _) in &results {
        let item = items.iter().find(|i| i.line == *line).unwrap();
        for (expected, got) in [
            (item.white, answer.white_can_checkmate),
            (item.black, answer.black_can_checkmate),
        ] {
            match got {
                None => undetermined += 1,
                Some(g) if g != expected => wrong.push(format!("line {line}: {}", item.fen)),
                Some(_) => {}
            }
        }
    }
    let total: Duration = results.iter().map(|r| r.2).sum();
    let over = |ms: u64| {
        results
            .iter()
            .filter(|r| r.2 > Duration::from_millis(ms))
            .count()
    };
    eprintln!(
        "{} positions, {} undetermined sides, {:?} wall time in analysis; over 50/100/250/500 ms: \
         {}/{}/{}/{}; slowest (line, time): {:?}",
        results.len(),
        undetermined,
        total,
        over(50),
        over(100),
        over(250),
        over(500),
        results
            .iter()
            .take(5)
            .map(|r| (r.0, r.2))
            .collect::<Vec<_>>()
    );
    assert!(wrong.is_empty(), "disagreements: {wrong:#?}");
    assert!(
        undetermined * 100 <= items.len() * 2,
        "{undetermined} undetermined answers (of {} sides): more than 1%",
        items.len() * 2
    );
}

#[test]
fn the_cheap_filter_spares_most_plies_of_real_games() {
    let mut plies = 0;
    let mut analysed = 0;
    for file in ["twic1599_1000k.pgn", "lichess_db_1000k.pgn"] {
        let path = format!("{}/fixtures/pgn/{file}", env!("CARGO_MANIFEST_DIR"));
        let games =
            touchmove::record::pgn::read_games_bytes(&std::fs::read(path).unwrap()).unwrap();
        for record in games {
            let game = record.to_game().unwrap();
            for pos in &game.positions()[1..] {
                plies += 1;
                analysed += usize::from(dead_position_possible(pos));
            }
        }
    }
    eprintln!("{analysed} of {plies} plies go to the analysis");
    assert!(
        analysed * 100 < plies * 5,
        "{analysed} of {plies} plies go to the analysis"
    );
}
