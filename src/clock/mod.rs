//! The clock model: time controls, software clocks and flag fall (FIDE Article 6).
//!
//! Deterministic and free of I/O: every time is a parameter in milliseconds.
//! - [`TimeControl`]: PGN `TimeControl` syntax with delays, and the A.1/B.1 categories.
//! - [`SoftwareClock`]: a clock computed from a time control (increments, delays, periods).
//! - [`ClockState`]: the clock of one game, from the board's clock or a software clock, with the
//!   time of every move for `[%clk]`/`[%emt]` and the arbiter's corrections kept apart.
//! - [`judge_flag_fall`]: what a flag fall means (6.9).

mod flag;
mod software;
mod state;
mod time_control;

pub use flag::{FlagVerdict, judge_flag_fall};
pub use software::{IgnoredPress, MoveTiming, PressOutcome, SoftwareClock};
pub use state::{ClockState, MoveTime, Remaining};
pub use time_control::{Bonus, Category, Period, TimeControl, TimeControlError};
