//! The boards of a bus chain, each seen as if it had its own port.
//!
//! A recorder's board task reads one board's [`LinkEvent`]s: a `Connected` after each
//! handshake, then the board's messages as bytes. [`BusTranslator`] (no I/O) turns what the
//! bus poller reports into exactly that, per bus address, in the single-board messages the
//! replies mean:
//!
//! * a board (re)found — its version, then its position — becomes `Connected` followed by a
//!   VERSION and a BOARD_DUMP message, as a board's handshake on its own port is; the changes
//!   it gives between the two are dropped (the position holds them);
//! * its clock reading becomes a BWTIME message;
//! * its change records become, in their order, one FIELD_UPDATE per field record and, for
//!   each lever change, a BWTIME with the halted side's logged time and the other side
//!   running (the order of moves and presses is the board's own, not the poll's; the clock
//!   is read once per handshake, and a press of a side not known to run is preceded by a
//!   BWTIME with that side running, which the press implies);
//! * a batch that begins with the power-up tag (the board was switched off and on) is not
//!   used: the board is read afresh, since its position is all that tells what changed;
//! * a board that stops answering becomes `Disconnected`.
//!
//! [`BusBoards`] runs a chain's poller on its port and hands each board's events to whoever
//! subscribed to its address.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::bus::{BusConfig, BusEvent, BusHandle, spawn_bus};
use super::dgt::LinkEvent;
use crate::wire::dgt::{ClockMessage, ClockSide, ClockTimes, EepromRecord, Message};

#[derive(Debug, Clone, Default)]
struct BoardState {
    /// The version the board gave since it was last (re)found; its position completes the
    /// handshake.
    version: Option<(u8, u8)>,
    connected: bool,
    clock: Option<ClockTimes>,
}

/// What the translator asks for besides the events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Translated {
    /// An event for the board at this address.
    Event(u16, LinkEvent),
    /// Read this board afresh (it powered up again).
    Resync(u16),
}

/// Turns bus events into per-board link events (see the module documentation).
#[derive(Debug, Clone)]
pub struct BusTranslator {
    port: String,
    boards: BTreeMap<u16, BoardState>,
    t_ms: u64,
}

impl BusTranslator {
    /// A translator for the chain on `port`.
    pub fn new(port: &str) -> Self {
        BusTranslator {
            port: port.to_string(),
            boards: BTreeMap::new(),
            t_ms: 0,
        }
    }

