//! The hands: how two people move the pieces of a game, one physical change at a time.
//!
//! Each player has one hand. A hand lifts a piece (the square empties), carries it (or slides
//! it across the squares in between, which the sensors see as a trail), and releases it (the
//! square reports the piece). A hand may hold two pieces at once (the capturer and its victim,
//! the pawn and its new piece, king and rook). Captured pieces and pawns that promoted go to
//! the box; promotion pieces come from it. Pieces knocked over fall off their square, perhaps
//! onto a neighbouring empty one, and are set back by hand.
//!
//! The output is a list of [`Happening`]s at true times. Some are sensor artefacts
//! (`ghost`): a sliding piece passing a square, a piece off-centre flickering. The sensor
//! model turns the happenings into reports.
//!
//! One file for one concept, the two players' hands: lifts, carries, slides, knocks and
//! replacements share the hands' and the pieces' state.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::uci::UciMove;
use shakmaty::{Board, CastlingMode, Chess, Color, Move, Piece, Position, Role, Square, attacks};

use super::{Deed, Irregularity, Roughness, SimError};
use crate::board::{Millis, ObservationKind};

mod moves;
mod touches;

/// One physical change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum What {
    /// The square now holds this (or nothing).
    Square(Square, Option<Piece>),
    /// This player pressed the clock and it switched.
    Press(Color),
}

impl What {
    /// As an observation kind.
    pub(super) fn kind(self) -> ObservationKind {
        match self {
            What::Square(sq, None) => ObservationKind::Emptied(sq),
            What::Square(sq, Some(p)) => ObservationKind::Placed(sq, Some(p)),
            What::Press(by) => ObservationKind::ClockPressed { by },
        }
    }
}

/// A change at a true time.
#[derive(Debug, Clone, Copy)]
pub(super) struct Happening {
    /// True time.
    pub t: Millis,
    /// Order of generation (breaks ties between equal times).
    pub seq: u32,
    /// The ply being played.
    pub ply: u32,
    /// What changed.
    pub what: What,
    /// A sensor artefact, not a real change of what stands on the square.
    pub ghost: bool,
    /// Extra time a USB board takes to report it (a piece still settling).
    pub settle_ms: Millis,
}

/// What the hands did in a game.
pub(super) struct Played {
    pub happenings: Vec<Happening>,
    pub irregularities: Vec<Irregularity>,
    pub deeds: Vec<Deed>,
}

/// Probabilities and timings of the hands. Times in ms, ranges inclusive.
pub(super) struct Params {
    think_ms: (f64, f64),
    reach_ms: (u64, u64),
    travel_base_ms: u64,
    travel_per_square_ms: u64,
    travel_jitter_ms: u64,
    aside_ms: (u64, u64),
    spare_ms: (u64, u64),
    grip_ms: (u64, u64),
    press_ms: (u64, u64),
    late_press_ms: (u64, u64),
    hold_ms: (u64, u64),
    adjust_ms: (u64, u64),
    slide_p: f64,
    slide_step_ms: (u64, u64),
    /// Victim first, capturer lifted first, capturer put on top.
    capture: [f64; 3],
    /// King first, king-rook-king, rook first.
    castle: [f64; 3],
    /// Victim before, between, after.
    en_passant: [f64; 3],
    /// Pawn off then new piece, new piece first, pawn held, pawn on the last rank then swapped.
    promotion: [f64; 4],
    hesitate_p: f64,
    touch_opponent_p: f64,
    adjust_p: f64,
    adjust_off_turn_p: f64,
    knock_p: f64,
    fall_p: f64,
    forget_press_p: f64,
    late_press_p: f64,
    early_press_p: f64,
    early_reply_p: f64,
    flicker_p: f64,
    mate_press_p: f64,
    /// A carried piece touches down on another square (not released) before going on.
    touchdown_p: f64,
    touchdown_ms: (u64, u64),
    /// The reply's first touch comes before the opponent's piece is even released.
    anticipate_p: f64,
}

