//! A DGT Pegasus (Bluetooth LE), board side (protocols 1.15.4): DGT's framing and field
//! updates, occupancy only (a dump and a field update carry 0 or 1), no clock, no move log.
//!
//! It answers identification (serial numbers, trademark, versions, battery) at once, but
//! sends its board and its changes only after the host gave it the developer key (the
//! document is unsure whether the key is needed; DGT's own app and every driver send it).
//! The update commands all give field updates (it has no clock). Its Bluetooth session ends
//! with the link: the key and the update mode must be given again, as after a power cycle.

use super::dgt_framing::{self as framing, CommandReader, HostCommand, message};
use super::hardware::{Hardware, Pending};
use super::sensors::Sensed;
use super::{Device, DeviceOptions};
use crate::board::kind::BoardKind;
use crate::board::{Millis, ObservationKind};

/// Firmware version `01 00` (protocols 1.15.4).
const VERSION: [u8; 2] = [1, 0];
/// Hardware version.
const HARDWARE_VERSION: [u8; 2] = [1, 0];
const SERIAL: &[u8; 5] = b"01025";
const LONG_SERIAL: &[u8; 10] = b"0000001025";
/// Four CRLF-separated lines, as DGT's trademark reads in the emulator the document cites.
const TRADEMARK: &str = "Digital Game Technology\r\nCopyright (c) 2021 DGT\r\nsoftware version: \
     1.00, build: 210722\r\nhardware version: 1.00, serial no: 0000001025";
/// 88 %, discharging: the emulator's example (protocols 1.4).
const BATTERY: [u8; 9] = [0x58, 0, 0, 0, 0, 0, 0, 0, 0x02];

/// A Pegasus board.
#[derive(Debug, Clone)]
pub struct PegasusBoard {
    hw: Hardware,
    reader: CommandReader,
    requests: Pending<HostCommand>,
    reply_delay_ms: Millis,
    expected_key: Option<[u8; 6]>,
    unlocked: bool,
    streaming: bool,
}

impl PegasusBoard {
    /// An empty board, just switched on, locked.
    pub fn new(options: &DeviceOptions) -> PegasusBoard {
        PegasusBoard {
            hw: Hardware::new(BoardKind::Pegasus, options),
            reader: CommandReader::default(),
            requests: Pending::default(),
            reply_delay_ms: options.reply_delay_ms,
            expected_key: options.developer_key,
            unlocked: false,
            streaming: false,
        }
    }

    fn advance(&mut self, t_ms: Millis) {
        while let Some(at) = self.next_event().filter(|&at| at <= t_ms) {
            for sensed in self.hw.sample_until(at) {
                self.on_sensed(sensed);
            }
            while let Some((_, command)) = self.requests.pop_due(at) {
                self.execute(at, command);
            }
        }
        self.hw.line.advance(t_ms);
    }

    fn next_event(&self) -> Option<Millis> {
        if !self.hw.powered() {
            return None;
        }
        [self.hw.sensors.next_due(), self.requests.next_due()]
            .into_iter()
            .flatten()
            .min()
    }

    fn on_sensed(&mut self, sensed: Sensed) {
        let occupied = sensed.after.is_some();
        if self.streaming && occupied != sensed.before.is_some() {
            let update = framing::field_update(sensed.field, u8::from(occupied));
            self.hw.line.send(sensed.t_ms, &update);
        }
    }

    fn execute(&mut self, at: Millis, command: HostCommand) {
        let mut send = |id: u8, data: &[u8]| self.hw.line.send(at, &message(id, data));
        match command {
            HostCommand::Single(0x40) => self.streaming = false,
            HostCommand::Single(0x42) if self.unlocked => {
                let occupancy = self.hw.sensors.sensed().map(|m| u8::from(m.is_some()));
                send(framing::BOARD_DUMP, &occupancy);
            }
            HostCommand::Single(0x43 | 0x44 | 0x4B) if self.unlocked => self.streaming = true,
            HostCommand::Single(0x45) => send(framing::SERIALNR, SERIAL),
            HostCommand::Single(0x47) => send(framing::TRADEMARK, TRADEMARK.as_bytes()),
            HostCommand::Single(0x48) => send(framing::HARDWARE_VERSION, &HARDWARE_VERSION),
            HostCommand::Single(0x4C) => send(framing::BATTERY_STATUS, &BATTERY),
            HostCommand::Single(0x4D) => send(framing::VERSION, &VERSION),
            HostCommand::Single(0x55) => send(framing::LONG_SERIALNR, LONG_SERIAL),
            // `63 07 k1..k6 00`.
            HostCommand::Data(0x63, content) => {
                if let [key @ .., 0x00] = content.as_slice()
                    && let Ok(key) = <[u8; 6]>::try_from(key)
                {
                    self.unlocked = self.expected_key.is_none_or(|k| k == key);
                }
            }
            _ => {}
        }
    }

    /// The session ends (link closed, power lost): locked and idle.
    fn end_session(&mut self) {
        self.unlocked = false;
        self.streaming = false;
        self.requests.clear();
        self.reader.clear();
    }
}

impl Device for PegasusBoard {
    fn kind(&self) -> BoardKind {
        BoardKind::Pegasus
    }

    fn physical(&mut self, t_ms: Millis, what: &ObservationKind) {
        self.advance(t_ms);
        self.hw.apply(t_ms, what);
    }

    fn receive(&mut self, t_ms: Millis, bytes: &[u8]) {
        self.advance(t_ms);
        if !self.hw.listening() {
            return;
        }
        let mut commands = Vec::new();
        self.reader.push(bytes, &mut commands);
        for command in commands {
            self.requests.push(t_ms + self.reply_delay_ms, command);
        }
    }

    fn transmit(&mut self, t_ms: Millis, out: &mut Vec<(Millis, Vec<u8>)>) {
        self.advance(t_ms);
        self.hw.line.take(out);
    }

    fn next_transmit_ms(&self) -> Option<Millis> {
        let samples = self.streaming.then(|| self.hw.sensors.next_due()).flatten();
        let events = self.hw.powered().then_some(samples).flatten();
        [self.hw.line.next_leave(), events, self.requests.next_due()]
            .into_iter()
            .flatten()
            .min()
    }

    fn connection(&mut self, t_ms: Millis, open: bool) {
        self.advance(t_ms);
        self.hw.line.set_open(open);
        if !open {
            self.end_session();
        }
    }

    fn power(&mut self, t_ms: Millis, on: bool) {
        self.advance(t_ms);
        if on != self.hw.powered() {
            self.hw.set_power(t_ms, on);
            self.end_session();
        }
    }
}
