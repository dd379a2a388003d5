//! Board verification: when the link asks a DGT board for a full board dump.
//!
//! A DGT board reports each square change once, as a field update. When one is lost (line
//! noise makes the decoder skip bytes, a buffer overflows) the host's picture of the board
//! keeps a phantom piece or misses one, and nothing in the field-update stream will ever
//! correct it. The link therefore re-reads the whole board (`Command::SendBoard`, answered by
//! `Message::BoardDump`) at the moments a loss matters or is likely:
//!
//! * right after each clock press it sees (the running side of the clock switched): the move
//!   the press completes is checked against the real board;
//! * whenever the decoder skipped bytes: a message may have been lost in them;
//! * once the board has been quiet (no field update) for a while: a lost update during a
//!   move is corrected before the player reaches for the clock.
//!
//! At most one dump request is outstanding; triggers that come meanwhile are remembered and
//! served once the reply arrives (or is given up after a timeout). Dumps never go through the
//! clock command queue, so they neither delay nor consume clock acknowledgements. The dump
//! reaches the host's observer like any other message and becomes a snapshot observation.
//! Deterministic: time is a parameter (milliseconds).

use std::time::Duration;

use crate::wire::dgt::{ClockMessage, ClockSide, Message};

/// Which events make the link verify the board with a full dump.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifyConfig {
    /// Dump right after each clock press (a change of the clock's running side).
    pub after_press: bool,
    /// Dump whenever the decoder skipped bytes (a message may have been lost).
    pub after_garbage: bool,
    /// Dump once the board has sent no field update for this long (at most once per quiet
    /// period); `None` disables it.
    pub after_quiet: Option<Duration>,
    /// Give up waiting for a dump reply after this long (another may then be requested).
    pub reply_timeout: Duration,
}

impl VerifyConfig {
    /// No verification dumps at all (the link only dumps at each handshake).
    pub fn off() -> Self {
        VerifyConfig {
            after_press: false,
            after_garbage: false,
            after_quiet: None,
            ..VerifyConfig::default()
        }
    }
}

/// The default quiet period before a verification dump.
pub const DEFAULT_QUIET: Duration = Duration::from_secs(2);

