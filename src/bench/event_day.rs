//! `touchmove bench event`: rounds of an event the way an arbiter runs them.
//!
//! Each round's first boards of a real TRF are played on virtual boards by the project's
//! model of human hands, with real games whose results are the TRF's (taken from a PGN file
//! of real games). Half of the games end with a result signal; the others just stop, as
//! after a resignation, and the arbiter enters the result with `touchmove arbiter`. After
//! each game the players set the pieces back (piece by piece or swept off first); some boards
//! then play a post-mortem with the clock stopped and set up again, and some are switched off
//! at the end. `touchmove record` records the round, is restarted once its boards are done
//! (before the arbiter's results), and stopped; `touchmove results` then writes the round
//! into the TRF, and the next round starts on new boards.
//!
//! The figures: games whose `game-K.pgn` holds exactly the game played (its moves, the
//! paired names, the played result, and no other game), and played boards whose result is
//! in both players' lines of the TRF.
//!
//! One file for one benchmark: its plan, its rounds and its figures.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use serde::Serialize;

use super::boards_per_recorder::{BenchDir, spawn_boards};
use crate::board::Observation;
use crate::event::trf::{Trf, TrfGame};
use crate::record::pgn::read_games;
use crate::sim::after_game::{SetBack, board_after, post_mortem, set_back};
use crate::sim::hands::pgn_games::{PgnGame, read_games as read_pgn_games};
use crate::sim::hands::score::game_seed;
use crate::sim::hands::{Noise, simulate_game};
use crate::sim::virtual_board::VirtualBoard;
use crate::sim::virtual_board::timeline::Pace;

/// One run of the event bench.
#[derive(Debug, Clone)]
pub struct EventRun {
    /// The TRF whose rounds are played (its results are the games' results).
    pub trf: PathBuf,
    /// Real games to play, in PGN; each board gets one whose result is the TRF's.
    pub games: PathBuf,
    /// Boards played per round (the round's first played boards).
    pub boards: usize,
    /// Rounds played, from round 1.
    pub rounds: u32,
    /// How many times faster than real time the boards play.
    pub speed: f64,
    /// Longest pause of the players kept (ms of game time): longer thinking is shortened.
    pub max_pause_ms: u64,
    /// Longest game played (plies): the real games chosen are no longer.
    pub max_plies: usize,
    /// Seed of the hands and of what the players do after the game.
    pub seed: u64,
    /// Keep the run's folder (journal, PGN files, TRF) here.
    pub keep: Option<PathBuf>,
}

/// What an event run shows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EventFigures {
    /// Boards per round.
    pub boards: usize,
    /// Rounds.
    pub rounds: u32,
    /// Games played, over the rounds.
    pub games_played: usize,
    /// Games whose `game-K.pgn` holds exactly that game: its moves, the paired names, the
    /// played result, and no other game.
    pub games_exact: usize,
    /// Games whose file has every move played, whatever its result.
    pub games_with_every_move: usize,
    /// Games whose file has the played result.
    pub games_with_result: usize,
    /// Played boards whose result is in both players' lines of the TRF `results` wrote.
    pub results_in_trf: usize,
    /// Games ended by a result signal (or on the board: mate, stalemate).
    pub ended_on_the_board: usize,
    /// Games that just stopped and got the arbiter's result.
    pub results_by_arbiter: usize,
    /// Boards set back after a post-mortem as well.
    pub post_mortems: usize,
    /// Boards switched off at the end of their round.
    pub switched_off: usize,
    /// Times `touchmove record` was started.
    pub recorder_starts: usize,
    /// Wall-clock seconds of the run.
    pub seconds: f64,
    /// The first games or TRF lines that were not right, and why.
    pub failures: Vec<String>,
}

