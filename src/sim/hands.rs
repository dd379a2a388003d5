//! A seeded model of real hands on a sensor board.
//!
//! [`simulate_game`] turns a game (start position and moves) into the timestamped
//! [`Observation`] stream a DGT-style board would report while two people play it: pieces
//! are lifted and placed one hand at a time, captures remove the victim before or after the
//! capturer moves, castling is done king first, rook first or king-off-rook-across-king-on,
//! pieces slide over intermediate squares, players adjust, hesitate, knock pieces over and
//! restore them, forget the clock, and in blitz answer before the opponent's hand has left
//! the clock. The physical actions then pass through a model of the board's sensors
//! ([`SensorModel`]): squares are sampled one after another in a scan of about 200–250 ms,
//! so a placement can be reported before the lift it follows, a capture can show the target
//! square change directly from victim to capturer, and a quick touch can go unseen.
//!
//! Every deliberate irregularity (a touch-move violation, a completed illegal move, a
//! dropped update…) is listed in [`SimulatedGame::injected`] with the alert, if any, that a
//! machine following the FIDE Laws is expected to raise, so a benchmark can tell an expected
//! alert from a silent error. The simulation is deterministic for a given seed.
//!
//! One file for one concept, the hand model's interface: the simulated game, its
//! irregularities and the entry points the submodules serve.

mod choreography;
pub mod pgn_games;
pub mod score;
mod sensor;

use std::fmt;
use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use shakmaty::uci::UciMove;
use shakmaty::{Board, Position, Square};

use crate::board::{Millis, Observation, ObservationKind, Snapshot};
use crate::rules::{Budget, Game};

/// How much trouble the simulated hands and board make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Noise {
    /// Careful players and an ideal board: every change reported at once and in order, no
    /// slides, touches, knocks, drops or forgotten presses. Captures, castling (king first
    /// or king off), promotions and en passant still vary in the order of their actions.
    Clean,
    /// Real players on a real DGT board: scan effects, slides, occasional adjustments,
    /// hesitations, rook-first castling, knocked pieces, forgotten presses, rare dropped
    /// updates; blitz in some games.
    Realistic,
    /// Everything at many times the realistic rate, plus completed illegal moves, clock
    /// presses without a move, unexchanged promotions, two-handed moves, touches in the
    /// opponent's time, slow (Bluetooth) scans and frequent dropped updates.
    Hostile,
}

impl Noise {
    /// The lower-case name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Noise::Clean => "clean",
            Noise::Realistic => "realistic",
            Noise::Hostile => "hostile",
        }
    }
}

impl fmt::Display for Noise {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A noise level name that is not `clean`, `realistic` or `hostile`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown noise level {0:?}: use clean, realistic or hostile")]
pub struct UnknownNoise(pub String);

impl FromStr for Noise {
    type Err = UnknownNoise;

    fn from_str(s: &str) -> Result<Noise, UnknownNoise> {
        match s.trim().to_ascii_lowercase().as_str() {
            "clean" => Ok(Noise::Clean),
            "realistic" => Ok(Noise::Realistic),
            "hostile" => Ok(Noise::Hostile),
            _ => Err(UnknownNoise(s.to_string())),
        }
    }
}

/// How the board's sensors report what the hands do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SensorModel {
    /// Time for one full scan of the 64 squares (DGT USB: about 200–250 ms; Bluetooth
    /// boards about twice that). Zero means an ideal board that reports every change at
    /// once.
    pub scan_period_ms: f64,
    /// Delay from a sample (or a clock press) to the host receiving it.
    pub latency_ms: f64,
    /// Probability that one field update is lost on its way to the host.
    pub drop_probability: f64,
    /// The board samples all 64 squares at the same moment of each scan and sends the
    /// whole picture (Millennium, Certabo, Chessnut): the host sees every change of a scan
    /// at once, an emptied square before a placement, and a frame damaged on the line is
    /// replaced by the next (no change is lost, and no dump is needed).
    pub whole_frame: bool,
    /// The board senses only whether a square is occupied (Sentio, Pegasus): a piece that
    /// takes another's place between two samples of its square (a capture whose victim went
    /// first, a piece swapped for another) changes nothing it can report.
    pub occupancy_only: bool,
}

