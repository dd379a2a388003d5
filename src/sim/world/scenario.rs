//! What happens at a simulated event, all drawn from one seed: its boards and their kinds, the
//! game each board plays and the hands that play it, and the faults.
//!
//! A scenario is a pure function of its seed, its [`Shape`] and what a shrink kept of it
//! ([`Scenario::keep`]), so [`Scenario::command`] replays it exactly.

use std::fmt::Write as _;
use std::sync::OnceLock;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::board::kind::BoardKind;
use shakmaty::Board;

use crate::board::{Millis, Observation, ObservationKind};
use crate::sim::after_game::{SetBack, board_after, post_mortem, set_back};
use crate::sim::hands::pgn_games::{PgnGame, read_games};
use crate::sim::hands::{ExpectedAlert, HandModel, Noise, SensorModel, simulate_with_model};
use crate::sim::virtual_board::timeline::Pace;

/// The games boards play: real games of TWIC and of the lichess database (the fixtures of
/// `touchmove bench recognition`), 1,548 in all.
const GAME_FILES: [&[u8]; 2] = [
    include_bytes!("../../../fixtures/pgn/twic1599_1000k.pgn"),
    include_bytes!("../../../fixtures/pgn/lichess_db_1000k.pgn"),
];

/// The games of [`GAME_FILES`] that start from the standard position and were read whole.
pub fn library() -> &'static [PgnGame] {
    static LIBRARY: OnceLock<Vec<PgnGame>> = OnceLock::new();
    LIBRARY.get_or_init(|| {
        GAME_FILES
            .iter()
            .filter_map(|file| read_games(file).ok())
            .flatten()
            .filter(|g| g.fen.is_none() && !g.chess960 && g.error.is_none())
            .filter(|g| g.moves_uci.len() >= 10)
            .collect()
    })
}

/// The hands that play a board's game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Hands {
    /// Careful players: one piece at a time, no touches, slides or knocks.
    Careful,
    /// Real players: slides, adjustments, hesitations, knocked pieces, forgotten presses,
    /// blitz in some games.
    Realistic,
    /// Everything at many times the realistic rate, with completed illegal moves, presses
    /// without a move, unexchanged promotions and two-handed moves.
    Hostile,
}

impl Hands {
    fn noise(self) -> Noise {
        match self {
            Hands::Careful => Noise::Clean,
            Hands::Realistic => Noise::Realistic,
            Hands::Hostile => Noise::Hostile,
        }
    }
}

/// What the players do once their game is over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AfterGame {
    /// They leave the pieces as they stand.
    Leave,
    /// They set the pieces back on their start squares.
    SetBack,
    /// They set the pieces back, go through the game's opening again with the clock
    /// stopped, and set them back once more.
    PostMortem,
}

/// What a board's hands did and what a recorder should make of it.
#[derive(Debug, Clone)]
pub struct PlayedGame {
    /// The moves played, in UCI.
    pub moves_uci: Vec<String>,
    /// The result a recorder should end the game with (mate or stalemate on the board, or the
    /// result the players signalled), if any.
    pub expected_result: Option<String>,
    /// What the hands did on the board and the clock, at the true times (game time: 0 is the
    /// board set up in the start position).
    pub physical: Vec<Observation>,
    /// The irregularities the hands committed that call for, or allow, a proposed penalty
    /// (7.5): their ply and article.
    pub penalties_earned: Vec<(u32, String)>,
    /// When each ply's hand action began, game time (index 0 = ply 1).
    pub ply_start_ms: Vec<Millis>,
    /// The result the players signalled with the kings, if they did.
    pub result_signal: Option<String>,
    /// When the game was over (its last move, or the signal), game time.
    pub over_ms: Millis,
}

