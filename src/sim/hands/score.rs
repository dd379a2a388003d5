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
//!   at which the next recorded move (ply `n + 1`) was emitted, inclusive: the doubt must
//!   be raised while the wrong move is still the last one recorded. When no move is
//!   recorded after it (the recogniser held the game), the window ends where the next
//!   recorded move would have been emitted: at the physical start of ply `n + 2` (the end
//!   of the stream if the game has no such ply), or at the wrong move itself if that came
//!   later; a wrong move recorded after the game's last ply must be doubted by its own
//!   observation. The silently wrong moves of a game are all its recorded moves from that
//!   ply on that differ from the game.
//! - **promotion told**: a game not exact only because the board cannot show which piece a
//!   pawn became (occupancy-only boards): the record has every ply and the right result,
//!   every ply that differs is a promotion recorded to another piece on the same squares,
//!   and a 4.6 alert names that ply. This is what the Laws ask of such a board (the
//!   arbiter is told, nothing is guessed silently); it is counted apart from exact games.
//! - **latency** of a correctly recorded ply: from the completing observation (the first
//!   one after which every square the move changes shows its new content) to the
//!   observation at which the recorded `Move` event was emitted, counted in observations
//!   and in milliseconds of simulated time.
//!
//! One file for one concept, the score of a recogniser: the definitions above and the code
//! that applies them are kept side by side.

use std::time::Instant;

use shakmaty::{Board, Position, Square};

use super::{ExpectedAlert, SimulatedGame, apply_physical};
use crate::act::{Event, Severity};
use crate::board::{Millis, Observation};
use crate::rules::Game;

/// A recogniser's events on one simulated game, each with the index of the observation
/// that produced it, and the cost of every observation.
#[derive(Debug, Clone, Default)]
pub struct Run {
    /// Events in order, with the index of the observation being processed.
    pub events: Vec<(usize, Event)>,
    /// Nanoseconds spent in each call.
    pub ns_per_observation: Vec<u64>,
    /// Nanoseconds of background work after each observation ([`Feed::Idle`]).
    pub ns_background: Vec<u64>,
}

/// What a recogniser is given: the time of the next observation (for the timers that fall
/// due before it), the observation itself, or the end of the stream.
#[derive(Debug, Clone, Copy)]
pub enum Feed<'a> {
    /// The next observation arrives at this time: whatever a shell's timer would have done
    /// before it is done now.
    Until(Millis),
    /// An observation.
    Observation(&'a Observation),
    /// The end of the stream: the recogniser lets the time run out.
    End,
    /// The shell is idle after an observation: background work (the dead-position
    /// analyses a machine asked for) is done now, outside the observation's time.
    Idle,
}

/// Feeds every observation to `observe`, each preceded by [`Feed::Until`] its time, then
/// [`Feed::End`], timing the two calls of each observation together, and then
/// [`Feed::Idle`], timed apart. Events a timer fired before an observation belong to the
/// observation before it; those of the idle time to the observation.
pub fn run<F>(sim: &SimulatedGame, mut observe: F) -> Run
where
    F: FnMut(Feed<'_>, &mut Vec<Event>),
{
    let mut out = Run {
        events: Vec::new(),
        ns_per_observation: Vec::with_capacity(sim.observations.len()),
        ns_background: Vec::with_capacity(sim.observations.len()),
    };
    let mut timers = Vec::new();
    let mut buf = Vec::new();
    for (i, obs) in sim.observations.iter().enumerate() {
        let started = Instant::now();
        observe(Feed::Until(obs.t_ms), &mut timers);
        observe(Feed::Observation(obs), &mut buf);
        out.ns_per_observation.push(nanos_since(started));
        let idle = Instant::now();
        observe(Feed::Idle, &mut buf);
        out.ns_background.push(nanos_since(idle));
        let before = i.saturating_sub(1);
        out.events.extend(timers.drain(..).map(|e| (before, e)));
        out.events.extend(buf.drain(..).map(|e| (i, e)));
    }
    observe(Feed::End, &mut buf);
    let last = sim.observations.len().saturating_sub(1);
    out.events.extend(buf.drain(..).map(|e| (last, e)));
    out
}

fn nanos_since(start: Instant) -> u64 {
    start.elapsed().as_nanos().min(u64::MAX as u128) as u64
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
    /// Not exact only because of promoted pieces the board could not show, each told by
    /// a 4.6 alert (see the module documentation).
    pub promotions_told: bool,
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
        let until = match record.get(d + 1) {
            Some((_, i)) => *i,
            None if d < truth.len() => sim
                .ply_start_ms
                .get(d + 2)
                .map_or(sim.observations.len(), |t| index_at(sim, *t))
                .max(record[d].1),
            None => record[d].1,
        };
        v.silent = !run
            .events
            .iter()
            .any(|(i, e)| *i >= from && *i <= until && raises(e));
        if v.silent {
            v.silently_wrong_moves = record
                .iter()
                .enumerate()
                .skip(d)
                .filter(|(i, (m, _))| truth.get(*i) != Some(m))
                .count();
        }
    }
    v.promotions_told = !v.exact && v.result_ok && only_promotions_told(truth, &record, run);
    judge_alerts(sim, run, &mut v);
    judge_latency(sim, &record, &mut v);
    v
}