impl SensorModel {
    /// The sensors of a board of `kind` (unchanged for DGT): its scan period, and the time
    /// from a scan to the host having read it, which for Certabo includes the frames its
    /// vote waits for. A board that reports field changes one by one as DGT's do (Pegasus)
    /// keeps the DGT sensor at its own scan period; an ideal board (no scan) stays ideal.
    pub fn on_board(mut self, kind: crate::board::kind::BoardKind) -> SensorModel {
        if kind.sends_snapshots() {
            self.scan_period_ms = kind.scan_period_ms() as f64;
            self.latency_ms += kind.report_delay_ms().saturating_sub(kind.scan_period_ms()) as f64
                + kind.frame_transfer_ms() as f64;
            self.drop_probability = 0.0;
            self.whole_frame = true;
        } else if kind != crate::board::kind::BoardKind::Dgt && self.scan_period_ms > 0.0 {
            self.scan_period_ms = kind.scan_period_ms() as f64;
        }
        self.occupancy_only = !kind.identifies_pieces();
        self
    }
}

/// Relative weights of the ways to perform one kind of move.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderWeights {
    /// Weight of each way, in the order documented on the field that holds them.
    pub weights: Vec<f64>,
}

impl OrderWeights {
    fn of(weights: &[f64]) -> OrderWeights {
        OrderWeights {
            weights: weights.to_vec(),
        }
    }

    /// Picks an index with probability proportional to its weight (0 if all are zero).
    pub fn pick(&self, rng: &mut impl Rng) -> usize {
        let total: f64 = self.weights.iter().filter(|w| **w > 0.0).sum();
        if total <= 0.0 {
            return 0;
        }
        let mut x = rng.gen_range(0.0..total);
        for (i, w) in self.weights.iter().enumerate() {
            if *w <= 0.0 {
                continue;
            }
            if x < *w {
                return i;
            }
            x -= w;
        }
        self.weights.len().saturating_sub(1)
    }
}

/// The parameters of the simulated players and board. Probabilities are per ply unless
/// said otherwise; times are medians of log-normal distributions in milliseconds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandModel {
    /// Blitz: short thinking, fast hands, premove-like replies.
    pub blitz: bool,
    /// Median thinking time before the first lift of a move.
    pub think_median_ms: f64,
    /// Probability of a reply started 60–300 ms after the opponent's move (blitz), possibly
    /// before the opponent's clock press is reported.
    pub premove_probability: f64,
    /// Multiplier on every hand gesture (1 = an unhurried adult hand; blitz about 0.6).
    pub hand_speed: f64,
    /// Median delay from the release of the last piece of a move to the clock press.
    pub press_delay_ms: f64,
    /// Capture performed victim first (the rest: capturer lifted first).
    pub victim_first_probability: f64,
    /// Castling: weights of king first, rook first (a 4.4.2 irregularity), king off the
    /// board then rook across then king on.
    pub castling_order: OrderWeights,
    /// Promotion: weights of pawn lifted then new piece placed, pawn moved onto the square
    /// then exchanged, new piece placed on the square while the pawn still stands, new
    /// piece dropped on the square while the pawn is held in the hand.
    pub promotion_order: OrderWeights,
    /// En passant: weights of the victim removed first, between the capturer's lift and
    /// placement, last.
    pub en_passant_order: OrderWeights,
    /// Probability that a move of a sliding piece (or a pawn's double step) slides over the
    /// squares between.
    pub slide_probability: f64,
    /// Probability that a slide rests on one intermediate square for longer than a scan.
    pub slide_pause_probability: f64,
    /// Probability of a quick adjustment (own piece lifted briefly and put back) before the
    /// move.
    pub adjustment_probability: f64,
    /// Probability of a hesitation: an own piece other than the one moved is lifted, held,
    /// put back, and another piece is moved (4.3.1).
    pub hesitation_probability: f64,
    /// Probability that the player lifts an opponent's piece, puts it back and then does
    /// not capture it (4.3.2).
    pub opponent_touch_probability: f64,
    /// Probability that, after pressing, the player lifts one of his pieces in the
    /// opponent's time and puts it back.
    pub off_turn_touch_probability: f64,
    /// Probability of knocking a neighbouring piece over while moving.
    pub knock_probability: f64,
    /// Probability that a knocked piece is restored only after the clock press.
    pub late_restore_probability: f64,
    /// Probability of forgetting to press the clock (6.2.1.2).
    pub forget_press_probability: f64,
    /// Probability of pressing the clock before moving (7.5.3); the arbiter then gives the
    /// turn back.
    pub press_without_move_probability: f64,
    /// Probability of first placing the moved piece on a square it cannot legally reach.
    pub illegal_move_probability: f64,
    /// Share of those illegal moves completed with a clock press (7.5.1) rather than
    /// taken back before pressing.
    pub illegal_completed_share: f64,
    /// Probability, per promotion to a queen, of pressing the clock with the pawn still on
    /// the last rank (7.5.2); the arbiter then puts a queen there.
    pub unexchanged_promotion_probability: f64,
    /// Probability that a capture or castling is made with two hands (7.5.4).
    pub two_hands_probability: f64,
    /// The board's sensors.
    pub sensor: SensorModel,
}

