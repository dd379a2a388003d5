//! `touchmove bench outage`: boards unplugged together mid-game while the players go on.
//!
//! N virtual boards (pseudo-terminals, the real driver, an in-process recorder) play the
//! fixture games; a third of the way into the first game every cable is pulled for a while
//! and plugged in again. The figures: games recorded exactly, games with a wrong move, games
//! that stopped short, with the boards' EEPROM move logs on or off; and how the games without
//! a log came through: held, with an order alert, taken up from the board's position, wrong
//! without an alert, recorded live to their end.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use shakmaty::Position;

use super::bench::{
    BenchDir, ScriptGame, event_for_ports, fixture_games, plain_timeline, spawn_boards_with_log,
};
use super::{Recorder, RecorderHandle, RunOptions};
use crate::act::{Event, GapAccount};
use crate::board::{Observation, ObservationKind};
use crate::record::pgn::read_games;
use crate::server::feed::{Feed, Scope};
use crate::sim::virtual_board::VirtualBoard;
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
    /// Games held after the outage until their end, or for longer than
    /// [`LONG_HOLD_MS`] (the live view frozen until an arbiter acts).
    pub games_held: usize,
    /// Games with an "order not observed" alert (several move orders explain the gap).
    pub games_with_order_alert: usize,
    /// Games taken up from the board's position (no legal sequence explains the gap), with a
    /// critical alert.
    pub games_taken_up: usize,
    /// Games with a move recorded that was not the move played, and no order alert and no
    /// critical gap alert that says so.
    pub wrong_without_alert: usize,
    /// Games whose record reaches the position the game ended in (recorded live to its end).
    pub games_live_to_end: usize,
}

/// A hold longer than this (wall-clock milliseconds) counts as a held game.
pub const LONG_HOLD_MS: u64 = 5_000;

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

/// The fixture games on a number of boards at the outage's pace, and when the cables are pulled.
pub struct OutagePlan {
    /// The game each board plays.
    pub games: Vec<ScriptGame>,
    /// The observations each board makes (plain lift/place, 3 s thinking).
    pub scripts: Vec<Vec<Observation>>,
    /// Game time of the outage: 1.2 s after a clock press a third of the way into the first game.
    pub outage_at_ms: u64,
    /// Game time at which the last script ends.
    pub end_ms: u64,
}

impl OutagePlan {
    /// The fixture games, cycled over `boards` boards.
    pub fn new(boards: usize) -> Result<Self, String> {
        let games: Vec<ScriptGame> = fixture_games().into_iter().cycle().take(boards).collect();
        if games.is_empty() {
            return Err("no fixture games".to_string());
        }
        let pace = Pace {
            think_ms: 3000,
            step_ms: 150,
        };
        let scripts: Vec<_> = games.iter().map(|g| plain_timeline(g, pace)).collect();
        let presses = clock_presses(&scripts[0]);
        let outage_at_ms = presses.get(presses.len() / 3).copied().unwrap_or(0) + 1200;
        let end_ms = scripts
            .iter()
            .filter_map(|s| s.last().map(|o| o.t_ms))
            .max()
            .unwrap_or(0);
        Ok(Self {
            games,
            scripts,
            outage_at_ms,
            end_ms,
        })
    }
}

