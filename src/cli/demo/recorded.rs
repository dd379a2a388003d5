//! The demo through the real pipeline: virtual boards on pseudo-terminals played by simulated
//! hands, read by the recorder (driver, decoder, act-of-moving machine, journal, PGN folder)
//! and served by its web server, round after round.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use super::{
    BASE_MS, DemoArgs, INCREMENT_MS, announce_results, board_seed, hands_for, interrupted,
    round_event, round_games,
};
use crate::bench::spawn_boards;
use crate::board::kind::BoardKind;
use crate::event::EventFile;
use crate::event::spec::EventSpec;
use crate::record::GameRecord;
use crate::recorder::event_run::EventRun;
use crate::recorder::{BoardSource, EventConfig, RunOptions};
use crate::server::{self, Feed};
use crate::sim::snapshot_board::{SnapshotBoard, SnapshotBoardConfig};
use crate::sim::virtual_board::VirtualBoard;
use crate::sim::virtual_board::timeline::{Pace, lift_place};

/// The demo's virtual boards, playing, and the event that records them.
pub(super) struct DemoBoards {
    /// Folder of the boards' pseudo-terminal links (removed at the end).
    ports_dir: PathBuf,
    boards: Vec<VirtualBoard>,
    /// The boards of other kinds than DGT.
    others: Vec<SnapshotBoard>,
    pub(super) config: EventConfig,
}

impl DemoBoards {
    /// Stops the boards and removes their folder.
    pub(super) fn close(self) {
        drop(self.boards);
        drop(self.others);
        let _ = std::fs::remove_dir_all(&self.ports_dir);
    }
}

/// Starts the virtual boards of `args.boards` on pseudo-terminals for round `round`, each played
/// by simulated hands through the next game of `games` (round 1 plays the first games), and
/// the event configuration naming them.
pub(super) fn demo_boards(
    args: &DemoArgs,
    games: &[GameRecord],
    round: u32,
) -> Result<DemoBoards, String> {
    let ports_dir = std::env::temp_dir().join(format!(
        "touchmove-demo-{}-round-{round}",
        std::process::id()
    ));
    std::fs::create_dir_all(&ports_dir)
        .map_err(|e| format!("cannot create {}: {e}", ports_dir.display()))?;
    let chosen = round_games(games, args.boards.count() as usize, round);
    let kinds: Vec<BoardKind> = (0..args.boards.count())
        .map(|i| args.boards.kind_of(i))
        .collect();
    let boards = dgt_boards(args, &chosen, &kinds, round, &ports_dir)?;
    let others = other_boards(args, &chosen, &kinds, round, &ports_dir)?;
    let mut dgt_ports = boards.iter().map(|b| b.path().to_path_buf());
    let mut other_ports = others.iter().map(|b| b.path().to_path_buf());
    let sources = kinds
        .iter()
        .map(|&kind| {
            let port = if kind == BoardKind::Dgt {
                dgt_ports.next()
            } else {
                other_ports.next()
            };
            (kind, BoardSource::Port(port.unwrap_or_default()))
        })
        .collect();
    Ok(DemoBoards {
        ports_dir,
        boards,
        others,
        config: round_event(args, &chosen, round, sources),
    })
}

/// The DGT boards of the round, each played by simulated hands.
fn dgt_boards(
    args: &DemoArgs,
    chosen: &[&GameRecord],
    kinds: &[BoardKind],
    round: u32,
    ports_dir: &Path,
) -> Result<Vec<VirtualBoard>, String> {
    let scripts: Vec<_> = chosen
        .iter()
        .zip(1u32..)
        .filter(|(_, b)| kinds[*b as usize - 1] == BoardKind::Dgt)
        .map(|(g, board)| hands_for(g, board, board_seed(args, board, round)).observations)
        .collect();
    spawn_boards(
        ports_dir,
        scripts,
        args.speed.max(0.01),
        BASE_MS,
        INCREMENT_MS,
    )
    .map_err(|e| format!("cannot create the virtual boards' pseudo-terminals: {e}"))
}

