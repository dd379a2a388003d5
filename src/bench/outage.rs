//! `touchmove bench outage`: boards unplugged together mid-game while the players go on.
//!
//! N virtual boards (pseudo-terminals, the real driver, an in-process recorder) play the
//! fixture games, with plain lift/place moves or with one of the hand models (`--hands`); a
//! third of the way into the first game every cable is pulled for a while and plugged in
//! again. The figures: games recorded exactly, games with a wrong move, games
//! that stopped short, with the boards' EEPROM move logs on or off; and how the games without
//! a log came through: held, with an order alert, taken up from the board's position, wrong
//! without an alert, recorded live to their end.
//!
//! One file for one benchmark: its plan, its run and its figures.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use shakmaty::Position;

use super::boards_per_recorder::{
    BenchDir, BoardMake, ScriptGame, event_for_ports, fixture_games, plain_timeline,
    spawn_boards_with_log,
};
use crate::act::{Event, GapAccount, Severity};
use crate::board::{Observation, ObservationKind};
use crate::record::GameRecord;
use crate::record::pgn::{read_games, read_games_bytes};
use crate::recorder::{Recorder, RecorderHandle, RunOptions};
use crate::server::feed::{Feed, Scope};
use crate::sim::hands::score::game_seed;
use crate::sim::hands::{ExpectedAlert, Noise, simulate_game};
use crate::sim::independent_hands::{self, Roughness};
use crate::sim::virtual_board::timeline::Pace;
use crate::sim::virtual_board::{ResumeMode, VirtualBoard};

/// One outage run.
#[derive(Debug, Clone)]
pub struct OutageRun {
    /// Boards unplugged together.
    pub boards: usize,
    /// Wall-clock seconds they stay unplugged.
    pub unplugged_s: f64,
    /// How many times faster than real time the boards play.
    pub speed: f64,
    /// The boards keep (and answer with) their EEPROM move log.
    pub eeprom_log: bool,
    /// The speed of the boards' serial lines in bytes per second (`None`: no limit).
    pub line_bytes_per_s: Option<u32>,
    /// Who plays the games on the boards.
    pub hands: Hands,
    /// Seed of the hand models: board K plays with the seed `bench recognition` and `bench
    /// crosscheck` give game K of the fixture games (`fixtures/recorder-games.pgn`).
    pub seed: u64,
    /// Where to keep the run's folder (journal, PGN files) for a look afterwards.
    pub keep: Option<PathBuf>,
    /// What the boards are like when plugged in again.
    pub resume: ResumeMode,
    /// A PGN file whose first games (from the standard start) the boards play instead of the
    /// fixture games: games the tests have not seen.
    pub pgn: Option<PathBuf>,
}

/// Who plays the outage's games on the boards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Hands {
    /// One lift and one place per move, 3 s of thought, a press after each move.
    Plain,
    /// The project's hand model, careful players on an ideal board ([`Noise::Clean`]).
    Clean,
    /// The project's hand model on a real board: slides, adjustments, knocked pieces,
    /// forgotten presses, scan effects ([`Noise::Realistic`]).
    Realistic,
    /// The independent hand model, careful players on a USB board ([`Roughness::Calm`]).
    Calm,
    /// The independent hand model, clumsy blitz players on a slowly scanning board
    /// ([`Roughness::Rough`]).
    Rough,
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
    /// The boards' line speed in bytes per second (none: no limit).
    pub line_bytes_per_s: Option<u32>,
    /// Who played.
    pub hands: Hands,
    /// Their seed.
    pub seed: u64,
    /// What the boards were like when plugged in again.
    pub resume: ResumeMode,
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
    /// Games with a move recorded that was not the move played, where no standing order
    /// alert marks the span in the PGN ("order not observed") with the order played among
    /// those it names, and no critical gap alert took the game up from the board.
    pub wrong_without_alert: usize,
    /// Games whose record reaches the position the game ended in (recorded live to its end).
    pub games_live_to_end: usize,
    /// Penalties proposed (7.5.5, not withdrawn) beyond the illegal moves and presses without
    /// a move the hands made on purpose, summed over the boards: a penalty for what the
    /// recorder did not see.
    pub unearned_penalties: usize,
    /// Each game's outcome.
    pub games: Vec<GameOutcome>,
}

