//! A DGT e-board (USB, serial, Bluetooth serial), board side (protocols 1.1–1.13).
//!
//! It answers the host's one-byte commands (reset, board dump, the three update modes,
//! serial number, bus address, trademark, version, long serial number, move log, clock
//! message) and the clock commands it passes to its DGT 3000 (0x2B, acknowledged after the
//! clock's delay, only in the update modes that send clock messages). In an update mode it
//! reports every field its sweep finds changed, in sampling order, result pieces with their
//! codes; in the clock modes it sends the clock message when the display changes (UPDATE_NICE)
//! or also at least every second (UPDATE), and after every press. Its EEPROM move log is
//! written whatever the mode and kept without power; a power cycle or reset leaves it idle.
//! The link closing changes nothing on the board (a serial board cannot tell).

use rand::seq::SliceRandom;
use shakmaty::Color;

use super::DeviceOptions;
use super::dgt_clock::{Dgt3000, Side, ack_data};
use super::dgt_framing::{self as framing, CommandReader, HostCommand, message, piece_code};
use super::eeprom::MoveLog;
use super::firmware::Firmware;
use super::hardware::{Applied, Hardware, Pending, earliest};
use super::sensors::Sensed;
use crate::board::kind::BoardKind;
use crate::board::{Millis, ObservationKind};

/// Firmware version: a USB board's, as reported in picochess issue #142 (protocols 1.12).
const VERSION: [u8; 2] = [1, 80];
/// Serial number (five ASCII digits), the document's example (protocols 1.4).
const SERIAL: &[u8; 5] = b"01025";
/// The bus address is the serial number's value in two 7-bit bytes: 1025 = `08 01`.
const BUS_ADDRESS: [u8; 2] = [(1025 >> 7) as u8, (1025 & 0x7F) as u8];
/// Ten ASCII digits, least significant last.
const LONG_SERIAL: &[u8; 10] = b"0000001025";
/// The old boards' trademark text (protocols 1.4, from the 1.03 header), with this serial.
const TRADEMARK: &str = "DGT Projects - This DGT board is produced by DGT Projects.\n DGT \
     Projects is a registered trade mark.\n 220798 ISP/bus/8KP/8KE/P6/Fritz5 Vs 1.00. Serial \
     nr. 01025 1.0";
/// The DGT 3000's version in a version acknowledgement: 2.0 (protocols 1.10).
const CLOCK_VERSION: u8 = 0x20;
/// How long the clock takes to acknowledge a command: the document's "usually 1–2 s".
const CLOCK_ACK_MS: Millis = 1000;
/// An UPDATE mode board sends the clock at least this often.
const CLOCK_BEAT_MS: Millis = 1000;

/// The board's update mode (protocols 1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Idle,
    /// 0x44: field updates only.
    Board,
    /// 0x43: field updates and the clock at least every second.
    Update,
    /// 0x4B: field updates and the clock when it changes.
    Nice,
}

impl Mode {
    fn sends_fields(self) -> bool {
        self != Mode::Idle
    }

    fn sends_clock(self) -> bool {
        matches!(self, Mode::Update | Mode::Nice)
    }
}

/// A DGT board with its clock and move log.
#[derive(Debug, Clone)]
pub struct DgtBoard {
    hw: Hardware,
    reader: CommandReader,
    requests: Pending<HostCommand>,
    acks: Pending<[u8; 4]>,
    reply_delay_ms: Millis,
    mode: Mode,
    /// The piece codes the sensors found, field 0 (a8 of the hardware) first.
    codes: [u8; 64],
    clock: Option<Dgt3000>,
    log: Option<MoveLog>,
    /// Clock events up to here are done.
    clock_seen_ms: Millis,
    last_clock: Option<[u8; 7]>,
    /// In UPDATE mode, when the clock must be sent at the latest.
    clock_beat_ms: Millis,
}

impl DgtBoard {
    /// An empty board, just switched on, idle.
    pub fn new(options: &DeviceOptions) -> DgtBoard {
        let log = options.move_log.then(|| {
            let mut log = MoveLog::new();
            log.power_up();
            log
        });
        DgtBoard {
            hw: Hardware::new(BoardKind::Dgt, options),
            reader: CommandReader::default(),
            requests: Pending::default(),
            acks: Pending::default(),
            reply_delay_ms: options.reply_delay_ms,
            mode: Mode::Idle,
            codes: [0; 64],
            clock: (options.clock.as_ref())
                .and_then(|control| Dgt3000::new(control, options.white_on_clock_left)),
            log,
            clock_seen_ms: 0,
            last_clock: None,
            clock_beat_ms: 0,
        }
    }

