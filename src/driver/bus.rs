//! Bus mode: one serial port, a chain of tournament boards polled by address.
//!
//! [`BusPoller`] decides what to send and what a reply means (no I/O, time in milliseconds):
//! each board is first asked for its version, pending changes (dropped), position and clock,
//! then polled round-robin for
//! its changes. A reply with a bad checksum, or no reply within the timeout, is answered with
//! REPEAT_CHANGES (never a second SEND_CHANGES, which would make the board drop the batch it
//! sent), a bounded number of times; a board that still does not answer is reported once,
//! asked once a round from then on, and read afresh when it answers again (it was switched
//! off, and what changed meanwhile is only in its position). [`spawn_bus`] runs a poller on a port, forwarding every received chunk
//! and every decoded reply, and reopens the port with backoff when it vanishes.
//!
//! One file for one concept, a bus chain: the poller's decisions and the task that runs them
//! on the port share the chain's state.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::Instant;
use tokio_serial::SerialStream;

use super::backoff::Backoff;
use super::serial;
use crate::wire::dgt::bus::{BusCommand, BusCommandKind, BusFrame, BusReplyBody, BusReplyDecoder};
use crate::wire::dgt::{ClockMessage, EepromRecord};

/// What the bus link reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BusEvent {
    /// The port is open and polling started.
    Opened {
        /// The port.
        port: String,
    },
    /// A chunk of bytes exactly as received (for the journal).
    Bytes {
        /// Milliseconds since the epoch given to [`spawn_bus`].
        t_ms: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// A board's firmware version (the first answer after the board was (re)found).
    Version {
        /// Bus address.
        address: u16,
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// A board's full position.
    Board {
        /// Bus address.
        address: u16,
        /// 64 piece codes in DGT field order.
        fields: Vec<u8>,
    },
    /// Changes a board recorded since the previous poll, in order.
    Changes {
        /// Bus address.
        address: u16,
        /// The change records.
        records: Vec<EepromRecord>,
    },
    /// A board's clock.
    Clock {
        /// Bus address.
        address: u16,
        /// The clock reading.
        clock: ClockMessage,
    },
    /// A board did not answer (or answered garbage) after every retry; polling goes on.
    Unresponsive {
        /// Bus address.
        address: u16,
        /// What went wrong, naming the port and the address.
        reason: String,
    },
    /// The port was lost; the link reopens it.
    Disconnected {
        /// What happened.
        reason: String,
    },
    /// Nothing more can be done without the user.
    Failed {
        /// Cause and fix.
        message: String,
    },
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    command: BusCommand,
    deadline_ms: u64,
    retries: u32,
}

/// What the poller asks a board, in order, before it polls its changes: after the port
/// opens, and after the board was unresponsive or powered up again.
/// The changes asked before the position are dropped: the position holds them (and a board
/// just switched on has only its power-up records).
const SETUP: [BusCommandKind; 4] = [
    BusCommandKind::SendVersion,
    BusCommandKind::SendChanges,
    BusCommandKind::SendBoard,
    BusCommandKind::SendClock,
];

/// The polling state machine for a chain of boards.
#[derive(Debug, Clone)]
pub struct BusPoller {
    port: String,
    addresses: Vec<u16>,
    /// Per board, how many of the [`SETUP`] steps it has answered since its last resync.
    setup_done: Vec<usize>,
    /// Boards that did not answer after every retry: asked once per round until they do.
    absent: Vec<bool>,
    next: usize,
    pending: Option<Pending>,
    reply_timeout_ms: u64,
    max_retries: u32,
}

impl BusPoller {
    /// A poller for the boards at `addresses` on `port`.
    pub fn new(port: &str, addresses: Vec<u16>, reply_timeout_ms: u64, max_retries: u32) -> Self {
        BusPoller {
            port: port.to_string(),
            setup_done: vec![0; addresses.len()],
            absent: vec![false; addresses.len()],
            addresses,
            next: 0,
            pending: None,
            reply_timeout_ms,
            max_retries,
        }
    }

    /// Every board will be asked for its version, position and clock again (after the port
    /// was reopened).
    pub fn resync(&mut self) {
        self.setup_done.iter_mut().for_each(|d| *d = 0);
        self.pending = None;
    }

    /// The board at `address` will be asked for its version, position and clock again (it
    /// powered up again).
    pub fn resync_board(&mut self, address: u16) {
        if let Some(i) = self.index(address) {
            self.setup_done[i] = 0;
        }
    }

    fn index(&self, address: u16) -> Option<usize> {
        self.addresses.iter().position(|&a| a == address)
    }

    /// The next command to send, if none is awaiting its reply. A board being set up is
    /// asked its next step before the poller moves on to the next board.
    pub fn next_command(&mut self, now_ms: u64) -> Option<BusCommand> {
        if self.pending.is_some() || self.addresses.is_empty() {
            return None;
        }
        let i = self.next % self.addresses.len();
        let step = self.setup_done[i];
        let kind = SETUP
            .get(step)
            .copied()
            .unwrap_or(BusCommandKind::SendChanges);
        self.next = if step + 1 < SETUP.len() { i } else { i + 1 };
        Some(self.issue(
            BusCommand {
                kind,
                address: self.addresses[i],
            },
            now_ms,
            0,
        ))
    }

    /// True when the last command given was the last one of a round over every board.
    pub fn round_done(&self) -> bool {
        self.next >= self.addresses.len()
    }

    fn issue(&mut self, command: BusCommand, now_ms: u64, retries: u32) -> BusCommand {
        self.pending = Some(Pending {
            command,
            deadline_ms: now_ms + self.reply_timeout_ms,
            retries,
        });
        command
    }

    /// When the awaited reply times out.
    pub fn deadline_ms(&self) -> Option<u64> {
        self.pending.map(|p| p.deadline_ms)
    }

    /// Bytes arrived at `now_ms`: a reply being received is not a missing one, so the
    /// timeout counts again from now (a long reply takes longer than the timeout on the line).
    pub fn on_receiving(&mut self, now_ms: u64) {
        let timeout = self.reply_timeout_ms;
        if let Some(p) = &mut self.pending {
            p.deadline_ms = p.deadline_ms.max(now_ms + timeout);
        }
    }

    /// Handles a decoded frame; returns the events and possibly a command to send at once
    /// (a retry).
    pub fn on_frame(
        &mut self,
        frame: BusFrame,
        now_ms: u64,
    ) -> (Vec<BusEvent>, Option<BusCommand>) {
        let Some(pending) = self.pending else {
            return (Vec::new(), None);
        };
        let address = pending.command.address;
        match frame {
            BusFrame::ChecksumError { .. } => {
                self.retry(pending, now_ms, "a reply with a bad checksum")
            }
            BusFrame::Reply(reply) if reply.address != address => (Vec::new(), None),
            BusFrame::Reply(reply) => {
                let event = match (pending.command.kind, reply.body) {
                    (BusCommandKind::SendVersion, BusReplyBody::Version { major, minor }) => {
                        BusEvent::Version {
                            address,
                            major,
                            minor,
                        }
                    }
                    (BusCommandKind::SendBoard, BusReplyBody::BoardDump { fields }) => {
                        BusEvent::Board { address, fields }
                    }
                    (
                        BusCommandKind::SendChanges | BusCommandKind::RepeatChanges,
                        BusReplyBody::Changes { records },
                    ) => BusEvent::Changes { address, records },
                    (BusCommandKind::SendClock, BusReplyBody::Clock { clock }) => {
                        BusEvent::Clock { address, clock }
                    }
                    // An answer to something else (a late reply): keep waiting.
                    _ => return (Vec::new(), None),
                };
                if let Some(i) = self.index(address) {
                    self.absent[i] = false;
                    let asked = match pending.command.kind {
                        BusCommandKind::RepeatChanges => BusCommandKind::SendChanges,
                        kind => kind,
                    };
                    if SETUP.get(self.setup_done[i]) == Some(&asked) {
                        self.setup_done[i] += 1;
                    }
                }
                self.pending = None;
                (vec![event], None)
            }
        }
    }

    /// Handles the passing of time: a missing reply is retried or the board reported
    /// unresponsive.
    pub fn on_time(&mut self, now_ms: u64) -> (Vec<BusEvent>, Option<BusCommand>) {
        match self.pending {
            Some(p) if now_ms >= p.deadline_ms => self.retry(p, now_ms, "no reply"),
            _ => (Vec::new(), None),
        }
    }

    fn retry(
        &mut self,
        p: Pending,
        now_ms: u64,
        what: &str,
    ) -> (Vec<BusEvent>, Option<BusCommand>) {
        let address = p.command.address;
        let index = self.index(address);
        let absent = index.is_some_and(|i| self.absent[i]);
        if p.retries >= self.max_retries || absent {
            self.pending = None;
            let Some(i) = index else {
                return (Vec::new(), None);
            };
            // Its next answer starts with its position again, whatever it missed meanwhile.
            self.setup_done[i] = 0;
            self.next = i + 1;
            if std::mem::replace(&mut self.absent[i], true) {
                return (Vec::new(), None);
            }
            let reason = format!(
                "{}: bus board {address}: {what} after {} tries; check that it is switched on, \
                 the chain's cables and the board's address",
                self.port,
                p.retries + 1
            );
            return (vec![BusEvent::Unresponsive { address, reason }], None);
        }
        let kind = match p.command.kind {
            // The board may have sent its batch already: ask for the same batch again.
            BusCommandKind::SendChanges | BusCommandKind::RepeatChanges => {
                BusCommandKind::RepeatChanges
            }
            other => other,
        };
        let command = self.issue(BusCommand { kind, address }, now_ms, p.retries + 1);
        (Vec::new(), Some(command))
    }
}

/// Settings of a bus link.
#[derive(Debug, Clone)]
pub struct BusConfig {
    /// The serial port of the chain.
    pub port: String,
    /// The bus addresses of the boards to poll.
    pub addresses: Vec<u16>,
    /// How long to wait for each reply (DGT: about 80 ms).
    pub reply_timeout: Duration,
    /// Retries after a bad or missing reply before a board is reported unresponsive.
    pub max_retries: u32,
    /// Pause after a full round of polls (the boards keep their changes meanwhile; a short
    /// pause gives the moves their times more closely).
    pub poll_interval: Duration,
    /// First delay before reopening a vanished port.
    pub reconnect_initial: Duration,
    /// Longest delay between reopening attempts.
    pub reconnect_max: Duration,
}

impl BusConfig {
    /// Default settings for the boards at `addresses` on `port`.
    pub fn new(port: impl Into<String>, addresses: Vec<u16>) -> Self {
        BusConfig {
            port: port.into(),
            addresses,
            reply_timeout: Duration::from_millis(80),
            max_retries: 3,
            poll_interval: Duration::from_millis(100),
            reconnect_initial: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(5),
        }
    }
}

/// Controls a running bus link.
#[derive(Debug, Clone)]
pub struct BusHandle {
    requests: mpsc::UnboundedSender<BusRequest>,
}

#[derive(Debug)]
enum BusRequest {
    Resync(u16),
    Stop,
}

impl BusHandle {
    /// Asks the link to close the port and stop.
    pub fn shutdown(&self) {
        let _ = self.requests.send(BusRequest::Stop);
    }

    /// Asks the link to read the board at `address` afresh (version, position, clock) before
    /// polling its changes again.
    pub fn resync(&self, address: u16) {
        let _ = self.requests.send(BusRequest::Resync(address));
    }

    /// Waits until the link task has stopped.
    pub async fn stopped(&self) {
        self.requests.closed().await;
    }
}

/// Starts polling the chain on `config.port`. Timestamps are milliseconds since `epoch`.
pub fn spawn_bus(config: BusConfig, epoch: Instant) -> (BusHandle, mpsc::Receiver<BusEvent>) {
    let (requests, requests_rx) = mpsc::unbounded_channel();
    let (tx, rx) = mpsc::channel(1024);
    tokio::spawn(run_bus(config, epoch, requests_rx, tx));
    (BusHandle { requests }, rx)
}

enum Outcome {
    Stop,
    Lost(String),
}

async fn run_bus(
    config: BusConfig,
    epoch: Instant,
    mut requests: mpsc::UnboundedReceiver<BusRequest>,
    events: mpsc::Sender<BusEvent>,
) {
    let reply_ms = u64::try_from(config.reply_timeout.as_millis()).unwrap_or(u64::MAX);
    let mut poller = BusPoller::new(
        &config.port,
        config.addresses.clone(),
        reply_ms,
        config.max_retries,
    );
    let mut backoff = Backoff::new(config.reconnect_initial, config.reconnect_max);
    let mut opened_once = false;
    loop {
        match serial::open(&config.port) {
            Err(e) if !opened_once => {
                let _ = events
                    .send(BusEvent::Failed {
                        message: e.to_string(),
                    })
                    .await;
                return;
            }
            Err(e) => tracing::info!(port = %config.port, "reopening: {e}"),
            Ok(port) => {
                opened_once = true;
                backoff.reset();
                poller.resync();
                let opened = BusEvent::Opened {
                    port: config.port.clone(),
                };
                if events.send(opened).await.is_err() {
                    return;
                }
                match poll(port, &config, epoch, &mut poller, &mut requests, &events).await {
                    Outcome::Stop => return,
                    Outcome::Lost(reason) => {
                        if events
                            .send(BusEvent::Disconnected { reason })
                            .await
                            .is_err()
                        {
                            return;
                        }
                    }
                }
            }
        }
        let until = tokio::time::Instant::now() + backoff.next_delay();
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until) => break,
                request = requests.recv() => match request {
                    None | Some(BusRequest::Stop) => return,
                    // Every board is read afresh once the port is back.
                    Some(BusRequest::Resync(_)) => {}
                },
            }
        }
    }
}

