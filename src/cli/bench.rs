//! `touchmove bench`: benchmarks that print JSON figures.
//!
//! The arguments of each benchmark; the harnesses are in [`crate::bench`].

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::bench::outage::Hands;
use crate::bench::recognition::{ModelledBoard, recognise_all_on, trace};
use crate::board::Millis;
use crate::board::kind::BoardKind;
use crate::sim::hands::Noise;
use crate::sim::hands::pgn_games::{PgnGame, read_games};
use crate::sim::independent_hands::{Roughness, crosscheck};
use crate::sim::virtual_board::ResumeMode;

/// `touchmove bench` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Act-of-moving recognition on simulated hands: plays every game of a PGN file through
    /// the hand simulator and the machine, prints JSON figures.
    Recognition(RecognitionArgs),
    /// Live-view load: N SSE spectators on loopback; prints latency, memory per client and
    /// whether every client received every event.
    Sse(SseArgs),
    /// Boards per recorder process: virtual boards at blitz pace, latency from the completing
    /// byte to the PGN file rewritten, memory per board (one JSON line per board count).
    Boards(BoardsArgs),
    /// An event on several PCs: virtual boards over recorders forwarding to a private
    /// nats-server and broadcast nodes rebuilding them; latency from the completing byte to
    /// a broadcast node's live feed, messages/s, memory per board (one JSON line).
    Cluster(ClusterBenchArgs),
    /// Cross-check on independent hands: plays every game of a PGN file through the second
    /// hand-and-sensor model (`sim::independent_hands`) and the machine, prints JSON figures
    /// (exact, alerted, silently wrong, lost and wrong moves) and the first failures.
    Crosscheck(CrosscheckArgs),
    /// Outage: virtual boards unplugged together mid-game while the players go on, over real
    /// pseudo-terminals and the real recorder; prints JSON figures (games recorded exactly,
    /// with a wrong move, stopped short) with the boards' EEPROM move logs on or off.
    Outage(OutageArgs),
    /// An event day: rounds of a real TRF played on virtual boards by realistic hands with
    /// real games of the TRF's results, games ended by a result signal or by the arbiter,
    /// pieces set back, post-mortems, boards switched off, the recorder restarted and
    /// `results` run after each round; prints JSON figures (games in their `game-K.pgn`
    /// exactly, results in the right TRF lines) and fails when one is lost.
    Event(EventArgs),
}

/// Arguments of `touchmove bench event`.
#[derive(Debug, clap::Args)]
pub struct EventArgs {
    /// The TRF whose rounds are played.
    #[arg(long, default_value = "fixtures/trf/grandmommyscup.trf")]
    pub trf: PathBuf,
    /// Real games (PGN); each board plays one whose result is the TRF's.
    #[arg(long, default_value = "fixtures/pgn/twic1599_1000k.pgn")]
    pub games: PathBuf,
    /// Boards played per round.
    #[arg(long, default_value_t = 16)]
    pub boards: usize,
    /// Rounds played, from round 1.
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// How many times faster than real time the boards play.
    #[arg(long, default_value_t = 4.0)]
    pub speed: f64,
    /// Longest pause of the players kept, in ms of game time.
    #[arg(long, default_value_t = 1500)]
    pub max_pause_ms: u64,
    /// Longest game chosen, in plies.
    #[arg(long, default_value_t = 100)]
    pub max_plies: usize,
    /// Seed of the hands and of what the players do after the game.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Keep the run's folder (journal, PGN files, TRF) here.
    #[arg(long)]
    pub keep: Option<PathBuf>,
}

/// Arguments of `touchmove bench outage`.
#[derive(Debug, clap::Args)]
pub struct OutageArgs {
    /// Boards unplugged together.
    #[arg(long, default_value_t = 8)]
    pub boards: usize,
    /// Wall-clock seconds they stay unplugged.
    #[arg(long, default_value_t = 10.0)]
    pub seconds: f64,
    /// How many times faster than real time the boards play.
    #[arg(long, default_value_t = 4.0)]
    pub speed: f64,
    /// The boards keep no EEPROM move log (a board without one).
    #[arg(long)]
    pub no_log: bool,
    /// The boards' serial line speed in baud (8N1); 0 for no limit. At DGT's 9600 the move
    /// log takes ≈ 8 s to arrive, while play goes on.
    #[arg(long, default_value_t = 9600)]
    pub baud: u32,
    /// Who plays the games: plain lifts and places, or a model of human hands.
    #[arg(long, value_enum, default_value_t = Hands::Plain)]
    pub hands: Hands,
    /// Seed of the hand models.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Keep the run's folder (journal, PGN files) here.
    #[arg(long)]
    pub keep: Option<PathBuf>,
    /// What the boards are like when plugged in again: `keep` (still powered, still in
    /// update mode: field updates come at once), `idle` (the host sets the update mode
    /// again), `power-cycle` (idle, and a power-up in the move log). Several modes, comma
    /// separated, are run one after the other, with a table of the figures per mode.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "idle")]
    pub resume_mode: Vec<ResumeMode>,
    /// Play the first games of this PGN file (from the standard start) instead of the
    /// fixture games: games the tests have not seen.
    #[arg(long)]
    pub pgn: Option<PathBuf>,
}

