//! `touchmove demo`: a live event on virtual boards — web pages, arbiter controls and PGN
//! files, no hardware needed.
//!
//! By default the demo runs the real pipeline: one virtual DGT board per board number on a
//! pseudo-terminal ([`crate::sim::virtual_board`]), played by simulated realistic hands
//! ([`crate::sim::hands`]) through a real game from `fixtures/pgn/demo-uzchess-2025.pgn`
//! (embedded in the binary) with a 15+10 clock, read by the recorder (driver, decoder,
//! act-of-moving machine, journal, PGN folder) and served by its web server. Board 2 is
//! given hands that complete an illegal move (Article 7.5.1) early, so the arbiter page has
//! a decision to make. The demo stays live: once every board has played its game (or the
//! arbiter starts the next round on the desk) the next round begins with the next games of
//! the fixture, and the pages follow it; each game's end is printed.
//!
//! `--cluster nats://HOST:PORT` runs the same boards as an event on several PCs: two recorder
//! processes and one serve node joined by that NATS server ([`cluster`]).
//!
//! `--scripted` publishes the same games straight to the server instead (no recorder): every
//! round's games follow each other, and board 2 of round 1 raises a fixed 7.5.1 alert.

mod board_mix;
mod cluster;

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::Position;
use shakmaty::san::San;
use tokio::sync::{Barrier, mpsc, watch};

use crate::act::{Alert, Event, Severity};
use crate::bench::spawn_boards;
use crate::board::ColorName;
use crate::board::kind::BoardKind;
use crate::board::leds::LedMode;
use crate::event::EventFile;
use crate::event::spec::EventSpec;
use crate::record::arbiter::{ArbiterAction, ArbiterRequest};
use crate::recorder::event_run::EventRun;
use crate::recorder::{BoardConfig, BoardSource, EventConfig, Player, RunOptions};
use crate::rules::Game;
use crate::server::{self, ArbiterSink, Feed, GameInfo};
use crate::sim::hands::{
    ExpectedAlert, HandModel, IrregularityKind, Noise, SimulatedGame, simulate_with_model,
};
use crate::sim::snapshot_board::{SnapshotBoard, SnapshotBoardConfig};
use crate::sim::virtual_board::VirtualBoard;
use crate::sim::virtual_board::timeline::{Pace, lift_place};
use board_mix::BoardMix;

/// The games the demo boards play.
const DEMO_PGN: &str = include_str!("../../fixtures/pgn/demo-uzchess-2025.pgn");

/// Base time and increment of the demo's time control.
const BASE_MS: u64 = 15 * 60 * 1000;
const INCREMENT_MS: u64 = 10_000;

/// Arguments of `touchmove demo`.
#[derive(Debug, clap::Args)]
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
    /// Publish scripted events straight to the web server instead of running virtual boards
    /// through the recorder (several rounds, a fixed 7.5.1 alert on board 2).
    #[arg(long)]
    pub scripted: bool,
    /// Seed for the thinking times (the same seed replays the same pace).
    #[arg(long, default_value_t = 2026)]
    pub seed: u64,
    /// Run the demo as an event on several PCs: two `touchmove record` processes, each
    /// recording half of the boards, and one `touchmove serve` node (its pages at --listen),
    /// joined by the NATS JetStream server at this URL (`nats-server -js`).
    #[arg(long, value_name = "URL", conflicts_with = "scripted")]
    pub cluster: Option<String>,
}

/// A game from the fixture: its tags, SAN moves and result.
#[derive(Debug, Clone)]
struct SourceGame {
    tags: Vec<(String, String)>,
    sans: Vec<String>,
    result: String,
}

fn tag<'a>(tags: &'a [(String, String)], name: &str) -> Option<&'a str> {
    tags.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// Splits a PGN database into games with their SAN tokens (comments, variations, NAGs and
