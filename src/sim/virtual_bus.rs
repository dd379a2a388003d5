//! A virtual chain of DGT tournament boards in bus mode, all on one pseudo-terminal.
//!
//! Written from the bus description (`protocols`, DGT bus mode): the host sends four-byte
//! commands `cmd addrHi addrLo checksum`; the board whose address (the binary value of its
//! decimal serial number) matches answers with `id lenHi lenLo addrHi addrLo data… checksum`,
//! and address 0 is a broadcast that every board answers to a ping, each after its own delay
//! within 1100 ms (unless told to ignore the next broadcast ping). A command whose checksum is
//! wrong is ignored, as a board would. Each board keeps the change records since the last
//! SEND_CHANGES in the EEPROM's format (a field record, overwritten when the same field
//! changes again; the halted side's time at every lever change) and hands them over on
//! SEND_CHANGES, again on REPEAT_CHANGES. The replies share the line at its speed, one after
//! the other.
//!
//! Every board plays its own script of [`Observation`]s like a [`super::virtual_board`]
//! board, starting when the host first polls its changes after reading its position. A board
//! can be switched off and on while the others go on: switched off it answers nothing and
//! records nothing while its players go on playing; switched on it starts its change records
//! with the power-up tag and one record per piece present, as the EEPROM log does.

use std::collections::VecDeque;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use shakmaty::{Color, Square};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::virtual_board::sleep_until_opt;

use crate::board::dgt::{code_from_piece, fields_from_board};
use crate::board::{Observation, ObservationKind};
use crate::sim::pty::{Pty, StablePath};
use crate::sim::virtual_board::{ClockState, VirtualBoardConfig};
use crate::wire::dgt::bus::{
    BusCommand, BusCommandKind, BusReply, BusReplyBody, address_of_serial,
};
use crate::wire::dgt::{ClockMessage, ClockSide, Command, CommandDecoder, EepromRecord};

/// A change closer than this to the field change before is marked "quick" (as in the log).
const QUICK_MS: u64 = 250;

/// The most bytes written to the pseudo-terminal at once.
const LINE_CHUNK: usize = 16;

/// Broadcast pings are answered within this long.
const PING_SPREAD_MS: u64 = 1100;

/// Settings of a virtual chain.
#[derive(Debug, Clone)]
pub struct VirtualBusConfig {
    /// The stable port path of the chain (a symbolic link to the pseudo-terminal).
    pub path: PathBuf,
    /// The boards: each one's script, clock, serial number (its address) and version. Their
    /// `path`, `start`, `lose_updates`, `eeprom_log` and `line_bytes_per_s` are not used.
    pub boards: Vec<VirtualBoardConfig>,
    /// The line's speed in bytes per second (9600 baud 8N1 carries 960); `None` writes at
    /// once.
    pub line_bytes_per_s: Option<u32>,
    /// How long a board takes to begin its answer (DGT: EEPROM writes delay it up to 20 ms).
    pub reply_delay: Duration,
}

impl VirtualBusConfig {
    /// A chain at `path` of `boards` at 9600 baud, answering after 5 ms.
    pub fn new(path: impl Into<PathBuf>, boards: Vec<VirtualBoardConfig>) -> Self {
        VirtualBusConfig {
            path: path.into(),
            boards,
            line_bytes_per_s: Some(super::virtual_board::DGT_LINE_BYTES_PER_S),
            reply_delay: Duration::from_millis(5),
        }
    }
}

#[derive(Debug)]
enum Control {
    Power(usize, bool, oneshot::Sender<()>),
}

/// A running chain and the handle that controls it. Dropping it stops the chain and removes
/// its port path.
#[derive(Debug)]
pub struct VirtualBus {
    control: mpsc::UnboundedSender<Control>,
    path: PathBuf,
    addresses: Vec<u16>,
    playing: Vec<watch::Receiver<bool>>,
    finished: Vec<watch::Receiver<bool>>,
}