/// Arguments of `touchmove bench crosscheck`.
#[derive(Debug, clap::Args)]
pub struct CrosscheckArgs {
    /// Which games, which seed, what to print.
    #[command(flatten)]
    pub games: GameSelection,
    /// How careful the players are and what board they play on.
    #[arg(long, value_enum, default_value_t = Roughness::Calm)]
    pub roughness: Roughness,
    /// The host's driver verifies the board as the real link does: a full board dump after
    /// each clock press and after 2 s without square updates (without it, a lost update
    /// stays lost)
    #[arg(long)]
    pub verified: bool,
    /// The kind of board: dgt (the board `--roughness` chooses), a board that sends whole
    /// frames at its own scan period (millennium, certabo, sentio, chessnut), or one that
    /// reports field changes as DGT's do, at its own scan period (pegasus).
    #[arg(long, default_value = "dgt")]
    pub board: BoardKind,
}

/// The games a recognition benchmark plays, its seed and what it prints.
#[derive(Debug, clap::Args)]
pub struct GameSelection {
    /// PGN file whose games are played.
    #[arg(long)]
    pub pgn: PathBuf,
    /// Seed of the simulation (game `i` uses a seed derived from it and `i`).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Play only the first N games.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Play only game number N (1-based), to reproduce a failure.
    #[arg(long)]
    pub game: Option<usize>,
    /// With --game: print every observation and the events it caused instead of figures.
    #[arg(long, requires = "game")]
    pub trace: bool,
    /// How many non-exact games to list in the output.
    #[arg(long, default_value_t = 10)]
    pub show: usize,
}

impl GameSelection {
    /// The selected games of the PGN file; on an unreadable file or an empty selection,
    /// prints why (as `command`) and returns None.
    fn read(&self, command: &str) -> Option<Vec<PgnGame>> {
        let games = std::fs::read(&self.pgn)
            .map_err(|e| format!("cannot read {}: {e}", self.pgn.display()))
            .and_then(|text| {
                read_games(&text)
                    .map_err(|e| format!("{} is not readable PGN: {e}", self.pgn.display()))
            });
        let games = match games {
            Ok(games) => games,
            Err(e) => {
                eprintln!("touchmove bench {command}: {e}");
                return None;
            }
        };
        let total = games.len();
        let selected: Vec<PgnGame> = games
            .into_iter()
            .filter(|g| self.game.is_none_or(|n| g.index == n))
            .take(self.limit.unwrap_or(usize::MAX))
            .collect();
        if selected.is_empty() {
            eprintln!(
                "touchmove bench {command}: no game to play in {} (it has {total} games)",
                self.pgn.display()
            );
            return None;
        }
        Some(selected)
    }
}

/// Arguments of `touchmove bench sse`.
#[derive(Debug, clap::Args)]
pub struct SseArgs {
    /// Number of SSE clients.
    #[arg(long, default_value_t = 1000)]
    pub clients: usize,
    /// Events to publish.
    #[arg(long, default_value_t = 200)]
    pub events: u64,
    /// Milliseconds between events.
    #[arg(long, default_value_t = 100)]
    pub interval_ms: u64,
    /// Internal: be the server process the clients connect to.
    #[arg(long, hide = true)]
    pub serve_only: bool,
}

/// Arguments of `touchmove bench boards`.
#[derive(Debug, clap::Args)]
pub struct BoardsArgs {
    /// Numbers of boards to try, e.g. 4,16,64.
    #[arg(long, value_delimiter = ',', default_value = "4,16,64")]
    pub boards: Vec<usize>,
    /// Seconds of play per board count.
    #[arg(long, default_value_t = 20)]
    pub seconds: u64,
    /// Thinking time before each move, in milliseconds (blitz: about 2000).
    #[arg(long, default_value_t = 2000)]
    pub think_ms: u64,
}

