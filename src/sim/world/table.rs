//! The kind-by-fault table: one board of each kind plays the same whole game with careful
//! hands at a fixed pace, through one fault 25 s into the game (the recorder killed and started
//! again, the board's cable unplugged, the board switched off and on), and the table counts
//! the moves its `game-1.pgn` holds at the end, of those played. Realistic hands play it too,
//! with no fault, on each board that names its pieces, sped up to the pace as `touchmove sim
//! --speed` speeds them: their quick moves then come closer than a board's frames. Each cell is
//! one scenario of the simulation, judged like any other, and replayed by `touchmove simulate
//! --table-cell`.

use serde::Serialize;

use super::scenario::{AfterGame, BoardPlan, Fault, FaultKind, Hands, Kept, Scenario, Shape};
use super::{Report, RunDir, simulate};
use crate::board::Millis;
use crate::board::kind::BoardKind;

/// When the game begins, ms after the event began (the board has been read by then).
const GAME_STARTS_MS: Millis = 15_000;

/// When the fault strikes, ms into the game.
const FAULT_INTO_GAME_MS: Millis = 25_000;

/// How long the recorder stays down, the cable out, the board off.
const FAULT_LASTS_MS: Millis = 3_000;

/// The pace of a cell's hands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TablePace {
    /// A move every 0.67 s: a time scramble.
    Blitz,
    /// A move every 2 s.
    Steady,
}

impl TablePace {
    /// Both paces.
    pub const ALL: [TablePace; 2] = [TablePace::Blitz, TablePace::Steady];

    /// Time from one normal move's start to the next's, ms.
    pub fn move_ms(self) -> Millis {
        match self {
            TablePace::Blitz => 667,
            TablePace::Steady => 2_000,
        }
    }
}

/// The faults of the table's columns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum TableFault {
    /// None.
    None,
    /// The recorder killed and started again.
    Restart,
    /// The board's cable unplugged and plugged back.
    Unplug,
    /// The board switched off and on again.
    PowerCycle,
}

impl TableFault {
    /// Every column.
    pub const ALL: [TableFault; 4] = [
        TableFault::None,
        TableFault::Restart,
        TableFault::Unplug,
        TableFault::PowerCycle,
    ];
}

/// The hands of a cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TableHands {
    /// One piece at a time, each move at the pace.
    Careful,
    /// Realistic hands (seed 7, as issue 57's runs on a PTY), sped up to the pace.
    Realistic,
}

/// The seed of a cell's realistic hands: the seed of the Certabo game on a PTY that stopped
/// at blitz pace (issue 57).
const REALISTIC_HANDS_SEED: u64 = 7;

/// One cell of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cell {
    /// The board's kind.
    pub kind: BoardKind,
    /// The hands' pace.
    pub pace: TablePace,
    /// The fault.
    pub fault: TableFault,
    /// The hands.
    pub hands: TableHands,
}

impl Cell {
    /// Every cell: every kind, both paces, every fault, with careful hands; and with
    /// realistic hands and no fault, every kind that names its pieces.
    pub fn all() -> Vec<Cell> {
        let mut cells = Vec::new();
        for hands in [TableHands::Careful, TableHands::Realistic] {
            for kind in BoardKind::ALL {
                if hands == TableHands::Realistic && !kind.identifies_pieces() {
                    continue;
                }
                for pace in TablePace::ALL {
                    for fault in TableFault::ALL {
                        if hands == TableHands::Realistic && fault != TableFault::None {
                            continue;
                        }
                        cells.push(Cell {
                            kind,
                            pace,
                            fault,
                            hands,
                        });
                    }
                }
            }
        }
        cells
    }

    /// The cell as `--table-cell` names it: `KIND,PACE,FAULT`, with `,realistic` for
    /// realistic hands.
    pub fn name(&self) -> String {
        let hands = match self.hands {
            TableHands::Careful => String::new(),
            hands => format!(",{}", value_name(hands)),
        };
        format!(
            "{},{},{}{hands}",
            self.kind.name(),
            value_name(self.pace),
            value_name(self.fault)
        )
    }

    /// Reads `KIND,PACE,FAULT[,HANDS]` (careful hands when not given).
    pub fn parse(text: &str) -> Result<Cell, String> {
        use clap::ValueEnum;
        let bad = || {
            format!(
                "{text:?}: give the cell as KIND,PACE,FAULT[,HANDS], e.g. certabo,blitz,restart \
                 or certabo,blitz,none,realistic"
            )
        };
        let parts: Vec<&str> = text.split(',').map(str::trim).collect();
        let (kind, pace, fault, hands) = match parts.as_slice() {
            [kind, pace, fault] => (kind, pace, fault, "careful"),
            [kind, pace, fault, hands] => (kind, pace, fault, *hands),
            _ => return Err(bad()),
        };
        Ok(Cell {
            kind: kind.parse().map_err(|_| bad())?,
            pace: TablePace::from_str(pace, true).map_err(|_| bad())?,
            fault: TableFault::from_str(fault, true).map_err(|_| bad())?,
            hands: TableHands::from_str(hands, true).map_err(|_| bad())?,
        })
    }

