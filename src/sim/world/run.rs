//! The simulation's loop: hands act on virtual boards, the boards talk to the real recorder
//! over cables in memory, faults strike on schedule, and simulated time moves from one thing
//! that happens to the next, never by sleeping.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use tokio::sync::Notify;

use super::cable::Cable;
use super::incarnation::Incarnation;
use super::rounds::{RoundGame, later_games, round_config};
use super::scenario::{ARBITER_RESULT_AFTER_MS, BoardPlan, Fault, PlayedGame, Scenario};
use crate::board::kind::BoardKind;
use crate::board::{Millis, Observation};
use crate::event::{BoardConfig, BoardSource, EventConfig, Player};
use crate::record::arbiter::{ArbiterAction, ArbiterRequest};
use crate::recorder::RunOptions;
use crate::server::feed::Feed;
use crate::sim::devices::{Device, DeviceOptions, device};
use crate::wire::pegasus::DeveloperKey;

/// How long the event goes on after the last hand left the last board: long enough for a
/// board that still differs from its game to be named on the desk (a minute).
pub const SETTLE_MS: Millis = 65_000;

/// When the arbiter takes a Certabo board's spare queens off, before the round.
const SPARES_OFF_MS: Millis = 6_000;

/// The developer key the simulated Pegasus boards expect and the recorder is given.
pub const PEGASUS_KEY: [u8; 6] = [0x5a, 0x3c, 0x11, 0x8e, 0x42, 0x07];

/// The time control of simulated events: long enough that no flag falls while the hands
/// think.
pub const TIME_CONTROL: &str = "5400+30";

/// One board of the simulation, with its hands' plan.
pub(super) struct SimulatedBoard {
    pub(super) plan: BoardPlan,
    pub(super) played: PlayedGame,
    /// Its games in the rounds after the first.
    pub(super) later: Vec<RoundGame>,
    device: Box<dyn Device>,
    cable: Cable,
    /// What the hands have still to do, at event times.
    actions: VecDeque<Observation>,
    /// Bytes the host wrote that reach the board later (it answers late), with when.
    late: VecDeque<(Millis, Vec<u8>)>,
    /// How late the board answers now.
    answer_delay_ms: Millis,
    /// Line noise until a time: chunks lost and garbled, per thousand.
    noise: Option<(Millis, u32, u32)>,
    rng: ChaCha8Rng,
}

/// Why the simulated arbiter enters a result: the verdict tells the arbiter's results from
/// those the recorder read on the board by it.
pub const ARBITER_REASON: &str = "from the scoresheets";

/// The options of a simulation's recorder writing into `out`: the Pegasus boards' key, each
/// board's cable in place of its port, and no arbiter's socket (the simulated arbiter uses the
/// handle; the runtime has no I/O driver).
pub fn recorder_options<'a>(
    out: &Path,
    feed: Arc<Feed>,
    cables: impl Iterator<Item = (u32, &'a Cable)>,
) -> RunOptions {
    let mut options = RunOptions::new(out, feed);
    options.pegasus_key = Some(DeveloperKey::new(PEGASUS_KEY));
    options.arbiter_socket = false;
    options.links = cables
        .map(|(number, cable)| (port_of(number), cable.connector()))
        .collect();
    options
}

/// The port path the recorder is given for board `number`.
pub fn port_of(number: u32) -> PathBuf {
    PathBuf::from(format!("/simulated/board-{number}"))
}

impl SimulatedBoard {
    fn new(
        plan: &BoardPlan,
        (later, later_actions): (Vec<RoundGame>, Vec<Observation>),
        written: &Arc<Notify>,
    ) -> SimulatedBoard {
        let played = plan.play();
        let options = DeviceOptions {
            clock: crate::clock::TimeControl::parse(TIME_CONTROL).ok(),
            developer_key: Some(PEGASUS_KEY),
            ..DeviceOptions::new(plan.seed)
        };
        let mut actions: VecDeque<Observation> = played
            .physical
            .iter()
            .map(|o| Observation {
                // The set-up (the first observation, at game time 0) stands from the start.
                t_ms: if o.t_ms == 0 {
                    0
                } else {
                    o.t_ms + plan.starts_ms
                },
                kind: o.kind.clone(),
            })
            .collect();
        if plan.kind == BoardKind::Certabo
            && let Some(setup) = actions.front().cloned()
        {
            // A Certabo board is switched on with spare queens beside the start position for
            // the host to learn their tags; the arbiter sets the start position alone before
            // the round.
            actions.insert(
                1,
                Observation {
                    t_ms: SPARES_OFF_MS,
                    kind: setup.kind,
                },
            );
        }
        actions.extend(later_actions);
        SimulatedBoard {
            plan: plan.clone(),
            later,
            device: device(plan.kind, options),
            cable: Cable::new(&port_of(plan.number).to_string_lossy(), Arc::clone(written)),
            played,
            actions,
            late: VecDeque::new(),
            answer_delay_ms: 0,
            noise: None,
            rng: ChaCha8Rng::seed_from_u64(plan.seed ^ 0x6c69_6e65),
        }
    }

