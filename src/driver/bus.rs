//! Bus mode: one serial port, a chain of tournament boards polled by address.
//!
//! [`BusPoller`] decides what to send and what a reply means (no I/O, time in milliseconds):
//! each board is first asked for a board dump, then polled round-robin for its changes. A
//! reply with a bad checksum, or no reply within the timeout, is answered with REPEAT_CHANGES
//! (never a second SEND_CHANGES, which would make the board drop the batch it sent), a bounded
//! number of times. [`spawn_bus`] runs a poller on a port, forwarding every received chunk
//! and every decoded reply, and reopens the port with backoff when it vanishes.

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

/// The polling state machine for a chain of boards.
#[derive(Debug, Clone)]
pub struct BusPoller {
    port: String,
    addresses: Vec<u16>,
    /// Addresses that still need their first board dump.
    needs_dump: Vec<bool>,
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
            needs_dump: vec![true; addresses.len()],
            addresses,
            next: 0,
            pending: None,
            reply_timeout_ms,
            max_retries,
        }
    }

    /// Every board will be asked for a dump again (after the port was reopened).
    pub fn resync(&mut self) {
        self.needs_dump.iter_mut().for_each(|d| *d = true);
        self.pending = None;
    }

    /// The next command to send, if none is awaiting its reply.
    pub fn next_command(&mut self, now_ms: u64) -> Option<BusCommand> {
        if self.pending.is_some() || self.addresses.is_empty() {
            return None;
        }
        let i = self.next % self.addresses.len();
        self.next = i + 1;
        let kind = if self.needs_dump[i] {
            BusCommandKind::SendBoard
        } else {
            BusCommandKind::SendChanges
        };
        Some(self.issue(
            BusCommand {
                kind,
                address: self.addresses[i],
            },
            now_ms,
            0,
        ))
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
                    (BusCommandKind::SendBoard, BusReplyBody::BoardDump { fields }) => {
                        if let Some(i) = self.addresses.iter().position(|&a| a == address) {
                            self.needs_dump[i] = false;
                        }
                        BusEvent::Board { address, fields }
                    }
                    (
                        BusCommandKind::SendChanges | BusCommandKind::RepeatChanges,
                        BusReplyBody::Changes { records },
                    ) => BusEvent::Changes { address, records },
                    (_, BusReplyBody::Clock { clock }) => BusEvent::Clock { address, clock },
                    // An answer to something else (a late reply): keep waiting.
                    _ => return (Vec::new(), None),
                };
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
        if p.retries >= self.max_retries {
            self.pending = None;
            let reason = format!(
                "{}: bus board {address}: {what} after {} tries; check the chain's cables and \
                 the board's address",
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
    /// Pause after a full round of polls.
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
            poll_interval: Duration::from_millis(500),
            reconnect_initial: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(5),
        }
    }
}

/// Controls a running bus link.
#[derive(Debug, Clone)]
pub struct BusHandle {
    stop: mpsc::UnboundedSender<()>,
}

impl BusHandle {
    /// Asks the link to close the port and stop.
    pub fn shutdown(&self) {
        let _ = self.stop.send(());
    }

    /// Waits until the link task has stopped.
    pub async fn stopped(&self) {
        self.stop.closed().await;
    }
}

/// Starts polling the chain on `config.port`. Timestamps are milliseconds since `epoch`.
pub fn spawn_bus(config: BusConfig, epoch: Instant) -> (BusHandle, mpsc::Receiver<BusEvent>) {
    let (stop_tx, stop_rx) = mpsc::unbounded_channel();
    let (tx, rx) = mpsc::channel(1024);
    tokio::spawn(run_bus(config, epoch, stop_rx, tx));
    (BusHandle { stop: stop_tx }, rx)
}

enum Outcome {
    Stop,
    Lost(String),
}

async fn run_bus(
    config: BusConfig,
    epoch: Instant,
    mut stop: mpsc::UnboundedReceiver<()>,
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
                match poll(port, &config, epoch, &mut poller, &mut stop, &events).await {
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
        tokio::select! {
            () = tokio::time::sleep(backoff.next_delay()) => {}
            _ = stop.recv() => return,
        }
    }
}

async fn poll(
    mut port: SerialStream,
    config: &BusConfig,
    epoch: Instant,
    poller: &mut BusPoller,
    stop: &mut mpsc::UnboundedReceiver<()>,
    events: &mpsc::Sender<BusEvent>,
) -> Outcome {
    let now_ms = || u64::try_from(epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
    let lost =
        |what: String| Outcome::Lost(format!("{}: {what}; board chain unplugged?", config.port));
    let mut decoder = BusReplyDecoder::new();
    let mut frames = Vec::new();
    let mut buf = [0u8; 1024];
    let mut polled_in_round = 0usize;
    let mut to_send = None;
    loop {
        if to_send.is_none() && poller.deadline_ms().is_none() {
            if polled_in_round >= config.addresses.len() {
                polled_in_round = 0;
                tokio::select! {
                    () = tokio::time::sleep(config.poll_interval) => {}
                    _ = stop.recv() => return Outcome::Stop,
                }
            }
            to_send = poller.next_command(now_ms());
            polled_in_round += 1;
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
        let deadline = poller.deadline_ms().map_or_else(
            || Instant::now() + config.poll_interval,
            |ms| epoch + Duration::from_millis(ms),
        );
        let (mut new_events, retry) = tokio::select! {
            read = port.read(&mut buf) => match read {
                Ok(0) => return lost("the port was closed".to_string()),
                Err(e) => return lost(format!("read failed ({e})")),
                Ok(n) => {
                    let t_ms = now_ms();
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
            _ = stop.recv() => return Outcome::Stop,
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

    #[test]
    fn dumps_first_then_round_robin_changes() {
        let mut p = BusPoller::new("/dev/ttyUSB0", vec![7, 9], 80, 2);
        let kinds: Vec<(BusCommandKind, u16)> = (0..4)
            .map(|i| {
                let c = p.next_command(i * 10).expect("command");
                assert!(p.next_command(i * 10).is_none(), "one outstanding");
                let reply = if i < 2 {
                    dump(c.address)
                } else {
                    changes(c.address, &[1])
                };
                let (events, retry) = p.on_frame(reply, i * 10 + 5);
                assert_eq!(events.len(), 1);
                assert!(retry.is_none());
                (c.kind, c.address)
            })
            .collect();
        assert_eq!(
            kinds,
            [
                (BusCommandKind::SendBoard, 7),
                (BusCommandKind::SendBoard, 9),
                (BusCommandKind::SendChanges, 7),
                (BusCommandKind::SendChanges, 9),
            ]
        );
    }

    #[test]
    fn checksum_error_and_timeout_ask_to_repeat_changes_then_give_up() {
        let mut p = BusPoller::new("/dev/ttyUSB0", vec![7], 80, 2);
        p.next_command(0);
        p.on_frame(dump(7), 1);
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
        // Polling goes on with the same board.
        assert_eq!(p.next_command(200).map(|c| c.address), Some(7));
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
