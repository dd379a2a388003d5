//! `touchmove simulate`: whole events in simulated time, every kind of board through every
//! fault, judged against what was played ([`crate::sim::world`]).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use serde_json::json;

use crate::board::kind::BoardKind;
use crate::sim::world::scenario::{FaultKind, Hands, Kept, Scenario, Shape};
use crate::sim::world::shrink::shrink;
use crate::sim::world::table::{Cell, markdown, run_cell};
use crate::sim::world::{RunDir, simulate};

/// Arguments of `touchmove simulate`.
#[derive(Debug, clap::Args)]
pub struct SimulateArgs {
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many seeds to run, from `--seed` on.
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Boards at each event.
    #[arg(long, default_value_t = 8)]
    pub boards: usize,
    /// Most faults drawn for each event.
    #[arg(long, default_value_t = 4)]
    pub faults: usize,
    /// Fewest and most plies of a game, `LOW-HIGH` (whole games when shorter).
    #[arg(long, default_value = "20-120", value_parser = parse_plies)]
    pub plies: (usize, usize),
    /// Rounds of each event: more than one takes every round's players from a real TRF
    /// (up to 14 rounds), sets the boards up again between rounds, and writes the results
    /// into the TRF as `touchmove results` does.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=14))]
    pub rounds: u32,
    /// The kinds of board drawn from (default: all six).
    #[arg(long, value_delimiter = ',')]
    pub kinds: Vec<BoardKind>,
    /// The hands drawn from (default: careful, realistic, hostile).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub hands: Vec<Hands>,
    /// The faults drawn from (default: all).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub fault_kinds: Vec<FaultKind>,
    /// Play only these boards of the event drawn (a shrunk scenario).
    #[arg(long, value_delimiter = ',')]
    pub keep_boards: Option<Vec<u32>>,
    /// Play only these faults of the event drawn, by index (`none` for none).
    #[arg(long, value_parser = parse_indices)]
    pub keep_faults: Option<Indices>,
    /// Play at most this many plies of each game.
    #[arg(long)]
    pub keep_plies: Option<usize>,
    /// Shrink each failing event to the smallest part of it that still fails.
    #[arg(long)]
    pub shrink: bool,
    /// Where the runs' folders go (default: /dev/shm where there is one, else the system's
    /// temporary folder).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Keep each run's folder (PGN files, journal) instead of removing it.
    #[arg(long)]
    pub keep_files: bool,
    /// Instead of seeds, the kind-by-fault table: one board of each kind plays one whole
    /// game at a move every 0.67 s and every 2 s, through no fault, a recorder restart, an
    /// unplug and a power cycle; prints the moves recorded of those played, in Markdown.
    #[arg(long, conflicts_with = "table_cell")]
    pub table: bool,
    /// One cell of the table, `KIND,PACE,FAULT` (e.g. `certabo,blitz,restart`).
    #[arg(long, value_parser = Cell::parse)]
    pub table_cell: Option<Cell>,
}

/// Fault indices given on the command line.
#[derive(Debug, Clone)]
pub struct Indices(pub Vec<usize>);

fn parse_indices(text: &str) -> Result<Indices, String> {
    if text == "none" {
        return Ok(Indices(Vec::new()));
    }
    text.split(',')
        .map(|i| {
            i.trim()
                .parse::<usize>()
                .map_err(|_| format!("{i:?} is not a fault index (give e.g. 0,2 or none)"))
        })
        .collect::<Result<_, _>>()
        .map(Indices)
}

fn parse_plies(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("{text:?}: give the fewest and most plies as LOW-HIGH, e.g. 20-120");
    let (low, high) = text.split_once('-').ok_or_else(bad)?;
    let low: usize = low.trim().parse().map_err(|_| bad())?;
    let high: usize = high.trim().parse().map_err(|_| bad())?;
    if low == 0 || high < low {
        return Err(bad());
    }
    Ok((low, high))
}

/// Where runs go by default: memory (`/dev/shm`) where there is such a folder, since a run
/// writes its journal and files thousands of times; else the temporary folder.
pub fn default_dir() -> PathBuf {
    let shm = PathBuf::from("/dev/shm");
    if shm.is_dir() {
        shm
    } else {
        std::env::temp_dir()
    }
}

/// CPU time this process has used, in seconds.
fn cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own; on failure it stays zero.
    unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// Runs the table (or one cell of it): prints each failing cell's problems as JSON, then the
