//! Helpers shared by the recorder's integration tests: scripted games on virtual boards and
//! reading the recorder's PGN folder back.

// Several test binaries include this module, each using a part of it.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use touchmove::bench::{ScriptGame, fixture_games, plain_timeline, spawn_boards};
use touchmove::board::Observation;
use touchmove::record::GameRecord;
use touchmove::record::pgn::read_games;
use touchmove::sim::hands::{Noise, SimulatedGame, simulate_game};
use touchmove::sim::virtual_board::VirtualBoard;
use touchmove::sim::virtual_board::timeline::Pace;

/// The fixture games played with realistic hands (seeded), one per board.
pub fn realistic_games(boards: usize, seed: u64) -> Vec<SimulatedGame> {
    let games = fixture_games();
    assert!(
        !games.is_empty(),
        "fixtures/recorder-games.pgn must hold games"
    );
    (0..boards)
        .map(|i| {
            let g = &games[i % games.len()];
            simulate_game(
                None,
                false,
                &g.moves_uci,
                Some(&g.result),
                Noise::Realistic,
                seed + i as u64,
            )
        })
        .collect()
}

/// The first `plies` plies of fixture game `index`.
pub fn fixture_opening(index: usize, plies: usize) -> ScriptGame {
    let mut game = fixture_games().remove(index);
    game.moves_uci.truncate(plies);
    game
}

/// The first `plies` plies of each of the ten games in `fixtures/pgn/demo-uzchess-2025.pgn`:
/// distinct real games, for tests with more boards than the recorder's fixture has games.
pub fn demo_openings(plies: usize) -> Vec<ScriptGame> {
    let text = include_str!("../../fixtures/pgn/demo-uzchess-2025.pgn");
    let records = read_games(text).expect("fixtures/pgn/demo-uzchess-2025.pgn reads");
    records
        .iter()
        .map(|r| {
            let game = r.to_game().expect("a demo game replays");
            let mut moves_uci: Vec<String> = game.moves().iter().map(|m| m.uci.clone()).collect();
            moves_uci.truncate(plies);
            ScriptGame {
                moves_uci,
                result: r.result.clone(),
            }
        })
        .collect()
}

/// A virtual board in `dir` playing `game` (plain lift/place at `pace`) in real time, with
/// 10 minutes on each clock.
pub fn real_time_board(dir: &Path, game: &ScriptGame, pace: Pace) -> VirtualBoard {
    spawn_boards(dir, vec![plain_timeline(game, pace)], 1.0, 600_000, 0)
        .unwrap()
        .remove(0)
}

/// The observation scripts of simulated games, for virtual boards, with every pause longer
/// than `max_pause_ms` (the players thinking) shortened to it: the hands keep their real
/// pace, the test does not wait for the thinking.
pub fn scripts(games: &[SimulatedGame], max_pause_ms: u64) -> Vec<Vec<Observation>> {
    games
        .iter()
        .map(|g| {
            let mut removed = 0;
            let mut last = 0;
            g.observations
                .iter()
                .map(|o| {
                    removed += o.t_ms.saturating_sub(last).saturating_sub(max_pause_ms);
                    last = o.t_ms;
                    Observation {
                        t_ms: o.t_ms - removed,
                        kind: o.kind.clone(),
                    }
                })
                .collect()
        })
        .collect()
}

