//! The act-of-moving machine: observations in, moves and alerts out.

mod adopting;
mod config;
mod doubts;
mod hands;
mod illegal_moves;
mod input;
mod lost_updates;
mod press_judgment;
mod presses;
mod reading;
mod recording;
mod rereading;
mod settling;
mod slides;
mod start_and_end;

pub use config::MachineConfig;

use shakmaty::{Bitboard, Board, Color, Piece, Square};

use crate::act::ending::Ending;
use crate::act::physical::PhysicalBoard;
use crate::act::search::Sensed;
use crate::act::start::StartRules;
use crate::act::touch::Lift;
use crate::act::{Alert, Event, Severity};
use crate::board::{ColorName, Millis, Observation};
use crate::rules::Game;
use doubts::Doubt;
use presses::Press;
use reading::Reading;
use settling::Completion;
use start_and_end::PendingEnd;

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
    /// stood [`SIGNAL_STANDS_MS`](start_and_end::SIGNAL_STANDS_MS) (a knocked king can land beside the other for a moment).
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
}

/// How many moves before those still open a reading of the board may reach back to,
/// correcting moves a press made final.
const REREAD_PLIES: usize = 2;

fn ply_number(plies: usize) -> u32 {
    u32::try_from(plies).unwrap_or(u32::MAX)
}

fn color_word(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}
