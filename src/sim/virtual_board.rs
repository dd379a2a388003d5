//! A virtual DGT board: the board side of the protocol on a pseudo-terminal.
//!
//! It answers host commands like a real board (version, serial number, board dump, update
//! modes, clock times, clock acknowledgements including DGT3000 commands) and plays a scripted
//! timeline of [`Observation`]s in game coordinates: squares emptied and pieces placed become
//! field updates, clock presses switch the clock it keeps itself (base time + increment),
//! which it reports as clock messages. The board can be presented rotated (White at the
//! connector end), unplugged (the pseudo-terminal closes and the port vanishes) and plugged in
//! again at the same path (a symbolic link it owns); like a real board it remembers its pieces
//! while unplugged. It can also lose chosen field updates on purpose
//! ([`VirtualBoardConfig::lose_updates`]), as line noise would, to test how a host recovers.
//!
//! One file for one concept, one virtual DGT board: its command answers, script, clock and
//! line all act on the board's one state.

pub mod memory;
pub mod model;
pub mod timeline;

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use shakmaty::{Board, Color, Square};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use crate::board::dgt::{code_from_piece, fields_from_board};
use crate::board::orientation::Orientation;
use crate::board::{Observation, ObservationKind};
use crate::sim::pty::{Pty, StablePath};
use crate::wire::dgt::EepromRecord;
use crate::wire::dgt::{
    ClockAck, ClockCommand, ClockMessage, ClockSide, ClockStatus, ClockTimes, Command,
    CommandDecoder, Message, SideTime,
};
use memory::BoardMemory;

/// When the virtual board starts playing its script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartWhen {
    /// As soon as a host puts the board into an update mode (so nothing is missed).
    #[default]
    FirstUpdateMode,
    /// When a host has both asked for the board and put it into an update mode (in either
    /// order) and everything the board sent before has left on the line: the end of a
    /// handshake, which on a slow line comes after the move log's download (players begin
    /// once the recorder shows their board).
    HostReady,
    /// At once.
    Immediately,
}

/// Settings of a virtual board.
#[derive(Debug, Clone)]
pub struct VirtualBoardConfig {
    /// The stable port path (a symbolic link to the current pseudo-terminal).
    pub path: PathBuf,
    /// What happens on the board, in game coordinates, `t_ms` from the start of the script.
    pub script: Vec<Observation>,
    /// Speed factor: 1.0 plays in real time, 10.0 ten times faster.
    pub speed: f64,
    /// How the board lies: `Rotated` presents it turned round (White at the connector end).
    pub orientation: Orientation,
    /// The pieces on the board before the script starts.
    pub initial: Board,
    /// Each player's time at the start, in milliseconds.
    pub base_time_ms: u64,
    /// Increment added to a player's clock when they press it, in milliseconds.
    pub increment_ms: u64,
    /// White's clock starts running when the script starts (the arbiter starts the clock).
    pub clock_starts_running: bool,
    /// White sits on the clock's left side.
    pub white_on_clock_left: bool,
    /// When the script starts.
    pub start: StartWhen,
    /// Board firmware version (major, minor).
    pub version: (u8, u8),
    /// Clock version reported to a clock version request (2.x = DGT3000).
    pub clock_version: (u8, u8),
    /// Five-digit serial number.
    pub serial: String,
    /// Keep every message written and command received, for [`VirtualBoard::emitted`] and
    /// [`VirtualBoard::commands`] (tests). Off by default: a long demo would grow without end.
    pub log_traffic: bool,
    /// Indices into `script` whose field updates are lost on the way to the host (as line
    /// noise would lose them): the board's own picture changes, so a later board dump shows
    /// the change, but no field update is written for it. Empty by default.
    pub lose_updates: Vec<usize>,
    /// The board keeps its EEPROM move log ([`memory::BoardMemory`]) and answers the log
    /// request (0x49). Off, it never answers that request, like a board without the log.
    pub eeprom_log: bool,
    /// The serial line's speed in bytes per second (a DGT board's 9600 baud 8N1 carries 960):
    /// what the board writes goes out in order at that rate, so the move log (≈ 8 KB) takes
    /// ≈ 8 s and the field updates of moves made meanwhile follow it. `None` writes at once.
    pub line_bytes_per_s: Option<u32>,
    /// What the board is like when it is plugged in again ([`VirtualBoard::replug`]).
    pub resume: ResumeMode,
    /// The make of board: a Revelation II also takes the LED command.
    pub model: model::BoardModel,
}