/// The latest game of board `k` in `out/round-1/game-K.pgn`.
pub fn read_board(out: &Path, k: usize) -> GameRecord {
    let path = out.join(format!("round-1/game-{k}.pgn"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{} missing: {e}", path.display()));
    let mut games = read_games(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(games.len(), 1, "{} holds one game", path.display());
    games.remove(0)
}

/// Moves (SAN) with their `[%clk]` times, and the result: what two runs must agree on.
pub fn essentials(game: &GameRecord) -> (Vec<(String, Option<u64>)>, String) {
    (
        game.moves
            .iter()
            .map(|m| (m.san.clone(), m.clock_ms))
            .collect(),
        game.result.clone(),
    )
}

/// UCI of a record's moves.
pub fn uci_moves(game: &GameRecord) -> Vec<String> {
    game.to_game()
        .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
        .unwrap_or_default()
}

/// Runs `touchmove ARGS…` to its end.
pub fn touchmove(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(args)
        .output()
        .expect("the touchmove binary runs")
}

/// Starts `touchmove record --config CONFIG --out OUT ARGS…`, its stderr appended to `log`.
pub fn record_logged<S: AsRef<OsStr>>(
    config: &Path,
    out: &Path,
    args: impl IntoIterator<Item = S>,
    log: &Path,
) -> Child {
    record_logged_with_env(config, out, args, log, &[])
}

/// [`record_logged`] with variables `env` set in the recorder's environment.
pub fn record_logged_with_env<S: AsRef<OsStr>>(
    config: &Path,
    out: &Path,
    args: impl IntoIterator<Item = S>,
    log: &Path,
    env: &[(&str, &str)],
) -> Child {
    let log = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("record")
        .arg("--config")
        .arg(config)
        .arg("--out")
        .arg(out)
        .args(args)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("the touchmove binary starts")
}

/// `touchmove arbiter --who Anna --out OUT --board K ARGS…`: what it prints, or its refusal.
/// It is retried (for up to 10 s) while the recorder is still starting and its socket is
/// not there yet.
pub fn arbiter(out: &Path, board: usize, args: &[&str]) -> Result<String, String> {
    let board = board.to_string();
    let mut all = vec![
        "arbiter",
        "--who",
        "Anna",
        "--out",
        out.to_str().unwrap(),
        "--board",
        &board,
    ];
    all.extend_from_slice(args);
    for _ in 0..200 {
        let o = touchmove(&all);
        if o.status.success() {
            return Ok(String::from_utf8_lossy(&o.stdout).trim().to_string());
        }
        let e = String::from_utf8_lossy(&o.stderr).into_owned();
        if !e.contains("cannot connect") && !e.contains("cannot read") {
            return Err(e);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err("the recorder never answered".to_string())
}

/// Stops a recorder process as Ctrl-C would (SIGTERM), killing it if it does not stop.
pub fn stop(mut child: Child) {
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

/// The recorder's private state folder (journal, token, socket) beside the output folder
/// `out`, which the tests always name `out`.
pub fn state_dir(out: &Path) -> PathBuf {
    out.with_file_name("out.state")
}

/// What a recorder started by a test wrote to `recorder.log` in `dir` so far.
pub fn log(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("recorder.log")).unwrap_or_default()
}

/// `GET path` from the web server at `addr` over a plain connection: the answer's head and
/// body (all of it as the head if it has no body).
pub fn http_get(addr: std::net::SocketAddr, path: &str) -> (String, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).expect("connect to the web server");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    match answer.split_once("\r\n\r\n") {
        Some((head, body)) => (head.to_string(), body.to_string()),
        None => (answer, String::new()),
    }
}

/// The moves of `record`, each span the PGN marks "order not observed" put in the order
/// `played` when the mark names that order (recorded, or among the others it lists). The
/// mark stands on the span's last move: `order not observed: also possible 13...a5 14.b3
/// Nc5 | …`, each alternative as long as the span.
pub fn with_marked_orders_as_played(
    record: &GameRecord,
    played: &[String],
) -> Result<Vec<String>, String> {
    let mut fixed = uci_moves(record);
    for (i, m) in record.moves.iter().enumerate() {
        let Some(alternatives) = m
            .comments
            .iter()
            .find_map(|c| c.strip_prefix("order not observed: also possible "))
        else {
            continue;
        };
        let alternatives = alternatives
            .split_once(';')
            .map_or(alternatives, |(a, _)| a);
        let lines: Vec<Vec<String>> = alternatives.split(" | ").map(san_words).collect();
        let len = lines.first().map_or(0, Vec::len);
        let from = (i + 1)
            .checked_sub(len)
            .ok_or_else(|| format!("a mark at ply {} longer than the game", i + 1))?;
        let Some(truth) = played.get(from..=i) else {
            continue;
        };
        let mut game = touchmove::rules::Game::standard();
        for uci in &played[..from] {
            game.play_uci(uci).map_err(|e| e.to_string())?;
        }
        let mut truth_san = Vec::new();
        for uci in truth {
            game.play_uci(uci).map_err(|e| e.to_string())?;
            truth_san.push(
                game.moves()
                    .last()
                    .map(|m| m.san.clone())
                    .unwrap_or_default(),
            );
        }
        let recorded_span = &fixed[from..=i];
        if recorded_span == truth || lines.contains(&truth_san) {
            fixed.splice(from..=i, truth.iter().cloned());
        }
    }
    Ok(fixed)
}

/// The SAN moves of a numbered line (`13...a5 14.b3 Nc5` → `a5 b3 Nc5`).
pub fn san_words(line: &str) -> Vec<String> {
    line.split_whitespace()
        .map(|w| w.rsplit('.').next().unwrap_or(w).to_string())
        .filter(|w| !w.is_empty())
        .collect()
}
