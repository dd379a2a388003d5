//! What the hands do, action by action: the physical performance of each move and of the
//! irregularities around it, on a physical board that always holds what really stands on
//! each square.
//!
//! One file for one concept, the hands' choreography: every move and irregularity is played
//! on the same physical board and hand state, which its functions share.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, Chess, Color, Move, Piece, Position, Role, Square};

use super::{ExpectedAlert, HandModel, InjectedIrregularity, IrregularityKind, signal_squares};
use crate::board::{Millis, Observation, ObservationKind};

/// One physical action.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phys {
    /// A piece left the square (lifted, knocked off, toppled).
    Lift(Square),
    /// A piece came to stand on the empty square.
    Put(Square, Piece),
    /// A clock lever pressed by a player whose clock was running.
    Press(Color),
}

/// A physical action at a time in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct PhysEvent {
    pub t: f64,
    pub what: Phys,
}

impl PhysEvent {
    /// The action as a board that sensed it at once, with no loss, would report it.
    pub fn observation(&self) -> Observation {
        let kind = match self.what {
            Phys::Lift(sq) => ObservationKind::Emptied(sq),
            Phys::Put(sq, piece) => ObservationKind::Placed(sq, Some(piece)),
            Phys::Press(by) => ObservationKind::ClockPressed { by },
        };
        Observation {
            t_ms: self.t.round() as Millis,
            kind,
        }
    }
}

/// The two hands at the board and the clock, acting out a game.
pub(super) struct Performer<'a> {
    model: &'a HandModel,
    rng: &'a mut ChaCha8Rng,
    board: Board,
    /// Time of the latest board action: the next one comes after it.
    t: f64,
    events: Vec<PhysEvent>,
    injected: Vec<InjectedIrregularity>,
    /// Whose clock runs: a press by the other player moves nothing.
    running: Color,
    /// When the previous move was made (its last piece released), if any.
    made_at: Option<f64>,
    /// When the previous move's clock press happened, if it did.
    pressed_at: Option<f64>,
    /// When the lever was last pressed: the next press can only follow it.
    last_press: f64,
    /// When each player (indexed by colour) last pressed: the hand that presses is the hand
    /// that moves, so a player's next move begins after it.
    own_press: [f64; 2],
    /// Where and when each player's playing hand (White, Black) last took or put a piece.
    hands: [Option<(Square, f64)>; 2],
    /// The player whose hand acts now.
    player: Color,
}

/// A piece knocked off its square, waiting to be put back.
struct Knock {
    home: Square,
    piece: Piece,
    landed: Option<Square>,
}

