//! `touchmove demo --scripted`: the demo's hands without boards, ports, journal or driver.
//! Each board's simulated observations (and the readings of a clock the players press) go
//! straight into a recorder's pipeline ([`BoardPipeline::on_observation`]); its events are
//! published to the web server, its games written to the PGN folder by the recorder's writer,
//! and the arbiter's actions applied by the pipeline, as `touchmove record` applies them.
//! Every round's games follow each other.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use shakmaty::Color;
use tokio::sync::{Barrier, mpsc, watch};

use super::{
    BASE_MS, DemoArgs, INCREMENT_MS, announce_results, board_seed, hands_for, interrupted,
    round_event, round_games,
};
use crate::act::Event;
use crate::board::kind::BoardKind;
use crate::board::{ClockReading, Millis, Observation, ObservationKind};
use crate::clock::{SoftwareClock, TimeControl};
use crate::record::GameRecord;
use crate::record::arbiter::ArbiterRequest;
use crate::recorder::layout::write_atomically;
use crate::recorder::{BoardPipeline, BoardSource, EventConfig, GameTags};
use crate::server::{self, ArbiterSink, Feed, GameInfo};

/// One board's game of a round.
struct ScriptedBoard {
    pipeline: BoardPipeline,
    /// The game time the board has reached.
    t_ms: Millis,
}

/// What the boards, the arbiter task and the PGN files share.
struct Scripted {
    feed: Arc<Feed>,
    out: PathBuf,
    /// Every round's boards, by (round, board).
    boards: Mutex<BTreeMap<(u32, u32), ScriptedBoard>>,
    /// The round being played.
    round: Mutex<u32>,
    speed: f64,
}

impl Scripted {
    fn boards(&self) -> MutexGuard<'_, BTreeMap<(u32, u32), ScriptedBoard>> {
        self.boards.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn current_round(&self) -> u32 {
        *self.round.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `step` on board `board`'s pipeline of `round` at `t_ms`, publishes the events it
    /// gives and rewrites the round's PGN when it gave any.
    fn step<T>(
        &self,
        (round, board): (u32, u32),
        t_ms: Millis,
        step: impl FnOnce(&mut BoardPipeline, &mut Vec<Event>) -> T,
    ) -> Option<T> {
        let mut boards = self.boards();
        let scripted = boards.get_mut(&(round, board))?;
        scripted.t_ms = scripted.t_ms.max(t_ms);
        let mut events = Vec::new();
        let answer = step(&mut scripted.pipeline, &mut events);
        let changed = !events.is_empty();
        for event in events {
            self.feed.publish(round, board, event);
        }
        if changed {
            self.write_pgn(round, board, &boards);
        }
        Some(answer)
    }

    /// Applies an arbiter action to the current round's game on its board, as the recorder
    /// does; the answer goes back to the web page.
    fn arbiter(&self, request: &ArbiterRequest) -> Result<String, String> {
        let key = (self.current_round(), request.board);
        let t_ms = self.boards().get(&key).map_or(0, |b| b.t_ms);
        let answer = self
            .step(key, t_ms, |pipeline, out| {
                pipeline.on_arbiter(t_ms, request, out)
            })
            .unwrap_or_else(|| Err(format!("no game on board {}", request.board)))?;
        self.feed.note_arbiter_action(key.0, key.1, &request.action);
        self.write_pgn(key.0, key.1, &self.boards());
        Ok(answer)
    }

    /// Writes board `board`'s game and its round's games (files and feed), as the recorder's
    /// pipeline writes them.
    fn write_pgn(&self, round: u32, board: u32, boards: &BTreeMap<(u32, u32), ScriptedBoard>) {
        let Some(game) = boards.get(&(round, board)).map(|b| b.pipeline.pgn()) else {
            return;
        };
        let round_text: Vec<String> = boards
            .range((round, 0)..=(round, u32::MAX))
            .map(|(_, b)| b.pipeline.pgn())
            .collect();
        let round_text = round_text.join("\n");
        self.feed.set_pgn(round, board, game.clone());
        self.feed.set_round_pgn(round, round_text.clone());
        let dir = self.out.join(format!("round-{round}"));
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| {
                write_atomically(&dir.join(format!("game-{board}.pgn")), game.as_bytes())
            })
            .and_then(|()| write_atomically(&dir.join("games.pgn"), round_text.as_bytes()));
        if let Err(e) = written {
            eprintln!(
                "touchmove demo: cannot write PGN under {}: {e}",
                dir.display()
            );
        }
    }
}

