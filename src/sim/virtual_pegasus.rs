//! A virtual DGT Pegasus: the board side of `wire::pegasus` on a pseudo-terminal (its real
//! transport is Bluetooth LE; the bytes are the same).
//!
//! It answers the commands a Pegasus takes (board, field updates, serial numbers, trademark,
//! version, hardware version, battery, LEDs) and plays a script of [`Observation`]s as an
//! occupancy-only board: a square emptied is a field update 0, a piece placed a field update
//! 1, whatever the piece. It takes any developer key; until it has one it sends neither its
//! board nor field updates (whether a real Pegasus insists on the key is not documented, so
//! it models the strict case a host must handle). It has no clock: presses in the script are
//! not seen. It plays its script from the moment a host (with a key) sets the update mode.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shakmaty::Board;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::virtual_board::sleep_until_opt;

use crate::board::orientation::Orientation;
use crate::board::{Observation, ObservationKind};
use crate::sim::pty::{Pty, StablePath};
use crate::wire::dgt::{BatteryStatus, CommandDecoder, Message};
use crate::wire::pegasus::{LedPattern, PegasusCommand, PegasusMessage};

/// Settings of a virtual Pegasus.
#[derive(Debug, Clone)]
pub struct VirtualPegasusConfig {
    /// The stable port path (a symbolic link to the pseudo-terminal).
    pub path: PathBuf,
    /// What happens on the board, `t_ms` from the start of the script.
    pub script: Vec<Observation>,
    /// Speed factor: 1.0 plays in real time.
    pub speed: f64,
    /// The pieces before the script starts.
    pub initial: Board,
    /// Ten-digit serial number.
    pub serial: String,
}

impl VirtualPegasusConfig {
    /// A Pegasus at `path` in the start position playing `script` in real time.
    pub fn new(path: impl Into<PathBuf>, script: Vec<Observation>) -> Self {
        VirtualPegasusConfig {
            path: path.into(),
            script,
            speed: 1.0,
            initial: Board::new(),
            serial: "0000031415".to_string(),
        }
    }
}

/// What the Pegasus shows its controller.
#[derive(Debug, Default)]
struct Seen {
    keyed: bool,
    leds: Option<LedPattern>,
    refused: Vec<String>,
}

/// A running virtual Pegasus. Dropping it stops the board and removes its port path.
#[derive(Debug)]
pub struct VirtualPegasus {
    _stop: mpsc::UnboundedSender<()>,
    seen: Arc<Mutex<Seen>>,
    finished: watch::Receiver<bool>,
    path: PathBuf,
}

impl VirtualPegasus {
    /// Opens the pseudo-terminal, points `config.path` at it and starts the board. Must be
    /// called inside a tokio runtime.
    pub fn spawn(config: VirtualPegasusConfig) -> io::Result<VirtualPegasus> {
        let pty = Pty::open()?;
        let link = StablePath::new(config.path.clone());
        link.point_to(pty.slave_path())?;
        let (stop, stop_rx) = mpsc::unbounded_channel();
        let (finished_tx, finished) = watch::channel(config.script.is_empty());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let mut occupied = [false; 64];
        for (square, _) in config.initial.iter() {
            occupied[usize::from(Orientation::Normal.square_to_field(square))] = true;
        }
        let path = config.path.clone();
        let board = Pegasus {
            script: config.script.clone().into(),
            config,
            pty,
            _link: link,
            occupied,
            updating: false,
            started: None,
            seen: Arc::clone(&seen),
            finished: finished_tx,
        };
        tokio::spawn(board.run(stop_rx));
        Ok(VirtualPegasus {
            _stop: stop,
            seen,
            finished,
            path,
        })
    }

    /// The port path a host opens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// True once a host gave a developer key.
    pub fn keyed(&self) -> bool {
        lock(&self.seen).keyed
    }

    /// The LED pattern a host set last (`None`: all off, or never set).
    pub fn leds(&self) -> Option<LedPattern> {
        lock(&self.seen).leds.clone()
    }

    /// Host commands the board refused, as their errors say.
    pub fn refused(&self) -> Vec<String> {
        lock(&self.seen).refused.clone()
    }

    /// True once the whole script has been played.
    pub fn is_finished(&self) -> bool {
        *self.finished.borrow()
    }

    /// Waits until the whole script has been played.
    pub async fn finished(&self) {
        let _ = self.finished.clone().wait_for(|f| *f).await;
    }
}

fn lock(seen: &Mutex<Seen>) -> std::sync::MutexGuard<'_, Seen> {
    seen.lock().unwrap_or_else(|e| e.into_inner())
}

struct Pegasus {
    config: VirtualPegasusConfig,
    script: std::collections::VecDeque<Observation>,
    pty: Pty,
    _link: StablePath,
    occupied: [bool; 64],
    updating: bool,
    started: Option<Instant>,
    seen: Arc<Mutex<Seen>>,
    finished: watch::Sender<bool>,
}