impl Params {
    /// The hands of a roughness level.
    pub(super) fn of(r: Roughness) -> Params {
        match r {
            Roughness::Calm => Params {
                think_ms: (1_500.0, 25_000.0),
                reach_ms: (150, 450),
                travel_base_ms: 300,
                travel_per_square_ms: 70,
                travel_jitter_ms: 450,
                aside_ms: (350, 900),
                spare_ms: (700, 2_000),
                grip_ms: (120, 350),
                press_ms: (250, 1_100),
                late_press_ms: (1_800, 5_000),
                hold_ms: (500, 2_500),
                adjust_ms: (150, 450),
                slide_p: 0.08,
                slide_step_ms: (70, 160),
                capture: [0.45, 0.30, 0.25],
                castle: [0.85, 0.12, 0.03],
                en_passant: [0.4, 0.3, 0.3],
                promotion: [0.35, 0.2, 0.25, 0.2],
                hesitate_p: 0.015,
                touch_opponent_p: 0.004,
                adjust_p: 0.02,
                adjust_off_turn_p: 0.02,
                knock_p: 0.006,
                fall_p: 0.3,
                forget_press_p: 0.01,
                late_press_p: 0.02,
                early_press_p: 0.03,
                early_reply_p: 0.0,
                flicker_p: 0.03,
                mate_press_p: 0.5,
                touchdown_p: 0.01,
                touchdown_ms: (150, 500),
                anticipate_p: 0.0,
            },
            Roughness::Rough => Params {
                think_ms: (250.0, 6_000.0),
                reach_ms: (50, 180),
                travel_base_ms: 110,
                travel_per_square_ms: 30,
                travel_jitter_ms: 200,
                aside_ms: (120, 400),
                spare_ms: (300, 900),
                grip_ms: (60, 180),
                press_ms: (60, 450),
                late_press_ms: (1_000, 3_000),
                hold_ms: (250, 1_200),
                adjust_ms: (80, 250),
                slide_p: 0.35,
                slide_step_ms: (15, 60),
                capture: [0.35, 0.25, 0.40],
                castle: [0.65, 0.20, 0.15],
                en_passant: [0.34, 0.33, 0.33],
                promotion: [0.25, 0.25, 0.25, 0.25],
                hesitate_p: 0.03,
                touch_opponent_p: 0.01,
                adjust_p: 0.04,
                adjust_off_turn_p: 0.04,
                knock_p: 0.02,
                fall_p: 0.3,
                forget_press_p: 0.02,
                late_press_p: 0.04,
                early_press_p: 0.10,
                early_reply_p: 0.15,
                flicker_p: 0.10,
                mate_press_p: 0.5,
                touchdown_p: 0.04,
                touchdown_ms: (150, 2_500),
                anticipate_p: 0.02,
            },
        }
    }
}

/// The geometry of a move: which pieces go where.
#[derive(Debug, Clone, Copy)]
enum Shape {
    Quiet {
        from: Square,
        to: Square,
        piece: Piece,
    },
    Capture {
        from: Square,
        to: Square,
        piece: Piece,
        victim: Piece,
    },
    EnPassant {
        from: Square,
        to: Square,
        victim_sq: Square,
        piece: Piece,
        victim: Piece,
    },
    Castle {
        king_from: Square,
        king_to: Square,
        rook_from: Square,
        rook_to: Square,
        king: Piece,
        rook: Piece,
    },
    Promotion {
        from: Square,
        to: Square,
        pawn: Piece,
        new: Piece,
        victim: Option<Piece>,
    },
}

impl Shape {
    fn of(pos: &Chess, m: Move) -> Option<Shape> {
        let board = pos.board();
        let color = pos.turn();
        Some(match m {
            Move::Normal {
                from,
                to,
                promotion: Some(role),
                ..
            } => Shape::Promotion {
                from,
                to,
                pawn: board.piece_at(from)?,
                new: Piece { color, role },
                victim: board.piece_at(to),
            },
            Move::Normal { from, to, .. } => {
                let piece = board.piece_at(from)?;
                match board.piece_at(to) {
                    Some(victim) => Shape::Capture {
                        from,
                        to,
                        piece,
                        victim,
                    },
                    None => Shape::Quiet { from, to, piece },
                }
            }
            Move::EnPassant { from, to } => {
                let victim_sq = Square::from_coords(to.file(), from.rank());
                Shape::EnPassant {
                    from,
                    to,
                    victim_sq,
                    piece: board.piece_at(from)?,
                    victim: board.piece_at(victim_sq)?,
                }
            }
            Move::Castle { king, rook } => {
                let side = m.castling_side()?;
                Shape::Castle {
                    king_from: king,
                    king_to: side.king_to(color),
                    rook_from: rook,
                    rook_to: side.rook_to(color),
                    king: board.piece_at(king)?,
                    rook: board.piece_at(rook)?,
                }
            }
            Move::Put { .. } => return None,
        })
    }

