//! The clock of one game: the board's clock readings or a software clock, and the time of
//! every move for `[%clk]` and `[%emt]`.

use std::collections::VecDeque;

use shakmaty::{ByColor, Color};

use super::flag::{FlagVerdict, judge_flag_fall};
use super::software::{PressOutcome, SoftwareClock};
use super::time_control::TimeControl;
use crate::act::Event;
use crate::board::{ClockReading, Millis};
use crate::rules::{Budget, Game};

/// Most plies a move event may skip ahead (plies between get no time).
const MAX_PLY_GAP: usize = 64;

/// Most board clock readings kept since the latest press.
const READINGS_KEPT: usize = 64;

/// The clock of one game.
///
/// Until the first reading from an electronic clock arrives, times come from a
/// [`SoftwareClock`] following the time control. Moves complete (6.2.1) on clock presses
/// ([`Event::MoveCompleted`]) once the game has shown one; before that, a move completes when
/// it is made (no clock connected). So with a press-reporting board, the first move's software
/// time is counted to the move rather than to the press.
///
/// Arbiter corrections (6.10–6.11) are kept apart from what the clock shows: for a board clock
/// the corrected time is the reading plus the sum of corrections; a software clock is corrected
/// in place, so both values agree.
#[derive(Debug, Clone)]
pub struct ClockState {
    software: SoftwareClock,
    board: Option<BoardClock>,
    corrections: ByColor<i64>,
    presses_seen: bool,
    game_start_ms: Option<Millis>,
    last_move_ms: Option<Millis>,
    last_press_ms: Option<Millis>,
    /// The latest move whose mover's time later readings settle: (ply, mover, whether the
    /// mover's clock was seen stopped since).
    settling: Option<(u32, Color, bool)>,
    /// The board clock's readings since the latest press, oldest first (at most
    /// [`READINGS_KEPT`]): a move announced late is timed by what they showed.
    since_press: VecDeque<BoardClock>,
    /// Moves whose time was taken from their mover's clock seen stopped: their presses,
    /// announced later still, do not overwrite it.
    timed_at_stop: Vec<u32>,
    moves: Vec<MoveTime>,
    flag_budget: Budget,
}

#[derive(Debug, Clone, Copy)]
struct BoardClock {
    t_ms: Millis,
    remaining: ByColor<u64>,
    running: Option<Color>,
}

/// What is known about the time of one move.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MoveTime {
    /// The mover's remaining time after the move as the clock shows it.
    pub clock_ms: Option<u64>,
    /// The same with the arbiter's corrections: what `[%clk]` records.
    pub corrected_ms: Option<u64>,
    /// Time the mover spent on the move (`[%emt]`).
    pub elapsed_ms: Option<u64>,
}

/// A player's remaining time as the clock shows it and as corrected by the arbiter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remaining {
    /// As the clock shows it.
    pub clock_ms: u64,
    /// With the arbiter's corrections.
    pub corrected_ms: u64,
}

impl ClockState {
    /// The clock of a new game under `control`.
    pub fn new(control: TimeControl) -> ClockState {
        ClockState {
            software: SoftwareClock::new(control),
            board: None,
            corrections: ByColor::default(),
            presses_seen: false,
            game_start_ms: None,
            last_move_ms: None,
            last_press_ms: None,
            settling: None,
            since_press: VecDeque::new(),
            timed_at_stop: Vec::new(),
            moves: Vec::new(),
            flag_budget: Budget::deterministic(),
        }
    }

    /// Sets how much analysis judging a flag fall may cost. The default is the deterministic
    /// full search, so that a journal replayed after a crash judges exactly as the first run.
    pub fn with_flag_budget(mut self, budget: Budget) -> ClockState {
        self.flag_budget = budget;
        self
    }

    /// The time control.
    pub fn control(&self) -> &TimeControl {
        self.software.control()
    }

    /// True once a reading from an electronic clock has arrived.
    pub fn has_board_clock(&self) -> bool {
        self.board.is_some()
    }

