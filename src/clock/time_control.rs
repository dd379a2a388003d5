//! Time controls in PGN `TimeControl` tag syntax (PGN standard §9.6.1), with delays.

use std::fmt;

/// A time control as written in a PGN `TimeControl` tag.
///
/// Accepted syntax (fields separated by `:`, each field one period, the last period repeating
/// when it has a move count):
///
/// | text | meaning |
/// |---|---|
/// | `?` | unknown |
/// | `-` | no time control |
/// | `300` | sudden death, 300 seconds |
/// | `300+2` | sudden death with a 2-second Fischer increment after every move |
/// | `40/5400+30:1800+30` | 40 moves in 90 minutes, then 30 minutes, 30 s increment throughout |
/// | `*180` | hourglass (sandclock) with 180 seconds |
/// | `5400d10` | **extension**: 90 minutes with a 10-second simple delay (FIDE 6.3 "delay mode": the main time only starts after the delay; unused delay is not added) |
/// | `5400b10` | **extension**: 90 minutes with a 10-second Bronstein delay (after the move, the time used is given back, at most the delay) |
///
/// The delay extensions take the place of `+increment` in a field (`40/7200d30:1800d30`).
/// Seconds may carry up to three decimals (`60+0.5`). The move count of a field is the number of
/// moves each player must make within that period.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TimeControl {
    /// `?`: the time control is not known.
    Unknown,
    /// `-`: no time control (untimed game).
    Unlimited,
    /// One or more periods (`:`-separated fields).
    Periods(Vec<Period>),
    /// `*N`: an hourglass of N seconds: the time one player uses is added to the other's.
    Hourglass {
        /// Time each player starts with, in milliseconds.
        base_ms: u64,
    },
}

/// One period of a time control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    /// Moves each player must make in this period; `None` for the rest of the game.
    pub moves: Option<u32>,
    /// Time added to each player's clock when the period starts, in milliseconds.
    pub base_ms: u64,
    /// What each move of this period adds or delays.
    pub bonus: Bonus,
}

/// Per-move time bonus of a period.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bonus {
    /// Nothing added per move.
    None,
    /// Fischer increment: added after each move of the period (`+N`).
    Increment(u64),
    /// Simple (US) delay: the main time starts only after this delay (`dN`).
    Delay(u64),
    /// Bronstein delay: after the move, the time used is added back, at most this much (`bN`).
    Bronstein(u64),
}

impl Bonus {
    /// The bonus in milliseconds (0 for none), whatever its kind.
    pub fn millis(self) -> u64 {
        match self {
            Bonus::None => 0,
            Bonus::Increment(ms) | Bonus::Delay(ms) | Bonus::Bronstein(ms) => ms,
        }
    }
}

/// The game categories of the Laws by allotted time (Appendices A.1 and B.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// B.1: 10 minutes or less per player (time + 60 × increment).
    Blitz,
    /// A.1: more than 10 and less than 60 minutes per player.
    Rapid,
    /// 60 minutes or more per player.
    Standard,
}

/// Why a `TimeControl` text could not be read. The message quotes the text and says what
/// form was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid TimeControl {text:?}: {reason} (expected e.g. \"300+2\", \"40/5400+30:1800+30\", \"5400d10\", \"*180\", \"?\" or \"-\")"
)]
pub struct TimeControlError {
    /// The text as given.
    pub text: String,
    /// What is wrong, naming the offending field.
    pub reason: String,
}

impl TimeControl {
    /// Parses PGN `TimeControl` syntax (see the type's documentation for the extensions).
    pub fn parse(text: &str) -> Result<TimeControl, TimeControlError> {
        let fail = |reason: String| TimeControlError {
            text: text.to_string(),
            reason,
        };
        let trimmed = text.trim();
        match trimmed {
            "" => return Err(fail("the text is empty".into())),
            "?" => return Ok(TimeControl::Unknown),
            "-" => return Ok(TimeControl::Unlimited),
            _ => {}
        }
        if let Some(rest) = trimmed.strip_prefix('*') {
            let base_ms = parse_seconds(rest)
                .map_err(|why| fail(format!("hourglass time {rest:?}: {why}")))?;
            if base_ms == 0 {
                return Err(fail("hourglass time must be more than 0 seconds".into()));
            }
            return Ok(TimeControl::Hourglass { base_ms });
        }
        let fields: Vec<&str> = trimmed.split(':').collect();
        let mut periods = Vec::with_capacity(fields.len());
        for (index, field) in fields.iter().enumerate() {
            let period = parse_period(field)
                .map_err(|why| fail(format!("period {} ({field:?}): {why}", index + 1)))?;
            if period.moves.is_none() && index + 1 < fields.len() {
                return Err(fail(format!(
                    "period {} ({field:?}) has no move count, so no period can follow it",
                    index + 1
                )));
            }
            periods.push(period);
        }
        Ok(TimeControl::Periods(periods))
    }

    /// The periods, empty for unknown, unlimited and hourglass controls.
    pub fn periods(&self) -> &[Period] {
        match self {
            TimeControl::Periods(p) => p,
            _ => &[],
        }
    }

    /// The period in force for a player's move number `move_number` (1-based), repeating the
    /// last period when it has a move count. `None` when the control has no periods.
    pub fn period_of_move(&self, move_number: u32) -> Option<(usize, &Period)> {
        let periods = self.periods();
        let mut first_move = 1u32;
        for (index, period) in periods.iter().enumerate() {
            match period.moves {
                Some(n) if index + 1 < periods.len() => {
                    if move_number < first_move.saturating_add(n) {
                        return Some((index, period));
                    }
                    first_move = first_move.saturating_add(n);
                }
                _ => return Some((index, period)),
            }
        }
        None
    }

