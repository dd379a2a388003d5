//! The act-of-moving machine: observations in, moves and alerts out.

use shakmaty::{Bitboard, Board, Chess, Color, Move, Piece, Position, Role, Square};

use super::ending::{self, Ending};
use super::physical::PhysicalBoard;
use super::search::{Explanation, Reports, Sensed};
use super::start::{SetUp, Start, StartRules};
use super::touch::{self, Lift};
use super::{Alert, Event, Severity};
use crate::board::{ColorName, Millis, Observation, ObservationKind};
use crate::rules::{Budget, Game};

/// How the machine reads the board and the Laws it applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineConfig {
    /// The board tells pieces apart (DGT). False for occupancy-only boards: promotions are
    /// then assumed to a queen and raised for the arbiter.
    pub identifies_pieces: bool,
    /// Two lifts or placements closer than this, on squares two or more files or ranks
    /// apart, raise a suspected 7.5.4 (two hands).
    pub two_hands_threshold_ms: Millis,
    /// Blitz (Appendix B): 7.5.5 time penalties are 1 minute instead of 2.
    pub blitz: bool,
    /// A set-up for a FEN game: the game starts when this position stands, instead of the
    /// standard start.
    pub start_fen: Option<String>,
    /// Any of the 960 Chess960 starts begins a game (off by default: a standard set-up with
    /// king and queen swapped is then a wrong set-up, not a Chess960 game).
    pub chess960: bool,
    /// Longest sequence of moves reconstructed when board updates were missed.
    pub max_reconstruction_plies: usize,
    /// A clock press that arrives while a move is still being made is judged this long
    /// after the press (the board may report the last placement after the press).
    pub press_grace_ms: Millis,
    /// Moves that may still be revised when no clock press confirmed them.
    pub revisable_plies: usize,
    /// A piece placed while the board shows one more of its kind than the game can have is
    /// taken as a lost "emptied" update of another of its kind after this long (the board
    /// may report a placement before the lift that preceded it, by up to a scan).
    pub missed_update_ms: Millis,
    /// How much earlier than the lift before it the board may report a placement (a scan
    /// of the squares takes time): reconstructions of missed moves must agree with the
    /// report times within this.
    pub report_reorder_ms: Millis,
    /// A move that mates, stalemates or otherwise ends the game ends it once confirmed by a
    /// press or once its landing square has stood this long (a sliding piece passing a
    /// mating square has not moved there).
    pub end_confirm_ms: Millis,
    /// How long after a piece was seen arriving it may still be read as sliding on (a slide
    /// paused mid-way and reported late): its move is revised to the longer one, past the
    /// opponent's reply or a hold, with a 4.7 warning when it stood longer than a scan.
    pub moved_on_ms: Millis,
    /// How much unwinnability analysis may be spent after a move to find a dead position
    /// (5.2.2). The default is deterministic (no wall clock in the core).
    pub dead_position_budget: Budget,
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            identifies_pieces: true,
            two_hands_threshold_ms: 150,
            blitz: false,
            start_fen: None,
            chess960: false,
            max_reconstruction_plies: 4,
            press_grace_ms: 400,
            revisable_plies: 2,
            missed_update_ms: 1_000,
            report_reorder_ms: 600,
            end_confirm_ms: 1_000,
            moved_on_ms: 1_500,
            dead_position_budget: Budget::deterministic(),
        }
    }
}

/// Where the machine is in the life of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No game yet: waiting for a start position.
    Waiting,
    /// A game is being played.
    Playing,
    /// The game ended; waiting for a new start position.
    Ended,
}

/// How many grace periods after a press its judgement may wait for a board in motion.
const PRESS_WAITS_FOR_MOTION: Millis = 3;

/// The due time of a press that waits for the board, not the clock: it completes its move
/// once the board is set right (displaced pieces set back, a lost update made good).
const WHEN_RESTORED: Millis = Millis::MAX;

/// How many placements are kept at most, however long the open moves took.
const PLACEMENTS_KEPT: usize = 256;

/// What the board shows, relative to the game.
#[derive(Debug, Clone)]
enum Reading {
    /// Exactly the game position.
    Current,
    /// The game from ply `from` on is `moves` (a revision when `from` is before the end).
    Adopt {
        from: usize,
        moves: Vec<Move>,
        doubt: Option<Doubt>,
    },
    /// Nothing explains it; `in_progress` when it may be a move still being made.
    Unexplained { in_progress: bool },
}

/// Why an adopted move is not certain.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Doubt {
    /// Several sequences from ply `from` explain the board; only their common part was
    /// adopted.
    Sequences { from: usize, seqs: Vec<Vec<Move>> },
    /// An occupancy-only board cannot show which piece a pawn became.
    PromotionPiece,
    /// The reconstructed moves overlapped in time by `ms`: one may be a knocked piece.
    Overlapping { moves: Vec<Move>, ms: Millis },
    /// The reconstructed moves put a piece on `squares` and changed them again, though the
    /// board never showed it there: a displaced piece may have been read as moves.
    UnseenArrival { moves: Vec<Move>, squares: Bitboard },
    /// The opponent's `reply` was complete `ms` after the piece it answered was first seen
    /// arriving, and that piece then went on: a piece knocked by the moving hand may have
    /// been read as the reply.
    QuickReply { reply: Move, ms: Millis },
    /// A pawn's single step `step` was taken on its square after standing there `stood_ms`;
    /// it may have gone on with `double` and been taken en passant unseen.
    Unsampled {
        step: Move,
        double: Move,
        stood_ms: Millis,
    },
    /// The piece of the move `first` was carried on to another square `stood_ms` after it
    /// arrived: a slide seen late, or a released piece moved again (4.7); or `first` was the
    /// rook of a castling made rook first (4.4.2).
    MovedOn { first: Move, stood_ms: Millis },
    /// The piece of the pressed move `first` was moved on along the same line by `next`,
    /// begun `ms` after the opponent's reply was made, quicker than a hand answers: one move
    /// seen late (its press made before the last square was reported) or a premove.
    GoneOnAtOnce { first: Move, next: Move, ms: Millis },
    /// Moves already made final (`withdrawn`, from ply `from`) were read again as `moves`:
    /// the board's later reports explain it only that way (a slow scan reported a slide's
    /// end after the press, an update was lost).
    Reread {
        from: usize,
        withdrawn: Vec<Move>,
        moves: Vec<Move>,
    },
}

/// The act-of-moving machine (FIDE Articles 4 and 7). Deterministic: feed it observations,
/// collect events.
#[derive(Debug, Clone)]
pub struct Machine {
    config: MachineConfig,
    starts: StartRules,
    physical: PhysicalBoard,
    rotated: bool,
    phase: Phase,
    game: Game,
    chess960: bool,
    settled: usize,
    completed: usize,
    turn_start: Vec<Millis>,
    reached_at: Vec<Millis>,
    last_seen: [Option<Millis>; 64],
    seen_before: [Option<Millis>; 64],
    /// Squares whose latest report is a board dump that found them changed: when they
    /// changed is unknown.
    undated: Bitboard,
    lifts: Vec<Lift>,
    held: Option<Bitboard>,
    held_since: Millis,
    doubt: Option<Doubt>,
    illegal_moves: [u32; 2],
    /// A completed illegal move (7.5.1) whose position has not been restored yet, while
    /// the game is held on it; true once a press made on the unrestored board was told.
    unrestored: Option<bool>,
    pressed_at: [Option<Millis>; 2],
    pending_press: Option<Press>,
    /// A press by the side to move that the opponent's press overtook while it waited for
    /// the board to come to rest; judged, before the opponent's, when that one falls due.
    overtaken_press: Option<Press>,
    /// What the board read as at a pending press by the side to move, and the plies the
    /// game had then: moves the press ended, should the board be changed again before the
    /// press is judged (a knocked piece, the reply begun).
    press_reading: Option<(usize, Reading)>,
    completion: Option<Completion>,
    open_claims: Vec<(u32, Color)>,
    last_clock: Option<(u64, u64)>,
    wrong_setup: Vec<Square>,
    two_hands_ply: Option<u32>,
    last_place: Option<(Square, Millis)>,
    /// A surplus piece: its square, when it was placed, when to look for its lost lift.
    surplus: Option<(Square, Millis, Millis)>,
    /// The pieces the board named put on a square (or a dump found there) since the
    /// oldest move still open to a re-reading, with the time: what a reconstruction's
    /// captured arrivals and promotions must have been seen as.
    placements: Vec<(Square, Piece, Millis)>,
    pending_end: Option<PendingEnd>,
    /// A result signal on the board and when it was made: it ends the game once it has
    /// stood [`SIGNAL_STANDS_MS`] (a knocked king can land beside the other for a moment).
    pending_signal: Option<(Ending, Millis)>,
    outage: Option<Millis>,
    lifted_last: bool,
    signalled: Option<&'static str>,
    now: Millis,
}

impl Machine {
    /// A machine waiting for a start position.
    pub fn new(config: MachineConfig) -> Machine {
        let expected = config
            .start_fen
            .as_deref()
            .and_then(|fen| Game::from_fen(fen, config.chess960).ok());
        let starts = StartRules {
            expected,
            chess960: config.chess960,
            identifies: config.identifies_pieces,
        };
        Machine {
            physical: PhysicalBoard::new(config.identifies_pieces),
            starts,
            config,
            rotated: false,
            phase: Phase::Waiting,
            game: Game::standard(),
            chess960: false,
            settled: 0,
            completed: 0,
            turn_start: vec![0],
            reached_at: vec![0],
            last_seen: [None; 64],
            seen_before: [None; 64],
            undated: Bitboard::EMPTY,
            lifts: Vec::new(),
            held: None,
            held_since: 0,
            doubt: None,
            illegal_moves: [0, 0],
            unrestored: None,
            pressed_at: [None; 2],
            pending_press: None,
            overtaken_press: None,
            press_reading: None,
            completion: None,
            open_claims: Vec::new(),
            last_clock: None,
            wrong_setup: Vec::new(),
            two_hands_ply: None,
            last_place: None,
            surplus: None,
            placements: Vec::new(),
            pending_end: None,
            pending_signal: None,
            outage: None,
            lifted_last: false,
            signalled: None,
            now: 0,
        }
    }

    /// Runs a whole observation stream through a new machine and returns every event.
    pub fn run(config: MachineConfig, observations: &[Observation]) -> Vec<Event> {
        let mut machine = Machine::new(config);
        let mut events = Vec::new();
        for obs in observations {
            machine.observe(obs, &mut events);
        }
        events
    }

    /// The configuration.
    pub fn config(&self) -> &MachineConfig {
        &self.config
    }

    /// The recorded game so far (the standard start before any game began).
    pub fn game(&self) -> &Game {
        &self.game
    }

    /// Plies recorded in the current game.
    pub fn ply(&self) -> u32 {
        ply_number(self.game.plies())
    }

    /// The board as sensed, in game coordinates.
    pub fn physical_board(&self) -> &Board {
        self.physical.board()
    }

    /// Where the machine is in the life of a game.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// True while play is held because the board matches no legal continuation (7.4/7.6).
    pub fn is_held(&self) -> bool {
        self.held.is_some()
    }

    /// True when the board was found turned round and squares are being mapped (7.2.2).
    pub fn is_rotated(&self) -> bool {
        self.rotated
    }

    /// True for a Chess960 game.
    pub fn is_chess960(&self) -> bool {
        self.chess960
    }

    /// Completed illegal moves of a player in this game (7.5.5).
    pub fn illegal_moves(&self, color: Color) -> u32 {
        self.illegal_moves[color as usize]
    }