/// One board of the event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BoardPlan {
    /// Its number (the `K` of `game-K.pgn`).
    pub number: u32,
    /// Its kind.
    pub kind: BoardKind,
    /// The game it plays: an index into [`library`].
    pub game: usize,
    /// Who plays it.
    pub hands: Hands,
    /// The seed of the hands (and of the board's own noise).
    pub seed: u64,
    /// When the game begins, ms after the event began (the board stands in the start
    /// position from the start of the event).
    pub starts_ms: Millis,
    /// Plies of the game played (fewer than the game has after a shrink).
    pub plies: usize,
    /// What the players do after the game.
    pub after: AfterGame,
    /// A move every this many ms (see [`super::table`]): careful hands at that fixed pace,
    /// other hands sped up from their own pace (about a move every
    /// [`HANDS_OWN_MOVE_MS`]) as `touchmove sim --speed` speeds them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pace_ms: Option<Millis>,
}

impl BoardPlan {
    /// The game as the hands play it.
    pub fn play(&self) -> PlayedGame {
        let game = &library()[self.game];
        let moves: Vec<String> = game.moves_uci.iter().take(self.plies).cloned().collect();
        if let Some(pace_ms) = self.pace_ms
            && self.hands == Hands::Careful
        {
            return paced_game(&moves, pace_ms);
        }
        let whole = moves.len() == game.moves_uci.len();
        // Every game ends with a result before its pieces are set back: a game cut short
        // (or one its source leaves unfinished) ends in a draw the players agree and signal.
        let result = game
            .result
            .as_deref()
            .filter(|r| whole && matches!(*r, "1-0" | "0-1" | "1/2-1/2"))
            .unwrap_or("1/2-1/2");
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut model = HandModel::for_noise(self.hands.noise(), &mut rng);
        // The hands act on the board itself: what its sensors make of it is the virtual
        // board's part. A table cell's hands are those `touchmove sim --hands … --seed …`
        // draws (with the sensors it models for a DGT board, which it then leaves out).
        if self.pace_ms.is_none() {
            model.sensor = SensorModel {
                scan_period_ms: 0.0,
                latency_ms: 0.0,
                drop_probability: 0.0,
                whole_frame: false,
                occupancy_only: false,
            };
        }
        let sim = simulate_with_model(None, false, &moves, Some(result), &model, &mut rng);
        let mut physical = if self.pace_ms.is_some() {
            sim.physical
        } else {
            sim.observations
        };
        let over_ms = physical.last().map_or(0, |o| o.t_ms);
        if self.after != AfterGame::Leave {
            // The players of a board that cannot show the kings' signal tell the arbiter the
            // result, who enters it, before they set the pieces back.
            let told = if self.kind.identifies_pieces() {
                0
            } else {
                ARBITER_RESULT_AFTER_MS
            };
            after_the_game(&mut physical, &sim.moves_uci, self.after, told, &mut rng);
        }
        let penalties_earned = sim
            .injected
            .iter()
            .filter_map(|i| match &i.expected {
                ExpectedAlert::Required(article) if article.starts_with("7.5") => {
                    Some((i.ply, article.clone()))
                }
                ExpectedAlert::Allowed => Some((i.ply, "7.5".to_string())),
                _ => None,
            })
            .collect();
        let played = PlayedGame {
            moves_uci: sim.moves_uci,
            expected_result: sim.expected_result,
            physical,
            penalties_earned,
            ply_start_ms: sim.ply_start_ms,
            result_signal: sim.result_signal,
            over_ms,
        };
        match self.pace_ms {
            Some(pace_ms) => played.sped_up(pace_ms, HANDS_OWN_MOVE_MS),
            None => played,
        }
    }
}

/// About how long the hands' model takes from one move to the next: `touchmove sim`'s
/// speed 1, which issue 57 reads as a move every 2 s (speed 3 as one every 0.67 s).
pub const HANDS_OWN_MOVE_MS: Millis = 2_000;

impl PlayedGame {
    /// The game with every time after the set-up scaled by `pace_ms / own_ms`: the same
    /// actions, as `touchmove sim --speed` plays them.
    fn sped_up(mut self, pace_ms: Millis, own_ms: Millis) -> PlayedGame {
        let scale = |t: Millis| t * pace_ms / own_ms.max(1);
        for o in &mut self.physical {
            o.t_ms = scale(o.t_ms);
        }
        for t in &mut self.ply_start_ms {
            *t = scale(*t);
        }
        self.over_ms = scale(self.over_ms);
        self
    }
}