    /// The events and requests one bus event gives.
    pub fn on_event(&mut self, event: BusEvent) -> Vec<Translated> {
        let t_ms = self.t_ms;
        let bytes = |address: u16, messages: &[Message]| {
            let data: Vec<u8> = messages.iter().flat_map(Message::encode).collect();
            Translated::Event(address, LinkEvent::Bytes { t_ms, data })
        };
        match event {
            BusEvent::Bytes { t_ms, .. } => {
                self.t_ms = t_ms;
                Vec::new()
            }
            BusEvent::Opened { .. } => Vec::new(),
            BusEvent::Version {
                address,
                major,
                minor,
            } => {
                self.boards.entry(address).or_default().version = Some((major, minor));
                Vec::new()
            }
            BusEvent::Board { address, fields } => {
                let Ok(fields) = <[u8; 64]>::try_from(fields) else {
                    return Vec::new();
                };
                let board = self.boards.entry(address).or_default();
                let dump = Message::BoardDump(fields);
                match board.version.take() {
                    Some((major, minor)) => {
                        board.connected = true;
                        let connected = LinkEvent::Connected {
                            port: self.port.clone(),
                            version: Some(format!("{major}.{minor:02}")),
                            serial: Some(format!("{address:05}")),
                        };
                        vec![
                            Translated::Event(address, connected),
                            bytes(address, &[Message::Version { major, minor }, dump]),
                        ]
                    }
                    None if board.connected => vec![bytes(address, &[dump])],
                    None => Vec::new(),
                }
            }
            BusEvent::Clock { address, clock } => {
                let board = self.boards.entry(address).or_default();
                if let ClockMessage::Times(times) = clock {
                    board.clock = Some(times);
                }
                if !board.connected {
                    return Vec::new();
                }
                vec![bytes(address, &[Message::Clock(clock)])]
            }
            BusEvent::Changes { address, records } => {
                let board = self.boards.entry(address).or_default();
                // Asked in the handshake, before the position, which holds them.
                if board.version.is_some() {
                    return Vec::new();
                }
                if records.contains(&EepromRecord::PowerUp) {
                    board.version = None;
                    return vec![Translated::Resync(address)];
                }
                if !board.connected {
                    return Vec::new();
                }
                let mut messages = Vec::new();
                for record in &records {
                    match *record {
                        EepromRecord::FieldChange { field, piece, .. } => {
                            messages.push(Message::FieldUpdate { field, piece });
                        }
                        EepromRecord::ClockTime {
                            side,
                            hours,
                            minutes,
                            seconds,
                        } => {
                            let before = board.clock.unwrap_or_default();
                            // The halted side ran until the press (the clock was started
                            // after it was last read): said first, so that the press is one.
                            if before.status.running_side() != Some(side) {
                                messages.push(Message::Clock(ClockMessage::Times(running(
                                    before, side,
                                ))));
                            }
                            let mut times = running(before, side.opposite());
                            let halted = match side {
                                ClockSide::Left => &mut times.left,
                                ClockSide::Right => &mut times.right,
                            };
                            (halted.hours, halted.minutes, halted.seconds) =
                                (hours, minutes, seconds);
                            board.clock = Some(times);
                            messages.push(Message::Clock(ClockMessage::Times(times)));
                        }
                        _ => {}
                    }
                }
                if messages.is_empty() {
                    return Vec::new();
                }
                vec![bytes(address, &messages)]
            }
            BusEvent::Unresponsive { address, reason } => {
                let board = self.boards.entry(address).or_default();
                board.version = None;
                if !std::mem::replace(&mut board.connected, false) {
                    return Vec::new();
                }
                vec![Translated::Event(
                    address,
                    LinkEvent::Disconnected { reason },
                )]
            }
            BusEvent::Disconnected { reason } => self
                .boards
                .iter_mut()
                .filter_map(|(&address, board)| {
                    board.version = None;
                    std::mem::replace(&mut board.connected, false).then(|| {
                        Translated::Event(
                            address,
                            LinkEvent::Disconnected {
                                reason: reason.clone(),
                            },
                        )
                    })
                })
                .collect(),
            BusEvent::Failed { message } => self
                .boards
                .keys()
                .map(|&address| {
                    Translated::Event(
                        address,
                        LinkEvent::Failed {
                            message: message.clone(),
                        },
                    )
                })
                .collect(),
        }
    }

    /// Makes sure `address` hears of a failure of the whole chain too.
    pub fn expect(&mut self, address: u16) {
        self.boards.entry(address).or_default();
    }
}

/// The clock `before` with `side` running.
fn running(before: ClockTimes, side: ClockSide) -> ClockTimes {
    let mut times = before;
    let right_runs = side == ClockSide::Right;
    times.status.running = true;
    times.status.no_clock = false;
    times.status.right_lever_high = right_runs;
    times.status.turn_bit3 = !right_runs;
    times.status.turn_bit4 = right_runs;
    times
}

type Subscribers = Arc<Mutex<BTreeMap<u16, mpsc::Sender<LinkEvent>>>>;

/// A chain's poller on its port, handing each board's events to its subscriber.
#[derive(Debug, Clone)]
pub struct BusBoards {
    handle: BusHandle,
    subscribers: Subscribers,
}

impl BusBoards {
    /// Starts polling the boards of `config` on its port. Timestamps are milliseconds since
    /// `epoch`. Must be called inside a tokio runtime.
    pub fn spawn(config: BusConfig, epoch: Instant) -> BusBoards {
        let mut translator = BusTranslator::new(&config.port);
        for &address in &config.addresses {
            translator.expect(address);
        }
        let (handle, mut events) = spawn_bus(config, epoch);
        let subscribers: Subscribers = Arc::default();
        let (to, resyncs) = (Arc::clone(&subscribers), handle.clone());
        tokio::spawn(async move {
            while let Some(event) = events.recv().await {
                for item in translator.on_event(event) {
                    match item {
                        Translated::Resync(address) => resyncs.resync(address),
                        Translated::Event(address, event) => {
                            let tx = lock(&to).get(&address).cloned();
                            if let Some(tx) = tx {
                                let _ = tx.send(event).await;
                            }
                        }
                    }
                }
            }
        });
        BusBoards {
            handle,
            subscribers,
        }
    }

