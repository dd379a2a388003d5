//! `touchmove demo`: a live event on virtual boards — web pages, arbiter controls and PGN
//! files, no hardware needed.
//!
//! By default the demo runs the real pipeline: one virtual DGT board per board number on a
//! pseudo-terminal ([`crate::sim::virtual_board`]), played by simulated realistic hands
//! ([`crate::sim::hands`]) through a real game from `fixtures/pgn/demo-uzchess-2025.pgn`
//! (embedded in the binary) with a 15+10 clock, read by the recorder (driver, decoder,
//! act-of-moving machine, journal, PGN folder) and served by its web server ([`recorded`]).
//! Board 2 is given hands that complete an illegal move (Article 7.5.1) early, so the arbiter
//! page has a decision to make. The demo stays live: once every board has played its game (or
//! the arbiter starts the next round on the desk) the next round begins with the next games of
//! the fixture, and the pages follow it; each game's end is printed.
//!
//! `--cluster nats://HOST:PORT` runs the same boards as an event on several PCs: two recorder
//! processes and one serve node joined by that NATS server ([`cluster`]).
//!
//! `--scripted` plays the same hands without boards, ports or journal: their observations go
//! straight into the recorder's pipeline, whose events go straight to the web server
//! ([`scripted`]).

mod board_mix;
mod cluster;
mod recorded;
mod scripted;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::board::kind::BoardKind;
use crate::board::leds::LedMode;
use crate::record::GameRecord;
use crate::record::pgn::read_games;
use crate::recorder::{BoardConfig, BoardSource, EventConfig, Player};
use crate::server::{self, Feed};
use crate::sim::hands::{
    ExpectedAlert, HandModel, IrregularityKind, Noise, SimulatedGame, simulate_with_model,
};
use board_mix::BoardMix;

/// The games the demo boards play.
const DEMO_PGN: &str = include_str!("../../fixtures/pgn/demo-uzchess-2025.pgn");

/// Base time and increment of the demo's time control.
const BASE_MS: u64 = 15 * 60 * 1000;
const INCREMENT_MS: u64 = 10_000;

/// Arguments of `touchmove demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    /// Address for the web pages and the API.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Folder for the PGN files (round-N/game-K.pgn and round-N/games.pgn). The journal and
    /// the arbiter's token are kept next to it, in OUT.state.
    #[arg(long, default_value = "touchmove-demo")]
    pub out: PathBuf,
    /// Number of DGT boards (1–10), or a mix of kinds, e.g.
    /// `dgt:4,millennium:2,chessnut:2,certabo:2` (kinds: dgt, millennium, certabo, sentio,
    /// chessnut).
    #[arg(long, default_value = "4")]
    pub boards: BoardMix,
    /// Playing speed: 1 is a brisk human pace (a move every 2–7 s per board), 5 is five
    /// times faster.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Name of the event in the PGN `Event` tag and the pages (default: from the games).
    #[arg(long)]
    pub event: Option<String>,
    /// Play the hands straight into the recorder's pipeline, without virtual boards, ports or
    /// journal (several rounds; board 2 completes an illegal move early).
    #[arg(long)]
    pub scripted: bool,
    /// Seed for the hands (the same seed replays the same games the same way).
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Run the demo as an event on several PCs: two `touchmove record` processes, each
    /// recording half of the boards, and one `touchmove serve` node (its pages at --listen),
    /// joined by the NATS JetStream server at this URL (`nats-server -js`).
    #[arg(long, value_name = "URL", conflicts_with = "scripted")]
    pub cluster: Option<String>,
}

