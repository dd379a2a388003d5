//! After the game, through `touchmove record`: the players set the pieces back, play a
//! post-mortem, switch the board off, and the recorder is restarted. A game with a result
//! stays as it ended; a game without one keeps its moves until the arbiter gives its result;
//! `touchmove results` carries both into the TRF.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::recorder_support::{arbiter, record_logged, stop, touchmove, uci_moves};
use rand::SeedableRng;
use touchmove::bench::{ScriptGame, plain_timeline, spawn_boards};
use touchmove::board::Observation;
use touchmove::record::GameRecord;
use touchmove::record::pgn::read_games;
use touchmove::sim::after_game::{SetBack, board_after, post_mortem, set_back};
use touchmove::sim::virtual_board::VirtualBoard;
use touchmove::sim::virtual_board::timeline::Pace;

const PACE: Pace = Pace {
    think_ms: 400,
    step_ms: 80,
};
/// The virtual board plays this many times faster than the script's times.
const SPEED: f64 = 3.0;

/// Two players paired on board 1 of round 1, no result yet (columns as FIDE's TRF-16).
const TRF: &str = "012 After the game\n\
001    1      Test0001 Player0001               2720                             0.0    1     2 w  \n\
001    2      Test0002 Player0002               2701                             0.0    2     1 b  \n\
XXR 1\n";

const FOOLS_MATE: [&str; 4] = ["f2f3", "e7e5", "g2g4", "d8h4"];
/// A Ruy Lopez Black resigns after, without a result signal.
const RESIGNED: [&str; 12] = [
    "e2e4", "e7e5", "g1f3", "b8c6", "f1b5", "a7a6", "b5a4", "g8f6", "e1g1", "f8e7", "f1e1", "b7b5",
];

/// `moves` played with presses, then the pieces set back piece by piece, a post-mortem,
/// and the board swept and set up again.
fn game_then_after(moves: &[&str], seed: u64) -> Vec<Observation> {
    let game = ScriptGame {
        moves_uci: moves.iter().map(|m| m.to_string()).collect(),
        result: "*".into(),
    };
    let mut script = plain_timeline(&game, PACE);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let start = shakmaty::Board::new();
    let end = |s: &[Observation]| s.last().map_or(0, |o| o.t_ms) + 6_000;
    let back = set_back(
        &board_after(&start, &script),
        SetBack::PieceByPiece,
        end(&script),
        &mut rng,
    );
    script.extend(back);
    let analysis: Vec<String> = ["e2e4", "c7c5", "g1f3", "d7d6", "d2d4"]
        .map(String::from)
        .to_vec();
    script.extend(post_mortem(&analysis, PACE, end(&script)));
    let swept = set_back(
        &board_after(&start, &script),
        SetBack::Sweep,
        end(&script),
        &mut rng,
    );
    script.extend(swept);
    script
}

fn write_event(dir: &Path, board: &VirtualBoard) -> (PathBuf, PathBuf) {
    let config = dir.join("event.toml");
    std::fs::write(
        &config,
        format!(
            "event = \"After the game\"\nround = 1\ntime_control = \"1800\"\n\n[[board]]\nnumber = 1\nport = \"{}\"\n",
            board.path().display()
        ),
    )
    .unwrap();
    let trf = dir.join("event.trf");
    std::fs::write(&trf, TRF).unwrap();
    (config, trf)
}

fn start_recorder(dir: &Path, config: &Path, trf: &Path) -> std::process::Child {
    let out = dir.join("out");
    record_logged(
        config,
        &out,
        [
            "--no-server",
            "--pairings",
            trf.to_str().unwrap(),
            "--round",
            "1",
        ],
        &dir.join("recorder.log"),
    )
}

/// The round's published files: `game-1.pgn`, `games.pgn`, `index.json`.
fn published(out: &Path) -> (String, String, String) {
    let read =
        |name: &str| std::fs::read_to_string(out.join("round-1").join(name)).unwrap_or_default();
    (read("game-1.pgn"), read("games.pgn"), read("index.json"))
}