/// How long one careful hand takes from one action of a move to the next (a lift, a
/// placement, the clock): quick, and still one hand's (7.5.4 suspects two hands below 150 ms).
const HAND_STEP_MS: Millis = 200;

/// `moves` played by one careful hand at a fixed pace, a normal move every `pace_ms` (its
/// lift, placement and clock press [`HAND_STEP_MS`] apart after the thinking), from the start
/// position standing at time 0.
fn paced_game(moves: &[String], pace_ms: Millis) -> PlayedGame {
    use crate::rules::{Budget, Game};
    let mut game = Game::standard();
    let mut legal = Vec::new();
    let mut expected_result = None;
    for uci in moves {
        let Some(m) = uci
            .parse::<shakmaty::uci::UciMove>()
            .ok()
            .and_then(|u| u.to_move(game.position()).ok())
        else {
            break;
        };
        if game.play(m).is_err() {
            break;
        }
        legal.push(m);
        // As the hands' games: the game is over at an automatic end (5.1.1, 5.2.1, 5.2.2).
        if let Some(end) = game.automatic_end(&Budget::deterministic()) {
            expected_result = Some(end.result.pgn_token().to_string());
            break;
        }
    }
    let pace = Pace {
        think_ms: pace_ms.saturating_sub(3 * HAND_STEP_MS),
        step_ms: HAND_STEP_MS,
    };
    let mut physical = vec![Observation {
        t_ms: 0,
        kind: ObservationKind::Snapshot(crate::board::Snapshot {
            board: Board::new(),
            identifies_pieces: true,
        }),
    }];
    physical.extend(crate::sim::virtual_board::timeline::lift_place(
        &shakmaty::Chess::default(),
        &legal,
        pace,
    ));
    let mut ply_start_ms = Vec::new();
    let mut after_press = true;
    for o in &physical[1..] {
        if after_press {
            ply_start_ms.push(o.t_ms);
        }
        after_press = matches!(o.kind, ObservationKind::ClockPressed { .. });
    }
    PlayedGame {
        moves_uci: moves[..legal.len()].to_vec(),
        expected_result,
        over_ms: physical.last().map_or(0, |o| o.t_ms),
        physical,
        penalties_earned: Vec::new(),
        ply_start_ms,
        result_signal: None,
    }
}

/// Appends to `physical` what the players do after their game (`moves`): the pieces set back,
/// and for a post-mortem the opening played again and the pieces set back once more.
fn after_the_game(
    physical: &mut Vec<Observation>,
    moves: &[String],
    after: AfterGame,
    not_before_ms: Millis,
    rng: &mut ChaCha8Rng,
) {
    let ways = [SetBack::PieceByPiece, SetBack::Sweep];
    let set_back_from_here = |physical: &mut Vec<Observation>, rng: &mut ChaCha8Rng| {
        let start = match physical.first().map(|o| &o.kind) {
            Some(ObservationKind::Snapshot(s)) => s.board.clone(),
            _ => Board::new(),
        };
        let standing = board_after(&start, physical);
        let from =
            physical.last().map_or(0, |o| o.t_ms) + not_before_ms + rng.gen_range(5_000..40_000);
        let how = *ways.choose(rng).unwrap_or(&SetBack::PieceByPiece);
        physical.extend(set_back(&standing, how, from, rng));
    };
    set_back_from_here(physical, rng);
    if after == AfterGame::PostMortem {
        let opening: Vec<String> = moves.iter().take(rng.gen_range(4..16)).cloned().collect();
        let from = physical.last().map_or(0, |o| o.t_ms) + rng.gen_range(3_000..20_000);
        physical.extend(post_mortem(&opening, Pace::default(), from));
        set_back_from_here(physical, rng);
    }
}