    /// Every square the move touches.
    fn squares(&self) -> Vec<Square> {
        match *self {
            Shape::Quiet { from, to, .. }
            | Shape::Capture { from, to, .. }
            | Shape::Promotion { from, to, .. } => vec![from, to],
            Shape::EnPassant {
                from,
                to,
                victim_sq,
                ..
            } => vec![from, to, victim_sq],
            Shape::Castle {
                king_from,
                king_to,
                rook_from,
                rook_to,
                ..
            } => vec![king_from, king_to, rook_from, rook_to],
        }
    }

    /// The square of the own piece the move starts from (the king for castling).
    fn origin(&self) -> Square {
        match *self {
            Shape::Quiet { from, .. }
            | Shape::Capture { from, .. }
            | Shape::Promotion { from, .. }
            | Shape::EnPassant { from, .. } => from,
            Shape::Castle { king_from, .. } => king_from,
        }
    }

    /// The square the move lands on (the king's for castling).
    fn landing(&self) -> Square {
        match *self {
            Shape::Quiet { to, .. }
            | Shape::Capture { to, .. }
            | Shape::Promotion { to, .. }
            | Shape::EnPassant { to, .. } => to,
            Shape::Castle { king_to, .. } => king_to,
        }
    }

    /// The opponent square the move captures on, if any.
    fn victim_square(&self) -> Option<Square> {
        match *self {
            Shape::Capture { to, .. } => Some(to),
            Shape::Promotion {
                to,
                victim: Some(_),
                ..
            } => Some(to),
            Shape::EnPassant { victim_sq, .. } => Some(victim_sq),
            _ => None,
        }
    }
}

/// A piece knocked off its square, perhaps lying on a neighbour.
#[derive(Debug, Clone, Copy)]
struct Knock {
    square: Square,
    piece: Piece,
    fell_on: Option<Square>,
    t: Millis,
}

/// When the move was made and when the hand was free.
struct Made {
    /// The change that made the move (4.7).
    release: Millis,
    /// Index in `out` of the last square change of the move.
    last: usize,
    /// The hand is free (for the clock).
    hand_free: Millis,
}

struct Hands<'a> {
    rng: &'a mut ChaCha8Rng,
    p: &'a Params,
    out: Vec<Happening>,
    seq: u32,
    ply: u32,
    board: Board,
    /// What the acting hand holds.
    hand: Vec<Piece>,
    /// Whose clock runs.
    running: Color,
    irregularities: Vec<Irregularity>,
    fault: Option<(Millis, String)>,
    /// Empty squares the moving piece could legally go to (for touch-downs).
    targets: Vec<Square>,
    /// No slides or touch-downs on this ply (the other hand is still on the board).
    steady: bool,
}