impl Pegasus {
    async fn run(mut self, mut stop: mpsc::UnboundedReceiver<()>) {
        let mut decoder = CommandDecoder::new();
        let mut commands = Vec::new();
        let mut buf = [0u8; 256];
        loop {
            let next = self.started.and_then(|s| {
                let t = self.script.front()?.t_ms as f64 / 1000.0 / self.config.speed.max(1e-6);
                Some(s + Duration::from_secs_f64(t))
            });
            tokio::select! {
                read = self.pty.read(&mut buf) => match read {
                    Ok(n) => {
                        commands.clear();
                        decoder.push(&buf[..n], &mut commands);
                        for command in commands.drain(..) {
                            match PegasusCommand::from_command(&command) {
                                Ok(command) => self.on_command(command).await,
                                Err(e) => lock(&self.seen).refused.push(e.to_string()),
                            }
                        }
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
                },
                _ = stop.recv() => return,
                () = sleep_until_opt(next) => self.play_next().await,
            }
        }
    }

    async fn on_command(&mut self, command: PegasusCommand) {
        let keyed = lock(&self.seen).keyed;
        let reply = match command {
            PegasusCommand::Reset => {
                self.updating = false;
                None
            }
            PegasusCommand::DeveloperKey(_) => {
                lock(&self.seen).keyed = true;
                None
            }
            PegasusCommand::SendBoard if keyed => Some(PegasusMessage::Occupancy(self.occupied)),
            PegasusCommand::UpdateBoard if keyed => {
                self.updating = true;
                if self.started.is_none() {
                    self.started = Some(Instant::now());
                }
                None
            }
            PegasusCommand::SendBoard | PegasusCommand::UpdateBoard | PegasusCommand::AfterKey => {
                None
            }
            PegasusCommand::SendSerialNumber => {
                let short =
                    self.config.serial[self.config.serial.len().saturating_sub(5)..].to_string();
                Some(PegasusMessage::Other(Message::SerialNumber(short)))
            }
            PegasusCommand::SendLongSerialNumber => Some(PegasusMessage::Other(
                Message::LongSerialNumber(self.config.serial.clone()),
            )),
            PegasusCommand::SendTrademark => Some(PegasusMessage::Other(Message::Trademark(
                "touchmove virtual Pegasus (simulation, not DGT hardware)\r\nsoftware version: \
                 1.00\r\nhardware version: 1.00"
                    .to_string(),
            ))),
            PegasusCommand::SendVersion => Some(PegasusMessage::Other(Message::Version {
                major: 1,
                minor: 0,
            })),
            PegasusCommand::SendHardwareVersion => {
                Some(PegasusMessage::Other(Message::HardwareVersion {
                    major: 1,
                    minor: 0,
                }))
            }
            PegasusCommand::SendBatteryStatus => Some(PegasusMessage::Other(
                Message::BatteryStatus(BatteryStatus {
                    charge_percent: 88,
                    time_left_hours: 0x7F,
                    time_left_minutes: 0x7F,
                    on_hours: 0,
                    on_minutes: 0,
                    standby_days: 0,
                    standby_hours: 0,
                    standby_minutes: 0,
                    status: 2,
                }),
            )),
            PegasusCommand::Leds(pattern) => {
                lock(&self.seen).leds = Some(pattern);
                None
            }
            PegasusCommand::LedsOff => {
                lock(&self.seen).leds = None;
                None
            }
        };
        if let Some(reply) = reply {
            self.send(&reply).await;
        }
    }

    async fn play_next(&mut self) {
        let Some(observation) = self.script.pop_front() else {
            return;
        };
        let mut changed = Vec::new();
        match observation.kind {
            ObservationKind::Emptied(square) => changed.push((square, false)),
            ObservationKind::Placed(square, _) | ObservationKind::MagicPiece(square, _) => {
                changed.push((square, true));
            }
            ObservationKind::Snapshot(snapshot) => {
                for square in shakmaty::Square::ALL {
                    changed.push((square, snapshot.board.piece_at(square).is_some()));
                }
            }
            ObservationKind::ClockPressed { .. } | ObservationKind::ClockTimes(_) => {}
        }
        for (square, occupied) in changed {
            let field = Orientation::Normal.square_to_field(square);
            let slot = &mut self.occupied[usize::from(field)];
            if *slot == occupied {
                continue;
            }
            *slot = occupied;
            if self.updating {
                self.send(&PegasusMessage::Field { field, occupied }).await;
            }
        }
        if self.script.is_empty() {
            let _ = self.finished.send(true);
        }
    }

    async fn send(&self, message: &PegasusMessage) {
        let bytes = message.encode();
        let _ = tokio::time::timeout(Duration::from_millis(200), self.pty.write_all(&bytes)).await;
    }
}
