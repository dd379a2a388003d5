//! The link to one DGT board on a serial port: open, handshake, forward every received chunk,
//! pace clock commands, notice a dead link and reconnect.
//!
//! [`spawn_link`] starts a tokio task that owns the port. It reports through [`LinkEvent`]s:
//! `Connected` after each successful handshake, `Bytes` for every chunk received (handshake
//! replies included, in order, after the `Connected` they belong to), `Disconnected` when the
//! link is lost (the task then reconnects with backoff and resynchronises with a board dump),
//! and `Failed` when nothing can be done without the user. The task ends after `Failed`, after
//! [`LinkHandle::shutdown`], or when every handle and the event receiver are dropped.
//!
//! Once connected, the link also re-reads the whole board now and then (after a clock press,
//! after garbage on the line, after a quiet period: see [`super::verify`]) so that a lost
//! field update is corrected by the board dump that follows; the dump arrives in `Bytes` like
//! everything else.
//!
//! One file for one concept, the link to one board: handshake, reading, pacing and
//! reconnecting share the port and its state.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::backoff::Backoff;
use super::board_stream::{BoardStream, Connector, connector_for};
use super::clock_pacing::{ClockAction, ClockPacer};
use super::serial;
use super::verify::{Verifier, VerifyConfig};
use crate::board::kind::BoardKind;
use crate::wire::dgt::{AckKind, ClockMessage, Command, Decoder, Message};
use crate::wire::pegasus::{DeveloperKey, connect_sequence};

/// Which update mode the driver puts the board in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpdateMode {
    /// Field updates, and clock times only when they change (`0x4B`): the default.
    #[default]
    Nice,
    /// Field updates and clock times at least every second (`0x43`).
    Full,
    /// Field updates only, no clock (`0x44`).
    BoardOnly,
}

/// Settings of one board link. Everything but the port has a sensible default.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// The serial port, e.g. `/dev/ttyACM0`.
    pub port: String,
    /// How long to wait for each handshake reply (version, serial number, board dump).
    pub reply_timeout: Duration,
    /// How often the version request is sent before the port is declared not a DGT board.
    pub handshake_attempts: u32,
    /// Silence after which the watchdog probes the board (serial number request).
    pub watchdog_probe_after: Duration,
    /// Silence after which the link is declared dead.
    pub watchdog_timeout: Duration,
    /// How long to wait for a clock acknowledgement.
    pub clock_ack_timeout: Duration,
    /// How often an unacknowledged clock command is resent before it is dropped.
    pub clock_max_resends: u32,
    /// First delay before reconnecting.
    pub reconnect_initial: Duration,
    /// Longest delay between reconnection attempts.
    pub reconnect_max: Duration,
    /// Give up (`Failed`) when the board stays unreachable this long; `None` = never.
    pub give_up_after: Option<Duration>,
    /// The update mode set after the handshake.
    pub update_mode: UpdateMode,
    /// When the board is re-read with a full dump to correct lost field updates.
    pub verify: VerifyConfig,
    /// Read the board's EEPROM move log (0x49 → 0x8F) in every handshake, so that the changes
    /// made while the link was down can be recovered from it (`board::log_recovery`). A
    /// board that sent no log in two handshakes in a row is not asked again on this link.
    pub read_log: bool,
    /// How long to wait for the log (≈ 8 s at 9600 baud); a board without the log never
    /// answers, and the handshake goes on without it.
    pub log_timeout: Duration,
    /// A DGT Pegasus's developer key: when set, the handshake gives it to the board with the
    /// rest of the Pegasus's connect sequence (`wire::pegasus::connect_sequence`) before it
    /// asks for the board, at every connection.
    pub developer_key: Option<DeveloperKey>,
    /// Opens the board's stream instead of `port` (a test's Bluetooth LE peripheral).
    pub connector: Option<Arc<dyn Connector>>,
}

impl LinkConfig {
    /// Default settings for `port`.
    pub fn new(port: impl Into<String>) -> Self {
        LinkConfig {
            port: port.into(),
            ..LinkConfig::default()
        }
    }