/// A fault, at a time of the event (ms after it began).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "fault", rename_all = "snake_case")]
pub enum Fault {
    /// A board's cable pulled out and put back: the host's port vanishes, and a board
    /// powered by its cable goes off.
    Unplug {
        /// The board.
        board: u32,
        /// When.
        at_ms: Millis,
        /// For how long.
        for_ms: Millis,
    },
    /// A board switched off and on again, its cable in.
    PowerCycle {
        /// The board.
        board: u32,
        /// When.
        at_ms: Millis,
        /// For how long.
        for_ms: Millis,
    },
    /// From `at_ms` on, a board answers the host's requests late (a slow handshake).
    LateAnswers {
        /// The board.
        board: u32,
        /// When.
        at_ms: Millis,
        /// By how much.
        delay_ms: Millis,
    },
    /// Bytes lost and garbled on a board's line for a while.
    NoisyLine {
        /// The board.
        board: u32,
        /// When.
        at_ms: Millis,
        /// For how long.
        for_ms: Millis,
        /// Chance per chunk that it is lost, per thousand.
        lost_per_mille: u32,
        /// Chance per chunk that one of its bytes is garbled, per thousand.
        garbled_per_mille: u32,
    },
    /// The recorder killed (`kill -9`: everything in memory gone) and started again from its
    /// journal `down_ms` later.
    RecorderKill {
        /// When.
        at_ms: Millis,
        /// How long it stays down.
        down_ms: Millis,
    },
}

impl Fault {
    /// When it happens.
    pub fn at_ms(&self) -> Millis {
        match self {
            Fault::Unplug { at_ms, .. }
            | Fault::PowerCycle { at_ms, .. }
            | Fault::LateAnswers { at_ms, .. }
            | Fault::NoisyLine { at_ms, .. }
            | Fault::RecorderKill { at_ms, .. } => *at_ms,
        }
    }

    /// The board it strikes, if one.
    pub fn board(&self) -> Option<u32> {
        match self {
            Fault::Unplug { board, .. }
            | Fault::PowerCycle { board, .. }
            | Fault::LateAnswers { board, .. }
            | Fault::NoisyLine { board, .. } => Some(*board),
            Fault::RecorderKill { .. } => None,
        }
    }
}

/// The kinds of fault a scenario draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum FaultKind {
    /// [`Fault::Unplug`].
    Unplug,
    /// [`Fault::PowerCycle`].
    PowerCycle,
    /// [`Fault::LateAnswers`].
    LateAnswers,
    /// [`Fault::NoisyLine`].
    NoisyLine,
    /// [`Fault::RecorderKill`].
    RecorderKill,
}

impl FaultKind {
    /// Every kind of fault.
    pub const ALL: [FaultKind; 5] = [
        FaultKind::Unplug,
        FaultKind::PowerCycle,
        FaultKind::LateAnswers,
        FaultKind::NoisyLine,
        FaultKind::RecorderKill,
    ];
}

/// The shape of the scenarios drawn: what the seed chooses among.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Shape {
    /// Boards at the event.
    pub boards: usize,
    /// The kinds the boards are drawn from.
    pub kinds: Vec<BoardKind>,
    /// The hands the boards' players are drawn from.
    pub hands: Vec<Hands>,
    /// The faults drawn from.
    pub fault_kinds: Vec<FaultKind>,
    /// Most faults in one scenario.
    pub faults: usize,
    /// Fewest and most plies of a game (whole games when the game is shorter).
    pub plies: (usize, usize),
    /// Rounds of the event: one has no pairings; more take their players from a TRF
    /// ([`super::rounds`]), the boards set up again between rounds.
    pub rounds: u32,
}

impl Default for Shape {
    /// Eight boards of every kind, every hands, up to four faults of every kind, whole
    /// games of up to 120 plies.
    fn default() -> Shape {
        Shape {
            boards: 8,
            kinds: BoardKind::ALL.to_vec(),
            hands: vec![Hands::Careful, Hands::Realistic, Hands::Hostile],
            fault_kinds: FaultKind::ALL.to_vec(),
            faults: 4,
            plies: (20, 120),
            rounds: 1,
        }
    }
}

/// A simulated event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scenario {
    /// The seed it was drawn from.
    pub seed: u64,
    /// What it was drawn from.
    pub shape: Shape,
    /// Its boards in the first round.
    pub boards: Vec<BoardPlan>,
    /// The rounds after the first, if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rounds: Vec<super::rounds::Round>,
    /// Its faults, in time order.
    pub faults: Vec<Fault>,
    /// What a shrink kept: the board numbers and fault indices of the drawn scenario, and the
    /// plies of each game (`None`: everything).
    pub kept: Kept,
    /// The cell of the kind-by-fault table it is, if one (it is then not drawn from its seed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<super::table::Cell>,
}