    /// The cell's event: one board, the first game of the library (a TWIC game), the cell's
    /// hands at its pace, the cell's fault.
    pub fn scenario(&self) -> Scenario {
        let game = 0;
        let plies = super::scenario::library()[game].moves_uci.len();
        let (hands, seed) = match self.hands {
            TableHands::Careful => (Hands::Careful, 1),
            TableHands::Realistic => (Hands::Realistic, REALISTIC_HANDS_SEED),
        };
        let board = BoardPlan {
            number: 1,
            kind: self.kind,
            game,
            hands,
            seed,
            starts_ms: GAME_STARTS_MS,
            plies,
            after: AfterGame::Leave,
            pace_ms: Some(self.pace.move_ms()),
        };
        let at_ms = GAME_STARTS_MS + FAULT_INTO_GAME_MS;
        let faults = match self.fault {
            TableFault::None => Vec::new(),
            TableFault::Restart => vec![Fault::RecorderKill {
                at_ms,
                down_ms: FAULT_LASTS_MS,
            }],
            TableFault::Unplug => vec![Fault::Unplug {
                board: 1,
                at_ms,
                for_ms: FAULT_LASTS_MS,
            }],
            TableFault::PowerCycle => vec![Fault::PowerCycle {
                board: 1,
                at_ms,
                for_ms: FAULT_LASTS_MS,
            }],
        };
        Scenario {
            seed: 1,
            shape: Shape {
                boards: 1,
                kinds: vec![self.kind],
                hands: vec![hands],
                fault_kinds: match self.fault {
                    TableFault::None => Vec::new(),
                    TableFault::Restart => vec![FaultKind::RecorderKill],
                    TableFault::Unplug => vec![FaultKind::Unplug],
                    TableFault::PowerCycle => vec![FaultKind::PowerCycle],
                },
                faults: faults.len(),
                plies: (plies, plies),
                rounds: 1,
            },
            boards: vec![board],
            rounds: Vec::new(),
            faults,
            kept: Kept::default(),
            cell: Some(*self),
        }
    }
}

/// The name the command line gives `value`.
fn value_name(value: impl clap::ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// What a cell gave.
#[derive(Debug, Clone, Serialize)]
pub struct CellResult {
    /// The cell.
    pub cell: Cell,
    /// Plies played.
    pub played: usize,
    /// Plies the board's `game-1.pgn` holds at the end.
    pub recorded: usize,
    /// The run's judgement.
    pub report: Report,
}

impl CellResult {
    /// True when the cell is as it must be: the run passes its judgement, and a board that
    /// names its pieces gave the whole game (one that senses only occupancy may lose moves it
    /// cannot tell, as long as it says so).
    pub fn holds(&self) -> bool {
        self.report.passed()
            && (self.recorded == self.played || !self.cell.kind.identifies_pieces())
    }
}

/// Plays `cell` in a folder of its own under `dir`.
pub fn run_cell(cell: Cell, dir: &std::path::Path, keep: bool) -> std::io::Result<CellResult> {
    let scenario = cell.scenario();
    let run = RunDir::new(dir, 0, keep)?;
    let report = simulate(&scenario, run.path());
    let file = crate::recorder::layout::OutputFolder::new(&run.path().join("out")).game_path(1, 1);
    let recorded = std::fs::read_to_string(file)
        .ok()
        .and_then(|text| crate::record::pgn::read_games(&text).ok())
        .and_then(|games| games.last().map(|g| g.moves.len()))
        .unwrap_or(0);
    Ok(CellResult {
        cell,
        played: report.plies,
        recorded,
        report,
    })
}

/// The table of `results` in Markdown: a row per pace and fault, a column per kind, each
/// cell "recorded of played" (with a mark when the run found a problem).
pub fn markdown(results: &[CellResult]) -> String {
    let mut text = String::from("| hands | pace | fault |");
    for kind in BoardKind::ALL {
        text.push_str(&format!(" {} |", kind.name()));
    }
    text.push_str("\n|---|---|---|");
    text.push_str(&"---|".repeat(BoardKind::ALL.len()));
    let rows = results
        .iter()
        .map(|r| (r.cell.hands, r.cell.pace, r.cell.fault))
        .fold(Vec::new(), |mut rows, row| {
            if !rows.contains(&row) {
                rows.push(row);
            }
            rows
        });
    for (hands, pace, fault) in rows {
        text.push_str(&format!(
            "\n| {} | {} | {} |",
            value_name(hands),
            value_name(pace),
            value_name(fault)
        ));
        for kind in BoardKind::ALL {
            let cell = Cell {
                kind,
                pace,
                fault,
                hands,
            };
            match results.iter().find(|r| r.cell == cell) {
                Some(r) if r.holds() => {
                    text.push_str(&format!(" {} of {} |", r.recorded, r.played))
                }
                Some(r) => text.push_str(&format!(" **{} of {}** ✗ |", r.recorded, r.played)),
                None => text.push_str(" |"),
            }
        }
    }
    text.push('\n');
    text
}