/// Draws from a standard normal distribution (Box–Muller).
fn standard_normal(rng: &mut impl Rng) -> f64 {
    let u1: f64 = rng.gen_range(f64::EPSILON..1.0);
    let u2: f64 = rng.gen_range(0.0..1.0);
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// Draws from a log-normal distribution with the given median.
fn log_normal(rng: &mut impl Rng, median: f64, sigma: f64) -> f64 {
    median * (sigma * standard_normal(rng)).exp()
}

/// The squares strictly between two squares on a line, in order from `from`; empty when
/// they are not on a rank, file or diagonal.
pub(super) fn path(from: Square, to: Square) -> Vec<Square> {
    let df = to.file() as i32 - from.file() as i32;
    let dr = to.rank() as i32 - from.rank() as i32;
    if !(df == 0 || dr == 0 || df.abs() == dr.abs()) {
        return Vec::new();
    }
    let steps = df.abs().max(dr.abs());
    let step = df.signum() + 8 * dr.signum();
    (1..steps).filter_map(|k| from.offset(step * k)).collect()
}

fn name(sq: Square) -> String {
    sq.to_string()
}

fn has_legal_move(pos: &Chess, sq: Square) -> bool {
    pos.legal_moves().iter().any(|m| m.from() == Some(sq))
}

/// True when some legal move captures the piece on `sq` (en passant included).
fn capturable(pos: &Chess, sq: Square) -> bool {
    pos.legal_moves()
        .iter()
        .any(|m| captured_square(m) == Some(sq))
}

/// The square of the piece a move captures, if it captures.
fn captured_square(mv: &Move) -> Option<Square> {
    match *mv {
        Move::Normal {
            capture: Some(_),
            to,
            ..
        } => Some(to),
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        _ => None,
    }
}

impl<'a> Performer<'a> {
    pub fn new(model: &'a HandModel, rng: &'a mut ChaCha8Rng, board: Board) -> Performer<'a> {
        Performer {
            model,
            rng,
            board,
            t: 0.0,
            events: Vec::new(),
            injected: Vec::new(),
            running: Color::White,
            made_at: None,
            pressed_at: None,
            last_press: 0.0,
            own_press: [0.0; 2],
            hands: [None, None],
            player: Color::White,
        }
    }

    /// The physical actions and the injected irregularities, in the order they happened.
    pub fn finish(self) -> (Vec<PhysEvent>, Vec<InjectedIrregularity>) {
        (self.events, self.injected)
    }

    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.rng.gen_bool(p.min(1.0))
    }

    /// Duration of one hand gesture with the given unhurried median.
    fn gesture(&mut self, median: f64) -> f64 {
        let speed = self.model.hand_speed;
        log_normal(self.rng, median * speed, 0.3).clamp(40.0, 20.0 * median)
    }

    fn wait(&mut self, ms: f64) {
        self.t += ms.max(1.0);
    }

    /// Spends one hand gesture with the given unhurried median.
    fn spend(&mut self, median: f64) {
        let ms = self.gesture(median);
        self.wait(ms);
    }

    /// Waits a uniformly drawn time.
    fn pause(&mut self, min_ms: f64, max_ms: f64) {
        let ms = self.rng.gen_range(min_ms..max_ms);
        self.wait(ms);
    }

    /// Moves the playing hand to `sq`: one hand needs time to travel between squares two
    /// or more apart, so the action waits until it could have got there.
    fn reach(&mut self, sq: Square) {
        let hand = &mut self.hands[self.player as usize];
        if let Some((at, when)) = *hand {
            let d = at.distance(sq);
            if d >= 2 {
                self.t = self.t.max(when + 170.0 + 15.0 * d as f64);
            }
        }
        *hand = Some((sq, self.t));
    }

    fn lift(&mut self, sq: Square) -> Option<Piece> {
        self.reach(sq);
        self.lift_unreached(sq)
    }

    /// Lifts without moving the playing hand (the other hand, or a piece knocked off).
    fn lift_unreached(&mut self, sq: Square) -> Option<Piece> {
        let piece = self.board.remove_piece_at(sq);
        debug_assert!(piece.is_some(), "lift from empty {sq}");
        if piece.is_some() {
            self.events.push(PhysEvent {
                t: self.t,
                what: Phys::Lift(sq),
            });
        }
        piece
    }

    fn put(&mut self, sq: Square, piece: Piece) {
        self.reach(sq);
        self.put_unreached(sq, piece);
    }

    /// Puts without moving the playing hand (the other hand, or a knocked piece landing).
    fn put_unreached(&mut self, sq: Square, piece: Piece) {
        debug_assert!(self.board.piece_at(sq).is_none(), "put on occupied {sq}");
        if self.board.piece_at(sq).is_none() {
            self.board.set_piece_at(sq, piece);
            self.events.push(PhysEvent {
                t: self.t,
                what: Phys::Put(sq, piece),
            });
        }
    }

    /// A lever press at `t` (or just after the previous press, which it must follow);
    /// only the player whose clock runs can change anything.
    fn press_at(&mut self, by: Color, t: f64) -> Option<f64> {
        if self.running != by {
            return None;
        }
        let t = t.max(self.last_press + self.rng.gen_range(60.0..150.0));
        self.last_press = t;
        self.own_press[by as usize] = t;
        self.running = !by;
        self.events.push(PhysEvent {
            t,
            what: Phys::Press(by),
        });
        Some(t)
    }

    fn inject(
        &mut self,
        kind: IrregularityKind,
        ply: u32,
        t: f64,
        squares: &[Square],
        expected: ExpectedAlert,
    ) {
        self.injected.push(InjectedIrregularity {
            kind,
            ply,
            t_ms: t.max(0.0).round() as Millis,
            squares: squares.iter().map(|s| name(*s)).collect(),
            expected,
        });
    }

    /// When the player to move first reaches for a piece.
    fn start_time(&mut self, ply: u32) -> f64 {
        let earliest = self.t + 20.0;
        let Some(made) = self.made_at else {
            return earliest + self.rng.gen_range(1_000.0..3_000.0);
        };
        if ply > 1 && self.chance(self.model.premove_probability) {
            let reply = made + self.rng.gen_range(60.0..300.0);
            let hand_back = self.own_press[self.player as usize] + self.rng.gen_range(50.0..150.0);
            return reply.max(earliest).max(hand_back);
        }
        let base = self.pressed_at.unwrap_or(made).max(earliest);
        let max_think = if self.model.blitz {
            60_000.0
        } else {
            1_200_000.0
        };
        base + log_normal(self.rng, self.model.think_median_ms, 0.9).clamp(250.0, max_think)
    }

    /// Plays one legal move the way a person would; returns when the hand action began.
    pub fn play_move(&mut self, pos: &Chess, mv: Move, ply: u32) -> Millis {
        let mover = pos.turn();
        self.player = mover;
        self.t = self.start_time(ply);
        let began = self.t;
        if self.chance(self.model.press_without_move_probability) && self.running == mover {
            let t = self.t;
            self.press_at(mover, t);
            self.inject(
                IrregularityKind::PressWithoutMove,
                ply,
                t,
                &[],
                ExpectedAlert::Required("7.5.3".into()),
            );
            let back = self.t + self.rng.gen_range(1_500.0..4_000.0);
            self.press_at(!mover, back);
            self.t = back + self.rng.gen_range(500.0..2_000.0);
        }
        if self.chance(self.model.adjustment_probability) {
            self.adjust(pos, mv, ply);
        }
        if self.chance(self.model.hesitation_probability) {
            self.hesitate(pos, mv, ply);
        } else if self.chance(self.model.opponent_touch_probability) {
            self.touch_opponent(pos, mv, ply);
        }
        if self.chance(self.model.illegal_move_probability) {
            self.illegal_attempt(pos, mv, ply);
        }
        let knock = self.chance(self.model.knock_probability);
        let (pressed, pending) = self.perform(pos, mv, ply, knock);
        self.made_at = Some(self.t);
        let late = self.chance(self.model.late_restore_probability);
        if let Some(k) = pending.as_ref().filter(|_| !late) {
            self.restore(k);
        }
        self.pressed_at = None;
        let ends_game = {
            let mut after = pos.clone();
            after.play_unchecked(mv);
            after.is_game_over()
        };
        if pressed {
            self.pressed_at = Some(self.t);
        } else if !ends_game && self.chance(self.model.forget_press_probability) {
            let t = self.t;
            self.inject(
                IrregularityKind::ForgottenPress,
                ply,
                t,
                &[],
                ExpectedAlert::None,
            );
        } else {
            let t = self.t + log_normal(self.rng, self.model.press_delay_ms, 0.35).max(80.0);
            self.pressed_at = self.press_at(mover, t);
        }
        if let Some(k) = pending.filter(|_| late) {
            self.t = self.t.max(self.pressed_at.unwrap_or(self.t)) + self.gesture(1_500.0);
            self.restore(&k);
        }
        if self.chance(self.model.off_turn_touch_probability) {
            self.off_turn_touch(mover, ply + 1);
        }
        began.round() as Millis
    }

    /// Lifts a piece briefly and puts it back (an adjustment the board cannot hear).
    fn adjust(&mut self, pos: &Chess, mv: Move, ply: u32) {
        let own: Vec<Square> = pos.us().into_iter().collect();
        let sq = own[self.rng.gen_range(0..own.len())];
        let expected = if Some(sq) == mv.from() || !has_legal_move(pos, sq) {
            ExpectedAlert::None
        } else {
            ExpectedAlert::Allowed
        };
        let t = self.t;
        self.inject(IrregularityKind::Adjustment, ply, t, &[sq], expected);
        if let Some(piece) = self.lift(sq) {
            let hold = self.gesture(150.0).min(400.0);
            self.wait(hold);
            self.put(sq, piece);
        }
        self.spend(600.0);
    }

    /// Lifts another own piece, holds it, puts it back, and thinks again (4.3.1).
    fn hesitate(&mut self, pos: &Chess, mv: Move, ply: u32) {
        let moving: Vec<Square> = match mv {
            Move::Castle { king, rook } => vec![king, rook],
            _ => mv.from().into_iter().collect(),
        };
        let candidates: Vec<Square> = pos
            .us()
            .into_iter()
            .filter(|s| !moving.contains(s))
            .collect();
        if candidates.is_empty() {
            return;
        }
        let movable: Vec<Square> = candidates
            .iter()
            .copied()
            .filter(|s| has_legal_move(pos, *s))
            .collect();
        let pool = if !movable.is_empty() && self.rng.gen_bool(0.9) {
            movable
        } else {
            candidates
        };
        let sq = pool[self.rng.gen_range(0..pool.len())];
        let expected = if has_legal_move(pos, sq) {
            ExpectedAlert::Required("4.3.1".into())
        } else {
            ExpectedAlert::None
        };
        let t = self.t;
        self.inject(IrregularityKind::Hesitation, ply, t, &[sq], expected);
        if let Some(piece) = self.lift(sq) {
            let hold = self.gesture(900.0).max(450.0);
            self.wait(hold);
            self.put(sq, piece);
        }
        let think = log_normal(self.rng, self.model.think_median_ms / 3.0, 0.6).max(500.0);
        self.wait(think);
    }

    /// Lifts an opponent's piece and puts it back, then does not capture it (4.3.2).
    fn touch_opponent(&mut self, pos: &Chess, mv: Move, ply: u32) {
        let theirs: Vec<Square> = pos.them().into_iter().collect();
        let sq = theirs[self.rng.gen_range(0..theirs.len())];
        let expected = if captured_square(&mv) == Some(sq) || !capturable(pos, sq) {
            ExpectedAlert::None
        } else {
            ExpectedAlert::Required("4.3.2".into())
        };
        let t = self.t;
        self.inject(IrregularityKind::OpponentTouch, ply, t, &[sq], expected);
        if let Some(piece) = self.lift(sq) {
            let hold = self.gesture(700.0).max(450.0);
            self.wait(hold);
            self.put(sq, piece);
        }
        let think = log_normal(self.rng, self.model.think_median_ms / 3.0, 0.6).max(500.0);
        self.wait(think);
    }

    /// The player who just pressed lifts one of his pieces and puts it back in the
    /// opponent's time.
    fn off_turn_touch(&mut self, player: Color, ply: u32) {
        let own: Vec<Square> = (self.board.by_color(player)).into_iter().collect();
        if own.is_empty() {
            return;
        }
        let sq = own[self.rng.gen_range(0..own.len())];
        let after = self.pressed_at.unwrap_or(self.t).max(self.t);
        self.t = after + self.rng.gen_range(200.0..900.0);
        let t = self.t;
        self.inject(
            IrregularityKind::OffTurnTouch,
            ply,
            t,
            &[sq],
            ExpectedAlert::Allowed,
        );
        if let Some(piece) = self.lift(sq) {
            self.spend(400.0);
            self.put(sq, piece);
        }
    }

    /// Places the piece that will move on a square it cannot reach, then either takes it
    /// back or presses the clock (7.5.1) and has it corrected.
    fn illegal_attempt(&mut self, pos: &Chess, mv: Move, ply: u32) {
        let Some(from) = mv.from() else { return };
        let legal = pos.legal_moves();
        let role = mv.role();
        let targets: Vec<Square> = (0..64u32)
            .map(Square::new)
            .filter(|s| {
                let d = s.distance(from);
                (1..=3).contains(&d)
                    && self.board.piece_at(*s).is_none()
                    && !legal.iter().any(|m| m.from() == Some(from) && m.to() == *s)
                    && !(role == Role::Pawn && matches!(s.rank() as u32, 0 | 7))
            })
            .collect();
        if targets.is_empty() {
            return;
        }
        let to = targets[self.rng.gen_range(0..targets.len())];
        let began = self.t;
        let Some(piece) = self.lift(from) else { return };
        self.spend(400.0);
        self.put(to, piece);
        let mover = pos.turn();
        let completed = self
            .rng
            .gen_bool(self.model.illegal_completed_share.clamp(0.0, 1.0))
            && self.running == mover;
        if completed {
            let t = self.t + log_normal(self.rng, self.model.press_delay_ms, 0.3).max(80.0);
            self.press_at(mover, t);
            self.inject(
                IrregularityKind::IllegalMoveCompleted,
                ply,
                began,
                &[from, to],
                ExpectedAlert::Required("7.5.1".into()),
            );
            self.t = t + self.rng.gen_range(1_500.0..5_000.0);
            self.lift(to);
            self.spend(400.0);
            self.put(from, piece);
            let correction = self.t + self.rng.gen_range(500.0..2_000.0);
            self.press_at(!mover, correction);
            self.t = correction + self.rng.gen_range(1_000.0..4_000.0);
        } else {
            self.inject(
                IrregularityKind::IllegalMoveUndone,
                ply,
                began,
                &[from, to],
                ExpectedAlert::None,
            );
            self.spend(600.0);
            self.lift(to);
            self.spend(350.0);
            self.put(from, piece);
            self.spend(1_500.0);
        }
    }

    /// Knocks a neighbour of the moving hand off its square, if there is one.
    fn knock(&mut self, near: &[Square], keep_clear: &[Square], ply: u32) -> Option<Knock> {
        let victims: Vec<Square> = (0..64u32)
            .map(Square::new)
            .filter(|s| {
                self.board.piece_at(*s).is_some()
                    && !keep_clear.contains(s)
                    && near.iter().any(|n| n.distance(*s) == 1)
            })
            .collect();
        if victims.is_empty() {
            return None;
        }
        let home = victims[self.rng.gen_range(0..victims.len())];
        let t = self.t + self.rng.gen_range(30.0..150.0);
        self.t = t;
        let piece = self.lift_unreached(home)?;
        let landing: Vec<Square> = (0..64u32)
            .map(Square::new)
            .filter(|s| {
                s.distance(home) == 1
                    && self.board.piece_at(*s).is_none()
                    && !keep_clear.contains(s)
            })
            .collect();
        let landed = if !landing.is_empty() && self.rng.gen_bool(0.5) {
            let y = landing[self.rng.gen_range(0..landing.len())];
            self.pause(20.0, 80.0);
            self.put_unreached(y, piece);
            Some(y)
        } else {
            None
        };
        let mut squares = vec![home];
        squares.extend(landed);
        self.inject(
            IrregularityKind::KnockedPiece,
            ply,
            t,
            &squares,
            ExpectedAlert::Allowed,
        );
        Some(Knock {
            home,
            piece,
            landed,
        })
    }

    /// Puts a knocked piece back on its square.
    fn restore(&mut self, k: &Knock) {
        self.spend(900.0);
        if let Some(y) = k.landed {
            self.lift(y);
            self.spend(300.0);
        }
        self.put(k.home, k.piece);
    }

    /// Moves a lifted piece over the squares of `squares` and leaves the hand above the
    /// last of them (not put down).
    fn slide_over(&mut self, piece: Piece, squares: &[Square]) {
        let pause_at = if self.chance(self.model.slide_pause_probability) && !squares.is_empty() {
            Some(self.rng.gen_range(0..squares.len()))
        } else {
            None
        };
        for (i, sq) in squares.iter().enumerate() {
            self.pause(15.0, 60.0);
            self.put(*sq, piece);
            let dwell = if pause_at == Some(i) {
                self.rng.gen_range(250.0..700.0)
            } else {
                self.rng.gen_range(20.0..110.0)
            };
            self.wait(dwell);
            self.lift(*sq);
        }
        self.pause(15.0, 60.0);
    }

    /// Lifts a piece from `from` and moves it to `to` (sliding when the model says so),
    /// without putting it down yet. Handles a knock after the lift.
    fn carry(
        &mut self,
        from: Square,
        to: Square,
        slide: bool,
        knock: &mut Option<(bool, Vec<Square>, u32)>,
    ) -> (Option<Piece>, Option<Knock>) {
        let piece = self.lift(from);
        let mut pending = None;
        if let Some((true, keep_clear, ply)) = knock.take() {
            pending = self.knock(&[from, to], &keep_clear, ply);
        }
        let Some(piece) = piece else {
            return (None, pending);
        };
        let squares = if slide { path(from, to) } else { Vec::new() };
        if squares.is_empty() {
            let d = from.distance(to) as f64;
            self.spend(220.0 + 45.0 * d);
        } else {
            self.slide_over(piece, &squares);
        }
        (Some(piece), pending)
    }

    fn wants_slide(&mut self, role: Role, from: Square, to: Square) -> bool {
        let slider = matches!(role, Role::Queen | Role::Rook | Role::Bishop)
            || (role == Role::Pawn && from.distance(to) == 2);
        slider && self.chance(self.model.slide_probability)
    }

    /// Performs the move; returns whether the clock was already pressed (an unexchanged
    /// promotion) and a knocked piece still to restore.
    fn perform(&mut self, pos: &Chess, mv: Move, ply: u32, knock: bool) -> (bool, Option<Knock>) {
        let mover = pos.turn();
        let mut squares: Vec<Square> = match mv {
            Move::Castle { king, rook } => vec![king, rook],
            _ => mv.from().into_iter().chain([mv.to()]).collect(),
        };
        if let Some(c) = captured_square(&mv) {
            squares.push(c);
        }
        if let Move::Castle { rook, .. } = mv {
            if let Some(side) = mv.castling_side() {
                squares.extend([side.king_to(mover), side.rook_to(mover)]);
                squares.extend(path(squares[0], side.king_to(mover)));
                squares.extend(path(rook, side.rook_to(mover)));
            }
        } else if let Some(from) = mv.from() {
            squares.extend(path(from, mv.to()));
        }
        let mut knock = Some((knock, squares, ply));
        match mv {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => {
                if let Some(new_role) = promotion {
                    let new = Piece {
                        color: mover,
                        role: new_role,
                    };
                    return self.promote(from, to, capture.is_some(), new, ply, &mut knock);
                }
                let pending = if capture.is_some() {
                    self.capture(role, from, to, ply, &mut knock)
                } else {
                    let slide = self.wants_slide(role, from, to);
                    let (piece, pending) = self.carry(from, to, slide, &mut knock);
                    if let Some(p) = piece {
                        self.put(to, p);
                    }
                    pending
                };
                (false, pending)
            }
            Move::EnPassant { from, to } => {
                let victim = Square::from_coords(to.file(), from.rank());
                let order = self.model.en_passant_order.pick(self.rng);
                if order == 0 {
                    self.lift(victim);
                    self.spend(400.0);
                }
                let (piece, pending) = self.carry(from, to, false, &mut knock);
                if order == 1 {
                    self.lift(victim);
                    self.spend(200.0);
                }
                if let Some(p) = piece {
                    self.put(to, p);
                }
                if order == 2 {
                    self.spend(350.0);
                    self.lift(victim);
                }
                (false, pending)
            }
            Move::Castle { king, rook } => (false, self.castle(mover, king, rook, ply, &mut knock)),
            Move::Put { .. } => (false, None),
        }
    }

    fn capture(
        &mut self,
        role: Role,
        from: Square,
        to: Square,
        ply: u32,
        knock: &mut Option<(bool, Vec<Square>, u32)>,
    ) -> Option<Knock> {
        if self.chance(self.model.two_hands_probability) {
            self.two_hands(from, to, ply);
            let piece = self.lift(from);
            self.spend(200.0);
            if let Some(p) = piece {
                self.put(to, p);
            }
            return None;
        }
        if self
            .rng
            .gen_bool(self.model.victim_first_probability.clamp(0.0, 1.0))
        {
            self.lift(to);
            self.spend(450.0);
            let slide = self.wants_slide(role, from, to);
            let (piece, pending) = self.carry(from, to, slide, knock);
            if let Some(p) = piece {
                self.put(to, p);
            }
            pending
        } else {
            let slide = self.wants_slide(role, from, to);
            let (piece, pending) = self.carry(from, to, slide, knock);
            self.lift(to);
            self.spend(180.0);
            if let Some(p) = piece {
                self.put(to, p);
            }
            pending
        }
    }

    /// The first of two pieces lifted with the other hand almost at once (7.5.4): lifts
    /// the piece on `other` now and leaves the hand to lift `first` 20–100 ms later.
    fn two_hands(&mut self, first: Square, other: Square, ply: u32) {
        let t = self.t;
        self.inject(
            IrregularityKind::TwoHands,
            ply,
            t,
            &[first, other],
            ExpectedAlert::Allowed,
        );
        self.lift_unreached(other);
        self.pause(20.0, 100.0);
    }

    fn promote(
        &mut self,
        from: Square,
        to: Square,
        capture: bool,
        new: Piece,
        ply: u32,
        knock: &mut Option<(bool, Vec<Square>, u32)>,
    ) -> (bool, Option<Knock>) {
        let unexchanged =
            new.role == Role::Queen && self.chance(self.model.unexchanged_promotion_probability);
        let order = if unexchanged {
            1
        } else {
            self.model.promotion_order.pick(self.rng)
        };
        let victim_first = capture && (order == 2 || self.rng.gen_bool(0.5));
        if victim_first {
            self.lift(to);
            self.spend(450.0);
        }
        if order == 2 {
            self.spend(700.0);
            self.put(to, new);
            self.spend(350.0);
            self.lift(from);
            return (false, None);
        }
        let (pawn, pending) = self.carry(from, to, false, knock);
        if capture && !victim_first {
            self.lift(to);
            self.spend(200.0);
        }
        match order {
            1 => {
                if let Some(p) = pawn {
                    self.put(to, p);
                }
                if unexchanged {
                    let mover = new.color;
                    let t = self.t + log_normal(self.rng, self.model.press_delay_ms, 0.3).max(80.0);
                    self.press_at(mover, t);
                    self.inject(
                        IrregularityKind::UnexchangedPromotion,
                        ply,
                        t,
                        &[to],
                        ExpectedAlert::Required("7.5.2".into()),
                    );
                    self.t = t + self.rng.gen_range(2_000.0..5_000.0);
                    self.lift(to);
                    self.spend(250.0);
                    self.put(to, new);
                    return (true, pending);
                }
                self.spend(600.0);
                self.lift(to);
                self.spend(300.0);
                self.put(to, new);
            }
            3 => {
                self.spend(150.0);
                self.put(to, new);
            }
            _ => {
                self.spend(700.0);
                self.put(to, new);
            }
        }
        (false, pending)
    }

    fn castle(
        &mut self,
        mover: Color,
        king: Square,
        rook: Square,
        ply: u32,
        knock: &mut Option<(bool, Vec<Square>, u32)>,
    ) -> Option<Knock> {
        let side = Move::Castle { king, rook }.castling_side()?;
        let (king_to, rook_to) = (side.king_to(mover), side.rook_to(mover));
        let k = Piece {
            color: mover,
            role: Role::King,
        };
        let r = Piece {
            color: mover,
            role: Role::Rook,
        };
        if king == king_to {
            let (piece, pending) = self.carry(rook, rook_to, false, knock);
            if let Some(p) = piece {
                self.put(rook_to, p);
            }
            return pending;
        }
        if rook == rook_to {
            let (piece, pending) = self.carry(king, king_to, false, knock);
            if let Some(p) = piece {
                self.put(king_to, p);
            }
            return pending;
        }
        if self.chance(self.model.two_hands_probability) {
            self.two_hands(king, rook, ply);
            self.lift(king);
            self.spend(200.0);
            self.put(king_to, k);
            self.pause(20.0, 120.0);
            self.put_unreached(rook_to, r);
            return None;
        }
        let mut order = self.model.castling_order.pick(self.rng);
        if order == 0 && king_to == rook {
            order = 2;
        }
        if order == 1 && rook_to == king {
            order = 2;
        }
        match order {
            0 => {
                let slide = self.chance(self.model.slide_probability)
                    && path(king, king_to)
                        .iter()
                        .all(|s| self.board.piece_at(*s).is_none());
                let (_, pending) = self.carry(king, king_to, slide, knock);
                self.put(king_to, k);
                self.spend(350.0);
                self.lift(rook);
                self.spend(300.0);
                self.put(rook_to, r);
                pending
            }
            1 => {
                let t = self.t;
                self.inject(
                    IrregularityKind::RookFirstCastling,
                    ply,
                    t,
                    &[rook, king],
                    ExpectedAlert::Required("4.4.2".into()),
                );
                let (_, pending) = self.carry(rook, rook_to, false, knock);
                self.put(rook_to, r);
                self.spend(350.0);
                self.lift(king);
                self.spend(300.0);
                self.put(king_to, k);
                pending
            }
            _ => {
                let (_, pending) = self.carry(king, king, false, knock);
                self.lift(rook);
                self.spend(350.0);
                self.put(rook_to, r);
                self.spend(400.0);
                self.put(king_to, k);
                pending
            }
        }
    }

    /// Ends the game with both kings on the centre squares of `result`.
    pub fn signal_result(&mut self, result: &str) {
        let Some([first_set, second_set]) = signal_squares(result) else {
            return;
        };
        let Some(wk) = self.board.king_of(Color::White) else {
            return;
        };
        let Some(bk) = self.board.king_of(Color::Black) else {
            return;
        };
        let after = self.pressed_at.or(self.made_at).unwrap_or(0.0).max(self.t);
        self.t = after + self.rng.gen_range(2_000.0..10_000.0);
        // Which king goes to which set (for a draw: one light, one dark square).
        let (mut sets, mut kings) = ([first_set, second_set], [wk, bk]);
        if self.rng.gen_bool(0.5) {
            kings.swap(0, 1);
        }
        if self.rng.gen_bool(0.5) {
            sets.swap(0, 1);
        }
        let mut targets = kings;
        for i in 0..2 {
            if sets[i].contains(&kings[i]) {
                continue;
            }
            let other = kings[1 - i];
            let other_target = if sets[1 - i].contains(&other) {
                Some(other)
            } else {
                None
            };
            let choices: Vec<Square> = sets[i]
                .iter()
                .copied()
                .filter(|s| *s != other && Some(*s) != other_target && (i == 0 || *s != targets[0]))
                .collect();
            if choices.is_empty() {
                return;
            }
            targets[i] = choices[self.rng.gen_range(0..choices.len())];
        }
        let t = self.t;
        let both_first = self.rng.gen_bool(0.5);
        let pieces = [self.board.piece_at(kings[0]), self.board.piece_at(kings[1])];
        let moving: Vec<usize> = (0..2).filter(|i| kings[*i] != targets[*i]).collect();
        if both_first {
            for &i in &moving {
                self.lift(kings[i]);
                self.spend(300.0);
            }
        }
        for &i in &moving {
            if !both_first {
                self.lift(kings[i]);
                self.spend(300.0);
            }
            if self.board.piece_at(targets[i]).is_some() {
                self.lift(targets[i]);
                self.spend(400.0);
            }
            if let Some(p) = pieces[i] {
                self.put(targets[i], p);
            }
            self.spend(350.0);
        }
        debug_assert!(t <= self.t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_lists_squares_between_in_order() {
        assert_eq!(path(Square::D1, Square::D4), vec![Square::D2, Square::D3]);
        assert_eq!(path(Square::H8, Square::E5), vec![Square::G7, Square::F6]);
        assert!(path(Square::G1, Square::F3).is_empty());
        assert!(path(Square::E2, Square::E3).is_empty());
    }
}