/// How a board's game ends and what follows it.
#[derive(Debug, Clone)]
struct BoardPlan {
    /// The board number in the round.
    board: u32,
    /// The TRF's game (players' ranks and codes).
    paired: TrfGame,
    white: String,
    black: String,
    /// The result played.
    result: String,
    /// The moves the hands made.
    moves_uci: Vec<String>,
    /// The game ends on the board (signal, mate); otherwise the arbiter gives the result.
    on_the_board: bool,
    post_mortem: bool,
    switched_off: bool,
    script: Vec<Observation>,
}

/// Runs the event and prints its figures as one JSON line; fails when a game or result was
/// lost.
pub fn run(run: EventRun) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let figures = runtime.block_on(measure(&run))?;
    println!(
        "{}",
        serde_json::to_string(&figures).map_err(|e| e.to_string())?
    );
    if figures.games_exact < figures.games_played || figures.results_in_trf < figures.games_played {
        return Err(format!(
            "{} of {} games recorded exactly, {} of {} results in the TRF",
            figures.games_exact, figures.games_played, figures.results_in_trf, figures.games_played
        ));
    }
    Ok(())
}

/// Plays the rounds and measures them.
pub async fn measure(run: &EventRun) -> Result<EventFigures, String> {
    let began = Instant::now();
    let original = Trf::load(&run.trf, None).map_err(|e| e.to_string())?;
    let games = std::fs::read(&run.games)
        .map_err(|e| format!("cannot read {}: {e}", run.games.display()))
        .and_then(|bytes| {
            read_pgn_games(&bytes).map_err(|e| format!("{}: {e}", run.games.display()))
        })?;
    let dir = BenchDir::create(200_000 + run.boards).map_err(|e| format!("scratch folder: {e}"))?;
    let out = dir.path().join("out");
    let work_trf = dir.path().join("event.trf");
    let mut figures = EventFigures {
        boards: run.boards,
        rounds: run.rounds,
        ..EventFigures::default()
    };
    let mut chooser = GameChooser::new(&games, run.max_plies);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(run.seed);
    for round in 1..=run.rounds {
        let paired = original
            .round(round)
            .map_err(|e| e.in_file(&original.path).to_string())?;
        let played: Vec<TrfGame> = paired
            .boards
            .into_iter()
            .filter(|g| result_of(g.codes).is_some())
            .take(run.boards)
            .collect();
        // The round as the arbiter exports it before it is played: no results on its boards.
        let source = if round == 1 { &run.trf } else { &work_trf };
        let before = Trf::load(source, None).map_err(|e| e.to_string())?;
        let blank: BTreeMap<u32, char> = played
            .iter()
            .flat_map(|g| [(g.white, ' '), (g.black, ' ')])
            .collect();
        std::fs::write(&work_trf, before.with_results(round, &blank))
            .map_err(|e| format!("{}: {e}", work_trf.display()))?;
        let mut plans = Vec::new();
        for (i, g) in played.iter().enumerate() {
            let name = |rank| {
                original
                    .player(rank)
                    .map_or_else(String::new, |p| p.player.name.clone())
            };
            let result = result_of(g.codes).unwrap_or("*").to_string();
            let seed = game_seed(run.seed, round as usize * 1000 + i + 1);
            let chosen = chooser.next(&result).ok_or_else(|| {
                format!("{} has no more games ending {result}", run.games.display())
            })?;
            plans.push(plan_board(
                g,
                name(g.white),
                name(g.black),
                &result,
                chosen,
                seed,
                run.max_pause_ms,
                run.speed,
                &mut rng,
            )?);
        }
        let round_dir = dir.path().join(format!("boards-{round}"));
        std::fs::create_dir_all(&round_dir).map_err(|e| e.to_string())?;
        play_round(
            run,
            round,
            &round_dir,
            &out,
            &work_trf,
            &plans,
            &mut figures,
        )
        .await?;
        results(&work_trf, round, &out)?;
        check_round(&out, round, &plans, &original, &work_trf, &mut figures)?;
    }
    if let Some(keep) = &run.keep {
        super::outage::keep_folder(dir.path(), keep)?;
    }
    figures.seconds = began.elapsed().as_secs_f64();
    Ok(figures)
}

