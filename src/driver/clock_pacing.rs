//! Clock commands go through the board one at a time: the next one is sent only after the
//! clock acknowledged the previous one, a missing acknowledgement is resent a bounded number
//! of times, then the command is given up. Time is a parameter (milliseconds).

use std::collections::VecDeque;

/// What the link must do after a clock event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockAction {
    /// Write these bytes (a new command or a resend).
    Send(Vec<u8>),
    /// This command was never acknowledged and is dropped.
    GaveUp(Vec<u8>),
}

#[derive(Debug, Clone)]
struct Outstanding {
    frame: Vec<u8>,
    deadline_ms: u64,
    resends: u32,
}

/// The queue of clock commands with at most one awaiting its acknowledgement.
#[derive(Debug, Clone)]
pub struct ClockPacer {
    waiting: VecDeque<Vec<u8>>,
    outstanding: Option<Outstanding>,
    ack_timeout_ms: u64,
    max_resends: u32,
}

/// The clock command id inside a `2B size 03 cmd … 00` frame.
fn command_id(frame: &[u8]) -> Option<u8> {
    frame.get(3).copied()
}

impl ClockPacer {
    /// A pacer that waits `ack_timeout_ms` for each acknowledgement and resends at most
    /// `max_resends` times.
    pub fn new(ack_timeout_ms: u64, max_resends: u32) -> Self {
        ClockPacer {
            waiting: VecDeque::new(),
            outstanding: None,
            ack_timeout_ms,
            max_resends,
        }
    }

    /// Queues a clock command frame; returns it when it can be sent at once.
    pub fn push(&mut self, frame: Vec<u8>, now_ms: u64) -> Option<ClockAction> {
        self.waiting.push_back(frame);
        if self.outstanding.is_none() {
            self.start_next(now_ms)
        } else {
            None
        }
    }

    /// Queues a clock command without sending it (the link is down); [`Self::restart`]
    /// sends it once the link is up.
    pub fn push_waiting(&mut self, frame: Vec<u8>) {
        self.waiting.push_back(frame);
    }

    /// An acknowledgement of clock command `command` arrived; returns the next command to send.
    /// Acknowledgements for another command than the outstanding one are ignored.
    pub fn on_ack(&mut self, command: u8, now_ms: u64) -> Option<ClockAction> {
        let matches = self
            .outstanding
            .as_ref()
            .is_some_and(|o| command_id(&o.frame) == Some(command));
        if !matches {
            return None;
        }
        self.outstanding = None;
        self.start_next(now_ms)
    }

    /// When the outstanding command times out, if any.
    pub fn deadline_ms(&self) -> Option<u64> {
        self.outstanding.as_ref().map(|o| o.deadline_ms)
    }

    /// Handles the passing of time: resends or gives up on an unacknowledged command (and then
    /// starts the next one).
    pub fn on_time(&mut self, now_ms: u64) -> Vec<ClockAction> {
        let mut actions = Vec::new();
        let Some(o) = self.outstanding.as_mut() else {
            return actions;
        };
        if now_ms < o.deadline_ms {
            return actions;
        }
        if o.resends < self.max_resends {
            o.resends += 1;
            o.deadline_ms = now_ms + self.ack_timeout_ms;
            actions.push(ClockAction::Send(o.frame.clone()));
            return actions;
        }
        if let Some(o) = self.outstanding.take() {
            actions.push(ClockAction::GaveUp(o.frame));
        }
        actions.extend(self.start_next(now_ms));
        actions
    }

    /// After a reconnection: the outstanding command (if any) is sent again with a fresh
    /// timeout, since the board may never have received it.
    pub fn restart(&mut self, now_ms: u64) -> Option<ClockAction> {
        match self.outstanding.as_mut() {
            Some(o) => {
                o.deadline_ms = now_ms + self.ack_timeout_ms;
                Some(ClockAction::Send(o.frame.clone()))
            }
            None => self.start_next(now_ms),
        }
    }

    fn start_next(&mut self, now_ms: u64) -> Option<ClockAction> {
        let frame = self.waiting.pop_front()?;
        self.outstanding = Some(Outstanding {
            frame: frame.clone(),
            deadline_ms: now_ms + self.ack_timeout_ms,
            resends: 0,
        });
        Some(ClockAction::Send(frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BEEP: [u8; 6] = [0x2B, 0x04, 0x03, 0x0B, 0x08, 0x00];
    const END: [u8; 5] = [0x2B, 0x03, 0x03, 0x03, 0x00];

    #[test]
    fn one_outstanding_then_next_on_ack() {
        let mut p = ClockPacer::new(2000, 2);
        assert_eq!(
            p.push(BEEP.to_vec(), 0),
            Some(ClockAction::Send(BEEP.to_vec()))
        );
        assert_eq!(p.push(END.to_vec(), 10), None, "waits for the beep's ack");
        assert_eq!(
            p.on_ack(0x03, 20),
            None,
            "ack of another command is ignored"
        );
        assert_eq!(p.on_ack(0x0B, 30), Some(ClockAction::Send(END.to_vec())));
        assert_eq!(p.deadline_ms(), Some(2030));
        assert_eq!(p.on_ack(0x03, 40), None);
        assert_eq!(p.deadline_ms(), None);
    }

    #[test]
    fn bounded_resend_then_give_up_and_continue() {
        let mut p = ClockPacer::new(100, 2);
        p.push(BEEP.to_vec(), 0);
        p.push(END.to_vec(), 0);
        assert!(p.on_time(99).is_empty());
        assert_eq!(p.on_time(100), [ClockAction::Send(BEEP.to_vec())]);
        assert_eq!(p.on_time(200), [ClockAction::Send(BEEP.to_vec())]);
        assert_eq!(
            p.on_time(300),
            [
                ClockAction::GaveUp(BEEP.to_vec()),
                ClockAction::Send(END.to_vec())
            ]
        );
        assert_eq!(p.deadline_ms(), Some(400));
    }

    #[test]
    fn restart_resends_the_outstanding_command() {
        let mut p = ClockPacer::new(100, 0);
        p.push(BEEP.to_vec(), 0);
        assert_eq!(p.restart(500), Some(ClockAction::Send(BEEP.to_vec())));
        assert_eq!(p.deadline_ms(), Some(600));
    }
}
