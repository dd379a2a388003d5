//! Judging a move recogniser on a simulated game: was the recorded game the real one, and
//! when it was not, did the recogniser say so in time?
//!
//! Definitions (used by `touchmove bench recognition` and the tests):
//!
//! - **recorded game**: the moves left by the recogniser's events — a `Move` event sets its
//!   ply (dropping any later ones), a `Revision` withdraws its ply and every later one.
//! - **exact game**: the recorded moves equal the simulated game's moves and the last
//!   `Result` event (if a result is expected) carries the expected result.
//! - **first divergence**: the first ply whose recorded move differs from the game's, or
//!   that the game does not have (a move recorded after the end, e.g. a result signal
//!   taken for a king move). A recorded game that is a shorter prefix has no divergence:
//!   missing moves are not wrong moves (the game is not exact either).
//! - **silently wrong**: a first divergence at ply `n` is silent when no alert of warning
//!   or critical severity and no `BoardState { held: true }` was emitted between the
//!   physical start of ply `n − 1` (the start of the game for `n = 1`) and the observation
//!   at which the wrong move was emitted, inclusive. An alert raised after the wrong move
//!   was published does not excuse it. The silently wrong moves of a game are all its
//!   recorded moves from that ply on that differ from the game.
//! - **latency** of a correctly recorded ply: from the completing observation (the first
//!   one after which every square the move changes shows its new content) to the
//!   observation at which the recorded `Move` event was emitted, counted in observations
//!   and in milliseconds of simulated time.

use std::time::Instant;

use shakmaty::{Board, Position, Square};

use super::{ExpectedAlert, SimulatedGame, apply_physical};
use crate::act::{Event, Severity};
use crate::board::Observation;
use crate::rules::Game;

/// A recogniser's events on one simulated game, each with the index of the observation
/// that produced it, and the cost of every observation.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Events in order, with the index of the observation being processed.
    pub events: Vec<(usize, Event)>,
    /// Nanoseconds spent in each call.
    pub ns_per_observation: Vec<u64>,
}

/// Feeds every observation to `observe`, timing each call.
pub fn run<F>(sim: &SimulatedGame, mut observe: F) -> Run
where
    F: FnMut(&Observation, &mut Vec<Event>),
{
    let mut out = Run {
        events: Vec::new(),
        ns_per_observation: Vec::with_capacity(sim.observations.len()),
    };
    let mut buf = Vec::new();
    for (i, obs) in sim.observations.iter().enumerate() {
        buf.clear();
        let started = Instant::now();
        observe(obs, &mut buf);
        out.ns_per_observation
            .push(started.elapsed().as_nanos().min(u64::MAX as u128) as u64);
        out.events.extend(buf.drain(..).map(|e| (i, e)));
    }
    out
}

/// The recorded game a stream of events leaves, with the observation index at which each
/// recorded move was emitted.
pub fn recorded_moves(events: &[(usize, Event)]) -> Vec<(String, usize)> {
    let mut record: Vec<(String, usize)> = Vec::new();
    for (i, e) in events {
        match e {
            Event::Move { ply, uci, .. } => {
                let at = (*ply as usize).saturating_sub(1);
                record.truncate(at);
                while record.len() < at {
                    record.push(("?".to_string(), *i));
                }
                record.push((uci.clone(), *i));
            }
            Event::Revision { ply, .. } => {
                record.truncate((*ply as usize).saturating_sub(1));
            }
            _ => {}
        }
    }
    record
}

/// How one game went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Plies of the simulated game.
    pub plies: usize,
    /// Recorded moves equal the game and the result is the expected one.
    pub exact: bool,
    /// The recorded moves in UCI.
    pub recorded: Vec<String>,
    /// Ply (1-based) of the first divergence, if any.
    pub first_divergence: Option<usize>,
    /// True when that divergence was silent.
    pub silent: bool,
    /// Wrong recorded moves counted in a silent divergence.
    pub silently_wrong_moves: usize,
    /// The last result event's result.
    pub result: Option<String>,
    /// The result matched the expectation (or none was expected and none was given).
    pub result_ok: bool,
    /// Events emitted.
    pub events: usize,
    /// Alerts of warning or critical severity, plus held board states.
    pub alerts: usize,
    /// Info alerts.
    pub info_alerts: usize,
    /// Revision events.
    pub revisions: usize,
    /// Articles of warning/critical alerts in a game where nothing irregular was injected.
    pub false_alarms: Vec<String>,
    /// Injected irregularities that require an alert.
    pub required_alerts: usize,
    /// Of those, how many got an alert citing the article in time.
    pub required_alerts_raised: usize,
    /// Required articles that got no alert, with the ply.
    pub missed_alerts: Vec<String>,
    /// Per correctly recorded ply: observations from completion to emission.
    pub latency_observations: Vec<i64>,
    /// Per correctly recorded ply: simulated milliseconds from completion to emission.
    pub latency_ms: Vec<i64>,
}