/// The PGN result of a TRF game's codes, for a game played over the board.
fn result_of(codes: (char, char)) -> Option<&'static str> {
    match codes {
        ('1', '0') => Some("1-0"),
        ('0', '1') => Some("0-1"),
        ('=', '=') => Some("1/2-1/2"),
        _ => None,
    }
}

/// Takes the real games in file order, each once, by result.
struct GameChooser<'a> {
    games: Vec<&'a PgnGame>,
    used: Vec<bool>,
}

impl<'a> GameChooser<'a> {
    fn new(games: &'a [PgnGame], max_plies: usize) -> Self {
        let games: Vec<&PgnGame> = games
            .iter()
            .filter(|g| {
                g.fen.is_none()
                    && !g.chess960
                    && g.error.is_none()
                    && (10..=max_plies).contains(&g.moves_uci.len())
            })
            .collect();
        let used = vec![false; games.len()];
        GameChooser { games, used }
    }

    fn next(&mut self, result: &str) -> Option<&'a PgnGame> {
        let i = (0..self.games.len())
            .find(|&i| !self.used[i] && self.games[i].result.as_deref() == Some(result))?;
        self.used[i] = true;
        Some(self.games[i])
    }
}

/// A board's game played by realistic hands, how it ends, and what the players do after it.
#[allow(clippy::too_many_arguments)]
fn plan_board(
    paired: &TrfGame,
    white: String,
    black: String,
    result: &str,
    game: &PgnGame,
    seed: u64,
    max_pause_ms: u64,
    speed: f64,
    rng: &mut impl Rng,
) -> Result<BoardPlan, String> {
    let signal = rng.gen_bool(0.5);
    let sim = simulate_game(
        None,
        false,
        &game.moves_uci,
        signal.then_some(result),
        Noise::Realistic,
        seed,
    );
    if let Some(e) = sim.error {
        return Err(format!("game {} cannot be played: {e}", game.index));
    }
    let on_the_board = sim.expected_result.as_deref() == Some(result);
    let mut script = shortened(&sim.observations, max_pause_ms);
    let start = shakmaty::Board::new();
    // The players sign and talk for a few seconds before their hands go to the pieces (in
    // the script's time, which the board plays `speed` times faster).
    let pause = (rng.gen_range(3_000.0..6_000.0) * speed) as u64;
    let next = |s: &[Observation]| s.last().map_or(0, |o| o.t_ms) + pause;
    let how = if rng.gen_bool(0.5) {
        SetBack::Sweep
    } else {
        SetBack::PieceByPiece
    };
    let back = set_back(&board_after(&start, &script), how, next(&script), rng);
    script.extend(back);
    let post = rng.gen_bool(0.4);
    if post {
        let opening: Vec<String> = sim.moves_uci.iter().take(8).cloned().collect();
        let pace = Pace {
            think_ms: 1_500,
            step_ms: 300,
        };
        script.extend(post_mortem(&opening, pace, next(&script)));
        let again = set_back(&board_after(&start, &script), how, next(&script), rng);
        script.extend(again);
    }
    Ok(BoardPlan {
        board: paired.board,
        paired: paired.clone(),
        white,
        black,
        result: result.to_string(),
        moves_uci: sim.moves_uci,
        on_the_board,
        post_mortem: post,
        switched_off: rng.gen_bool(0.3),
        script,
    })
}

/// `observations` with every pause longer than `max_pause_ms` shortened to it.
fn shortened(observations: &[Observation], max_pause_ms: u64) -> Vec<Observation> {
    let mut removed = 0;
    let mut last = 0;
    observations
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
}

