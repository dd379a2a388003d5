//! `touchmove record` survives `kill -9`.
//!
//! Four virtual boards on pseudo-terminals play real games (fixtures/recorder-games.pgn) with
//! realistic hands. The recorder binary records them once without interruption, then again
//! while being SIGKILLed at random moments (every kill hits all four games; at least five per
//! game) and restarted each time on the same journal. Both runs must end with the same PGN
//! files: the same moves, the same `[%clk]` times and the same results — and the same moves
//! as were played. The killed run's files are also checked with `touchmove pgn check` and
//! left in `CARGO_TARGET_TMPDIR/recorder-output/` for the python-chess check in `.ci/run`.
//!
//! The boards play 12 times faster than the simulated hands (the whole test takes about 30 s
//! of wall time on two cores).

mod recorder_support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use recorder_support::{essentials, read_board, realistic_games, scripts, uci_moves};
use touchmove::recorder::bench::spawn_boards;

const BOARDS: usize = 4;
const KILLS: usize = 6;
const SPEED: f64 = 12.0;
const SEED: u64 = 20_261_122;

fn write_config(dir: &Path, ports: &[PathBuf]) -> PathBuf {
    let mut text = String::from(
        "event = \"Crash test\"\nsite = \"Kill -9\"\nround = 1\ntime_control = \"5400+30\"\n",
    );
    for (i, p) in ports.iter().enumerate() {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"White, {}\", fide_id = {} }}\nblack = {{ name = \"Black, {}\" }}\n",
            i + 1,
            p.display(),
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
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("record")
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .arg("--no-server")
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the touchmove binary starts")
}

fn stop(mut child: Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    for _ in 0..100 {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// Plays the games on fresh virtual boards while the recorder records into `dir/out`,
/// killing it at `kill_at` (seconds after the start). Returns the output folder.
async fn play(dir: &Path, kill_at: &[f64]) -> PathBuf {
    let games = realistic_games(BOARDS, SEED);
    let boards = spawn_boards(dir, scripts(&games), SPEED, 90 * 60 * 1000, 30_000).unwrap();
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
    let last = games
        .iter()
        .filter_map(|g| g.observations.last().map(|o| o.t_ms))
        .max()
        .unwrap_or(0);
    last as f64 / 1000.0 / SPEED
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_nine_loses_and_duplicates_nothing() {
    let duration = script_seconds();
    assert!(
        duration > 3.0,
        "games long enough to kill during ({duration:.1} s)"
    );
    let mut rng = ChaCha8Rng::seed_from_u64(SEED);
    let mut kills: Vec<f64> = (0..KILLS)
        .map(|_| rng.gen_range(0.05..0.9) * duration)
        .collect();
    kills.sort_by(f64::total_cmp);
    eprintln!("games last {duration:.1} s; kills at {kills:.2?}");

    let calm = tempfile::tempdir().unwrap();
    let killed = tempfile::tempdir().unwrap();
    let calm_out = play(calm.path(), &[]).await;
    let killed_out = play(killed.path(), &kills).await;

    let log = std::fs::read_to_string(killed.path().join("recorder.log")).unwrap_or_default();
    let restarts = log.matches("recording board 1").count();
    assert_eq!(restarts, KILLS + 1, "every restart came up:\n{log}");

    let games = realistic_games(BOARDS, SEED);
    let mut files = Vec::new();
    for k in 1..=BOARDS {
        let calm_game = read_board(&calm_out, k);
        let killed_game = read_board(&killed_out, k);
        assert_eq!(
            uci_moves(&calm_game),
            games[k - 1].moves_uci,
            "board {k}: the uninterrupted run recorded the game played"
        );
        assert_eq!(
            essentials(&killed_game),
            essentials(&calm_game),
            "board {k}: moves, clocks and result after {KILLS} kills equal the uninterrupted run"
        );
        assert!(
            calm_game.moves.iter().all(|m| m.clock_ms.is_some()),
            "board {k}: every move has its [%clk]"
        );
        if let Some(expected) = &games[k - 1].expected_result {
            assert_eq!(&calm_game.result, expected, "board {k}: result");
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
