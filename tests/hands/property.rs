//! Property: for random legal games (random playouts from the standard start and from
//! Chess960 starts) performed by random hand models, the act-of-moving machine records the
//! game's moves, or raises an alert — and never records a wrong move silently.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::Position;
use touchmove::bench::recognition::recogniser;
use touchmove::rules::Game;
use touchmove::sim::hands::score::{judge, run};
use touchmove::sim::hands::{HandModel, Noise, OrderWeights, simulate_with_model};

/// The back rank of Chess960 start number `n` (0–959, Scharnagl numbering).
fn chess960_back_rank(n: u32) -> [char; 8] {
    let mut rank = [' '; 8];
    let mut n = n % 960;
    rank[(2 * (n % 4) + 1) as usize] = 'B';
    n /= 4;
    rank[(2 * (n % 4)) as usize] = 'B';
    n /= 4;
    let place = |rank: &mut [char; 8], k: u32, piece: char| {
        let i = (0..8)
            .filter(|i| rank[*i] == ' ')
            .nth(k as usize)
            .unwrap_or(0);
        rank[i] = piece;
    };
    place(&mut rank, n % 6, 'Q');
    n /= 6;
    const KNIGHTS: [(u32, u32); 10] = [
        (0, 1),
        (0, 2),
        (0, 3),
        (0, 4),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 3),
        (2, 4),
        (3, 4),
    ];
    let (a, b) = KNIGHTS[n as usize];
    place(&mut rank, b, 'N');
    place(&mut rank, a, 'N');
    for piece in ['R', 'K', 'R'] {
        place(&mut rank, 0, piece);
    }
    rank
}

/// A Shredder-FEN of Chess960 start `n`.
fn chess960_fen(n: u32) -> String {
    let rank = chess960_back_rank(n);
    let white: String = rank.iter().collect();
    let rooks: Vec<char> = (0..8)
        .filter(|i| rank[*i] == 'R')
        .map(|i| (b'a' + i as u8) as char)
        .collect();
    let castling: String = rooks
        .iter()
        .rev()
        .map(|c| c.to_ascii_uppercase())
        .chain(rooks.iter().rev().copied())
        .collect();
    format!(
        "{}/pppppppp/8/8/8/8/PPPPPPPP/{white} w {castling} - 0 1",
        white.to_ascii_lowercase()
    )
}

/// A random legal game of at most `plies` plies.
fn playout(fen: Option<&str>, chess960: bool, plies: usize, rng: &mut ChaCha8Rng) -> Vec<String> {
    let mut game = match fen {
        Some(f) => Game::from_fen(f, chess960).expect("valid start"),
        None => Game::standard(),
    };
    let mut moves = Vec::new();
    for _ in 0..plies {
        let legal = game.position().legal_moves();
        if legal.is_empty() || game.position().is_insufficient_material() {
            break;
        }
        // Prefer captures, castling and promotions a little, so short games reach them.
        let special: Vec<_> = legal
            .iter()
            .filter(|m| m.is_capture() || m.is_castle() || m.is_promotion())
            .copied()
            .collect();
        let mv = if !special.is_empty() && rng.gen_bool(0.4) {
            special[rng.gen_range(0..special.len())]
        } else {
            legal[rng.gen_range(0..legal.len())]
        };
        let played = game.play(mv).expect("legal move");
        moves.push(played.uci.clone());
    }
    moves
}

/// A hand model from a noise preset with its habits redrawn at random.
fn random_model(rng: &mut ChaCha8Rng) -> HandModel {
    let noise = [Noise::Clean, Noise::Realistic, Noise::Hostile][rng.gen_range(0..3)];
    let mut m = HandModel::for_noise(noise, rng);
    let weights = |n: usize, rng: &mut ChaCha8Rng| OrderWeights {
        weights: (0..n).map(|_| rng.gen_range(0.0..1.0)).collect(),
    };
    m.victim_first_probability = rng.gen_range(0.0..1.0);
    m.promotion_order = weights(4, rng);
    m.en_passant_order = weights(3, rng);
    let mut castling = weights(3, rng);
    if noise == Noise::Clean {
        castling.weights[1] = 0.0;
    }
    m.castling_order = castling;
    if noise != Noise::Clean {
        m.slide_probability = rng.gen_range(0.0..0.8);
        m.premove_probability = rng.gen_range(0.0..0.4);
    }
    m
}