    /// Takes one observation; appends what it caused to `out`. Never panics.
    pub fn observe(&mut self, obs: &Observation, out: &mut Vec<Event>) {
        let t = obs.t_ms;
        self.catch_up(t, out);
        self.now = self.now.max(t);
        // A confirmed move whose grace period ended before this observation is final before
        // the observation is read: nothing that follows may revise it (6.2.1, 4.7).
        self.correct_due_surplus(t, out);
        self.settle_completion(t);
        self.lifted_last = matches!(obs.kind, ObservationKind::Emptied(_));
        match &obs.kind {
            ObservationKind::Emptied(sq) => {
                let sq = self.map(*sq);
                self.seen(sq, t);
                let piece = self.physical.empty(sq, t);
                if let Some(piece) = piece
                    && self.phase == Phase::Playing
                {
                    self.on_lift(sq, piece, t, out);
                }
                self.board_changed(t, out);
            }
            ObservationKind::Placed(sq, piece) => {
                let sq = self.map(*sq);
                self.seen(sq, t);
                if self.phase == Phase::Playing {
                    self.on_place(sq, *piece, t, out);
                }
                self.physical.place(sq, *piece);
                if self.phase == Phase::Playing
                    && self.config.identifies_pieces
                    && self.surplus.is_none()
                    && self.surplus_at(sq)
                {
                    self.surplus = Some((sq, t, t.saturating_add(self.config.missed_update_ms)));
                }
                self.board_changed(t, out);
            }
            ObservationKind::Snapshot(snapshot) => {
                let mut board = snapshot.board.clone();
                if self.rotated {
                    board.rotate_180();
                }
                let changed = self.physical.diff(&board);
                for sq in changed {
                    self.seen(sq, t);
                    if let Some(piece) = board.piece_at(sq) {
                        self.note_placement(sq, piece, t);
                    }
                }
                self.undated |= changed;
                if changed.count() >= 2 {
                    self.outage = Some(t);
                }
                self.physical.replace(&board);
                self.board_changed(t, out);
            }
            ObservationKind::ClockPressed { by } => self.on_press(*by, t, out),
            ObservationKind::MagicPiece(sq, magic) => {
                let sq = self.map(*sq);
                self.seen(sq, t);
                if self.phase == Phase::Playing {
                    let signal = Ending {
                        result: magic.result(),
                        reason: format!("result signal: magic piece on {sq}"),
                    };
                    self.finish(signal, t, out);
                }
            }
            ObservationKind::ClockTimes(reading) => {
                let times = (reading.white_ms, reading.black_ms);
                if self.phase == Phase::Playing && self.last_clock != Some(times) {
                    self.last_clock = Some(times);
                    out.push(Event::Clock {
                        white_ms: times.0,
                        black_ms: times.1,
                        ply: self.ply(),
                        t_ms: t,
                    });
                }
            }
        }
        self.advance(t, out);
    }

    /// Does, at its own time, whatever fell due before `t` (a press judged, a lost lift
    /// corrected, a move made final): on the board as it stood then, as a timer would have,
    /// however long the board then stayed silent. [`Machine::observe`] calls it itself; a
    /// caller that knows when the next observation comes may call it first, to tell the
    /// timers' events from the observation's.
    pub fn catch_up(&mut self, t: Millis, out: &mut Vec<Event>) {
        let mut last = None;
        while let Some(due) = self.next_deadline()
            && due < t
            && last.is_none_or(|l| due > l)
        {
            self.advance(due, out);
            last = Some(due);
        }
    }

    /// Lets time pass without an observation: a clock press whose board updates did not
    /// follow is judged once the grace period is over. Call it from a timer when the board is
    /// silent; [`Machine::observe`] calls it itself.
    pub fn advance(&mut self, now: Millis, out: &mut Vec<Event>) {
        self.now = self.now.max(now);
        self.correct_due_surplus(now, out);
        self.judge_overtaken_press(now, out);
        if let Some(press) = self.pending_press
            && now >= press.due
        {
            self.pending_press = None;
            if self.phase == Phase::Playing
                && !self.try_complete(press, out)
                && self.is_for_next_move(press)
            {
                match self.wait_for_motion(press, now) {
                    Some(due) => self.pending_press = Some(Press { due, ..press }),
                    None => self.judge_press(press.by, press.t_ms, out),
                }
            }
        }
        self.settle_completion(now);
        self.confirm_end(now, out);
        if let Some((signal, at)) = self.pending_signal.clone()
            && now >= at.saturating_add(SIGNAL_STANDS_MS)
        {
            self.pending_signal = None;
            if self.phase == Phase::Playing {
                self.result_signal(signal, at, out);
            }
        }
    }

    /// Judges a press the opponent's press overtook, once due; the opponent's press then
    /// stands for the opponent's last move in the game as read.
    fn judge_overtaken_press(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(press) = self.overtaken_press.filter(|p| now >= p.due) else {
            return;
        };
        self.overtaken_press = None;
        if self.phase != Phase::Playing
            || self.try_complete(press, out)
            || !self.is_for_next_move(press)
        {
            return;
        }
        self.press_reading = None;
        self.judge_press(press.by, press.t_ms, out);
        let n = self.game.plies();
        if let Some(reply) = self.pending_press.as_mut()
            && reply.due != WHEN_RESTORED
            && n > 0
            && self.game.positions()[n - 1].turn() == reply.by
        {
            reply.ply = n;
        }
    }

    /// True when `press` is by the side to move, for the move not yet on the board.
    fn is_for_next_move(&self, press: Press) -> bool {
        press.ply == self.game.plies() + 1 && self.game.position().turn() == press.by
    }

    /// When to judge `press` again instead of now: a hand still moving pieces (often the
    /// opponent already answering) is waited for, a while, before the press is judged on
    /// the board, and so is the search for a lost update.
    fn wait_for_motion(&self, press: Press, now: Millis) -> Option<Millis> {
        let grace = self.config.press_grace_ms;
        let wait_until = press.t_ms.saturating_add(PRESS_WAITS_FOR_MOTION * grace);
        let in_motion = || {
            matches!(
                self.read_board(),
                Reading::Unexplained { in_progress: true }
            )
        };
        // A piece the board shows one too many of is looked into before the press is
        // judged: a lost update, not an illegal move, may explain the board. Once: a search
        // that found nothing is not waited for again.
        if let Some((_, _, due)) = self.surplus
            && due > now
            && due <= press.t_ms.saturating_add(self.config.missed_update_ms)
            && !matches!(self.read_board(), Reading::Current | Reading::Adopt { .. })
        {
            return Some(due);
        }
        (now < wait_until && in_motion()).then(|| now.saturating_add(grace).min(wait_until))
    }

    /// Looks for a lost lift once a surplus piece has stood long enough; before anything
    /// is settled, so that the move it corrects is still open.
    fn correct_due_surplus(&mut self, now: Millis, out: &mut Vec<Event>) {
        if let Some((sq, placed_at, due)) = self.surplus
            && now >= due
        {
            self.surplus = None;
            if self.phase != Phase::Playing {
                return;
            }
            if self.correct_missed_lift(sq, placed_at, now, out) {
                self.read_and_adopt(now, out);
            } else if self.surplus_at(sq) {
                // Moves still being made may explain it later: look again after as long.
                self.surplus = Some((
                    sq,
                    placed_at,
                    now.saturating_add(self.config.missed_update_ms),
                ));
            }
        }
    }

    /// Ends the game at an automatic end once the move that reached it stands: made final
    /// by a press and its grace period, or its landing square kept for [`MachineConfig::end_confirm_ms`]. A move that
    /// was revised meanwhile (the piece slid on) takes its end with it.
    fn confirm_end(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(pending) = self.pending_end.clone() else {
            return;
        };
        if self.phase != Phase::Playing || self.game.plies() != pending.ply {
            self.pending_end = None;
            return;
        }
        // A press confirms once its grace period is over: the board may still report the
        // piece going on past the square that ended the game.
        let confirmed = self.settled >= pending.ply
            || now >= pending.t_ms.saturating_add(self.config.end_confirm_ms);
        if confirmed && self.landing_stands(pending.ply) {
            self.pending_end = None;
            self.finish(pending.end, pending.t_ms, out);
        }
    }

    /// Makes a press-confirmed move final once its grace period is over.
    fn settle_completion(&mut self, now: Millis) {
        if let Some(c) = self.completion
            && now >= self.completion_due(c)
            && !self.slide_may_continue(c.ply)
            && !self.held_since_made(c.ply)
            && !self.slide_reported_ahead(c.ply)
        {
            self.completion = None;
            self.settle(c.ply.max(self.settled));
        }
    }

    /// True while the piece `ply` moved stands also further along its line, one more of its
    /// kind than the game can have: the lift from its landing square is not reported yet
    /// (a slide reported place before lift), so the move may still be going on.
    fn slide_reported_ahead(&self, ply: usize) -> bool {
        let Some(played) = ply.checked_sub(1).and_then(|i| self.game.moves().get(i)) else {
            return false;
        };
        let (Some(from), to) = (played.mv.from(), played.mv.to()) else {
            return false;
        };
        self.surplus.is_some_and(|(sq, _, _)| {
            self.physical.board().piece_at(sq) == self.game.positions()[ply].board().piece_at(to)
                && shakmaty::attacks::between(from, sq).contains(to)
        })
    }

    /// When a press-confirmed move becomes final: the grace period after the press, or after
    /// the move's piece last arrived when the board reported it arriving after the press (a
    /// slide that went on past the press may go on further).
    fn completion_due(&self, c: Completion) -> Millis {
        let reached = self.reached_at.get(c.ply).copied().unwrap_or(0);
        c.due
            .max(reached.saturating_add(self.config.press_grace_ms))
    }

    /// When [`Machine::advance`] next has something to decide, if anything is waiting.
    pub fn next_deadline(&self) -> Option<Millis> {
        let press = self
            .pending_press
            .iter()
            .chain(&self.overtaken_press)
            .map(|p| p.due)
            .filter(|&due| due != WHEN_RESTORED)
            .min();
        // A completion whose landing square was vacated again waits for the board, not the
        // clock.
        let settle = self
            .completion
            .filter(|c| {
                !self.slide_may_continue(c.ply)
                    && !self.held_since_made(c.ply)
                    && !self.slide_reported_ahead(c.ply)
            })
            .map(|c| self.completion_due(c));
        let surplus = self.surplus.map(|(_, _, due)| due);
        // An end whose move's landing square was vacated again waits for the board too.
        let end = self
            .pending_end
            .as_ref()
            .filter(|p| self.landing_stands(p.ply))
            .map(|p| p.t_ms.saturating_add(self.config.end_confirm_ms));
        let signal = self
            .pending_signal
            .as_ref()
            .map(|(_, at)| at.saturating_add(SIGNAL_STANDS_MS));
        [press, settle, surplus, end, signal]
            .into_iter()
            .flatten()
            .min()
    }

    /// The board reported `sq` at `t`.
    fn seen(&mut self, sq: Square, t: Millis) {
        self.seen_before[sq as usize] = self.last_seen[sq as usize];
        self.last_seen[sq as usize] = Some(t);
        self.undated.discard(sq);
    }

    fn map(&self, sq: Square) -> Square {
        if self.rotated { sq.rotate_180() } else { sq }
    }