/// A hold longer than this (wall-clock milliseconds) counts as a held game.
pub const LONG_HOLD_MS: u64 = 5_000;

/// Runs the outage once per resume mode, printing the figures of each as one JSON line, and
/// with several modes a table of them.
pub fn run_modes(run: OutageRun, modes: &[ResumeMode]) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let mut rows = Vec::new();
    for &resume in modes {
        let figures = runtime.block_on(measure(OutageRun {
            resume,
            ..run.clone()
        }))?;
        println!(
            "{}",
            serde_json::to_string(&figures).map_err(|e| e.to_string())?
        );
        rows.push(figures);
    }
    if rows.len() > 1 {
        println!("{}", table(&rows));
    }
    Ok(())
}

/// The figures of several runs, one line per resume mode.
fn table(rows: &[OutageFigures]) -> String {
    let mut text = format!(
        "{:<12} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8}",
        "resume",
        "log",
        "boards",
        "exact",
        "wrong",
        "short",
        "alert",
        "takeup",
        "silent",
        "live",
        "penalty"
    );
    for f in rows {
        let mode = serde_json::to_value(f.resume)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        text.push_str(&format!(
            "\n{:<12} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>6} {:>8}",
            mode,
            if f.eeprom_log { "on" } else { "off" },
            f.boards,
            f.games_exact,
            f.games_with_wrong_move,
            f.games_short,
            f.games_with_order_alert,
            f.games_taken_up,
            f.wrong_without_alert,
            f.games_live_to_end,
            f.unearned_penalties,
        ));
    }
    text
}

/// The fixture games on a number of boards at the outage's pace, and when the cables are pulled.
pub struct OutagePlan {
    /// The game each board plays: the moves its hands made.
    pub games: Vec<ScriptGame>,
    /// The penalties each board's hands earned: illegal moves completed and presses without
    /// a move they made on purpose.
    pub earned_penalties: Vec<usize>,
    /// The observations each board makes.
    pub scripts: Vec<Vec<Observation>>,
    /// Game time of the outage: 1.2 s after a clock press a third of the way into the first game.
    pub outage_at_ms: u64,
    /// Game time at which the last script ends.
    pub end_ms: u64,
}

impl OutagePlan {
    /// The fixture games, cycled over `boards` boards, played with plain lifts and places.
    pub fn new(boards: usize) -> Result<Self, String> {
        Self::played_by(boards, Hands::Plain, 0)
    }

    /// The fixture games, cycled over `boards` boards, played by `hands` (board K's hands
    /// seeded from `seed` and K, as the recognition benches seed game K).
    pub fn played_by(boards: usize, hands: Hands, seed: u64) -> Result<Self, String> {
        Self::of_games(fixture_games(), boards, hands, seed)
    }

    /// [`OutagePlan::played_by`] with `games` instead of the fixture games.
    pub fn of_games(
        games: Vec<ScriptGame>,
        boards: usize,
        hands: Hands,
        seed: u64,
    ) -> Result<Self, String> {
        let fixtures: Vec<ScriptGame> = games.into_iter().cycle().take(boards).collect();
        if fixtures.is_empty() {
            return Err("no games to play".to_string());
        }
        let played = fixtures
            .iter()
            .enumerate()
            .map(|(k, game)| play(game, hands, game_seed(seed, k + 1)))
            .collect::<Result<Vec<_>, String>>()?;
        let earned_penalties = played.iter().map(|p| p.earned_penalties).collect();
        let (games, scripts): (Vec<_>, Vec<_>) =
            played.into_iter().map(|p| (p.game, p.script)).unzip();
        let presses = clock_presses(&scripts[0]);
        let outage_at_ms = presses.get(presses.len() / 3).copied().unwrap_or(0) + 1200;
        let end_ms = scripts
            .iter()
            .filter_map(|s| s.last().map(|o| o.t_ms))
            .max()
            .unwrap_or(0);
        Ok(Self {
            games,
            earned_penalties,
            scripts,
            outage_at_ms,
            end_ms,
        })
    }
}