/// move numbers dropped).
fn parse_games(text: &str) -> Vec<SourceGame> {
    let mut games = Vec::new();
    let mut tags = Vec::new();
    let mut movetext = String::new();
    let mut flush = |tags: &mut Vec<(String, String)>, movetext: &mut String| {
        if tags.is_empty() && movetext.trim().is_empty() {
            return;
        }
        let (sans, result) = san_tokens(movetext);
        games.push(SourceGame {
            tags: std::mem::take(tags),
            sans,
            result,
        });
        movetext.clear();
    };
    for line in text.lines() {
        let line = line.trim();
        if let Some(inner) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            if !movetext.trim().is_empty() {
                flush(&mut tags, &mut movetext);
            }
            if let Some((name, value)) = inner.split_once(' ') {
                let value = value.trim().trim_matches('"').replace("\\\"", "\"");
                tags.push((name.to_string(), value));
            }
        } else {
            movetext.push_str(line);
            movetext.push('\n');
        }
    }
    flush(&mut tags, &mut movetext);
    games
}

fn san_tokens(movetext: &str) -> (Vec<String>, String) {
    let mut cleaned = String::new();
    let (mut brace, mut paren) = (false, 0u32);
    for c in movetext.chars() {
        match c {
            '{' => brace = true,
            '}' => brace = false,
            '(' if !brace => paren += 1,
            ')' if !brace => paren = paren.saturating_sub(1),
            c if !brace && paren == 0 => cleaned.push(c),
            _ => {}
        }
    }
    let mut sans = Vec::new();
    let mut result = "*".to_string();
    for token in cleaned.split_whitespace() {
        if matches!(token, "1-0" | "0-1" | "1/2-1/2" | "*") {
            result = token.to_string();
            continue;
        }
        match token.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.') {
            "" => {}
            t if t.starts_with('$') => {}
            t => sans.push(t.to_string()),
        }
    }
    (sans, result)
}

/// One board's game as the demo records it.
#[derive(Debug, Clone, Default)]
struct Record {
    tags: Vec<(String, String)>,
    /// SAN, remaining clock of the mover after the move, comments.
    moves: Vec<(String, u64, Vec<String>)>,
    result: Option<String>,
    termination: Option<String>,
    clocks: [u64; 2],
}

impl Record {
    fn to_pgn(&self) -> String {
        let mut out = String::new();
        let result = self.result.clone().unwrap_or_else(|| "*".to_string());
        for (name, value) in &self.tags {
            let value = if name == "Result" { &result } else { value };
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            out.push_str(&format!("[{name} \"{escaped}\"]\n"));
        }
        if let Some(reason) = &self.termination {
            out.push_str(&format!("[Termination \"{}\"]\n", reason.replace('"', "'")));
        }
        out.push('\n');
        let mut tokens = Vec::new();
        for (i, (san, clock, comments)) in self.moves.iter().enumerate() {
            if i % 2 == 0 {
                tokens.push(format!("{}.", i / 2 + 1));
            }
            tokens.push(san.clone());
            let s = clock / 1000;
            tokens.push(format!(
                "{{[%clk {}:{:02}:{:02}]}}",
                s / 3600,
                s / 60 % 60,
                s % 60
            ));
            for comment in comments {
                tokens.push(format!("{{{}}}", comment.replace('}', ")")));
            }
        }
        tokens.push(result);
        let mut line = String::new();
        for token in tokens {
            if !line.is_empty() && line.len() + 1 + token.len() > 79 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&token);
        }
        out.push_str(&line);
        out.push('\n');
        out
    }
}

/// Everything the boards, the arbiter task and the PGN writer share.
#[derive(Debug)]
struct Demo {
    feed: Arc<Feed>,
    out: PathBuf,
    records: Mutex<BTreeMap<(u32, u32), Record>>,
    round: Mutex<u32>,
    /// `--event`: the Event tag, when given.
    event: Option<String>,
    /// `--speed`, at least 0.01.
    speed: f64,
}

