//! The cross-check: games played by the independent hands, recorded by the act-of-moving
//! machine, and the record judged against the truth.
//!
//! Each game's observations go through a fresh [`Machine`] (default configuration, with the
//! game's start position and Chess960 flag), then time is advanced 10 s past the last one.
//! The recorded game is rebuilt from the events (`Move` sets its ply, `Revision` truncates
//! before its ply) and classified:
//!
//! - **exact**: the recorded moves are the moves played (the result aside);
//! - **ended by rule**: the machine ended the game by a rule (a [`Event::Result`] for a
//!   dead position, a repetition or the 75-move rule, or a position shakmaty finds over by
//!   checkmate, stalemate or insufficient material) and its moves are a strict prefix of the
//!   moves played; listed apart, with shakmaty's opinion, so a false ending stays visible.
//!   Any other ending before the moves ran out (a result signal, say) is a failure;
//! - **alerted**: not exact, and an alert above Info was raised;
//! - **silently wrong**: not exact and no such alert.
//!
//! Non-exact games are also split into **lost moves** (the record is a strict prefix of the
//! truth) and **wrong moves** (a recorded move differs from the one played, or there are
//! more).
//!
//! One file for one concept, the cross-check: playing, recording, classifying and reporting a
//! game follow the definitions above, kept with them.

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::{Value, json};
use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};

use super::{IndependentGame, Roughness, SimError, game_seed, simulate_on, start_position};
use crate::act::{Event, Machine, MachineConfig, Severity};
use crate::board::kind::BoardKind;
use crate::board::{Millis, Observation, ObservationKind};
use crate::sim::hands::pgn_games::PgnGame;

/// How a game came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Recorded moves equal the moves played.
    Exact,
    /// The machine ended the game before the moves played ran out.
    EndedByRule,
    /// Not exact, with an alert above Info.
    Alerted,
    /// Not exact, and no alert above Info.
    SilentlyWrong,
}

/// A game recorded by the machine and judged.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The game as played.
    pub game: IndependentGame,
    /// Every event, with the index of the observation that caused it (`None` for the final
    /// advance of time).
    pub events: Vec<(Option<usize>, Event)>,
    /// The recorded moves (UCI).
    pub recorded: Vec<String>,
    /// The verdict.
    pub class: Class,
    /// First ply index (0-based) where record and truth differ, if they do.
    pub first_divergence: Option<usize>,
    /// For non-exact games: true when the record is a strict prefix of the truth.
    pub lost_moves: bool,
    /// The result event, if any: (result, reason, ply recorded at that time).
    pub result: Option<(String, String)>,
    /// True when the board was still held (not matching the game) at the end.
    pub held_at_end: bool,
}

/// Runs a simulated game through a fresh machine and judges the record.
pub fn judge(game: IndependentGame) -> Judged {
    let mut config = MachineConfig {
        start_fen: game.start_fen.clone(),
        chess960: game.chess960,
        ..MachineConfig::default()
    };
    if let Some(board) = game.sensor.board() {
        config.identifies_pieces = board.identifies_pieces();
        config.scan_period_ms = board.scan_period_ms();
        config.whole_frames = board.sends_snapshots();
    }
    let mut machine = Machine::new(config);
    let mut events: Vec<(Option<usize>, Event)> = Vec::new();
    let mut out = Vec::new();
    for (i, obs) in game.observations.iter().enumerate() {
        machine.observe(obs, &mut out);
        events.extend(out.drain(..).map(|e| (Some(i), e)));
    }
    let last_t = game.observations.last().map_or(0, |o| o.t_ms);
    machine.advance(last_t + 10_000, &mut out);
    events.extend(out.drain(..).map(|e| (None, e)));

    let mut recorded: Vec<String> = Vec::new();
    let mut result = None;
    let mut held = false;
    for (_, e) in &events {
        match e {
            Event::Move { ply, uci, .. } => {
                recorded.truncate((*ply as usize).saturating_sub(1));
                recorded.push(uci.clone());
            }
            Event::Revision { ply, .. } => recorded.truncate((*ply as usize).saturating_sub(1)),
            Event::Result {
                result: r, reason, ..
            } => {
                result = Some((r.clone(), reason.clone()));
            }
            Event::BoardState { held: h, .. } => held = *h,
            _ => {}
        }
    }
    let truth = &game.moves_uci;
    let first_divergence = if recorded == *truth {
        None
    } else {
        Some(
            recorded
                .iter()
                .zip(truth)
                .position(|(a, b)| a != b)
                .unwrap_or(recorded.len().min(truth.len())),
        )
    };
    let prefix = recorded.len() < truth.len() && truth.starts_with(&recorded);
    let alerted = events.iter().any(|(_, e)| is_raised(e));
    let by_rule = prefix
        && result.as_ref().is_some_and(|(_, reason)| {
            ["dead position", "repetition", "75-move"]
                .iter()
                .any(|r| reason.contains(r))
                || over_by_rules(&game, &recorded) == Some(true)
        });
    let class = match first_divergence {
        None => Class::Exact,
        Some(_) if by_rule => Class::EndedByRule,
        Some(_) if alerted => Class::Alerted,
        Some(_) => Class::SilentlyWrong,
    };
    Judged {
        game,
        events,
        recorded,
        class,
        first_divergence,
        lost_moves: prefix,
        result,
        held_at_end: held,
    }
}