    /// Settings for a DGT Pegasus on `port`, opened with `key`: field updates only (it has
    /// no clock), no move log (it keeps none), the key given at every connection.
    pub fn pegasus(port: impl Into<String>, key: DeveloperKey) -> Self {
        LinkConfig {
            update_mode: UpdateMode::BoardOnly,
            read_log: false,
            developer_key: Some(key),
            ..LinkConfig::new(port)
        }
    }
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            port: String::new(),
            reply_timeout: Duration::from_secs(2),
            handshake_attempts: 2,
            watchdog_probe_after: Duration::from_secs(1),
            watchdog_timeout: Duration::from_secs(4),
            clock_ack_timeout: Duration::from_secs(2),
            clock_max_resends: 2,
            reconnect_initial: Duration::from_millis(250),
            reconnect_max: Duration::from_secs(2),
            give_up_after: None,
            update_mode: UpdateMode::Nice,
            verify: VerifyConfig::default(),
            read_log: true,
            log_timeout: Duration::from_secs(12),
            developer_key: None,
            connector: None,
        }
    }
}

/// What a link reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LinkEvent {
    /// The handshake succeeded (again, after a reconnection).
    Connected {
        /// The port.
        port: String,
        /// Board firmware version, e.g. "1.02".
        version: Option<String>,
        /// Board serial number.
        serial: Option<String>,
    },
    /// A chunk of bytes exactly as received.
    Bytes {
        /// Milliseconds since the epoch given to [`spawn_link`].
        t_ms: u64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// The link was lost; the driver is reconnecting.
    Disconnected {
        /// What happened, naming the port.
        reason: String,
    },
    /// The link cannot work without the user; the message names the port and the fix.
    Failed {
        /// Cause and fix.
        message: String,
    },
}

/// What a link task receives from its handles.
#[derive(Debug)]
pub(crate) enum Request {
    /// Send a command to the board.
    Send(Command),
    /// Close the port and stop.
    Shutdown,
}

/// Controls a running link. Cloning gives another handle to the same link.
#[derive(Debug, Clone)]
pub struct LinkHandle {
    requests: mpsc::UnboundedSender<Request>,
}

impl LinkHandle {
    /// A handle and the receiving end of its requests, for a link task of another board
    /// kind.
    pub(crate) fn channel() -> (LinkHandle, mpsc::UnboundedReceiver<Request>) {
        let (requests, received) = mpsc::unbounded_channel();
        (LinkHandle { requests }, received)
    }

    /// Sends a command to the board. Clock commands are queued and sent one at a time, each
    /// after the previous one was acknowledged (or given up). Commands given while the link
    /// is down are sent after reconnection (clock commands) or dropped (others).
    pub fn send(&self, cmd: Command) {
        if self.requests.send(Request::Send(cmd)).is_err() {
            tracing::debug!("link already stopped; command dropped");
        }
    }

    /// Asks the link to close the port and stop.
    pub fn shutdown(&self) {
        let _ = self.requests.send(Request::Shutdown);
    }

    /// Waits until the link task has stopped.
    pub async fn stopped(&self) {
        self.requests.closed().await;
    }
}