impl HandModel {
    /// Draws a model for a noise level: the preset's rates, with per-game variation of
    /// speed (blitz or not), thinking time, habits and scan timing.
    pub fn for_noise(noise: Noise, rng: &mut impl Rng) -> HandModel {
        match noise {
            Noise::Clean => HandModel::clean(rng),
            Noise::Realistic => HandModel::realistic(rng),
            Noise::Hostile => HandModel::hostile(rng),
        }
    }

    fn base(rng: &mut impl Rng, blitz: bool) -> HandModel {
        HandModel {
            blitz,
            think_median_ms: if blitz {
                rng.gen_range(1_500.0..4_000.0)
            } else {
                rng.gen_range(8_000.0..40_000.0)
            },
            premove_probability: 0.0,
            hand_speed: if blitz {
                rng.gen_range(0.55..0.75)
            } else {
                rng.gen_range(0.85..1.2)
            },
            press_delay_ms: if blitz {
                rng.gen_range(180.0..320.0)
            } else {
                rng.gen_range(400.0..1_200.0)
            },
            victim_first_probability: rng.gen_range(0.2..0.8),
            castling_order: OrderWeights::of(&[0.85, 0.0, 0.15]),
            promotion_order: OrderWeights::of(&[1.0, 1.0, 1.0, 1.0]),
            en_passant_order: OrderWeights::of(&[1.0, 1.0, 1.0]),
            slide_probability: 0.0,
            slide_pause_probability: 0.0,
            adjustment_probability: 0.0,
            hesitation_probability: 0.0,
            opponent_touch_probability: 0.0,
            off_turn_touch_probability: 0.0,
            knock_probability: 0.0,
            late_restore_probability: 0.0,
            forget_press_probability: 0.0,
            press_without_move_probability: 0.0,
            illegal_move_probability: 0.0,
            illegal_completed_share: 0.0,
            unexchanged_promotion_probability: 0.0,
            two_hands_probability: 0.0,
            sensor: SensorModel {
                scan_period_ms: 0.0,
                latency_ms: 3.0,
                drop_probability: 0.0,
                whole_frame: false,
                occupancy_only: false,
            },
        }
    }

    /// Careful players on an ideal board (see [`Noise::Clean`]).
    pub fn clean(rng: &mut impl Rng) -> HandModel {
        let blitz = rng.gen_bool(0.3);
        HandModel::base(rng, blitz)
    }