/// True when `record` has every ply of `truth` and differs only in promoted pieces, each
/// on a ply a 4.6 alert names.
fn only_promotions_told(truth: &[String], record: &[(String, usize)], run: &Run) -> bool {
    let told = |ply: usize| {
        run.events.iter().any(
            |(_, e)| matches!(e, Event::Alert(a) if a.article == "4.6" && a.ply as usize == ply),
        )
    };
    record.len() == truth.len()
        && truth
            .iter()
            .zip(record)
            .enumerate()
            .filter(|(_, (played, (recorded, _)))| *played != recorded)
            .all(|(i, (played, (recorded, _)))| {
                played.len() == 5
                    && recorded.len() == 5
                    && played[..4] == recorded[..4]
                    && told(i + 1)
            })
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

/// The seed of game `index` (1-based) of a benchmark run with `seed`, so that one game can
/// be simulated again on its own.
pub fn game_seed(seed: u64, index: usize) -> u64 {
    seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index as u64
}

/// Median, 99th percentile and maximum of a sample.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Spread {
    /// The median.
    pub median: i64,
    /// The 99th percentile.
    pub p99: i64,
    /// The largest value.
    pub max: i64,
}

impl Spread {
    /// The spread of `values` (all zero when empty).
    pub fn of(values: &mut [i64]) -> Spread {
        if values.is_empty() {
            return Spread::default();
        }
        values.sort_unstable();
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        Spread {
            median: at(0.5),
            p99: at(0.99),
            max: values[values.len() - 1],
        }
    }
}

/// One game that was not recorded exactly.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Failure {
    /// 1-based index of the game in the PGN file.
    pub game: usize,
    /// The simulation seed of that game ([`game_seed`]).
    pub seed: u64,
    /// First divergent ply, if the recorded moves diverge (not just stop early).
    pub first_divergence: Option<usize>,
    /// True when that divergence was silent.
    pub silent: bool,
    /// Not exact only because of promoted pieces the board could not show, each told.
    pub promotions_told: bool,
    /// Plies recorded and plies in the game.
    pub recorded_plies: usize,
    /// Plies of the game.
    pub plies: usize,
    /// The game's move and the recorded move at the divergence (or at the end of the
    /// shorter record).
    pub expected: Option<String>,
    /// What was recorded there.
    pub recorded: Option<String>,
    /// Expected and recorded result when they differ.
    pub result: Option<(Option<String>, Option<String>)>,
    /// Number of warning/critical alerts in the game.
    pub alerts: usize,
}