    fn next_clock_event(&self) -> Option<Millis> {
        let clock = self.clock.as_ref().filter(|_| self.mode.sends_clock())?;
        let tick = clock.next_change_after(self.clock_seen_ms);
        let beat = (self.mode == Mode::Update).then_some(self.clock_beat_ms);
        earliest([tick, beat])
    }

    fn send(&mut self, at: Millis, id: u8, data: &[u8]) {
        self.hw.line.send(at, &message(id, data));
    }

    /// A field changed under the sensors: the log records it, an update mode reports it.
    fn on_sensed(&mut self, sensed: Sensed) {
        let code = piece_code(sensed.after);
        if code == piece_code(sensed.before) {
            return;
        }
        self.codes[sensed.field] = code;
        if let Some(log) = self.log.as_mut() {
            log.field_changed(sensed.t_ms, sensed.field, code, &self.codes);
        }
        if self.mode.sends_fields() {
            let update = framing::field_update(sensed.field, code);
            self.hw.line.send(sensed.t_ms, &update);
        }
    }

    /// Sends the clock message if the display changed, or if UPDATE mode is due to.
    fn clock_update(&mut self, at: Millis) {
        self.clock_seen_ms = at;
        let Some(clock) = self.clock.as_mut() else {
            return;
        };
        let data = clock.message_data(at);
        let beat = self.mode == Mode::Update && self.clock_beat_ms <= at;
        if self.last_clock != Some(data) || beat {
            self.send(at, framing::BWTIME, &data);
            self.last_clock = Some(data);
            self.clock_beat_ms = at + CLOCK_BEAT_MS;
        }
    }

    fn execute(&mut self, at: Millis, command: HostCommand) {
        match command {
            HostCommand::Single(0x40 | 0x4A) => self.mode = Mode::Idle,
            HostCommand::Single(0x41) => {
                let data = match self.clock.as_mut() {
                    Some(clock) => clock.message_data(at),
                    // Bit 5 of the status: no clock connected (protocols 1.9).
                    None => [0, 0, 0, 0, 0, 0, 0x20],
                };
                self.send(at, framing::BWTIME, &data);
            }
            HostCommand::Single(0x42) => self.send(at, framing::BOARD_DUMP, &self.codes.clone()),
            HostCommand::Single(0x43) => self.enter(at, Mode::Update),
            HostCommand::Single(0x44) => self.enter(at, Mode::Board),
            HostCommand::Single(0x4B) => self.enter(at, Mode::Nice),
            HostCommand::Single(0x45) => self.send(at, framing::SERIALNR, SERIAL),
            HostCommand::Single(0x46) => self.send(at, framing::BUSADRES, &BUS_ADDRESS),
            HostCommand::Single(0x47) => self.send(at, framing::TRADEMARK, TRADEMARK.as_bytes()),
            HostCommand::Single(0x49) => {
                if let Some(log) = self.log.as_mut() {
                    let bytes = log.download();
                    self.send(at, framing::EE_MOVES, &bytes);
                }
            }
            HostCommand::Single(0x4D) => self.send(at, framing::VERSION, &VERSION),
            HostCommand::Single(0x55) => self.send(at, framing::LONG_SERIALNR, LONG_SERIAL),
            HostCommand::Data(0x2B, content) => self.clock_command(at, &content),
            _ => {}
        }
    }

    fn enter(&mut self, at: Millis, mode: Mode) {
        self.mode = mode;
        self.clock_seen_ms = at;
        self.clock_beat_ms = at;
    }