    /// Real players on a real DGT board (see [`Noise::Realistic`]).
    pub fn realistic(rng: &mut impl Rng) -> HandModel {
        let blitz = rng.gen_bool(0.4);
        let mut m = HandModel::base(rng, blitz);
        m.premove_probability = if blitz { 0.12 } else { 0.01 };
        m.castling_order = OrderWeights::of(&[0.8, 0.04, 0.16]);
        m.slide_probability = 0.2;
        m.slide_pause_probability = 0.2;
        m.adjustment_probability = 0.03;
        m.hesitation_probability = 0.004;
        m.opponent_touch_probability = 0.0;
        m.knock_probability = 0.003;
        m.late_restore_probability = 0.0;
        m.forget_press_probability = 0.01;
        m.sensor = SensorModel {
            scan_period_ms: rng.gen_range(200.0..250.0),
            latency_ms: rng.gen_range(2.0..8.0),
            drop_probability: 0.000_05,
            whole_frame: false,
            occupancy_only: false,
        };
        m
    }

    /// Players and a board that do everything wrong, often (see [`Noise::Hostile`]).
    pub fn hostile(rng: &mut impl Rng) -> HandModel {
        let blitz = rng.gen_bool(0.6);
        let mut m = HandModel::base(rng, blitz);
        m.premove_probability = if blitz { 0.3 } else { 0.05 };
        m.castling_order = OrderWeights::of(&[0.5, 0.2, 0.3]);
        m.slide_probability = 0.5;
        m.slide_pause_probability = 0.4;
        m.adjustment_probability = 0.1;
        m.hesitation_probability = 0.03;
        m.opponent_touch_probability = 0.01;
        m.off_turn_touch_probability = 0.02;
        m.knock_probability = 0.03;
        m.late_restore_probability = 0.3;
        m.forget_press_probability = 0.05;
        m.press_without_move_probability = 0.005;
        m.illegal_move_probability = 0.01;
        m.illegal_completed_share = 0.5;
        m.unexchanged_promotion_probability = 0.2;
        m.two_hands_probability = 0.02;
        let bluetooth = rng.gen_bool(0.3);
        m.sensor = SensorModel {
            scan_period_ms: if bluetooth {
                rng.gen_range(400.0..500.0)
            } else {
                rng.gen_range(200.0..250.0)
            },
            latency_ms: rng.gen_range(2.0..20.0),
            drop_probability: 0.002,
            whole_frame: false,
            occupancy_only: false,
        };
        m
    }
}

/// What a machine following the Laws is expected to say about an injected irregularity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "expect", content = "article", rename_all = "snake_case")]
pub enum ExpectedAlert {
    /// Nothing to report (for example an own piece touched and then moved).
    None,
    /// An alert is reasonable but not required (the sensors may not have seen it, or the
    /// Laws leave it to the arbiter).
    Allowed,
    /// An alert citing this article (or a sub-article of it) is required.
    Required(String),
}

/// The kinds of deliberate irregularity the simulator injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum IrregularityKind {
    /// Castling with the rook lifted before the king (4.4.2).
    RookFirstCastling,
    /// An own piece lifted briefly and put back (an adjustment the board cannot hear).
    Adjustment,
    /// An own piece lifted, held and put back, then another piece moved (4.3.1).
    Hesitation,
    /// An opponent's piece lifted and put back, then not captured (4.3.2).
    OpponentTouch,
    /// A player lifted and replaced one of his pieces in the opponent's time.
    OffTurnTouch,
    /// A piece knocked off its square (7.4/7.6) and later restored.
    KnockedPiece,
    /// A field update lost between board and host.
    DroppedUpdate,
    /// The player did not press the clock after moving (6.2.1.2).
    ForgottenPress,
    /// The clock pressed without a move (7.5.3); the arbiter gave the turn back.
    PressWithoutMove,
    /// An illegal move made and taken back before the clock press.
    IllegalMoveUndone,
    /// An illegal move completed by a clock press (7.5.1), then corrected.
    IllegalMoveCompleted,
    /// A pawn left on the last rank at the clock press (7.5.2), replaced by a queen.
    UnexchangedPromotion,
    /// Two pieces lifted with two hands at once (7.5.4).
    TwoHands,
}