/// An alert above Info.
fn is_raised(e: &Event) -> bool {
    matches!(e, Event::Alert(a) if a.severity != Severity::Info)
}

/// Figures over many games.
#[derive(Debug, Default)]
pub struct Summary {
    /// Games played.
    pub games: usize,
    /// Plies played.
    pub plies: usize,
    /// Observations sent to the machine.
    pub observations: usize,
    /// Exact games.
    pub exact: usize,
    /// Games the machine ended by a rule before the moves ran out.
    pub ended_by_rule: usize,
    /// Non-exact games with an alert above Info.
    pub alerted: usize,
    /// Non-exact games without one.
    pub silently_wrong: usize,
    /// Non-exact games whose record is a strict prefix of the truth.
    pub lost_moves: usize,
    /// Non-exact games with a wrong (or extra) move.
    pub wrong_moves: usize,
    /// Silently wrong games that lost moves.
    pub silently_lost: usize,
    /// Silently wrong games with a wrong move.
    pub silently_wrong_move: usize,
    /// Non-exact games whose board was still held at the end.
    pub held_at_end: usize,
    /// Non-exact games in which the sensor lost an update (the truth may then be beyond any
    /// recorder).
    pub non_exact_with_lost_updates: usize,
    /// Silently wrong games in which the sensor lost an update.
    pub silently_wrong_with_lost_updates: usize,
    /// Exact games with an alert above Info.
    pub exact_with_alerts: usize,
    /// Alerts above Info raised in exact games, by article: within a ply of a deliberate
    /// irregularity (of any article), or not near any.
    pub alerts_in_exact: BTreeMap<String, (usize, usize)>,
    /// The 7.5 alerts (penalties) above Info in exact games that are not near any deliberate
    /// irregularity: game number, ply, article, message (to trace with `--game N --trace`).
    pub penalties_near_none: Vec<Value>,
    /// Board updates lost by the sensor, and games with any.
    pub dropped_updates: u64,
    /// Games with a lost update.
    pub games_with_drops: usize,
    /// Per article: irregularities a recorder should flag, and how many were flagged by an
    /// alert above Info (or a hold, for displaced pieces).
    pub flags: BTreeMap<&'static str, (usize, usize)>,
    /// Per article: how many were flagged at any severity (Info included).
    pub flags_info: BTreeMap<&'static str, usize>,
    /// Irregularities to flag that were not flagged at any severity (the first few).
    pub unflagged: Vec<Value>,
    /// Games that could not be simulated (index, why).
    pub simulation_errors: Vec<(usize, String)>,
    /// Details of the first non-exact games.
    pub failures: Vec<Value>,
    /// Games ended by rule (index, ply, reason, confirmed by the rules).
    pub rule_endings: Vec<Value>,
}