/// Game times of a script's clock presses.
pub fn clock_presses(script: &[Observation]) -> Vec<u64> {
    script
        .iter()
        .filter(|o| matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .map(|o| o.t_ms)
        .collect()
}

/// Wall-clock time of `game_ms` of play at `speed` times real time.
pub fn wall(game_ms: u64, speed: f64) -> Duration {
    Duration::from_secs_f64(game_ms as f64 / 1000.0 / speed)
}

/// Virtual boards (30-minute games) playing `scripts` at `speed`, and an in-process recorder
/// of event `event` recording them into `dir/out` (returned with them).
pub async fn record_boards(
    dir: &Path,
    scripts: Vec<Vec<Observation>>,
    speed: f64,
    eeprom_log: bool,
    event: &str,
) -> Result<(Vec<VirtualBoard>, PathBuf, RecorderHandle), String> {
    let (boards, out, recorder, _) =
        record_boards_with_feed(dir, scripts, speed, eeprom_log, event).await?;
    Ok((boards, out, recorder))
}

/// [`record_boards`], with the recorder's feed (it keeps every event for the figures).
pub async fn record_boards_with_feed(
    dir: &Path,
    scripts: Vec<Vec<Observation>>,
    speed: f64,
    eeprom_log: bool,
    event: &str,
) -> Result<(Vec<VirtualBoard>, PathBuf, RecorderHandle, Arc<Feed>), String> {
    let boards = spawn_boards_with_log(dir, scripts, speed, 30 * 60 * 1000, 0, eeprom_log)
        .map_err(|e| format!("virtual boards: {e}"))?;
    let ports: Vec<_> = boards.iter().map(|b| b.path().to_path_buf()).collect();
    let config = event_for_ports(event, "1800", &ports);
    let out = dir.join("out");
    let feed = Arc::new(Feed::with_replay_capacity(1 << 20));
    let recorder = Recorder::start(config, RunOptions::new(&out, feed.clone()))
        .await
        .map_err(|e| e.to_string())?;
    Ok((boards, out, recorder, feed))
}

/// Pulls every board's cable at the plan's outage (game time since now), plugs them in again
/// `unplugged` later, waits for the boards to finish their scripts (up to a minute past the
/// plan's end) and shuts the recorder down 2 s later, and no sooner than 6 s after the boards
/// came back. Returns how many boards finished.
pub async fn unplug_together(
    boards: &[VirtualBoard],
    recorder: RecorderHandle,
    plan: &OutagePlan,
    speed: f64,
    unplugged: Duration,
) -> Result<usize, String> {
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + wall(plan.outage_at_ms, speed)).await;
    for board in boards {
        board.unplug().await.map_err(|e| format!("unplug: {e}"))?;
    }
    tokio::time::sleep(unplugged).await;
    for board in boards {
        board.replug().await.map_err(|e| format!("replug: {e}"))?;
    }
    let replugged = tokio::time::Instant::now();
    let mut finished = 0;
    for board in boards {
        let limit = wall(plan.end_ms, speed) + Duration::from_secs(60);
        if tokio::time::timeout(limit, board.finished()).await.is_ok() {
            finished += 1;
        }
    }
    // Games that ended while unplugged are read once the link is back: the handshake waits
    // for a move log (2 s), and a board nothing explains stands a second before it is taken
    // up.
    let settled = (tokio::time::Instant::now() + Duration::from_secs(2))
        .max(replugged + Duration::from_secs(6));
    tokio::time::sleep_until(settled).await;
    recorder.shutdown().await;
    Ok(finished)
}