    /// The events of the board at `address` from now on (replacing an earlier subscriber):
    /// the board is read afresh, so they begin with its handshake.
    pub fn subscribe(&self, address: u16) -> mpsc::Receiver<LinkEvent> {
        let (tx, rx) = mpsc::channel(1024);
        lock(&self.subscribers).insert(address, tx);
        self.handle.resync(address);
        rx
    }

    /// Stops handing the board's events to its subscriber.
    pub fn unsubscribe(&self, address: u16) {
        lock(&self.subscribers).remove(&address);
    }

    /// Closes the port and stops polling.
    pub fn shutdown(&self) {
        self.handle.shutdown();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(items: Vec<Translated>) -> Vec<(u16, LinkEvent)> {
        items
            .into_iter()
            .filter_map(|t| match t {
                Translated::Event(a, e) => Some((a, e)),
                Translated::Resync(_) => None,
            })
            .collect()
    }

    fn decoded(event: &LinkEvent) -> Vec<Message> {
        let LinkEvent::Bytes { data, .. } = event else {
            panic!("{event:?}")
        };
        let mut out = Vec::new();
        crate::wire::dgt::Decoder::new().push(data, &mut out);
        out
    }

    fn found(t: &mut BusTranslator, address: u16) -> Vec<(u16, LinkEvent)> {
        t.on_event(BusEvent::Version {
            address,
            major: 1,
            minor: 2,
        });
        events(t.on_event(BusEvent::Board {
            address,
            fields: vec![0; 64],
        }))
    }

    #[test]
    fn a_found_board_shakes_hands_and_its_records_become_messages_in_order() {
        let mut t = BusTranslator::new("/dev/ttyUSB0");
        let hello = found(&mut t, 1025);
        assert!(matches!(
            &hello[0],
            (1025, LinkEvent::Connected { serial: Some(s), version: Some(v), .. })
                if s == "01025" && v == "1.02"
        ));
        assert_eq!(
            decoded(&hello[1].1),
            [
                Message::Version { major: 1, minor: 2 },
                Message::BoardDump([0; 64])
            ]
        );
        let records = vec![
            EepromRecord::FieldChange {
                field: 52,
                piece: 0,
                quick: false,
            },
            EepromRecord::FieldChange {
                field: 36,
                piece: 1,
                quick: true,
            },
            EepromRecord::ClockTime {
                side: ClockSide::Left,
                hours: 0,
                minutes: 4,
                seconds: 58,
            },
        ];
        let out = events(t.on_event(BusEvent::Changes {
            address: 1025,
            records,
        }));
        let messages = decoded(&out[0].1);
        assert_eq!(
            messages[..2],
            [
                Message::FieldUpdate {
                    field: 52,
                    piece: 0
                },
                Message::FieldUpdate {
                    field: 36,
                    piece: 1
                }
            ]
        );
        // The clock was not running when read: the left side ran up to the press.
        let sides: Vec<(Option<ClockSide>, u8, u8)> = messages[2..]
            .iter()
            .map(|m| match m {
                Message::Clock(ClockMessage::Times(t)) => {
                    (t.status.running_side(), t.left.minutes, t.left.seconds)
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            sides,
            [
                (Some(ClockSide::Left), 0, 0),
                (Some(ClockSide::Right), 4, 58)
            ]
        );
    }

    #[test]
    fn a_power_up_reads_the_board_afresh_and_silence_disconnects_once() {
        let mut t = BusTranslator::new("/dev/ttyUSB0");
        found(&mut t, 7);
        let silent = || BusEvent::Unresponsive {
            address: 7,
            reason: "no reply".into(),
        };
        assert!(matches!(
            &events(t.on_event(silent()))[..],
            [(7, LinkEvent::Disconnected { .. })]
        ));
        assert!(t.on_event(silent()).is_empty());
        let powered = t.on_event(BusEvent::Changes {
            address: 7,
            records: vec![
                EepromRecord::PowerUp,
                EepromRecord::FieldChange {
                    field: 0,
                    piece: 2,
                    quick: false,
                },
            ],
        });
        assert_eq!(powered, [Translated::Resync(7)]);
        assert!(matches!(
            &found(&mut t, 7)[..],
            [
                (7, LinkEvent::Connected { .. }),
                (7, LinkEvent::Bytes { .. })
            ]
        ));
    }
}