impl Summary {
    /// Adds a judged game; keeps details of up to `show` non-exact ones.
    pub fn add(&mut self, index: usize, seed: u64, j: &Judged, show: usize) {
        self.games += 1;
        self.plies += j.game.moves_uci.len();
        self.observations += j.game.observations.len();
        self.dropped_updates += u64::from(j.game.dropped_updates);
        if j.game.dropped_updates > 0 {
            self.games_with_drops += 1;
        }
        for (article, flagged) in flags(j) {
            let e = self.flags.entry(article).or_default();
            e.0 += 1;
            if flagged {
                e.1 += 1;
            }
        }
        let to_flag = j.game.irregularities.iter().filter(|i| i.should_flag);
        for (irr, (article, flagged)) in to_flag.zip(flags_any_severity(j)) {
            if flagged {
                *self.flags_info.entry(article).or_default() += 1;
            } else if self.unflagged.len() < show {
                self.unflagged.push(json!({
                    "game": index, "seed": seed, "ply": irr.ply, "t_ms": irr.t_ms,
                    "article": article, "what": irr.what,
                    "exact": j.class == Class::Exact,
                    "other_touches_in_ply": j.game.irregularities.iter()
                        .filter(|o| o.ply == irr.ply && !o.should_flag && o.article == "4.2.1")
                        .count(),
                }));
            }
        }
        match j.class {
            Class::Exact => {
                self.exact += 1;
                if j.events.iter().any(|(_, e)| is_raised(e)) {
                    self.exact_with_alerts += 1;
                }
                for (_, e) in &j.events {
                    let Event::Alert(a) = e else { continue };
                    if a.severity == Severity::Info {
                        continue;
                    }
                    let deliberate = j
                        .game
                        .irregularities
                        .iter()
                        .any(|i| i.ply + 1 >= a.ply && i.ply <= a.ply + 1);
                    let entry = self.alerts_in_exact.entry(a.article.clone()).or_default();
                    if deliberate {
                        entry.0 += 1;
                    } else {
                        entry.1 += 1;
                        if a.article.starts_with("7.5") {
                            self.penalties_near_none.push(json!({
                                "game": index, "ply": a.ply, "t_ms": a.t_ms,
                                "article": a.article, "message": a.message,
                            }));
                        }
                    }
                }
                return;
            }
            Class::EndedByRule => {
                self.ended_by_rule += 1;
                self.rule_endings.push(rule_ending(index, j));
                return;
            }
            Class::Alerted => self.alerted += 1,
            Class::SilentlyWrong => self.silently_wrong += 1,
        }
        if j.lost_moves {
            self.lost_moves += 1;
        } else {
            self.wrong_moves += 1;
        }
        if j.class == Class::SilentlyWrong {
            if j.lost_moves {
                self.silently_lost += 1;
            } else {
                self.silently_wrong_move += 1;
            }
        }
        if j.held_at_end {
            self.held_at_end += 1;
        }
        if j.game.dropped_updates > 0 {
            self.non_exact_with_lost_updates += 1;
            if j.class == Class::SilentlyWrong {
                self.silently_wrong_with_lost_updates += 1;
            }
        }
        if self.failures.len() < show {
            self.failures.push(failure(index, seed, j));
        }
    }

    /// The figures as one JSON object.
    pub fn to_json(&self) -> Value {
        let flags: BTreeMap<&str, Value> = self
            .flags
            .iter()
            .map(|(a, (done, flagged))| {
                let any = self.flags_info.get(a).copied().unwrap_or(0);
                (
                    *a,
                    json!({"done": done, "flagged": any, "flagged_above_info": flagged}),
                )
            })
            .collect();
        json!({
            "games": self.games,
            "plies": self.plies,
            "observations": self.observations,
            "exact": self.exact,
            "ended_by_rule": self.ended_by_rule,
            "alerted": self.alerted,
            "silently_wrong": self.silently_wrong,
            "lost_moves": self.lost_moves,
            "wrong_moves": self.wrong_moves,
            "silently_lost": self.silently_lost,
            "silently_wrong_move": self.silently_wrong_move,
            "held_at_end": self.held_at_end,
            "non_exact_with_lost_updates": self.non_exact_with_lost_updates,
            "silently_wrong_with_lost_updates": self.silently_wrong_with_lost_updates,
            "exact_with_alerts": self.exact_with_alerts,
            "alerts_in_exact_games": self.alerts_in_exact.iter()
                .map(|(a, (d, o))| (a.clone(), json!({"near_a_deliberate_irregularity": d, "near_none": o})))
                .collect::<BTreeMap<String, Value>>(),
            "penalties_in_exact_games_near_none": self.penalties_near_none,
            "dropped_updates": self.dropped_updates,
            "games_with_drops": self.games_with_drops,
            "irregularities_to_flag": flags,
            "simulation_errors": self.simulation_errors.len(),
            "simulation_error_samples": self.simulation_errors.iter().take(5)
                .map(|(i, e)| format!("game {i}: {e}")).collect::<Vec<_>>(),
            "rule_endings": self.rule_endings,
            "unflagged": self.unflagged,
            "failures": self.failures,
        })
    }
}

