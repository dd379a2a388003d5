//! The next rounds of a simulated event: who plays on which board (the pairings of a real
//! TRF), the boards set up again between rounds, the round opened on the recorder, and the
//! results that `touchmove results` writes back into the TRF.
//!
//! An event of one round has no pairings file and stays as [`super::scenario`] draws it; an
//! event of more rounds takes every round's players from [`PAIRINGS`], and its later rounds
//! and their faults are drawn from a generator of their own, so that the first round of a
//! seed is the same whatever the number of rounds.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use shakmaty::Board;

use super::scenario::{
    AfterGame, BoardPlan, Fault, FaultKind, PlayedGame, Scenario, Shape, draw_board,
};
use crate::board::{Millis, Observation, ObservationKind};
use crate::event::EventConfig;
use crate::event::trf::{Trf, TrfGame, result_codes};
use crate::sim::after_game::{SetBack, board_after, set_back};

/// The TRF whose rounds a simulated event of several rounds plays: a 249-player team Swiss of
/// 14 rounds, whose top boards are played over the board in every round
/// (`fixtures/trf/grandmommyscup.trf`, see `fixtures/README.md`).
const PAIRINGS: &[u8] = include_bytes!("../../../fixtures/trf/grandmommyscup.trf");

/// The file name the TRF is given in messages and in a run's folder.
pub const TRF_NAME: &str = "event.trf";

/// Mixed into the seed for the later rounds, so that the first round's draws stay as they are.
const LATER_ROUNDS_SALT: u64 = 0x726f_756e_6473;

/// The pause between the last board of a round done and the arbiter opening the next.
const BREAK_MS: std::ops::Range<Millis> = 30_000..180_000;

/// When a board's game begins after its pieces stand in the start position.
const GAME_STARTS_AFTER_SETUP_MS: std::ops::Range<Millis> = 15_000..20_000;

/// The TRF of the pairings, read once.
pub fn pairings() -> Result<&'static Trf, String> {
    static TRF: OnceLock<Result<Trf, String>> = OnceLock::new();
    TRF.get_or_init(|| Trf::parse(PAIRINGS, Path::new(TRF_NAME), None).map_err(|e| e.to_string()))
        .as_ref()
        .map_err(Clone::clone)
}

/// Board `board` of round `round` of the pairings.
fn paired(round: u32, board: u32) -> Option<TrfGame> {
    let trf = pairings().ok()?;
    trf.round(round)
        .ok()?
        .boards
        .into_iter()
        .find(|g| g.board == board)
}

/// A round after the first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Round {
    /// Its number.
    pub number: u32,
    /// When the arbiter opens it on the recorder (the desk's "Start round N"), ms after the
    /// event began.
    pub opens_ms: Millis,
    /// Its boards; each [`BoardPlan::starts_ms`] is an event time.
    pub boards: Vec<BoardPlan>,
}

/// The rounds after the first of the event of `seed` in `shape`, whose first round is
/// `first` and ends at `first_ends_ms`, with their faults (in time order). Each board of a
/// round keeps its number, kind and seed's hands from round to round, as the physical board
/// stays at its table.
pub fn draw_later_rounds(
    seed: u64,
    shape: &Shape,
    first: &[BoardPlan],
    first_ends_ms: Millis,
) -> (Vec<Round>, Vec<Fault>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ LATER_ROUNDS_SALT);
    let mut rounds: Vec<Round> = Vec::new();
    let mut faults = Vec::new();
    let mut ends_ms = first_ends_ms;
    for number in 2..=shape.rounds.max(1) {
        let opens_ms = ends_ms + rng.gen_range(BREAK_MS);
        if shape.fault_kinds.contains(&FaultKind::RecorderKill) && rng.gen_bool(0.5) {
            // The recorder killed between rounds: up before the round opens, or after.
            faults.push(Fault::RecorderKill {
                at_ms: rng.gen_range(ends_ms..opens_ms),
                down_ms: rng.gen_range(100..90_000),
            });
        }
        let previous: Vec<&BoardPlan> = match rounds.last() {
            Some(r) => r.boards.iter().collect(),
            None => first.iter().collect(),
        };
        let boards: Vec<BoardPlan> = previous
            .iter()
            .map(|before| {
                let mut plan = draw_board(before.number, shape, &mut rng);
                plan.kind = before.kind;
                plan.after = *[AfterGame::Leave, AfterGame::SetBack, AfterGame::PostMortem]
                    .choose(&mut rng)
                    .unwrap_or(&AfterGame::Leave);
                let setup_ends = setup_ms(before, &plan, opens_ms)
                    .last()
                    .map_or(opens_ms, |o| o.t_ms);
                plan.starts_ms = setup_ends + rng.gen_range(GAME_STARTS_AFTER_SETUP_MS);
                plan
            })
            .collect();
        ends_ms = boards
            .iter()
            .map(|b| b.starts_ms + b.play().physical.last().map_or(0, |o| o.t_ms))
            .max()
            .unwrap_or(opens_ms);
        faults.extend(super::scenario::draw_faults(
            shape,
            opens_ms..ends_ms.max(opens_ms + 1),
            &mut rng,
        ));
        rounds.push(Round {
            number,
            opens_ms,
            boards,
        });
    }
    faults.sort_by_key(Fault::at_ms);
    (rounds, faults)
}

