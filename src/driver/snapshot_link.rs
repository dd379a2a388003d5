//! The link to one board that sends whole-board frames (Millennium, Certabo, Sentio,
//! Chessnut) on a serial port or, for a Chessnut, its USB HID node: open at the board's
//! speed, start its stream, forward every received chunk, notice a dead link and reconnect.
//!
//! It reports through the same [`LinkEvent`]s as the DGT link, so the recorder treats every
//! board alike: `Connected` once the first valid frame arrived (the chunks that carried it
//! follow, in order), `Bytes` for every chunk, `Disconnected` when the board went silent or
//! the port vanished (the task then reconnects with backoff), `Failed` when the port cannot
//! be opened at all or never carried a frame of the kind named. DGT commands sent through
//! the handle mean nothing to these boards and are dropped.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::backoff::Backoff;
use super::board_stream::{Connector, connector_for};
use super::dgt::{LinkEvent, LinkHandle, Request};
use crate::board::kind::{BoardKind, KindDecoder};
use crate::wire::{chessnut, millennium};

/// The serial speed of Millennium, Certabo and Sentio boards (Chessnut's USB serial too).
pub const SNAPSHOT_BAUD_RATE: u32 = 38_400;

/// Settings of one snapshot-board link.
#[derive(Debug, Clone)]
pub struct SnapshotLinkConfig {
    /// The serial port.
    pub port: String,
    /// The kind of board on it.
    pub kind: BoardKind,
    /// How long to wait for the first valid frame after opening the port.
    pub first_frame_timeout: Duration,
    /// Silence after which the board is asked for a frame (Millennium: `S`).
    pub probe_after: Duration,
    /// Silence after which the link is declared dead.
    pub silence_timeout: Duration,
    /// First delay before reconnecting.
    pub reconnect_initial: Duration,
    /// Longest delay between reconnection attempts.
    pub reconnect_max: Duration,
    /// Opens the board's stream instead of `port` (a test's Bluetooth LE peripheral).
    pub connector: Option<Arc<dyn Connector>>,
}

impl SnapshotLinkConfig {
    /// Default settings for a board of `kind` on `port`.
    pub fn new(kind: BoardKind, port: impl Into<String>) -> Self {
        SnapshotLinkConfig {
            port: port.into(),
            kind,
            first_frame_timeout: Duration::from_secs(3),
            probe_after: Duration::from_millis(500),
            silence_timeout: Duration::from_secs(3),
            reconnect_initial: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(2),
            connector: None,
        }
    }
}

/// The bytes that start a board's stream after the port opens: Millennium's version
/// request (its reply is the handshake), a status request and its reports set to come on a
/// change only (it sends its whole status after every scan, about 24 a second, unless told
/// otherwise: each report is a chunk to journal; a silent board is asked for its status
/// after [`SnapshotLinkConfig::probe_after`]); Chessnut's real-time mode. Certabo and Sentio
/// stream without being asked.
pub fn start_bytes(kind: BoardKind) -> Vec<u8> {
    match kind {
        BoardKind::Millennium => [
            millennium::Command::Version.encode(),
            millennium::Command::Status.encode(),
            millennium::Command::Write {
                address: millennium::REG_AUTO_REPORT,
                value: millennium::REPORT_ON_CHANGE,
            }
            .encode(),
        ]
        .concat(),
        BoardKind::Chessnut => chessnut::Command::RealTime.encode(),
        _ => Vec::new(),
    }
}

/// The bytes that ask a silent board for a frame, if it has such a request.
fn probe_bytes(kind: BoardKind) -> Vec<u8> {
    match kind {
        BoardKind::Millennium => millennium::Command::Status.encode(),
        _ => Vec::new(),
    }
}

/// Raw commands for the board (LED commands), written as they are while the link is up and
/// dropped while it is down.
pub type Lights = mpsc::UnboundedSender<Vec<u8>>;

/// Starts the link task. Timestamps are milliseconds since `epoch`.
pub fn spawn_snapshot_link(
    config: SnapshotLinkConfig,
    epoch: Instant,
) -> (LinkHandle, mpsc::Receiver<LinkEvent>, Lights) {
    let (handle, requests) = LinkHandle::channel();
    let (events, received) = mpsc::channel(1024);
    let (lights, lights_rx) = mpsc::unbounded_channel();
    let backoff = Backoff::new(config.reconnect_initial, config.reconnect_max);
    tokio::spawn(
        SnapshotLink {
            config,
            epoch,
            requests,
            lights: lights_rx,
            events,
            backoff,
            connected_once: false,
        }
        .run(),
    );
    (handle, received, lights)
}

struct SnapshotLink {
    config: SnapshotLinkConfig,
    epoch: Instant,
    requests: mpsc::UnboundedReceiver<Request>,
    lights: mpsc::UnboundedReceiver<Vec<u8>>,
    events: mpsc::Sender<LinkEvent>,
    backoff: Backoff,
    connected_once: bool,
}

/// How a session ended.
enum End {
    Stop,
    /// The port carried no frame of the kind named.
    Silent(String),
    Lost(String),
}

