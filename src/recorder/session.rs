//! Session time: milliseconds since the journal's first session started, kept across restarts.
//!
//! Every run of the recorder begins a journal session dated at the journal's first start, so
//! session milliseconds are one timeline across `kill -9` and restarts: software clocks count
//! the time the recorder was down, and journal times stay ordered.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// Milliseconds since 1970 now.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Where the recorder reads the time of day: the system's clock, or a simulation's.
#[derive(Debug, Clone, Copy, Default)]
pub enum WallClock {
    /// The system's clock.
    #[default]
    System,
    /// A simulation's clock: at the runtime instant `at` it was `unix_ms`, and it runs with
    /// the runtime's (paused, simulated) clock from there.
    Simulated {
        /// The time of day at `at`, in milliseconds since 1970.
        unix_ms: u64,
        /// The runtime's instant of that time.
        at: Instant,
    },
}

impl WallClock {
    /// A simulated clock that reads `unix_ms` now, on the runtime's clock.
    pub fn simulated(unix_ms: u64) -> WallClock {
        WallClock::Simulated {
            unix_ms,
            at: Instant::now(),
        }
    }

    /// True for a simulation's clock.
    pub fn is_simulated(&self) -> bool {
        matches!(self, WallClock::Simulated { .. })
    }

    /// Milliseconds since 1970 now.
    pub fn unix_ms(&self) -> u64 {
        match self {
            WallClock::System => unix_ms(),
            WallClock::Simulated { unix_ms, at } => {
                unix_ms.saturating_add(at.elapsed().as_millis() as u64)
            }
        }
    }
}

/// The session's epoch.
#[derive(Debug, Clone, Copy)]
pub struct Session {
    epoch: Instant,
}

impl Session {
    /// The session whose time 0 is `started_unix_ms` on `clock`.
    pub fn since(started_unix_ms: u64, clock: WallClock) -> Session {
        let elapsed = Duration::from_millis(clock.unix_ms().saturating_sub(started_unix_ms));
        let epoch = Instant::now()
            .checked_sub(elapsed)
            .unwrap_or_else(Instant::now);
        Session { epoch }
    }

    /// The instant session time 0 corresponds to (the driver stamps bytes against it).
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// Session time now, in milliseconds.
    pub fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }
}
