//! What the clock showed: each player's last press, the times it last showed, and whose
//! clock runs.

use shakmaty::Color;

use crate::board::Millis;

/// What the clock showed. Changed only through its methods: by a press (`presses.rs`),
/// by the times and the running side the clock reports (`input.rs`, `gaps.rs`).
#[derive(Debug, Clone, Copy)]
pub(super) struct ClockState {
    /// Each player's last clock press, indexed by colour.
    pressed_at: [Option<Millis>; 2],
    /// The clock times last reported (White's, Black's).
    last_times: Option<(u64, u64)>,
    /// Whose clock the clock last showed running.
    running: Option<Color>,
    /// The last press whose presser was only guessed: a clock that tells sides, not
    /// colours, was not seen running at the start position and too few presses since agree
    /// on which side is White's (`board::dgt::clock_side`).
    guessed_press: Option<Millis>,
}

impl ClockState {
    /// Nothing shown yet.
    pub(super) fn new() -> ClockState {
        ClockState {
            pressed_at: [None; 2],
            last_times: None,
            running: None,
            guessed_press: None,
        }
    }

    /// When `color` last pressed.
    pub(super) fn pressed_at(&self, color: Color) -> Option<Millis> {
        self.pressed_at[color as usize]
    }

    /// Each player's last press, indexed by colour.
    pub(super) fn presses(&self) -> [Option<Millis>; 2] {
        self.pressed_at
    }

    /// `by` pressed at `t`.
    pub(super) fn pressed(&mut self, by: Color, t: Millis) {
        self.pressed_at[by as usize] = Some(t);
    }

    /// The player who pressed last, if anyone did.
    pub(super) fn last_press(&self) -> Option<Color> {
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

    /// The clock shows `times` (White's, Black's): true when they differ from those last
    /// shown, which they replace.
    pub(super) fn times_changed(&mut self, times: (u64, u64)) -> bool {
        let changed = self.last_times != Some(times);
        self.last_times = Some(times);
        changed
    }

    /// Whose clock the clock last showed running.
    pub(super) fn running(&self) -> Option<Color> {
        self.running
    }

    /// The clock shows `side`'s clock running.
    pub(super) fn runs(&mut self, side: Color) {
        self.running = Some(side);
    }

    /// Who pressed at `t` was only guessed.
    pub(super) fn presser_guessed(&mut self, t: Millis) {
        self.guessed_press = Some(self.guessed_press.map_or(t, |g| g.max(t)));
    }

    /// True when who pressed at `t` may have been guessed: it came no later than the last
    /// press that was.
    pub(super) fn presser_maybe_guessed(&self, t: Millis) -> bool {
        self.guessed_press.is_some_and(|g| t <= g)
    }
}