/// Plays one round: the boards with `touchmove record`, restarted once they are done,
/// the arbiter's results, then the recorder stopped.
async fn play_round(
    run: &EventRun,
    round: u32,
    dir: &Path,
    out: &Path,
    trf: &Path,
    plans: &[BoardPlan],
    figures: &mut EventFigures,
) -> Result<(), String> {
    let scripts = plans.iter().map(|p| p.script.clone()).collect();
    let boards = spawn_boards(dir, scripts, run.speed, 90 * 60 * 1000, 30_000)
        .map_err(|e| format!("virtual boards: {e}"))?;
    let config = dir.join("event.toml");
    write_event(&config, plans, &boards)?;
    let log = dir.join("recorder.log");
    let recorder = RecorderProcess::start(&config, trf, round, out, &log)?;
    figures.recorder_starts += 1;
    let longest = plans
        .iter()
        .filter_map(|p| p.script.last().map(|o| o.t_ms))
        .max()
        .unwrap_or(0);
    let limit =
        Duration::from_secs_f64(longest as f64 / 1000.0 / run.speed) + Duration::from_secs(120);
    for (board, plan) in boards.iter().zip(plans) {
        if tokio::time::timeout(limit, board.finished()).await.is_err() {
            figures.failures.push(format!(
                "round {round} board {}: the board never finished its script",
                plan.board
            ));
        }
    }
    for board in &boards {
        board.host_caught_up(Duration::from_secs(60)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    switch_off(&boards, plans, figures).await;
    recorder.stop();
    let recorder = RecorderProcess::start(&config, trf, round, out, &log)?;
    figures.recorder_starts += 1;
    for plan in plans {
        if plan.on_the_board {
            figures.ended_on_the_board += 1;
            continue;
        }
        arbiter_result(out, plan.board, &plan.result).await?;
        figures.results_by_arbiter += 1;
    }
    tokio::time::sleep(Duration::from_secs(1)).await;
    recorder.stop();
    figures.post_mortems += plans.iter().filter(|p| p.post_mortem).count();
    Ok(())
}

/// Switches off the boards whose plan says so.
async fn switch_off(boards: &[VirtualBoard], plans: &[BoardPlan], figures: &mut EventFigures) {
    for (board, plan) in boards.iter().zip(plans) {
        if plan.switched_off && board.unplug().await.is_ok() {
            figures.switched_off += 1;
        }
    }
}

/// The round's event file: one board per plan, on its virtual board's port (the players
/// come from the TRF).
fn write_event(path: &Path, plans: &[BoardPlan], boards: &[VirtualBoard]) -> Result<(), String> {
    let mut text = String::from(
        "event = \"Event bench\"\nsite = \"touchmove bench\"\ntime_control = \"5400+30\"\n",
    );
    for (plan, board) in plans.iter().zip(boards) {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\n",
            plan.board,
            board.path().display()
        ));
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// `touchmove record` as a child process of this one (the same executable).
struct RecorderProcess {
    child: Child,
}

impl RecorderProcess {
    fn start(
        config: &Path,
        trf: &Path,
        round: u32,
        out: &Path,
        log: &Path,
    ) -> Result<RecorderProcess, String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("{}: {e}", log.display()))?;
        let child = Command::new(touchmove_exe()?)
            .arg("record")
            .arg("--config")
            .arg(config)
            .arg("--pairings")
            .arg(trf)
            .arg("--round")
            .arg(round.to_string())
            .arg("--out")
            .arg(out)
            .arg("--no-server")
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot start touchmove record: {e}"))?;
        Ok(RecorderProcess { child })
    }

    /// Stops the recorder as Ctrl-C does, killing it if it does not stop within 10 s.
    fn stop(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        for _ in 0..200 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn touchmove_exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot find the touchmove executable: {e}"))
}

/// `touchmove arbiter … result R`, retried while the restarted recorder opens its socket.
async fn arbiter_result(out: &Path, board: u32, result: &str) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..300 {
        let o = Command::new(touchmove_exe()?)
            .args(["arbiter", "--who", "Bench", "--out"])
            .arg(out)
            .args([
                "--board",
                &board.to_string(),
                "result",
                result,
                "--reason",
                "resignation",
            ])
            .output()
            .map_err(|e| format!("touchmove arbiter: {e}"))?;
        if o.status.success() {
            return Ok(());
        }
        last = String::from_utf8_lossy(&o.stderr).into_owned();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!(
        "board {board}: the arbiter's result was refused: {last}"
    ))
}