/// One irregularity the simulator put into the stream on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InjectedIrregularity {
    /// What was done.
    pub kind: IrregularityKind,
    /// The ply being played when it happened (1 = the first move of the game).
    pub ply: u32,
    /// Physical time it began (the observations reporting it come later).
    pub t_ms: Millis,
    /// Squares involved, in algebraic form.
    pub squares: Vec<String>,
    /// What the act-of-moving machine is expected to report.
    pub expected: ExpectedAlert,
}

/// A game as a simulated board reported it.
#[derive(Debug, Clone)]
pub struct SimulatedGame {
    /// The observation stream, in game coordinates, starting with a snapshot of the start
    /// position at time 0.
    pub observations: Vec<Observation>,
    /// What the hands did, at the moment they did it: every lift, put and clock press, from
    /// a snapshot of the start position at time 0, with no scan, delay or loss. A virtual
    /// board of another kind than DGT plays this and models its own sensing; the DGT sensor
    /// model that made [`SimulatedGame::observations`] (whose lost updates a later dump
    /// puts right) is not its hardware.
    pub physical: Vec<Observation>,
    /// The moves actually simulated, in UCI of the game's castling mode (a prefix of the
    /// input when an input move was not legal).
    pub moves_uci: Vec<String>,
    /// The result signalled by placing both kings on the centre squares after the last
    /// move, when the game's result was not reached on the board.
    pub result_signal: Option<String>,
    /// Every irregularity injected on purpose.
    pub injected: Vec<InjectedIrregularity>,
    /// The result a correct machine ends the game with: the signalled result, or the
    /// checkmate, stalemate or insufficient-material result reached on the board.
    pub expected_result: Option<String>,
    /// Physical time at which the hand action of each ply began (index 0 = ply 1),
    /// including any hesitation or illegal attempt that preceded the move.
    pub ply_start_ms: Vec<Millis>,
    /// The model that produced the stream.
    pub model: HandModel,
    /// The start position's FEN, if not the standard one.
    pub start_fen: Option<String>,
    /// True for Chess960 castling.
    pub chess960: bool,
    /// Why the simulation stopped early (an invalid FEN or an illegal move in the input).
    pub error: Option<String>,
}

/// Simulates a game with a hand model drawn from `noise` and `seed`.
///
/// `start_fen` is the start position (None = standard); `chess960` selects Chess960
/// castling. `moves_uci` are the moves in UCI (standard `e1g1` or Chess960 `e1h1` castling
/// both accepted). `result` is the game's PGN result; when it is decisive or drawn and the
/// board does not show it, the stream ends with the kings-in-the-centre result signal.
/// An invalid FEN gives an empty stream; an illegal move ends the simulation before it;
/// both are explained in [`SimulatedGame::error`].
pub fn simulate_game(
    start_fen: Option<&str>,
    chess960: bool,
    moves_uci: &[String],
    result: Option<&str>,
    noise: Noise,
    seed: u64,
) -> SimulatedGame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let model = HandModel::for_noise(noise, &mut rng);
    simulate_with_model(start_fen, chess960, moves_uci, result, &model, &mut rng)
}