impl Demo {
    fn records(&self) -> MutexGuard<'_, BTreeMap<(u32, u32), Record>> {
        self.records.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn current_round(&self) -> u32 {
        *self.round.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Writes the game's and the round's PGN (files and feed). Files are replaced atomically,
    /// under the records lock so two boards never interleave their writes.
    fn write_pgn(&self, round: u32, board: u32) {
        let records = self.records();
        let Some(record) = records.get(&(round, board)) else {
            return;
        };
        let game = record.to_pgn();
        let round_text: Vec<String> = records
            .range((round, 0)..=(round, u32::MAX))
            .map(|(_, r)| r.to_pgn())
            .collect();
        let round_text = round_text.join("\n");
        self.feed.set_pgn(round, board, game.clone());
        self.feed.set_round_pgn(round, round_text.clone());
        let dir = self.out.join(format!("round-{round}"));
        let written = std::fs::create_dir_all(&dir)
            .and_then(|()| write_atomically(&dir.join(format!("game-{board}.pgn")), &game))
            .and_then(|()| write_atomically(&dir.join("games.pgn"), &round_text));
        if let Err(e) = written {
            eprintln!(
                "touchmove demo: cannot write PGN under {}: {e}",
                dir.display()
            );
        }
    }
}

fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("pgn.tmp");
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path)
}

fn side_index(side: ColorName) -> usize {
    match side {
        ColorName::White => 0,
        ColorName::Black => 1,
    }
}