/// What a shrink kept of a drawn scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Kept {
    /// Board numbers kept.
    pub boards: Option<Vec<u32>>,
    /// Indices of the faults kept.
    pub faults: Option<Vec<usize>>,
    /// Plies kept of every game.
    pub plies: Option<usize>,
}

/// How long after a game the arbiter enters its result from the scoresheets (the players
/// of a board that senses only occupancy wait for it before they set the pieces back: the
/// board cannot show which king stands where).
pub const ARBITER_RESULT_AFTER_MS: Millis = 20_000;

/// When the games begin: the boards stand in the start position from the event's start, and
/// the recorder has read them (a DGT board's move log takes seconds on its line) before the
/// round starts, as at a real event.
const ROUND_STARTS_MS: std::ops::Range<Millis> = 15_000..20_000;

/// A board of the event drawn from `rng`: its game, plies, kind, hands and seed, and what
/// its players do after the game (the first round's boards draw when their game begins
/// between the seed and the after-game, as they always have).
pub(super) fn draw_board(number: u32, shape: &Shape, rng: &mut ChaCha8Rng) -> BoardPlan {
    let game = rng.gen_range(0..library().len());
    let (low, high) = shape.plies;
    let plies = rng.gen_range(low..=high.max(low));
    let kind = *shape.kinds.choose(rng).unwrap_or(&BoardKind::Dgt);
    let hands = *shape.hands.choose(rng).unwrap_or(&Hands::Careful);
    let seed = rng.r#gen();
    BoardPlan {
        number,
        kind,
        game,
        hands,
        seed,
        starts_ms: 0,
        plies,
        after: AfterGame::Leave,
        pace_ms: None,
    }
}

/// Up to `shape.faults` faults of `shape`'s kinds drawn from `rng`, at times in `during`.
pub(super) fn draw_faults(
    shape: &Shape,
    during: std::ops::Range<Millis>,
    rng: &mut ChaCha8Rng,
) -> Vec<Fault> {
    let count = if shape.fault_kinds.is_empty() {
        0
    } else {
        rng.gen_range(0..=shape.faults)
    };
    (0..count)
        .map(|_| {
            let kind = *shape.fault_kinds.choose(rng).unwrap_or(&FaultKind::Unplug);
            let board = rng.gen_range(1..=shape.boards.max(1) as u32);
            let at_ms = rng.gen_range(during.clone());
            match kind {
                FaultKind::Unplug => Fault::Unplug {
                    board,
                    at_ms,
                    for_ms: rng.gen_range(500..30_000),
                },
                FaultKind::PowerCycle => Fault::PowerCycle {
                    board,
                    at_ms,
                    for_ms: rng.gen_range(1_000..20_000),
                },
                FaultKind::LateAnswers => Fault::LateAnswers {
                    board,
                    at_ms,
                    delay_ms: rng.gen_range(200..3_000),
                },
                FaultKind::NoisyLine => Fault::NoisyLine {
                    board,
                    at_ms,
                    for_ms: rng.gen_range(1_000..20_000),
                    lost_per_mille: rng.gen_range(0..100),
                    garbled_per_mille: rng.gen_range(0..100),
                },
                FaultKind::RecorderKill => Fault::RecorderKill {
                    at_ms,
                    down_ms: rng.gen_range(100..30_000),
                },
            }
        })
        .collect()
}

