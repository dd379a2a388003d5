//! A second, independent model of human hands and sensor boards, to cross-check the
//! act-of-moving machine on hands it was not tuned for.
//!
//! [`simulate`] takes a game (start position and moves in UCI), a seed and a [`Roughness`],
//! and makes two people play it on a sensor board:
//!
//! - the **hands** (submodule `hands`) move one piece at a time with one hand: captures with
//!   the victim taken off first, the capturer lifted first, or the capturer put down on top of
//!   the victim; castling king first, rook first, or king lifted, rook moved, king placed; en
//!   passant with the victim taken before, between or after; promotions in four ways
//!   (including the pawn put on the last rank and swapped a few hundred ms later); slides
//!   across the squares in between, and pieces set down on a square without being let go
//!   before going on; adjustments (own or opponent's piece, sometimes in the opponent's time);
//!   hesitations (a piece lifted, put back, another moved: 4.3); knocked-over neighbours,
//!   which may fall on an empty square, restored before the move, before the press or after
//!   it; forgotten, late and early clock presses; blitz replies that start while the
//!   opponent's hand is still on the clock, and (rarely) before his piece is even released;
//! - the **sensor** (submodule `sensor`) reports what stands on the squares: a USB board
//!   reports every change within a few ms in order; a scanning board samples each square once
//!   per scan of 100–500 ms, so short events are missed, placements can come before the lift
//!   that preceded them, and updates arrive in scan order. Off-centre pieces flicker; updates
//!   are rarely lost. The host's driver can be added ([`IndependentGame::verified`]): it
//!   asks for a full board dump after each clock press and after a quiet spell, as the
//!   real link does, which brings lost updates back.
//!
//! Timings are calibrated on the real DGT capture `fixtures/real-dgt/johan.*` (a 5+5 game): a
//! lift and its placement are usually within the same clock second and the press follows
//! within the next; placements before their lift (`c6=p c7-`), captures where the target square
//! changes straight from victim to capturer (`c5- e3=b`), victims taken first (`f5- e4- f5=P`),
//! slides (`a8- d8=r d8- e8=r`) and king-first castling all occur in it.
//!
//! Everything is deterministic for a seed. The output carries the truth: the moves actually
//! played, the irregularities done on purpose (with the article a Laws-following recorder
//! should flag) and, per ply, how the hands made the move. [`crosscheck`] runs the output
//! through [`crate::act::Machine`] and judges the record.

pub mod crosscheck;
mod hands;
mod sensor;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{Board, CastlingMode, Chess, Color, Position};

use crate::board::{Millis, Observation, ObservationKind, Snapshot};

/// How careful the players are and what board they play on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Roughness {
    /// Careful players with time to think, on a USB board that reports every change within a
    /// few ms, in order.
    Calm,
    /// Fast (blitz) players with clumsy hands, on a board that scans its squares slowly
    /// (100–500 ms per scan), and rarely loses an update.
    Rough,
}

impl Roughness {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Roughness::Calm => "calm",
            Roughness::Rough => "rough",
        }
    }
}

/// Something irregular the hands did on purpose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Irregularity {
    /// The ply being played when it happened (1 = White's first move).
    pub ply: u32,
    /// When it happened (true time, before any sensor delay).
    pub t_ms: Millis,
    /// The FIDE article it concerns, e.g. "4.3.1", "4.4.2", "7.4.1", "4.2.1", "6.2.1".
    pub article: &'static str,
    /// True when a recorder following the Laws (as read in `laws-for-recorders.md`) should
    /// raise it for the arbiter: a touch-move or castling-order violation (4.3, 4.4.2). False
    /// for things it may log or ignore, or cannot tell from a sensor board: an adjustment, a
    /// forgotten press, a knocked piece set back (in the opponent's time it looks exactly
    /// like the opponent lifting it).
    pub should_flag: bool,
    /// What happened, for a human.
    pub what: String,
    /// Squares involved, in algebraic form.
    pub squares: Vec<String>,
}

