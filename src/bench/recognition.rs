//! `touchmove bench recognition`: the act-of-moving machine on simulated hands. Every game
//! of a PGN file is played through the hand simulator ([`crate::sim::hands`]) on a modelled
//! board and recognised by the machine; the verdicts are those of [`crate::sim::hands::score`]
//! (games recorded exactly, moves silently wrong, alerts, cost per observation, latency).

use serde_json::json;

use crate::act::{Event, Machine, MachineConfig};
use crate::board::kind::BoardKind;
use crate::board::{Millis, Observation, ObservationKind};
use crate::sim::hands::pgn_games::PgnGame;
use crate::sim::hands::score::{self, Feed, Summary, game_seed};
use crate::sim::hands::{HandModel, Noise, SimulatedGame, simulate_with_model};

/// The board a recognition benchmark models: its kind, and the period of its scan.
#[derive(Debug, Clone, Copy)]
pub struct ModelledBoard {
    /// What the board reports and how.
    pub kind: BoardKind,
    /// One scan of its 64 squares, in milliseconds.
    pub scan_period_ms: Millis,
}

impl From<BoardKind> for ModelledBoard {
    fn from(kind: BoardKind) -> ModelledBoard {
        ModelledBoard {
            kind,
            scan_period_ms: kind.scan_period_ms(),
        }
    }
}

/// A fresh act-of-moving machine for a simulated game, configured as an arbiter would for
/// that game (start position, Chess960, blitz), with the dead-position analysis out of the
/// observation path as the recorder runs it; everything else default.
pub fn recogniser(sim: &SimulatedGame) -> impl FnMut(Feed<'_>, &mut Vec<Event>) + use<> {
    recogniser_on(sim, BoardKind::Dgt.into())
}

/// [`recogniser`] for a board of `kind`: its scan period, and the occupancy-only path for
/// boards that do not name pieces.
pub fn recogniser_on(
    sim: &SimulatedGame,
    board: ModelledBoard,
) -> impl FnMut(Feed<'_>, &mut Vec<Event>) + use<> {
    let mut config = MachineConfig {
        start_fen: sim.start_fen.clone(),
        chess960: sim.chess960,
        one_minute_penalty: sim.model.blitz,
        defer_dead_position_analysis: true,
        ..MachineConfig::default()
    }
    .on_board(board.kind);
    config.scan_period_ms = board.scan_period_ms;
    let mut machine = Machine::new(config);
    move |feed, out| match feed {
        Feed::Until(t) => machine.catch_up(t, out),
        Feed::Observation(obs) => machine.observe(obs, out),
        Feed::End => {
            answer_analyses(&mut machine, out);
            machine.advance(Millis::MAX, out);
        }
        Feed::Idle => answer_analyses(&mut machine, out),
    }
}

/// Runs the dead-position analyses `machine` asked for, in order, and gives it the answers.
fn answer_analyses(machine: &mut Machine, out: &mut Vec<Event>) {
    for request in machine.take_analysis_requests() {
        let dead = request.analyse();
        machine.analysis_answered(&request, dead, out);
    }
}

/// Simulates and recognises every game, adding each verdict to a summary.
pub fn recognise_all(games: &[&PgnGame], noise: Noise, seed: u64) -> Summary {
    recognise_all_on(games, noise, seed, BoardKind::Dgt.into())
}

/// [`recognise_all`] on boards of `kind`.
pub fn recognise_all_on(
    games: &[&PgnGame],
    noise: Noise,
    seed: u64,
    board: ModelledBoard,
) -> Summary {
    let mut summary = Summary::default();
    for g in games {
        let s = game_seed(seed, g.index);
        let sim = simulate_on_board(g, noise, s, board);
        let run = score::run(&sim, recogniser_on(&sim, board));
        let verdict = score::judge(&sim, &run);
        summary.add(g.index, s, &sim, &run, &verdict);
    }
    summary
}

/// Simulates game `g` with seed `seed` on a board of `kind`: the hands of `noise`, the
/// board's scan; a board that does not name pieces reports placements without them, and its
/// players do not signal the result with the kings (a DGT convention such a board cannot
/// show: there the arbiter enters the result).
pub fn simulate_on_board(
    g: &PgnGame,
    noise: Noise,
    seed: u64,
    board: ModelledBoard,
) -> SimulatedGame {
    use rand::SeedableRng;
    let kind = board.kind;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut model = HandModel::for_noise(noise, &mut rng);
    model.sensor = model.sensor.clone().on_board(kind);
    if board.scan_period_ms != kind.scan_period_ms() && model.sensor.scan_period_ms > 0.0 {
        model.sensor.scan_period_ms = board.scan_period_ms as f64;
    }
    let signalled = g.result.as_deref().filter(|_| kind.identifies_pieces());
    let mut sim = simulate_with_model(
        g.fen.as_deref(),
        g.chess960,
        &g.moves_uci,
        signalled,
        &model,
        &mut rng,
    );
    if !kind.identifies_pieces() {
        for obs in &mut sim.observations {
            match &mut obs.kind {
                ObservationKind::Placed(_, piece) => *piece = None,
                ObservationKind::Snapshot(snapshot) => *snapshot = snapshot.occupancy_only(),
                _ => {}
            }
        }
    }
    sim
}

/// Game `g` played with `seed` (as [`recognise_all_on`] plays it): its observations, the
/// events each caused and the verdict, as JSON lines.
pub fn trace(g: &PgnGame, noise: Noise, seed: u64, board: ModelledBoard) -> Vec<String> {
    let s = game_seed(seed, g.index);
    let sim = simulate_on_board(g, noise, s, board);
    let run = score::run(&sim, recogniser_on(&sim, board));
    let mut lines = Vec::new();
    let mut events = run.events.iter().peekable();
    for (i, obs) in sim.observations.iter().enumerate() {
        lines.push(json!({"obs": i, "t_ms": obs.t_ms, "what": describe(obs)}).to_string());
        while let Some((_, e)) = events.next_if(|(k, _)| *k == i) {
            lines.push(serde_json::to_string(e).unwrap_or_default());
        }
    }
    for inj in &sim.injected {
        lines.push(
            json!({"injected": inj, "start_of_ply_ms": sim.ply_start_ms.get(inj.ply.saturating_sub(1) as usize)})
                .to_string(),
        );
    }
    let v = score::judge(&sim, &run);
    lines.push(
        json!({
            "game": g.index, "seed": s, "exact": v.exact,
            "first_divergence": v.first_divergence, "silent": v.silent,
            "expected": sim.moves_uci, "recorded": v.recorded,
            "expected_result": sim.expected_result, "result": v.result,
            "model": sim.model,
        })
        .to_string(),
    );
    lines
}

/// An observation in a few characters: `e2-`, `e4=P`, `press white`.
fn describe(obs: &Observation) -> String {
    use crate::board::ObservationKind as K;
    match &obs.kind {
        K::Emptied(sq) => format!("{sq}-"),
        K::Placed(sq, Some(p)) => format!("{sq}={}", p.char()),
        K::Placed(sq, None) => format!("{sq}=?"),
        K::Snapshot(s) => format!("snapshot {}", s.board),
        K::ClockPressed { by } => format!("press {by}"),
        K::ClockTimes(c) => format!("clock {} {}", c.white_ms, c.black_ms),
        K::MagicPiece(sq, m) => format!("{sq}=magic {}", m.result()),
    }
}