impl Scenario {
    /// The scenario of `seed` in `shape`.
    pub fn draw(seed: u64, shape: &Shape) -> Scenario {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let boards: Vec<BoardPlan> = (1..=shape.boards as u32)
            .map(|number| {
                let mut plan = draw_board(number, shape, &mut rng);
                plan.starts_ms = rng.gen_range(ROUND_STARTS_MS);
                plan.after = *[AfterGame::Leave, AfterGame::SetBack, AfterGame::PostMortem]
                    .choose(&mut rng)
                    .unwrap_or(&AfterGame::Leave);
                plan
            })
            .collect();
        let ends: Vec<Millis> = boards
            .iter()
            .map(|b| b.starts_ms + b.play().physical.last().map_or(0, |o| o.t_ms))
            .collect();
        let last = ends.iter().copied().max().unwrap_or(0).max(20_000);
        let mut faults = draw_faults(shape, 5_000..last, &mut rng);
        let (rounds, later_faults) = super::rounds::draw_later_rounds(
            seed,
            shape,
            &boards,
            ends.iter().copied().max().unwrap_or(0),
        );
        faults.extend(later_faults);
        faults.sort_by_key(Fault::at_ms);
        Scenario {
            seed,
            shape: shape.clone(),
            boards,
            rounds,
            faults,
            kept: Kept::default(),
            cell: None,
        }
    }

    /// The scenario of `seed` in `shape`, of which only `kept` is played.
    pub fn draw_kept(seed: u64, shape: &Shape, kept: &Kept) -> Scenario {
        let mut scenario = Scenario::draw(seed, shape);
        if let Some(numbers) = &kept.boards {
            scenario.boards.retain(|b| numbers.contains(&b.number));
            for round in &mut scenario.rounds {
                round.boards.retain(|b| numbers.contains(&b.number));
            }
            scenario
                .faults
                .retain(|f| f.board().is_none_or(|b| numbers.contains(&b)));
        }
        if let Some(indices) = &kept.faults {
            let drawn = Scenario::draw(seed, shape).faults;
            scenario.faults = indices
                .iter()
                .filter_map(|&i| drawn.get(i).cloned())
                .collect();
            if let Some(numbers) = &kept.boards {
                scenario
                    .faults
                    .retain(|f| f.board().is_none_or(|b| numbers.contains(&b)));
            }
        }
        if let Some(plies) = kept.plies {
            let later = scenario.rounds.iter_mut().flat_map(|r| r.boards.iter_mut());
            for board in scenario.boards.iter_mut().chain(later) {
                board.plies = board.plies.min(plies);
            }
        }
        scenario.kept = kept.clone();
        scenario
    }

    /// The command that plays this scenario again, exactly.
    pub fn command(&self) -> String {
        if let Some(cell) = &self.cell {
            return format!("touchmove simulate --table-cell {}", cell.name());
        }
        let shape = &self.shape;
        let mut text = format!(
            "touchmove simulate --seed {} --boards {} --faults {} --plies {}-{}",
            self.seed, shape.boards, shape.faults, shape.plies.0, shape.plies.1
        );
        if shape.kinds != BoardKind::ALL {
            let kinds: Vec<&str> = shape.kinds.iter().map(|k| k.name()).collect();
            let _ = write!(text, " --kinds {}", kinds.join(","));
        }
        if shape.rounds > 1 {
            let _ = write!(text, " --rounds {}", shape.rounds);
        }
        let default = Shape::default();
        if shape.hands != default.hands {
            let hands: Vec<String> = shape
                .hands
                .iter()
                .map(|h| format!("{h:?}").to_lowercase())
                .collect();
            let _ = write!(text, " --hands {}", hands.join(","));
        }
        if shape.fault_kinds != default.fault_kinds {
            let kinds: Vec<String> = shape
                .fault_kinds
                .iter()
                .map(|k| {
                    serde_json::to_value(k)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                })
                .collect();
            let _ = write!(text, " --fault-kinds {}", kinds.join(","));
        }
        let list = |items: &[String]| items.join(",");
        if let Some(boards) = &self.kept.boards {
            let boards: Vec<String> = boards.iter().map(u32::to_string).collect();
            let _ = write!(text, " --keep-boards {}", list(&boards));
        }
        if let Some(faults) = &self.kept.faults {
            let faults: Vec<String> = faults.iter().map(usize::to_string).collect();
            let faults = if faults.is_empty() {
                "none".to_string()
            } else {
                list(&faults)
            };
            let _ = write!(text, " --keep-faults {faults}");
        }
        if let Some(plies) = self.kept.plies {
            let _ = write!(text, " --keep-plies {plies}");
        }
        text
    }
}