/// Plays one game of a run seeded with `seed` through the hands and the machine; with
/// `verified`, the host's driver verifies the board with dumps
/// ([`IndependentGame::verified`]).
pub fn play_one(
    g: &PgnGame,
    seed: u64,
    roughness: Roughness,
    verified: bool,
) -> Result<Judged, SimError> {
    play_one_on(g, seed, roughness, verified, None)
}

/// [`play_one`] on a board of another kind (`None`: DGT).
pub fn play_one_on(
    g: &PgnGame,
    seed: u64,
    roughness: Roughness,
    verified: bool,
    board: Option<BoardKind>,
) -> Result<Judged, SimError> {
    let s = game_seed(seed, g.index);
    let game = simulate_on(
        g.fen.as_deref(),
        g.chess960,
        &g.moves_uci,
        s,
        roughness,
        board,
    )?;
    Ok(judge(if verified { game.verified() } else { game }))
}

/// Plays every game through the hands and the machine ([`play_one`]).
pub fn run(
    games: &[&PgnGame],
    seed: u64,
    roughness: Roughness,
    verified: bool,
    show: usize,
) -> Summary {
    run_on(games, seed, roughness, verified, show, None)
}

/// [`run`] on boards of another kind (`None`: DGT).
pub fn run_on(
    games: &[&PgnGame],
    seed: u64,
    roughness: Roughness,
    verified: bool,
    show: usize,
    board: Option<BoardKind>,
) -> Summary {
    let mut summary = Summary::default();
    for g in games {
        match play_one_on(g, seed, roughness, verified, board) {
            Ok(j) => summary.add(g.index, game_seed(seed, g.index), &j, show),
            Err(e) => summary.simulation_errors.push((g.index, e.to_string())),
        }
    }
    summary
}

/// For each irregularity a recorder should flag: its article and whether it was flagged
/// (an alert of the same article family within a ply of it, 4.4 counting for 4.3 since a
/// king or rook touched is a touch-move matter too; for displaced pieces, the board held
/// while it stood displaced).
pub fn flags(j: &Judged) -> Vec<(&'static str, bool)> {
    flags_at(j, false)
}

/// Like [`flags`], counting alerts of any severity (Info included).
pub fn flags_any_severity(j: &Judged) -> Vec<(&'static str, bool)> {
    flags_at(j, true)
}

fn flags_at(j: &Judged, info_counts: bool) -> Vec<(&'static str, bool)> {
    let mut found = Vec::new();
    for irr in j.game.irregularities.iter().filter(|i| i.should_flag) {
        let family = match irr.article {
            a if a.starts_with("4.3") => "4.3",
            a if a.starts_with("4.4") => "4.4",
            a if a.starts_with("7.") => "7.",
            a => a,
        };
        let until = j
            .game
            .deeds
            .get(irr.ply as usize - 1)
            .map_or(irr.t_ms, |d| d.end_ms)
            + 2_000;
        let flagged = j.events.iter().any(|(_, e)| match e {
            Event::Alert(a) => {
                (a.article.starts_with(family) || (family == "4.3" && a.article.starts_with("4.4")))
                    && a.ply + 1 >= irr.ply
                    && a.ply <= irr.ply + 1
                    && (info_counts || a.severity != Severity::Info)
            }
            Event::BoardState {
                held: true, t_ms, ..
            } => family == "7." && *t_ms >= irr.t_ms && *t_ms <= until,
            _ => false,
        });
        found.push((irr.article, flagged));
    }
    found
}