fn raises(e: &Event) -> bool {
    match e {
        Event::Alert(a) => a.severity != Severity::Info,
        Event::BoardState { held, .. } => *held,
        _ => false,
    }
}

fn article_matches(raised: &str, required: &str) -> bool {
    raised == required
        || raised.starts_with(&format!("{required}."))
        || required.starts_with(&format!("{raised}."))
}

/// The first observation index at or after simulated time `t`.
fn index_at(sim: &SimulatedGame, t: u64) -> usize {
    sim.observations.partition_point(|o| o.t_ms < t)
}

/// Judges a run against the simulated game (see the module documentation).
pub fn judge(sim: &SimulatedGame, run: &Run) -> Verdict {
    let truth = &sim.moves_uci;
    let record = recorded_moves(&run.events);
    let mut v = Verdict {
        plies: truth.len(),
        recorded: record.iter().map(|(m, _)| m.clone()).collect(),
        events: run.events.len(),
        ..Verdict::default()
    };
    for (_, e) in &run.events {
        match e {
            Event::Alert(a) if a.severity == Severity::Info => v.info_alerts += 1,
            Event::Revision { .. } => v.revisions += 1,
            Event::Result { result, .. } => v.result = Some(result.clone()),
            e if raises(e) => v.alerts += 1,
            _ => {}
        }
    }
    v.result_ok = v.result == sim.expected_result;
    let divergence = record
        .iter()
        .enumerate()
        .find(|(i, (m, _))| truth.get(*i) != Some(m))
        .map(|(i, _)| i);
    v.exact = divergence.is_none() && record.len() == truth.len() && v.result_ok;
    if let Some(d) = divergence {
        v.first_divergence = Some(d + 1);
        let window_ply = d.min(truth.len()).saturating_sub(1);
        let from = if d == 0 {
            0
        } else {
            sim.ply_start_ms
                .get(window_ply)
                .map_or(0, |t| index_at(sim, *t))
        };
        let emitted = record[d].1;
        v.silent = !run
            .events
            .iter()
            .any(|(i, e)| *i >= from && *i <= emitted && raises(e));
        if v.silent {
            v.silently_wrong_moves = record
                .iter()
                .enumerate()
                .skip(d)
                .filter(|(i, (m, _))| truth.get(*i) != Some(m))
                .count();
        }
    }
    judge_alerts(sim, run, &mut v);
    judge_latency(sim, &record, &mut v);
    v
}

fn judge_alerts(sim: &SimulatedGame, run: &Run, v: &mut Verdict) {
    let irregular = sim
        .injected
        .iter()
        .any(|i| i.expected != ExpectedAlert::None);
    if !irregular {
        v.false_alarms = run
            .events
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Alert(a) if a.severity != Severity::Info => Some(a.article.clone()),
                Event::BoardState { held: true, .. } => Some("held".to_string()),
                _ => None,
            })
            .collect();
    }
    for inj in &sim.injected {
        let ExpectedAlert::Required(article) = &inj.expected else {
            continue;
        };
        v.required_alerts += 1;
        let from = index_at(sim, inj.t_ms);
        let until = sim
            .ply_start_ms
            .get(inj.ply as usize + 1)
            .map_or(usize::MAX, |t| index_at(sim, *t));
        let raised = run.events.iter().any(|(i, e)| {
            *i >= from
                && *i <= until
                && matches!(e, Event::Alert(a) if article_matches(&a.article, article))
        });
        if raised {
            v.required_alerts_raised += 1;
        } else {
            v.missed_alerts
                .push(format!("{article} at ply {}", inj.ply));
        }
    }
}

fn judge_latency(sim: &SimulatedGame, record: &[(String, usize)], v: &mut Verdict) {
    let mut game = match &sim.start_fen {
        None => Game::standard(),
        Some(fen) => match Game::from_fen(fen, sim.chess960) {
            Ok(g) => g,
            Err(_) => return,
        },
    };
    for m in &sim.moves_uci {
        if game.play_uci(m).is_err() {
            return;
        }
    }
    let mut board = Board::empty();
    let boards: Vec<Board> = sim
        .observations
        .iter()
        .map(|o| {
            apply_physical(&mut board, o);
            board.clone()
        })
        .collect();
    for (i, (uci, emitted)) in record.iter().enumerate() {
        if sim.moves_uci.get(i) != Some(uci) {
            break;
        }
        let before = game.positions()[i].board();
        let after = game.positions()[i + 1].board();
        let changed: Vec<Square> = (0..64u32)
            .map(Square::new)
            .filter(|s| before.piece_at(*s) != after.piece_at(*s))
            .collect();
        let start = sim.ply_start_ms.get(i).map_or(0, |t| index_at(sim, *t));
        let done = (start..boards.len()).find(|k| {
            changed
                .iter()
                .all(|s| boards[*k].piece_at(*s) == after.piece_at(*s))
        });
        if let Some(k) = done {
            v.latency_observations.push(*emitted as i64 - k as i64);
            v.latency_ms
                .push(sim.observations[*emitted].t_ms as i64 - sim.observations[k].t_ms as i64);
        }
    }
}