/// How one ply was played by the hands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deed {
    /// The ply (1 = White's first move).
    pub ply: u32,
    /// The move in UCI.
    pub uci: String,
    /// First touch of the board by the mover on this ply (true time).
    pub start_ms: Millis,
    /// When the piece that made the move was released.
    pub release_ms: Millis,
    /// When the mover's hand was done: the press, or the last restoring touch.
    pub end_ms: Millis,
    /// How, in a few words (techniques, touches, press).
    pub how: String,
}

/// What the sensor of a simulated game is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SensorKind {
    /// Every change reported within a few ms, in order.
    Usb,
    /// Each square sampled once per scan.
    Scanning {
        /// Mean duration of one scan of the 64 squares.
        period_ms: Millis,
        /// True when the scan runs a1..h8, false for a8..h1.
        from_a1: bool,
    },
    /// A board that samples every square at once each scan and sends whole frames
    /// (Millennium, Certabo, Sentio, Chessnut), at its kind's scan period; its host reads
    /// an emptied square before a placement of the same frame.
    Frames {
        /// The kind of board.
        board: crate::board::kind::BoardKind,
    },
    /// A board of another kind that samples its squares one by one as a DGT board does and
    /// reports each change (Pegasus), at its kind's scan period, in DGT's order.
    Fields {
        /// The kind of board.
        board: crate::board::kind::BoardKind,
    },
}

impl SensorKind {
    /// The kind of board, when it is not DGT.
    pub fn board(self) -> Option<crate::board::kind::BoardKind> {
        match self {
            SensorKind::Frames { board } | SensorKind::Fields { board } => Some(board),
            SensorKind::Usb | SensorKind::Scanning { .. } => None,
        }
    }
}

/// A game played by the independent hands on a simulated sensor board.
#[derive(Debug, Clone)]
pub struct IndependentGame {
    /// The `[FEN]` the game starts from, if not the standard start.
    pub start_fen: Option<String>,
    /// True for a Chess960 game.
    pub chess960: bool,
    /// What the board reported, in the order received: a snapshot of the start position at
    /// t = 0, then square changes and clock presses.
    pub observations: Vec<Observation>,
    /// What really happened on the squares and the clock, at the true times, without sensor
    /// artefacts (no slide transits, no flicker, nothing lost): the ground truth the
    /// observations are a view of.
    pub physical: Vec<Observation>,
    /// The moves actually played, in UCI (king-to-target castling in standard games,
    /// king-takes-rook in Chess960).
    pub moves_uci: Vec<String>,
    /// The irregular things done on purpose.
    pub irregularities: Vec<Irregularity>,
    /// How each ply was played.
    pub deeds: Vec<Deed>,
    /// The board's sensor.
    pub sensor: SensorKind,
    /// Square updates the board lost (never reported).
    pub dropped_updates: u32,
    /// Those updates, as they would have been reported.
    pub lost_updates: Vec<Observation>,
}

impl IndependentGame {
    /// The game as the host receives it when its driver verifies the board, as the real
    /// link does (`crate::driver::verify`): a full board dump after each clock press and
    /// once the square updates have stopped for a while, showing every change the board
    /// sampled, lost updates included.
    pub fn verified(mut self) -> IndependentGame {
        let start = match self.observations.first().map(|o| &o.kind) {
            Some(ObservationKind::Snapshot(s)) => s.board.clone(),
            _ => return self,
        };
        self.observations =
            sensor::with_verification_dumps(&self.observations, &self.lost_updates, &start);
        if self.sensor.board().is_some_and(|b| !b.identifies_pieces()) {
            // The dumps of a board that senses occupancy only show no pieces either; the
            // start position (t = 0) is the arbiter's, as on every board.
            for obs in self.observations.iter_mut().filter(|o| o.t_ms > 0) {
                if let ObservationKind::Snapshot(snapshot) = &mut obs.kind {
                    *snapshot = snapshot.occupancy_only();
                }
            }
        }
        self
    }
}