impl VirtualBus {
    /// Opens the pseudo-terminal, points `config.path` at it and starts the chain. Must be
    /// called inside a tokio runtime. Fails when a serial number is not a bus address or two
    /// boards share one.
    pub fn spawn(config: VirtualBusConfig) -> io::Result<VirtualBus> {
        let mut boards = Vec::new();
        let (mut playing, mut finished) = (Vec::new(), Vec::new());
        for board in &config.boards {
            let address = address_of_serial(&board.serial).ok_or_else(|| {
                io::Error::other(format!(
                    "virtual bus board serial {:?} is not a bus address (1 to 16383)",
                    board.serial
                ))
            })?;
            if boards.iter().any(|b: &ChainBoard| b.address == address) {
                return Err(io::Error::other(format!(
                    "two virtual bus boards have serial {}",
                    board.serial
                )));
            }
            let (playing_tx, playing_rx) = watch::channel(false);
            let (finished_tx, finished_rx) = watch::channel(board.script.is_empty());
            playing.push(playing_rx);
            finished.push(finished_rx);
            boards.push(ChainBoard::new(
                board.clone(),
                address,
                playing_tx,
                finished_tx,
            ));
        }
        let pty = Pty::open()?;
        let link = StablePath::new(config.path.clone());
        link.point_to(pty.slave_path())?;
        let (control, control_rx) = mpsc::unbounded_channel();
        let addresses = boards.iter().map(|b| b.address).collect();
        let chain = Chain {
            pty,
            _link: link,
            decoder: CommandDecoder::new(),
            boards,
            outbox: VecDeque::new(),
            line_busy_until: Instant::now(),
            line_bytes_per_s: config.line_bytes_per_s,
            reply_delay: config.reply_delay,
        };
        tokio::spawn(chain.run(control_rx));
        Ok(VirtualBus {
            control,
            path: config.path,
            addresses,
            playing,
            finished,
        })
    }

    /// The port path a host opens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The boards' bus addresses, in the order of the configuration.
    pub fn addresses(&self) -> &[u16] {
        &self.addresses
    }

    /// Switches board `index` off (`false`) or on (`true`).
    pub async fn power(&self, index: usize, on: bool) -> io::Result<()> {
        let (tx, rx) = oneshot::channel();
        self.control
            .send(Control::Power(index, on, tx))
            .map_err(|_| io::Error::other("the virtual bus has stopped"))?;
        rx.await
            .map_err(|_| io::Error::other("the virtual bus has stopped"))
    }

    /// Waits until board `index` has begun its script.
    pub async fn playing(&self, index: usize) {
        if let Some(rx) = self.playing.get(index) {
            let _ = rx.clone().wait_for(|p| *p).await;
        }
    }

    /// Waits until board `index` has played its whole script.
    pub async fn finished(&self, index: usize) {
        if let Some(rx) = self.finished.get(index) {
            let _ = rx.clone().wait_for(|f| *f).await;
        }
    }
}

/// One board of the chain.
#[derive(Debug)]
struct ChainBoard {
    config: VirtualBoardConfig,
    address: u16,
    fields: [u8; 64],
    clock: ClockState,
    script: VecDeque<Observation>,
    /// Wall-clock instant of game time 0, once the script has started.
    started: Option<Instant>,
    powered: bool,
    /// The host has read the position since power-up: its next change poll starts the script.
    dump_read: bool,
    /// Change records since the last SEND_CHANGES.
    changes: Vec<EepromRecord>,
    /// The records last handed over, for REPEAT_CHANGES.
    last_batch: Vec<EepromRecord>,
    last_field_ms: Option<u64>,
    last_lifted: Option<u8>,
    ignore_next_ping: bool,
    playing: watch::Sender<bool>,
    finished: watch::Sender<bool>,
}

impl ChainBoard {
    fn new(
        config: VirtualBoardConfig,
        address: u16,
        playing: watch::Sender<bool>,
        finished: watch::Sender<bool>,
    ) -> ChainBoard {
        let fields = fields_from_board(&config.initial, config.orientation);
        let mut board = ChainBoard {
            clock: ClockState::new(&config),
            script: config.script.iter().cloned().collect(),
            config,
            address,
            fields,
            started: None,
            powered: false,
            dump_read: false,
            changes: Vec::new(),
            last_batch: Vec::new(),
            last_field_ms: None,
            last_lifted: None,
            ignore_next_ping: false,
            playing,
            finished,
        };
        board.power_up();
        board
    }

    /// Switched on: the change records begin with the power-up tag and one record per piece.
    fn power_up(&mut self) {
        self.powered = true;
        self.dump_read = false;
        self.last_batch.clear();
        self.changes = vec![EepromRecord::PowerUp];
        for (field, &piece) in (0u8..).zip(&self.fields) {
            if piece != 0 {
                self.changes.push(EepromRecord::FieldChange {
                    field,
                    piece,
                    quick: false,
                });
            }
        }
        self.last_field_ms = None;
    }