/// What the arbiter does to a board before round `plan`'s game, from `opens_ms` on: the
/// pieces that the last game (`before`) left standing set back to the start position.
fn setup_ms(before: &BoardPlan, plan: &BoardPlan, opens_ms: Millis) -> Vec<Observation> {
    let played = before.play();
    let start = match played.physical.first().map(|o| &o.kind) {
        Some(ObservationKind::Snapshot(s)) => s.board.clone(),
        _ => Board::new(),
    };
    let standing = board_after(&start, &played.physical);
    if standing == Board::new() {
        return Vec::new();
    }
    let mut rng = ChaCha8Rng::seed_from_u64(plan.seed ^ LATER_ROUNDS_SALT);
    let how = *[SetBack::PieceByPiece, SetBack::Sweep]
        .choose(&mut rng)
        .unwrap_or(&SetBack::PieceByPiece);
    let from = opens_ms + rng.gen_range(1_000..10_000);
    set_back(&standing, how, from, &mut rng)
}

impl super::run::SimulatedBoard {
    /// The board's plan and what its hands played in round `round`, if it played then.
    pub(super) fn game_of(&self, round: u32) -> Option<(&BoardPlan, &PlayedGame)> {
        if round == 1 {
            return Some((&self.plan, &self.played));
        }
        self.later
            .iter()
            .find(|g| g.round == round)
            .map(|g| (&g.plan, &g.played))
    }
}

/// A later round's game on one board: its plan and what the hands played.
pub struct RoundGame {
    /// The round.
    pub round: u32,
    /// The board's plan in that round.
    pub plan: BoardPlan,
    /// What its hands played.
    pub played: PlayedGame,
}

/// Board `number`'s games after the first round, and what the hands do on it for them, at
/// event times: the board set up again, then the game (its set-up observation left out: the
/// pieces were put there).
pub fn later_games(scenario: &Scenario, number: u32) -> (Vec<RoundGame>, Vec<Observation>) {
    let mut games = Vec::new();
    let mut actions = Vec::new();
    let mut before = scenario.boards.iter().find(|b| b.number == number);
    for round in &scenario.rounds {
        let Some(plan) = round.boards.iter().find(|b| b.number == number) else {
            continue;
        };
        if let Some(before) = before {
            actions.extend(setup_ms(before, plan, round.opens_ms));
        }
        let played = plan.play();
        actions.extend(
            played
                .physical
                .iter()
                .filter(|o| !(o.t_ms == 0 && matches!(o.kind, ObservationKind::Snapshot(_))))
                .map(|o| Observation {
                    t_ms: o.t_ms + plan.starts_ms,
                    kind: o.kind.clone(),
                }),
        );
        games.push(RoundGame {
            round: round.number,
            plan: plan.clone(),
            played,
        });
        before = Some(plan);
    }
    (games, actions)
}

/// The recorder's configuration of round `round` of the event: the board's players from the
/// pairings when the event has several rounds.
pub fn round_config(scenario: &Scenario, round: u32) -> EventConfig {
    let mut config = super::run::event_config(scenario);
    if scenario.shape.rounds <= 1 {
        return config;
    }
    config.round = round;
    if let Ok(trf) = pairings() {
        for board in &mut config.boards {
            if let Some(g) = paired(round, board.number) {
                if let Some(p) = trf.player(g.white) {
                    board.white = p.player.clone();
                }
                if let Some(p) = trf.player(g.black) {
                    board.black = p.player.clone();
                }
            }
        }
    }
    config
}

/// The rounds of the event, from 1.
pub fn round_numbers(scenario: &Scenario) -> impl Iterator<Item = u32> + '_ {
    std::iter::once(1).chain(scenario.rounds.iter().map(|r| r.number))
}

/// The players' names of board `board` in round `round`, when the event has pairings.
pub fn paired_names(scenario: &Scenario, round: u32, board: u32) -> Option<(String, String)> {
    if scenario.shape.rounds <= 1 {
        return None;
    }
    let trf = pairings().ok()?;
    let g = paired(round, board)?;
    Some((
        trf.player(g.white)?.player.name.clone(),
        trf.player(g.black)?.player.name.clone(),
    ))
}