    /// The next time something happens on this board by itself.
    fn next_ms(&self) -> Option<Millis> {
        [
            self.actions.front().map(|a| a.t_ms),
            self.late.front().map(|(t, _)| *t),
            self.device.next_transmit_ms(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Everything due by `now`: the host's bytes reach the board, the hands act, the board
    /// sends. A board with nothing due is left alone: it does what falls before `now` when it
    /// next acts, in time order, as if it had been stepped all along.
    fn step(&mut self, now: Millis) {
        let written = self.cable.take_from_host();
        if !written.is_empty() {
            self.late.push_back((now + self.answer_delay_ms, written));
        }
        if self.next_ms().is_none_or(|next| next > now) {
            return;
        }
        while self.late.front().is_some_and(|(t, _)| *t <= now) {
            if let Some((t, bytes)) = self.late.pop_front() {
                self.device.receive(t, &bytes);
            }
        }
        while self.actions.front().is_some_and(|a| a.t_ms <= now) {
            if let Some(action) = self.actions.pop_front() {
                self.device.physical(action.t_ms, &action.kind);
            }
        }
        let mut sent = Vec::new();
        self.device.transmit(now, &mut sent);
        if self.noise.is_some_and(|(until, _, _)| until <= now) {
            self.noise = None;
        }
        for (_, mut bytes) in sent {
            if let Some((_, lost, garbled)) = self.noise {
                if self.rng.gen_range(0..1000) < lost {
                    continue;
                }
                if self.rng.gen_range(0..1000) < garbled && !bytes.is_empty() {
                    let at = self.rng.gen_range(0..bytes.len());
                    bytes[at] ^= 1 << self.rng.gen_range(0..8);
                }
            }
            self.cable.send_to_host(&bytes);
        }
    }

    /// Boards that run on their own battery stay on when their cable is pulled out.
    fn powered_by_cable(&self) -> bool {
        !matches!(self.plan.kind, BoardKind::Chessnut | BoardKind::Pegasus)
    }

    fn plug(&mut self, now: Millis, plugged: bool) {
        self.cable.set_plugged(plugged);
        self.device.connection(now, plugged);
        if self.powered_by_cable() {
            self.device.power(now, plugged);
        }
    }
}

/// Something the schedule makes happen, at a time.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Happening {
    Plug(u32, bool),
    Power(u32, bool),
    AnswerDelay(u32, Millis),
    Noise(u32, Millis, u32, u32),
    Kill,
    Restart,
    /// The arbiter enters the result of a board's game in a round from the scoresheets.
    ArbiterResult(u32, u32, String),
    /// The arbiter opens the next round (the desk's "Start round N").
    NextRound(u32),
}

fn happenings(faults: &[Fault]) -> Vec<(Millis, Happening)> {
    let mut list = Vec::new();
    for fault in faults {
        match *fault {
            Fault::Unplug {
                board,
                at_ms,
                for_ms,
            } => {
                list.push((at_ms, Happening::Plug(board, false)));
                list.push((at_ms + for_ms, Happening::Plug(board, true)));
            }
            Fault::PowerCycle {
                board,
                at_ms,
                for_ms,
            } => {
                list.push((at_ms, Happening::Power(board, false)));
                list.push((at_ms + for_ms, Happening::Power(board, true)));
            }
            Fault::LateAnswers {
                board,
                at_ms,
                delay_ms,
            } => list.push((at_ms, Happening::AnswerDelay(board, delay_ms))),
            Fault::NoisyLine {
                board,
                at_ms,
                for_ms,
                lost_per_mille,
                garbled_per_mille,
            } => list.push((
                at_ms,
                Happening::Noise(board, at_ms + for_ms, lost_per_mille, garbled_per_mille),
            )),
            Fault::RecorderKill { at_ms, down_ms } => {
                list.push((at_ms, Happening::Kill));
                list.push((at_ms + down_ms, Happening::Restart));
            }
        }
    }
    list.sort_by_key(|(t, _)| *t);
    list
}

/// When the arbiter enters each game's result from the scoresheets, as a real arbiter does
/// whatever the board showed: [`ARBITER_RESULT_AFTER_MS`] after the game. A board that senses
/// only occupancy cannot show which king stands where: the result its players signalled
/// reaches the record only this way.
fn arbiter_results(boards: &[SimulatedBoard]) -> Vec<(Millis, Happening)> {
    boards
        .iter()
        .flat_map(|board| {
            let first = (1, &board.plan, &board.played);
            let later = board.later.iter().map(|g| (g.round, &g.plan, &g.played));
            std::iter::once(first).chain(later)
        })
        .filter_map(|(round, plan, played)| {
            let result = played.expected_result.clone()?;
            let at = plan.starts_ms + played.over_ms + ARBITER_RESULT_AFTER_MS;
            Some((at, Happening::ArbiterResult(round, plan.number, result)))
        })
        .collect()
}

/// Where a run keeps its files.
#[derive(Debug, Clone)]
pub struct RunFolders {
    /// The PGN folder.
    pub out: PathBuf,
}

impl RunFolders {
    /// The folders of a run under `dir`.
    pub fn under(dir: &Path) -> RunFolders {
        RunFolders {
            out: dir.join("out"),
        }
    }
}

/// The event's configuration for the recorder.
pub fn event_config(scenario: &Scenario) -> EventConfig {
    EventConfig {
        event: format!("Simulated event, seed {}", scenario.seed),
        time_control: Some(TIME_CONTROL.to_string()),
        boards: scenario
            .boards
            .iter()
            .map(|b| BoardConfig {
                number: b.number,
                source: BoardSource::Port(port_of(b.number)),
                kind: b.kind,
                leds: crate::board::leds::LedMode::Off,
                white: Player::named(&format!("White {}", b.number)),
                black: Player::named(&format!("Black {}", b.number)),
            })
            .collect(),
        ..EventConfig::default()
    }
}

/// What a run leaves for the verdict.
pub struct Finished {
    /// The boards, with what their hands played.
    pub(super) boards: Vec<SimulatedBoard>,
    /// Simulated time at the end.
    pub end_ms: Millis,
    /// Things that went wrong in the run itself (the recorder would not start, say).
    pub failures: Vec<String>,
    /// The feed of the last run of the recorder, as the spectators saw it at the end.
    pub feed: Arc<Feed>,
}

/// Plays `scenario` against the real recorder writing into `folders`.
pub fn play(scenario: &Scenario, folders: &RunFolders) -> Finished {
    let written = Arc::new(Notify::new());
    let mut boards: Vec<SimulatedBoard> = scenario
        .boards
        .iter()
        .map(|plan| SimulatedBoard::new(plan, later_games(scenario, plan.number), &written))
        .collect();
    let index: BTreeMap<u32, usize> = boards
        .iter()
        .enumerate()
        .map(|(i, b)| (b.plan.number, i))
        .collect();
    let mut schedule = happenings(&scenario.faults);
    schedule.extend(arbiter_results(&boards));
    for round in &scenario.rounds {
        schedule.push((round.opens_ms, Happening::NextRound(round.number)));
    }
    schedule.sort_by_key(|(t, _)| *t);
    let mut schedule: VecDeque<(Millis, Happening)> = schedule.into();
    let last_action = boards
        .iter()
        .filter_map(|b| b.actions.back().map(|a| a.t_ms))
        .max()
        .unwrap_or(0);
    let last_fault = schedule.back().map_or(0, |(t, _)| *t);
    let end_ms = last_action.max(last_fault) + SETTLE_MS;
    let mut round = 1;
    let mut failures = Vec::new();
    let mut feed = Arc::new(Feed::new());
    let start = |now: Millis, round: u32, feed: &Arc<Feed>, boards: &[SimulatedBoard]| {
        let cables = boards.iter().map(|b| (b.plan.number, &b.cable));
        let options = recorder_options(&folders.out, Arc::clone(feed), cables);
        let config = round_config(scenario, round);
        Incarnation::start(now, scenario.seed ^ now, config, options)
    };
    let mut recorder = match start(0, round, &feed, &boards) {
        Ok(r) => Some(r),
        Err(e) => {
            failures.push(e);
            None
        }
    };
    let mut now: Millis = 0;
    let mut stuck = 0u32;
    loop {
        for board in &mut boards {
            board.step(now);
        }
        while schedule.front().is_some_and(|(t, _)| *t <= now) {
            let Some((_, happening)) = schedule.pop_front() else {
                break;
            };
            let board = |n: u32| index.get(&n).copied();
            match happening {
                Happening::Plug(n, plugged) => {
                    if let Some(i) = board(n) {
                        boards[i].plug(now, plugged);
                    }
                }
                Happening::Power(n, on) => {
                    if let Some(i) = board(n) {
                        boards[i].device.power(now, on);
                    }
                }
                Happening::AnswerDelay(n, delay) => {
                    if let Some(i) = board(n) {
                        boards[i].answer_delay_ms = delay;
                    }
                }
                Happening::Noise(n, until, lost, garbled) => {
                    if let Some(i) = board(n) {
                        boards[i].noise = Some((until, lost, garbled));
                    }
                }
                Happening::ArbiterResult(r, n, result) => {
                    let request = ArbiterRequest {
                        who: "simulated arbiter".to_string(),
                        board: n,
                        action: ArbiterAction::SetResult {
                            result: result.clone(),
                            reason: ARBITER_REASON.to_string(),
                        },
                        key: Some(if r == 1 {
                            format!("result-{n}")
                        } else {
                            format!("result-{r}-{n}")
                        }),
                    };
                    match &recorder {
                        Some(r) => {
                            if let Err(e) = r.arbiter(request) {
                                failures.push(format!(
                                    "at {now} ms the recorder refused board {n}'s result: {e}"
                                ));
                            }
                        }
                        // The desk is down with the recorder: the arbiter tries again.
                        None => {
                            let again = (now + 5_000, Happening::ArbiterResult(r, n, result));
                            let at = schedule.partition_point(|(t, _)| *t <= again.0);
                            schedule.insert(at, again);
                        }
                    }
                }
                Happening::Kill => {
                    if let Some(r) = recorder.take() {
                        r.kill();
                    }
                }
                Happening::Restart => {
                    if recorder.is_none() {
                        feed = Arc::new(Feed::new());
                        match start(now, round, &feed, &boards) {
                            Ok(r) => recorder = Some(r),
                            Err(e) => failures.push(format!("at {now} ms: {e}")),
                        }
                    }
                }
                Happening::NextRound(next) => {
                    // The arbiter enters the round's results before opening the next.
                    let waiting = schedule
                        .iter()
                        .any(|(_, h)| matches!(h, Happening::ArbiterResult(r, ..) if *r < next));
                    if waiting {
                        let again = (now + 5_000, Happening::NextRound(next));
                        let at = schedule.partition_point(|(t, _)| *t <= again.0);
                        schedule.insert(at, again);
                        continue;
                    }
                    // The round that ended lets go of the journal before the next starts, as
                    // the desk's "Start round N" does; a recorder that is down opens the new
                    // round when it starts again.
                    round = next;
                    for board in &mut boards {
                        board.device.clock_set(now);
                    }
                    if let Some(r) = recorder.take() {
                        r.shut_down();
                        match start(now, round, &feed, &boards) {
                            Ok(r) => recorder = Some(r),
                            Err(e) => failures.push(format!("at {now} ms: {e}")),
                        }
                    }
                }
            }
        }
        if now >= end_ms {
            break;
        }
        let next = boards
            .iter()
            .filter_map(SimulatedBoard::next_ms)
            .chain(schedule.front().map(|(t, _)| *t))
            .min()
            .unwrap_or(end_ms)
            .min(end_ms)
            .max(now);
        let reached = match &mut recorder {
            Some(r) => r.run_until(next, &written).max(now),
            None => next,
        };
        if reached == now {
            stuck += 1;
            if stuck > 100_000 {
                failures.push(format!(
                    "the simulation made no progress at {now} ms (a board or the recorder \
                     keeps asking for the same instant)"
                ));
                break;
            }
        } else {
            stuck = 0;
        }
        now = reached;
    }
    if let Some(r) = recorder.take() {
        r.shut_down();
    }
    Finished {
        boards,
        end_ms,
        failures,
        feed,
    }
}