/// Whether the position after `moves` is over by checkmate, stalemate or insufficient
/// material (shakmaty's reading), if the moves can be played.
fn over_by_rules(game: &IndependentGame, moves: &[String]) -> Option<bool> {
    start_position(game.start_fen.as_deref(), game.chess960)
        .ok()
        .and_then(|start| play_out(start, moves))
        .map(|p| p.is_checkmate() || p.is_stalemate() || p.is_insufficient_material())
}

fn rule_ending(index: usize, j: &Judged) -> Value {
    let confirmed = over_by_rules(&j.game, &j.recorded);
    json!({
        "game": index,
        "recorded_plies": j.recorded.len(),
        "played_plies": j.game.moves_uci.len(),
        "result": j.result,
        "over_by_shakmaty": confirmed,
    })
}

fn play_out(mut pos: Chess, moves: &[String]) -> Option<Chess> {
    for m in moves {
        let mv = m.parse::<UciMove>().ok()?.to_move(&pos).ok()?;
        pos.play_unchecked(mv);
    }
    Some(pos)
}

/// A compact form of an observation: `t e2-`, `t e4=P`, `t press w`.
pub fn describe(o: &Observation) -> String {
    let what = match &o.kind {
        ObservationKind::Emptied(sq) => format!("{sq}-"),
        ObservationKind::Placed(sq, Some(p)) => format!("{sq}={}", p.char()),
        ObservationKind::Placed(sq, None) => format!("{sq}=?"),
        ObservationKind::Snapshot(_) => "snapshot".to_string(),
        ObservationKind::ClockPressed { by } => format!("press {}", by.char()),
        ObservationKind::ClockTimes(_) => "clock times".to_string(),
        ObservationKind::MagicPiece(sq, m) => format!("{sq}=magic {}", m.result()),
    };
    format!("{} {what}", o.t_ms)
}

/// A compact form of an event, for the dumps.
pub fn describe_event(e: &Event) -> Option<String> {
    Some(match e {
        Event::Move { ply, uci, t_ms, .. } => format!("  => {t_ms} move {ply} {uci}"),
        Event::Revision {
            ply,
            withdrawn,
            t_ms,
        } => format!("  => {t_ms} revision from {ply}, withdrawn {withdrawn:?}"),
        Event::Alert(a) => format!(
            "  => {} alert {} {:?} ply {} {:?}: {}",
            a.t_ms, a.article, a.severity, a.ply, a.squares, a.message
        ),
        Event::BoardState {
            held,
            differing,
            t_ms,
        } => format!("  => {t_ms} board held={held} differing {differing:?}"),
        Event::Result {
            result,
            reason,
            t_ms,
        } => format!("  => {t_ms} result {result} ({reason})"),
        Event::MoveCompleted { ply, t_ms, .. } => format!("  => {t_ms} completed {ply}"),
        _ => return None,
    })
}

/// Every observation of a judged game with the events it caused, the deeds and the
/// irregularities, one line each, in time order of the observations.
pub fn trace(j: &Judged) -> Vec<String> {
    let g = &j.game;
    let mut lines = vec![format!(
        "sensor {} lost updates {:?}",
        serde_json::to_string(&g.sensor).unwrap_or_default(),
        g.lost_updates.iter().map(describe).collect::<Vec<_>>()
    )];
    let mut deeds = g.deeds.iter().peekable();
    for (i, o) in g.observations.iter().enumerate() {
        while let Some(d) = deeds.next_if(|d| d.start_ms <= o.t_ms) {
            lines.push(format!(
                "# ply {} {} [{}..{} released {}]: {}",
                d.ply, d.uci, d.start_ms, d.end_ms, d.release_ms, d.how
            ));
        }
        lines.push(describe(o));
        lines.extend(
            j.events
                .iter()
                .filter(|(k, _)| *k == Some(i))
                .filter_map(|(_, e)| describe_event(e)),
        );
    }
    lines.extend(
        j.events
            .iter()
            .filter(|(k, _)| k.is_none())
            .filter_map(|(_, e)| describe_event(e)),
    );
    for x in &g.irregularities {
        lines.push(format!(
            "! ply {} t {} {}{}: {}",
            x.ply,
            x.t_ms,
            x.article,
            if x.should_flag { " (to flag)" } else { "" },
            x.what
        ));
    }
    lines.push(format!(
        "verdict {:?} first divergence {:?} recorded {} of {} plies, result {:?}",
        j.class,
        j.first_divergence.map(|d| d + 1),
        j.recorded.len(),
        g.moves_uci.len(),
        j.result
    ));
    lines
}