/// Does what the arbiter does after each round with `touchmove results`: writes the results
/// recorded in `out` into the pairings TRF (with the simulated rounds' results blanked first,
/// as the file stands before they are played), saved as `trf_out`; then gives, for each
/// round, board and result that `expected` holds, what is wrong with the file.
pub fn results_in_trf(
    scenario: &Scenario,
    out: &Path,
    trf_out: &Path,
    expected: &BTreeMap<(u32, u32), String>,
) -> Vec<(Option<u32>, String)> {
    let mut problems = Vec::new();
    let reparse = |bytes: &[u8]| Trf::parse(bytes, trf_out, None).map_err(|e| e.to_string());
    let mut bytes = PAIRINGS.to_vec();
    for round in round_numbers(scenario) {
        let blank: BTreeMap<u32, char> = scenario
            .boards
            .iter()
            .filter_map(|b| paired(round, b.number))
            .flat_map(|g| [(g.white, ' '), (g.black, ' ')])
            .collect();
        match reparse(&bytes) {
            Ok(trf) => bytes = trf.with_results(round, &blank),
            Err(e) => return vec![(None, e)],
        }
    }
    for round in round_numbers(scenario) {
        let trf = match reparse(&bytes) {
            Ok(trf) => trf,
            Err(e) => return vec![(None, e)],
        };
        match crate::recorder::round_results::collect(&trf, round, out, false) {
            Ok(results) if results.problems.is_empty() => {
                bytes = trf.with_results(round, &results.codes);
            }
            Ok(results) => {
                for p in results.problems {
                    problems.push((None, format!("touchmove results, round {round}: {p}")));
                }
            }
            Err(e) => problems.push((None, format!("touchmove results, round {round}: {e}"))),
        }
    }
    if let Err(e) = std::fs::write(trf_out, &bytes) {
        problems.push((None, format!("{}: {e}", trf_out.display())));
    }
    let written = match reparse(&bytes) {
        Ok(trf) => trf,
        Err(e) => return vec![(None, e)],
    };
    let code = |rank: u32, round: u32| {
        written
            .player(rank)
            .and_then(|p| p.rounds.get(round as usize - 1).cloned().flatten())
            .map(|e| e.result)
    };
    for (&(round, board), result) in expected {
        let Some(g) = paired(round, board) else {
            problems.push((
                Some(board),
                format!("round {round}: no pairing in {TRF_NAME}"),
            ));
            continue;
        };
        let Some((white, black)) = result_codes(result, false, false) else {
            continue;
        };
        let is = (code(g.white, round), code(g.black, round));
        if is != (Some(white), Some(black)) {
            problems.push((
                Some(board),
                format!(
                    "round {round}: the TRF has {:?}/{:?} for players {}/{}, where the game \
                     played ended {result}",
                    is.0, is.1, g.white, g.black
                ),
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_round_pairs_its_top_eight_boards_over_the_board() {
        let trf = pairings().expect("the pairings TRF is read");
        for round in 1..=14 {
            for board in 1..=8 {
                let g = paired(round, board)
                    .unwrap_or_else(|| panic!("round {round} has a board {board}"));
                assert!(!g.is_forfeit(), "round {round} board {board}");
                assert!(trf.player(g.white).is_some() && trf.player(g.black).is_some());
            }
        }
    }

    #[test]
    fn a_result_that_does_not_reach_the_trf_is_named_with_its_board() {
        let shape = Shape {
            boards: 2,
            rounds: 2,
            faults: 0,
            ..Shape::default()
        };
        let scenario = Scenario::draw(7, &shape);
        let dir = tempfile::tempdir().expect("a folder");
        let out = dir.path().join("out");
        let mut expected = BTreeMap::new();
        for round in 1..=2 {
            std::fs::create_dir_all(out.join(format!("round-{round}"))).expect("a folder");
            for board in 1..=2 {
                let (white, black) = paired_names(&scenario, round, board).expect("paired");
                let pgn = format!(
                    "[White \"{white}\"]\n[Black \"{black}\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 1-0\n"
                );
                let path = out.join(format!("round-{round}/game-{board}.pgn"));
                std::fs::write(path, pgn).expect("written");
                expected.insert((round, board), "1-0".to_string());
            }
        }
        let trf = dir.path().join(TRF_NAME);
        let problems = results_in_trf(&scenario, &out, &trf, &expected);
        assert!(problems.is_empty(), "{problems:?}");
        expected.insert((2, 2), "0-1".to_string());
        let problems = results_in_trf(&scenario, &out, &trf, &expected);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].0, Some(2), "{problems:?}");
        assert!(problems[0].1.starts_with("round 2"), "{problems:?}");
    }
}