/// Plays `moves` from `start`.
pub(super) fn play(
    rng: &mut ChaCha8Rng,
    p: &Params,
    start: &Chess,
    moves: &[Move],
    mode: CastlingMode,
) -> Result<Played, SimError> {
    let mut h = Hands {
        rng,
        p,
        out: Vec::new(),
        seq: 0,
        ply: 0,
        board: start.board().clone(),
        hand: Vec::new(),
        running: start.turn(),
        irregularities: Vec::new(),
        fault: None,
        targets: Vec::new(),
        steady: false,
    };
    let mut deeds = Vec::with_capacity(moves.len());
    let mut pos = start.clone();
    // The arbiter starts the clock; the first mover thinks from there.
    let mut t_ready: Millis = h.ms((800, 2_500));
    // The previous mover's press, when the reply may start against it (blitz).
    let mut prev_press: Option<Millis> = None;
    // When the previous mover's hand left the board.
    let mut prev_hand_off: Millis = 0;
    // The previous ply started before the one before it was over (no chains of those).
    let mut prev_hurried = false;
    // The previous ply's press, effective or not.
    let mut last_press: Option<Millis> = None;
    for (i, &m) in moves.iter().enumerate() {
        // Squares the previous ply touched, and when its piece was released.
        let prev_squares: Vec<Square> = h
            .out
            .iter()
            .filter(|e| e.ply == h.ply)
            .filter_map(|e| match e.what {
                What::Square(sq, _) => Some(sq),
                What::Press(_) => None,
            })
            .collect();
        let prev_release = deeds.last().map(|d: &Deed| (d.start_ms, d.release_ms));
        h.ply = i as u32 + 1;
        let side = pos.turn();
        let uci = UciMove::from_move(m, mode).to_string();
        let Some(shape) = Shape::of(&pos, m) else {
            return Err(SimError::IllegalMove {
                ply: h.ply,
                uci,
                why: "not a board move".into(),
            });
        };
        let mut how: Vec<String> = Vec::new();

        h.targets = pos
            .legal_moves()
            .iter()
            .filter(|x| x.from() == Some(shape.origin()) && !x.is_capture())
            .map(|x| x.to())
            .filter(|sq| h.board.piece_at(*sq).is_none())
            .collect();
        h.steady = false;
        let anticipated = match prev_release {
            Some(times)
                if !prev_hurried
                    && h.chance(p.anticipate_p)
                    && shape.squares().iter().all(|sq| !prev_squares.contains(sq)) =>
            {
                Some(times)
            }
            _ => None,
        };
        let early = match prev_press {
            Some(press) if !prev_hurried && anticipated.is_none() && h.chance(p.early_reply_p) => {
                Some(press)
            }
            _ => None,
        };
        let mut t = match (anticipated, early) {
            (Some((prev_start, release)), _) => {
                // The lift (after the reach) comes up to 100 ms before the opponent's release.
                let before = h.ms((0, 100));
                let at = release
                    .saturating_sub(before + p.reach_ms.1)
                    .max(prev_start + 100);
                h.steady = true;
                how.push(format!(
                    "anticipated: lifted his piece {before} ms or more before the opponent released his"
                ));
                at
            }
            (None, Some(press)) => {
                let at = (press as i64 + h.range_i(-250, 150)).max(prev_hand_off as i64 + 120);
                let at = at.max(0) as Millis;
                how.push(format!(
                    "blitz reply: first touch {:+} ms from the opponent's press",
                    at as i64 - press as i64
                ));
                at
            }
            (None, None) => t_ready + h.think(),
        };

        // The opponent adjusts one of his pieces while this player thinks (4.2.1: only the
        // player having the move may adjust).
        if early.is_none()
            && !h.steady
            && i > 0
            && t > t_ready + 2_000
            && h.chance(p.adjust_off_turn_p)
        {
            let at = h.ms((t_ready + 300, t - 1_500));
            h.adjust(at, !side, &shape, true, &mut how);
        }

        let first_touch = t;
        if !h.steady {
            if h.chance(p.adjust_p) {
                t = h.adjust(t, side, &shape, false, &mut how);
            }
            if h.chance(p.hesitate_p) {
                t = h.hesitate(t, &pos, &shape, &mut how);
            } else if h.chance(p.touch_opponent_p) {
                t = h.touch_opponent(t, &pos, &shape, &mut how);
            }
            if h.chance(p.knock_p / 2.0) {
                t = h.knock_before(t, &shape, &mut how);
            }
        }

        let made = h.make(t, &shape, &mut how);
        let mut hand_free = made.hand_free;

        // Knocking a neighbour as the hand withdraws.
        let mut knocked_after = None;
        if !h.steady && h.chance(p.knock_p / 2.0) {
            knocked_after = h.knock_after(made.release, &shape);
        }
        let mut restore_after_press = None;
        if let Some(k) = knocked_after {
            if h.chance(0.5) {
                let at = hand_free.max(k.t + 150) + h.ms((200, 700));
                hand_free = h.restore(k, at) + 80;
                h.note_knock(k, false, &mut how);
            } else {
                restore_after_press = Some(k);
            }
        }

        // The clock.
        let mut after = pos.clone();
        after.play_unchecked(m);
        let last = i + 1 == moves.len();
        let game_over = after.is_checkmate() || after.is_stalemate();
        let press_at: Option<Millis> = if last && game_over && !h.chance(p.mate_press_p) {
            how.push("no press: the move ended the game".into());
            None
        } else if h.chance(p.forget_press_p) {
            how.push("press forgotten".into());
            h.irregular(
                made.release,
                "6.2.1",
                false,
                "the player forgot to press the clock".into(),
                vec![],
            );
            None
        } else if knocked_after.is_none() && h.chance(p.early_press_p) {
            let at = made.release + h.ms((5, 40));
            let settle = (at - made.release) + h.ms((15, 100));
            h.out[made.last].settle_ms = settle;
            how.push(format!(
                "press {} ms after the release, the last square still settling ({settle} ms)",
                at - made.release
            ));
            Some(at)
        } else if h.chance(p.late_press_p) {
            let at = hand_free + h.ms(p.late_press_ms);
            how.push(format!(
                "late press, {} ms after the release",
                at - made.release
            ));
            Some(at)
        } else {
            let at = hand_free + h.ms(p.press_ms);
            how.push(format!("press +{} ms", at - made.release));
            Some(at)
        };
        // A hurried reply is not pressed before the opponent's press.
        let press_at = match (press_at, last_press) {
            (Some(at), Some(before)) => Some(at.max(before + 60)),
            (at, _) => at,
        };
        if let Some(at) = press_at {
            if h.running == side {
                h.emit(at, What::Press(side), false);
                h.running = !side;
            } else {
                how.push("(the press changed nothing: this player's clock was not running)".into());
            }
        }
        let mut end = press_at.unwrap_or(hand_free).max(hand_free);
        if let Some(k) = restore_after_press {
            let at = end.max(k.t + 150) + h.ms((300, 900));
            end = h.restore(k, at);
            h.note_knock(k, true, &mut how);
        }

        let start = h
            .out
            .iter()
            .filter(|e| e.ply == h.ply && !matches!(e.what, What::Press(_)))
            .map(|e| e.t)
            .min()
            .unwrap_or(first_touch)
            .min(first_touch);
        deeds.push(Deed {
            ply: h.ply,
            uci,
            start_ms: start,
            release_ms: made.release,
            end_ms: end,
            how: how.join("; "),
        });

        // The next player.
        match press_at {
            Some(at) if restore_after_press.is_none() => {
                prev_press = Some(at);
                t_ready = at;
            }
            Some(_) => {
                prev_press = None;
                t_ready = end + h.ms((200, 600));
            }
            None => {
                prev_press = None;
                t_ready = end.max(made.release + h.ms((500, 1_500)));
            }
        }
        prev_hand_off = hand_free.max(made.release + 40);
        if restore_after_press.is_some() {
            prev_hand_off = end;
        }
        prev_hurried = anticipated.is_some() || early.is_some();
        last_press = press_at;
        // The next player starts thinking once the board is quiet.
        let quiet = h.out.iter().map(|e| e.t).max().unwrap_or(0);
        t_ready = t_ready.max(quiet + 100);

        pos = after;
        if let Some((t, why)) = h.fault.take() {
            return Err(SimError::Impossible {
                ply: h.ply,
                t_ms: t,
                why,
            });
        }
        if &h.board != pos.board() {
            return Err(SimError::Impossible {
                ply: h.ply,
                t_ms: end,
                why: format!("the hands left {} instead of {}", h.board, pos.board()),
            });
        }
        if !h.hand.is_empty() {
            return Err(SimError::Impossible {
                ply: h.ply,
                t_ms: end,
                why: format!("the hand still holds {:?}", h.hand),
            });
        }
    }
    Ok(Played {
        happenings: h.out,
        irregularities: h.irregularities,
        deeds,
    })
}

