//! Finding the boards named by serial number or "auto": one task probes the candidate ports
//! and hands each waiting board task the port its board answers on.
//!
//! A board configured by serial number gets the port whose board reports that number. An
//! "auto" board gets one of the remaining detected boards, in the order of their serial
//! numbers (then port names), so the same boards get the same numbers every time; once bound
//! it keeps that serial number for the rest of the event (the recorder journals it), so after
//! a replug or a restart it finds the same physical board again, whichever port it is on.
//! Ports configured explicitly for other boards, and ports bound already, are not probed.
//!
//! A board that is not found waits, and the probing goes on (every [`PROBE_INTERVAL`]); the
//! arbiter is told which serial is missing, where it was configured, which ports were probed
//! and what they answered — again whenever that changes.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

use super::loud;
use crate::driver::probe::{BoardIdentity, Candidates, ProbeFailure, probe};

/// Time between two probing rounds while a board waits.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// How long the first request waits for the others of the same moment.
const GATHER: Duration = Duration::from_millis(100);
/// How long a probed port has to answer each request.
const PROBE_TIMEOUT: Duration = Duration::from_millis(800);
/// A port that answered nothing is probed again only after this long (it is probably not a
/// board, and DGT boards do not mind, but other devices might).
const RETRY_SILENT_PORT: Duration = Duration::from_secs(10);

/// The board a waiting task wants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// The board with this serial number.
    Serial(String),
    /// Any detected board not claimed otherwise.
    Auto,
}

/// A port found for a board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Found {
    /// The port.
    pub port: PathBuf,
    /// The serial number the board reported there.
    pub serial: Option<String>,
    /// What the probes read from the port, with receive times: the board's own bytes, to be
    /// recorded before the link's.
    pub received: Vec<(Instant, Vec<u8>)>,
}

/// Bytes read by probes, by port, until a board takes the port.
pub(crate) type Unread = BTreeMap<PathBuf, Vec<(Instant, Vec<u8>)>>;

/// Most bytes kept for a port nobody takes (a board nobody configured keeps answering
/// probes).
const MAX_UNREAD: usize = 64 * 1024;

struct Want {
    board: u32,
    target: Target,
    reply: oneshot::Sender<Found>,
}

/// Where the board tasks ask for their ports. Cloning gives another handle on the same task.
#[derive(Clone)]
pub(crate) struct Discovery {
    requests: mpsc::UnboundedSender<Want>,
}

/// What the prober knows about the event.
pub(crate) struct DiscoverySetup {
    /// Where to look.
    pub candidates: Candidates,
    /// Ports configured for boards by path: never probed.
    pub fixed: BTreeMap<PathBuf, u32>,
    /// Serial numbers that belong to boards (configured, or bound before a restart): "auto"
    /// boards do not take them.
    pub reserved: BTreeSet<String>,
    /// Where each board was configured ("event.toml:12"), for messages.
    pub origins: BTreeMap<u32, String>,
    /// Bytes read by probes before the recorder started (`record --port auto`).
    pub unread: Unread,
}

impl Discovery {
    /// Starts the probing task.
    pub(crate) fn start(setup: DiscoverySetup) -> (Discovery, tokio::task::JoinHandle<()>) {
        let (requests, incoming) = mpsc::unbounded_channel();
        let prober = Prober {
            setup,
            wanted: BTreeMap::new(),
            bound: BTreeMap::new(),
            silent: BTreeMap::new(),
            said: BTreeMap::new(),
        };
        (Discovery { requests }, tokio::spawn(prober.run(incoming)))
    }

    /// Asks for board `board`'s port (releasing the one it had); the answer comes once the
    /// board is found.
    pub(crate) fn want(&self, board: u32, target: Target) -> oneshot::Receiver<Found> {
        let (reply, answer) = oneshot::channel();
        let _ = self.requests.send(Want {
            board,
            target,
            reply,
        });
        answer
    }
}

/// What one port said in a round.
enum Seen {
    /// Configured for this board by path.
    Fixed(u32),
    /// In use by this board.
    Bound(u32),
    /// Not probed: it did not answer a moment ago.
    Silent(ProbeFailure),
    /// Probed now.
    Probed(Result<BoardIdentity, ProbeFailure>),
}

struct Prober {
    setup: DiscoverySetup,
    wanted: BTreeMap<u32, Want>,
    /// Ports handed to boards.
    bound: BTreeMap<PathBuf, u32>,
    /// Ports that answered nothing, with when and why.
    silent: BTreeMap<PathBuf, (Instant, ProbeFailure)>,
    /// The last message said about each waiting board.
    said: BTreeMap<u32, String>,
}

impl Prober {
    async fn run(mut self, mut incoming: mpsc::UnboundedReceiver<Want>) {
        loop {
            if self.wanted.is_empty() {
                match incoming.recv().await {
                    Some(want) => self.take(want),
                    None => return,
                }
                // The boards of an event ask together: one round serves them all.
                tokio::time::sleep(GATHER).await;
            }
            while let Ok(want) = incoming.try_recv() {
                self.take(want);
            }
            self.round().await;
            if self.wanted.is_empty() {
                continue;
            }
            let next = Instant::now() + PROBE_INTERVAL;
            loop {
                tokio::select! {
                    () = tokio::time::sleep_until(next) => break,
                    want = incoming.recv() => match want {
                        Some(want) => self.take(want),
                        None => return,
                    },
                }
            }
        }
    }