/// Arguments of `touchmove bench cluster`.
#[derive(Debug, clap::Args)]
pub struct ClusterBenchArgs {
    /// Recorders the boards are split over.
    #[arg(long, default_value_t = 2)]
    pub recorders: usize,
    /// Boards.
    #[arg(long, default_value_t = 16)]
    pub boards: usize,
    /// Broadcast nodes.
    #[arg(long, default_value_t = 1)]
    pub serve: usize,
    /// Seconds of play.
    #[arg(long, default_value_t = 20)]
    pub seconds: u64,
    /// Thinking time before each move, in milliseconds (blitz: about 2000).
    #[arg(long, default_value_t = 2000)]
    pub think_ms: u64,
    /// Every board moves at the same moments, the worst case (by default the boards' games
    /// start spread over one move's time).
    #[arg(long)]
    pub in_step: bool,
}

/// Arguments of `touchmove bench recognition`.
#[derive(Debug, clap::Args)]
pub struct RecognitionArgs {
    /// Which games, which seed, what to print.
    #[command(flatten)]
    pub games: GameSelection,
    /// How much trouble the hands and the board make.
    #[arg(long, value_enum, default_value_t = Noise::Realistic)]
    pub noise: Noise,
    /// The kind of board: its scan rate and whether it names pieces (dgt, millennium,
    /// certabo, sentio, chessnut, pegasus).
    #[arg(long, default_value = "dgt")]
    pub board: BoardKind,
    /// Assume this scan period (ms) for the board instead of its kind's: for a board whose
    /// rate was measured, or to see how much the figures owe to it.
    #[arg(long)]
    pub scan_ms: Option<Millis>,
}

impl RecognitionArgs {
    fn modelled_board(&self) -> ModelledBoard {
        ModelledBoard {
            kind: self.board,
            scan_period_ms: self.scan_ms.unwrap_or(self.board.scan_period_ms()),
        }
    }
}

/// Runs a benchmark.
pub fn run(cmd: BenchCommand) -> ExitCode {
    match cmd {
        BenchCommand::Recognition(args) => recognition(&args),
        BenchCommand::Sse(args) => sse(&args),
        BenchCommand::Cluster(a) => exit_code(
            "cluster",
            crate::bench::cluster_latency::run(
                a.recorders,
                a.boards,
                a.serve,
                a.seconds,
                a.think_ms,
                a.in_step,
            ),
        ),
        BenchCommand::Crosscheck(args) => crosscheck_games(&args),
        BenchCommand::Outage(args) => exit_code(
            "outage",
            crate::bench::outage::run_modes(
                crate::bench::outage::OutageRun {
                    boards: args.boards,
                    unplugged_s: args.seconds,
                    speed: args.speed,
                    eeprom_log: !args.no_log,
                    line_bytes_per_s: (args.baud > 0).then_some(args.baud / 10),
                    hands: args.hands,
                    seed: args.seed,
                    keep: args.keep,
                    resume: ResumeMode::default(),
                    pgn: args.pgn,
                },
                &args.resume_mode,
            ),
        ),
        BenchCommand::Event(args) => exit_code(
            "event",
            crate::bench::event_day::run(crate::bench::event_day::EventRun {
                trf: args.trf,
                games: args.games,
                boards: args.boards,
                rounds: args.rounds,
                speed: args.speed,
                max_pause_ms: args.max_pause_ms,
                max_plies: args.max_plies,
                seed: args.seed,
                keep: args.keep,
            }),
        ),
        BenchCommand::Boards(args) => exit_code(
            "boards",
            crate::bench::boards_per_recorder::run(&args.boards, args.seconds, args.think_ms),
        ),
    }
}