/// Plays the outage and measures it.
pub async fn measure(run: OutageRun) -> Result<OutageFigures, String> {
    let plan = OutagePlan::new(run.boards)?;
    let gap_ms = (run.unplugged_s * 1000.0 * run.speed) as u64;
    let plies_in_gap = plan
        .scripts
        .iter()
        .flat_map(|s| clock_presses(s))
        .filter(|&t| t > plan.outage_at_ms && t < plan.outage_at_ms + gap_ms)
        .count();
    // A folder of its own (named apart from `bench boards`' folders).
    let dir = BenchDir::create(100_000 + run.boards).map_err(|e| format!("scratch folder: {e}"))?;
    let (boards, out, recorder, feed) = record_boards_with_feed(
        dir.path(),
        plan.scripts.clone(),
        run.speed,
        run.eeprom_log,
        "Outage bench",
    )
    .await?;
    unplug_together(
        &boards,
        recorder,
        &plan,
        run.speed,
        Duration::from_secs_f64(run.unplugged_s),
    )
    .await?;

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
        games_held: 0,
        games_with_order_alert: 0,
        games_taken_up: 0,
        wrong_without_alert: 0,
        games_live_to_end: 0,
    };
    let events = board_events(&feed);
    for (k, game) in plan.games.iter().enumerate() {
        let board = (k + 1) as u32;
        let none = Vec::new();
        let told = events.get(&board).unwrap_or(&none);
        let account = GameAccount::of(told);
        let record = recorded_game(&out, k + 1);
        let recorded: Vec<String> = record
            .as_ref()
            .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
            .unwrap_or_default();
        figures.plies_played += game.moves_uci.len();
        figures.plies_recorded += recorded.len();
        // A game taken up from the board's position records the game's last moves.
        let played_tail = if account.taken_up {
            &game.moves_uci[game.moves_uci.len().saturating_sub(recorded.len())..]
        } else {
            &game.moves_uci[..]
        };
        let agrees = recorded.iter().zip(played_tail).all(|(a, b)| a == b)
            && recorded.len() <= played_tail.len();
        if !agrees {
            figures.games_with_wrong_move += 1;
            if !account.order_alert && !account.taken_up {
                figures.wrong_without_alert += 1;
            }
        } else if recorded.len() == game.moves_uci.len() && !account.taken_up {
            figures.games_exact += 1;
        } else if recorded.len() < played_tail.len() {
            figures.games_short += 1;
        }
        figures.games_with_order_alert += usize::from(account.order_alert);
        figures.games_taken_up += usize::from(account.taken_up);
        figures.games_held += usize::from(account.held_long);
        let ended = final_board(&game.moves_uci);
        let reached = record.map(|g| g.position().board().clone());
        figures.games_live_to_end += usize::from(ended.is_some() && reached == ended);
    }
    Ok(figures)
}

/// What the recorder told of one game, from its events.
#[derive(Debug, Default)]
struct GameAccount {
    order_alert: bool,
    taken_up: bool,
    held_long: bool,
}

impl GameAccount {
    fn of(events: &[Event]) -> GameAccount {
        let mut account = GameAccount::default();
        let mut held_since = None;
        for event in events {
            match event {
                Event::Alert(a) => match a.gap {
                    Some(GapAccount::Orders { .. }) => account.order_alert = true,
                    Some(GapAccount::Reanchored { .. }) => account.taken_up = true,
                    None => {}
                },
                Event::BoardState {
                    held: true, t_ms, ..
                } => {
                    held_since = held_since.or(Some(*t_ms));
                }
                Event::BoardState {
                    held: false, t_ms, ..
                } => {
                    if let Some(since) = held_since.take() {
                        account.held_long |= t_ms.saturating_sub(since) > LONG_HOLD_MS;
                    }
                }
                _ => {}
            }
        }
        // Held at the end: never released.
        account.held_long |= held_since.is_some();
        account
    }
}

/// Every board's events, in order, from the feed.
fn board_events(feed: &Feed) -> std::collections::BTreeMap<u32, Vec<Event>> {
    let mut events: std::collections::BTreeMap<u32, Vec<Event>> = Default::default();
    for e in feed.events_after(0, Scope::All).unwrap_or_default() {
        let Ok(value) = serde_json::from_str::<serde_json::Value>(&e.json) else {
            continue;
        };
        if let Some(event) = value
            .get("event")
            .and_then(|v| serde_json::from_value::<Event>(v.clone()).ok())
        {
            events.entry(e.board).or_default().push(event);
        }
    }
    events
}

/// The board the game `moves` ends on.
fn final_board(moves: &[String]) -> Option<shakmaty::Board> {
    let mut game = crate::rules::Game::standard();
    for m in moves {
        game.play_uci(m).ok()?;
    }
    Some(game.position().board().clone())
}

/// The latest game in board `k`'s PGN file (none when it is unreadable).
fn recorded_game(out: &Path, k: usize) -> Option<crate::rules::Game> {
    let path = out.join(format!("round-1/game-{k}.pgn"));
    let text = std::fs::read_to_string(path).ok()?;
    read_games(&text)
        .ok()
        .and_then(|mut games| games.pop())
        .and_then(|g| g.to_game().ok())
}