/// Why a game could not be simulated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The start FEN is unreadable or not a legal position.
    #[error("bad start position {0:?}: {1}")]
    StartPosition(String, String),
    /// A move is not legal where it is played.
    #[error("move {ply} ({uci}) is not legal: {why}")]
    IllegalMove {
        /// Its ply.
        ply: u32,
        /// The move.
        uci: String,
        /// Why.
        why: String,
    },
    /// The hand model produced something physically impossible (a bug of this model).
    #[error("physically impossible at ply {ply}, t = {t_ms} ms: {why}")]
    Impossible {
        /// The ply.
        ply: u32,
        /// When.
        t_ms: Millis,
        /// What.
        why: String,
    },
}

/// The start position of a game.
pub fn start_position(start_fen: Option<&str>, chess960: bool) -> Result<Chess, SimError> {
    let mode = castling_mode(chess960);
    match start_fen {
        None => Ok(Chess::default()),
        Some(fen) => fen
            .parse::<Fen>()
            .map_err(|e| e.to_string())
            .and_then(|f| f.into_position::<Chess>(mode).map_err(|e| e.to_string()))
            .map_err(|e| SimError::StartPosition(fen.to_string(), e)),
    }
}

fn castling_mode(chess960: bool) -> CastlingMode {
    if chess960 {
        CastlingMode::Chess960
    } else {
        CastlingMode::Standard
    }
}