/// Starts the link task for `config.port`. Timestamps are milliseconds since `epoch`.
pub fn spawn_link(config: LinkConfig, epoch: Instant) -> (LinkHandle, mpsc::Receiver<LinkEvent>) {
    let (req_tx, req_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::channel(1024);
    let config_backoff = (config.reconnect_initial, config.reconnect_max);
    let mut link = Link {
        pacer: ClockPacer::new(millis(config.clock_ack_timeout), config.clock_max_resends),
        config,
        epoch,
        requests: req_rx,
        events: ev_tx,
        connected_once: false,
        backoff: Backoff::new(config_backoff.0, config_backoff.1),
        unreachable_since: None,
        logless_handshakes: 0,
        reply_wait: Duration::ZERO,
    };
    link.reply_wait = link.config.reply_timeout;
    tokio::spawn(link.run());
    (LinkHandle { requests: req_tx }, ev_rx)
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Why a session ended.
enum End {
    /// Shutdown requested, or nobody listens any more.
    Stop,
    /// The port opened but the board never answered the version request.
    NotDgt(String),
    /// The link broke after (or during) a handshake.
    Lost(String),
}

/// One input to a session.
enum Input {
    Chunk(Vec<u8>),
    Request(Request),
    Timer,
    End(End),
}

struct Link {
    config: LinkConfig,
    epoch: Instant,
    requests: mpsc::UnboundedReceiver<Request>,
    events: mpsc::Sender<LinkEvent>,
    pacer: ClockPacer,
    connected_once: bool,
    backoff: Backoff,
    /// When the board was last seen unreachable without a successful handshake since.
    unreachable_since: Option<Instant>,
    /// Handshakes in a row in which the board sent no move log.
    logless_handshakes: u32,
    /// How long the handshake waits for each reply: the configured reply timeout, longer
    /// for a board found to answer slowly (see [`Link::answered_late`]).
    reply_wait: Duration,
}

/// The longest a handshake waits for one reply from a board that answers slowly.
const LONGEST_REPLY_WAIT: Duration = Duration::from_secs(16);

/// After this many handshakes in a row without a move log, the link stops asking for it: a
/// board without the log would cost every reconnection the reply timeout.
const LOGLESS_HANDSHAKES_BEFORE_GIVING_UP: u32 = 2;

impl Link {
    async fn run(mut self) {
        // A Pegasus is the one board of DGT's protocol on Bluetooth LE.
        let kind = match self.config.developer_key {
            Some(_) => BoardKind::Pegasus,
            None => BoardKind::Dgt,
        };
        let connector = connector_for(
            &self.config.port,
            serial::DGT_BAUD_RATE,
            kind,
            self.config.connector.clone(),
        );
        loop {
            // Before the first handshake every problem is the user's to fix; afterwards the
            // device may be coming back (udev still setting permissions, a Bluetooth link
            // being rebound), so everything is retried until `give_up_after`.
            let problem = match connector.connect().await {
                Err(e) if !self.connected_once => {
                    self.fail(e).await;
                    return;
                }
                Err(e) => e,
                Ok(port) => match Session::new(&mut self, port).run().await {
                    End::Stop => return,
                    End::NotDgt(message) if !self.connected_once => {
                        self.fail(message).await;
                        return;
                    }
                    End::NotDgt(message) => message,
                    End::Lost(reason) => {
                        let event = LinkEvent::Disconnected {
                            reason: reason.clone(),
                        };
                        if self.emit(event).await.is_err() {
                            return;
                        }
                        reason
                    }
                },
            };
            let since = *self.unreachable_since.get_or_insert_with(Instant::now);
            if let Some(limit) = self.config.give_up_after
                && since.elapsed() >= limit
            {
                let message = format!(
                    "{}: board unreachable for {:.1} s, giving up (last problem: {problem})",
                    self.config.port,
                    since.elapsed().as_secs_f64()
                );
                self.fail(message).await;
                return;
            }
            tracing::info!(port = %self.config.port, %problem, "reconnecting");
            let delay = self.backoff.next_delay();
            if !self.wait(delay).await {
                return;
            }
        }
    }

    /// Sleeps while the link is down, still serving requests. False when asked to stop.
    async fn wait(&mut self, delay: Duration) -> bool {
        let until = Instant::now() + delay;
        loop {
            tokio::select! {
                () = tokio::time::sleep_until(until) => return true,
                request = self.requests.recv() => match request {
                    None | Some(Request::Shutdown) => return false,
                    Some(Request::Send(cmd)) => self.queue_while_down(cmd),
                },
            }
        }
    }

    fn queue_while_down(&mut self, cmd: Command) {
        if matches!(cmd, Command::Clock(_)) {
            // Queued only: it is sent by `restart` once the link is up again.
            self.pacer.push_waiting(cmd.encode());
        } else {
            tracing::warn!(port = %self.config.port, ?cmd, "link down; command dropped");
        }
    }

    fn now_ms(&self) -> u64 {
        millis(self.epoch.elapsed())
    }

    /// The board answered a request only after `answered_in`, or (`None`) not within the
    /// handshake's wait: a board that answers late (a Bluetooth link, a busy adapter) is
    /// waited for twice as long as it took, or twice as long as before, up to
    /// [`LONGEST_REPLY_WAIT`]; with the configured timeout alone every handshake with it
    /// would time out and the board would never be read again.
    fn answered_late(&mut self, answered_in: Option<Duration>) {
        let longer = answered_in.map_or(self.reply_wait, |took| took.max(self.reply_wait / 2));
        self.reply_wait = (longer * 2).clamp(self.config.reply_timeout, LONGEST_REPLY_WAIT);
    }

    /// What a slow board adds to the silence the watchdog accepts.
    fn slowness(&self) -> Duration {
        self.reply_wait.saturating_sub(self.config.reply_timeout)
    }

    async fn emit(&self, event: LinkEvent) -> Result<(), ()> {
        self.events.send(event).await.map_err(|_| ())
    }

    /// Ends the link with `message`, which its owner reports (logged here only at debug
    /// level: a recorder retrying a port that is not plugged in yet would repeat it).
    async fn fail(&self, message: String) {
        tracing::debug!("{message}");
        let _ = self.emit(LinkEvent::Failed { message }).await;
    }
}

/// One open port, from handshake to loss.
struct Session<'a> {
    link: &'a mut Link,
    port: BoardStream,
    decoder: Decoder,
    messages: Vec<Message>,
    /// Chunks received before `Connected` was sent: forwarded right after it.
    held: Option<Vec<(u64, Vec<u8>)>>,
    last_rx: Instant,
    probed: bool,
    /// The last clock reading the board forwarded showed a clock running: in an update mode
    /// the board then forwards one at least every second, so silence means it lost its mode.
    clock_running: bool,
    /// Whether a board dump arrived since the session began (the handshake waits for one).
    dumped: bool,
    /// Decides when to re-read the board; active once connected.
    verifier: Verifier,
}

impl<'a> Session<'a> {
    fn new(link: &'a mut Link, port: BoardStream) -> Self {
        Session {
            link,
            port,
            decoder: Decoder::new(),
            messages: Vec::new(),
            held: Some(Vec::new()),
            last_rx: Instant::now(),
            probed: false,
            clock_running: false,
            dumped: false,
            verifier: Verifier::new(VerifyConfig::off(), 0),
        }
    }

    fn port_name(&self) -> &str {
        &self.link.config.port
    }

    async fn run(mut self) -> End {
        match self.handshake().await {
            Ok(()) => self.serve().await,
            Err(end) => end,
        }
    }

    async fn handshake(&mut self) -> Result<(), End> {
        let timeout = self.link.reply_wait;
        let asked = Instant::now();
        let mut version = None;
        for _ in 0..self.link.config.handshake_attempts.max(1) {
            self.write(&Command::Reset.encode()).await?;
            self.write(&Command::SendVersion.encode()).await?;
            version = self
                .wait_for(timeout, |m| match m {
                    Message::Version { major, minor } => Some(format!("{major}.{minor:02}")),
                    _ => None,
                })
                .await?;
            if version.is_some() {
                break;
            }
        }
        let Some(version) = version else {
            self.link.answered_late(None);
            return Err(End::NotDgt(format!(
                "{}: no reply to the DGT version request within {:.1} s; this is not a DGT \
                 board, or the board is switched off. Check the port with `touchmove ports`",
                self.port_name(),
                timeout.as_secs_f64() * f64::from(self.link.config.handshake_attempts.max(1))
            )));
        };
        if asked.elapsed() > timeout / 2 {
            self.link.answered_late(Some(asked.elapsed()));
        }
        let timeout = self.link.reply_wait;
        self.write(&Command::SendSerialNumber.encode()).await?;
        let serial = self
            .wait_for(timeout, |m| match m {
                Message::SerialNumber(s) => Some(s.clone()),
                _ => None,
            })
            .await?;
        let mode = self.update_mode_command();
        let read_log = self.link.config.read_log
            && self.link.logless_handshakes < LOGLESS_HANDSHAKES_BEFORE_GIVING_UP;
        // One write, in this order: the board takes its log (if asked) and its dump at the same
        // moment, and every change after it follows both as a field update; none falls
        // between them or before the dump.
        let mut ask = Vec::new();
        if read_log {
            ask.extend(Command::SendEepromMoves.encode());
        }
        match &self.link.config.developer_key {
            // A Pegasus sends its board and its changes only once it has the key.
            Some(key) => ask.extend(connect_sequence(key)),
            None => {
                ask.extend(Command::SendBoard.encode());
                ask.extend(mode.encode());
            }
        }
        self.write(&ask).await?;
        let logged = read_log && self.read_log().await?;
        // The dump comes behind the log, which takes ≈ 8 s at 9600 baud: a board still
        // talking is not a silent one.
        let dumped = self.dumped
            || self
                .wait_for_while_talking(timeout, DUMP_BEHIND_BACKLOG, |m| {
                    matches!(m, Message::BoardDump(_)).then_some(())
                })
                .await?
                .is_some();
        if !dumped {
            self.link.answered_late(None);
            let why = if self.link.config.developer_key.is_some() {
                " (a DGT Pegasus sends it only after the right developer key: check the \
                 pegasus_key DGT gave you)"
            } else {
                ""
            };
            return Err(End::Lost(format!(
                "{}: the board answered its version but sent no board dump within {:.1} s{why}",
                self.port_name(),
                timeout.as_secs_f64()
            )));
        }
        let connected = LinkEvent::Connected {
            port: self.port_name().to_string(),
            version: Some(version),
            serial,
        };
        self.link.emit(connected).await.map_err(|()| End::Stop)?;
        self.verifier = Verifier::new(self.link.config.verify, self.decoder.skipped_bytes());
        self.link.connected_once = true;
        self.link.backoff.reset();
        self.link.unreachable_since = None;
        for (t_ms, data) in self.held.take().unwrap_or_default() {
            self.link
                .emit(LinkEvent::Bytes { t_ms, data })
                .await
                .map_err(|()| End::Stop)?;
        }
        if logged {
            // Answered after whatever the board queued while the log downloaded: the
            // recorder knows its line is live again when this dump comes.
            self.write(&Command::SendBoard.encode()).await?;
        }
        let now = self.link.now_ms();
        if let Some(action) = self.link.pacer.restart(now) {
            self.clock_action(action).await?;
        }
        Ok(())
    }

    /// Waits for the EEPROM move log asked for with the dump; true when it arrived. A board
    /// that has not begun to send it within the reply timeout, or that answers the dump
    /// first, has no log.
    async fn read_log(&mut self) -> Result<bool, End> {
        let start = self
            .wait_for_log_start(self.link.config.reply_timeout)
            .await?;
        let arrived = match start {
            LogStart::Arrived => true,
            LogStart::Begun => {
                let whole = |m: &Message| matches!(m, Message::EepromMoves(_)).then_some(());
                let log = self.wait_for(self.link.config.log_timeout, whole).await?;
                log.is_some()
            }
            LogStart::Absent => false,
        };
        if arrived {
            self.link.logless_handshakes = 0;
        } else {
            self.link.logless_handshakes += 1;
            let again = if self.link.logless_handshakes < LOGLESS_HANDSHAKES_BEFORE_GIVING_UP {
                "it is asked for again at the next connection"
            } else {
                "it is not asked for again on this link"
            };
            tracing::warn!(
                port = %self.port_name(),
                "the board sent no move log ({again}); changes made while the link was down \
                 can only be read from its position"
            );
        }
        Ok(arrived)
    }

    /// Reads until a decoded message satisfies `pick`, the board has been silent for `quiet`
    /// (counted from the call at the earliest), or `cap` passed.
    async fn wait_for_while_talking<T>(
        &mut self,
        quiet: Duration,
        cap: Duration,
        pick: impl Fn(&Message) -> Option<T>,
    ) -> Result<Option<T>, End> {
        let asked = Instant::now();
        let give_up = asked + cap;
        loop {
            let deadline = (self.last_rx.max(asked) + quiet).min(give_up);
            let now = Instant::now();
            if deadline <= now {
                return Ok(None);
            }
            if let Some(found) = self.wait_for(deadline - now, &pick).await? {
                return Ok(Some(found));
            }
        }
    }

    /// Waits until the log has arrived, has begun to arrive, or `timeout` passed.
    async fn wait_for_log_start(&mut self, timeout: Duration) -> Result<LogStart, End> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_input(deadline).await {
                Input::Chunk(data) => {
                    // Only message ids have the high bit set: this is the start of an EE_MOVES
                    // frame.
                    let begun = data.contains(&EE_MOVES_ID);
                    self.take_chunk(data).await?;
                    let log = |m: &Message| matches!(m, Message::EepromMoves(_));
                    let dump = |m: &Message| matches!(m, Message::BoardDump(_));
                    match self.messages.iter().position(|m| log(m) || dump(m)) {
                        Some(i) if log(&self.messages[i]) => return Ok(LogStart::Arrived),
                        // Asked for before the dump: a board that answers the dump first
                        // ignored the request.
                        Some(_) => return Ok(LogStart::Absent),
                        None if begun => return Ok(LogStart::Begun),
                        None => {}
                    }
                }
                Input::Request(request) => self.request(request).await?,
                Input::Timer => return Ok(LogStart::Absent),
                Input::End(end) => return Err(end),
            }
        }
    }

    /// Reads until a decoded message satisfies `pick` or `timeout` passes.
    async fn wait_for<T>(
        &mut self,
        timeout: Duration,
        pick: impl Fn(&Message) -> Option<T>,
    ) -> Result<Option<T>, End> {
        let deadline = Instant::now() + timeout;
        loop {
            match self.next_input(deadline).await {
                Input::Chunk(data) => {
                    self.take_chunk(data).await?;
                    if let Some(found) = self.messages.iter().find_map(&pick) {
                        return Ok(Some(found));
                    }
                }
                Input::Request(request) => self.request(request).await?,
                Input::Timer => return Ok(None),
                Input::End(end) => return Err(end),
            }
        }
    }

    async fn serve(mut self) -> End {
        loop {
            let deadline = self.next_deadline();
            let step = match self.next_input(deadline).await {
                Input::Chunk(data) => self.take_chunk(data).await,
                Input::Request(request) => self.request(request).await,
                Input::Timer => self.on_timer().await,
                Input::End(end) => return end,
            };
            if let Err(end) = step {
                return end;
            }
        }
    }

    fn next_deadline(&self) -> Instant {
        let cfg = &self.link.config;
        let watchdog = if self.probed {
            self.last_rx + cfg.watchdog_timeout + self.link.slowness()
        } else {
            self.last_rx + cfg.watchdog_probe_after
        };
        [self.link.pacer.deadline_ms(), self.verifier.deadline_ms()]
            .into_iter()
            .flatten()
            .map(|ms| self.link.epoch + Duration::from_millis(ms))
            .fold(watchdog, Instant::min)
    }

    async fn on_timer(&mut self) -> Result<(), End> {
        let now = self.link.now_ms();
        for action in self.link.pacer.on_time(now) {
            self.clock_action(action).await?;
        }
        self.verifier.on_time(now);
        self.verify_if_due(now).await?;
        let silent = self.last_rx.elapsed();
        let cfg = &self.link.config;
        if silent >= cfg.watchdog_timeout + self.link.slowness() {
            return Err(End::Lost(format!(
                "{}: the board stopped answering (nothing received for {:.1} s, watchdog probe \
                 unanswered); check the board's cable and power",
                self.port_name(),
                silent.as_secs_f64()
            )));
        }
        if silent >= cfg.watchdog_probe_after && !self.probed {
            self.probed = true;
            let mut probe = Command::SendSerialNumber.encode();
            // A running clock is forwarded at least every second in an update mode (protocol
            // notes, the modes): silence after one is a board switched off and on while its
            // port stayed open, back in IDLE mode, which answers the probe but reports nothing
            // more. The update mode is asked for again, behind a dump, as at the handshake, so
            // that what changed meanwhile is read from the dump. A Pegasus needs its key for
            // that, which only a new handshake sends.
            if self.clock_running && self.link.config.developer_key.is_none() {
                probe.extend(Command::SendBoard.encode());
                probe.extend(self.update_mode_command().encode());
            }
            self.write(&probe).await?;
        }
        Ok(())
    }

    /// The command that sets the board's update mode the link was configured with.
    fn update_mode_command(&self) -> Command {
        match self.link.config.update_mode {
            UpdateMode::Nice => Command::SendUpdateNice,
            UpdateMode::Full => Command::SendUpdate,
            UpdateMode::BoardOnly => Command::SendUpdateBoard,
        }
    }

    async fn next_input(&mut self, deadline: Instant) -> Input {
        let mut buf = [0u8; 1024];
        tokio::select! {
            read = self.port.read(&mut buf) => match read {
                Ok(0) => Input::End(End::Lost(format!(
                    "{}: the port was closed (board unplugged?)", self.link.config.port
                ))),
                Ok(n) => Input::Chunk(buf[..n].to_vec()),
                Err(e) => Input::End(End::Lost(format!(
                    "{}: read failed ({e}); board unplugged?", self.link.config.port
                ))),
            },
            request = self.link.requests.recv() => match request {
                Some(request) => Input::Request(request),
                None => Input::End(End::Stop),
            },
            () = tokio::time::sleep_until(deadline) => Input::Timer,
        }
    }

    /// Decodes a received chunk, forwards it (or holds it until `Connected`) and feeds clock
    /// acknowledgements to the pacer.
    async fn take_chunk(&mut self, data: Vec<u8>) -> Result<(), End> {
        let t_ms = self.link.now_ms();
        self.last_rx = Instant::now();
        self.probed = false;
        self.messages.clear();
        self.decoder.push(&data, &mut self.messages);
        for message in &self.messages {
            if let Message::Clock(ClockMessage::Times(times)) = message {
                self.clock_running = times.status.running_side().is_some();
            }
        }
        self.dumped |= self
            .messages
            .iter()
            .any(|m| matches!(m, Message::BoardDump(_)));
        match self.held.as_mut() {
            Some(held) => held.push((t_ms, data)),
            None => self
                .link
                .emit(LinkEvent::Bytes { t_ms, data })
                .await
                .map_err(|()| End::Stop)?,
        }
        let acked: Vec<u8> = self
            .messages
            .iter()
            .filter_map(acknowledged_command)
            .collect();
        for command in acked {
            if let Some(action) = self.link.pacer.on_ack(command, t_ms) {
                self.clock_action(action).await?;
            }
        }
        for message in &self.messages {
            self.verifier.on_message(message, t_ms);
        }
        self.verifier.on_skipped(self.decoder.skipped_bytes());
        self.verify_if_due(t_ms).await
    }

    /// Writes a board dump request when the verifier wants one (never during the handshake,
    /// which dumps the board itself).
    async fn verify_if_due(&mut self, now_ms: u64) -> Result<(), End> {
        if self.held.is_none() && self.verifier.take_request(now_ms) {
            self.write(&Command::SendBoard.encode()).await?;
        }
        Ok(())
    }

    async fn request(&mut self, request: Request) -> Result<(), End> {
        match request {
            Request::Shutdown => Err(End::Stop),
            Request::Send(cmd) => {
                let frame = cmd.encode();
                if matches!(cmd, Command::Clock(_)) && self.held.is_some() {
                    // Still in the handshake: sent by `restart` once connected.
                    self.link.pacer.push_waiting(frame);
                    Ok(())
                } else if matches!(cmd, Command::Clock(_)) {
                    let now = self.link.now_ms();
                    match self.link.pacer.push(frame, now) {
                        Some(action) => self.clock_action(action).await,
                        None => Ok(()),
                    }
                } else {
                    self.write(&frame).await
                }
            }
        }
    }

    async fn clock_action(&mut self, action: ClockAction) -> Result<(), End> {
        match action {
            ClockAction::Send(frame) => self.write(&frame).await,
            ClockAction::GaveUp(frame) => {
                tracing::warn!(
                    port = %self.port_name(),
                    frame = ?frame,
                    "clock command never acknowledged; dropped"
                );
                Ok(())
            }
        }
    }

    async fn write(&mut self, bytes: &[u8]) -> Result<(), End> {
        let result = async {
            self.port.write_all(bytes).await?;
            self.port.flush().await
        }
        .await;
        result.map_err(|e| {
            End::Lost(format!(
                "{}: write failed ({e}); board unplugged?",
                self.link.config.port
            ))
        })
    }
}

/// The clock command a message acknowledges (an echo, not a clock-generated ack).
fn acknowledged_command(message: &Message) -> Option<u8> {
    let Message::Clock(ClockMessage::Ack(ack)) = message else {
        return None;
    };
    match ack.kind() {
        AckKind::Accepted { command } | AckKind::Error { command, .. } => Some(command),
        AckKind::Version { .. } => Some(VERSION_CLOCK_COMMAND),
        _ => None,
    }
}

/// How far the board's move log had come when the handshake stopped waiting for its start.
enum LogStart {
    /// The whole log arrived.
    Arrived,
    /// Its first bytes arrived; the rest follows.
    Begun,
    /// Nothing of it arrived in time: the board has no log.
    Absent,
}

/// The longest a handshake waits for the board dump while the board goes on sending what it
/// queued before it.
const DUMP_BEHIND_BACKLOG: Duration = Duration::from_secs(10);

/// The message id of EE_MOVES on the wire.
const EE_MOVES_ID: u8 = 0x8F;

/// The clock command id of the DGT3000/XL version request.
const VERSION_CLOCK_COMMAND: u8 = 0x09;
