//! Every game of the fixture PGN files, performed by simulated hands (seed 1), recognised
//! by the act-of-moving machine: no move may be recorded wrongly without an alert (issue 4),
//! under realistic and under hostile noise, and at least 99.5% of the games are recorded
//! exactly under realistic noise. Failing games are printed with the command that
//! reproduces them.

use touchmove::bench::recognition::recognise_all;
use touchmove::sim::hands::Noise;
use touchmove::sim::hands::pgn_games::read_games;

fn check(file: &str, noise: Noise) {
    let path = format!("{}/fixtures/pgn/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read(&path).expect("fixture PGN");
    let games = read_games(&text).expect("readable PGN");
    assert!(games.len() > 400, "{file}: {} games", games.len());
    assert!(games.iter().all(|g| g.error.is_none()));
    let refs: Vec<_> = games.iter().collect();
    let mut summary = recognise_all(&refs, noise, 1);
    assert_eq!(summary.games, games.len());
    assert_eq!(summary.simulation_errors, 0);
    let silent = summary.silently_wrong_moves;
    summary.keep_failures(10);
    let failures: Vec<String> = summary
        .failures
        .iter()
        .filter(|f| f.silent)
        .map(|f| {
            format!(
                "game {} (seed {}): ply {:?} expected {:?} recorded {:?}",
                f.game, f.seed, f.first_divergence, f.expected, f.recorded
            )
        })
        .collect();
    eprintln!(
        "{file} ({noise}): {} of {} exact, {silent} silently wrong moves in {} games",
        summary.exact_games, summary.games, summary.silently_wrong_games
    );
    assert!(
        noise != Noise::Realistic || summary.exact_games * 1000 >= summary.games * 995,
        "{file}: only {} of {} games exact",
        summary.exact_games,
        summary.games
    );
    assert!(
        summary.silently_wrong_games == 0,
        "{file}: {silent} silently wrong moves in {} games; reproduce with \
         `touchmove bench recognition --pgn fixtures/pgn/{file} --noise {noise} --seed 1 \
         --game N --trace`:\n{}",
        summary.silently_wrong_games,
        failures.join("\n")
    );
}

#[test]
fn twic_games_are_exact_or_alerted() {
    check("twic1599_1000k.pgn", Noise::Realistic);
}

#[test]
fn lichess_games_are_exact_or_alerted() {
    check("lichess_db_1000k.pgn", Noise::Realistic);
}

#[test]
fn twic_games_under_hostile_hands_are_never_silently_wrong() {
    check("twic1599_1000k.pgn", Noise::Hostile);
}

#[test]
fn lichess_games_under_hostile_hands_are_never_silently_wrong() {
    check("lichess_db_1000k.pgn", Noise::Hostile);
}