async fn poll(
    mut port: SerialStream,
    config: &BusConfig,
    epoch: Instant,
    poller: &mut BusPoller,
    requests: &mut mpsc::UnboundedReceiver<BusRequest>,
    events: &mpsc::Sender<BusEvent>,
) -> Outcome {
    let now_ms = || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let lost =
        |what: String| Outcome::Lost(format!("{}: {what}; board chain unplugged?", config.port));
    let mut decoder = BusReplyDecoder::new();
    let mut frames = Vec::new();
    let mut buf = [0u8; 1024];
    let mut to_send = None;
    let mut pause_until = None;
    loop {
        if to_send.is_none() && poller.deadline_ms().is_none() {
            match pause_until {
                None if poller.round_done() => {
                    pause_until = Some(Instant::now() + config.poll_interval);
                }
                Some(at) if Instant::now() < at => {}
                _ => {
                    pause_until = None;
                    to_send = poller.next_command(now_ms());
                }
            }
        }
        if let Some(command) = to_send.take() {
            let written = async {
                port.write_all(&command.encode()).await?;
                port.flush().await
            };
            if let Err(e) = written.await {
                return lost(format!("write failed ({e})"));
            }
        }
        let deadline = match (poller.deadline_ms(), pause_until) {
            (Some(ms), _) => epoch + Duration::from_millis(ms),
            (None, Some(at)) => at,
            (None, None) => Instant::now(),
        };
        let (mut new_events, retry) = tokio::select! {
            read = port.read(&mut buf) => match read {
                Ok(0) => return lost("the port was closed".to_string()),
                Err(e) => return lost(format!("read failed ({e})")),
                Ok(n) => {
                    let t_ms = now_ms();
                    poller.on_receiving(t_ms);
                    frames.clear();
                    decoder.push(&buf[..n], &mut frames);
                    let mut out = vec![BusEvent::Bytes { t_ms, data: buf[..n].to_vec() }];
                    let mut retry = None;
                    for frame in frames.drain(..) {
                        let (evs, r) = poller.on_frame(frame, t_ms);
                        out.extend(evs);
                        retry = retry.or(r);
                    }
                    (out, retry)
                }
            },
            () = tokio::time::sleep_until(deadline) => poller.on_time(now_ms()),
            request = requests.recv() => match request {
                None | Some(BusRequest::Stop) => return Outcome::Stop,
                Some(BusRequest::Resync(address)) => {
                    poller.resync_board(address);
                    (Vec::new(), None)
                }
            },
        };
        to_send = retry;
        for event in new_events.drain(..) {
            if events.send(event).await.is_err() {
                return Outcome::Stop;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::dgt::bus::BusReply;

    fn changes(address: u16, fields: &[u8]) -> BusFrame {
        BusFrame::Reply(BusReply {
            address,
            body: BusReplyBody::Changes {
                records: fields
                    .iter()
                    .map(|&field| EepromRecord::FieldChange {
                        field,
                        piece: 0,
                        quick: false,
                    })
                    .collect(),
            },
        })
    }

    fn dump(address: u16) -> BusFrame {
        BusFrame::Reply(BusReply {
            address,
            body: BusReplyBody::BoardDump {
                fields: vec![0; 64],
            },
        })
    }

    fn setup_reply(c: BusCommand) -> BusFrame {
        let body = match c.kind {
            BusCommandKind::SendVersion => BusReplyBody::Version { major: 1, minor: 2 },
            BusCommandKind::SendClock => BusReplyBody::Clock {
                clock: ClockMessage::Times(Default::default()),
            },
            BusCommandKind::SendChanges => return changes(c.address, &[]),
            _ => return dump(c.address),
        };
        BusFrame::Reply(BusReply {
            address: c.address,
            body,
        })
    }

    /// Answers every setup step of every board, in order.
    fn set_up(p: &mut BusPoller, boards: usize) -> Vec<(BusCommandKind, u16)> {
        (0..boards * SETUP.len())
            .map(|i| {
                let c = p.next_command(i as u64).expect("command");
                let (events, retry) = p.on_frame(setup_reply(c), i as u64);
                assert_eq!(events.len(), 1);
                assert!(retry.is_none());
                (c.kind, c.address)
            })
            .collect()
    }

    #[test]
    fn each_board_is_set_up_in_turn_then_polled_round_robin() {
        let mut p = BusPoller::new("/dev/ttyUSB0", vec![7, 9], 80, 2);
        let steps = set_up(&mut p, 2);
        let expected: Vec<(BusCommandKind, u16)> = [7, 9]
            .into_iter()
            .flat_map(|a| SETUP.map(|k| (k, a)))
            .collect();
        assert_eq!(steps, expected);
        assert!(p.round_done());
        let polls: Vec<(BusCommandKind, u16)> = (0..4)
            .map(|i| {
                let c = p.next_command(100 + i).expect("poll");
                assert!(p.next_command(100 + i).is_none(), "one outstanding");
                p.on_frame(changes(c.address, &[1]), 100 + i);
                (c.kind, c.address)
            })
            .collect();
        assert_eq!(
            polls,
            [7, 9, 7, 9]
                .map(|a| (BusCommandKind::SendChanges, a))
                .to_vec()
        );
    }

    #[test]
    fn checksum_error_and_timeout_ask_to_repeat_changes_then_give_up() {
        let mut p = BusPoller::new("/dev/ttyUSB0", vec![7], 80, 2);
        set_up(&mut p, 1);
        let first = p.next_command(10).expect("poll");
        assert_eq!(first.kind, BusCommandKind::SendChanges);
        let bad = BusFrame::ChecksumError {
            id: 0x85,
            address: 7,
        };
        let (events, retry) = p.on_frame(bad, 20);
        assert!(events.is_empty());
        assert_eq!(retry.map(|c| c.kind), Some(BusCommandKind::RepeatChanges));
        let (events, retry) = p.on_time(20 + 80);
        assert!(events.is_empty());
        assert_eq!(retry.map(|c| c.kind), Some(BusCommandKind::RepeatChanges));
        let (events, retry) = p.on_time(100 + 80);
        assert!(retry.is_none());
        match &events[..] {
            [BusEvent::Unresponsive { address: 7, reason }] => {
                assert!(
                    reason.contains("/dev/ttyUSB0") && reason.contains("3 tries"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
        // Polling goes on with the same board, which is read afresh and asked once a round
        // (said once) until it answers.
        let again = p.next_command(200).expect("asked again");
        assert_eq!(
            (again.kind, again.address),
            (BusCommandKind::SendVersion, 7)
        );
        let (events, retry) = p.on_time(200 + 80);
        assert!(events.is_empty() && retry.is_none());
        let c = p.next_command(300).expect("asked again");
        let (events, _) = p.on_frame(setup_reply(c), 310);
        assert!(matches!(events[..], [BusEvent::Version { address: 7, .. }]));
    }

    #[test]
    fn a_long_reply_arriving_is_not_timed_out() {
        let mut p = BusPoller::new("/dev/ttyUSB0", vec![7], 80, 0);
        p.next_command(0);
        p.on_receiving(70);
        let (events, retry) = p.on_time(100);
        assert!(events.is_empty() && retry.is_none());
        assert_eq!(p.deadline_ms(), Some(150));
    }

    #[test]
    fn replies_from_other_boards_are_not_taken_for_the_awaited_one() {
        let mut p = BusPoller::new("/dev/ttyUSB0", vec![7, 9], 80, 2);
        p.next_command(0);
        let (events, _) = p.on_frame(dump(9), 1);
        assert!(events.is_empty());
        assert!(p.deadline_ms().is_some());
    }
}