    fn take(&mut self, want: Want) {
        self.bound.retain(|_, b| *b != want.board);
        if let Target::Serial(s) = &want.target {
            self.setup.reserved.insert(s.clone());
        }
        self.wanted.insert(want.board, want);
    }

    /// Probes every free candidate once and hands out what was found.
    async fn round(&mut self) {
        self.wanted.retain(|_, w| !w.reply.is_closed());
        let mut seen: Vec<(PathBuf, Seen)> = Vec::new();
        for port in self.setup.candidates.list() {
            let state = if let Some(&board) = self.setup.fixed.get(&port) {
                Seen::Fixed(board)
            } else if let Some(&board) = self.bound.get(&port) {
                Seen::Bound(board)
            } else if let Some((when, why)) = self.silent.get(&port)
                && when.elapsed() < RETRY_SILENT_PORT
            {
                Seen::Silent(why.clone())
            } else {
                let mut answer = probe(&port, PROBE_TIMEOUT).await;
                if let Ok(id) = &mut answer {
                    let kept = self.setup.unread.entry(port.clone()).or_default();
                    let size: usize = kept.iter().map(|(_, b)| b.len()).sum();
                    if size < MAX_UNREAD {
                        kept.append(&mut id.received);
                    }
                }
                match &answer {
                    Err(why @ ProbeFailure::NoReply) => {
                        self.silent
                            .insert(port.clone(), (Instant::now(), why.clone()));
                    }
                    _ => {
                        self.silent.remove(&port);
                    }
                }
                Seen::Probed(answer)
            };
            seen.push((port, state));
        }
        let mut free: Vec<(PathBuf, Option<String>)> = seen
            .iter()
            .filter_map(|(port, state)| match state {
                Seen::Probed(Ok(id)) => Some((port.clone(), id.serial.clone())),
                _ => None,
            })
            .collect();
        let waiting: Vec<u32> = self.wanted.keys().copied().collect();
        for board in &waiting {
            let Some(Target::Serial(serial)) = self.wanted.get(board).map(|w| &w.target) else {
                continue;
            };
            if let Some(i) = free
                .iter()
                .position(|(_, s)| s.as_deref() == Some(serial.as_str()))
            {
                let (port, serial) = free.remove(i);
                self.hand_out(*board, port, serial);
            }
        }
        free.retain(|(_, s)| s.as_ref().is_none_or(|s| !self.setup.reserved.contains(s)));
        free.sort_by(|a, b| (&a.1, &a.0).cmp(&(&b.1, &b.0)));
        let mut free = free.into_iter();
        for board in &waiting {
            if self.wanted.get(board).map(|w| &w.target) != Some(&Target::Auto) {
                continue;
            }
            let Some((port, serial)) = free.next() else {
                break;
            };
            if let Some(s) = &serial {
                self.setup.reserved.insert(s.clone());
            }
            self.hand_out(*board, port, serial);
        }
        let still: Vec<u32> = self.wanted.keys().copied().collect();
        for board in still {
            let message = self.missing_message(board, &seen);
            if self.said.get(&board) != Some(&message) {
                loud(&message);
                self.said.insert(board, message);
            }
        }
    }

    fn hand_out(&mut self, board: u32, port: PathBuf, serial: Option<String>) {
        if let Some(want) = self.wanted.remove(&board) {
            self.said.remove(&board);
            self.bound.insert(port.clone(), board);
            let received = self.setup.unread.remove(&port).unwrap_or_default();
            let _ = want.reply.send(Found {
                port,
                serial,
                received,
            });
        }
    }

    /// Says which board is missing, where it was configured, and what each port answered.
    fn missing_message(&self, board: u32, seen: &[(PathBuf, Seen)]) -> String {
        let origin = self
            .setup
            .origins
            .get(&board)
            .map(|o| format!(" ({o})"))
            .unwrap_or_default();
        let what = match self.wanted.get(&board).map(|w| &w.target) {
            Some(Target::Serial(s)) => format!("no board with serial number {s} answered"),
            _ => "no free DGT board answered (every board found belongs to another entry)"
                .to_string(),
        };
        let probed = if seen.is_empty() {
            format!(
                "no candidate port is present ({})",
                self.setup.candidates.describe()
            )
        } else {
            let list: Vec<String> = seen
                .iter()
                .map(|(port, state)| {
                    let said = match state {
                        Seen::Fixed(b) => format!("board {b}'s configured port, not probed"),
                        Seen::Bound(b) => format!("in use by board {b}"),
                        Seen::Silent(why) => format!("{why}; probed again later"),
                        Seen::Probed(Ok(id)) => format!(
                            "DGT board serial {}, version {}",
                            id.serial.as_deref().unwrap_or("unknown"),
                            id.version
                        ),
                        Seen::Probed(Err(why)) => why.to_string(),
                    };
                    format!("{} ({said})", port.display())
                })
                .collect();
            format!("probed {}", list.join(", "))
        };
        format!(
            "board {board}{origin}: {what}; {probed}. Check the serial number on the board's \
             label and the event file, and that the board is plugged in and switched on; board \
             {board} waits and keeps probing, the other boards record"
        )
    }
}