/// table.
fn run_table(cells: Vec<Cell>, args: &SimulateArgs) -> ExitCode {
    crate::recorder::silence_messages();
    let temp = args.dir.clone().unwrap_or_else(default_dir);
    let mut results = Vec::new();
    for cell in cells {
        match run_cell(cell, &temp, args.keep_files) {
            Ok(result) => results.push(result),
            Err(e) => {
                eprintln!(
                    "touchmove simulate: cannot create a folder in {}: {e} (give another with --dir)",
                    temp.display()
                );
                return ExitCode::FAILURE;
            }
        }
    }
    let failed: Vec<_> = results.iter().filter(|r| !r.holds()).collect();
    for result in &failed {
        println!(
            "{}",
            json!({
                "command": result.report.command,
                "problems": result.report.verdict.problems,
                "recorded": result.recorded,
                "played": result.played,
            })
        );
    }
    print!("{}", markdown(&results));
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `given`, or `default` when nothing is given.
fn or_default<T: Clone>(given: &[T], default: Vec<T>) -> Vec<T> {
    if given.is_empty() {
        default
    } else {
        given.to_vec()
    }
}

/// The shape of the events the arguments ask for (every kind, hands and fault by default).
fn shape_of(args: &SimulateArgs) -> Shape {
    let defaults = Shape::default();
    Shape {
        boards: args.boards,
        kinds: or_default(&args.kinds, defaults.kinds),
        hands: or_default(&args.hands, defaults.hands),
        fault_kinds: or_default(&args.fault_kinds, defaults.fault_kinds),
        faults: args.faults,
        plies: args.plies,
        rounds: args.rounds,
    }
}

/// Prints the runs' summary: seeds, failures, simulated board-hours and what they cost.
fn print_summary(ran: u64, failed: u64, board_hours: f64, cpu: f64, started: Instant) {
    println!(
        "{}",
        json!({
            "seeds": ran,
            "failed": failed,
            "simulated_board_hours": (board_hours * 100.0).round() / 100.0,
            "cpu_s": (cpu * 100.0).round() / 100.0,
            "wall_s": (started.elapsed().as_secs_f64() * 100.0).round() / 100.0,
            "cpu_s_per_board_hour": if board_hours > 0.0 { (cpu / board_hours * 1000.0).round() / 1000.0 } else { 0.0 },
        })
    );
}

/// Runs `touchmove simulate`.
pub fn run(args: SimulateArgs) -> ExitCode {
    if args.table {
        return run_table(Cell::all(), &args);
    }
    if let Some(cell) = args.table_cell {
        return run_table(vec![cell], &args);
    }
    let shape = shape_of(&args);
    if shape.boards == 0 {
        eprintln!("touchmove simulate: --boards must be at least 1");
        return ExitCode::FAILURE;
    }
    let kept = Kept {
        boards: args.keep_boards.clone(),
        faults: args.keep_faults.clone().map(|i| i.0),
        plies: args.keep_plies,
    };
    crate::recorder::silence_messages();
    let temp = args.dir.clone().unwrap_or_else(default_dir);
    let (started, cpu_before) = (Instant::now(), cpu_seconds());
    let (mut board_hours, mut failed, mut ran) = (0.0, 0u64, 0u64);
    for seed in args.seed..args.seed.saturating_add(args.seeds) {
        let scenario = Scenario::draw_kept(seed, &shape, &kept);
        let dir = match RunDir::new(&temp, seed, args.keep_files) {
            Ok(dir) => dir,
            Err(e) => {
                eprintln!(
                    "touchmove simulate: cannot create a folder in {}: {e} (give another with --dir)",
                    temp.display()
                );
                return ExitCode::FAILURE;
            }
        };
        let report = simulate(&scenario, dir.path());
        ran += 1;
        board_hours += report.board_hours(scenario.boards.len());
        if report.passed() {
            continue;
        }
        failed += 1;
        let mut line = json!({
            "seed": seed,
            "command": report.command,
            "problems": report.verdict.problems,
            "faults": scenario.faults,
            "files": args.keep_files.then(|| dir.path().display().to_string()),
        });
        if args.shrink {
            let (smaller, shrunk) = shrink(&scenario, report, &temp);
            line["shrunk"] = json!({
                "command": smaller.command(),
                "problems": shrunk.verdict.problems,
            });
        }
        println!("{line}");
    }
    print_summary(
        ran,
        failed,
        board_hours,
        cpu_seconds() - cpu_before,
        started,
    );
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