fn only_game(text: &str) -> GameRecord {
    let mut games = read_games(text).unwrap_or_else(|e| panic!("{e}: {text}"));
    assert_eq!(games.len(), 1, "one game: {text}");
    games.remove(0)
}

/// Plays the script on a virtual board recorded by `touchmove record`, waits until the
/// recorder read it all, and switches the board off.
async fn play(dir: &Path, script: Vec<Observation>) -> (std::process::Child, PathBuf, PathBuf) {
    let board = spawn_boards(dir, vec![script], SPEED, 30 * 60 * 1000, 0)
        .unwrap()
        .remove(0);
    let (config, trf) = write_event(dir, &board);
    let recorder = start_recorder(dir, &config, &trf);
    tokio::time::timeout(Duration::from_secs(120), board.finished())
        .await
        .expect("the board plays its script");
    assert!(board.host_caught_up(Duration::from_secs(30)).await);
    tokio::time::sleep(Duration::from_secs(2)).await;
    board.unplug().await.unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    (recorder, config, trf)
}

/// `touchmove results` for round 1 into `dir/results.trf`: the codes of players 1 and 2.
fn results(dir: &Path, trf: &Path) -> (String, String) {
    let written = dir.join("results.trf");
    let o = touchmove(&[
        "results",
        "--trf",
        trf.to_str().unwrap(),
        "--round",
        "1",
        "--games",
        dir.join("out").to_str().unwrap(),
        "--out",
        written.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "results: {stderr}");
    let text = std::fs::read_to_string(&written).unwrap();
    let code = |rank: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("001    {rank}")))
            .and_then(|l| l.chars().nth(98))
            .map(String::from)
            .unwrap_or_default()
    };
    (code("1"), code("2"))
}

/// The four-move reproduction of issue 27: the mate stays in every file through the
/// pieces set back, a post-mortem, the board switched off and a restart of the recorder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mate_survives_the_set_back_the_post_mortem_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (recorder, config, trf) = play(dir.path(), game_then_after(&FOOLS_MATE, 1)).await;
    let (game, round, index) = published(&out);
    let recorded = only_game(&game);
    assert_eq!(uci_moves(&recorded), FOOLS_MATE);
    assert_eq!(recorded.result, "0-1", "{game}");
    assert_eq!(recorded.tag("White"), Some("Test0001 Player0001"));
    assert_eq!(uci_moves(&only_game(&round)), FOOLS_MATE);
    assert!(index.contains("\"0-1\""), "{index}");
    stop(recorder);
    let again = start_recorder(dir.path(), &config, &trf);
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        published(&out),
        (game, round, index),
        "the restart rebuilds the same files"
    );
    stop(again);
    assert_eq!(results(dir.path(), &trf), ("0".into(), "1".into()));
}

/// The commonest ending: Black resigns, nobody signals, the pieces are set back. The
/// moves stay with `*`, through a restart, until the arbiter's result completes the game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resignation_keeps_its_moves_until_the_arbiters_result() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let (recorder, config, trf) = play(dir.path(), game_then_after(&RESIGNED, 2)).await;
    let (game, _, _) = published(&out);
    let recorded = only_game(&game);
    assert_eq!(uci_moves(&recorded), RESIGNED);
    assert_eq!(recorded.result, "*");
    stop(recorder);
    let again = start_recorder(dir.path(), &config, &trf);
    let answer = arbiter(&out, 1, &["result", "1-0", "--reason", "Black resigned"]);
    assert!(answer.is_ok(), "{answer:?}");
    tokio::time::sleep(Duration::from_secs(1)).await;
    let (game, round, index) = published(&out);
    let recorded = only_game(&game);
    assert_eq!(uci_moves(&recorded), RESIGNED);
    assert_eq!(recorded.result, "1-0");
    assert_eq!(only_game(&round).result, "1-0");
    assert!(index.contains("\"1-0\""), "{index}");
    stop(again);
    assert_eq!(results(dir.path(), &trf), ("1".into(), "0".into()));
}