/// The exit code of benchmark `name` that printed its figures, or failed as `result` says.
fn exit_code(name: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("touchmove bench {name}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn recognition(args: &RecognitionArgs) -> ExitCode {
    let Some(games) = args.games.read("recognition") else {
        return ExitCode::FAILURE;
    };
    let selected: Vec<&PgnGame> = games.iter().collect();
    if args.games.trace {
        print_lines(
            selected
                .iter()
                .flat_map(|g| trace(g, args.noise, args.games.seed, args.modelled_board())),
        );
        return ExitCode::SUCCESS;
    }
    let started = std::time::Instant::now();
    let mut summary = recognise_all_on(
        &selected,
        args.noise,
        args.games.seed,
        args.modelled_board(),
    );
    let elapsed = started.elapsed();
    summary.keep_failures(args.games.show);
    let report = json!({
        "pgn": args.games.pgn.display().to_string(),
        "seed": args.games.seed,
        "noise": args.noise.name(),
        "board": args.board.name(),
        "scan_period_ms": args.modelled_board().scan_period_ms,
        "games": summary.games,
        "plies": summary.plies,
        "observations": summary.observations,
        "exact_games": summary.exact_games,
        "exact_percent": (summary.exact_percent() * 100.0).round() / 100.0,
        "promotions_told_games": summary.promotions_told_games,
        "exact_or_promotion_told_percent":
            (summary.exact_or_promotion_told_percent() * 100.0).round() / 100.0,
        "silently_wrong_moves": summary.silently_wrong_moves,
        "silently_wrong_games": summary.silently_wrong_games,
        "diverged_games": summary.diverged_games,
        "wrong_results": summary.wrong_results,
        "games_with_alerts": summary.games_with_alerts,
        "non_exact_without_alert": summary.non_exact_without_alert,
        "events": summary.events,
        "alerts": summary.alerts,
        "info_alerts": summary.info_alerts,
        "revisions": summary.revisions,
        "false_alarm_games": summary.false_alarm_games,
        "false_alarm_articles": summary.false_alarm_articles,
        "required_alerts": summary.required_alerts,
        "required_alerts_raised": summary.required_alerts_raised,
        "missed_alerts": summary.missed_alerts,
        "missed_penalties": summary.missed_penalties,
        "ns_per_observation": summary.ns_per_observation(),
        "ns_background_per_observation": summary.ns_background(),
        "latency_observations": summary.latency_observations(),
        "latency_ms": summary.latency_ms(),
        "injected": summary.injected,
        "simulation_errors": summary.simulation_errors,
        "wall_seconds": (elapsed.as_secs_f64() * 100.0).round() / 100.0,
        "failures": summary.failures,
    });
    match serde_json::to_string_pretty(&report) {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("touchmove bench recognition: cannot write the report: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Prints lines until the reader goes away (`| head`): a closed pipe ends the output, it is
/// no error.
fn print_lines(lines: impl IntoIterator<Item = String>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    for line in lines {
        if writeln!(out, "{line}").is_err() {
            return;
        }
    }
}

fn crosscheck_games(args: &CrosscheckArgs) -> ExitCode {
    let Some(games) = args.games.read("crosscheck") else {
        return ExitCode::FAILURE;
    };
    let selected: Vec<&PgnGame> = games.iter().collect();
    let board = (args.board != BoardKind::Dgt).then_some(args.board);
    if args.games.trace {
        print_lines(selected.iter().flat_map(|g| {
            match crosscheck::play_one_on(g, args.games.seed, args.roughness, args.verified, board)
            {
                Ok(j) => crosscheck::trace(&j),
                Err(e) => vec![format!("game {}: {e}", g.index)],
            }
        }));
        return ExitCode::SUCCESS;
    }
    let started = std::time::Instant::now();
    let summary = crosscheck::run_on(
        &selected,
        args.games.seed,
        args.roughness,
        args.verified,
        args.games.show,
        board,
    );
    let mut report = summary.to_json();
    if let Some(obj) = report.as_object_mut() {
        obj.insert("pgn".into(), json!(args.games.pgn.display().to_string()));
        obj.insert("seed".into(), json!(args.games.seed));
        obj.insert("roughness".into(), json!(args.roughness.name()));
        obj.insert("verified".into(), json!(args.verified));
        obj.insert("board".into(), json!(args.board.name()));
        obj.insert(
            "wall_seconds".into(),
            json!((started.elapsed().as_secs_f64() * 100.0).round() / 100.0),
        );
    }
    match serde_json::to_string_pretty(&report) {
        Ok(s) => {
            println!("{s}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("touchmove bench crosscheck: cannot write the report: {e}");
            ExitCode::FAILURE
        }
    }
}

fn sse(args: &SseArgs) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("touchmove bench sse: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = if args.serve_only {
        runtime
            .block_on(crate::bench::sse_spectators::serve_only())
            .map(|()| None)
    } else {
        runtime
            .block_on(crate::bench::sse_spectators::run(
                crate::bench::sse_spectators::SseBench {
                    clients: args.clients,
                    events: args.events,
                    interval: std::time::Duration::from_millis(args.interval_ms),
                },
            ))
            .map(Some)
    };
    match outcome {
        Ok(Some(report)) => {
            println!("{}", json!(report));
            if report.clients_with_gaps == 0 {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Ok(None) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("touchmove bench sse: {e}");
            ExitCode::FAILURE
        }
    }
}