/// A game as one board's hands play it.
struct Played {
    /// The moves they made.
    game: ScriptGame,
    /// What the board sees.
    script: Vec<Observation>,
    /// The penalties they earned on purpose (completed illegal moves, presses without a
    /// move, unexchanged promotions); the independent hands and plain moves make none.
    earned_penalties: usize,
}

/// `game` played by `hands`.
fn play(game: &ScriptGame, hands: Hands, seed: u64) -> Result<Played, String> {
    let own = |noise| {
        let sim = simulate_game(
            None,
            false,
            &game.moves_uci,
            Some(&game.result),
            noise,
            seed,
        );
        let earned = sim
            .injected
            .iter()
            .filter(|i| matches!(&i.expected, ExpectedAlert::Required(a) if a.starts_with("7.5")))
            .count();
        match sim.error {
            Some(e) => Err(format!("the hands cannot play a fixture game: {e}")),
            None => Ok((sim.moves_uci, sim.observations, earned)),
        }
    };
    let independent = |roughness| {
        independent_hands::simulate(None, false, &game.moves_uci, seed, roughness)
            .map(|sim| (sim.moves_uci, sim.observations, 0))
            .map_err(|e| format!("the hands cannot play a fixture game: {e}"))
    };
    let (moves_uci, script, earned_penalties) = match hands {
        Hands::Plain => {
            let pace = Pace {
                think_ms: 3000,
                step_ms: 150,
            };
            (game.moves_uci.clone(), plain_timeline(game, pace), 0)
        }
        Hands::Clean => own(Noise::Clean)?,
        Hands::Realistic => own(Noise::Realistic)?,
        Hands::Calm => independent(Roughness::Calm)?,
        Hands::Rough => independent(Roughness::Rough)?,
    };
    Ok(Played {
        game: ScriptGame {
            moves_uci,
            result: game.result.clone(),
        },
        script,
        earned_penalties,
    })
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

/// Virtual boards (30-minute games, made as `make` says) playing `scripts` at `speed`, and an
/// in-process recorder
/// of event `event` recording them into `dir/out` (returned with them).
pub async fn record_boards(
    dir: &Path,
    scripts: Vec<Vec<Observation>>,
    speed: f64,
    make: BoardMake,
    event: &str,
) -> Result<(Vec<VirtualBoard>, PathBuf, RecorderHandle), String> {
    let (boards, out, recorder, _) =
        record_boards_with_feed(dir, scripts, speed, make, event).await?;
    Ok((boards, out, recorder))
}

/// [`record_boards`], with the recorder's feed (it keeps every event for the figures).
pub async fn record_boards_with_feed(
    dir: &Path,
    scripts: Vec<Vec<Observation>>,
    speed: f64,
    make: BoardMake,
    event: &str,
) -> Result<(Vec<VirtualBoard>, PathBuf, RecorderHandle, Arc<Feed>), String> {
    let boards = spawn_boards_with_log(dir, scripts, speed, 30 * 60 * 1000, 0, make)
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

/// Pulls every board's cable at the plan's outage (game time since the boards began to
/// play), plugs them in again `unplugged` later, waits for the boards to finish their
/// scripts (up to a minute past the plan's end) and for the recorder to read what they sent,
/// and shuts the recorder down 2 s later, no sooner than 6 s after the boards came back.
/// Returns how many boards finished.
pub async fn unplug_together(
    boards: &[VirtualBoard],
    recorder: RecorderHandle,
    plan: &OutagePlan,
    speed: f64,
    unplugged: Duration,
) -> Result<usize, String> {
    for board in boards {
        board.playing().await;
    }
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + wall(plan.outage_at_ms, speed)).await;
    for board in boards {
        board.unplug().await.map_err(|e| format!("unplug: {e}"))?;
    }
    tokio::time::sleep(unplugged).await;
    for board in boards {
        board.replug().await.map_err(|e| format!("replug: {e}"))?;
    }
    let mut finished = 0;
    for board in boards {
        let limit = wall(plan.end_ms, speed) + Duration::from_secs(60);
        if tokio::time::timeout(limit, board.finished()).await.is_ok() {
            finished += 1;
        }
    }
    // Every board is reconnected (the link retries every 2 s at most) and what it queued on
    // its line (a move log takes ≈ 8 s at 9600 baud) is read before the end.
    for board in boards {
        board.host_caught_up(Duration::from_secs(60)).await;
    }
    // A board nothing explains stands a second before it is taken up.
    tokio::time::sleep(Duration::from_secs(2)).await;
    recorder.shutdown().await;
    Ok(finished)
}

/// The games of the PGN file at `path` that start from the standard position.
fn games_of(path: &Path) -> Result<Vec<ScriptGame>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let records = read_games_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(records
        .iter()
        .filter(|r| r.start_fen.is_none() && !r.chess960)
        .filter_map(|r| {
            let game = r.to_game().ok()?;
            Some(ScriptGame {
                moves_uci: game.moves().iter().map(|m| m.uci.clone()).collect(),
                result: r.result.clone(),
            })
        })
        .collect())
}

