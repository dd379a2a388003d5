//! `touchmove bench outage`: boards unplugged together mid-game while the players go on.
//!
//! N virtual boards (pseudo-terminals, the real driver, an in-process recorder) play the
//! fixture games; a third of the way into the first game every cable is pulled for a while
//! and plugged in again. The figures: games recorded exactly, games with a wrong move, games
//! that stopped short (held), with the boards' EEPROM move logs on or off.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::bench::{
    BenchDir, ScriptGame, event_for_ports, fixture_games, plain_timeline, spawn_boards_with_log,
};
use super::{Recorder, RunOptions};
use crate::board::ObservationKind;
use crate::record::pgn::read_games;
use crate::server::feed::Feed;
use crate::sim::virtual_board::timeline::Pace;

/// One outage run.
#[derive(Debug, Clone, Copy)]
pub struct OutageRun {
    /// Boards unplugged together.
    pub boards: usize,
    /// Wall-clock seconds they stay unplugged.
    pub unplugged_s: f64,
    /// How many times faster than real time the boards play.
    pub speed: f64,
    /// The boards keep (and answer with) their EEPROM move log.
    pub eeprom_log: bool,
}

/// What an outage run shows.
#[derive(Debug, Clone, Serialize)]
pub struct OutageFigures {
    /// Boards.
    pub boards: usize,
    /// Wall-clock seconds unplugged.
    pub unplugged_s: f64,
    /// Play speed factor.
    pub speed: f64,
    /// EEPROM logs on.
    pub eeprom_log: bool,
    /// Plies played during the outage, summed over the boards.
    pub plies_in_gap: usize,
    /// Games whose PGN has every move played, in order.
    pub games_exact: usize,
    /// Games whose PGN has a move that was not the move played at that ply.
    pub games_with_wrong_move: usize,
    /// Games whose PGN stops short of the game (held at the outage or later).
    pub games_short: usize,
    /// Plies recorded against plies played, summed over the boards.
    pub plies_recorded: usize,
    /// Plies played.
    pub plies_played: usize,
}

/// Runs the outage and prints its figures as one JSON line.
pub fn run(run: OutageRun) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let figures = runtime.block_on(measure(run))?;
    println!(
        "{}",
        serde_json::to_string(&figures).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// Plays the outage and measures it.
pub async fn measure(run: OutageRun) -> Result<OutageFigures, String> {
    let games: Vec<ScriptGame> = fixture_games()
        .into_iter()
        .cycle()
        .take(run.boards)
        .collect();
    if games.is_empty() {
        return Err("no fixture games".to_string());
    }
    let pace = Pace {
        think_ms: 3000,
        step_ms: 150,
    };
    let scripts: Vec<_> = games.iter().map(|g| plain_timeline(g, pace)).collect();
    let presses: Vec<u64> = scripts[0]
        .iter()
        .filter(|o| matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .map(|o| o.t_ms)
        .collect();
    let unplug_at_ms = presses.get(presses.len() / 3).copied().unwrap_or(0) + 1200;
    let gap_ms = (run.unplugged_s * 1000.0 * run.speed) as u64;
    let plies_in_gap = scripts
        .iter()
        .flat_map(|s| s.iter())
        .filter(|o| matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .filter(|o| o.t_ms > unplug_at_ms && o.t_ms < unplug_at_ms + gap_ms)
        .count();
    let end_ms = scripts
        .iter()
        .filter_map(|s| s.last().map(|o| o.t_ms))
        .max()
        .unwrap_or(0);
    // A folder of its own (named apart from `bench boards`' folders).
    let dir = BenchDir::create(100_000 + run.boards).map_err(|e| format!("scratch folder: {e}"))?;
    let boards = spawn_boards_with_log(
        dir.path(),
        scripts,
        run.speed,
        30 * 60 * 1000,
        0,
        run.eeprom_log,
    )
    .map_err(|e| format!("virtual boards: {e}"))?;
    let ports: Vec<_> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    let config = event_for_ports("Outage bench", "1800", &ports);
    let out = dir.path().join("out");
    let feed = Arc::new(Feed::new());
    let recorder = Recorder::start(config, RunOptions::new(&out, feed))
        .await
        .map_err(|e| e.to_string())?;
    let wall = |game_ms: u64| Duration::from_secs_f64(game_ms as f64 / 1000.0 / run.speed);
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + wall(unplug_at_ms)).await;
    for board in &boards {
        board.unplug().await.map_err(|e| format!("unplug: {e}"))?;
    }
    tokio::time::sleep(Duration::from_secs_f64(run.unplugged_s)).await;
    for board in &boards {
        board.replug().await.map_err(|e| format!("replug: {e}"))?;
    }
    for board in &boards {
        let _ =
            tokio::time::timeout(wall(end_ms) + Duration::from_secs(60), board.finished()).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    recorder.shutdown().await;

    let mut figures = OutageFigures {
        boards: run.boards,
        unplugged_s: run.unplugged_s,
        speed: run.speed,
        eeprom_log: run.eeprom_log,
        plies_in_gap,
        games_exact: 0,
        games_with_wrong_move: 0,
        games_short: 0,
        plies_recorded: 0,
        plies_played: 0,
    };
    for (k, game) in games.iter().enumerate() {
        let recorded = recorded_moves(&out, k + 1);
        figures.plies_played += game.moves_uci.len();
        figures.plies_recorded += recorded.len();
        let agrees = recorded.iter().zip(&game.moves_uci).all(|(a, b)| a == b)
            && recorded.len() <= game.moves_uci.len();
        if !agrees {
            figures.games_with_wrong_move += 1;
        } else if recorded.len() == game.moves_uci.len() {
            figures.games_exact += 1;
        } else {
            figures.games_short += 1;
        }
    }
    Ok(figures)
}

/// The UCI moves of the latest game in board `k`'s PGN file (none when it is unreadable).
fn recorded_moves(out: &Path, k: usize) -> Vec<String> {
    let path = out.join(format!("round-1/game-{k}.pgn"));
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    read_games(&text)
        .ok()
        .and_then(|mut games| games.pop())
        .and_then(|g| g.to_game().ok())
        .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
        .unwrap_or_default()
}