/// `touchmove results` for `round`, written back into the TRF.
fn results(trf: &Path, round: u32, out: &Path) -> Result<(), String> {
    let o = Command::new(touchmove_exe()?)
        .arg("results")
        .arg("--trf")
        .arg(trf)
        .args(["--round", &round.to_string(), "--games"])
        .arg(out)
        .arg("--out")
        .arg(trf)
        .output()
        .map_err(|e| format!("touchmove results: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "touchmove results for round {round}: {}",
            String::from_utf8_lossy(&o.stderr)
        ));
    }
    Ok(())
}

/// Checks every board's file and TRF lines against what was played.
fn check_round(
    out: &Path,
    round: u32,
    plans: &[BoardPlan],
    original: &Trf,
    written: &Path,
    figures: &mut EventFigures,
) -> Result<(), String> {
    let after = Trf::load(written, None).map_err(|e| e.to_string())?;
    let code = |trf: &Trf, rank: u32| {
        trf.player(rank)
            .and_then(|p| p.rounds.get(round as usize - 1).cloned().flatten())
            .map(|e| e.result)
    };
    for plan in plans {
        figures.games_played += 1;
        let path = out.join(format!("round-{round}/game-{}.pgn", plan.board));
        let games = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|text| read_games(&text).map_err(|e| e.to_string()));
        let mut wrong = Vec::new();
        match games {
            Err(e) => wrong.push(format!("{}: {e}", path.display())),
            Ok(games) if games.is_empty() => wrong.push(format!("{} has no game", path.display())),
            Ok(games) => {
                let game = &games[games.len() - 1];
                let moves: Vec<String> = game
                    .to_game()
                    .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
                    .unwrap_or_default();
                let every_move = moves == plan.moves_uci;
                let right_result = game.result == plan.result;
                let names = game.tag("White") == Some(plan.white.as_str())
                    && game.tag("Black") == Some(plan.black.as_str());
                figures.games_with_every_move += usize::from(every_move);
                figures.games_with_result += usize::from(right_result);
                if every_move && right_result && names && games.len() == 1 {
                    figures.games_exact += 1;
                } else {
                    wrong.push(format!(
                        "{} games in the file; the last has {} of {} plies right{}, result {} \
                         (played {}), {} – {} (paired {} – {})",
                        games.len(),
                        moves
                            .iter()
                            .zip(&plan.moves_uci)
                            .take_while(|(a, b)| a == b)
                            .count(),
                        plan.moves_uci.len(),
                        if moves.len() > plan.moves_uci.len() {
                            " and more"
                        } else {
                            ""
                        },
                        game.result,
                        plan.result,
                        game.tag("White").unwrap_or("?"),
                        game.tag("Black").unwrap_or("?"),
                        plan.white,
                        plan.black
                    ));
                }
            }
        }
        for why in wrong {
            if figures.failures.len() < 20 {
                figures
                    .failures
                    .push(format!("round {round} board {}: {why}", plan.board));
            }
        }
        let paired = &plan.paired;
        let in_trf = [paired.white, paired.black]
            .into_iter()
            .all(|rank| code(&after, rank).is_some() && code(&after, rank) == code(original, rank));
        if in_trf {
            figures.results_in_trf += 1;
        } else if figures.failures.len() < 20 {
            figures.failures.push(format!(
                "round {round} board {}: the TRF has {:?}/{:?} for players {}/{}, the result \
                 played is {:?}/{:?}",
                plan.board,
                code(&after, paired.white),
                code(&after, paired.black),
                paired.white,
                paired.black,
                code(original, paired.white),
                code(original, paired.black)
            ));
        }
    }
    Ok(())
}