/// The boards of other kinds than DGT, each played one careful lift and place per move.
fn other_boards(
    args: &DemoArgs,
    chosen: &[&GameRecord],
    kinds: &[BoardKind],
    round: u32,
    ports_dir: &Path,
) -> Result<Vec<SnapshotBoard>, String> {
    let mut others = Vec::new();
    for ((g, kind), number) in chosen.iter().zip(kinds).zip(1u32..) {
        if *kind == BoardKind::Dgt {
            continue;
        }
        let game = g.to_game().map_err(|e| format!("a demo game: {e}"))?;
        let moves: Vec<_> = game.moves().iter().map(|played| played.mv).collect();
        let script = lift_place(&shakmaty::Chess::default(), &moves, Pace::default());
        let path = ports_dir.join(format!("{kind}{number}"));
        let mut config = SnapshotBoardConfig::new(*kind, &path, script);
        config.speed = args.speed.max(0.01);
        config.seed = board_seed(args, number, round);
        others.push(
            SnapshotBoard::spawn(config).map_err(|e| {
                format!("cannot create a virtual {kind} board's pseudo-terminal: {e}")
            })?,
        );
    }
    Ok(others)
}

/// Round after round until Ctrl-C: a round ends when every board has played its game (or the
/// arbiter starts the next one on the desk).
pub(super) async fn run(args: &DemoArgs, games: &[GameRecord]) -> ExitCode {
    let feed = Arc::new(Feed::new());
    let announcer = tokio::spawn(announce_results(Arc::clone(&feed)));
    let mut options = RunOptions::new(&args.out, Arc::clone(&feed));
    options.listen = Some(args.listen);
    let mut round = 1;
    let code = loop {
        let demo_boards = match demo_boards(args, games, round) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("touchmove demo: {e}");
                break ExitCode::FAILURE;
            }
        };
        let spec = EventSpec::of(demo_boards.config.clone());
        let event = EventFile::of(demo_boards.config.clone());
        let mut run = match EventRun::open(spec, event, options.clone()).await {
            Ok(run) => run,
            Err(e) => {
                eprintln!("touchmove demo: {e}");
                demo_boards.close();
                break ExitCode::FAILURE;
            }
        };
        announce_round(args, round, &run);
        let go_on = round_played(args, round, &demo_boards, &mut run).await;
        if !go_on {
            println!("\nStopping…");
        }
        run.close().await;
        demo_boards.close();
        if !go_on {
            println!("PGN files are complete under {}", args.out.display());
            break ExitCode::SUCCESS;
        }
        round += 1;
    };
    announcer.abort();
    code
}

/// Says where the pages are (round 1), or that a round starts.
fn announce_round(args: &DemoArgs, round: u32, run: &EventRun) {
    if round > 1 {
        println!(
            "Round {round} starts on {} boards; the pages follow it.",
            args.boards
        );
        return;
    }
    let token_file = run.handle().token_path();
    let token = server::token::load(&token_file).unwrap_or_default();
    println!(
        "touchmove demo: virtual boards ({}), real games, realistic hands on the DGT boards",
        args.boards
    );
    if let Some(addr) = run.handle().server_addr() {
        print!("{}", server::token::banner(addr, &token, Some(&token_file)));
    }
    println!("PGN files:    {}/round-N/", args.out.display());
    println!("A new round starts when every board has played its game. Press Ctrl-C to stop.");
}

/// Waits for the round to end: true when every board has played its game (after a pause)
/// or the arbiter starts the next round, false on Ctrl-C.
async fn round_played(
    args: &DemoArgs,
    round: u32,
    demo_boards: &DemoBoards,
    run: &mut EventRun,
) -> bool {
    let played = boards_played(&demo_boards.boards);
    tokio::pin!(played);
    loop {
        tokio::select! {
            () = interrupted() => return false,
            () = &mut played => {
                let pause =
                    Duration::from_secs_f64((20.0 / args.speed.max(0.01)).clamp(3.0, 60.0));
                println!(
                    "Round {round}: every board has played its game; round {} starts in {} s.",
                    round + 1,
                    pause.as_secs()
                );
                return tokio::select! {
                    () = interrupted() => false,
                    () = tokio::time::sleep(pause) => true,
                };
            }
            Some(asked) = run.next_round_asked() => {
                if let Ok(reply) = asked.accept(round) {
                    let _ = reply.send(Ok(format!("round {} starts", round + 1)));
                    return true;
                }
            }
        }
    }
}

/// Resolves once every virtual board has played its script to the end.
async fn boards_played(boards: &[VirtualBoard]) {
    for board in boards {
        board.finished().await;
    }
}