/// Plays the outage and measures it.
pub async fn measure(run: OutageRun) -> Result<OutageFigures, String> {
    let games = match &run.pgn {
        Some(path) => games_of(path)?,
        None => fixture_games(),
    };
    let plan = OutagePlan::of_games(games, run.boards, run.hands, run.seed)?;
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
        BoardMake {
            eeprom_log: run.eeprom_log,
            line_bytes_per_s: run.line_bytes_per_s,
            resume: run.resume,
        },
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

    let events = board_events(&feed);
    let games: Vec<GameOutcome> = plan
        .games
        .iter()
        .enumerate()
        .map(|(k, game)| {
            let none = Vec::new();
            let told = events.get(&((k + 1) as u32)).unwrap_or(&none);
            let earned = plan.earned_penalties.get(k).copied().unwrap_or(0);
            GameOutcome::of(k + 1, game, earned, told, recorded_game(&out, k + 1))
        })
        .collect();
    if let Some(keep) = &run.keep {
        keep_folder(dir.path(), keep)?;
    }
    let count = |f: fn(&GameOutcome) -> bool| games.iter().filter(|g| f(g)).count();
    Ok(OutageFigures {
        boards: run.boards,
        unplugged_s: run.unplugged_s,
        speed: run.speed,
        eeprom_log: run.eeprom_log,
        line_bytes_per_s: run.line_bytes_per_s,
        hands: run.hands,
        seed: run.seed,
        resume: run.resume,
        plies_in_gap,
        games_exact: count(|g| g.exact),
        games_with_wrong_move: count(|g| g.first_wrong_ply.is_some()),
        games_short: count(|g| g.first_wrong_ply.is_none() && !g.exact && g.short),
        plies_recorded: games.iter().map(|g| g.plies_recorded).sum(),
        plies_played: games.iter().map(|g| g.plies_played).sum(),
        games_held: count(|g| g.held_long),
        games_with_order_alert: count(|g| g.order_alert),
        games_taken_up: count(|g| g.taken_up),
        wrong_without_alert: count(|g| g.wrong_without_alert),
        games_live_to_end: count(|g| g.live_to_end),
        unearned_penalties: games.iter().map(|g| g.unearned_penalties).sum(),
        games,
    })
}