/// What the board is like when its link comes back after an outage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ResumeMode {
    /// It stayed powered and kept its update mode (a Bluetooth board whose link dropped):
    /// it sends the field updates of changes made after the link is back at once, before
    /// any host command.
    Keep,
    /// It stayed powered but is idle: it sends field updates once the host sets an update
    /// mode again (a USB board unplugged from the host, not from its power).
    #[default]
    Idle,
    /// It was switched off and on again: idle, and its move log has a power-up tag and one
    /// field record per piece on it after the records of the gap.
    PowerCycle,
}

/// The bytes per second of a DGT board's serial line, 9600 baud 8N1.
pub const DGT_LINE_BYTES_PER_S: u32 = 960;

impl VirtualBoardConfig {
    /// A board at `path` in the start position playing `script` in real time with a
    /// 5 min + 5 s clock.
    pub fn new(path: impl Into<PathBuf>, script: Vec<Observation>) -> Self {
        VirtualBoardConfig {
            path: path.into(),
            script,
            speed: 1.0,
            orientation: Orientation::Normal,
            initial: Board::new(),
            base_time_ms: 5 * 60 * 1000,
            increment_ms: 5000,
            clock_starts_running: true,
            white_on_clock_left: true,
            start: StartWhen::FirstUpdateMode,
            version: (1, 2),
            clock_version: (2, 0),
            serial: "01025".to_string(),
            log_traffic: false,
            lose_updates: Vec::new(),
            eeprom_log: true,
            line_bytes_per_s: None,
            resume: ResumeMode::Idle,
            model: model::BoardModel::Dgt,
        }
    }
}

/// One message the virtual board wrote to its pseudo-terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// Counts plug-ins: 0 until the first `replug`, then 1, …
    pub session: u32,
    /// The message.
    pub message: Message,
}

/// What the board has done, for whoever controls it (tests, the `sim` command).
#[derive(Debug)]
struct Shared {
    fields: [u8; 64],
    emitted: Vec<Emitted>,
    commands: Vec<Command>,
    leds: model::Leds,
}

#[derive(Debug)]
enum Control {
    Unplug(oneshot::Sender<io::Result<()>>),
    Replug(oneshot::Sender<io::Result<()>>),
    Silence(bool),
    Unread(oneshot::Sender<usize>),
}

/// A running virtual board and the handle that controls it. Dropping it stops the board and
/// removes its port path.
#[derive(Debug)]
pub struct VirtualBoard {
    control: mpsc::UnboundedSender<Control>,
    shared: Arc<Mutex<Shared>>,
    finished: watch::Receiver<bool>,
    playing: watch::Receiver<bool>,
    host_ready: watch::Receiver<bool>,
    path: PathBuf,
}

