//! A chess clock computed from a time control, driven by the times it is given.

use shakmaty::{ByColor, Color};

use super::time_control::{Bonus, TimeControl};
use crate::board::Millis;

/// A two-player chess clock that follows a [`TimeControl`] (FIDE 6.3): Fischer increments after
/// each move, simple and Bronstein delays, periods with move counts whose unused time carries
/// over, and hourglass controls.
///
/// Nothing here reads the system clock: every call carries the time `t_ms`. Times that go
/// backwards count as no time passing.
///
/// For [`TimeControl::Unknown`] and [`TimeControl::Unlimited`] no time is ever used up:
/// [`SoftwareClock::remaining`] returns `u64::MAX` and no flag falls, but the time spent on each
/// move is still measured.
#[derive(Debug, Clone)]
pub struct SoftwareClock {
    control: TimeControl,
    remaining: ByColor<u64>,
    moves_made: ByColor<u32>,
    running: Option<Turn>,
    paused: bool,
    flag: Option<(Color, Millis)>,
}

/// The running side's current move.
#[derive(Debug, Clone, Copy)]
struct Turn {
    side: Color,
    /// Start of the stretch not yet charged.
    since: Millis,
    /// Simple delay still to run before the main time is charged.
    delay_left: u64,
    /// Time spent on this move in stretches already charged (across pauses).
    spent: u64,
}

/// What a clock press did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PressOutcome {
    /// The press completed `by`'s move and started the opponent's clock.
    Completed(MoveTiming),
    /// The press changed nothing.
    Ignored(IgnoredPress),
}

/// Timing of a move completed by a clock press.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MoveTiming {
    /// Who pressed.
    pub by: Color,
    /// The player's move number (1 = the player's first move).
    pub move_number: u32,
    /// Time the player spent on the move (while the clock was not paused).
    pub spent_ms: u64,
    /// The player's remaining time after the press, increments and new periods included.
    pub remaining_ms: u64,
    /// Index of the period the player entered with this move, if the move ended a period.
    pub entered_period: Option<usize>,
    /// True when the player's flag had fallen before the press (no bonus is then added).
    pub flag_fell: bool,
}

/// Why a press changed nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IgnoredPress {
    /// The clock was never started.
    NotStarted,
    /// The clock is paused.
    Paused,
    /// The player pressed while the opponent's time was running.
    OpponentRunning,
}

impl SoftwareClock {
    /// A stopped clock with both players at the start of the first period.
    pub fn new(control: TimeControl) -> SoftwareClock {
        let base = match &control {
            TimeControl::Unknown | TimeControl::Unlimited => u64::MAX,
            TimeControl::Hourglass { base_ms } => *base_ms,
            TimeControl::Periods(periods) => periods.first().map_or(u64::MAX, |p| p.base_ms),
        };
        SoftwareClock {
            control,
            remaining: ByColor::new_with(|_| base),
            moves_made: ByColor::default(),
            running: None,
            paused: false,
            flag: None,
        }
    }

    /// The time control the clock follows.
    pub fn control(&self) -> &TimeControl {
        &self.control
    }

    /// True when the time control limits time (not unknown or unlimited).
    pub fn is_limited(&self) -> bool {
        !matches!(self.control, TimeControl::Unknown | TimeControl::Unlimited)
    }

    /// Starts `side`'s time at `t_ms` (normally White's, when Black presses to start the game).
    /// Restarting a running clock charges the running side first.
    pub fn start(&mut self, t_ms: Millis, side: Color) {
        if self.running.is_some() && !self.paused {
            self.charge(t_ms);
        }
        self.paused = false;
        self.begin_turn(t_ms, side);
    }

    /// `by` pressed the clock at `t_ms`: completes `by`'s move (6.2.1), adds the bonus of the
    /// move's period, moves `by` into the next period when the move count is reached (the
    /// unused time carries over) and starts the opponent's time.
    pub fn press(&mut self, t_ms: Millis, by: Color) -> PressOutcome {
        let Some(turn) = self.running else {
            return PressOutcome::Ignored(IgnoredPress::NotStarted);
        };
        if self.paused {
            return PressOutcome::Ignored(IgnoredPress::Paused);
        }
        if turn.side != by {
            return PressOutcome::Ignored(IgnoredPress::OpponentRunning);
        }
        self.charge(t_ms);
        let spent_ms = self.running.map_or(0, |t| t.spent);
        let flag_fell = self.flag.is_some_and(|(side, _)| side == by);
        let move_number = self.moves_made[by].saturating_add(1);
        self.moves_made[by] = move_number;
        let entered_period = if self.is_limited() && !flag_fell {
            self.add_move_bonus(by, move_number, spent_ms)
        } else {
            None
        };
        self.begin_turn(t_ms, !by);
        PressOutcome::Completed(MoveTiming {
            by,
            move_number,
            spent_ms,
            remaining_ms: self.remaining[by],
            entered_period,
            flag_fell,
        })
    }

    /// `side`'s remaining time at `t_ms`.
    pub fn remaining(&self, t_ms: Millis, side: Color) -> u64 {
        self.charged(t_ms).0[side]
    }

    /// The side whose flag fell first, if any flag has fallen by `t_ms`.
    pub fn flag(&self, t_ms: Millis) -> Option<Color> {
        self.flag_fall(t_ms).map(|(side, _)| side)
    }