    /// Time per player for the whole game plus 60 × the per-move bonus (increments and delays
    /// alike) of the first 60 moves: the measure of Appendices A.1 and B.1. `None` for unknown
    /// and unlimited controls.
    pub fn nominal_ms(&self) -> Option<u64> {
        match self {
            TimeControl::Unknown | TimeControl::Unlimited => None,
            TimeControl::Hourglass { base_ms } => Some(*base_ms),
            TimeControl::Periods(periods) => {
                let base = periods
                    .iter()
                    .fold(0u64, |sum, p| sum.saturating_add(p.base_ms));
                let bonus = (1..=60)
                    .filter_map(|m| self.period_of_move(m))
                    .fold(0u64, |sum, (_, p)| sum.saturating_add(p.bonus.millis()));
                Some(base.saturating_add(bonus))
            }
        }
    }

    /// The category of the Laws (A.1/B.1), `None` for unknown and unlimited controls.
    pub fn category(&self) -> Option<Category> {
        const TEN_MINUTES: u64 = 10 * 60 * 1000;
        const SIXTY_MINUTES: u64 = 60 * 60 * 1000;
        self.nominal_ms().map(|ms| {
            if ms <= TEN_MINUTES {
                Category::Blitz
            } else if ms < SIXTY_MINUTES {
                Category::Rapid
            } else {
                Category::Standard
            }
        })
    }

    /// B.1: 10 minutes or less per player (time + 60 × increment).
    pub fn is_blitz(&self) -> bool {
        self.category() == Some(Category::Blitz)
    }

    /// A.1: more than 10 and less than 60 minutes per player (time + 60 × increment).
    pub fn is_rapid(&self) -> bool {
        self.category() == Some(Category::Rapid)
    }
}

impl std::str::FromStr for TimeControl {
    type Err = TimeControlError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TimeControl::parse(s)
    }
}

fn parse_period(field: &str) -> Result<Period, String> {
    if field.is_empty() {
        return Err("the field is empty".into());
    }
    let (moves, rest) = match field.split_once('/') {
        Some((m, rest)) => {
            let moves: u32 = m
                .parse()
                .map_err(|_| format!("move count {m:?} is not a whole number"))?;
            if moves == 0 {
                return Err("move count must be at least 1".into());
            }
            (Some(moves), rest)
        }
        None => (None, field),
    };
    let split = rest.find(['+', 'd', 'b']);
    let (base, bonus) = match split {
        Some(at) => {
            let (base, tail) = rest.split_at(at);
            let (marker, amount) = tail.split_at(1);
            let ms = parse_seconds(amount).map_err(|why| format!("{marker}{amount:?}: {why}"))?;
            let bonus = match marker {
                "+" => Bonus::Increment(ms),
                "d" => Bonus::Delay(ms),
                _ => Bonus::Bronstein(ms),
            };
            (base, bonus)
        }
        None => (rest, Bonus::None),
    };
    let base_ms = parse_seconds(base).map_err(|why| format!("time {base:?}: {why}"))?;
    if base_ms == 0 && bonus.millis() == 0 {
        return Err("a period needs some time: 0 seconds and no bonus".into());
    }
    Ok(Period {
        moves,
        base_ms,
        bonus,
    })
}

/// Seconds with up to three decimals, in milliseconds.
fn parse_seconds(text: &str) -> Result<u64, String> {
    let bad = || "not a number of seconds".to_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if text.contains('.') && fraction.is_empty() {
        return Err(bad());
    }
    let too_large = || "too large a number of seconds".to_string();
    let whole: u64 = whole.parse().map_err(|_| too_large())?;
    let mut millis = 0u64;
    for (i, digit) in fraction.bytes().enumerate() {
        millis += u64::from(digit - b'0') * 10u64.pow(2 - i as u32);
    }
    whole
        .checked_mul(1000)
        .and_then(|ms| ms.checked_add(millis))
        .ok_or_else(too_large)
}

struct Seconds(u64);

impl fmt::Display for Seconds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (whole, ms) = (self.0 / 1000, self.0 % 1000);
        if ms == 0 {
            write!(f, "{whole}")
        } else {
            let fraction = format!("{ms:03}");
            write!(f, "{whole}.{}", fraction.trim_end_matches('0'))
        }
    }
}

impl fmt::Display for Period {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(moves) = self.moves {
            write!(f, "{moves}/")?;
        }
        write!(f, "{}", Seconds(self.base_ms))?;
        match self.bonus {
            Bonus::None => Ok(()),
            Bonus::Increment(ms) => write!(f, "+{}", Seconds(ms)),
            Bonus::Delay(ms) => write!(f, "d{}", Seconds(ms)),
            Bonus::Bronstein(ms) => write!(f, "b{}", Seconds(ms)),
        }
    }
}

impl fmt::Display for TimeControl {
    /// Writes PGN `TimeControl` syntax; `parse(x.to_string()) == x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeControl::Unknown => f.write_str("?"),
            TimeControl::Unlimited => f.write_str("-"),
            TimeControl::Hourglass { base_ms } => write!(f, "*{}", Seconds(*base_ms)),
            TimeControl::Periods(periods) => {
                for (i, period) in periods.iter().enumerate() {
                    if i > 0 {
                        f.write_str(":")?;
                    }
                    write!(f, "{period}")?;
                }
                Ok(())
            }
        }
    }
}

impl serde::Serialize for TimeControl {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for TimeControl {
    /// Reads the PGN syntax, so a TOML `time_control = "40/5400+30:1800+30"` works.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        TimeControl::parse(&text).map_err(serde::de::Error::custom)
    }
}