impl Hands<'_> {
    // ----- randomness -----

    fn ms(&mut self, (lo, hi): (u64, u64)) -> Millis {
        if hi <= lo {
            lo
        } else {
            self.rng.gen_range(lo..=hi)
        }
    }

    fn range_i(&mut self, lo: i64, hi: i64) -> i64 {
        self.rng.gen_range(lo..=hi)
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.gen_bool(p.min(1.0))
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> Option<T> {
        if items.is_empty() {
            None
        } else {
            Some(items[self.rng.gen_range(0..items.len())])
        }
    }

    /// Index chosen by weights.
    fn weighted<const N: usize>(&mut self, w: [f64; N]) -> usize {
        let total: f64 = w.iter().sum();
        let mut x = self.rng.gen_range(0.0..total);
        for (i, wi) in w.iter().enumerate() {
            if x < *wi {
                return i;
            }
            x -= wi;
        }
        w.len() - 1
    }

    fn think(&mut self) -> Millis {
        let (lo, hi) = self.p.think_ms;
        let x: f64 = self.rng.gen_range(lo.ln()..hi.ln());
        x.exp() as Millis
    }

    fn reach(&mut self) -> Millis {
        self.ms(self.p.reach_ms)
    }

    fn travel(&mut self, from: Square, to: Square) -> Millis {
        let d = u64::from(from.distance(to));
        self.p.travel_base_ms
            + self.p.travel_per_square_ms * d
            + self.ms((0, self.p.travel_jitter_ms))
    }

    // ----- physical acts -----

    fn fail(&mut self, t: Millis, why: String) {
        if self.fault.is_none() {
            self.fault = Some((t, why));
        }
    }

    fn emit(&mut self, t: Millis, what: What, ghost: bool) -> usize {
        self.seq += 1;
        self.out.push(Happening {
            t,
            seq: self.seq,
            ply: self.ply,
            what,
            ghost,
            settle_ms: 0,
        });
        self.out.len() - 1
    }

    /// The hand lifts the piece on `sq`.
    fn lift(&mut self, t: Millis, sq: Square) -> Option<Piece> {
        let Some(piece) = self.board.remove_piece_at(sq) else {
            self.fail(t, format!("lift from empty {sq}"));
            return None;
        };
        if self.hand.len() >= 2 {
            self.fail(t, format!("a third piece in one hand at {sq}"));
        }
        self.hand.push(piece);
        self.emit(t, What::Square(sq, None), false);
        Some(piece)
    }

    fn take_from_hand(&mut self, t: Millis, piece: Piece) {
        match self.hand.iter().position(|p| *p == piece) {
            Some(i) => {
                self.hand.remove(i);
            }
            None => self.fail(t, format!("{piece:?} is not in the hand {:?}", self.hand)),
        }
    }

    /// The hand releases `piece` on the empty square `sq`. `last` allows an off-centre flicker.
    fn place(&mut self, t: Millis, sq: Square, piece: Piece, last: bool) -> usize {
        self.take_from_hand(t, piece);
        if let Some(there) = self.board.piece_at(sq) {
            self.fail(t, format!("{piece:?} placed on {there:?} at {sq}"));
        }
        self.board.set_piece_at(sq, piece);
        let i = self.emit(t, What::Square(sq, Some(piece)), false);
        if last {
            self.maybe_flicker(t, sq, piece);
        }
        i
    }

    /// The hand puts `piece` down on top of the opponent's piece on `sq` and takes that one
    /// away: the square reports the new piece with no "emptied" in between.
    fn place_on_top(&mut self, t: Millis, sq: Square, piece: Piece, last: bool) -> usize {
        self.take_from_hand(t, piece);
        match self.board.piece_at(sq) {
            Some(victim) if victim.color != piece.color => self.hand.push(victim),
            other => self.fail(t, format!("{piece:?} on top of {other:?} at {sq}")),
        }
        self.board.set_piece_at(sq, piece);
        let i = self.emit(t, What::Square(sq, Some(piece)), false);
        if last {
            self.maybe_flicker(t, sq, piece);
        }
        i
    }

    /// A piece in the hand goes to the box.
    fn discard(&mut self, t: Millis, piece: Piece) {
        self.take_from_hand(t, piece);
    }

    /// A piece from the box into the hand.
    fn take_spare(&mut self, t: Millis, piece: Piece) {
        if self.hand.len() >= 2 {
            self.fail(t, "a third piece in one hand (spare)".into());
        }
        self.hand.push(piece);
    }

    /// An off-centre piece: the sensor loses and finds it a few times within ~90 ms.
    fn maybe_flicker(&mut self, t: Millis, sq: Square, piece: Piece) {
        if !self.chance(self.p.flicker_p) {
            return;
        }
        let times = self.ms((1, 3));
        let mut at = t;
        for _ in 0..times {
            let off = at + self.ms((4, 15));
            let on = off + self.ms((3, 20));
            if on > t + 90 {
                break;
            }
            self.emit(off, What::Square(sq, None), true);
            self.emit(on, What::Square(sq, Some(piece)), true);
            at = on;
        }
    }

    /// The piece in the hand slides from `from` (already left) towards `to`; returns the time
    /// it arrives. Each square passed reports the piece, then loses it.
    fn slide(&mut self, t: Millis, from: Square, to: Square, piece: Piece) -> Millis {
        let mut path: Vec<Square> = attacks::between(from, to).into_iter().collect();
        path.sort_by_key(|s| s.distance(from));
        let step = self.ms(self.p.slide_step_ms);
        let mut now = t;
        for sq in path {
            now += step + self.ms((0, step / 3));
            let on = now.saturating_sub(self.ms((0, step / 3))).max(t + 1);
            let off = now + (step * 2 / 3).max(4) + self.ms((0, step / 3));
            self.emit(on, What::Square(sq, Some(piece)), true);
            self.emit(off, What::Square(sq, None), true);
        }
        now + step + self.ms((0, step / 2))
    }

    /// Whether a piece can slide from `from` to `to`: a straight line over empty squares.
    fn can_slide(&self, from: Square, to: Square, role: Role) -> bool {
        let between = attacks::between(from, to);
        role != Role::Knight && !between.is_empty() && (between & self.board.occupied()).is_empty()
    }

    /// Carries the piece in the hand from `from` to `to`, sliding or not; the arrival time.
    fn carry(
        &mut self,
        t: Millis,
        from: Square,
        to: Square,
        piece: Piece,
        how: &mut Vec<String>,
    ) -> Millis {
        if self.steady {
            return t + self.travel(from, to);
        }
        if self.chance(self.p.touchdown_p) {
            // Set down on another square without letting go, then on to the real one.
            let mut spots: Vec<Square> = self
                .targets
                .iter()
                .copied()
                .filter(|sq| *sq != to && *sq != from && self.board.piece_at(*sq).is_none())
                .collect();
            if spots.is_empty() {
                spots = Self::neighbours(to)
                    .into_iter()
                    .filter(|sq| *sq != from && self.board.piece_at(*sq).is_none())
                    .collect();
            }
            if let Some(spot) = self.pick(&spots) {
                let down = t + self.travel(from, spot);
                self.place(down, spot, piece, false);
                let up = down + self.ms(self.p.touchdown_ms);
                self.lift(up, spot);
                how.push(format!(
                    "touched down on {spot} for {} ms without letting go",
                    up - down
                ));
                return up + self.travel(spot, to);
            }
        }
        if self.can_slide(from, to, piece.role) && self.chance(self.p.slide_p) {
            how.push(format!("slid {from}-{to}"));
            self.slide(t, from, to, piece)
        } else {
            t + self.travel(from, to)
        }
    }

    fn irregular(
        &mut self,
        t: Millis,
        article: &'static str,
        should_flag: bool,
        what: String,
        squares: Vec<Square>,
    ) {
        self.irregularities.push(Irregularity {
            ply: self.ply,
            t_ms: t,
            article,
            should_flag,
            what,
            squares: squares.iter().map(|s| s.to_string()).collect(),
        });
    }
}
