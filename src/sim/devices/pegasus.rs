//! A DGT Pegasus (Bluetooth LE), board side (protocols 1.15.4): DGT's framing and field
//! updates, occupancy only (a dump and a field update carry 0 or 1), no clock, no move log.
//!
//! It answers identification (serial numbers, trademark, versions, battery) at once, but
//! sends its board and its changes only after the host gave it the developer key (the
//! document is unsure whether the key is needed; DGT's own app and every driver send it).
//! The update commands all give field updates (it has no clock). Its Bluetooth session ends
//! with the link: the key and the update mode must be given again, as after a power cycle.

use super::DeviceOptions;
use super::dgt_framing::{self as framing, CommandReader, HostCommand, message};
use super::firmware::Firmware;
use super::hardware::{Hardware, Pending, earliest};
use super::sensors::Sensed;
use crate::board::Millis;
use crate::board::kind::BoardKind;

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

impl Firmware for PegasusBoard {
    fn kind(&self) -> BoardKind {
        BoardKind::Pegasus
    }

    fn hardware(&self) -> &Hardware {
        &self.hw
    }

    fn hardware_mut(&mut self) -> &mut Hardware {
        &mut self.hw
    }

    fn next_event(&self) -> Option<Millis> {
        earliest([self.hw.sensors.next_due(), self.requests.next_due()])
    }

    fn next_output(&self) -> Option<Millis> {
        let samples = self.streaming.then(|| self.hw.sensors.next_due());
        earliest([samples.flatten(), self.requests.next_due()])
    }

    fn step(&mut self, at: Millis) {
        for sensed in self.hw.sample_until(at) {
            self.on_sensed(sensed);
        }
        while let Some((_, command)) = self.requests.pop_due(at) {
            self.execute(at, command);
        }
    }

    fn on_bytes(&mut self, t_ms: Millis, bytes: &[u8]) {
        let mut commands = Vec::new();
        self.reader.push(bytes, &mut commands);
        for command in commands {
            self.requests.push(t_ms + self.reply_delay_ms, command);
        }
    }

    fn on_link(&mut self, open: bool) {
        if !open {
            self.end_session();
        }
    }

    fn on_power(&mut self, _t_ms: Millis, _on: bool) {
        self.end_session();
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, Role, Square};

    use super::*;
    use crate::board::ObservationKind;
    use crate::sim::devices::test_host::{TestHost, start};

    const KEY: [u8; 6] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB];

    fn board() -> TestHost {
        let options = DeviceOptions {
            developer_key: Some(KEY),
            ..DeviceOptions::new(6)
        };
        let mut host = TestHost::new(Box::new(PegasusBoard::new(&options)));
        host.physical(0, start());
        host
    }

    /// DGT's app's connect sequence (protocols 1.15.4) with `key`.
    fn connect(key: [u8; 6]) -> Vec<u8> {
        let mut bytes = vec![0x40, 0x60, 0x02, 0x00, 0x00, 0x63, 0x07];
        bytes.extend(key);
        bytes.extend([0x00, 0x5A, 0x47, 0x42, 0x44]);
        bytes
    }

    fn occupancy_dump() -> Vec<u8> {
        let mut dump = vec![0x86, 0x00, 0x43];
        dump.extend([1; 16]);
        dump.extend([0; 32]);
        dump.extend([1; 16]);
        dump
    }

    #[test]
    fn it_sends_its_board_and_changes_as_occupancy_only_after_the_right_key() {
        let mut host = board();
        host.host(0, &connect([0; 6]));
        host.run_until(1000);
        let sent = host.sent_since(0);
        assert_eq!(sent[0], 0x92, "the trademark, and nothing else");
        assert!(sent.ends_with(b"serial no: 0000001025"));
        host.clear();
        host.host(1000, &connect(KEY));
        host.physical(2000, ObservationKind::Emptied(Square::E2));
        host.physical(
            2600,
            ObservationKind::Placed(Square::E4, Some(Role::Pawn.of(Color::White))),
        );
        host.run_until(3200);
        let sent = host.sent_since(1000);
        let after_trademark = sent.len() - 67 - 10;
        assert_eq!(
            sent[after_trademark..after_trademark + 67],
            occupancy_dump()
        );
        assert!(sent.ends_with(&[0x8E, 0, 5, 52, 0, 0x8E, 0, 5, 36, 1]));
    }

    #[test]
    fn the_key_and_the_updates_end_with_the_link() {
        let mut host = board();
        host.host(0, &connect(KEY));
        host.connection(1000, false);
        host.connection(1100, true);
        host.host(1200, &[0x42, 0x44]);
        host.physical(2000, ObservationKind::Emptied(Square::E2));
        host.run_until(3000);
        assert!(host.sent_since(1001).is_empty(), "locked again");
        host.host(3000, &[0x4C, 0x4D]);
        host.run_until(3100);
        let mut battery = vec![0xA0, 0x00, 0x0C, 0x58];
        battery.extend([0; 7]);
        battery.extend([0x02, 0x93, 0x00, 0x05, 0x01, 0x00]);
        assert_eq!(
            host.sent_since(3000),
            battery,
            "identification needs no key"
        );
    }
}