    /// The first flag fall by `t_ms`: the side and the moment its time ran out.
    pub fn flag_fall(&self, t_ms: Millis) -> Option<(Color, Millis)> {
        self.charged(t_ms).2
    }

    /// Whose time is running (`None` when stopped or paused).
    pub fn running(&self) -> Option<Color> {
        self.running.filter(|_| !self.paused).map(|t| t.side)
    }

    /// Moves `side` has completed.
    pub fn moves_made(&self, side: Color) -> u32 {
        self.moves_made[side]
    }

    /// Arbiter correction (6.10–6.11, 7.5.5): adds `delta_ms` (negative subtracts) to `side`'s
    /// remaining time. Time given to a player whose flag had fallen raises the flag again.
    pub fn adjust(&mut self, side: Color, delta_ms: i64) {
        let current = self.remaining[side];
        self.remaining[side] = if delta_ms >= 0 {
            current.saturating_add(delta_ms.unsigned_abs())
        } else {
            current.saturating_sub(delta_ms.unsigned_abs())
        };
        if self.remaining[side] > 0 && self.flag.is_some_and(|(s, _)| s == side) {
            self.flag = None;
        }
    }

    /// Stops the running time at `t_ms` (arbiter pause); the same side resumes.
    pub fn pause(&mut self, t_ms: Millis) {
        if self.running.is_some() && !self.paused {
            self.charge(t_ms);
            self.paused = true;
        }
    }

    /// Restarts the time stopped by [`SoftwareClock::pause`] at `t_ms`.
    pub fn resume(&mut self, t_ms: Millis) {
        if let Some(turn) = self.running.as_mut().filter(|_| self.paused) {
            turn.since = t_ms;
            self.paused = false;
        }
    }

    /// Adds the bonus of `by`'s move `move_number` and, when the move ends a period, the next
    /// period's time; returns the period entered.
    fn add_move_bonus(&mut self, by: Color, move_number: u32, spent_ms: u64) -> Option<usize> {
        let (period, current) = self.control.period_of_move(move_number)?;
        let bonus = match current.bonus {
            Bonus::Increment(ms) => ms,
            Bonus::Bronstein(ms) => ms.min(spent_ms),
            Bonus::None | Bonus::Delay(_) => 0,
        };
        let moves = current.moves;
        self.remaining[by] = self.remaining[by].saturating_add(bonus);
        let (next, next_period) = self.control.period_of_move(move_number.saturating_add(1))?;
        let ended = next != period || ends_repeating_period(moves, move_number, &self.control);
        if !ended {
            return None;
        }
        self.remaining[by] = self.remaining[by].saturating_add(next_period.base_ms);
        Some(next)
    }

    fn begin_turn(&mut self, t_ms: Millis, side: Color) {
        let delay_left = match self.current_bonus(side) {
            Bonus::Delay(ms) => ms,
            _ => 0,
        };
        self.running = Some(Turn {
            side,
            since: t_ms,
            delay_left,
            spent: 0,
        });
    }

    fn current_bonus(&self, side: Color) -> Bonus {
        self.control
            .period_of_move(self.moves_made[side].saturating_add(1))
            .map_or(Bonus::None, |(_, p)| p.bonus)
    }

    /// Charges the running side for the time from the last charge to `t_ms`.
    fn charge(&mut self, t_ms: Millis) {
        (self.remaining, self.running, self.flag) = self.charged(t_ms);
    }

    /// Remaining times, the running turn and the first flag fall as they stand at `t_ms`.
    fn charged(&self, t_ms: Millis) -> (ByColor<u64>, Option<Turn>, Option<(Color, Millis)>) {
        let (mut remaining, mut running, mut flag) = (self.remaining, self.running, self.flag);
        let Some(turn) = running.as_mut().filter(|_| !self.paused) else {
            return (remaining, running, flag);
        };
        let elapsed = t_ms.saturating_sub(turn.since);
        turn.since = turn.since.max(t_ms);
        turn.spent += elapsed;
        let delay_used = elapsed.min(turn.delay_left);
        turn.delay_left -= delay_used;
        let charged = elapsed - delay_used;
        let side = turn.side;
        if !self.is_limited() {
            return (remaining, running, flag);
        }
        let before = remaining[side];
        if charged >= before && charged > 0 {
            flag = flag.or(Some((side, t_ms - elapsed + delay_used + before)));
            remaining[side] = 0;
        } else {
            remaining[side] = before - charged;
        }
        if matches!(self.control, TimeControl::Hourglass { .. }) {
            remaining[!side] = remaining[!side].saturating_add(charged.min(before));
        }
        (remaining, running, flag)
    }
}

/// True when the move completes a repetition of a repeating last period (e.g. every 40 moves
/// of `40/7200`).
fn ends_repeating_period(moves: Option<u32>, move_number: u32, control: &TimeControl) -> bool {
    let periods = control.periods();
    let Some(n) = moves else {
        return false;
    };
    let before_last: u32 = periods
        .iter()
        .take(periods.len().saturating_sub(1))
        .filter_map(|p| p.moves)
        .sum();
    move_number > before_last && (move_number - before_last).is_multiple_of(n)
}