/// Totals over many games.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Summary {
    /// Games simulated and recognised.
    pub games: usize,
    /// Plies in those games.
    pub plies: usize,
    /// Observations fed to the recogniser.
    pub observations: usize,
    /// Games recorded exactly (moves and result).
    pub exact_games: usize,
    /// Games not exact only because of promoted pieces the board could not show, each
    /// told by a 4.6 alert.
    pub promotions_told_games: usize,
    /// Silently wrong moves (see the module documentation).
    pub silently_wrong_moves: usize,
    /// Games with a silent divergence.
    pub silently_wrong_games: usize,
    /// Games whose recorded moves diverge from the game (alerted or not).
    pub diverged_games: usize,
    /// Games whose final result differs from the expected one.
    pub wrong_results: usize,
    /// Games with at least one warning/critical alert or held board.
    pub games_with_alerts: usize,
    /// Games not recorded exactly and without any warning/critical alert.
    pub non_exact_without_alert: usize,
    /// Events emitted.
    pub events: usize,
    /// Warning/critical alerts and held board states.
    pub alerts: usize,
    /// Info alerts.
    pub info_alerts: usize,
    /// Revision events.
    pub revisions: usize,
    /// Games with warning/critical alerts although nothing irregular was injected.
    pub false_alarm_games: usize,
    /// Articles of those alerts, with counts.
    pub false_alarm_articles: std::collections::BTreeMap<String, usize>,
    /// Injected irregularities that require an alert.
    pub required_alerts: usize,
    /// Of those, alerted in time.
    pub required_alerts_raised: usize,
    /// Required articles without an alert, with counts.
    pub missed_alerts: std::collections::BTreeMap<String, usize>,
    /// Missed required 7.5 alerts (illegal moves and presses without a move): game number
    /// and what was missed, to trace with `--game N --trace`.
    pub missed_penalties: Vec<String>,
    /// Injected irregularities by kind.
    pub injected: std::collections::BTreeMap<String, usize>,
    /// Games the simulator could not play to the end (illegal or unreadable input).
    pub simulation_errors: usize,
    /// The first non-exact games, silent ones first.
    pub failures: Vec<Failure>,
    #[serde(skip)]
    ns: Vec<i64>,
    #[serde(skip)]
    ns_background: Vec<i64>,
    #[serde(skip)]
    latency_observations: Vec<i64>,
    #[serde(skip)]
    latency_ms: Vec<i64>,
}

impl Summary {
    /// Adds one game's verdict.
    pub fn add(&mut self, index: usize, seed: u64, sim: &SimulatedGame, run: &Run, v: &Verdict) {
        self.games += 1;
        self.plies += v.plies;
        self.observations += sim.observations.len();
        self.exact_games += usize::from(v.exact);
        self.promotions_told_games += usize::from(v.promotions_told);
        self.silently_wrong_moves += v.silently_wrong_moves;
        self.silently_wrong_games += usize::from(v.silent);
        self.diverged_games += usize::from(v.first_divergence.is_some());
        self.wrong_results += usize::from(!v.result_ok);
        self.games_with_alerts += usize::from(v.alerts > 0);
        self.non_exact_without_alert += usize::from(!v.exact && v.alerts == 0);
        self.events += v.events;
        self.alerts += v.alerts;
        self.info_alerts += v.info_alerts;
        self.revisions += v.revisions;
        self.false_alarm_games += usize::from(!v.false_alarms.is_empty());
        for a in &v.false_alarms {
            *self.false_alarm_articles.entry(a.clone()).or_default() += 1;
        }
        self.required_alerts += v.required_alerts;
        self.required_alerts_raised += v.required_alerts_raised;
        for m in &v.missed_alerts {
            let article = m.split(' ').next().unwrap_or_default().to_string();
            if article.starts_with("7.5") {
                self.missed_penalties.push(format!("game {index}: {m}"));
            }
            *self.missed_alerts.entry(article).or_default() += 1;
        }
        for i in &sim.injected {
            let kind = serde_json::to_value(i.kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default();
            *self.injected.entry(kind).or_default() += 1;
        }
        self.simulation_errors += usize::from(sim.error.is_some());
        self.ns.extend(
            run.ns_per_observation
                .iter()
                .map(|n| (*n).min(i64::MAX as u64) as i64),
        );
        self.ns_background.extend(
            run.ns_background
                .iter()
                .map(|n| (*n).min(i64::MAX as u64) as i64),
        );
        self.latency_observations
            .extend_from_slice(&v.latency_observations);
        self.latency_ms.extend_from_slice(&v.latency_ms);
        if !v.exact {
            let at = v
                .first_divergence
                .unwrap_or(v.recorded.len().min(v.plies) + 1)
                .saturating_sub(1);
            self.failures.push(Failure {
                game: index,
                seed,
                first_divergence: v.first_divergence,
                silent: v.silent,
                promotions_told: v.promotions_told,
                recorded_plies: v.recorded.len(),
                plies: v.plies,
                expected: sim.moves_uci.get(at).cloned(),
                recorded: v.recorded.get(at).cloned(),
                result: (!v.result_ok).then(|| (sim.expected_result.clone(), v.result.clone())),
                alerts: v.alerts,
            });
        }
    }

    /// Share of exact games in percent.
    pub fn exact_percent(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            100.0 * self.exact_games as f64 / self.games as f64
        }
    }