/// Runs `touchmove demo`.
pub fn run(args: DemoArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("touchmove demo: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(demo(args))
}

async fn demo(args: DemoArgs) -> ExitCode {
    let games = match read_games(DEMO_PGN) {
        Ok(games) if !games.is_empty() => games,
        _ => {
            eprintln!("touchmove demo: the embedded demo games could not be read");
            return ExitCode::FAILURE;
        }
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!(
            "touchmove demo: cannot create the output folder {}: {e} (choose another with --out)",
            args.out.display()
        );
        return ExitCode::FAILURE;
    }
    if let Some(url) = &args.cluster {
        cluster::run(&args, &games, url).await
    } else if args.scripted {
        scripted::run(&args, &games).await
    } else {
        recorded::run(&args, &games).await
    }
}

/// The games round `round` plays on `count` boards: the next ones of the fixture (round 1
/// plays the first), over again when it runs out.
fn round_games(games: &[GameRecord], count: usize, round: u32) -> Vec<&GameRecord> {
    let first = (round as usize - 1) * count;
    (0..count)
        .map(|i| &games[(first + i) % games.len()])
        .collect()
}

/// The seed of board `board`'s hands in round `round`.
fn board_seed(args: &DemoArgs, board: u32, round: u32) -> u64 {
    args.seed ^ u64::from(board) ^ (u64::from(round - 1) << 8)
}

/// The event of round `round`: the boards (their kinds and where they are) with the players
/// of `chosen`, the event, site and date of the first game, the demo's time control.
fn round_event(
    args: &DemoArgs,
    chosen: &[&GameRecord],
    round: u32,
    boards: Vec<(BoardKind, BoardSource)>,
) -> EventConfig {
    let first = chosen[0];
    EventConfig {
        event: args
            .event
            .clone()
            .unwrap_or_else(|| format!("touchmove demo: {}", first.tag("Event").unwrap_or("?"))),
        site: first.tag("Site").unwrap_or("?").to_string(),
        date: first.tag("Date").unwrap_or("????.??.??").to_string(),
        round,
        time_control: Some(format!("{}+{}", BASE_MS / 1000, INCREMENT_MS / 1000)),
        leds: LedMode::Off,
        boards: boards
            .into_iter()
            .zip(chosen)
            .zip(1u32..)
            .map(|(((kind, source), game), number)| BoardConfig {
                number,
                source,
                kind,
                leds: LedMode::Off,
                white: player(game, "White"),
                black: player(game, "Black"),
            })
            .collect(),
    }
}

/// Player details from a game's tags.
fn player(game: &GameRecord, side: &str) -> Player {
    Player {
        name: game.tag(side).unwrap_or("?").to_string(),
        fide_id: game
            .tag(&format!("{side}FideId"))
            .and_then(|v| v.parse().ok()),
        title: game.tag(&format!("{side}Title")).map(str::to_string),
        rating: game.tag(&format!("{side}Elo")).and_then(|v| v.parse().ok()),
        ..Player::default()
    }
}

/// Realistic hands for board `board`, thinking about 3 s a move so the demo moves along.
/// Board 2 gets hostile hands, with the first seed whose hands complete an illegal move with a
/// clock press (7.5.1) between plies 4 and 12, so the arbiter page always has a decision.
fn hands_for(game: &GameRecord, board: u32, seed: u64) -> SimulatedGame {
    let moves: Vec<String> = game.moves.iter().map(|m| m.uci.clone()).collect();
    let simulate_with = |noise: Noise, seed: u64| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut model = HandModel::for_noise(noise, &mut rng);
        model.think_median_ms = model.think_median_ms.min(3_000.0);
        simulate_with_model(None, false, &moves, Some(&game.result), &model, &mut rng)
    };
    let simulate = |seed: u64| simulate_with(Noise::Realistic, seed);
    if board != 2 {
        return simulate(seed);
    }
    let sim = (seed..seed + 300)
        .map(|seed| simulate_with(Noise::Hostile, seed))
        .find(|sim| {
            sim.injected.iter().any(|i| {
                (4..=12).contains(&i.ply)
                    && i.kind == IrregularityKind::IllegalMoveCompleted
                    && matches!(i.expected, ExpectedAlert::Required(_))
            })
        })
        .unwrap_or_else(|| simulate(seed));
    if let Some(i) = sim
        .injected
        .iter()
        .find(|i| i.kind == IrregularityKind::IllegalMoveCompleted)
    {
        println!(
            "Board 2 will complete an illegal move at ply {} (Article 7.5.1) for the arbiter page.",
            i.ply
        );
    }
    sim
}

/// Prints every game's end as the feed publishes it: "Round 1, board 2: A – B 1-0 (checkmate)".
async fn announce_results(feed: Arc<Feed>) {
    let mut live = feed.subscribe(server::feed::Scope::All, None).live;
    loop {
        let event = match live.recv().await {
            Ok(event) => event,
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        };
        if event.kind != "result" {
            continue;
        }
        let Some(game) = feed.game(event.round, event.board) else {
            continue;
        };
        let summary = game.summary;
        if let Some(result) = summary.result {
            println!(
                "Round {}, board {}: {} – {} {result} ({})",
                summary.round,
                summary.board,
                summary.white,
                summary.black,
                summary.reason.unwrap_or_default()
            );
        }
    }
}

/// Waits for Ctrl-C (SIGINT) or SIGTERM.
async fn interrupted() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    let sigterm = async {
        match term.as_mut() {
            Some(term) => {
                term.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = sigterm => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_games_read_and_replay_legally() {
        let games = read_games(DEMO_PGN).unwrap();
        assert_eq!(games.len(), 10);
        for game in &games {
            let replayed = game.to_game().unwrap();
            assert_eq!(replayed.plies(), game.moves.len());
            assert!(!game.moves.is_empty());
            assert_ne!(game.result, "*");
        }
    }
}
