//! The board's link: opened on its own port or as its share of a bus chain, its port found by
//! probing (by serial number or "auto"), connected and lost; its move log asked for.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use super::super::discovery::{Found, Target};
use super::super::replay::{BOUND_SERIAL, LINK_LOST};
use super::super::{loud, say};
use super::BoardTask;
use crate::board::kind::BoardKind;
use crate::driver::dgt::{LinkConfig, LinkEvent, LinkHandle, spawn_link};
use crate::driver::snapshot_link::{SnapshotLinkConfig, spawn_snapshot_link};
use crate::event::BoardSource;
use crate::store::{NewEntry, Record};
use crate::wire::dgt::{Command, CommandDecoder};

/// How long a board on a named port waits before opening it again when it could not be
/// opened or did not answer: on event day cables are plugged in after the recorder starts,
/// and another program may let go of the port.
const PORT_RETRY: Duration = Duration::from_secs(2);

/// The board's link and the search for its port, as the task's loop keeps them.
pub(super) struct Linking {
    /// The link open now.
    pub(super) link: Option<Link>,
    /// The prober's answer waited for, while the board's port is looked for.
    pub(super) finding: Option<oneshot::Receiver<Found>>,
    /// When the named port is opened again.
    pub(super) reopen: Option<tokio::time::Instant>,
    /// The failure last told (each is told once).
    failure_told: Option<String>,
}

impl BoardTask {
    /// Opens the board's link on its port or its bus chain, or starts looking for its port.
    pub(super) fn start_linking(&mut self) -> Linking {
        let mut linking = Linking {
            link: None,
            finding: None,
            reopen: None,
            failure_told: None,
        };
        match self.source.clone() {
            BoardSource::Port(p) => linking.link = self.open_link(p.to_string_lossy().into_owned()),
            BoardSource::Bus { port, serial } => linking.link = self.open_bus_link(&port, &serial),
            _ => linking.finding = Some(self.find()),
        }
        linking
    }

    /// Takes one event of the link (`None`: the link ended); a link lost, failed or to
    /// another board than the one wanted is closed, and its port looked for or opened again.
    pub(super) async fn on_link_event(&mut self, linking: &mut Linking, event: Option<LinkEvent>) {
        let port = linking
            .link
            .as_ref()
            .map(|l| l.port.clone())
            .unwrap_or_default();
        let keep = match event {
            Some(LinkEvent::Bytes { t_ms, data }) => {
                self.on_bytes(t_ms, data).await;
                true
            }
            Some(LinkEvent::Connected {
                port,
                version,
                serial,
            }) => {
                linking.failure_told = None;
                self.on_connected(&port, version.as_deref(), serial.as_deref())
            }
            Some(LinkEvent::Disconnected { reason }) => {
                self.on_lost(&port, &reason);
                self.link_lost(&reason).await;
                !self.found_by_probing()
            }
            Some(LinkEvent::Failed { message }) => {
                self.on_failed(linking, &message);
                self.link_lost(&message).await;
                false
            }
            None => false,
        };
        if !keep && let Some(old) = linking.link.take() {
            old.handle.shutdown();
            if self.found_by_probing() {
                linking.finding = Some(self.find());
            }
            if matches!(self.source, BoardSource::Port(_)) {
                linking.reopen = Some(tokio::time::Instant::now() + PORT_RETRY);
            }
        }
    }

    /// Says, once, why the link failed, and when it is tried again.
    fn on_failed(&self, linking: &mut Linking, message: &str) {
        if linking.failure_told.as_deref() == Some(message) {
            return;
        }
        let retry = match self.source {
            BoardSource::Port(_) => format!(
                "; trying again every {} s until it answers",
                PORT_RETRY.as_secs()
            ),
            _ => String::new(),
        };
        loud(&format!("board {}: {message}{retry}", self.number));
        linking.failure_told = Some(message.to_string());
    }

    /// Opens the board's named port again.
    pub(super) fn reopen(&mut self, linking: &mut Linking) {
        linking.reopen = None;
        if let BoardSource::Port(p) = self.source.clone() {
            linking.link = self.open_link(p.to_string_lossy().into_owned());
        }
    }

    /// The prober found the board's port (`None`: it stopped): the bytes it read there are
    /// the board's first, and the port is opened.
    pub(super) async fn on_port_found(&mut self, linking: &mut Linking, found: Option<Found>) {
        linking.finding = None;
        let Some(mut found) = found else {
            loud(&format!(
                "board {}: the port search stopped; restart the recorder",
                self.number
            ));
            return;
        };
        self.on_found(&found).await;
        let epoch = self.shared.session.epoch();
        for (at, data) in std::mem::take(&mut found.received) {
            let t_ms = at.saturating_duration_since(epoch).as_millis() as u64;
            self.on_bytes(t_ms, data).await;
        }
        linking.link = self.open_link(found.port.to_string_lossy().into_owned());
    }