    fn sensed(&self) -> Sensed<'_> {
        Sensed {
            board: self.physical.board(),
            identifies: self.config.identifies_pieces,
            placed: self.physical.placed(),
        }
    }

    fn alert(&self, article: &str, side: Option<Color>, t: Millis, severity: Severity) -> Alert {
        Alert {
            article: article.to_string(),
            side: side.map(ColorName::from),
            ply: ply_number(self.game.plies() + 1),
            t_ms: t,
            evidence_ms: Vec::new(),
            squares: Vec::new(),
            severity,
            message: String::new(),
        }
    }

    // ----- lifts, placements and the hands -----

    fn on_lift(&mut self, sq: Square, piece: shakmaty::Piece, t: Millis, out: &mut Vec<Event>) {
        let lifter = piece.color;
        let lapsed: Vec<(u32, Color)> = self
            .open_claims
            .iter()
            .copied()
            .filter(|&(_, mover)| mover != lifter)
            .collect();
        self.open_claims.retain(|&(_, mover)| mover == lifter);
        for (ply, mover) in lapsed {
            let mut a = self.alert("4.8", Some(!mover), t, Severity::Info);
            a.ply = ply;
            a.evidence_ms = vec![t];
            a.squares = vec![sq.to_string()];
            a.message = format!(
                "4.8: {} touched a piece on {sq}; the right to claim about ply {ply} lapsed",
                color_word(!mover)
            );
            out.push(Event::Alert(a));
        }
        let in_flight = self.physical.in_flight();
        let partner = in_flight[..in_flight.len().saturating_sub(1)]
            .iter()
            .rev()
            .find(|f| {
                t.saturating_sub(f.t_ms) <= self.config.two_hands_threshold_ms
                    && far(f.from, sq)
                    && self.one_move_could_involve(f.from, sq)
            })
            .copied();
        if let Some(other) = partner {
            self.two_hands(other.from, other.t_ms, sq, t, "lifted", out);
        }
        self.lifts.push(Lift { sq, piece, t_ms: t });
    }

    fn on_place(&mut self, sq: Square, piece: Option<Piece>, t: Millis, out: &mut Vec<Event>) {
        if let Some(piece) = piece {
            self.note_placement(sq, piece, t);
        }
        if let Some((other, when)) = self.last_place
            && t.saturating_sub(when) <= self.config.two_hands_threshold_ms
            && far(other, sq)
            && self.one_move_could_involve(other, sq)
        {
            self.two_hands(other, when, sq, t, "placed", out);
        }
        self.last_place = Some((sq, t));
    }

    /// True when one legal move (of the side to move, or a move that may still be revised)
    /// involves both squares: only then can two far-apart actions be one move made with two
    /// hands rather than two players' moves or a knocked piece.
    fn one_move_could_involve(&self, a: Square, b: Square) -> bool {
        let both = Bitboard::from(a) | Bitboard::from(b);
        let positions = self.game.positions();
        positions[self.settled..].iter().any(|pos| {
            pos.legal_moves().into_iter().any(|m| {
                let mut squares = super::search::squares_of(m);
                if let Move::Castle { king, rook } = m
                    && let Some(side) = m.castling_side()
                {
                    let color = pos.turn();
                    squares |= Bitboard::from(king)
                        | Bitboard::from(rook)
                        | Bitboard::from(side.king_to(color))
                        | Bitboard::from(side.rook_to(color));
                }
                both.is_subset(squares)
            })
        })
    }

    fn two_hands(
        &mut self,
        a: Square,
        ta: Millis,
        b: Square,
        tb: Millis,
        verb: &str,
        out: &mut Vec<Event>,
    ) {
        let ply = self.ply() + 1;
        if self.two_hands_ply == Some(ply) {
            return;
        }
        self.two_hands_ply = Some(ply);
        let side = self.game.position().turn();
        let mut alert = self.alert("7.5.4", Some(side), tb, Severity::Warning);
        alert.evidence_ms = vec![ta, tb];
        alert.squares = vec![a.to_string(), b.to_string()];
        alert.message = format!(
            "suspected 7.5.4: pieces {verb} on {a} and {b} within {} ms (threshold {} ms); one \
             hand can hardly do that. The arbiter decides.",
            tb.saturating_sub(ta),
            self.config.two_hands_threshold_ms
        );
        out.push(Event::Alert(alert));
    }

    // ----- the board changed -----

    fn board_changed(&mut self, t: Millis, out: &mut Vec<Event>) {
        match self.phase {
            Phase::Ended => {
                // The arbiter may still be moving the kings: the signal that stands counts.
                if let Some(before) = self.signalled
                    && let Some(signal) = ending::result_signal(self.physical.board())
                    && signal.result != before
                {
                    self.signalled = Some(signal.result);
                    self.finish(signal, t, out);
                }
                self.look_for_start(t, out);
            }
            Phase::Waiting => self.look_for_start(t, out),
            Phase::Playing => match ending::result_signal(self.physical.board()) {
                Some(signal) => {
                    if self
                        .pending_signal
                        .as_ref()
                        .is_none_or(|(pending, _)| pending.result != signal.result)
                    {
                        self.pending_signal = Some((signal, t));
                    }
                }
                None => {
                    self.pending_signal = None;
                    self.reconcile(t, out);
                }
            },
        }
    }

    fn look_for_start(&mut self, t: Millis, out: &mut Vec<Event>) {
        match self.starts.recognise(self.physical.board()) {
            SetUp::Start(start) => self.begin(*start, t, out),
            SetUp::Wrong(squares) => {
                if squares != self.wrong_setup {
                    let mut a = self.alert("7.2.1", None, t, Severity::Warning);
                    a.ply = 0;
                    a.squares = squares.iter().map(ToString::to_string).collect();
                    a.message = format!(
                        "7.2.1: the set-up is wrong on {}; no game starts until it is corrected",
                        a.squares.join(" ")
                    );
                    out.push(Event::Alert(a));
                    self.wrong_setup = squares;
                }
            }
            SetUp::Nothing => {}
        }
    }

    fn begin(&mut self, start: Start, t: Millis, out: &mut Vec<Event>) {
        if start.rotated {
            self.rotated = !self.rotated;
            self.physical.rotate_180();
        }
        let fresh = Machine::new(self.config.clone());
        let physical = std::mem::replace(&mut self.physical, fresh.physical.clone());
        let rotated = self.rotated;
        *self = Machine {
            physical,
            rotated,
            phase: Phase::Playing,
            game: start.game,
            chess960: start.chess960,
            turn_start: vec![t],
            reached_at: vec![t],
            ..fresh
        };
        self.physical.clear_placed();
        out.push(Event::GameStart {
            t_ms: t,
            fen: self.game.fen(),
            chess960: self.chess960,
            rotated: self.rotated,
        });
    }

    fn reconcile(&mut self, t: Millis, out: &mut Vec<Event>) {
        self.read_and_adopt(t, out);
        if self.phase != Phase::Playing || self.sensed().diff(self.game.position().board()).any() {
            return;
        }
        // An overtaken press is for the ply before the opponent's: it completes first.
        if let Some(press) = self.overtaken_press
            && self.try_complete(press, out)
        {
            self.overtaken_press = None;
        }
        if let Some(press) = self.pending_press
            && self.try_complete(press, out)
        {
            self.pending_press = None;
        }
    }

    /// Completes the ply a press was for, if the game now holds that ply by the presser.
    fn try_complete(&mut self, press: Press, out: &mut Vec<Event>) -> bool {
        let ply = press.ply;
        let by_presser = ply >= 1
            && ply <= self.game.plies()
            && self.game.positions()[ply - 1].turn() == press.by;
        if by_presser && ply > self.completed && self.landing_stands(ply) {
            self.complete(press.by, press.t_ms, ply, out);
        }
        by_presser
    }

    /// True when the last recorded move is `ply`, its landing square was vacated again and
    /// the opponent had lifted nothing before that: the piece may have only passed there.
    /// After an opponent's lift the move was over; its landing square emptying is the next
    /// move beginning.
    fn slide_may_continue(&self, ply: usize) -> bool {
        if self.landing_stands(ply) {
            return false;
        }
        let Some(played) = ply.checked_sub(1).and_then(|i| self.game.moves().get(i)) else {
            return false;
        };
        let made = self.reached_at.get(ply).copied().unwrap_or(0);
        let vacated = self.last_seen[played.mv.to() as usize].unwrap_or(Millis::MAX);
        let mover = self.game.positions()[ply - 1].turn();
        !self
            .lifts
            .iter()
            .any(|l| l.piece.color != mover && l.t_ms >= made && l.t_ms <= vacated)
    }

    /// True when `ply` is the last recorded move and play has been held since just after it
    /// was read (within a scan): its position never stood, so the move may have been a
    /// knocked piece, and it stays open to revision until the board explains itself.
    fn held_since_made(&self, ply: usize) -> bool {
        if self.held.is_none() || ply == 0 || ply != self.game.plies() {
            return false;
        }
        let made = self.reached_at.get(ply).copied().unwrap_or(0);
        let mover = self.game.positions()[ply - 1].turn();
        let occupied = self.game.position().board().occupied();
        let since_made = |l: &&Lift| l.t_ms >= made && l.t_ms <= self.held_since;
        // An opponent's piece lifted after one of the mover's that could take it is the
        // victim of the mover's own hand, not a reply.
        let taken_by_mover = |victim: &Lift| {
            self.lifts.iter().filter(since_made).any(|l| {
                l.piece.color == mover
                    && l.t_ms <= victim.t_ms
                    && shakmaty::attacks::attacks(l.sq, l.piece, occupied).contains(victim.sq)
            })
        };
        let replied = self
            .lifts
            .iter()
            .filter(since_made)
            .any(|l| l.piece.color != mover && !taken_by_mover(l));
        !replied && self.held_since <= made.saturating_add(self.config.report_reorder_ms)
    }

    /// False when the last recorded move is `ply` and a square it put a piece on differs
    /// from the game again: the piece was lifted on, so the press does not confirm a square
    /// it only passed through, and the move stays open to revision.
    fn landing_stands(&self, ply: usize) -> bool {
        let Some(played) = self.game.moves().last() else {
            return true;
        };
        if ply != self.game.plies() {
            return true;
        }
        let landed = match played.mv {
            Move::Castle { king, rook } => match played.mv.castling_side() {
                Some(side) => {
                    let color = self.game.positions()[ply - 1].turn();
                    Bitboard::from(side.king_to(color)) | Bitboard::from(side.rook_to(color))
                }
                None => Bitboard::from(king) | Bitboard::from(rook),
            },
            m => Bitboard::from(m.to()),
        };
        let differing = self.sensed().diff(self.game.position().board());
        (landed & differing).is_empty()
    }

    fn read_and_adopt(&mut self, t: Millis, out: &mut Vec<Event>) {
        match self.read_board() {
            Reading::Current => {
                self.doubt = None;
                self.set_held(None, t, out);
            }
            Reading::Adopt { from, .. }
                if self.pending_end.is_some() && from >= self.game.plies() =>
            {
                // The game is over if the last move stands: nothing is played after it.
            }
            Reading::Adopt { from, moves, doubt } => {
                let settled_before = self.settled;
                self.adopt(from, &moves, t, out);
                // A reading of moves made final may record fewer of them.
                self.settled = self.settled.min(self.game.plies());
                // Moves read from a doubtful reconstruction stay open together until the
                // next move is made, and make no move before them final: a restored piece
                // may still explain the board better.
                if matches!(
                    doubt,
                    Some(Doubt::Overlapping { .. } | Doubt::UnseenArrival { .. })
                ) {
                    self.settled = self.settled.min(from).min(settled_before);
                }
                let undecided = matches!(doubt, Some(Doubt::Sequences { .. }));
                match doubt {
                    Some(doubt) => self.raise_doubt(doubt, t, out),
                    None => self.doubt = None,
                }
                if self.phase == Phase::Playing {
                    let d = self.sensed().diff(self.game.position().board());
                    let held = if d.is_empty() {
                        None
                    } else if undecided {
                        Some(d)
                    } else {
                        self.held
                    };
                    self.set_held(held, t, out);
                }
            }
            Reading::Unexplained { in_progress } => {
                if let SetUp::Start(start) = self.starts.recognise(self.physical.board())
                    && self.settled > 0
                {
                    self.begin(*start, t, out);
                    return;
                }
                if (!in_progress && !self.signal_under_way()) || self.held.is_some() {
                    let d = self.sensed().diff(self.game.position().board());
                    self.set_held(Some(d), t, out);
                }
            }
        }
    }

    /// True while the board differs from the game only by kings lifted or put on the centre
    /// squares, and pieces taken off the centre squares to make room: the players are
    /// signalling a result, not displacing pieces.
    fn signal_under_way(&self) -> bool {
        let sensed = self.physical.board();
        let game = self.game.position().board();
        let d = self.sensed().diff(game);
        d.any()
            && d.into_iter().all(|sq| {
                let centre = ending::CENTRE.contains(sq);
                match sensed.piece_at(sq) {
                    None => centre || game.piece_at(sq).is_some_and(|p| p.role == Role::King),
                    Some(p) => centre && p.role == Role::King,
                }
            })
    }

    /// Pieces of the kind on `sq` that the board shows beyond what any position of the game
    /// still open has: a lift of one of them was not reported, or not yet.
    fn surplus_at(&self, sq: Square) -> bool {
        let Some(piece) = self.physical.board().piece_at(sq) else {
            return false;
        };
        let sensed = self.physical.board().by_piece(piece).count();
        let most = self.game.positions()[self.settled..]
            .iter()
            .map(|pos| pos.board().by_piece(piece).count())
            .max()
            .unwrap_or(0);
        sensed > most
    }

    /// A piece placed on `placed_on` long enough ago that the board cannot hold: one more of
    /// its kind than any position of the game still open has, so the lift of one of its kind
    /// was lost (a dropped update, or a slide whose passing square's "emptied" was lost).
    /// When forgetting exactly one of them makes the board a legal continuation (or one being
    /// made), that square is taken as emptied and the arbiter is told. Returns true when it
    /// corrected the picture.
    fn correct_missed_lift(
        &mut self,
        placed_on: Square,
        placed_at: Millis,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.surplus_at(placed_on) {
            return false;
        }
        if let Reading::Current | Reading::Adopt { doubt: None, .. } = self.read_board() {
            return false;
        }
        let Some(piece) = self.physical.board().piece_at(placed_on) else {
            return false;
        };
        // Each square of the kind may be the one whose "emptied" was lost, the placed one
        // too (a slide's passing square). A reading that completes the board beats one that
        // leaves a move in progress.
        let mut complete = Vec::new();
        let mut in_progress = Vec::new();
        for sq in self.physical.board().by_piece(piece) {
            let mut trial = self.physical.clone();
            trial.forget(sq);
            let kept = std::mem::replace(&mut self.physical, trial);
            let reports = (self.last_seen, self.seen_before, self.undated);
            self.seen(sq, placed_at);
            match self.read_board() {
                // The placed piece only passed there: a move of its kind went over it.
                Reading::Adopt {
                    moves, doubt: None, ..
                } if sq == placed_on => {
                    if moves.iter().any(|m| {
                        m.role() == piece.role
                            && m.from().is_some_and(|from| {
                                shakmaty::attacks::between(from, m.to()).contains(sq)
                            })
                    }) {
                        complete.push(sq);
                    }
                }
                _ if sq == placed_on => {}
                Reading::Current | Reading::Adopt { doubt: None, .. } => complete.push(sq),
                Reading::Unexplained { in_progress: true } => in_progress.push(sq),
                Reading::Unexplained { .. } | Reading::Adopt { .. } => {}
            }
            self.physical = kept;
            (self.last_seen, self.seen_before, self.undated) = reports;
        }
        let (([missed], _) | ([], [missed])) = (&complete[..], &in_progress[..]) else {
            return false;
        };
        let missed = *missed;
        self.physical.forget(missed);
        self.seen(missed, placed_at);
        let mut a = self.alert("8.5.3", None, t, Severity::Info);
        a.evidence_ms = vec![t];
        a.squares = vec![missed.to_string(), placed_on.to_string()];
        a.message = if missed == placed_on {
            format!(
                "the board reported a piece placed on {placed_on} but never that it left again \
                 (a lost update); {missed} is taken as empty"
            )
        } else {
            format!(
                "the board reported a piece placed on {placed_on} but never that one left \
                 {missed} (a lost update); {missed} is taken as empty"
            )
        };
        out.push(Event::Alert(a));
        true
    }

    /// What explains the board: the game as it is, one more move, a revision of moves not
    /// yet confirmed, or a reconstruction of missed moves.
    fn read_board(&self) -> Reading {
        self.read(false)
    }

    /// [`Machine::read_board`]; `pressed` when a clock press says the moves are made, so a
    /// board that could still be a move in progress is explained by the moves if they do.
    fn read(&self, pressed: bool) -> Reading {
        let s = self.sensed();
        let positions = self.game.positions();
        let n = positions.len() - 1;
        let current = &positions[n];
        if s.diff(current.board()).is_empty() {
            return Reading::Current;
        }
        if let Some((m, doubt)) = choose(&s.single_moves(current)) {
            return self.one_move_from(n, m, doubt);
        }
        if let Some(resolved) = self.resolve_doubt(&s) {
            return resolved;
        }
        let revisable = self.settled..n;
        for k in revisable.clone().rev() {
            let pos = &positions[k];
            let back_here = s.diff(pos.board()).is_empty();
            let single = choose(&s.single_moves(pos));
            if !back_here && single.is_none() {
                continue;
            }
            // Both players' moves withdrawn is rarer than both playing on (a repetition,
            // fast play): when as many moves from here explain the board, they are the game.
            if n - k >= 2
                && let Explanation::Unique(on) = s.sequences(current, n - k, &self.reports(n))
                && on.len() == n - k
            {
                return Reading::Adopt {
                    from: n,
                    moves: on,
                    doubt: None,
                };
            }
            let kept = k - self.settled + usize::from(!back_here);
            if let Some(shorter) = self.fewer_moves_before(&s, k, kept) {
                return shorter;
            }
            return match single {
                Some((m, doubt)) if !back_here => self.one_move_from(k, m, doubt),
                _ => Reading::Adopt {
                    from: k,
                    moves: Vec::new(),
                    doubt: None,
                },
            };
        }
        // The last move's piece standing on a further square, and nothing else changed: no
        // piece is in the air, whatever the last report was.
        if let Some(reading) = self.moved_on(&s, false).or_else(|| self.both_moved_on(&s)) {
            return reading;
        }
        let in_progress = s.in_progress(current)
            || revisable.clone().any(|k| s.in_progress(&positions[k]))
            || (self.settled..=n).any(|k| s.in_progress_after_one(&positions[k]));
        // A lift completes no sequence of moves: a piece just lifted is in the air, not
        // captured on a square nobody saw it reach.
        if (in_progress || self.lifted_last) && !pressed {
            return Reading::Unexplained { in_progress };
        }
        // The shortest explanation counted from the oldest revisable position wins; on a
        // tie the recorded moves are kept. A shorter one is not taken when its moves
        // overlap (a move begun before the one before it was over) by more than a hand's
        // answer beyond the longer one's: the piece stood where the longer one leaves it.
        // Unless the longer one has a move seen finished before the move it answers, which
        // hands do not do: the longer one is then as doubtful, and only an overlap beyond
        // what a scan can reorder speaks against the shorter (a scanning board reports a
        // blitz reply's start before the end of the move it answers).
        let mut best: Option<(usize, Reading, Timing)> = None;
        for k in std::iter::once(n).chain(revisable.rev()) {
            let kept = k - self.settled;
            let limit = best.as_ref().map_or(usize::MAX, |(total, ..)| total - 1);
            let depth = self
                .config
                .max_reconstruction_plies
                .min(limit.saturating_sub(kept));
            if depth < 2 {
                continue;
            }
            let reports = self.reports(k);
            let explanation = match s.sequences(&positions[k], depth, &reports) {
                Explanation::Ambiguous(seqs) => self.promotion_seen(reports.since, seqs),
                explanation => explanation,
            };
            let (len, reading, timing) = match explanation {
                Explanation::None => continue,
                Explanation::Unique(seq) => {
                    let timing = Timing::of(&reports, &positions[k], &seq);
                    let worse = best.as_ref().is_some_and(|(.., longer)| {
                        let beyond =
                            |ms: Millis| timing.overlap > longer.overlap.saturating_add(ms);
                        let answer = self.config.two_hands_threshold_ms;
                        beyond(answer)
                            && (longer.out_of_order <= timing.out_of_order
                                || beyond(answer.saturating_add(self.config.report_reorder_ms)))
                    });
                    if worse {
                        continue;
                    }
                    (
                        seq.len(),
                        self.reconstructed(k, seq, timing.overlap, &reports),
                        timing,
                    )
                }
                Explanation::Ambiguous(seqs) => (
                    seqs[0].len(),
                    Reading::Adopt {
                        from: k,
                        moves: common_prefix(&seqs),
                        doubt: Some(Doubt::Sequences { from: k, seqs }),
                    },
                    Timing::default(),
                ),
            };
            best = Some((kept + len, reading, timing));
        }
        if let Some((_, reading, _)) = best {
            return reading;
        }
        self.moved_on(&s, true)
            .or_else(|| self.reread_final_moves(&s))
            .unwrap_or(Reading::Unexplained { in_progress: false })
    }

    /// The reading of `seq`, the one sequence of moves from position `k` that explains the
    /// board, doubted when its moves overlap in time (`overlap`, from
    /// [`Reports::overlap`]) or a square it needs reached was never reported.
    fn reconstructed(
        &self,
        k: usize,
        seq: Vec<Move>,
        overlap: Millis,
        reports: &Reports<'_>,
    ) -> Reading {
        let unseen = reports.unseen_arrivals(&self.game.positions()[k], &seq);
        let doubt = if overlap > 0 {
            Some(Doubt::Overlapping {
                moves: seq.clone(),
                ms: overlap,
            })
        } else {
            unseen.any().then(|| Doubt::UnseenArrival {
                moves: seq.clone(),
                squares: unseen,
            })
        };
        Reading::Adopt {
            from: k,
            moves: seq,
            doubt,
        }
    }

    /// A reading from a revisable position before `k` that keeps fewer moves than `kept`,
    /// the revisable moves a reading from `k` keeps: moves read from overlapping actions
    /// (a piece knocked on while the opponent moved) may be fewer real moves once the
    /// knocked piece is back.
    fn fewer_moves_before(&self, s: &Sensed<'_>, k: usize, kept: usize) -> Option<Reading> {
        let positions = self.game.positions();
        (self.settled..k).find_map(|j| {
            let depth = kept.checked_sub(j - self.settled + 1)?;
            if depth == 0 {
                return None;
            }
            if let Some((m, doubt)) = choose(&s.single_moves(&positions[j])) {
                return Some(self.one_move_from(j, m, doubt));
            }
            if depth < 2 {
                return None;
            }
            let reports = self.reports(j);
            match s.sequences(&positions[j], depth, &reports) {
                Explanation::Unique(seq) => {
                    let overlap = reports.overlap(&positions[j], &seq);
                    Some(self.reconstructed(j, seq, overlap, &reports))
                }
                _ => None,
            }
        })
    }

    /// Keeps a piece the board named on `sq` at `t` (boards that name pieces only).
    fn note_placement(&mut self, sq: Square, piece: Piece, t: Millis) {
        if !self.config.identifies_pieces {
            return;
        }
        if self.placements.len() == PLACEMENTS_KEPT {
            self.placements.remove(0);
        }
        self.placements.push((sq, piece, t));
    }

    /// Sequences that differ only in what their pawns promoted to are told apart by what
    /// the board reported on the promotion squares since `since`: a DGT board names the
    /// piece put there, even when it was taken again before the next scan.
    fn promotion_seen(&self, since: Millis, seqs: Vec<Vec<Move>>) -> Explanation {
        let seen = |m: &Move| match m.promotion() {
            None => true,
            Some(role) => self.placements.iter().any(|&(sq, piece, t)| {
                // A piece of the promoting side: the opponent's back rank is its goal.
                let promoting = sq.rank() == (!piece.color).backrank();
                sq == m.to() && promoting && piece.role == role && t >= since
            }),
        };
        let mut matching = seqs.iter().filter(|seq| seq.iter().all(seen));
        match (matching.next(), matching.next()) {
            (Some(seq), None) if seqs.iter().any(|q| q.iter().any(|m| m.is_promotion())) => {
                Explanation::Unique(seq.clone())
            }
            _ => Explanation::Ambiguous(seqs),
        }
    }

    /// The last move is final, but play was held soon after it and the board now
    /// shows its piece standing on another square it could have reached instead: the piece
    /// was carried on (a slide the board reported late) or it was released and moved again
    /// (4.7). Rather than hold the game, the longer move is recorded and the arbiter told.
    /// With `with_replies`, the longer move may be followed by moves made meanwhile (once
    /// play is held); without, it must explain the board alone.
    fn moved_on(&self, s: &Sensed<'_>, with_replies: bool) -> Option<Reading> {
        let n = self.game.plies();
        if n == 0 || n > self.settled || (with_replies && self.held.is_none()) {
            return None;
        }
        let made = self.reached_at.get(n).copied().unwrap_or(0);
        let doubted = self.doubted_since();
        if doubted > made.saturating_add(self.config.moved_on_ms) {
            return None;
        }
        let first = self.game.moves()[n - 1].mv;
        let instead = |m: &Move| {
            let carried_on =
                m.from() == first.from() && m.role() == first.role() && m.to() != first.to();
            carried_on || matches!(*m, Move::Castle { rook, .. } if first.from() == Some(rook))
        };
        let before = &self.game.positions()[n - 1];
        // The longer move alone, or followed by the moves made meanwhile.
        let moves = match s.single_moves(before)[..] {
            [(m, _)] => instead(&m).then(|| vec![m])?,
            [] if with_replies => match s.sequences(
                before,
                self.config.max_reconstruction_plies,
                &self.reports(n - 1),
            ) {
                Explanation::Unique(seq) if seq.first().is_some_and(instead) => seq,
                _ => return None,
            },
            _ => return None,
        };
        // The king first, then the rook: castling as 4.4.1 wants it, whatever the wait.
        let king_first = moves[0].is_castle() && first.role() == Role::King;
        Some(Reading::Adopt {
            from: n - 1,
            doubt: (!king_first).then(|| Doubt::MovedOn {
                first,
                stood_ms: doubted.saturating_sub(made),
            }),
            moves,
        })
    }

    /// The moves recorded from position `k` on.
    fn moves_since(&self, k: usize) -> Vec<Move> {
        self.game.moves()[k..].iter().map(|p| p.mv).collect()
    }

    /// Since when the board has shown what is being read: since play was held, or now.
    fn doubted_since(&self) -> Millis {
        if self.held.is_some() {
            self.held_since
        } else {
            self.now
        }
    }

    /// The last two moves' pieces both standing further along their lines, and nothing
    /// else changed: both players' pieces paused on the way and went on, each pause read as
    /// the move (a press may have made the first final meanwhile, on the board as it was then
    /// reported). Read as the two longer moves from the position before them, with a
    /// warning, when the board showed this within [`MachineConfig::moved_on_ms`] of the
    /// first pause and no other pair of moves explains it.
    fn both_moved_on(&self, s: &Sensed<'_>) -> Option<Reading> {
        let n = self.game.plies();
        let from = n.checked_sub(2)?;
        if from < self.settled.saturating_sub(REREAD_PLIES) {
            return None;
        }
        let paused = self.reached_at.get(from + 1).copied()?;
        let doubted = self.doubted_since();
        if doubted > paused.saturating_add(self.config.moved_on_ms) {
            return None;
        }
        let start = &self.game.positions()[from];
        let Explanation::Unique(moves) = s.sequences_within(start, 2..=2, &self.reports(from))
        else {
            return None;
        };
        let withdrawn = self.moves_since(from);
        // A first move its player pressed for before the reply began stood, and was
        // answered: its piece going on later is a move of its own.
        let replied_to_pressed = withdrawn.get(1).and_then(|reply| {
            let pressed = self
                .turn_start
                .get(from + 1)
                .copied()
                .filter(|&p| p > paused)?;
            let mover = self.game.positions()[from].turn();
            let began = self.first_lift(reply.from()?, !mover, *self.reached_at.get(from)?)?;
            Some(pressed < began)
        });
        if replied_to_pressed == Some(true) {
            return None;
        }
        let went_on = moves.iter().zip(&withdrawn).all(|(m, w)| {
            m.role() == w.role()
                && m.from() == w.from()
                && m.from()
                    .is_some_and(|from| shakmaty::attacks::between(from, m.to()).contains(w.to()))
        });
        went_on.then(|| Reading::Adopt {
            from,
            moves: moves.clone(),
            doubt: Some(Doubt::Reread {
                from,
                withdrawn,
                moves,
            }),
        })
    }

    /// Moves made final that the board, nothing else explaining it, shows were other moves:
    /// from one of the [`REREAD_PLIES`] positions before the final ones, exactly one legal
    /// sequence leaves the board as it is and agrees with every report since. A press made
    /// them final on the board as it was then reported; a slow scan can report the end of a
    /// slide, or a castling's king, after the press.
    fn reread_final_moves(&self, s: &Sensed<'_>) -> Option<Reading> {
        let n = self.game.plies();
        let positions = self.game.positions();
        for k in (self.settled.saturating_sub(REREAD_PLIES)..self.settled.min(n)).rev() {
            let reports = self.reports(k);
            let moves = match &s.single_moves(&positions[k])[..] {
                [(m, _)] => vec![*m],
                [] => {
                    let depth = self.config.max_reconstruction_plies;
                    match s.sequences(&positions[k], depth, &reports) {
                        Explanation::Unique(seq) => seq,
                        _ => continue,
                    }
                }
                _ => continue,
            };
            let recorded = self.game.moves()[k].mv;
            if moves.first() == Some(&recorded) {
                continue;
            }
            // More moves than were recorded, overlapping in time far more than the recorded
            // ones, are a displaced piece read as moves, not what the recorded moves were.
            let withdrawn = self.moves_since(k);
            if moves.len() > withdrawn.len() {
                let overlap = reports.overlap(&positions[k], &moves);
                let recorded_overlap = reports.overlap(&positions[k], &withdrawn);
                if overlap > recorded_overlap.saturating_add(self.config.two_hands_threshold_ms) {
                    continue;
                }
            }
            // The board must have shown the other move within a scan of the recorded one:
            // later, the recorded move stood and what followed is a new irregularity.
            let arrived = self.reached_at.get(k + 1).copied().unwrap_or(0);
            let shown = (super::search::squares_of(moves[0])
                & !super::search::squares_of(recorded))
            .into_iter()
            .filter_map(|sq| self.last_seen[sq as usize])
            .min();
            if shown.is_none_or(|t| t > arrived.saturating_add(self.config.report_reorder_ms)) {
                continue;
            }
            let rook_first =
                matches!(moves[0], Move::Castle { rook, .. } if recorded.from() == Some(rook));
            let doubt = if rook_first {
                Doubt::MovedOn {
                    first: recorded,
                    stood_ms: 0,
                }
            } else {
                Doubt::Reread {
                    from: k,
                    withdrawn,
                    moves: moves.clone(),
                }
            };
            return Some(Reading::Adopt {
                from: k,
                moves,
                doubt: Some(doubt),
            });
        }
        None
    }

    /// The reading of one move `m` that leaves the board as it is from position `k`: the
    /// move itself, or what it shows the moves before it were (a slide seen late, a double
    /// step taken unseen).
    fn one_move_from(&self, k: usize, m: Move, doubt: Option<Doubt>) -> Reading {
        if doubt.is_none() {
            if k == self.game.plies()
                && let Some(unsampled) = self.unsampled_double_step(m)
            {
                return Reading::Adopt {
                    from: k,
                    moves: vec![m],
                    doubt: Some(unsampled),
                };
            }
            if let Some((moves, doubt)) = self.slide_seen_late(k, m) {
                return Reading::Adopt {
                    from: k - 2,
                    moves,
                    doubt,
                };
            }
        }
        let doubt = doubt
            .or_else(|| self.carried_on_after_standing(k, m))
            .or_else(|| self.gone_on_at_once(k, m));
        Reading::Adopt {
            from: k,
            moves: vec![m],
            doubt,
        }
    }

    /// A revision of the recorded move at position `k` by `m`, the same piece from the same
    /// square going further, after it stood on the recorded square longer than
    /// [`MachineConfig::moved_on_ms`]: no slide pauses that long, so it was released there
    /// and moved again (4.7), or knocked on. Recorded as the longer move with a warning.
    fn carried_on_after_standing(&self, k: usize, m: Move) -> Option<Doubt> {
        let recorded = self.game.moves().get(k)?.mv;
        let carried_on = recorded.from() == m.from()
            && recorded.role() == m.role()
            && recorded.to() != m.to()
            && !recorded.is_castle()
            // A king waiting on its way for the rook is castling king first (4.4.1).
            && !m.is_castle();
        let arrived = self.reached_at.get(k + 1).copied()?;
        let stood = self.now.saturating_sub(arrived);
        (carried_on && stood > self.config.moved_on_ms).then_some(Doubt::MovedOn {
            first: recorded,
            stood_ms: stood,
        })
    }

    /// A move `next` that carries on, along the same line, the piece the same player moved
    /// two plies ago, within one scan of its arrival there: no hand moves twice around an
    /// opponent's move that fast. The board sampled the slide's end late (a scan reports each
    /// square in turn) and the opponent's reply in between. Returns the slide to its end and
    /// the reply, when both are legal and leave the same board. Later than a scan, up to
    /// [`MachineConfig::moved_on_ms`], the same reading is taken with a 4.7 warning: a quick
    /// second move looks the same.
    fn slide_seen_late(&self, k: usize, next: Move) -> Option<(Vec<Move>, Option<Doubt>)> {
        // Once the opponent pressed for the reply, the clock says it is the player's turn:
        // a move now is a move. A move no press confirmed stays open to this reading even
        // when later moves settled it.
        if k < 2 || (k - 2 < self.settled && self.completed > k - 2) {
            return None;
        }
        let (first, slide) = self.carried_on_line(k, next)?;
        let arrived = self.reached_at.get(k - 1).copied().unwrap_or(0);
        let stood = self.now.saturating_sub(arrived);
        // A press for the reply, even one still waiting for the board, makes it the player's
        // turn: a move now is a move.
        let mover = self.game.positions()[k - 2].turn();
        let replied = self.reached_at.get(k).copied().unwrap_or(0);
        // The piece went on when the board first showed it leaving or arriving; a press
        // reported after that came too late to make it a new move.
        let went_on = [next.from(), Some(next.to())]
            .into_iter()
            .flatten()
            .filter_map(|sq| self.last_seen[sq as usize])
            .min()
            .unwrap_or(self.now);
        let reply_pressed =
            self.pressed_at[!mover as usize].is_some_and(|p| p > replied && p <= went_on);
        if reply_pressed || stood > self.config.moved_on_ms {
            return None;
        }
        let mut pos = self.game.positions()[k - 2].clone();
        pos.play_unchecked(slide);
        let reply = self.game.moves()[k - 1].mv;
        pos.play_unchecked(reply);
        let mut expected = self.game.positions()[k].clone();
        expected.play_unchecked(next);
        if pos.board() != expected.board() {
            return None;
        }
        let quick = replied.saturating_sub(arrived);
        let doubt = if quick < self.config.two_hands_threshold_ms {
            Some(Doubt::QuickReply { reply, ms: quick })
        } else {
            // A press by the player for this move before the piece went on says he had let
            // go of it, even when the board reported the piece's arrival after the press.
            let began = self.reached_at.get(k - 2).copied().unwrap_or(0);
            let pressed = self.pressed_at[mover as usize].is_some_and(|p| p > began);
            // Seen going on only after the reply was complete, it may as well be a second
            // move made at once: the same board either way.
            let after_reply = went_on > replied;
            (pressed || after_reply || stood > self.config.report_reorder_ms).then_some(
                Doubt::MovedOn {
                    first,
                    stood_ms: stood,
                },
            )
        };
        Some((vec![slide, reply], doubt))
    }

    /// A move `next` by the player to move at position `k` that carries on, along the same
    /// line, the piece of his last move, a move his press made final, and was begun sooner
    /// after the reply was made than a hand answers: the board may have reported the first
    /// move's end late, after the press and the reply ([`Machine::slide_seen_late`] without
    /// the press). Both moves stay recorded, with a doubt.
    fn gone_on_at_once(&self, k: usize, next: Move) -> Option<Doubt> {
        let (first, _) = self.carried_on_line(k, next)?;
        let mover = self.game.positions()[k].turn();
        let replied = self.reached_at.get(k).copied()?;
        let began = self.first_lift(first.to(), mover, replied)?;
        let ms = began - replied;
        // A move also complete that soon gets the quick-reply warning instead.
        let quick = self.config.two_hands_threshold_ms;
        (ms < quick && self.now.saturating_sub(replied) >= quick).then_some(Doubt::GoneOnAtOnce {
            first,
            next,
            ms,
        })
    }

    /// When `next`, the move of the player to move at position `k`, carries the piece of his
    /// move two plies before (a plain move) on along the same line: that move, and the one
    /// longer move to where `next` ends, if it was legal and the opponent's reply legal
    /// after it.
    fn carried_on_line(&self, k: usize, next: Move) -> Option<(Move, Move)> {
        let first = self.game.moves().get(k.checked_sub(2)?)?.mv;
        let Move::Normal {
            role,
            from,
            capture: None,
            to,
            promotion: None,
        } = first
        else {
            return None;
        };
        let carries_on = next.from() == Some(to)
            && next.role() == role
            && shakmaty::attacks::between(from, next.to()).contains(to);
        if !carries_on {
            return None;
        }
        let mut pos = self.game.positions()[k - 2].clone();
        let longer = pos
            .legal_moves()
            .into_iter()
            .find(|m| m.from() == Some(from) && m.to() == next.to() && m.promotion().is_none())?;
        pos.play_unchecked(longer);
        pos.is_legal(self.game.moves()[k - 1].mv)
            .then_some((first, longer))
    }

    /// A pawn capture `capture` onto the square where the opponent's pawn has just stepped
    /// one square off its start rank, that pawn having left the square before the capturer
    /// was lifted. The board cannot tell this from a pawn that went on two squares and was
    /// taken en passant (3.7.3.1) before its landing square was sampled: the same pieces end
    /// on the same squares, and timing does not settle it (an opponent in a hurry takes the
    /// pawn before its player pressed, a slide pauses). The single step is kept; when the
    /// pawn left within one scan of arriving or before its player pressed, the arbiter is
    /// told.
    fn unsampled_double_step(&self, capture: Move) -> Option<Doubt> {
        let n = self.game.plies();
        if n == 0 || n - 1 < self.settled {
            return None;
        }
        let step = self.game.moves()[n - 1].mv;
        let Move::Normal {
            role: Role::Pawn,
            from: start,
            capture: None,
            to: stop,
            ..
        } = step
        else {
            return None;
        };
        let Move::Normal {
            role: Role::Pawn,
            from: capturer,
            capture: Some(Role::Pawn),
            to,
            ..
        } = capture
        else {
            return None;
        };
        let before = &self.game.positions()[n - 1];
        let double = before.legal_moves().into_iter().find(|m| {
            m.role() == Role::Pawn
                && m.from() == Some(start)
                && m.to().file() == start.file()
                && shakmaty::attacks::between(start, m.to()).contains(stop)
        })?;
        let mut after_double = before.clone();
        after_double.play_unchecked(double);
        let en_passant = Move::EnPassant {
            from: capturer,
            to: stop,
        };
        if to != stop || !after_double.is_legal(en_passant) {
            return None;
        }
        let arrived = self.reached_at.get(n).copied().unwrap_or(0);
        let stepper = before.turn();
        let seen_leaving = self
            .lifts
            .iter()
            .find(|l| l.sq == stop && l.piece.color == stepper && l.t_ms >= arrived)
            .map(|l| l.t_ms);
        let left = match seen_leaving {
            Some(left) => {
                let capturer_lifted = self
                    .lifts
                    .iter()
                    .find(|l| l.sq == capturer && l.t_ms >= arrived)
                    .map_or(Millis::MAX, |l| l.t_ms);
                let before_press = self.pressed_at[stepper as usize].is_some_and(|p| p > left);
                if left > capturer_lifted
                    || (!before_press
                        && left.saturating_sub(arrived) > self.config.report_reorder_ms)
                {
                    return None;
                }
                left
            }
            // The square went straight from the pawn to the capturer: every sample between
            // showed the pawn, so it left within a scan of the capturer's arrival, and only
            // an arrival within a scan of the step leaves room for the double step.
            None => {
                let replaced = self.last_seen[stop as usize].filter(|&t| t >= arrived)?;
                if replaced.saturating_sub(arrived) > self.config.report_reorder_ms {
                    return None;
                }
                replaced
            }
        };
        Some(Doubt::Unsampled {
            step,
            double,
            stood_ms: left.saturating_sub(arrived),
        })
    }

    /// The board's reports that belong to moves made from position `k` on.
    fn reports(&self, k: usize) -> Reports<'_> {
        let since = self.reached_at.get(k).copied().unwrap_or(0);
        Reports {
            times: &self.last_seen,
            previous: &self.seen_before,
            undated: self.undated,
            since,
            slack: self.config.report_reorder_ms,
            outage: self.outage.is_some_and(|o| o >= since),
            placed: self
                .config
                .identifies_pieces
                .then_some(self.placements.as_slice()),
        }
    }

    /// After several move sequences explained a board, the next move tells them apart: when
    /// exactly one of them is followed by a legal move that leaves the board as it now is,
    /// that sequence and the move are the game.
    fn resolve_doubt(&self, s: &Sensed<'_>) -> Option<Reading> {
        let Some(Doubt::Sequences { from, seqs }) = &self.doubt else {
            return None;
        };
        let positions = self.game.positions();
        if *from < self.settled || *from >= positions.len() {
            return None;
        }
        let mut explaining = Vec::new();
        for seq in seqs {
            let mut pos = positions[*from].clone();
            for &m in seq {
                pos.play_unchecked(m);
            }
            if s.diff(pos.board()).is_empty() {
                return None;
            }
            if let [(m, _)] = s.single_moves(&pos)[..] {
                let mut moves = seq.clone();
                moves.push(m);
                explaining.push(moves);
            }
        }
        match explaining.len() {
            1 => Some(Reading::Adopt {
                from: *from,
                moves: explaining.remove(0),
                doubt: None,
            }),
            _ => None,
        }
    }

    fn adopt(&mut self, from: usize, moves: &[Move], t: Millis, out: &mut Vec<Event>) {
        let n = self.game.plies();
        let same = self.game.moves()[from.min(n)..]
            .iter()
            .zip(moves)
            .take_while(|(played, m)| played.mv == **m)
            .count();
        let keep = from + same;
        if keep < n {
            let withdrawn = self.game.moves()[keep..]
                .iter()
                .map(|p| p.uci.clone())
                .collect();
            out.push(Event::Revision {
                ply: ply_number(keep + 1),
                withdrawn,
                t_ms: t,
            });
            self.game.truncate(keep);
            if self.pending_end.as_ref().is_some_and(|p| p.ply > keep) {
                self.pending_end = None;
            }
            self.turn_start.truncate(keep + 1);
            self.reached_at.truncate(keep + 1);
            self.completed = self.completed.min(keep);
            self.open_claims.retain(|&(ply, _)| (ply as usize) <= keep);
        }
        let added = &moves[same..];
        for (i, &m) in added.iter().enumerate() {
            if self.phase != Phase::Playing || self.pending_end.is_some() {
                break;
            }
            // Moves read together share the time of reading; each player's touches end
            // where the next move's piece was lifted.
            let touches_before = added
                .get(i + 1)
                .and_then(|&next| {
                    let since = self.turn_start.last().copied().unwrap_or(0);
                    self.first_lift(next.from()?, !self.game.position().turn(), since)
                })
                .unwrap_or(t.saturating_add(1));
            self.record_touched_before(m, t, touches_before, out);
        }
        if keep < n
            && let Some(c) = self.completion
            && self.phase == Phase::Playing
        {
            let plies = self.game.plies();
            if plies > self.completed && self.game.position().turn() != c.by {
                self.complete(c.by, c.pressed, plies, out);
            }
        }
    }

    fn raise_doubt(&mut self, doubt: Doubt, t: Millis, out: &mut Vec<Event>) {
        if self.doubt.as_ref() == Some(&doubt) {
            return;
        }
        let side = self.game.position().turn();
        let alert = match &doubt {
            Doubt::Sequences { seqs, .. } => {
                let mut a = self.alert("8.5.3", None, t, Severity::Warning);
                let lines: Vec<String> = seqs
                    .iter()
                    .map(|seq| {
                        seq.iter()
                            .map(|m| {
                                shakmaty::uci::UciMove::from_move(*m, self.game.castling_mode())
                                    .to_string()
                            })
                            .collect::<Vec<_>>()
                            .join(" ")
                    })
                    .collect();
                a.message = format!(
                    "board updates were missed and {} move sequences explain the board ({}); \
                     nothing is recorded past ply {} until the board tells them apart",
                    seqs.len(),
                    lines.join(" | "),
                    self.game.plies()
                );
                let mut squares = Bitboard::EMPTY;
                for m in seqs.iter().flatten() {
                    squares |= super::search::squares_of(*m);
                }
                a.squares = squares.into_iter().map(|s| s.to_string()).collect();
                a
            }
            Doubt::Overlapping { moves, ms } => {
                let mut a = self.alert("7.4", None, t, Severity::Warning);
                let sans;
                (a.ply, sans) = self.last_moves(moves.len());
                let mut squares = Bitboard::EMPTY;
                for m in moves {
                    squares |= super::search::squares_of(*m);
                }
                a.squares = squares.into_iter().map(|s| s.to_string()).collect();
                a.message = format!(
                    "the moves {sans} were read from actions that overlapped by {ms} ms (a move \
                     began before the one before it was over): one of them may be a knocked or \
                     displaced piece; the arbiter should check"
                );
                a
            }
            Doubt::UnseenArrival { moves, squares } => {
                let mut a = self.alert("7.4", None, t, Severity::Warning);
                let sans;
                (a.ply, sans) = self.last_moves(moves.len());
                a.squares = squares.into_iter().map(|s| s.to_string()).collect();
                a.message = format!(
                    "the moves {sans} need a piece to arrive on {} and be taken or moved on, \
                     but the board never showed it there: a knocked or displaced piece may \
                     have been read as moves; the arbiter should check",
                    a.squares.join(" ")
                );
                a
            }
            Doubt::QuickReply { reply, ms } => {
                let mut a = self.alert("7.4", Some(!side), t, Severity::Warning);
                a.ply = self.ply();
                a.squares = super::search::squares_of(*reply)
                    .into_iter()
                    .map(|s| s.to_string())
                    .collect();
                a.message = format!(
                    "{} {} was complete {ms} ms after the piece it answers was first seen on \
                     its way, and that piece went on moving: it may be a piece knocked over by \
                     the moving hand; the arbiter should check",
                    color_word(!side),
                    self.game.moves().last().map_or("", |p| p.san.as_str()),
                );
                a
            }
            Doubt::Unsampled {
                step,
                double,
                stood_ms,
            } => {
                let mut a = self.alert("3.7.3.1", Some(!side), t, Severity::Warning);
                a.ply = self.ply().saturating_sub(1);
                let uci = |m: &Move| shakmaty::uci::UciMove::from_standard(*m).to_string();
                a.squares = [step.from(), Some(step.to()), Some(double.to())]
                    .into_iter()
                    .flatten()
                    .map(|s| s.to_string())
                    .collect();
                a.message = format!(
                    "the pawn was seen on {} for {stood_ms} ms before it was taken there; the \
                     board never showed it on {}. Recorded: {} and a capture on {}; if the pawn \
                     went on, the moves were {} and an en passant capture. The arbiter should \
                     check",
                    step.to(),
                    double.to(),
                    uci(step),
                    step.to(),
                    uci(double),
                );
                a
            }
            Doubt::Reread {
                from,
                withdrawn,
                moves,
            } => {
                let mut a = self.alert("8.5.3", None, t, Severity::Warning);
                a.ply = ply_number(from + 1);
                let uci = |ms: &[Move]| {
                    ms.iter()
                        .map(|m| {
                            shakmaty::uci::UciMove::from_move(*m, self.game.castling_mode())
                                .to_string()
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                let mut squares = Bitboard::EMPTY;
                for m in withdrawn.iter().chain(moves) {
                    squares |= super::search::squares_of(*m);
                }
                a.squares = squares.into_iter().map(|s| s.to_string()).collect();
                a.message = format!(
                    "the moves {} from ply {}, already confirmed, were read again as {}: only that \
                     explains what the board reported since (a late or lost update); the \
                     arbiter should check",
                    uci(withdrawn),
                    ply_number(from + 1),
                    uci(moves),
                );
                a
            }
            Doubt::MovedOn { first, .. }
                if first.role() == Role::Rook
                    && self.game.moves().last().is_some_and(|p| p.mv.is_castle()) =>
            {
                let mut a = self.alert("4.4.2", Some(!side), t, Severity::Warning);
                a.ply = self.ply();
                a.squares = first
                    .from()
                    .into_iter()
                    .chain([first.to()])
                    .map(|s| s.to_string())
                    .collect();
                a.message = format!(
                    "the rook was moved first ({}) and the king followed: recorded as \
                     castling; castling with the rook touched first is not allowed \
                     (4.4.2): the rook move stands if the arbiter so decides",
                    shakmaty::uci::UciMove::from_move(*first, self.game.castling_mode()),
                );
                a
            }
            Doubt::MovedOn { first, stood_ms } => {
                let ply = self
                    .game
                    .moves()
                    .iter()
                    .rposition(|p| p.mv.from() == first.from())
                    .unwrap_or(0);
                let slide = self.game.moves().get(ply).map(|p| p.mv);
                let mover = self.game.positions()[ply].turn();
                let mut a = self.alert("4.7", Some(mover), t, Severity::Warning);
                a.ply = ply_number(ply + 1);
                let to = slide.map(|m| m.to());
                a.squares = [first.from(), Some(first.to()), to]
                    .into_iter()
                    .flatten()
                    .map(|s| s.to_string())
                    .collect();
                let to = to.map_or(String::new(), |s| s.to_string());
                a.message = format!(
                    "the piece seen arriving on {} went on to {to} {stood_ms} ms later: it is \
                     recorded as one move to {to}; if it had been released on {} (4.7), that \
                     was the move. The arbiter should check",
                    first.to(),
                    first.to()
                );
                a
            }
            Doubt::GoneOnAtOnce { first, next, ms } => {
                let mover = !side;
                let mut a = self.alert("4.7", Some(mover), t, Severity::Warning);
                a.ply = self.ply();
                a.squares = [first.from(), Some(first.to()), Some(next.to())]
                    .into_iter()
                    .flatten()
                    .map(|s| s.to_string())
                    .collect();
                let from = first.from().map_or(String::new(), |s| s.to_string());
                a.message = format!(
                    "{} moved the {} on {} again, to {}, {ms} ms after {}'s reply was made, \
                     sooner than a hand answers: it may have gone from {from} to {} in one \
                     move, the board reporting it leaving {} only after the reply. Both \
                     moves are recorded; the arbiter should check",
                    color_word(mover),
                    super::touch::name(first.role()),
                    first.to(),
                    next.to(),
                    color_word(side),
                    next.to(),
                    first.to()
                );
                a
            }
            Doubt::PromotionPiece => {
                let mut a = self.alert("4.6", Some(!side), t, Severity::Warning);
                a.ply = self.ply();
                if let Some(last) = self.game.moves().last() {
                    a.squares = vec![last.mv.to().to_string()];
                }
                a.message = "the board cannot tell which piece the pawn became: a queen is \
                             recorded; the arbiter should check"
                    .to_string();
                a
            }
        };
        out.push(Event::Alert(alert));
        self.doubt = Some(doubt);
    }

    /// The ply number of the first of the last `count` recorded moves, and their SAN.
    fn last_moves(&self, count: usize) -> (u32, String) {
        let first = self.game.plies().saturating_sub(count);
        let sans: Vec<&str> = self.game.moves()[first..]
            .iter()
            .map(|p| p.san.as_str())
            .collect();
        (ply_number(first + 1), sans.join(" "))
    }

    fn set_held(&mut self, held: Option<Bitboard>, t: Millis, out: &mut Vec<Event>) {
        if held == self.held {
            return;
        }
        let was_held = self.held.is_some();
        if !was_held {
            self.held_since = t;
        }
        if held.is_none() {
            self.unrestored = None;
        }
        self.held = held;
        if held.is_none() && !was_held {
            return;
        }
        out.push(Event::BoardState {
            held: held.is_some(),
            differing: held
                .unwrap_or(Bitboard::EMPTY)
                .into_iter()
                .map(|s| s.to_string())
                .collect(),
            t_ms: t,
        });
    }

    /// Records one move: touch-move judgement, the move event, the end of the game.
    fn record(&mut self, m: Move, t: Millis, out: &mut Vec<Event>) {
        self.record_touched_before(m, t, t.saturating_add(1), out);
    }

    /// When `color` first lifted a piece from `sq` at or after `since`, if seen.
    fn first_lift(&self, sq: Square, color: Color, since: Millis) -> Option<Millis> {
        self.lifts
            .iter()
            .filter(|l| l.t_ms >= since && l.sq == sq && l.piece.color == color)
            .map(|l| l.t_ms)
            .min()
    }

    /// [`Machine::record`], judging touch-move on the pieces lifted before `touches_before`.
    fn record_touched_before(
        &mut self,
        m: Move,
        t: Millis,
        touches_before: Millis,
        out: &mut Vec<Event>,
    ) {
        let n = self.game.plies();
        let before = self.game.position().clone();
        let mover = before.turn();
        let since = self.turn_start.get(n).copied().unwrap_or(0);
        // The opponent's own pieces count only from his press (he may still adjust them).
        let had_move = self.had_move(n).unwrap_or(0);
        let turn_lifts: Vec<Lift> = self
            .lifts
            .iter()
            .filter(|l| {
                let from = if l.piece.color == mover {
                    had_move
                } else {
                    since
                };
                l.t_ms >= from && l.t_ms < touches_before
            })
            .copied()
            .collect();
        let finding = touch::judge(&before, m, &turn_lifts);
        let Ok(played) = self.game.play(m) else {
            return;
        };
        let ply = ply_number(n + 1);
        out.push(Event::Move {
            ply,
            uci: played.uci.clone(),
            san: played.san.clone(),
            t_ms: t,
            side: mover.into(),
            fen: self.game.fen(),
        });
        if let Some(a) = self.quick_reply(n, t) {
            out.push(Event::Alert(a));
        }
        if let Some(f) = finding {
            let mut a = self.alert(f.article, Some(mover), t, f.severity);
            a.ply = ply;
            a.evidence_ms = f.evidence_ms;
            a.squares = f.squares.iter().map(ToString::to_string).collect();
            a.message = f.message;
            out.push(Event::Alert(a));
            self.open_claims.push((ply, mover));
        }
        self.turn_start.push(t);
        self.reached_at.push(t);
        self.physical.clear_placed();
        let window = n + 1 - self.config.revisable_plies.min(n + 1);
        self.settle(window.max(self.settled));
        if let Some(end) = ending::automatic_end(&self.game, &self.config.dead_position_budget) {
            // A piece sliding over a square that mates is not a move made there: the end
            // stands once the move does (a press, or its landing square kept).
            self.pending_end = Some(PendingEnd {
                end,
                ply: n + 1,
                t_ms: t,
            });
        }
    }

    /// The move just recorded as ply `n + 1` was complete sooner after the move before it
    /// than a hand can answer (the two-hands threshold): the hand that made the move before
    /// may have knocked a piece over, read as this reply.
    fn quick_reply(&self, n: usize, t: Millis) -> Option<Alert> {
        let previous = self.reached_at.get(n).copied().filter(|_| n > 0)?;
        let ms = t.saturating_sub(previous);
        // Moves read together from one observation (a reconstruction) carry no timing.
        if ms == 0 || ms >= self.config.two_hands_threshold_ms {
            return None;
        }
        let played = self.game.moves().get(n)?;
        let side = self.game.positions()[n].turn();
        let mut a = self.alert("7.4", Some(side), t, Severity::Warning);
        a.ply = ply_number(n + 1);
        a.evidence_ms = vec![previous, t];
        a.squares = super::search::squares_of(played.mv)
            .into_iter()
            .map(|s| s.to_string())
            .collect();
        a.message = format!(
            "{} {} was complete {ms} ms after the move before it: quicker than a reply; it \
             may be a piece knocked over by the other player's hand. The arbiter should check",
            color_word(side),
            played.san
        );
        Some(a)
    }

    /// When the player to move after ply `n` got the move: once that move was made (1.3),
    /// before its press.
    fn had_move(&self, n: usize) -> Option<Millis> {
        let pressed = *self.turn_start.get(n)?;
        Some(
            self.reached_at
                .get(n)
                .map_or(pressed, |&made| made.min(pressed)),
        )
    }

    fn settle(&mut self, plies: usize) {
        self.settled = plies.min(self.game.plies());
        if let Some(had_move) = self.had_move(self.settled) {
            self.lifts.retain(|l| l.t_ms >= had_move);
        }
        let oldest_open = self.settled.saturating_sub(REREAD_PLIES);
        if let Some(&since) = self.reached_at.get(oldest_open) {
            self.placements.retain(|&(_, _, t)| t >= since);
        }
    }

    fn finish(&mut self, end: Ending, t: Millis, out: &mut Vec<Event>) {
        out.push(Event::Result {
            result: end.result.to_string(),
            reason: end.reason,
            t_ms: t,
        });
        self.phase = Phase::Ended;
        self.pending_press = None;
        self.overtaken_press = None;
        if self.held.is_some() {
            self.held = None;
        }
    }

    fn result_signal(&mut self, signal: Ending, t: Millis, out: &mut Vec<Event>) {
        let n = self.game.plies();
        let mut keep = n;
        // A king move to the centre that no press confirmed and that came just before the
        // other king completed the signal was the first half of the signal, not a move.
        while keep > self.settled.max(self.completed) {
            let m = self.game.moves()[keep - 1].mv;
            let king_to_centre = matches!(m, Move::Normal { role: Role::King, to, .. } if ending::CENTRE.contains(to));
            let made = self.reached_at.get(keep).copied().unwrap_or(0);
            if !king_to_centre || t.saturating_sub(made) > SIGNAL_GAP_MS {
                break;
            }
            keep -= 1;
        }
        if keep < n {
            // A move whose press was forgotten looks the same: the arbiter decides.
            let mut a = self.alert("8.1", None, t, Severity::Warning);
            a.ply = ply_number(keep + 1);
            a.squares = self.game.moves()[keep..]
                .iter()
                .map(|p| p.mv.to().to_string())
                .collect();
            a.message = format!(
                "the king move{} {} just before the result signal {} taken as part of the \
                 signal, not as a move; if it was played, the arbiter adds it to the record",
                if n - keep == 1 { "" } else { "s" },
                self.game.moves()[keep..]
                    .iter()
                    .map(|p| p.san.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                if n - keep == 1 { "was" } else { "were" },
            );
            out.push(Event::Alert(a));
            self.adopt(keep, &[], t, out);
        }
        self.signalled = Some(signal.result);
        self.finish(signal, t, out);
    }

    // ----- the clock -----

    /// The player who pressed last, if anyone did.
    fn last_press(&self) -> Option<Color> {
        match self.pressed_at {
            [None, None] => None,
            [Some(_), None] => Some(Color::Black),
            [None, Some(_)] => Some(Color::White),
            [Some(black), Some(white)] => Some(if white >= black {
                Color::White
            } else {
                Color::Black
            }),
        }
    }

    fn on_press(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        let last_press = self.last_press();
        if self.phase == Phase::Playing
            && let Some(press) = self.pending_press
            && press.by != by
            && press.due != WHEN_RESTORED
            && t >= press.t_ms.saturating_add(self.config.press_grace_ms)
            && self.is_for_next_move(press)
        {
            // A press past its grace period, waiting only because the board still seemed in
            // motion: the opponent's press says that motion was the reply. Both moves are
            // read once the reply's last updates had their time.
            self.pending_press = None;
            self.overtaken_press = Some(Press {
                due: t.saturating_add(self.config.press_grace_ms),
                ..press
            });
        }
        self.pressed_at[by as usize] = Some(t);
        self.press_reading = None;
        if self.phase != Phase::Playing {
            return;
        }
        let n = self.game.plies();
        let to_move = self.game.position().turn();
        let board_is_game = self.sensed().diff(self.game.position().board()).is_empty();
        if by != to_move {
            if n > 0 && n > self.completed {
                if board_is_game {
                    let ply = self.pressed_ply(by, n);
                    self.complete(by, t, ply, out);
                } else {
                    // The board may report the last placement after the press.
                    self.pending_press = Some(Press {
                        by,
                        t_ms: t,
                        ply: n,
                        due: t.saturating_add(self.config.press_grace_ms),
                    });
                }
            }
        } else if n == 0 && last_press.is_none() && board_is_game {
            // The clock started with the wrong lever: nothing was played yet.
        } else if last_press == Some(by) && self.completed == n && n > 0 {
            // A repeated press of the same lever.
        } else if n >= 2
            && self.completed < n - 1
            && self.game.positions()[n - 2].turn() == by
            && (board_is_game || self.reply_begun_before(by, t))
        {
            // A late press for the presser's previous move, made after the opponent had
            // already replied or begun to (6.2.1.2: that move was completed by the reply).
            self.complete(by, t, n - 1, out);
        } else {
            // Judged after the grace period: the move's board updates may still come.
            self.press_reading = match self.read(true) {
                reading @ Reading::Adopt { doubt: None, .. } => Some((n, reading)),
                _ => None,
            };
            self.pending_press = Some(Press {
                by,
                t_ms: t,
                ply: n + 1,
                due: t.saturating_add(self.config.press_grace_ms),
            });
        }
    }

    /// The ply a press by `by`, whose move `n` is the last recorded, completes: `n`, unless
    /// that move and the reply before it were read from overlapping actions while the
    /// presser's move before them is still open. The press is then for that earlier move,
    /// made late after the opponent had replied (6.2.1.2); the move read after the reply
    /// came sooner than a hand answers and may be a displaced piece, so it stays open.
    fn pressed_ply(&self, by: Color, n: usize) -> usize {
        let overlapping = matches!(self.doubt, Some(Doubt::Overlapping { .. }));
        let earlier_open = n >= 3 && self.completed + 2 < n && self.settled + 2 < n;
        if overlapping && earlier_open && self.game.positions()[n - 3].turn() == by {
            n - 2
        } else {
            n
        }
    }

    /// True when the opponent of `by` lifted a piece for the reply recorded last before `t`,
    /// and `by` has lifted nothing since that reply arrived: a press by `by` at `t` is for
    /// his move before the reply, not for a new one.
    fn reply_begun_before(&self, by: Color, t: Millis) -> bool {
        let n = self.game.plies();
        let (Some(&made), Some(&replied)) = (
            n.checked_sub(1).and_then(|k| self.reached_at.get(k)),
            self.reached_at.get(n),
        ) else {
            return false;
        };
        let lifted =
            |l: &&Lift, color: Color, since: Millis| l.piece.color == color && l.t_ms >= since;
        let began = self
            .lifts
            .iter()
            .any(|l| lifted(&l, !by, made) && l.t_ms < t);
        let moving_again = self.lifts.iter().any(|l| lifted(&l, by, replied));
        began && !moving_again
    }

    fn complete(&mut self, by: Color, t: Millis, n: usize, out: &mut Vec<Event>) {
        out.push(Event::MoveCompleted {
            ply: ply_number(n),
            side: by.into(),
            t_ms: t,
        });
        self.completed = n;
        if let Some(start) = self.turn_start.get_mut(n) {
            *start = (*start).max(t);
        }
        // The board may still report the end of a slide made before the press: the move
        // stays revisable for the grace period.
        let now = self.now.max(t);
        self.completion = Some(Completion {
            by,
            ply: n,
            pressed: t,
            due: now.saturating_add(self.config.press_grace_ms),
        });
    }

    /// The side to move pressed without a recognised move: 7.5.2, 7.5.3 or 7.5.1.
    fn judge_press(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        if self.phase != Phase::Playing || self.game.position().turn() != by {
            return;
        }
        // What looked like a move still being made may be moves already made, some of
        // them unseen: the press says they are over. The board as it is comes first (its
        // last updates may have come after the press), then the board at the press.
        let at_press = self.press_reading.take().and_then(|(plies, reading)| {
            let still_open = matches!(reading, Reading::Adopt { from, .. } if from >= self.settled);
            (plies == self.game.plies() && still_open).then_some(reading)
        });
        let reading = match self.read(true) {
            Reading::Unexplained { .. } => at_press,
            reading => Some(reading),
        };
        // Moves already final are not re-read here: a piece knocked off by the hand that
        // made the pressed move would be read as more moves instead (7.4 below).
        if let Some(Reading::Adopt { from, moves, doubt }) = reading
            && from >= self.settled
            && !moves.is_empty()
            && self.pending_end.is_none()
        {
            self.adopt(from, &moves, t, out);
            match doubt {
                Some(doubt) => self.raise_doubt(doubt, t, out),
                None => self.doubt = None,
            }
            // The press completes the presser's latest move, the reply read with it or not.
            let n = self.game.plies();
            let latest = (n.saturating_sub(1)..=n)
                .rev()
                .find(|&k| k > 0 && self.game.positions()[k - 1].turn() == by);
            if self.phase == Phase::Playing
                && let Some(k) = latest
                && k > self.completed
            {
                self.complete(by, t, k, out);
            }
            let d = self.sensed().diff(self.game.position().board());
            self.set_held(d.any().then_some(d), t, out);
            return;
        }
        let current = self.game.position().clone();
        let s = self.sensed();
        let d = s.diff(current.board());
        if d.is_empty()
            && let Some((from, moves, doubt)) = self.reread_for_press(&s)
        {
            self.adopt(from, &moves, t, out);
            self.raise_doubt(doubt, t, out);
            let n = self.game.plies();
            self.complete(by, t, n, out);
            return;
        }
        if d.is_empty()
            || (s.in_progress(&current) && s.board.occupied().is_subset(current.board().occupied()))
        {
            let mut a = self.alert("7.5.3", Some(by), t, Severity::Critical);
            a.evidence_ms = vec![t];
            a.message = format!(
                "7.5.3: {} pressed the clock without making a move; this counts as an illegal move",
                color_word(by)
            );
            out.push(Event::Alert(a));
            self.count_illegal(by, t, out);
            return;
        }
        if let Some(m) = s.unfinished_promotion(&current) {
            self.record(m, t, out);
            let mut a = self.alert("7.5.2", Some(by), t, Severity::Critical);
            a.ply = self.ply();
            a.evidence_ms = vec![t];
            a.squares = vec![m.to().to_string()];
            a.message = format!(
                "7.5.2: the pawn reached {} but was not exchanged before the clock press; a queen \
                 is recorded and the move counts as illegal",
                m.to()
            );
            out.push(Event::Alert(a));
            self.count_illegal(by, t, out);
            if self.phase == Phase::Playing && self.game.position().turn() != by {
                let n = self.game.plies();
                self.complete(by, t, n, out);
                let d = self.sensed().diff(self.game.position().board());
                self.set_held(d.any().then_some(d), t, out);
            }
            return;
        }
        if let Some((m, displaced)) = s.move_with_pieces_displaced(&current) {
            // 7.4: a legal move made with pieces knocked off or over on the way is no illegal
            // move; the press completes it once the pieces are back.
            let mut a = self.alert("7.4", Some(by), t, Severity::Warning);
            a.evidence_ms = vec![t];
            a.squares = displaced.into_iter().map(|s| s.to_string()).collect();
            a.message = format!(
                "7.4: {} pressed the clock after {} with pieces knocked off their squares \
                 ({}): the player restores displaced pieces in his own time; the move is \
                 recorded once they are back",
                color_word(by),
                shakmaty::san::San::from_move(&current, m),
                a.squares.join(" ")
            );
            out.push(Event::Alert(a));
            self.await_board(by, t, d, out);
            return;
        }
        if let Some((surplus, placed_at, _)) = self.surplus
            && let Some(piece) = self.physical.board().piece_at(surplus)
        {
            // One piece too many is a lost update, not an illegal move: which of its kind
            // left unreported decides the move, and the board cannot tell.
            let mut a = self.alert("8.5.3", Some(by), t, Severity::Warning);
            a.evidence_ms = vec![placed_at, t];
            a.squares = self
                .physical
                .board()
                .by_piece(piece)
                .into_iter()
                .map(|s| s.to_string())
                .collect();
            a.message = format!(
                "{} pressed the clock, but the board shows one {} {} too many: it did not \
                 report one of them leaving {}, so the move cannot be read. The arbiter should \
                 check which of these squares is empty; a piece put there and taken off again \
                 makes the board report it",
                color_word(by),
                color_word(piece.color).to_lowercase(),
                super::touch::name(piece.role),
                a.squares.join(" ")
            );
            out.push(Event::Alert(a));
            self.await_board(by, t, d, out);
            return;
        }
        if let Some(told) = self.unrestored {
            if !told {
                self.unrestored = Some(true);
                out.push(Event::Alert(self.play_on_unrestored(by, t, d)));
            }
            self.set_held(Some(d), t, out);
            return;
        }
        let mut a = self.alert("7.5.1", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.squares = d.into_iter().map(|s| s.to_string()).collect();
        let why = ending::illegal_position(self.physical.board())
            .map(|w| format!(" (3.10.3: {w})"))
            .unwrap_or_default();
        a.message = format!(
            "7.5.1: {} completed an illegal move with the clock press; the board differs from \
             the game on {}{why}. The position before the irregularity must be restored.",
            color_word(by),
            a.squares.join(" ")
        );
        out.push(Event::Alert(a));
        if !why.is_empty() {
            let mut p = self.alert("3.10.3", Some(by), t, Severity::Critical);
            p.squares = vec![];
            p.message = format!("the board shows an illegal position{why}");
            out.push(Event::Alert(p));
        }
        self.count_illegal(by, t, out);
        self.set_held(Some(d), t, out);
        self.unrestored = Some(false);
    }

    /// The alert for the first press made after a completed illegal move on a board still
    /// not restored: play went on from the illegal position. The moves of that play are
    /// not illegal moves of their own and are not counted (7.5.5); the record stays where
    /// the irregularity began until the position is restored.
    fn play_on_unrestored(&self, by: Color, t: Millis, differing: Bitboard) -> Alert {
        let mut a = self.alert("7.5.1", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.squares = differing.into_iter().map(|s| s.to_string()).collect();
        let n = self.game.plies();
        let last = match (self.game.moves().last(), n.checked_sub(1)) {
            (Some(m), Some(k)) => {
                let before = &self.game.positions()[k];
                let dots = if before.turn() == Color::White {
                    "."
                } else {
                    "..."
                };
                format!("after {}{dots}{}", before.fullmoves(), m.san)
            }
            _ => "at the start".to_string(),
        };
        a.message = format!(
            "7.5.1: play goes on without the position before the illegal move being \
             restored; {} pressed the clock on a board that differs from the game on {}. \
             The record stays {last}, and presses on this board are not counted as further \
             illegal moves. The arbiter should restore that position (or enter the moves \
             played since by hand).",
            color_word(by),
            a.squares.join(" ")
        );
        a
    }

    /// A press by the side to move when the board shows the game as recorded: before it
    /// counts as a press without a move (7.5.3), the last moves are read once more with one
    /// move more, the presser's. A piece that stood on a square the recorded moves never
    /// touch, and an opponent's move read before it, may be two moves of the presser around
    /// the reply (the first one's end reported late, a reply begun at once). Taken only when
    /// exactly one such reading agrees with the reports, and its moves overlap in time less
    /// than the recorded ones did; with a warning.
    fn reread_for_press(&self, s: &Sensed<'_>) -> Option<(usize, Vec<Move>, Doubt)> {
        let n = self.game.plies();
        let oldest = self
            .completed
            .saturating_sub(REREAD_PLIES)
            .max(n.saturating_sub(3));
        (oldest..n).rev().find_map(|k| {
            let start = &self.game.positions()[k];
            let plies = n - k + 1;
            let reports = self.reports(k);
            let Explanation::Unique(seq) = s.sequences_within(start, plies..=plies, &reports)
            else {
                return None;
            };
            let recorded = self.moves_since(k);
            let ms = reports.overlap(start, &seq);
            (ms < reports.overlap(start, &recorded))
                .then(|| (k, seq.clone(), Doubt::Overlapping { moves: seq, ms }))
        })
    }

    /// Holds the game on the `differing` squares and keeps the press by `by` at `t` for the
    /// move the board will show once it is set right: the press completes it then.
    fn await_board(&mut self, by: Color, t: Millis, differing: Bitboard, out: &mut Vec<Event>) {
        self.set_held(Some(differing), t, out);
        self.pending_press = Some(Press {
            by,
            t_ms: t,
            ply: self.game.plies() + 1,
            due: WHEN_RESTORED,
        });
    }

    fn count_illegal(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        let count = &mut self.illegal_moves[by as usize];
        *count += 1;
        let count = *count;
        let minutes = if self.config.blitz { 1 } else { 2 };
        let opponent = !by;
        let proposal = if count == 1 {
            format!(
                "first completed illegal move of {}: proposed penalty {minutes} minute{} added to \
                 {}'s clock",
                color_word(by),
                if minutes == 1 { "" } else { "s" },
                color_word(opponent)
            )
        } else if self.game.position().has_insufficient_material(opponent) {
            format!(
                "completed illegal move number {count} of {}: proposed result draw, {} cannot \
                 checkmate",
                color_word(by),
                color_word(opponent)
            )
        } else {
            format!(
                "completed illegal move number {count} of {}: proposed result, the game is lost \
                 by {}",
                color_word(by),
                color_word(by)
            )
        };
        let mut a = self.alert("7.5.5", Some(by), t, Severity::Critical);
        a.evidence_ms = vec![t];
        a.message = format!("7.5.5: {proposal}. The arbiter decides.");
        out.push(Event::Alert(a));
    }
}

/// Longest time between the two kings' placements of one result signal: a king move to
/// the centre made longer before the signal was a move of the game.
const SIGNAL_GAP_MS: Millis = 3_000;
/// How long both kings must stand on the centre squares before the signal ends the game.
const SIGNAL_STANDS_MS: Millis = 1_000;
/// How many moves before those still open a reading of the board may reach back to,
/// correcting moves a press made final.
const REREAD_PLIES: usize = 2;

/// An automatic end reached by a move that may still be revised.
#[derive(Debug, Clone)]
struct PendingEnd {
    end: Ending,
    ply: usize,
    t_ms: Millis,
}

/// A clock press waiting for the board: `ply` is the ply it completes, `due` when it is
/// judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Press {
    by: Color,
    t_ms: Millis,
    ply: usize,
    due: Millis,
}

/// A clock press that completed a move, still within its grace period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Completion {
    by: Color,
    ply: usize,
    pressed: Millis,
    /// Settled from this time on, once the board shows the game position.
    due: Millis,
}

/// What the report times say of a reconstructed sequence of moves ([`Reports::overlap`],
/// [`Reports::finished_out_of_order`]).
#[derive(Debug, Clone, Copy, Default)]
struct Timing {
    overlap: Millis,
    out_of_order: Millis,
}

impl Timing {
    /// The timing of `seq` played from `start`.
    fn of(reports: &Reports<'_>, start: &Chess, seq: &[Move]) -> Timing {
        Timing {
            overlap: reports.overlap(start, seq),
            out_of_order: reports.finished_out_of_order(start, seq),
        }
    }
}

/// Picks the move among single-move explanations: one, or a queen promotion among the
/// promotions an occupancy-only board cannot tell apart.
fn choose(singles: &[(Move, Chess)]) -> Option<(Move, Option<Doubt>)> {
    match singles {
        [] => None,
        [(m, _)] => Some((*m, None)),
        _ => singles
            .iter()
            .find(|(m, _)| m.promotion() == Some(Role::Queen))
            .map(|(m, _)| (*m, Some(Doubt::PromotionPiece))),
    }
}

fn common_prefix(seqs: &[Vec<Move>]) -> Vec<Move> {
    let Some(first) = seqs.first() else {
        return Vec::new();
    };
    let len = (0..first.len())
        .take_while(|&i| seqs.iter().all(|s| s.get(i) == Some(&first[i])))
        .count();
    first[..len].to_vec()
}

/// Two squares two or more files or ranks apart (one hand cannot serve both at once).
fn far(a: Square, b: Square) -> bool {
    a.file().distance(b.file()) >= 2 || a.rank().distance(b.rank()) >= 2
}

fn ply_number(plies: usize) -> u32 {
    u32::try_from(plies).unwrap_or(u32::MAX)
}

fn color_word(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}