/// Plays one source game on one board, publishing events as a recorder would.
async fn play_board(
    demo: Arc<Demo>,
    round: u32,
    board: u32,
    source: SourceGame,
    rng: &mut ChaCha8Rng,
    mut stop: watch::Receiver<bool>,
) {
    let feed = &demo.feed;
    let mut tags: Vec<(String, String)> = Vec::new();
    let original_event = tag(&source.tags, "Event").unwrap_or("?");
    for name in ["Event", "Site", "Date", "Round", "White", "Black", "Result"] {
        let value = match name {
            "Event" => demo
                .event
                .clone()
                .unwrap_or_else(|| format!("touchmove demo: {original_event}")),
            "Round" => format!("{round}.{board}"),
            "Result" => "*".to_string(),
            _ => tag(&source.tags, name).unwrap_or("?").to_string(),
        };
        tags.push((name.to_string(), value));
    }
    for (name, value) in &source.tags {
        if [
            "WhiteElo",
            "BlackElo",
            "WhiteTitle",
            "BlackTitle",
            "WhiteFideId",
            "BlackFideId",
            "ECO",
        ]
        .contains(&name.as_str())
        {
            tags.push((name.clone(), value.clone()));
        }
    }
    tags.push((
        "TimeControl".into(),
        format!("{}+{}", BASE_MS / 1000, INCREMENT_MS / 1000),
    ));
    demo.records().insert(
        (round, board),
        Record {
            tags: tags.clone(),
            clocks: [BASE_MS, BASE_MS],
            ..Record::default()
        },
    );
    feed.upsert_game(GameInfo {
        round,
        board,
        white: tag(&tags, "White").unwrap_or("?").to_string(),
        black: tag(&tags, "Black").unwrap_or("?").to_string(),
        tags,
    });
    let mut game = Game::standard();
    let mut t_ms: u64 = 0;
    feed.publish(
        round,
        board,
        Event::GameStart {
            t_ms,
            fen: game.fen(),
            chess960: false,
            rotated: false,
        },
    );
    demo.write_pgn(round, board);
    let clock_event = |demo: &Demo, ply: u32, t_ms: u64| {
        let clocks = demo.records().get(&(round, board)).map(|r| r.clocks);
        if let Some([white_ms, black_ms]) = clocks {
            demo.feed.publish(
                round,
                board,
                Event::Clock {
                    white_ms,
                    black_ms,
                    ply,
                    t_ms,
                },
            );
        }
    };
    clock_event(&demo, 0, t_ms);
    for san_text in &source.sans {
        let ply = game.plies() as u32 + 1;
        let side = if game.position().turn().is_white() {
            ColorName::White
        } else {
            ColorName::Black
        };
        // Opening moves come quickly, as they do over the board.
        let think_s = if ply <= 8 {
            rng.gen_range(1.0..2.5)
        } else {
            rng.gen_range(2.0..7.0)
        } / demo.speed;
        let mut left_ms = (think_s * 1000.0) as u64;
        while left_ms > 0 {
            let step = left_ms.min(1000);
            tokio::select! {
                _ = stop.changed() => return,
                _ = tokio::time::sleep(Duration::from_millis(step)) => {}
            }
            left_ms -= step;
            t_ms += step;
            let finished = {
                let mut records = demo.records();
                let Some(record) = records.get_mut(&(round, board)) else {
                    return;
                };
                let clock = &mut record.clocks[side_index(side)];
                *clock = clock.saturating_sub(step);
                record.result.is_some()
            };
            if finished {
                return;
            }
            clock_event(&demo, ply - 1, t_ms);
        }
        if round == 1 && board == 2 && ply == 6 {
            feed.publish(
                round,
                board,
                Event::Alert(Alert {
                    article: "7.5.1".into(),
                    side: Some(side),
                    ply,
                    t_ms,
                    evidence_ms: vec![t_ms.saturating_sub(1400), t_ms.saturating_sub(600)],
                    squares: vec!["g8".into(), "e5".into()],
                    severity: Severity::Critical,
                    message: "Illegal move: the knight was lifted from g8 and placed on e5, \
                              which it cannot reach; it went back and a legal move followed. \
                              Article 7.5.1 asks the arbiter to decide on a penalty."
                        .into(),
                    gap: None,
                    withdraws: Vec::new(),
                    before_game: false,
                }),
            );
        }
        let Ok(san) = san_text.parse::<San>() else {
            eprintln!("touchmove demo: board {board}: cannot read move {san_text:?}; game stops");
            break;
        };
        let Ok(mv) = san.to_move(game.position()) else {
            eprintln!("touchmove demo: board {board}: {san_text} is illegal here; game stops");
            break;
        };
        let Ok(played) = game.play(mv).cloned() else {
            break;
        };
        let fen = game.fen();
        feed.publish(
            round,
            board,
            Event::Move {
                ply,
                uci: played.uci.clone(),
                san: played.san.clone(),
                t_ms,
                side,
                fen,
            },
        );
        {
            let mut records = demo.records();
            if let Some(record) = records.get_mut(&(round, board)) {
                let clock = &mut record.clocks[side_index(side)];
                *clock += INCREMENT_MS;
                let remaining = *clock;
                record
                    .moves
                    .push((played.san.clone(), remaining, Vec::new()));
            }
        }
        t_ms += 300;
        feed.publish(round, board, Event::MoveCompleted { ply, side, t_ms });
        clock_event(&demo, ply, t_ms);
        demo.write_pgn(round, board);
    }
    let reason = match source.result.as_str() {
        "1/2-1/2" => "draw agreed",
        "1-0" | "0-1" if game.position().is_checkmate() => "checkmate",
        "1-0" | "0-1" => "resignation",
        _ => "game stopped",
    };
    finish(&demo, round, board, &source.result, reason, t_ms);
}

fn finish(demo: &Demo, round: u32, board: u32, result: &str, reason: &str, t_ms: u64) {
    {
        let mut records = demo.records();
        let Some(record) = records.get_mut(&(round, board)) else {
            return;
        };
        if record.result.is_some() && result != "*" {
            return;
        }
        record.result = (result != "*").then(|| result.to_string());
        record.termination = (result != "*").then(|| reason.to_string());
    }
    demo.feed.publish(
        round,
        board,
        Event::Result {
            result: result.to_string(),
            reason: reason.to_string(),
            t_ms,
        },
    );
    demo.write_pgn(round, board);
}