    /// True when the board's port is found by probing (by serial number or "auto").
    pub(super) fn found_by_probing(&self) -> bool {
        matches!(self.source, BoardSource::Serial(_) | BoardSource::Auto)
    }

    /// The board the prober must find for this task.
    pub(super) fn target(&self) -> Target {
        match (&self.source, &self.bound_serial) {
            (BoardSource::Serial(s), _) | (BoardSource::Auto, Some(s)) => Target::Serial(s.clone()),
            _ => Target::Auto,
        }
    }

    pub(super) fn find(&self) -> oneshot::Receiver<Found> {
        self.shared.discovery.want(self.number, self.target())
    }

    /// Opens the link of the board's kind on `port`; `None` for a Pegasus without its
    /// developer key (said loudly; the recorder refuses to start without it, so only a
    /// caller that skipped that check gets here).
    pub(super) fn open_link(&mut self, port: String) -> Option<Link> {
        let epoch = self.shared.session.epoch();
        let connector = self.shared.links.get(std::path::Path::new(&port)).cloned();
        let (handle, events) = match self.pipeline.kind() {
            BoardKind::Dgt => spawn_link(
                LinkConfig {
                    connector,
                    ..LinkConfig::new(port.clone())
                },
                epoch,
            ),
            BoardKind::Pegasus => {
                let Some(key) = self.shared.pegasus_key.clone() else {
                    loud(&format!(
                        "board {}: {port} is a DGT Pegasus and no developer key is given, so it \
                         is not read: {}",
                        self.number,
                        crate::event::pegasus_key::HOW_TO_GIVE_THE_KEY
                    ));
                    return None;
                };
                let config = LinkConfig {
                    connector,
                    ..LinkConfig::pegasus(port.clone(), key)
                };
                let (handle, events) = spawn_link(config, epoch);
                self.lights = Some(forward_lights(handle.clone()));
                (handle, events)
            }
            kind => {
                let config = SnapshotLinkConfig {
                    connector,
                    ..SnapshotLinkConfig::new(kind, port.clone())
                };
                let (handle, events, lights) = spawn_snapshot_link(config, epoch);
                self.lights = Some(lights);
                (handle, events)
            }
        };
        Some(Link {
            handle: LinkControl::Own(handle),
            events,
            port,
        })
    }

    /// The board's share of its bus chain's link.
    pub(super) fn open_bus_link(&self, port: &std::path::Path, serial: &str) -> Option<Link> {
        let chain = self.shared.buses.get(port)?.clone();
        let address = crate::wire::dgt::bus::address_of_serial(serial)?;
        say(&format!(
            "board {}: DGT bus board serial {serial} (address {address}) on {}",
            self.number,
            port.display()
        ));
        Some(Link {
            events: chain.subscribe(address),
            handle: LinkControl::Bus(chain, address),
            port: port.to_string_lossy().into_owned(),
        })
    }

    /// A port was found: an "auto" board keeps the serial number it took, in the journal too.
    pub(super) async fn on_found(&mut self, found: &Found) {
        say(&format!(
            "board {}: found {} on {}",
            self.number,
            found
                .serial
                .as_deref()
                .map_or("a DGT board".to_string(), |s| format!(
                    "DGT board serial {s}"
                )),
            found.port.display()
        ));
        if self.source != BoardSource::Auto || self.bound_serial.is_some() {
            return;
        }
        let Some(serial) = found.serial.clone() else {
            return;
        };
        let entry = NewEntry {
            board: Some(self.key.clone()),
            t_ms: self.shared.session.now_ms(),
            record: Record::Metadata {
                key: BOUND_SERIAL.to_string(),
                value: serde_json::Value::String(serial.clone()),
            },
        };
        self.commit(vec![entry]).await;
        self.bound_serial = Some(serial);
    }

    /// The link's handshake succeeded; false when it is not the board this task wants.
    pub(super) fn on_connected(
        &mut self,
        port: &str,
        version: Option<&str>,
        serial: Option<&str>,
    ) -> bool {
        if let Target::Serial(wanted) = self.target()
            && !matches!(self.source, BoardSource::Port(_))
            && serial.is_some_and(|s| s != wanted)
        {
            loud(&format!(
                "board {}: the board on {port} now reports serial {}, not {wanted}; looking for \
                 board serial {wanted} again",
                self.number,
                serial.unwrap_or("unknown")
            ));
            return false;
        }
        self.pipeline.set_link(port, serial);
        match self.pipeline.kind() {
            BoardKind::Dgt => say(&format!(
                "board {}: connected on {port} (DGT board serial {}, version {})",
                self.number,
                serial.unwrap_or("unknown"),
                version.unwrap_or("unknown")
            )),
            kind => say(&format!(
                "board {}: connected on {port} ({kind} board, version {})",
                self.number,
                version.unwrap_or("unknown")
            )),
        }
        true
    }

