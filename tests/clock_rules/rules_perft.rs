//! Perft through touchmove's own `Game`: every move of the inner plies is written in UCI (in the
//! game's castling mode), read back with `Game::play_uci`, and its SAN read back with
//! `Game::parse_san`, so castling (standard and Chess960), en passant and promotion conversions
//! are all exercised; the last ply is bulk-counted.
//!
//! Suites: `fixtures/perft/tricky.perft` (every count up to 1,000,000 nodes) and
//! `fixtures/perft/chess960.perft` (all 960 positions, every count up to 30,000 nodes, i.e.
//! depth 3 or less). Deeper counts (up to 590 million nodes) are left out to keep
//! `cargo test --release` short.

use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position, PositionError};
use touchmove::rules::Game;

struct Case {
    id: String,
    fen: String,
    counts: Vec<(u32, u64)>,
}

fn suite(name: &str) -> Vec<Case> {
    let path = format!("{}/fixtures/perft/{name}", env!("CARGO_MANIFEST_DIR"));
    let mut cases: Vec<Case> = Vec::new();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let line = line.trim();
        if let Some(id) = line.strip_prefix("id ") {
            cases.push(Case {
                id: id.to_string(),
                fen: String::new(),
                counts: Vec::new(),
            });
        } else if let Some(fen) = line.strip_prefix("epd ") {
            cases.last_mut().unwrap().fen = fen.to_string();
        } else if let Some(rest) = line.strip_prefix("perft ") {
            let (depth, count) = rest.split_once(' ').unwrap();
            cases
                .last_mut()
                .unwrap()
                .counts
                .push((depth.parse().unwrap(), count.parse().unwrap()));
        }
    }
    cases
}

fn perft(game: &mut Game, depth: u32) -> u64 {
    let moves = game.position().legal_moves();
    if depth == 1 {
        return moves.len() as u64;
    }
    let ply = game.plies();
    let mut nodes = 0;
    for mv in moves {
        let uci = UciMove::from_move(mv, game.castling_mode()).to_string();
        let played = game.play_uci(&uci).unwrap_or_else(|e| panic!("{uci}: {e}"));
        assert_eq!(played.mv, mv, "UCI {uci} read back as another move");
        assert_eq!(played.uci, uci);
        let san = played.san.clone();
        game.truncate(ply);
        assert_eq!(
            game.parse_san(&san).unwrap(),
            mv,
            "SAN {san} read back as another move"
        );
        game.play(mv).unwrap();
        nodes += perft(game, depth - 1);
        game.truncate(ply);
    }
    nodes
}

/// The game for a suite position: Chess960 castling when the castling rights need it (X-FEN
/// and Shredder-FEN cases of the tricky suite), and composed positions with more material than
/// a game can have accepted as they are.
fn game_for(fen: &str, chess960: bool) -> Game {
    let setup: Fen = fen.parse().unwrap();
    let modes = if chess960 {
        vec![CastlingMode::Chess960]
    } else {
        vec![CastlingMode::Standard, CastlingMode::Chess960]
    };
    for mode in modes {
        let relaxed = setup
            .clone()
            .into_position::<Chess>(mode)
            .or_else(PositionError::ignore_too_much_material)
            .or_else(PositionError::ignore_impossible_check);
        if let Ok(pos) = relaxed {
            return Game::from_position(pos, mode);
        }
    }
    panic!("{fen}: no castling mode accepts it");
}

fn run(name: &str, chess960: bool, max_nodes: u64, expected_cases: usize) -> usize {
    let cases = suite(name);
    assert_eq!(cases.len(), expected_cases);
    let mut checked = 0;
    for case in cases {
        let mut game = game_for(&case.fen, chess960);
        for &(depth, expected) in case.counts.iter().filter(|c| c.1 <= max_nodes) {
            assert_eq!(
                perft(&mut game, depth),
                expected,
                "{} depth {depth}",
                case.id
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn tricky_positions() {
    let checked = run("tricky.perft", false, 1_000_000, 26);
    assert_eq!(
        checked, 87,
        "counts of at most 1,000,000 nodes (all but one)"
    );
}

#[test]
fn chess960_positions() {
    let checked = run("chess960.perft", true, 30_000, 960);
    assert_eq!(checked, 2763, "counts of at most 30,000 nodes");
}