/// Applies an arbiter action to the demo's games; the answer goes back to the web page.
fn apply_arbiter(demo: &Demo, request: &ArbiterRequest) -> Result<String, String> {
    let round = demo.current_round();
    let board = request.board;
    let comment = |text: String| {
        let mut records = demo.records();
        if let Some(record) = records.get_mut(&(round, board)) {
            match record.moves.last_mut() {
                Some(last) => last.2.push(text),
                None => record.tags.push(("Annotator".into(), text)),
            }
        }
    };
    let answer = match &request.action {
        ArbiterAction::SetResult { result, reason } => {
            finish(demo, round, board, result, reason, 0);
            comment(format!(
                "Arbiter ({}): result {result}, {reason}",
                request.who
            ));
            format!("result {result} recorded")
        }
        ArbiterAction::AdjustTime { side, delta_ms } => {
            let clocks = {
                let mut records = demo.records();
                let record = records
                    .get_mut(&(round, board))
                    .ok_or_else(|| format!("no game on board {board}"))?;
                let clock = &mut record.clocks[side_index(*side)];
                *clock = clock.saturating_add_signed(*delta_ms);
                record.clocks
            };
            let ply = demo
                .records()
                .get(&(round, board))
                .map_or(0, |r| r.moves.len() as u32);
            demo.feed.publish(
                round,
                board,
                Event::Clock {
                    white_ms: clocks[0],
                    black_ms: clocks[1],
                    ply,
                    t_ms: 0,
                },
            );
            format!("{side:?} clock changed by {} s", delta_ms / 1000)
        }
        ArbiterAction::DecidePenalty { ply, accept } => {
            comment(format!(
                "Arbiter: penalty for the irregularity at ply {ply} {}",
                if *accept { "applied" } else { "not applied" }
            ));
            if *accept {
                "penalty applied"
            } else {
                "no penalty"
            }
            .to_string()
        }
        ArbiterAction::Annotate { text, .. } => {
            comment(format!("Arbiter: {text}"));
            "note added to the record".to_string()
        }
        ArbiterAction::TakeBack { .. }
        | ArbiterAction::ReplaceMoves { .. }
        | ArbiterAction::SettleOrder { .. }
        | ArbiterAction::CheckClaim { .. }
        | ArbiterAction::NewGame => {
            return Err("the demo's scripted boards cannot do that; `touchmove record` can".into());
        }
    };
    demo.write_pgn(round, board);
    Ok(answer)
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

/// Player details from a game's tags.
fn player(tags: &[(String, String)], side: &str) -> Player {
    Player {
        name: tag(tags, side).unwrap_or("?").to_string(),
        fide_id: tag(tags, &format!("{side}FideId")).and_then(|v| v.parse().ok()),
        title: tag(tags, &format!("{side}Title")).map(str::to_string),
        rating: tag(tags, &format!("{side}Elo")).and_then(|v| v.parse().ok()),
        ..Player::default()
    }
}

/// The UCI moves of a source game (stops at the first unreadable move).
fn uci_moves(source: &SourceGame) -> Vec<String> {
    let mut game = Game::standard();
    let mut moves = Vec::new();
    for san in &source.sans {
        let Some(mv) = san
            .parse::<San>()
            .ok()
            .and_then(|s| s.to_move(game.position()).ok())
        else {
            break;
        };
        match game.play(mv) {
            Ok(played) => moves.push(played.uci.clone()),
            Err(_) => break,
        }
    }
    moves
}

/// Realistic hands for board `board`, thinking about 3 s a move so the demo moves along.
/// Board 2 gets hostile hands, with the first seed whose hands complete an illegal move with a
/// clock press (7.5.1) between plies 4 and 12, so the arbiter page always has a decision.
fn hands_for(source: &SourceGame, board: u32, seed: u64) -> SimulatedGame {
    let moves = uci_moves(source);
    let simulate_with = |noise: Noise, seed: u64| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut model = HandModel::for_noise(noise, &mut rng);
        model.think_median_ms = model.think_median_ms.min(3_000.0);
        simulate_with_model(None, false, &moves, Some(&source.result), &model, &mut rng)
    };
    let simulate = |seed: u64| simulate_with(Noise::Realistic, seed);
    if board != 2 {
        return simulate(seed);
    }
    (seed..seed + 300)
        .map(|seed| simulate_with(Noise::Hostile, seed))
        .find(|sim| {
            sim.injected.iter().any(|i| {
                (4..=12).contains(&i.ply)
                    && i.kind == IrregularityKind::IllegalMoveCompleted
                    && matches!(i.expected, ExpectedAlert::Required(_))
            })
        })
        .unwrap_or_else(|| simulate(seed))
}