/// A seed for game number `index` of a run seeded with `seed` (splitmix64 of both).
pub fn game_seed(seed: u64, index: usize) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add((index as u64).wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(0x2545_F491_4F6C_DD1D);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Plays a game with the independent hands on a simulated board.
///
/// `moves_uci` are the game's moves in the UCI of its castling mode (as
/// [`crate::sim::hands::pgn_games::read_games`] gives them). The same arguments always give
/// the same result.
pub fn simulate(
    start_fen: Option<&str>,
    chess960: bool,
    moves_uci: &[String],
    seed: u64,
    roughness: Roughness,
) -> Result<IndependentGame, SimError> {
    simulate_on(start_fen, chess960, moves_uci, seed, roughness, None)
}

/// [`simulate`] on a board of another kind than DGT (`board`), which sends whole frames, or
/// reports field changes as DGT's do (Pegasus), at its own scan period; `None` plays on the
/// DGT board `roughness` chooses.
pub fn simulate_on(
    start_fen: Option<&str>,
    chess960: bool,
    moves_uci: &[String],
    seed: u64,
    roughness: Roughness,
    board: Option<crate::board::kind::BoardKind>,
) -> Result<IndependentGame, SimError> {
    let start = start_position(start_fen, chess960)?;
    let mode = castling_mode(chess960);
    let mut pos = start.clone();
    let mut moves = Vec::with_capacity(moves_uci.len());
    for (i, uci) in moves_uci.iter().enumerate() {
        let ply = i as u32 + 1;
        let bad = |why: String| SimError::IllegalMove {
            ply,
            uci: uci.clone(),
            why,
        };
        let m = uci
            .parse::<UciMove>()
            .map_err(|e| bad(e.to_string()))?
            .to_move(&pos)
            .map_err(|e| bad(e.to_string()))?;
        pos.play_unchecked(m);
        moves.push(m);
    }

    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let params = hands::Params::of(roughness);
    let played = hands::play(&mut rng, &params, &start, &moves, mode)?;

    let mut happenings = played.happenings;
    happenings.sort_by_key(|h| (h.t, h.seq));
    check_physics(&happenings, start.board(), pos.board())?;

    let (sensor, drop_p) = match board {
        Some(board) if board.sends_snapshots() => (SensorKind::Frames { board }, 0.0),
        Some(board) => (
            SensorKind::Fields { board },
            sensor::drop_probability(roughness),
        ),
        None => (
            sensor::choose(&mut rng, roughness),
            sensor::drop_probability(roughness),
        ),
    };
    let mut reported = sensor::report(&mut rng, sensor, &happenings, start.board(), drop_p);
    if board.is_some_and(|b| !b.identifies_pieces()) {
        for obs in &mut reported.observations {
            if let ObservationKind::Placed(_, piece) = &mut obs.kind {
                *piece = None;
            }
        }
    }

    let snapshot = Observation {
        t_ms: 0,
        kind: ObservationKind::Snapshot(Snapshot {
            board: start.board().clone(),
            identifies_pieces: true,
        }),
    };
    let mut observations = Vec::with_capacity(reported.observations.len() + 1);
    observations.push(snapshot.clone());
    observations.extend(reported.observations);

    let mut physical = vec![snapshot];
    physical.extend(happenings.iter().filter(|h| !h.ghost).map(|h| Observation {
        t_ms: h.t,
        kind: h.what.kind(),
    }));

    Ok(IndependentGame {
        start_fen: start_fen.map(str::to_string),
        chess960,
        observations,
        physical,
        moves_uci: moves_uci.to_vec(),
        irregularities: played.irregularities,
        deeds: played.deeds,
        sensor,
        dropped_updates: reported.lost.len() as u32,
        lost_updates: reported.lost,
    })
}

/// Replays the happenings in time order and checks every one is possible on the board as it
/// stands (sensor artefacts included), and that the game's final position stands at the end.
fn check_physics(
    happenings: &[hands::Happening],
    start: &Board,
    end: &Board,
) -> Result<(), SimError> {
    let mut seen = start.clone();
    let mut real = start.clone();
    for h in happenings {
        let hands::What::Square(sq, to) = h.what else {
            continue;
        };
        let fail = |why: String| SimError::Impossible {
            ply: h.ply,
            t_ms: h.t,
            why,
        };
        match to {
            None => {
                if seen.remove_piece_at(sq).is_none() {
                    return Err(fail(format!("{sq} emptied while empty")));
                }
                if !h.ghost && real.remove_piece_at(sq).is_none() {
                    return Err(fail(format!("{sq} lifted while empty")));
                }
            }
            Some(piece) => {
                if h.ghost {
                    if seen.piece_at(sq).is_some() {
                        return Err(fail(format!("{sq} seen twice occupied")));
                    }
                } else if let Some(under) = real.piece_at(sq)
                    && under.color == piece.color
                {
                    return Err(fail(format!("{piece:?} put on its own {under:?} at {sq}")));
                }
                seen.set_piece_at(sq, piece);
                if !h.ghost {
                    real.set_piece_at(sq, piece);
                }
            }
        }
    }
    if &seen != end || &real != end {
        return Err(SimError::Impossible {
            ply: 0,
            t_ms: happenings.last().map_or(0, |h| h.t),
            why: format!("the board ends as {seen} (really {real}), not as {end}"),
        });
    }
    Ok(())
}

/// Applies a stream of observations to the snapshot it starts with, the way a board picture
/// would be kept: the board the stream ends on (`None` if it has no snapshot).
pub fn replay_board(observations: &[Observation]) -> Option<Board> {
    let mut board: Option<Board> = None;
    for obs in observations {
        match (&obs.kind, board.as_mut()) {
            (ObservationKind::Snapshot(s), _) => board = Some(s.board.clone()),
            (ObservationKind::Emptied(sq), Some(b)) => {
                b.discard_piece_at(*sq);
            }
            (ObservationKind::Placed(sq, Some(p)), Some(b)) => b.set_piece_at(*sq, *p),
            _ => {}
        }
    }
    board
}

/// The side that moves at `ply` (1-based) from a start position.
pub fn side_at(start: &Chess, ply: u32) -> Color {
    if ply % 2 == 1 {
        start.turn()
    } else {
        !start.turn()
    }
}