    /// Takes in one event of the act-of-moving machine.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::GameStart { t_ms, fen, .. } => self.game_started(*t_ms, fen),
            Event::Move {
                ply, t_ms, side, ..
            } => self.move_made(*ply, (*side).into(), *t_ms),
            Event::MoveCompleted { ply, side, t_ms } => {
                self.move_completed(*ply, (*side).into(), *t_ms)
            }
            Event::Revision { ply, .. } => self.revise(*ply),
            Event::Clock {
                white_ms,
                black_ms,
                t_ms,
                ..
            } => {
                let running = self.board.and_then(|b| {
                    // A reading without "who runs": the side whose time went down runs.
                    let (white, black) = (b.remaining.white, b.remaining.black);
                    if *white_ms < white && *black_ms == black {
                        Some(Color::White)
                    } else if *black_ms < black && *white_ms == white {
                        Some(Color::Black)
                    } else {
                        b.running
                    }
                });
                self.board_reading(*t_ms, *white_ms, *black_ms, running);
            }
            Event::Result { t_ms, .. } => self.software.pause(*t_ms),
            Event::Alert(_) | Event::BoardState { .. } | Event::GameClosed { .. } => {}
        }
    }

    /// Takes in a full clock reading (with who is running) received at `t_ms`. The clock's own
    /// flag indicator is not needed: a flag has fallen when a player's time shows zero.
    pub fn observe_reading(&mut self, t_ms: Millis, reading: &ClockReading) {
        self.board_reading(
            t_ms,
            reading.white_ms,
            reading.black_ms,
            reading.running.map(Color::from),
        );
    }

    /// Arbiter correction (6.10–6.11, 7.5.5): adds `delta_ms` (negative subtracts) to `side`.
    pub fn adjust(&mut self, side: Color, delta_ms: i64) {
        if self.board.is_some() {
            self.corrections[side] = self.corrections[side].saturating_add(delta_ms);
        } else {
            self.software.adjust(side, delta_ms);
        }
    }

    /// The game goes on from a position taken up after a gap in the link, its plies counted
    /// afresh from 1: the times of the moves so far are handed back (for a correction that
    /// restores the whole game) and forgotten, with what rested on their numbers. The
    /// clock's last reading, its corrections and the presses seen stay: the players' time is
    /// what it is. When the first move's turn began is not known (while the link was down):
    /// it gets no elapsed time.
    pub fn restart_plies(&mut self) -> Vec<MoveTime> {
        self.settling = None;
        self.timed_at_stop.clear();
        // Readings from before are no times of the moves from here on.
        self.since_press.clear();
        self.game_start_ms = None;
        self.last_move_ms = None;
        self.last_press_ms = None;
        std::mem::take(&mut self.moves)
    }

    /// Puts back the times of the first moves, handed back by
    /// [`ClockState::restart_plies`]: the game before a gap stands again.
    pub fn restore_move_times(&mut self, times: Vec<MoveTime>) {
        self.settling = None;
        self.timed_at_stop.clear();
        self.moves = times;
    }

    /// The time of move `ply` (1-based), if the move is known.
    pub fn move_time(&self, ply: u32) -> Option<MoveTime> {
        let index = usize::try_from(ply.checked_sub(1)?).ok()?;
        self.moves.get(index).copied()
    }

    /// The times of every move, index 0 = ply 1.
    pub fn move_times(&self) -> &[MoveTime] {
        &self.moves
    }

    /// `side`'s remaining time at `t_ms`, `None` when no clock limits time.
    pub fn remaining(&self, t_ms: Millis, side: Color) -> Option<Remaining> {
        match self.board {
            Some(board) => {
                let mut clock_ms = board.remaining[side];
                if board.running == Some(side) {
                    clock_ms = clock_ms.saturating_sub(t_ms.saturating_sub(board.t_ms));
                }
                Some(Remaining {
                    clock_ms,
                    corrected_ms: self.corrected(side, clock_ms),
                })
            }
            None if self.software.is_limited() => {
                let ms = self.software.remaining(t_ms, side);
                Some(Remaining {
                    clock_ms: ms,
                    corrected_ms: ms,
                })
            }
            None => None,
        }
    }

    /// The player whose flag has fallen by `t_ms` (corrected time at zero), if any.
    pub fn flag(&self, t_ms: Millis) -> Option<Color> {
        let Some(board) = self.board else {
            return self.software.flag(t_ms);
        };
        let out = |side| {
            self.remaining(t_ms, side)
                .is_some_and(|r| r.corrected_ms == 0)
        };
        match (out(Color::White), out(Color::Black)) {
            (true, false) => Some(Color::White),
            (false, true) => Some(Color::Black),
            (true, true) => board.running,
            (false, false) => None,
        }
    }

    /// Judges a fallen flag in `game`'s position (6.9), if one has fallen by `t_ms`.
    pub fn judge_flag(&self, t_ms: Millis, game: &Game) -> Option<FlagVerdict> {
        self.flag(t_ms)
            .map(|flagged| judge_flag_fall(game, flagged, &self.flag_budget))
    }

    fn corrected(&self, side: Color, clock_ms: u64) -> u64 {
        let delta = self.corrections[side];
        if delta >= 0 {
            clock_ms.saturating_add(delta.unsigned_abs())
        } else {
            clock_ms.saturating_sub(delta.unsigned_abs())
        }
    }

    fn game_started(&mut self, t_ms: Millis, fen: &str) {
        let board = self.board.take();
        let control = self.software.control().clone();
        *self = ClockState::new(control).with_flag_budget(self.flag_budget);
        self.board = board;
        self.game_start_ms = Some(t_ms);
        let to_move = match fen.split_whitespace().nth(1) {
            Some("b") => Color::Black,
            _ => Color::White,
        };
        self.software.start(t_ms, to_move);
    }

    fn move_made(&mut self, ply: u32, side: Color, t_ms: Millis) {
        let turn_start = if self.presses_seen {
            self.last_press_ms
        } else {
            self.last_move_ms
        }
        .or(self.game_start_ms);
        let mut time = MoveTime {
            elapsed_ms: turn_start.map(|s| t_ms.saturating_sub(s)),
            ..MoveTime::default()
        };
        if self.board.is_none() && !self.presses_seen {
            if self.software.running().is_none() {
                self.software.start(turn_start.unwrap_or(t_ms), side);
            }
            if let PressOutcome::Completed(timing) = self.software.press(t_ms, side) {
                time.elapsed_ms = Some(timing.spent_ms);
            }
        }
        if let Some(remaining) = self.remaining(t_ms, side) {
            time.clock_ms = Some(remaining.clock_ms);
            time.corrected_ms = Some(remaining.corrected_ms);
        }
        let index = ply.saturating_sub(1) as usize;
        if index > self.moves.len() + MAX_PLY_GAP {
            // Not a move of this game (the machine numbers plies without gaps).
            return;
        }
        self.settling = Some((ply, side, false));
        self.timed_at_stop.retain(|&p| p < ply);
        // Announced only after its mover's clock stopped (a burst of bytes read after a
        // restart, a move reconstructed late): the readings since say what it stopped at.
        if let Some((shown, ran_again)) = self.stopped_since_press(side) {
            time.clock_ms = Some(shown);
            time.corrected_ms = Some(self.corrected(side, shown));
            self.timed_at_stop.push(ply);
            self.settling = (!ran_again).then_some((ply, side, true));
        }
        self.moves.truncate(index);
        self.moves.resize(index, MoveTime::default());
        self.moves.push(time);
        self.last_move_ms = Some(t_ms);
    }

    /// `side`'s time when its clock, seen running since the latest press, was last seen
    /// stopped with the opponent's running, and whether it was seen running again after.
    fn stopped_since_press(&self, side: Color) -> Option<(u64, bool)> {
        let mut ran = false;
        let mut stopped = None;
        for reading in &self.since_press {
            match reading.running {
                Some(r) if r == side => {
                    if stopped.is_some() {
                        return stopped.map(|shown| (shown, true));
                    }
                    ran = true;
                }
                Some(_) if ran => stopped = Some(reading.remaining[side]),
                _ => {}
            }
        }
        stopped.map(|shown| (shown, false))
    }

    fn move_completed(&mut self, ply: u32, side: Color, t_ms: Millis) {
        let turn_start = self.last_press_ms.or(self.game_start_ms);
        self.presses_seen = true;
        self.last_press_ms = Some(t_ms);
        self.since_press.clear();
        let mut spent = turn_start.map(|s| t_ms.saturating_sub(s));
        if self.board.is_none() {
            match self.software.press(t_ms, side) {
                PressOutcome::Completed(timing) => spent = Some(timing.spent_ms),
                // The software clock already switched when this move was made.
                PressOutcome::Ignored(_) => return,
            }
        }
        let remaining = self
            .remaining(t_ms, side)
            .filter(|_| !self.timed_at_stop.contains(&ply));
        self.timed_at_stop.retain(|&p| p > ply);
        if let Some(time) = ply
            .checked_sub(1)
            .and_then(|i| self.moves.get_mut(i as usize))
        {
            time.elapsed_ms = spent;
            if let Some(r) = remaining {
                time.clock_ms = Some(r.clock_ms);
                time.corrected_ms = Some(r.corrected_ms);
            }
        }
    }

    fn revise(&mut self, ply: u32) {
        self.moves.truncate(ply.saturating_sub(1) as usize);
        self.timed_at_stop.retain(|&p| p < ply);
        if self.settling.is_some_and(|(p, _, _)| p >= ply) {
            self.settling = None;
        }
    }

    fn board_reading(
        &mut self,
        t_ms: Millis,
        white_ms: u64,
        black_ms: u64,
        running: Option<Color>,
    ) {
        let reading = BoardClock {
            t_ms,
            remaining: ByColor {
                white: white_ms,
                black: black_ms,
            },
            running,
        };
        self.board = Some(reading);
        if self.since_press.len() == READINGS_KEPT {
            self.since_press.pop_front();
        }
        self.since_press.push_back(reading);
        if let Some((ply, side, stopped)) = self.settling {
            // Once the mover's clock stopped and runs again, the opponent has pressed: later
            // readings are the mover's next move's time (a burst may announce the opponent's
            // move only after them).
            match running {
                Some(r) if r == side && stopped => {
                    self.settling = None;
                    return;
                }
                Some(r) if r != side => self.settling = Some((ply, side, true)),
                _ => {}
            }
            let shown = if side == Color::White {
                white_ms
            } else {
                black_ms
            };
            let corrected = self.corrected(side, shown);
            if let Some(time) = self.moves.get_mut(ply.saturating_sub(1) as usize) {
                time.clock_ms = Some(shown);
                time.corrected_ms = Some(corrected);
            }
        }
    }
}