fn failure(index: usize, seed: u64, j: &Judged) -> Value {
    let g = &j.game;
    let d = j.first_divergence.unwrap_or(0);
    let lo = d.saturating_sub(2);
    let window = |moves: &[String]| -> Vec<String> {
        (lo..(d + 3).min(moves.len()))
            .map(|i| format!("{} {}", i + 1, moves[i]))
            .collect()
    };
    let near = |ply: u32| (ply as usize + 1 >= d) && (ply as usize) <= d + 2;
    let deeds: Vec<String> = g
        .deeds
        .iter()
        .filter(|x| near(x.ply))
        .map(|x| {
            format!(
                "ply {} {} [{}..{} released {}]: {}",
                x.ply, x.uci, x.start_ms, x.end_ms, x.release_ms, x.how
            )
        })
        .collect();
    let irregularities: Vec<String> = g
        .irregularities
        .iter()
        .filter(|x| near(x.ply))
        .map(|x| {
            format!(
                "ply {} t {} {}{}: {}",
                x.ply,
                x.t_ms,
                x.article,
                if x.should_flag { " (to flag)" } else { "" },
                x.what
            )
        })
        .collect();
    let alerts: Vec<String> = j
        .events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Alert(a) if a.severity != Severity::Info => Some(format!(
                "{} {:?} ply {} t {}",
                a.article, a.severity, a.ply, a.t_ms
            )),
            _ => None,
        })
        .take(12)
        .collect();
    // The observations from the ply before the divergence to the one after, with the
    // events they caused.
    let from_ms: Millis = g
        .deeds
        .get(d.saturating_sub(1))
        .map_or(0, |x| x.start_ms.saturating_sub(300));
    let to_ms: Millis = g
        .deeds
        .get((d + 1).min(g.deeds.len().saturating_sub(1)))
        .map_or(Millis::MAX, |x| x.end_ms + 1_500);
    let mut dump = Vec::new();
    for (i, o) in g.observations.iter().enumerate() {
        if o.t_ms < from_ms || o.t_ms > to_ms {
            continue;
        }
        if dump.len() >= 90 {
            dump.push("...".to_string());
            break;
        }
        dump.push(describe(o));
        dump.extend(
            j.events
                .iter()
                .filter(|(k, _)| *k == Some(i))
                .filter_map(|(_, e)| describe_event(e)),
        );
    }
    let tail: Vec<String> = j
        .events
        .iter()
        .filter(|(k, _)| k.is_none())
        .filter_map(|(_, e)| describe_event(e))
        .collect();
    json!({
        "game": index,
        "seed": seed,
        "class": j.class,
        "kind": if j.lost_moves { "lost" } else { "wrong" },
        "sensor": g.sensor,
        "dropped_updates": g.dropped_updates,
        "lost_updates": g.lost_updates.iter().map(describe).collect::<Vec<_>>(),
        "first_divergent_ply": d + 1,
        "played_plies": g.moves_uci.len(),
        "recorded_plies": j.recorded.len(),
        "truth": window(&g.moves_uci),
        "recorded": window(&j.recorded),
        "held_at_end": j.held_at_end,
        "result": j.result,
        "alerts": alerts,
        "deeds": deeds,
        "irregularities": irregularities,
        "observations": dump,
        "after_last_observation": tail,
    })
}