/// The demo's virtual boards, playing, and the event that records them.
struct DemoBoards {
    /// Folder of the boards' pseudo-terminal links (removed at the end).
    ports_dir: PathBuf,
    boards: Vec<VirtualBoard>,
    /// The boards of other kinds than DGT.
    others: Vec<SnapshotBoard>,
    config: EventConfig,
}

impl DemoBoards {
    /// Stops the boards and removes their folder.
    fn close(self) {
        drop(self.boards);
        drop(self.others);
        let _ = std::fs::remove_dir_all(&self.ports_dir);
    }
}

/// Starts the virtual boards of `args.boards` on pseudo-terminals for round `round`, each played
/// by simulated hands through the next game of `games` (round 1 plays the first games), and
/// the event configuration naming them.
fn demo_boards(args: &DemoArgs, games: &[SourceGame], round: u32) -> Result<DemoBoards, String> {
    let ports_dir = std::env::temp_dir().join(format!(
        "touchmove-demo-{}-round-{round}",
        std::process::id()
    ));
    std::fs::create_dir_all(&ports_dir)
        .map_err(|e| format!("cannot create {}: {e}", ports_dir.display()))?;
    let count = args.boards.count() as usize;
    let first = (round as usize - 1) * count;
    let chosen: Vec<&SourceGame> = (0..count)
        .map(|i| &games[(first + i) % games.len()])
        .collect();
    let kinds: Vec<BoardKind> = (0..args.boards.count())
        .map(|i| args.boards.kind_of(i))
        .collect();
    let scripts: Vec<_> = chosen
        .iter()
        .zip(1u32..)
        .filter(|(_, b)| kinds[*b as usize - 1] == BoardKind::Dgt)
        .map(|(g, board)| {
            let seed = args.seed ^ u64::from(board) ^ (u64::from(round - 1) << 8);
            let sim = hands_for(g, board, seed);
            if board == 2
                && let Some(i) = sim
                    .injected
                    .iter()
                    .find(|i| i.kind == IrregularityKind::IllegalMoveCompleted)
            {
                println!(
                    "Board 2 will complete an illegal move at ply {} (Article 7.5.1) for the arbiter page.",
                    i.ply
                );
            }
            sim.observations
        })
        .collect();
    let boards = spawn_boards(
        &ports_dir,
        scripts,
        args.speed.max(0.01),
        BASE_MS,
        INCREMENT_MS,
    )
    .map_err(|e| format!("cannot create the virtual boards' pseudo-terminals: {e}"))?;
    // Boards of other kinds are played one careful lift and place per move.
    let mut others = Vec::new();
    for ((g, kind), number) in chosen.iter().zip(&kinds).zip(1u32..) {
        if *kind == BoardKind::Dgt {
            continue;
        }
        let mut game = Game::standard();
        let moves: Vec<_> = g
            .sans
            .iter()
            .map_while(|san| game.play_san(san).ok().map(|played| played.mv))
            .collect();
        let script = lift_place(&shakmaty::Chess::default(), &moves, Pace::default());
        let path = ports_dir.join(format!("{kind}{number}"));
        let mut config = SnapshotBoardConfig::new(*kind, &path, script);
        config.speed = args.speed.max(0.01);
        config.seed = args.seed ^ u64::from(number) ^ (u64::from(round - 1) << 8);
        others.push(
            SnapshotBoard::spawn(config).map_err(|e| {
                format!("cannot create a virtual {kind} board's pseudo-terminal: {e}")
            })?,
        );
    }
    let mut dgt_ports = boards.iter().map(|b| b.path().to_path_buf());
    let mut other_ports = others.iter().map(|b| b.path().to_path_buf());
    let ports: Vec<PathBuf> = kinds
        .iter()
        .map(|k| {
            if *k == BoardKind::Dgt {
                dgt_ports.next()
            } else {
                other_ports.next()
            }
        })
        .map(Option::unwrap_or_default)
        .collect();
    let first_tags = &chosen[0].tags;
    let config = EventConfig {
        event: args.event.clone().unwrap_or_else(|| {
            format!(
                "touchmove demo: {}",
                tag(first_tags, "Event").unwrap_or("?")
            )
        }),
        site: tag(first_tags, "Site").unwrap_or("?").to_string(),
        date: tag(first_tags, "Date").unwrap_or("????.??.??").to_string(),
        round,
        time_control: Some(format!("{}+{}", BASE_MS / 1000, INCREMENT_MS / 1000)),
        leds: LedMode::Off,
        boards: ports
            .into_iter()
            .zip(&chosen)
            .zip(kinds.iter().zip(1u32..))
            .map(|((port, g), (&kind, number))| BoardConfig {
                number,
                source: BoardSource::Port(port),
                kind,
                leds: LedMode::Off,
                white: player(&g.tags, "White"),
                black: player(&g.tags, "Black"),
            })
            .collect(),
    };
    Ok(DemoBoards {
        ports_dir,
        boards,
        others,
        config,
    })
}