/// Runs the scripted demo until Ctrl-C.
pub(super) async fn run(args: &DemoArgs, games: &[GameRecord]) -> ExitCode {
    let token = server::token::generate();
    let state = crate::recorder::layout::state_dir(&args.out);
    let token_file = state.join(crate::recorder::channel::TOKEN_NAME);
    if let Err(e) =
        std::fs::create_dir_all(&state).and_then(|()| server::token::store(&token_file, &token))
    {
        eprintln!("touchmove demo: cannot write {}: {e}", token_file.display());
        return ExitCode::FAILURE;
    }
    let feed = Arc::new(Feed::new());
    let (sink, mut requests): (ArbiterSink, _) = mpsc::channel(64);
    let server =
        match server::serve(args.listen, Arc::clone(&feed), Some(sink), token.clone()).await {
            Ok(server) => server,
            Err(e) => {
                eprintln!("touchmove demo: {e}");
                return ExitCode::FAILURE;
            }
        };
    let announcer = tokio::spawn(announce_results(Arc::clone(&feed)));
    let scripted = Arc::new(Scripted {
        feed,
        out: args.out.clone(),
        boards: Mutex::new(BTreeMap::new()),
        round: Mutex::new(1),
        speed: args.speed.max(0.01),
    });
    println!("touchmove demo: {} boards playing real games", args.boards);
    print!(
        "{}",
        server::token::banner(server.local_addr(), &token, Some(&token_file))
    );
    println!("PGN files:    {}/round-N/", args.out.display());
    println!("Press Ctrl-C to stop.");
    let arbiter = {
        let scripted = Arc::clone(&scripted);
        tokio::spawn(async move {
            while let Some((request, reply)) = requests.recv().await {
                let _ = reply.send(scripted.arbiter(&request));
            }
        })
    };
    let (stop_tx, stop) = watch::channel(false);
    let tasks = start_boards(args, games, &scripted, &stop);
    interrupted().await;
    println!("\nStopping…");
    let _ = stop_tx.send(true);
    for task in tasks {
        let _ = task.await;
    }
    arbiter.abort();
    announcer.abort();
    server.shutdown().await;
    println!("PGN files are complete under {}", args.out.display());
    ExitCode::SUCCESS
}

/// One task per board, playing round after round (the next games of the fixture each
/// round); a round starts on every board together.
fn start_boards(
    args: &DemoArgs,
    games: &[GameRecord],
    scripted: &Arc<Scripted>,
    stop: &watch::Receiver<bool>,
) -> Vec<tokio::task::JoinHandle<()>> {
    let count = args.boards.count();
    let barrier = Arc::new(Barrier::new(count as usize));
    let (args, games) = (Arc::new(args.clone()), Arc::new(games.to_vec()));
    (1..=count)
        .map(|board| {
            let (scripted, barrier, mut stop) =
                (Arc::clone(scripted), Arc::clone(&barrier), stop.clone());
            let (args, games) = (Arc::clone(&args), Arc::clone(&games));
            tokio::spawn(async move {
                for round in 1u32.. {
                    let chosen = round_games(&games, count as usize, round);
                    let sources = vec![(BoardKind::Dgt, BoardSource::Auto); chosen.len()];
                    let event = round_event(&args, &chosen, round, sources);
                    let game = chosen[board as usize - 1];
                    let sim = hands_for(game, board, board_seed(&args, board, round));
                    play(&scripted, &event, board, &sim.observations, &mut stop).await;
                    if *stop.borrow() {
                        return;
                    }
                    let pause = Duration::from_secs_f64(15.0 / scripted.speed);
                    tokio::select! {
                        _ = stop.changed() => return,
                        _ = barrier.wait() => {}
                    }
                    tokio::select! {
                        _ = stop.changed() => return,
                        _ = tokio::time::sleep(pause) => {}
                    }
                    if board == 1 {
                        *scripted.round.lock().unwrap_or_else(|e| e.into_inner()) = round + 1;
                    }
                }
            })
        })
        .collect()
}