    fn game_ms(&self) -> u64 {
        self.started.map_or(0, |s| {
            (s.elapsed().as_secs_f64() * 1000.0 * self.config.speed) as u64
        })
    }

    fn wall(&self, game_ms: u64) -> Duration {
        Duration::from_secs_f64(game_ms as f64 / 1000.0 / self.config.speed.max(1e-6))
    }

    fn next_observation_at(&self) -> Option<Instant> {
        Some(self.started? + self.wall(self.script.front()?.t_ms))
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

    /// The answer to `command`, if this board answers it.
    fn answer(&mut self, command: BusCommand) -> Option<BusReplyBody> {
        if !self.powered {
            return None;
        }
        let broadcast = command.address == 0;
        if !broadcast && command.address != self.address {
            return None;
        }
        match command.kind {
            BusCommandKind::Ping if broadcast && std::mem::take(&mut self.ignore_next_ping) => None,
            BusCommandKind::Ping => Some(BusReplyBody::Ping),
            _ if broadcast => None,
            BusCommandKind::IgnoreNextBusPing => {
                self.ignore_next_ping = true;
                None
            }
            BusCommandKind::SendBoard => {
                self.dump_read = true;
                Some(BusReplyBody::BoardDump {
                    fields: self.fields.to_vec(),
                })
            }
            BusCommandKind::SendChanges => {
                if self.dump_read {
                    self.start_script();
                }
                self.last_batch = std::mem::take(&mut self.changes);
                Some(BusReplyBody::Changes {
                    records: self.last_batch.clone(),
                })
            }
            BusCommandKind::RepeatChanges => Some(BusReplyBody::Changes {
                records: self.last_batch.clone(),
            }),
            BusCommandKind::SendClock => {
                let times = self
                    .clock
                    .times(self.game_ms(), self.config.white_on_clock_left);
                Some(BusReplyBody::Clock {
                    clock: ClockMessage::Times(times),
                })
            }
            BusCommandKind::SetStartGame => {
                self.changes.push(EepromRecord::StartTag);
                Some(BusReplyBody::StartGameWritten)
            }
            BusCommandKind::SendVersion => {
                let (major, minor) = self.config.version;
                Some(BusReplyBody::Version { major, minor })
            }
            _ => None,
        }
    }

    /// Plays the next observation of the script.
    fn play_next(&mut self) {
        let Some(observation) = self.script.pop_front() else {
            return;
        };
        let game_ms = self.game_ms().max(observation.t_ms);
        match observation.kind {
            ObservationKind::Emptied(square) => {
                let field = self.field(square);
                if self.fields[field] != 0 {
                    self.last_lifted = Some(self.fields[field]);
                }
                self.set_field(field, 0, game_ms);
            }
            ObservationKind::Placed(square, piece) => {
                let code = piece
                    .map(code_from_piece)
                    .or(self.last_lifted)
                    .unwrap_or(code_from_piece(Color::White.pawn()));
                self.set_field(self.field(square), code, game_ms);
            }
            ObservationKind::Snapshot(snapshot) => {
                let fields = fields_from_board(&snapshot.board, self.config.orientation);
                for (field, code) in fields.into_iter().enumerate() {
                    self.set_field(field, code, game_ms);
                }
            }
            ObservationKind::MagicPiece(square, magic) => {
                self.set_field(self.field(square), magic.code(), game_ms);
            }
            ObservationKind::ClockPressed { by } => {
                self.clock.settle(game_ms);
                if self.clock.running == Some(by) && self.powered {
                    let remaining = match by {
                        Color::White => self.clock.white_ms,
                        Color::Black => self.clock.black_ms,
                    };
                    let halted = if (by == Color::White) == self.config.white_on_clock_left {
                        ClockSide::Left
                    } else {
                        ClockSide::Right
                    };
                    self.changes.push(clock_record(halted, remaining));
                }
                self.clock.press(by, game_ms);
            }
            ObservationKind::ClockTimes(_) => {}
        }
        if self.script.is_empty() {
            self.clock.stop(game_ms);
            let _ = self.finished.send(true);
        }
    }

    fn field(&self, square: Square) -> usize {
        usize::from(self.config.orientation.square_to_field(square))
    }

    /// Changes a field; a board that is on records it.
    fn set_field(&mut self, field: usize, code: u8, game_ms: u64) {
        if self.fields[field] == code {
            return;
        }
        self.fields[field] = code;
        if !self.powered {
            return;
        }
        let field = u8::try_from(field).unwrap_or(0);
        let quick = self
            .last_field_ms
            .is_some_and(|before| game_ms.saturating_sub(before) < QUICK_MS);
        self.last_field_ms = Some(game_ms);
        let record = EepromRecord::FieldChange {
            field,
            piece: code,
            quick,
        };
        let same_field = matches!(
            self.changes.last(),
            Some(EepromRecord::FieldChange { field: f, .. }) if *f == field
        );
        if same_field {
            self.changes.pop();
        }
        self.changes.push(record);
    }
}

/// The log record of a lever change: the halted side with its remaining time.
fn clock_record(halted: ClockSide, remaining_ms: u64) -> EepromRecord {
    let seconds = remaining_ms.div_ceil(1000);
    EepromRecord::ClockTime {
        side: halted,
        hours: u8::try_from((seconds / 3600).min(9)).unwrap_or(9),
        minutes: u8::try_from((seconds / 60) % 60).unwrap_or(0),
        seconds: u8::try_from(seconds % 60).unwrap_or(0),
    }
}

struct Chain {
    pty: Pty,
    _link: StablePath,
    decoder: CommandDecoder,
    boards: Vec<ChainBoard>,
    /// Replies waiting for their time on the line, in the order they go out.
    outbox: VecDeque<(Instant, Vec<u8>)>,
    line_busy_until: Instant,
    line_bytes_per_s: Option<u32>,
    reply_delay: Duration,
}

impl Chain {
    async fn run(mut self, mut control: mpsc::UnboundedReceiver<Control>) {
        let mut buf = [0u8; 256];
        let mut commands = Vec::new();
        loop {
            let next_play = self
                .boards
                .iter()
                .enumerate()
                .filter_map(|(i, b)| Some((b.next_observation_at()?, i)))
                .min();
            let next_write = self.outbox.front().map(|(at, _)| *at);
            tokio::select! {
                read = self.pty.read(&mut buf) => match read {
                    Ok(n) => {
                        commands.clear();
                        self.decoder.push(&buf[..n], &mut commands);
                        for command in commands.drain(..) {
                            if let Command::Bus(command) = command {
                                self.on_command(command);
                            }
                        }
                    }
                    Err(e) => {
                        tracing::warn!("virtual bus: read failed: {e}");
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                },
                request = control.recv() => match request {
                    None => return,
                    Some(Control::Power(index, on, reply)) => {
                        if let Some(board) = self.boards.get_mut(index) {
                            if on && !board.powered {
                                board.power_up();
                            } else if !on {
                                board.powered = false;
                            }
                        }
                        let _ = reply.send(());
                    }
                },
                () = sleep_until_opt(next_play.map(|(at, _)| at)) => {
                    if let Some((_, i)) = next_play {
                        self.boards[i].play_next();
                    }
                }
                () = sleep_until_opt(next_write) => {
                    if let Some((_, bytes)) = self.outbox.pop_front() {
                        // Nobody may read the port: the bytes are lost, as on a real line.
                        let _ = tokio::time::timeout(
                            Duration::from_millis(200),
                            self.pty.write_all(&bytes),
                        )
                        .await;
                    }
                }
            }
        }
    }

    fn on_command(&mut self, command: BusCommand) {
        let now = Instant::now();
        let mut answers: Vec<(Instant, Vec<u8>)> = Vec::new();
        for board in &mut self.boards {
            if let Some(body) = board.answer(command) {
                let reply = BusReply {
                    address: board.address,
                    body,
                };
                let delay = if command.address == 0 {
                    // Each board its own moment within the spread, the same every time.
                    Duration::from_millis(u64::from(board.address) * 7919 % PING_SPREAD_MS)
                } else {
                    self.reply_delay
                };
                answers.push((now + delay, reply.encode()));
            }
        }
        answers.sort_by_key(|(at, _)| *at);
        for (at, bytes) in answers {
            let mut done = at.max(self.line_busy_until);
            // Written piece by piece as the bytes would arrive: a long reply is seen coming.
            for chunk in bytes.chunks(LINE_CHUNK) {
                done += self.line_bytes_per_s.map_or(Duration::ZERO, |rate| {
                    Duration::from_secs_f64(chunk.len() as f64 / f64::from(rate.max(1)))
                });
                self.outbox.push_back((done, chunk.to_vec()));
            }
            self.line_busy_until = done;
        }
    }
}