    /// Share of games exact or not exact only by promoted pieces told, in percent.
    pub fn exact_or_promotion_told_percent(&self) -> f64 {
        if self.games == 0 {
            0.0
        } else {
            100.0 * (self.exact_games + self.promotions_told_games) as f64 / self.games as f64
        }
    }

    /// Nanoseconds per observation.
    pub fn ns_per_observation(&mut self) -> Spread {
        Spread::of(&mut self.ns)
    }

    /// Nanoseconds of background work (dead-position analyses) after each observation.
    pub fn ns_background(&mut self) -> Spread {
        Spread::of(&mut self.ns_background)
    }

    /// Emission latency in observations after the completing observation.
    pub fn latency_observations(&mut self) -> Spread {
        Spread::of(&mut self.latency_observations)
    }

    /// Emission latency in simulated milliseconds after the completing observation.
    pub fn latency_ms(&mut self) -> Spread {
        Spread::of(&mut self.latency_ms)
    }

    /// Keeps the first `n` failures, silent ones first.
    pub fn keep_failures(&mut self, n: usize) {
        self.failures.sort_by_key(|f| (!f.silent, f.game));
        self.failures.truncate(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::act::Alert;
    use crate::board::ColorName;
    use crate::sim::hands::{Noise, simulate_game};

    fn mv(ply: u32, uci: &str) -> Event {
        Event::Move {
            ply,
            uci: uci.to_string(),
            san: String::new(),
            t_ms: 0,
            side: ColorName::White,
            fen: String::new(),
        }
    }

    fn alert(severity: Severity) -> Event {
        Event::Alert(Alert {
            article: "7.4".into(),
            side: None,
            ply: 1,
            t_ms: 0,
            evidence_ms: Vec::new(),
            squares: Vec::new(),
            severity,
            message: String::new(),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        })
    }

    fn sim() -> SimulatedGame {
        let moves: Vec<String> = ["e2e4", "e7e5", "g1f3"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        simulate_game(None, false, &moves, None, Noise::Clean, 4)
    }

    /// Emits each true move at the last observation that reports one of its squares.
    fn honest(sim: &SimulatedGame) -> Vec<(usize, Event)> {
        let n = sim.observations.len();
        vec![
            (n / 3, mv(1, "e2e4")),
            (2 * n / 3, mv(2, "e7e5")),
            (n - 1, mv(3, "g1f3")),
        ]
    }

    #[test]
    fn exact_game_and_latency() {
        let sim = sim();
        let run = Run {
            events: honest(&sim),
            ns_per_observation: vec![1; sim.observations.len()],
            ns_background: Vec::new(),
        };
        let v = judge(&sim, &run);
        assert!(v.exact, "{v:?}");
        assert_eq!(v.first_divergence, None);
        assert_eq!(v.latency_observations.len(), 3);
    }

    #[test]
    fn a_promotion_the_board_could_not_show_is_told_not_exact() {
        let moves: Vec<String> = ["a7a8n", "e8d7", "a8b6"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let sim = simulate_game(
            Some("4k3/P7/8/8/8/8/7P/4K3 w - - 0 1"),
            false,
            &moves,
            None,
            Noise::Clean,
            4,
        );
        let told = |ply: u32| {
            let mut a = alert(Severity::Warning);
            if let Event::Alert(alert) = &mut a {
                alert.article = "4.6".into();
                alert.ply = ply;
            }
            a
        };
        let judged = |events: Vec<(usize, Event)>| {
            judge(
                &sim,
                &Run {
                    events,
                    ..Run::default()
                },
            )
        };
        let queened = vec![
            (1, mv(1, "a7a8q")),
            (1, told(1)),
            (2, mv(2, "e8d7")),
            (3, mv(3, "a8b6")),
        ];
        let v = judged(queened.clone());
        assert!(!v.exact && v.promotions_told, "{v:?}");

        let mut untold = queened.clone();
        untold.remove(1);
        assert!(!judged(untold).promotions_told);

        let mut told_elsewhere = queened.clone();
        told_elsewhere[1] = (1, told(2));
        assert!(!judged(told_elsewhere).promotions_told);

        let mut another_move = queened.clone();
        another_move[2] = (2, mv(2, "e8e7"));
        assert!(!judged(another_move).promotions_told);

        let mut short = queened;
        short.pop();
        assert!(!judged(short).promotions_told);
    }

    #[test]
    fn wrong_move_is_silent_unless_alerted_in_time() {
        let sim = sim();
        let n = sim.observations.len();
        let mut events = honest(&sim);
        events[1] = (2 * n / 3, mv(2, "e7e6"));
        let silent = judge(
            &sim,
            &Run {
                events: events.clone(),
                ..Run::default()
            },
        );
        assert_eq!(silent.first_divergence, Some(2));
        assert!(silent.silent);
        assert_eq!(silent.silently_wrong_moves, 1);

        let mut warned = events.clone();
        warned.insert(1, (2 * n / 3, alert(Severity::Warning)));
        let v = judge(
            &sim,
            &Run {
                events: warned,
                ..Run::default()
            },
        );
        assert!(!v.silent && !v.exact);

        let mut info_only = events.clone();
        info_only.insert(1, (2 * n / 3, alert(Severity::Info)));
        assert!(
            judge(
                &sim,
                &Run {
                    events: info_only,
                    ..Run::default()
                }
            )
            .silent
        );

        // Raised before the next move was recorded: the doubt was on the wrong move.
        let mut before_next = events.clone();
        before_next.insert(2, (n - 2, alert(Severity::Critical)));
        assert!(
            !judge(
                &sim,
                &Run {
                    events: before_next,
                    ..Run::default()
                }
            )
            .silent
        );

        // Raised only after play moved on: too late.
        let mut late = events;
        late[2].0 = n - 2;
        late.push((n - 1, alert(Severity::Critical)));
        assert!(
            judge(
                &sim,
                &Run {
                    events: late,
                    ..Run::default()
                }
            )
            .silent
        );
    }

    #[test]
    fn a_held_game_is_doubted_until_the_next_move_would_have_been_recorded() {
        let moves: Vec<String> = ["e2e4", "e7e5", "g1f3", "b8c6"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let sim = simulate_game(None, false, &moves, None, Noise::Clean, 4);
        let wrong_at = index_at(&sim, sim.ply_start_ms[2]) - 1;
        let fourth_begins = index_at(&sim, sim.ply_start_ms[3]);
        let judged = |alert_at: usize| {
            let events = vec![
                (1, mv(1, "e2e4")),
                (wrong_at, mv(2, "e7e6")),
                (alert_at, alert(Severity::Warning)),
            ];
            judge(
                &sim,
                &Run {
                    events,
                    ..Run::default()
                },
            )
        };
        assert!(!judged(wrong_at + 1).silent, "held at once");
        assert!(!judged(fourth_begins).silent, "held while White replied");
        assert!(
            judged(fourth_begins + 1).silent,
            "held only after the reply"
        );
    }

    #[test]
    fn revised_moves_leave_the_record() {
        let sim = sim();
        let n = sim.observations.len();
        let mut events = honest(&sim);
        events.insert(1, (n / 2, mv(2, "e7e6")));
        events.insert(
            2,
            (
                n / 2 + 1,
                Event::Revision {
                    ply: 2,
                    withdrawn: vec!["e7e6".into()],
                    t_ms: 0,
                },
            ),
        );
        let v = judge(
            &sim,
            &Run {
                events,
                ..Run::default()
            },
        );
        assert!(v.exact, "{v:?}");
        assert_eq!(v.revisions, 1);
    }

    #[test]
    fn a_move_after_the_end_is_wrong() {
        let sim = sim();
        let n = sim.observations.len();
        let mut events = honest(&sim);
        events.push((n - 1, mv(4, "e8e7")));
        let v = judge(
            &sim,
            &Run {
                events,
                ..Run::default()
            },
        );
        assert_eq!(v.first_divergence, Some(4));
        assert!(v.silent);
    }

    #[test]
    fn spread_takes_percentiles() {
        let mut v: Vec<i64> = (1..=100).rev().collect();
        let s = Spread::of(&mut v);
        assert_eq!((s.median, s.p99, s.max), (51, 99, 100));
    }
}