/// The demo through the real pipeline: virtual DGT boards on pseudo-terminals played by
/// simulated hands, read by the recorder (driver, decoder, act-of-moving machine, journal,
/// PGN folder), served by its web server. Round after round until Ctrl-C: a round ends when
/// every board has played its game (or the arbiter starts the next one on the desk).
async fn recorded_demo(args: &DemoArgs, games: &[SourceGame]) -> ExitCode {
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
        if round == 1 {
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
            println!(
                "A new round starts when every board has played its game. Press Ctrl-C to stop."
            );
        } else {
            println!(
                "Round {round} starts on {} boards; the pages follow it.",
                args.boards
            );
        }
        let go_on = {
            let played = boards_played(&demo_boards.boards);
            tokio::pin!(played);
            loop {
                tokio::select! {
                    () = interrupted() => break false,
                    () = &mut played => {
                        let pause =
                            Duration::from_secs_f64((20.0 / args.speed.max(0.01)).clamp(3.0, 60.0));
                        println!(
                            "Round {round}: every board has played its game; round {} starts in {} s.",
                            round + 1,
                            pause.as_secs()
                        );
                        break tokio::select! {
                            () = interrupted() => false,
                            () = tokio::time::sleep(pause) => true,
                        };
                    }
                    Some(asked) = run.next_round_asked() => {
                        if let Ok(reply) = asked.accept(round) {
                            let _ = reply.send(Ok(format!("round {} starts", round + 1)));
                            break true;
                        }
                    }
                }
            }
        };
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

/// Resolves once every virtual board has played its script to the end.
async fn boards_played(boards: &[VirtualBoard]) {
    for board in boards {
        board.finished().await;
    }
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

async fn demo(args: DemoArgs) -> ExitCode {
    let games = parse_games(DEMO_PGN);
    if games.is_empty() {
        eprintln!("touchmove demo: the embedded demo games could not be read");
        return ExitCode::FAILURE;
    }
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!(
            "touchmove demo: cannot create the output folder {}: {e} (choose another with --out)",
            args.out.display()
        );
        return ExitCode::FAILURE;
    }
    if let Some(url) = &args.cluster {
        return cluster::run(&args, &games, url).await;
    }
    if !args.scripted {
        return recorded_demo(&args, &games).await;
    }
    let token = server::token::generate();
    let state = crate::recorder::layout::state_dir(&args.out);
    let token_file = state.join("arbiter.token");
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
    let demo = Arc::new(Demo {
        feed,
        out: args.out.clone(),
        records: Mutex::new(BTreeMap::new()),
        round: Mutex::new(1),
        event: args.event.clone(),
        speed: args.speed.max(0.01),
    });
    println!("touchmove demo: {} boards playing real games", args.boards);
    print!(
        "{}",
        server::token::banner(server.local_addr(), &token, Some(&token_file))
    );
    println!("PGN files:    {}/round-N/", args.out.display());
    println!("Press Ctrl-C to stop.");

    let arbiter_demo = Arc::clone(&demo);
    let arbiter = tokio::spawn(async move {
        while let Some((request, reply)) = requests.recv().await {
            let _ = reply.send(apply_arbiter(&arbiter_demo, &request));
        }
    });
    let (stop_tx, stop) = watch::channel(false);
    let boards = args.boards.count();
    let barrier = Arc::new(Barrier::new(boards as usize));
    let mut tasks = Vec::new();
    for board in 1..=boards {
        let (demo, games, barrier, mut stop) = (
            Arc::clone(&demo),
            games.clone(),
            Arc::clone(&barrier),
            stop.clone(),
        );
        let mut rng = ChaCha8Rng::seed_from_u64(args.seed ^ u64::from(board));
        tasks.push(tokio::spawn(async move {
            for round in 1u32.. {
                let index = ((round - 1) * boards + board - 1) as usize % games.len();
                play_board(
                    Arc::clone(&demo),
                    round,
                    board,
                    games[index].clone(),
                    &mut rng,
                    stop.clone(),
                )
                .await;
                if *stop.borrow() {
                    return;
                }
                tokio::select! {
                    _ = stop.changed() => return,
                    _ = barrier.wait() => {}
                }
                tokio::select! {
                    _ = stop.changed() => return,
                    _ = tokio::time::sleep(Duration::from_secs_f64(15.0 / demo.speed)) => {}
                }
                if board == 1 {
                    *demo.round.lock().unwrap_or_else(|e| e.into_inner()) = round + 1;
                }
            }
        }));
    }
    interrupted().await;
    println!("\nStopping…");
    let _ = stop_tx.send(true);
    for task in tasks {
        let _ = task.await;
    }
    arbiter.abort();
    announcer.abort();
    server.shutdown().await;
    let keys: Vec<(u32, u32)> = demo.records().keys().copied().collect();
    for (round, board) in keys {
        demo.write_pgn(round, board);
    }
    println!("PGN files are complete under {}", args.out.display());
    ExitCode::SUCCESS
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
    fn embedded_games_parse_and_replay_legally() {
        let games = parse_games(DEMO_PGN);
        assert_eq!(games.len(), 10);
        for source in &games {
            let mut game = Game::standard();
            for san in &source.sans {
                let mv = san
                    .parse::<San>()
                    .ok()
                    .and_then(|s| s.to_move(game.position()).ok())
                    .unwrap_or_else(|| panic!("{san} in {:?}", tag(&source.tags, "White")));
                game.play(mv).expect("legal");
            }
            assert_ne!(source.result, "*");
        }
    }

    #[test]
    fn record_writes_tags_clocks_and_result() {
        let record = Record {
            tags: vec![
                ("Event".into(), "A \"quoted\" event".into()),
                ("Result".into(), "*".into()),
            ],
            moves: vec![
                ("e4".into(), 905_000, vec![]),
                ("e5".into(), 899_000, vec!["note".into()]),
            ],
            result: Some("1-0".into()),
            termination: Some("resignation".into()),
            clocks: [0, 0],
        };
        let pgn = record.to_pgn();
        assert!(pgn.contains("[Event \"A \\\"quoted\\\" event\"]"));
        assert!(pgn.contains("[Result \"1-0\"]"));
        assert!(pgn.contains("1. e4 {[%clk 0:15:05]} e5 {[%clk 0:14:59]} {note} 1-0"));
    }
}