impl SnapshotLink {
    async fn run(mut self) {
        let connector = connector_for(
            &self.config.port,
            SNAPSHOT_BAUD_RATE,
            self.config.kind,
            self.config.connector.clone(),
        );
        loop {
            let problem = match connector.connect().await {
                Err(e) if !self.connected_once => return self.fail(e).await,
                Err(e) => e,
                Ok(port) => match self.session(port).await {
                    End::Stop => return,
                    End::Silent(message) if !self.connected_once => {
                        return self.fail(message).await;
                    }
                    End::Silent(reason) | End::Lost(reason) => {
                        let event = LinkEvent::Disconnected {
                            reason: reason.clone(),
                        };
                        if self.events.send(event).await.is_err() {
                            return;
                        }
                        reason
                    }
                },
            };
            tracing::info!(port = %self.config.port, %problem, "reconnecting");
            let until = Instant::now() + self.backoff.next_delay();
            loop {
                tokio::select! {
                    () = tokio::time::sleep_until(until) => break,
                    request = self.requests.recv() => match request {
                        None | Some(Request::Shutdown) => return,
                        Some(Request::Send(_)) => {}
                    },
                    Some(_) = self.lights.recv() => {}
                }
            }
        }
    }

    /// Ends the link with `message`, which its owner reports (logged here only at debug
    /// level: a recorder retrying a port that is not plugged in yet would repeat it).
    async fn fail(&self, message: String) {
        tracing::debug!("{message}");
        let _ = self.events.send(LinkEvent::Failed { message }).await;
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// One open port, from the start of its stream to its loss. Any byte stream will do: a
    /// serial port, a Chessnut's hidraw node, a Bluetooth LE board (`board_stream`).
    async fn session<P: AsyncRead + AsyncWrite + Unpin>(&mut self, mut port: P) -> End {
        let kind = self.config.kind;
        let name = self.config.port.clone();
        if let Err(e) = port.write_all(&start_bytes(kind)).await {
            return End::Lost(format!("{name}: write failed: {e}"));
        }
        let mut decoder = KindDecoder::new(kind);
        let mut held: Option<Vec<(u64, Vec<u8>)>> = Some(Vec::new());
        let opened = Instant::now();
        let mut last_rx = Instant::now();
        let mut probed = false;
        let mut buf = vec![0u8; 4096];
        let mut scratch = Vec::new();
        loop {
            let deadline = if held.is_some() {
                opened + self.config.first_frame_timeout
            } else if probed {
                last_rx + self.config.silence_timeout
            } else {
                last_rx + self.config.probe_after
            };
            tokio::select! {
                read = port.read(&mut buf) => match read {
                    Ok(0) => return End::Lost(format!("{name}: the port closed")),
                    Err(e) => return End::Lost(format!("{name}: read failed: {e}")),
                    Ok(n) => {
                        last_rx = Instant::now();
                        probed = false;
                        let chunk = (self.now_ms(), buf[..n].to_vec());
                        match held.as_mut() {
                            Some(chunks) => {
                                chunks.push(chunk);
                                scratch.clear();
                                decoder.push(&buf[..n], &mut scratch);
                                if decoder.frames_read() > 0 {
                                    let chunks = held.take().unwrap_or_default();
                                    if !self.connected(kind, chunks, &scratch).await {
                                        return End::Stop;
                                    }
                                }
                            }
                            None => {
                                let (t_ms, data) = chunk;
                                if self.events.send(LinkEvent::Bytes { t_ms, data }).await.is_err() {
                                    return End::Stop;
                                }
                            }
                        }
                    }
                },
                Some(command) = self.lights.recv() => {
                    if let Err(e) = port.write_all(&command).await {
                        return End::Lost(format!("{name}: write failed: {e}"));
                    }
                }
                request = self.requests.recv() => match request {
                    None | Some(Request::Shutdown) => return End::Stop,
                    Some(Request::Send(cmd)) => tracing::debug!(?cmd, %kind, "not a DGT board; command dropped"),
                },
                () = tokio::time::sleep_until(deadline) => {
                    if held.is_some() {
                        return End::Silent(format!(
                            "{name}: no {kind} frame in {:.1} s (is a {kind} board on this port, \
                             switched on? `touchmove ports` lists the boards found)",
                            self.config.first_frame_timeout.as_secs_f64()
                        ));
                    }
                    if probed {
                        return End::Lost(format!(
                            "{name}: the {kind} board sent nothing for {:.1} s",
                            self.config.silence_timeout.as_secs_f64()
                        ));
                    }
                    probed = true;
                    if let Err(e) = port.write_all(&probe_bytes(kind)).await {
                        return End::Lost(format!("{name}: write failed: {e}"));
                    }
                }
            }
        }
    }

    /// Reports the connection and the chunks that carried it; false when nobody listens.
    async fn connected(
        &mut self,
        kind: BoardKind,
        chunks: Vec<(u64, Vec<u8>)>,
        messages: &[crate::wire::dgt::Message],
    ) -> bool {
        self.connected_once = true;
        self.backoff.reset();
        let version = messages.iter().find_map(|m| match m {
            crate::wire::dgt::Message::Version { major, minor }
                if kind == BoardKind::Millennium =>
            {
                Some(format!("{major}.{minor:02}"))
            }
            _ => None,
        });
        let event = LinkEvent::Connected {
            port: self.config.port.clone(),
            version: Some(version.unwrap_or_else(|| kind.to_string())),
            serial: None,
        };
        if self.events.send(event).await.is_err() {
            return false;
        }
        for (t_ms, data) in chunks {
            if self
                .events
                .send(LinkEvent::Bytes { t_ms, data })
                .await
                .is_err()
            {
                return false;
            }
        }
        true
    }
}