impl VirtualBoard {
    /// Opens the pseudo-terminal, points `config.path` at it and starts the board.
    /// Must be called inside a tokio runtime.
    pub fn spawn(config: VirtualBoardConfig) -> io::Result<VirtualBoard> {
        let pty = Pty::open()?;
        let link = StablePath::new(config.path.clone());
        link.point_to(pty.slave_path())?;
        let (control, control_rx) = mpsc::unbounded_channel();
        let (finished_tx, finished) = watch::channel(config.script.is_empty());
        let (playing_tx, playing) = watch::channel(false);
        let (host_ready_tx, host_ready) = watch::channel(false);
        let path = config.path.clone();
        let fields = fields_from_board(&config.initial, config.orientation);
        let shared = Arc::new(Mutex::new(Shared {
            fields,
            emitted: Vec::new(),
            commands: Vec::new(),
            leds: model::Leds::default(),
        }));
        let mut memory = BoardMemory::blank();
        memory.power_up(&fields);
        let task = BoardTask {
            memory,
            clock: ClockState::new(&config),
            script: config.script.iter().cloned().collect(),
            config,
            pty: Some(pty),
            link,
            fields,
            mode: Mode::Idle,
            dump_asked: false,
            silent: false,
            decoder: CommandDecoder::new(),
            started: None,
            session: 0,
            last_clock_sent: None,
            last_lifted: None,
            played: 0,
            line: VecDeque::new(),
            line_free_at: None,
            line_busy_until: Instant::now(),
            shared: Arc::clone(&shared),
            finished: finished_tx,
            playing: playing_tx,
            host_ready: host_ready_tx,
        };
        tokio::spawn(task.run(control_rx));
        Ok(VirtualBoard {
            control,
            shared,
            finished,
            playing,
            host_ready,
            path,
        })
    }

    /// The port path a driver opens; it stays the same across unplug/replug.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Pulls the cable: the pseudo-terminal closes and the port path disappears.
    pub async fn unplug(&self) -> io::Result<()> {
        self.ask(Control::Unplug).await
    }

    /// Plugs the board in again: a new pseudo-terminal behind the same port path. The board
    /// keeps its pieces; its mode and log are as [`VirtualBoardConfig::resume`] says.
    pub async fn replug(&self) -> io::Result<()> {
        self.ask(Control::Replug).await
    }

    /// Makes the board stop answering and sending (a hung board; the port stays open), or
    /// talk again.
    pub fn set_silent(&self, silent: bool) {
        let _ = self.control.send(Control::Silence(silent));
    }