/// Runs one property case; returns why it failed.
fn check_case(seed: u64, start: Option<u32>, plies: usize, signal: usize) -> Result<(), String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let fen = start.map(chess960_fen);
    let chess960 = fen.is_some();
    let moves = playout(fen.as_deref(), chess960, plies, &mut rng);
    let model = random_model(&mut rng);
    let result = [None, Some("1-0"), Some("0-1"), Some("1/2-1/2")][signal];
    let sim = simulate_with_model(fen.as_deref(), chess960, &moves, result, &model, &mut rng);
    if let Some(e) = sim.error {
        return Err(e);
    }
    let v = judge(&sim, &run(&sim, recogniser(&sim)));
    if v.silent {
        return Err(format!(
            "silently wrong move at ply {:?}: start {fen:?}, game {:?}, recorded {:?}",
            v.first_divergence, sim.moves_uci, v.recorded
        ));
    }
    if v.recorded != sim.moves_uci && v.alerts == 0 {
        return Err(format!(
            "moves differ without an alert: start {fen:?}, game {:?}, recorded {:?}",
            sim.moves_uci, v.recorded
        ));
    }
    Ok(())
}

/// Random cases drawn from a fixed seed, so that CI is reproducible. A longer soak run:
/// `TOUCHMOVE_PROPERTY_CASES=5000 cargo test --release --test hands property::`.
fn cases() -> usize {
    std::env::var("TOUCHMOVE_PROPERTY_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

#[test]
fn recognised_moves_equal_the_game_or_an_alert_is_raised() {
    let mut draw = ChaCha8Rng::seed_from_u64(20_260_422);
    let mut silent = Vec::new();
    let mut unalerted = Vec::new();
    let cases = cases();
    for _ in 0..cases {
        let seed: u64 = draw.r#gen();
        let start = if draw.gen_bool(0.5) {
            None
        } else {
            Some(draw.gen_range(0u32..960))
        };
        let plies = draw.gen_range(1usize..70);
        let signal = draw.gen_range(0usize..4);
        if let Err(why) = check_case(seed, start, plies, signal) {
            let case = format!("check_case({seed}, {start:?}, {plies}, {signal}): {why}");
            if why.starts_with("silently") {
                silent.push(case);
            } else {
                unalerted.push(case);
            }
        }
    }
    eprintln!(
        "{} silently wrong of {cases} cases:\n{}",
        silent.len(),
        silent.join("\n")
    );
    assert!(
        unalerted.is_empty(),
        "games recorded differently without any alert:\n{}",
        unalerted.join("\n")
    );
    assert!(
        silent.is_empty(),
        "{} silently wrong cases:\n{}",
        silent.len(),
        silent.join("\n")
    );
}

/// The case proptest found where a slide's passing square was confirmed by the clock press.
#[test]
fn slide_confirmed_by_press_regression() {
    check_case(938_611_604_354_682_752, Some(20), 67, 1).unwrap();
}

#[test]
fn chess960_numbering_gives_valid_starts() {
    assert_eq!(
        chess960_back_rank(518).iter().collect::<String>(),
        "RNBQKBNR"
    );
    for n in [0, 1, 100, 518, 959] {
        let fen = chess960_fen(n);
        assert!(Game::from_fen(&fen, true).is_ok(), "{fen}");
    }
}

/// A case proptest once found: a capture in a Chess960 game recorded as another move.
#[test]
fn chess960_capture_regression() {
    check_case(982_953_722_181_118_749, Some(536), 10, 0).unwrap();
}