/// How one board's game came through the outage.
#[derive(Debug, Clone, Serialize)]
pub struct GameOutcome {
    /// The board (from 1).
    pub board: usize,
    /// Plies played.
    pub plies_played: usize,
    /// Plies in the board's PGN file (for a game taken up from the board's position, those
    /// after the take-up).
    pub plies_recorded: usize,
    /// The first recorded ply that is not the move played there (counted in the file).
    pub first_wrong_ply: Option<usize>,
    /// Every move played, in order.
    pub exact: bool,
    /// The record stops short of the game.
    pub short: bool,
    /// An "order not observed" alert was raised.
    pub order_alert: bool,
    /// The game was taken up from the board's position.
    pub taken_up: bool,
    /// Held after the outage until its end, or for longer than [`LONG_HOLD_MS`].
    pub held_long: bool,
    /// The record reaches the position the game ended in.
    pub live_to_end: bool,
    /// A recorded move is not the move played, and neither a standing order alert marked
    /// at its span with the order played among those it names, nor a take-up, says so.
    pub wrong_without_alert: bool,
    /// Penalties proposed and not withdrawn beyond those the hands earned.
    pub unearned_penalties: usize,
}

impl GameOutcome {
    fn of(
        board: usize,
        game: &ScriptGame,
        earned_penalties: usize,
        told: &[Event],
        file: Option<GameRecord>,
    ) -> GameOutcome {
        let account = GameAccount::of(told);
        let record = file.as_ref().and_then(|f| f.to_game().ok());
        let recorded: Vec<String> = record
            .as_ref()
            .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
            .unwrap_or_default();
        // A game taken up from the board's position records the game's last moves.
        let played_tail = if account.taken_up {
            &game.moves_uci[game.moves_uci.len().saturating_sub(recorded.len())..]
        } else {
            &game.moves_uci[..]
        };
        let first_wrong_ply = recorded
            .iter()
            .zip(played_tail)
            .position(|(a, b)| a != b)
            .or((recorded.len() > played_tail.len()).then_some(played_tail.len()))
            .map(|i| i + 1);
        let ended = final_board(&game.moves_uci);
        let reached = record.map(|g| g.position().board().clone());
        GameOutcome {
            board,
            plies_played: game.moves_uci.len(),
            plies_recorded: recorded.len(),
            first_wrong_ply,
            exact: first_wrong_ply.is_none()
                && recorded.len() == game.moves_uci.len()
                && !account.taken_up,
            short: recorded.len() < played_tail.len(),
            order_alert: account.order_alert,
            taken_up: account.taken_up,
            held_long: account.held_long,
            live_to_end: ended.is_some() && reached == ended,
            wrong_without_alert: first_wrong_ply.is_some()
                && !account.taken_up
                && !file.as_ref().is_some_and(|f| {
                    covered_by_order_marks(f, &account.standing_orders, &game.moves_uci)
                }),
            unearned_penalties: account.penalties.saturating_sub(earned_penalties),
        }
    }
}

/// A standing order alert: the ply its span starts at, the order recorded there and the other
/// orders it names (each as UCI moves).
pub type OrderAlert = (u32, Vec<String>, Vec<Vec<String>>);

/// True when every recorded move of `file` that is not the move `played` at its ply lies in
/// a span some standing order alert names, the PGN marks that span "order not observed", and
/// the order played there is the one recorded or one of the others the alert names.
pub fn covered_by_order_marks(file: &GameRecord, orders: &[OrderAlert], played: &[String]) -> bool {
    let mut fixed: Vec<String> = file.moves.iter().map(|m| m.uci.clone()).collect();
    for (first_ply, recorded, others) in orders {
        let from = (*first_ply as usize).saturating_sub(1);
        let to = from + recorded.len();
        let marked = file.moves.get(to.saturating_sub(1)).is_some_and(|m| {
            m.comments
                .iter()
                .any(|c| c.contains(crate::recorder::pipeline::ORDER_NOT_OBSERVED))
        });
        let Some(truth) = played.get(from..to) else {
            continue;
        };
        let named = recorded.as_slice() == truth || others.iter().any(|o| o.as_slice() == truth);
        if marked && named && fixed.get(from..to) == Some(recorded.as_slice()) {
            fixed.splice(from..to, truth.iter().cloned());
        }
    }
    fixed.len() <= played.len() && fixed[..] == played[..fixed.len()]
}