impl Default for VerifyConfig {
    /// Every trigger on, a quiet period of [`DEFAULT_QUIET`], replies awaited 1 s.
    fn default() -> Self {
        VerifyConfig {
            after_press: true,
            after_garbage: true,
            after_quiet: Some(DEFAULT_QUIET),
            reply_timeout: Duration::from_secs(1),
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Decides when to request a board dump. Feed it every decoded message and the decoder's
/// skipped-byte count; ask it after each input whether a request is due.
#[derive(Debug, Clone)]
pub struct Verifier {
    config: VerifyConfig,
    /// A trigger fired and no dump was requested for it yet.
    wanted: bool,
    /// When the outstanding request was sent.
    outstanding_since: Option<u64>,
    /// When the last field update arrived, while its quiet-period dump is still to come.
    quiet_from: Option<u64>,
    last_running: Option<ClockSide>,
    skipped: u64,
}

impl Verifier {
    /// A verifier for a link whose decoder has skipped `skipped_total` bytes so far (those
    /// are not a reason to verify).
    pub fn new(config: VerifyConfig, skipped_total: u64) -> Self {
        Verifier {
            config,
            wanted: false,
            outstanding_since: None,
            quiet_from: None,
            last_running: None,
            skipped: skipped_total,
        }
    }

    /// Takes in one message received at `now_ms`.
    pub fn on_message(&mut self, message: &Message, now_ms: u64) {
        match message {
            Message::FieldUpdate { .. } if self.config.after_quiet.is_some() => {
                self.quiet_from = Some(now_ms);
            }
            Message::BoardDump(_) => self.outstanding_since = None,
            Message::Clock(ClockMessage::Times(times)) => {
                let Some(now) = times.status.running_side() else {
                    return;
                };
                let pressed = self.last_running.is_some_and(|before| before != now);
                self.last_running = Some(now);
                if pressed && self.config.after_press {
                    self.wanted = true;
                }
            }
            _ => {}
        }
    }

    /// Takes in the decoder's running count of skipped bytes.
    pub fn on_skipped(&mut self, skipped_total: u64) {
        if skipped_total > self.skipped && self.config.after_garbage {
            self.wanted = true;
        }
        self.skipped = skipped_total;
    }

    /// The next time [`Verifier::on_time`] has something to do.
    pub fn deadline_ms(&self) -> Option<u64> {
        let quiet = self
            .quiet_from
            .zip(self.config.after_quiet)
            .map(|(from, quiet)| from.saturating_add(millis(quiet)));
        let reply = self
            .outstanding_since
            .map(|since| since.saturating_add(millis(self.config.reply_timeout)));
        match (quiet, reply) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Lets time pass: a quiet period may end, an unanswered request is given up.
    pub fn on_time(&mut self, now_ms: u64) {
        if let (Some(from), Some(quiet)) = (self.quiet_from, self.config.after_quiet)
            && now_ms >= from.saturating_add(millis(quiet))
        {
            self.quiet_from = None;
            self.wanted = true;
        }
        if let Some(since) = self.outstanding_since
            && now_ms >= since.saturating_add(millis(self.config.reply_timeout))
        {
            tracing::debug!("board dump request unanswered; given up");
            self.outstanding_since = None;
        }
    }

    /// True when a dump request should be written now (and marks it outstanding).
    pub fn take_request(&mut self, now_ms: u64) -> bool {
        if !self.wanted || self.outstanding_since.is_some() {
            return false;
        }
        self.wanted = false;
        self.outstanding_since = Some(now_ms);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::dgt::{ClockStatus, ClockTimes};

    fn clock(right_runs: bool) -> Message {
        Message::Clock(ClockMessage::Times(ClockTimes {
            status: ClockStatus {
                running: true,
                right_lever_high: right_runs,
                ..ClockStatus::default()
            },
            ..ClockTimes::default()
        }))
    }

    const UPDATE: Message = Message::FieldUpdate {
        field: 12,
        piece: 0,
    };

    #[test]
    fn a_press_asks_for_one_dump_and_a_second_waits_for_the_reply() {
        let mut v = Verifier::new(VerifyConfig::default(), 0);
        v.on_message(&clock(false), 0);
        v.on_message(&clock(false), 500);
        assert!(!v.take_request(500), "no press yet");
        v.on_message(&clock(true), 1000);
        assert!(v.take_request(1000));
        assert!(!v.take_request(1001), "already served");
        v.on_message(&clock(false), 1010);
        assert!(!v.take_request(1010), "one request outstanding at most");
        v.on_message(&Message::BoardDump([0; 64]), 1080);
        assert!(v.take_request(1080), "the press that waited is served now");
    }

    #[test]
    fn skipped_bytes_ask_for_a_dump_only_when_the_count_grows() {
        let mut v = Verifier::new(VerifyConfig::default(), 0);
        v.on_skipped(0);
        assert!(!v.take_request(0));
        v.on_skipped(3);
        assert!(v.take_request(10));
        v.on_message(&Message::BoardDump([0; 64]), 80);
        v.on_skipped(3);
        assert!(!v.take_request(100));
    }

    #[test]
    fn a_quiet_board_is_dumped_once_per_quiet_period() {
        let mut v = Verifier::new(VerifyConfig::default(), 0);
        v.on_message(&UPDATE, 1000);
        v.on_message(&UPDATE, 1500);
        assert_eq!(v.deadline_ms(), Some(3500));
        v.on_time(3499);
        assert!(!v.take_request(3499));
        v.on_time(3500);
        assert!(v.take_request(3500));
        v.on_message(&Message::BoardDump([0; 64]), 3570);
        assert_eq!(v.deadline_ms(), None, "nothing more until the next update");
        v.on_time(10_000);
        assert!(!v.take_request(10_000));
    }

    #[test]
    fn an_unanswered_request_is_given_up_and_a_new_trigger_served() {
        let mut v = Verifier::new(VerifyConfig::default(), 0);
        v.on_skipped(1);
        assert!(v.take_request(0));
        v.on_skipped(2);
        assert!(!v.take_request(10));
        assert_eq!(v.deadline_ms(), Some(1000));
        v.on_time(1000);
        assert!(v.take_request(1000));
    }

    #[test]
    fn disabled_triggers_never_ask() {
        let mut v = Verifier::new(VerifyConfig::off(), 0);
        v.on_message(&clock(false), 0);
        v.on_message(&clock(true), 10);
        v.on_skipped(5);
        v.on_message(&UPDATE, 20);
        assert_eq!(v.deadline_ms(), None);
        v.on_time(60_000);
        assert!(!v.take_request(60_000));
    }
}