    /// Waits (at most `limit`) until the host has read everything the board wrote; true when
    /// it has. Unplugged, there is nothing left to read.
    pub async fn drained(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        // Two empty readings in a row: bytes just written may not be counted at once.
        let mut empty_readings = 0;
        loop {
            let (tx, rx) = oneshot::channel();
            if self.control.send(Control::Unread(tx)).is_err() {
                return true;
            }
            match rx.await {
                Ok(0) | Err(_) => empty_readings += 1,
                Ok(_) => empty_readings = 0,
            }
            if empty_readings >= 2 {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Waits until the whole script has been played.
    pub async fn finished(&self) {
        let mut rx = self.finished.clone();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// Waits (at most `limit`) until a host has ended its handshake with the board since it
    /// was last plugged in (asked for the board, set an update mode and read what the board
    /// sent before, a move log included) and has read everything since; true when it has.
    pub async fn host_caught_up(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        let mut rx = self.host_ready.clone();
        // The value's guard is dropped at once: held, it would block the board's sender.
        let ready = matches!(
            tokio::time::timeout_at(deadline, rx.wait_for(|ready| *ready)).await,
            Ok(Ok(_))
        );
        ready && self.drained(deadline - Instant::now()).await
    }

    /// Waits until the script has begun (see [`StartWhen`]).
    pub async fn playing(&self) {
        let mut rx = self.playing.clone();
        let _ = rx.wait_for(|started| *started).await;
    }

    /// True once the whole script has been played.
    pub fn is_finished(&self) -> bool {
        *self.finished.borrow()
    }

    /// The pieces on the board now, as DGT field codes in the board's own numbering.
    pub fn fields(&self) -> [u8; 64] {
        lock(&self.shared).fields
    }

    /// The LEDs a host lit (a Revelation II's; always dark on a DGT board).
    pub fn leds(&self) -> model::Leds {
        lock(&self.shared).leds
    }

    /// Every message written to the pseudo-terminal so far, in order (empty unless
    /// [`VirtualBoardConfig::log_traffic`]).
    pub fn emitted(&self) -> Vec<Emitted> {
        lock(&self.shared).emitted.clone()
    }

    /// Every command received from the host so far, in order (empty unless
    /// [`VirtualBoardConfig::log_traffic`]).
    pub fn commands(&self) -> Vec<Command> {
        lock(&self.shared).commands.clone()
    }

    async fn ask(
        &self,
        make: impl FnOnce(oneshot::Sender<io::Result<()>>) -> Control,
    ) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        let stopped = || io::Error::other("the virtual board has stopped");
        self.control.send(make(tx)).map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

fn lock(shared: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    // A panic elsewhere cannot leave `Shared` inconsistent: every update is a single push or
    // assignment.
    shared
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The board's reporting mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Idle,
    UpdateBoard,
    Update,
    UpdateNice,
}

impl Mode {
    fn sends_fields(self) -> bool {
        self != Mode::Idle
    }

    fn sends_clock(self) -> bool {
        matches!(self, Mode::Update | Mode::UpdateNice)
    }
}

/// The clock the virtual board keeps, in game milliseconds.
#[derive(Debug, Clone)]
pub(crate) struct ClockState {
    pub(crate) white_ms: u64,
    pub(crate) black_ms: u64,
    pub(crate) running: Option<Color>,
    /// Game time when the running side's clock was last brought up to date.
    since_ms: u64,
    increment_ms: u64,
    /// The side whose lever is down (the side that pressed last).
    last_pressed: Option<Color>,
    time_per_move: bool,
}

impl ClockState {
    pub(crate) fn new(config: &VirtualBoardConfig) -> Self {
        ClockState {
            white_ms: config.base_time_ms,
            black_ms: config.base_time_ms,
            running: None,
            since_ms: 0,
            increment_ms: config.increment_ms,
            last_pressed: None,
            time_per_move: config.increment_ms > 0,
        }
    }

    pub(crate) fn settle(&mut self, game_ms: u64) {
        let spent = game_ms.saturating_sub(self.since_ms);
        self.since_ms = game_ms;
        match self.running {
            Some(Color::White) => self.white_ms = self.white_ms.saturating_sub(spent),
            Some(Color::Black) => self.black_ms = self.black_ms.saturating_sub(spent),
            None => {}
        }
    }

    pub(crate) fn start(&mut self, side: Color, game_ms: u64) {
        self.settle(game_ms);
        self.running = Some(side);
    }

    pub(crate) fn press(&mut self, by: Color, game_ms: u64) {
        self.settle(game_ms);
        if self.running == Some(by) {
            match by {
                Color::White => self.white_ms += self.increment_ms,
                Color::Black => self.black_ms += self.increment_ms,
            }
        }
        self.last_pressed = Some(by);
        self.running = Some(!by);
    }

    pub(crate) fn stop(&mut self, game_ms: u64) {
        self.settle(game_ms);
        self.running = None;
    }

    pub(crate) fn times(&self, game_ms: u64, white_on_left: bool) -> ClockTimes {
        let mut now = self.clone();
        now.settle(game_ms);
        let side = |ms: u64| {
            // A clock shows the seconds still (partly) left.
            let hms = crate::wire::dgt::Hms::from_millis(ms + 999);
            SideTime {
                hours: hms.hours,
                minutes: hms.minutes,
                seconds: hms.seconds,
                flag_fallen: ms == 0,
                time_per_move: self.time_per_move,
                flag_shown: ms == 0,
            }
        };
        let (white, black) = (side(now.white_ms), side(now.black_ms));
        let white_side_is_right = !white_on_left;
        let right_runs = match now.running.or(self.last_pressed.map(|c| !c)) {
            Some(Color::White) => white_side_is_right,
            Some(Color::Black) => !white_side_is_right,
            None => false,
        };
        let status = ClockStatus {
            running: now.running.is_some(),
            right_lever_high: right_runs,
            turn_bit3: !right_runs,
            turn_bit4: right_runs,
            ..ClockStatus::default()
        };
        let (left, right) = if white_on_left {
            (white, black)
        } else {
            (black, white)
        };
        ClockTimes {
            left,
            right,
            status,
        }
    }

    /// Applies a DGT3000/XL set-and-run: left/right times and the run flags.
    fn set_and_run(
        &mut self,
        left_ms: u64,
        right_ms: u64,
        flags: u8,
        white_on_left: bool,
        game_ms: u64,
    ) {
        self.settle(game_ms);
        let (white, black) = if white_on_left {
            (left_ms, right_ms)
        } else {
            (right_ms, left_ms)
        };
        self.white_ms = white;
        self.black_ms = black;
        let left_color = if white_on_left {
            Color::White
        } else {
            Color::Black
        };
        self.running = if flags & 0x04 != 0 {
            None
        } else if flags & 0x01 != 0 {
            Some(left_color)
        } else if flags & 0x02 != 0 {
            Some(!left_color)
        } else {
            None
        };
    }
}

struct BoardTask {
    config: VirtualBoardConfig,
    /// The EEPROM move log: every change and press, connected or not.
    memory: BoardMemory,
    pty: Option<Pty>,
    link: StablePath,
    fields: [u8; 64],
    mode: Mode,
    /// Whether the host asked for the board since its last reset.
    dump_asked: bool,
    silent: bool,
    decoder: CommandDecoder,
    script: VecDeque<Observation>,
    /// Wall-clock instant of game time 0, once the script has started.
    started: Option<Instant>,
    clock: ClockState,
    session: u32,
    last_clock_sent: Option<ClockTimes>,
    last_lifted: Option<u8>,
    /// How many script observations have been played.
    played: usize,
    /// Bytes written but not yet on the line, when the line has a speed.
    line: VecDeque<u8>,
    /// When the line can take its next bytes, while `line` is not empty.
    line_free_at: Option<Instant>,
    /// Until when the line is busy with the bytes last put on it.
    line_busy_until: Instant,
    shared: Arc<Mutex<Shared>>,
    finished: watch::Sender<bool>,
    playing: watch::Sender<bool>,
    /// The host has asked for the board, set an update mode and read all the board sent
    /// before, since the board was last plugged in.
    host_ready: watch::Sender<bool>,
}

/// How long the board waits for room in the pseudo-terminal's buffer.
const WRITE_TIMEOUT: Duration = Duration::from_millis(200);

/// The most bytes put on a line with a speed at once.
const LINE_CHUNK: usize = 32;

/// Shortest wall-clock interval between two clock readings.
const MIN_CLOCK_TICK: Duration = Duration::from_millis(20);

async fn read_from(pty: Option<&Pty>, buf: &mut [u8]) -> io::Result<usize> {
    match pty {
        Some(pty) => pty.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Sleeps until `at`, or forever when there is nothing to wait for (a `select!` arm that
/// never fires).
pub(crate) async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl BoardTask {
    async fn run(mut self, mut control: mpsc::UnboundedReceiver<Control>) {
        if self.config.start == StartWhen::Immediately {
            self.start_script();
        }
        let mut buf = [0u8; 256];
        loop {
            let next_observation = self.next_observation_at();
            let next_tick = self.next_clock_tick();
            tokio::select! {
                read = read_from(self.pty.as_ref(), &mut buf) => match read {
                    Ok(n) => {
                        let bytes = buf[..n].to_vec();
                        self.on_bytes(&bytes).await;
                    }
                    Err(e) => {
                        tracing::warn!("virtual board: read failed: {e}");
                        tokio::time::sleep(MIN_CLOCK_TICK).await;
                    }
                },
                request = control.recv() => match request {
                    None => return,
                    Some(request) => self.on_control(request).await,
                },
                () = sleep_until_opt(next_observation) => self.play_next().await,
                () = sleep_until_opt(next_tick) => self.send_clock(false).await,
                () = sleep_until_opt(self.line_free_at) => self.write_line().await,
            }
        }
    }

    fn game_ms(&self) -> u64 {
        self.started.map_or(0, |s| {
            let ms = s.elapsed().as_secs_f64() * 1000.0 * self.config.speed;
            ms as u64
        })
    }

    fn wall(&self, game_ms: u64) -> Duration {
        Duration::from_secs_f64(game_ms as f64 / 1000.0 / self.config.speed.max(1e-6))
    }

    fn start_script(&mut self) {
        if self.started.is_some() {
            return;
        }
        self.started = Some(Instant::now());
        let _ = self.playing.send(true);
        if self.config.clock_starts_running {
            self.clock.start(Color::White, 0);
        }
    }

    fn next_observation_at(&self) -> Option<Instant> {
        let started = self.started?;
        let next = self.script.front()?;
        Some(started + self.wall(next.t_ms))
    }

    fn next_clock_tick(&self) -> Option<Instant> {
        let started = self.started?;
        self.clock.running?;
        if !self.mode.sends_clock() {
            return None;
        }
        let now = self.game_ms();
        let next_second = (now / 1000 + 1) * 1000;
        let at = started + self.wall(next_second);
        Some(at.max(Instant::now() + MIN_CLOCK_TICK))
    }

    async fn on_control(&mut self, request: Control) {
        match request {
            Control::Unplug(reply) => {
                self.pty = None;
                if self.config.resume != ResumeMode::Keep {
                    self.mode = Mode::Idle;
                }
                self.dump_asked = false;
                self.start_if_host_ready();
                self.line.clear();
                self.line_free_at = None;
                let _ = reply.send(self.link.remove());
            }
            Control::Replug(reply) => {
                let result = self.replug();
                let _ = reply.send(result);
            }
            Control::Silence(silent) => self.silent = silent,
            Control::Unread(reply) => {
                let unread = self.pty.as_ref().map_or(Ok(0), Pty::unread);
                let _ = reply.send(unread.unwrap_or(0) + self.line.len());
            }
        }
    }

    fn replug(&mut self) -> io::Result<()> {
        let pty = Pty::open()?;
        self.link.point_to(pty.slave_path())?;
        self.pty = Some(pty);
        match self.config.resume {
            ResumeMode::Keep => {}
            ResumeMode::Idle => self.mode = Mode::Idle,
            ResumeMode::PowerCycle => {
                self.mode = Mode::Idle;
                self.memory.power_up(&self.fields);
            }
        }
        self.dump_asked = false;
        self.start_if_host_ready();
        self.decoder = CommandDecoder::new();
        self.last_clock_sent = None;
        self.session += 1;
        Ok(())
    }

    async fn on_bytes(&mut self, bytes: &[u8]) {
        if self.silent {
            return;
        }
        let mut commands = Vec::new();
        self.decoder.push(bytes, &mut commands);
        for command in commands {
            if self.config.log_traffic {
                lock(&self.shared).commands.push(command.clone());
            }
            self.on_command(command).await;
        }
    }

    async fn on_command(&mut self, command: Command) {
        match command {
            Command::Reset => {
                self.mode = Mode::Idle;
                self.dump_asked = false;
                self.start_if_host_ready();
            }
            Command::SendBoard => {
                self.send(Message::BoardDump(self.fields)).await;
                self.dump_asked = true;
                self.start_if_host_ready();
            }
            Command::SendUpdate => self.set_mode(Mode::Update).await,
            Command::SendUpdateNice => self.set_mode(Mode::UpdateNice).await,
            Command::SendUpdateBoard => self.set_mode(Mode::UpdateBoard).await,
            Command::SendClock => {
                let times = self
                    .clock
                    .times(self.game_ms(), self.config.white_on_clock_left);
                self.send(Message::Clock(ClockMessage::Times(times))).await;
            }
            Command::SendSerialNumber => {
                self.send(Message::SerialNumber(self.config.serial.clone()))
                    .await;
            }
            Command::SendLongSerialNumber => {
                let long = self.config.model.long_serial(&self.config.serial);
                self.send(Message::LongSerialNumber(long)).await;
            }
            Command::SendVersion => {
                let (major, minor) = self.config.version;
                self.send(Message::Version { major, minor }).await;
            }
            Command::SendTrademark => {
                let text = "touchmove virtual DGT board (simulation, not DGT hardware)";
                self.send(Message::Trademark(text.to_string())).await;
            }
            Command::SendBusAddress => {
                let address = self.config.serial.parse::<u16>().unwrap_or(0) & 0x3FFF;
                self.send(Message::BusAddress(address)).await;
            }
            Command::Clock(clock) => self.on_clock_command(clock).await,
            Command::Leds(payload) if self.config.model == model::BoardModel::RevelationII => {
                match crate::wire::revelation::RevelationLeds::decode(&payload) {
                    Ok(leds) => lock(&self.shared).leds.apply(leds),
                    Err(e) => tracing::warn!("virtual Revelation II: {e}"),
                }
            }
            Command::SendEepromMoves if self.config.eeprom_log => {
                let dump = self.memory.download();
                self.send(Message::EepromMoves(EepromRecord::parse_all(&dump)))
                    .await;
            }
            _ => {}
        }
    }

    async fn set_mode(&mut self, mode: Mode) {
        self.mode = mode;
        self.last_clock_sent = None;
        if self.config.start == StartWhen::FirstUpdateMode {
            self.start_script();
        }
        self.start_if_host_ready();
    }

    /// Tells whether the host has ended its handshake, and starts a script waiting for it.
    fn start_if_host_ready(&mut self) {
        let ready = self.pty.is_some()
            && self.dump_asked
            && self.mode.sends_fields()
            && self.line.is_empty();
        self.host_ready
            .send_if_modified(|was| std::mem::replace(was, ready) != ready);
        if ready && self.config.start == StartWhen::HostReady {
            self.start_script();
        }
    }

    async fn on_clock_command(&mut self, command: ClockCommand) {
        let game_ms = self.game_ms();
        let ack = match command {
            ClockCommand::Raw(_) => ClockAck::new([0x40, 0, 0, 0]),
            ClockCommand::Version => {
                let (major, minor) = self.config.clock_version;
                ClockAck::new([0x10, 0x09, (major << 4) | (minor & 0x0F), 0])
            }
            ClockCommand::SetAndRun { left, right, mode } => {
                let ms = |h: crate::wire::dgt::Hms| {
                    (u64::from(h.hours) * 3600 + u64::from(h.minutes) * 60 + u64::from(h.seconds))
                        * 1000
                };
                let white_on_left = self.config.white_on_clock_left;
                self.clock
                    .set_and_run(ms(left), ms(right), mode, white_on_left, game_ms);
                ClockAck::new([0x10, 0x0A, 0, 0])
            }
            other => ClockAck::new([0x10, clock_command_id(&other), 0, 0]),
        };
        // Clock acknowledgements only come in the update modes that report the clock.
        if self.mode.sends_clock() {
            self.send(Message::Clock(ClockMessage::Ack(ack))).await;
        }
    }

    async fn play_next(&mut self) {
        let Some(observation) = self.script.pop_front() else {
            return;
        };
        let game_ms = self.game_ms().max(observation.t_ms);
        let report = !self.config.lose_updates.contains(&self.played);
        self.played += 1;
        match observation.kind {
            ObservationKind::Emptied(square) => {
                let field = self.field(square);
                if self.fields[field] != 0 {
                    self.last_lifted = Some(self.fields[field]);
                }
                self.set_field(field, 0, report).await;
            }
            ObservationKind::Placed(square, piece) => {
                let code = piece
                    .map(code_from_piece)
                    .or(self.last_lifted)
                    .unwrap_or(code_from_piece(Color::White.pawn()));
                self.set_field(self.field(square), code, report).await;
            }
            ObservationKind::Snapshot(snapshot) => {
                let fields = fields_from_board(&snapshot.board, self.config.orientation);
                for (field, code) in fields.into_iter().enumerate() {
                    self.set_field(field, code, report).await;
                }
            }
            ObservationKind::ClockPressed { by } => {
                self.clock.settle(game_ms);
                if self.clock.running == Some(by) {
                    let remaining = match by {
                        Color::White => self.clock.white_ms,
                        Color::Black => self.clock.black_ms,
                    };
                    let white_left = self.config.white_on_clock_left;
                    let halted = if (by == Color::White) == white_left {
                        ClockSide::Left
                    } else {
                        ClockSide::Right
                    };
                    self.memory.lever_changed(halted, remaining);
                }
                self.clock.press(by, game_ms);
                self.send_clock(true).await;
            }
            ObservationKind::MagicPiece(square, magic) => {
                self.set_field(self.field(square), magic.code(), report)
                    .await;
            }
            ObservationKind::ClockTimes(_) => {}
        }
        if self.script.is_empty() {
            self.clock.stop(game_ms);
            self.send_clock(true).await;
            let _ = self.finished.send(true);
        }
    }

    fn field(&self, square: Square) -> usize {
        usize::from(self.config.orientation.square_to_field(square))
    }

    /// Changes a field; `report` false loses its field update.
    async fn set_field(&mut self, field: usize, code: u8, report: bool) {
        if self.fields[field] == code {
            return;
        }
        self.fields[field] = code;
        lock(&self.shared).fields = self.fields;
        let game_ms = self.game_ms();
        self.memory
            .field_changed(u8::try_from(field).unwrap_or(0), code, game_ms);
        if report && self.mode.sends_fields() {
            let field = u8::try_from(field).unwrap_or(0);
            self.send(Message::FieldUpdate { field, piece: code }).await;
        }
    }

    /// Sends the clock reading in the clock-reporting modes; in the "nice" mode only when it
    /// changed, unless `forced`.
    async fn send_clock(&mut self, forced: bool) {
        if !self.mode.sends_clock() {
            return;
        }
        let times = self
            .clock
            .times(self.game_ms(), self.config.white_on_clock_left);
        let unchanged = self.last_clock_sent == Some(times);
        if unchanged && self.mode == Mode::UpdateNice && !forced {
            return;
        }
        self.last_clock_sent = Some(times);
        self.send(Message::Clock(ClockMessage::Times(times))).await;
    }

    async fn send(&mut self, message: Message) {
        if self.silent {
            return;
        }
        if self.pty.is_none() {
            return;
        }
        if self.config.line_bytes_per_s.is_some() {
            self.line.extend(message.encode());
            let free = self.line_busy_until.max(Instant::now());
            self.line_free_at.get_or_insert(free);
        } else if !self.write_now(&message.encode()).await {
            return;
        }
        if !self.config.log_traffic {
            return;
        }
        lock(&self.shared).emitted.push(Emitted {
            session: self.session,
            message,
        });
    }
}

impl BoardTask {
    /// Writes `bytes` to the pseudo-terminal; false when they were lost.
    async fn write_now(&self, bytes: &[u8]) -> bool {
        let Some(pty) = self.pty.as_ref() else {
            return false;
        };
        // Nobody may be reading the port (the host closed it): like a real serial line, the
        // board does not wait for long and the bytes are lost.
        match tokio::time::timeout(WRITE_TIMEOUT, pty.write_all(bytes)).await {
            Ok(Ok(())) => true,
            Ok(Err(e)) => {
                tracing::warn!("virtual board: write failed: {e}");
                false
            }
            Err(_) => {
                tracing::debug!("virtual board: nobody reads the port; bytes dropped");
                false
            }
        }
    }

    /// Puts the next bytes waiting for a line with a speed on it, and says when the line
    /// takes more.
    async fn write_line(&mut self) {
        let rate = self.config.line_bytes_per_s.unwrap_or(u32::MAX).max(1);
        let n = self.line.len().min(LINE_CHUNK);
        let chunk: Vec<u8> = self.line.drain(..n).collect();
        self.write_now(&chunk).await;
        self.line_busy_until = Instant::now() + Duration::from_secs_f64(n as f64 / f64::from(rate));
        self.line_free_at = (!self.line.is_empty()).then_some(self.line_busy_until);
        self.start_if_host_ready();
    }
}

/// The command id byte of a clock command (what the clock echoes in its acknowledgement).
fn clock_command_id(command: &ClockCommand) -> u8 {
    Command::Clock(command.clone())
        .encode()
        .get(3)
        .copied()
        .unwrap_or(0)
}