/// Simulates a game with a given hand model; `rng` drives every random choice.
pub fn simulate_with_model(
    start_fen: Option<&str>,
    chess960: bool,
    moves_uci: &[String],
    result: Option<&str>,
    model: &HandModel,
    rng: &mut ChaCha8Rng,
) -> SimulatedGame {
    let mut sim = SimulatedGame {
        observations: Vec::new(),
        physical: Vec::new(),
        moves_uci: Vec::new(),
        result_signal: None,
        injected: Vec::new(),
        expected_result: None,
        ply_start_ms: Vec::new(),
        model: model.clone(),
        start_fen: start_fen.map(str::to_string),
        chess960,
        error: None,
    };
    let mut game = match start_fen {
        None => Game::standard(),
        Some(fen) => match Game::from_fen(fen, chess960) {
            Ok(g) => g,
            Err(e) => {
                sim.error = Some(e.to_string());
                return sim;
            }
        },
    };
    let start_board = game.start().board().clone();
    let mut hands = choreography::Performer::new(model, rng, start_board.clone());
    let mut on_board = None;
    for uci in moves_uci {
        let pos = game.position().clone();
        let mv = match uci
            .parse::<UciMove>()
            .ok()
            .and_then(|u| u.to_move(&pos).ok())
        {
            Some(mv) => mv,
            None => {
                sim.error = Some(format!(
                    "move {} ({uci}) is not legal in {}",
                    game.plies() + 1,
                    game.fen()
                ));
                break;
            }
        };
        sim.ply_start_ms
            .push(hands.play_move(&pos, mv, game.plies() as u32 + 1));
        match game.play(mv) {
            Ok(played) => sim.moves_uci.push(played.uci.clone()),
            Err(e) => {
                sim.error = Some(e.to_string());
                break;
            }
        }
        // The game is over when the board reaches an automatic end (5.1.1, 5.2.1, 5.2.2,
        // 9.6): moves a source file has after it are not part of the game.
        if let Some(end) = game.automatic_end(&Budget::deterministic()) {
            on_board = Some(end.result.pgn_token());
            break;
        }
    }
    let declared = result.filter(|r| matches!(*r, "1-0" | "0-1" | "1/2-1/2"));
    match (on_board, declared) {
        (Some(r), _) => sim.expected_result = Some(r.to_string()),
        (None, Some(r)) if sim.error.is_none() => {
            hands.signal_result(r);
            sim.result_signal = Some(r.to_string());
            sim.expected_result = Some(r.to_string());
        }
        _ => {}
    }
    let (events, mut injected) = hands.finish();
    let start_snapshot = Observation {
        t_ms: 0,
        kind: ObservationKind::Snapshot(Snapshot {
            board: start_board.clone(),
            identifies_pieces: true,
        }),
    };
    // The two hands and the clock act on their own timelines; the board sees them in time.
    let mut actions: Vec<&choreography::PhysEvent> = events.iter().collect();
    actions.sort_by(|a, b| a.t.total_cmp(&b.t));
    sim.physical = std::iter::once(start_snapshot.clone())
        .chain(actions.iter().map(|action| action.observation()))
        .collect();
    let mut observations = vec![start_snapshot];
    sensor::report(
        &model.sensor,
        &start_board,
        &events,
        rng,
        &sim.ply_start_ms,
        &mut observations,
        &mut injected,
    );
    injected.sort_by_key(|i| i.t_ms);
    sim.observations = observations;
    sim.injected = injected;
    sim
}

/// Replays observations on a plain physical board (what stands on each square), the way
/// the simplest tracker would. Used to check that a stream is consistent.
pub fn replay_physical(observations: &[Observation]) -> Board {
    let mut board = Board::empty();
    for obs in observations {
        apply_physical(&mut board, obs);
    }
    board
}

/// Applies one observation to a plain physical board.
pub fn apply_physical(board: &mut Board, obs: &Observation) {
    match &obs.kind {
        ObservationKind::Snapshot(s) => *board = s.board.clone(),
        ObservationKind::Emptied(sq) => {
            board.discard_piece_at(*sq);
        }
        ObservationKind::Placed(sq, Some(p)) => {
            board.discard_piece_at(*sq);
            board.set_piece_at(*sq, *p);
        }
        ObservationKind::Placed(..)
        | ObservationKind::ClockPressed { .. }
        | ObservationKind::ClockTimes(_)
        | ObservationKind::MagicPiece(..) => {}
    }
}

/// The centre squares a result signal puts the kings on: light d5/e4 for 1-0, dark d4/e5
/// for 0-1, one of each for a draw.
pub fn signal_squares(result: &str) -> Option<[Vec<Square>; 2]> {
    let light = vec![Square::D5, Square::E4];
    let dark = vec![Square::D4, Square::E5];
    match result {
        "1-0" => Some([light.clone(), light]),
        "0-1" => Some([dark.clone(), dark]),
        "1/2-1/2" => Some([light, dark]),
        _ => None,
    }
}