    /// The connection to the board is gone (`why`), or the recorder started again: what the
    /// board sends next is on a new connection, part of the gap until it has been read again.
    /// Journalled, so that a replay reads the next bytes as this run does.
    pub(super) async fn link_lost(&mut self, why: &str) {
        if std::mem::replace(&mut self.connection_lost, true) {
            return;
        }
        // What fell due before the loss is decided on the board still linked, and journalled
        // before it: a replay passes time up to the loss too.
        let t_ms = self.shared.session.now_ms();
        self.pass_time(t_ms).await;
        self.pipeline.link_lost();
        let entry = NewEntry {
            board: Some(self.key.clone()),
            t_ms,
            record: Record::Metadata {
                key: LINK_LOST.to_string(),
                value: serde_json::Value::String(why.to_string()),
            },
        };
        self.commit(vec![entry]).await;
    }

    pub(super) fn on_lost(&self, port: &str, reason: &str) {
        let next = match (&self.source, self.target()) {
            (BoardSource::Port(_), _) => "this one resumes when it is plugged in again".to_string(),
            (BoardSource::Bus { .. }, _) => {
                "this one resumes when it answers on the bus again (switched on, cable back)"
                    .to_string()
            }
            (_, Target::Serial(s)) => {
                format!("board serial {s} is looked for on every candidate port until it is back")
            }
            (_, Target::Auto) => "a free board is looked for on every candidate port".to_string(),
        };
        loud(&format!(
            "board {}: port {port} lost ({reason}); the other boards keep recording, and {next}",
            self.number
        ));
    }

    /// Asks the board for its move log when the pipeline found updates lost on the line:
    /// the log tells which, and in what order (DGT `SEND_EE_MOVES`).
    pub(super) fn ask_for_log(&mut self, link: Option<&Link>) {
        if self.pipeline.take_log_request()
            && let Some(link) = link
        {
            tracing::info!(
                board = self.number,
                "the board's picture shows updates lost on the line; reading its move log to \
                 put them back"
            );
            link.handle.ask_for_log();
        }
    }
}

/// Controls the board's link: its own port's, or its share of a bus chain's.
pub(super) enum LinkControl {
    Own(LinkHandle),
    Bus(crate::driver::bus_boards::BusBoards, u16),
}

impl LinkControl {
    pub(super) fn shutdown(&self) {
        match self {
            LinkControl::Own(handle) => handle.shutdown(),
            LinkControl::Bus(chain, address) => chain.unsubscribe(*address),
        }
    }

    /// Asks for the board's move log (`SEND_EE_MOVES`). A bus board's changes come in its
    /// polls, and what it missed while off is read from its position.
    pub(super) fn ask_for_log(&self) {
        if let LinkControl::Own(handle) = self {
            handle.send(Command::SendEepromMoves);
        }
    }
}

/// Where the LED commands of a board on a DGT link (Pegasus) go: decoded and sent through
/// `handle`, which writes them while the link is up and drops them while it is down. The
/// forwarding ends when the sender is dropped (the next link's replaces it).
pub(super) fn forward_lights(handle: LinkHandle) -> mpsc::UnboundedSender<Vec<u8>> {
    let (lights, mut received) = mpsc::unbounded_channel::<Vec<u8>>();
    tokio::spawn(async move {
        let mut decoder = CommandDecoder::new();
        let mut commands = Vec::new();
        while let Some(bytes) = received.recv().await {
            decoder.push(&bytes, &mut commands);
            for command in commands.drain(..) {
                handle.send(command);
            }
        }
    });
    lights
}

/// A running link to the board.
pub(super) struct Link {
    pub(super) handle: LinkControl,
    pub(super) events: mpsc::Receiver<LinkEvent>,
    pub(super) port: String,
}

/// The next event of the link, if there is one (otherwise waits forever).
pub(super) async fn next_link_event(link: &mut Option<Link>) -> Option<LinkEvent> {
    match link {
        Some(link) => link.events.recv().await,
        None => std::future::pending().await,
    }
}

/// Waits until `at`, or forever when there is no `at`.
pub(super) async fn until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// The port found for the board, if it is being looked for (otherwise waits forever); `None`
/// when the prober stopped.
pub(super) async fn next_found(finding: &mut Option<oneshot::Receiver<Found>>) -> Option<Found> {
    match finding {
        Some(answer) => answer.await.ok(),
        None => std::future::pending().await,
    }
}