/// Plays one board's observations of round `event.round` into a fresh pipeline, at the
/// demo's speed, with the readings of the clock the players press every second.
async fn play(
    scripted: &Scripted,
    event: &EventConfig,
    board: u32,
    observations: &[Observation],
    stop: &mut watch::Receiver<bool>,
) {
    let key = (event.round, board);
    let control = TimeControl::parse(&format!("{}+{}", BASE_MS / 1000, INCREMENT_MS / 1000))
        .unwrap_or(TimeControl::Unknown);
    let tags = GameTags::new(event, board);
    let config = event.board(board);
    scripted.feed.upsert_game(GameInfo {
        round: event.round,
        board,
        white: config.map_or("?".to_string(), |b| b.white.name.clone()),
        black: config.map_or("?".to_string(), |b| b.black.name.clone()),
        tags: tags.tags().to_vec(),
    });
    scripted.boards().insert(
        key,
        ScriptedBoard {
            pipeline: BoardPipeline::new(tags, control.clone()),
            t_ms: 0,
        },
    );
    let mut clock = SoftwareClock::new(control);
    let mut now: Millis = 0;
    for obs in with_clock_readings(observations, &mut clock) {
        let wait =
            Duration::from_secs_f64(obs.t_ms.saturating_sub(now) as f64 / 1000.0 / scripted.speed);
        now = now.max(obs.t_ms);
        tokio::select! {
            _ = stop.changed() => return,
            _ = tokio::time::sleep(wait) => {}
        }
        scripted.step(key, obs.t_ms, |pipeline, out| {
            pipeline.on_observation(&obs, out)
        });
    }
    let end = now.saturating_add(END_WAIT_MS);
    scripted.step(key, end, |pipeline, out| pipeline.tick(end, out));
}

/// After a board's last observation, the time it is given for what waits (a press, a result
/// signal standing).
const END_WAIT_MS: Millis = 2_000;

/// `observations` with the clock's readings: a reading after every press, and every second
/// while a clock runs. White's clock starts with the first move's first observation.
fn with_clock_readings(
    observations: &[Observation],
    clock: &mut SoftwareClock,
) -> Vec<Observation> {
    let reading = |clock: &SoftwareClock, t_ms: Millis| Observation {
        t_ms,
        kind: ObservationKind::ClockTimes(ClockReading {
            white_ms: clock.remaining(t_ms, Color::White),
            black_ms: clock.remaining(t_ms, Color::Black),
            running: clock.running().map(Into::into),
            flag: false,
        }),
    };
    let mut out = Vec::with_capacity(observations.len() * 2);
    let mut next_second: Option<Millis> = None;
    for obs in observations {
        while let Some(t) = next_second.filter(|&t| t < obs.t_ms) {
            out.push(reading(clock, t));
            next_second = Some(t + 1_000);
        }
        let first_move = next_second.is_none() && !matches!(obs.kind, ObservationKind::Snapshot(_));
        if first_move {
            clock.start(obs.t_ms, Color::White);
            next_second = Some(obs.t_ms + 1_000);
        }
        out.push(obs.clone());
        if let ObservationKind::ClockPressed { by } = obs.kind {
            clock.press(obs.t_ms, by);
            out.push(reading(clock, obs.t_ms));
        }
    }
    out
}