    /// A clock command (protocols 1.11): `03 cmd payload… 00`. Set-and-run sets the clock;
    /// every command a clock is there to take is acknowledged.
    fn clock_command(&mut self, at: Millis, content: &[u8]) {
        let [0x03, command, payload @ .., 0x00] = content else {
            return;
        };
        let Some(clock) = self.clock.as_mut() else {
            return;
        };
        if let (0x0A, [lh, lm, ls, rh, rm, rs, flags]) = (*command, payload) {
            let ms = |h: u8, m: u8, s: u8| {
                (u64::from(h & 0x0F) * 3600 + u64::from(m) * 60 + u64::from(s)) * 1000
            };
            clock.set_and_run(at, ms(*lh, *lm, *ls), ms(*rh, *rm, *rs), *flags);
            if self.mode.sends_clock() {
                self.clock_update(at);
            }
        }
        let ack = match command {
            0x09 => [0x10, 0x09, CLOCK_VERSION, 0],
            _ => [0x10, *command, 0, 0],
        };
        self.acks.push(at + CLOCK_ACK_MS, ack);
    }

    fn press(&mut self, t_ms: Millis, by: Color) {
        let Some(clock) = self.clock.as_mut() else {
            return;
        };
        let halted = clock.press(t_ms, clock.side_of(by));
        if !self.hw.powered() {
            return;
        }
        if let (Some((side, ms)), Some(log)) = (halted, self.log.as_mut()) {
            log.lever_changed(side == Side::Left, Dgt3000::log_time(ms));
        }
        if self.mode.sends_clock() {
            self.clock_update(t_ms);
        }
    }

    /// The codes on the fields as the sensors read them all (power-on).
    fn read_codes(&mut self) {
        let sensed = *self.hw.sensors.sensed();
        self.codes = sensed.map(piece_code);
        if let Some(log) = self.log.as_mut() {
            let mut order: Vec<usize> = (0..64).collect();
            order.shuffle(&mut self.hw.rng);
            log.list_pieces(&self.codes, &order);
        }
    }
}

impl Firmware for DgtBoard {
    fn kind(&self) -> BoardKind {
        BoardKind::Dgt
    }

    fn hardware(&self) -> &Hardware {
        &self.hw
    }

    fn hardware_mut(&mut self) -> &mut Hardware {
        &mut self.hw
    }

    fn next_event(&self) -> Option<Millis> {
        let samples = self.hw.sensors.next_due();
        earliest([samples, self.next_output()])
    }

    /// Samples send something only in an update mode.
    fn next_output(&self) -> Option<Millis> {
        let samples = self
            .mode
            .sends_fields()
            .then(|| self.hw.sensors.next_due())
            .flatten();
        let requests = self.requests.next_due();
        earliest([
            samples,
            requests,
            self.acks.next_due(),
            self.next_clock_event(),
        ])
    }

    fn step(&mut self, at: Millis) {
        for sensed in self.hw.sample_until(at) {
            self.on_sensed(sensed);
        }
        while let Some((_, command)) = self.requests.pop_due(at) {
            self.execute(at, command);
        }
        while let Some((_, ack)) = self.acks.pop_due(at) {
            if self.mode.sends_clock() {
                self.send(at, framing::BWTIME, &ack_data(ack));
            }
        }
        if self.next_clock_event().is_some_and(|c| c <= at) {
            self.clock_update(at);
        }
    }

    fn on_physical(&mut self, t_ms: Millis, what: &ObservationKind) {
        if let ObservationKind::ClockPressed { by } = what {
            self.press(t_ms, *by);
        } else if self.hw.apply(t_ms, what) == Applied::Initial && self.hw.powered() {
            self.read_codes();
        }
    }

    fn on_bytes(&mut self, t_ms: Millis, bytes: &[u8]) {
        let mut commands = Vec::new();
        self.reader.push(bytes, &mut commands);
        for command in commands {
            self.requests.push(t_ms + self.reply_delay_ms, command);
        }
    }

    fn on_link(&mut self, _open: bool) {
        self.reader.clear();
    }

    fn on_power(&mut self, _t_ms: Millis, on: bool) {
        self.mode = Mode::Idle;
        self.requests.clear();
        self.acks.clear();
        self.reader.clear();
        self.last_clock = None;
        if on {
            if let Some(log) = self.log.as_mut() {
                log.power_up();
            }
            self.read_codes();
        }
    }

    fn on_clock_set(&mut self, t_ms: Millis) {
        if let Some(clock) = self.clock.as_mut() {
            clock.reset(t_ms);
        }
    }
}

#[cfg(test)]
mod tests;