/// Copies the run's folder (journal, PGN files) to `keep`, for a look after the run.
pub(super) fn keep_folder(from: &Path, keep: &Path) -> Result<(), String> {
    let copy = |from: &Path, to: &Path| -> std::io::Result<()> {
        let mut folders = vec![(from.to_path_buf(), to.to_path_buf())];
        while let Some((from, to)) = folders.pop() {
            std::fs::create_dir_all(&to)?;
            for entry in std::fs::read_dir(&from)? {
                let entry = entry?;
                let kind = entry.file_type()?;
                let target = to.join(entry.file_name());
                if kind.is_dir() {
                    folders.push((entry.path(), target));
                } else if kind.is_file() {
                    std::fs::copy(entry.path(), target)?;
                }
            }
        }
        Ok(())
    };
    copy(from, keep).map_err(|e| format!("cannot keep the run's folder in {}: {e}", keep.display()))
}

/// What the recorder told of one game, from its events.
#[derive(Debug, Default)]
struct GameAccount {
    order_alert: bool,
    taken_up: bool,
    held_long: bool,
    /// The order alerts no later alert withdrew: first ply, order recorded, other orders.
    standing_orders: Vec<(u32, Vec<String>, Vec<Vec<String>>)>,
    /// Penalty proposals (7.5.5) no later one withdrew.
    penalties: usize,
}

impl GameAccount {
    fn of(events: &[Event]) -> GameAccount {
        let mut account = GameAccount::default();
        let mut held_since = None;
        let mut standing: Vec<&crate::act::Alert> = Vec::new();
        for event in events {
            match event {
                Event::Alert(a) if a.article == "7.5.5" => {
                    // An Info 7.5.5 withdraws a proposal.
                    if a.severity == Severity::Info {
                        account.penalties = account.penalties.saturating_sub(1);
                    } else {
                        account.penalties += 1;
                    }
                }
                Event::Alert(a) => {
                    standing.retain(|old| !a.withdraws.iter().any(|r| old.is(r)));
                    match a.gap {
                        Some(GapAccount::Orders { .. }) => {
                            account.order_alert = true;
                            standing.push(a);
                        }
                        Some(GapAccount::Reanchored { .. }) => account.taken_up = true,
                        None => {}
                    }
                }
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
        account.standing_orders = standing
            .into_iter()
            .filter_map(|a| match &a.gap {
                Some(GapAccount::Orders { recorded, others }) => {
                    Some((a.ply, recorded.clone(), others.clone()))
                }
                _ => None,
            })
            .collect();
        account
    }
}

/// Every board's events, in order, from the feed.
fn board_events(feed: &Feed) -> std::collections::BTreeMap<u32, Vec<Event>> {
    let mut events: std::collections::BTreeMap<u32, Vec<Event>> = Default::default();
    for e in feed.events_after(0, Scope::All).unwrap_or_default() {
        if let Some(alert) = &e.alert {
            events
                .entry(e.board)
                .or_default()
                .push(Event::Alert(alert.clone()));
            continue;
        }
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
fn recorded_game(out: &Path, k: usize) -> Option<GameRecord> {
    let path = out.join(format!("round-1/game-{k}.pgn"));
    let text = std::fs::read_to_string(path).ok()?;
    read_games(&text).ok().and_then(|mut games| games.pop())
}
