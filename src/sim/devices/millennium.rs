//! A Millennium ChessLink board (Exclusive, Performance, eONE), board side (protocols 2.1).
//!
//! Every character has odd parity in bit 7 (38400 baud 7O1), and every message ends with two
//! hex digits of the XOR of its 7-bit characters; a command whose parity or block check is
//! wrong is not acted on. The board answers `S` (status `s` + 64 piece letters, a8 of its
//! hardware first), `V`, `R`/`W` (its EEPROM registers: 0x00 bit 0 turns the block check
//! off, 0x01 the scan time in 2.048 ms units, 0x02 the automatic reports, 0x03 the timed
//! reports' period in 4.096 ms units), `L`/`X` (LEDs) and `T` (a reset of about 3 s, with no
//! reply). Once a host has spoken to it, it reports its status automatically at the end of
//! every scan (register 0x02 = 0, the default), never (1), every period (2), on change (3),
//! or on a change seen in 2 to 5 scans in a row (4–7). The registers are EEPROM: they
//! survive a power cycle; the LEDs and the automatic reports do not.

use shakmaty::{Color, Role};

use super::DeviceOptions;
use super::firmware::Firmware;
use super::hardware::{Hardware, Pending, earliest};
use crate::board::Millis;
use crate::board::kind::BoardKind;

/// Version `v` + major + minor: major 1 is a Performance board.
const VERSION: [u8; 2] = [1, 2];
/// A reset keeps the board deaf and silent this long.
const RESET_MS: Millis = 3000;
/// The scan time register's unit, in microseconds, and its least value.
const SCAN_UNIT_US: u64 = 2048;
const MIN_SCAN_TIME: u8 = 15;
/// The timed reports' period unit, in microseconds.
const PERIOD_UNIT_US: u64 = 4096;

const REG_SETUP: usize = 0x00;
const REG_SCAN_TIME: usize = 0x01;
const REG_REPORTS: usize = 0x02;
const REG_PERIOD: usize = 0x03;

/// A command from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Command {
    Status,
    Leds,
    LedsOff,
    Reset,
    Version,
    Write(u8, u8),
    Read(u8),
}

/// Characters in a command, its letter included, before the block check.
fn command_length(letter: u8) -> Option<usize> {
    match letter {
        b'S' | b'X' | b'T' | b'V' => Some(1),
        b'R' => Some(3),
        b'W' => Some(5),
        // Slot time and 81 LED patterns, two hex digits each.
        b'L' => Some(1 + 2 + 81 * 2),
        _ => None,
    }
}

fn has_odd_parity(byte: u8) -> bool {
    byte.count_ones() % 2 == 1
}

fn with_odd_parity(c: u8) -> u8 {
    let c = c & 0x7F;
    if has_odd_parity(c) { c } else { c | 0x80 }
}

fn hex_value(digits: &[u8]) -> Option<u8> {
    let text = std::str::from_utf8(digits).ok()?;
    u8::from_str_radix(text, 16).ok()
}

fn push_hex(out: &mut Vec<u8>, value: u8) {
    out.extend(format!("{value:02X}").bytes());
}

/// A message as the board sends it: its block check appended (unless switched off), odd
/// parity on every character.
fn seal(mut body: Vec<u8>, block_check: bool) -> Vec<u8> {
    if block_check {
        let check = body.iter().fold(0, |x, c| x ^ c);
        push_hex(&mut body, check);
    }
    body.into_iter().map(with_odd_parity).collect()
}

/// Reads commands from bytes arriving in any pieces. Outside a command, bytes that are not
/// a command letter are skipped.
#[derive(Debug, Clone, Default)]
struct CommandReader {
    pending: Vec<u8>,
}

impl CommandReader {
    fn push(&mut self, bytes: &[u8], block_check: bool, out: &mut Vec<Command>) {
        for &byte in bytes {
            let letter = self.pending.first().copied().unwrap_or(byte) & 0x7F;
            let Some(length) = command_length(letter) else {
                continue;
            };
            self.pending.push(byte);
            let whole = length + if block_check { 2 } else { 0 };
            if self.pending.len() == whole {
                out.extend(parse(&self.pending, length, block_check));
                self.pending.clear();
            }
        }
    }
}

/// A whole command's bytes: acted on only with right parity and block check.
fn parse(bytes: &[u8], length: usize, block_check: bool) -> Option<Command> {
    if !bytes.iter().all(|&b| has_odd_parity(b)) {
        return None;
    }
    let chars: Vec<u8> = bytes.iter().map(|b| b & 0x7F).collect();
    let (body, check) = chars.split_at(length);
    if block_check && hex_value(check)? != body.iter().fold(0, |x, c| x ^ c) {
        return None;
    }
    Some(match body[0] {
        b'S' => Command::Status,
        b'L' => Command::Leds,
        b'X' => Command::LedsOff,
        b'T' => Command::Reset,
        b'V' => Command::Version,
        b'R' => Command::Read(hex_value(&body[1..3])?),
        _ => Command::Write(hex_value(&body[1..3])?, hex_value(&body[3..5])?),
    })
}

/// The letter of a piece in a status (`KQRNBP` White, `kqrnbp` Black, `.` empty).
fn letter(piece: Option<shakmaty::Piece>) -> u8 {
    let Some(piece) = piece else { return b'.' };
    let letter = match piece.role {
        Role::King => b'k',
        Role::Queen => b'q',
        Role::Rook => b'r',
        Role::Knight => b'n',
        Role::Bishop => b'b',
        Role::Pawn => b'p',
    };
    match piece.color {
        Color::White => letter.to_ascii_uppercase(),
        Color::Black => letter,
    }
}

/// A Millennium board.
#[derive(Debug, Clone)]
pub struct MillenniumBoard {
    hw: Hardware,
    reader: CommandReader,
    requests: Pending<Command>,
    reply_delay_ms: Millis,
    registers: [u8; 256],
    /// A host has spoken since power-on or reset: automatic reports go.
    host_spoke: bool,
    resetting_until: Option<Millis>,
    /// Scans up to here are done.
    scan_seen_ms: Millis,
    next_timed_ms: Millis,
    last_reported: Option<[u8; 64]>,
    /// The picture of the last scan and the scans in a row that found it.
    last_scan: ([u8; 64], u32),
}

impl MillenniumBoard {
    /// An empty board, just switched on, its registers at their defaults.
    pub fn new(options: &DeviceOptions) -> MillenniumBoard {
        let hw = Hardware::new(BoardKind::Millennium, options);
        let mut registers = [0; 256];
        registers[REG_SCAN_TIME] =
            (hw.sensors.scan_ms() * 1000 / SCAN_UNIT_US).clamp(u64::from(MIN_SCAN_TIME), 255) as u8;
        // Not documented: about a tenth of a second, and full LED brightness.
        registers[REG_PERIOD] = 25;
        registers[0x04] = 15;
        MillenniumBoard {
            hw,
            reader: CommandReader::default(),
            requests: Pending::default(),
            reply_delay_ms: options.reply_delay_ms,
            registers,
            host_spoke: false,
            resetting_until: None,
            scan_seen_ms: 0,
            next_timed_ms: 0,
            last_reported: None,
            last_scan: ([0; 64], 0),
        }
    }

    fn block_check(&self) -> bool {
        self.registers[REG_SETUP] & 1 == 0
    }

    fn report_mode(&self) -> u8 {
        self.registers[REG_REPORTS]
    }

    /// The end of the next scan whose picture may be reported.
    fn next_scan(&self) -> Option<Millis> {
        let reporting = self.host_spoke && self.resetting_until.is_none();
        let by_scan = !matches!(self.report_mode(), 1 | 2);
        (reporting && by_scan).then(|| self.hw.sensors.sweep_end_after(self.scan_seen_ms))
    }

    fn next_timed(&self) -> Option<Millis> {
        let reporting = self.host_spoke && self.resetting_until.is_none();
        (reporting && self.report_mode() == 2).then_some(self.next_timed_ms)
    }

    fn timed_period_ms(&self) -> Millis {
        (u64::from(self.registers[REG_PERIOD]) * PERIOD_UNIT_US / 1000).max(1)
    }

    fn picture(&self) -> [u8; 64] {
        self.hw
            .sensors
            .sensed()
            .map(|m| letter(m.and_then(|m| m.piece())))
    }

    /// A scan ended: its picture is reported if the report mode says so.
    fn end_of_scan(&mut self, at: Millis) {
        self.scan_seen_ms = at;
        let picture = self.picture();
        let in_a_row = if self.last_scan.0 == picture {
            self.last_scan.1 + 1
        } else {
            1
        };
        self.last_scan = (picture, in_a_row);
        let changed = self.last_reported != Some(picture);
        let report = match self.report_mode() {
            3 => changed,
            mode @ 4..=7 => changed && in_a_row >= u32::from(mode - 2),
            _ => true,
        };
        if report {
            self.send_status(at);
        }
    }

    fn send_status(&mut self, at: Millis) {
        let picture = self.picture();
        self.last_reported = Some(picture);
        let mut body = vec![b's'];
        body.extend(picture);
        self.reply(at, body);
    }

    fn reply(&mut self, at: Millis, body: Vec<u8>) {
        let sealed = seal(body, self.block_check());
        self.hw.line.send(at, &sealed);
    }

    fn execute(&mut self, at: Millis, command: Command) {
        let register_reply = |letter: u8, address: u8, value: u8| {
            let mut body = vec![letter];
            push_hex(&mut body, address);
            push_hex(&mut body, value);
            body
        };
        if command != Command::Reset && !self.host_spoke {
            self.host_spoke = true;
            self.scan_seen_ms = at;
            self.next_timed_ms = at + self.timed_period_ms();
        }
        match command {
            Command::Status => self.send_status(at),
            Command::Leds => self.reply(at, vec![b'l']),
            Command::LedsOff => self.reply(at, vec![b'x']),
            Command::Reset => {
                self.host_spoke = false;
                self.resetting_until = Some(at + RESET_MS);
                self.requests.clear();
            }
            Command::Version => {
                let mut body = vec![b'v'];
                VERSION.iter().for_each(|&v| push_hex(&mut body, v));
                self.reply(at, body);
            }
            Command::Read(address) => {
                let value = self.registers[usize::from(address)];
                self.reply(at, register_reply(b'r', address, value));
            }
            Command::Write(address, value) => {
                self.write_register(at, address, value);
                let value = self.registers[usize::from(address)];
                self.reply(at, register_reply(b'w', address, value));
            }
        }
    }

    fn write_register(&mut self, at: Millis, address: u8, value: u8) {
        let address = usize::from(address);
        self.registers[address] = value;
        match address {
            REG_SCAN_TIME => {
                let value = value.max(MIN_SCAN_TIME);
                self.registers[address] = value;
                let scan_ms = (u64::from(value) * SCAN_UNIT_US).div_ceil(1000);
                self.hw.sensors.set_scan(at, scan_ms);
                self.scan_seen_ms = at;
            }
            REG_REPORTS | REG_PERIOD => {
                self.next_timed_ms = at + self.timed_period_ms();
                self.last_reported = None;
            }
            _ => {}
        }
    }
}

impl Firmware for MillenniumBoard {
    fn kind(&self) -> BoardKind {
        BoardKind::Millennium
    }

    fn hardware(&self) -> &Hardware {
        &self.hw
    }

    fn hardware_mut(&mut self) -> &mut Hardware {
        &mut self.hw
    }

    fn next_event(&self) -> Option<Millis> {
        earliest([self.hw.sensors.next_due(), self.next_output()])
    }

    /// The next request, the end of a reset or a scan, a timed report.
    fn next_output(&self) -> Option<Millis> {
        let timed = self.next_timed();
        earliest([
            self.requests.next_due(),
            self.resetting_until,
            self.next_scan(),
            timed,
        ])
    }

    fn step(&mut self, at: Millis) {
        self.hw.sample_until(at);
        while let Some((_, command)) = self.requests.pop_due(at) {
            self.execute(at, command);
        }
        if self.resetting_until.is_some_and(|end| end <= at) {
            self.resetting_until = None;
            self.scan_seen_ms = at;
        }
        if self.next_scan().is_some_and(|s| s <= at) {
            self.end_of_scan(at);
        }
        if self.next_timed().is_some_and(|s| s <= at) {
            self.next_timed_ms = at + self.timed_period_ms();
            self.send_status(at);
        }
    }

    fn on_bytes(&mut self, t_ms: Millis, bytes: &[u8]) {
        if self.resetting_until.is_some() {
            return;
        }
        let mut commands = Vec::new();
        let block_check = self.block_check();
        self.reader.push(bytes, block_check, &mut commands);
        for command in commands {
            self.requests.push(t_ms + self.reply_delay_ms, command);
        }
    }

    fn on_link(&mut self, _open: bool) {
        self.reader = CommandReader::default();
    }

    fn on_power(&mut self, t_ms: Millis, _on: bool) {
        self.host_spoke = false;
        self.resetting_until = None;
        self.requests.clear();
        self.reader = CommandReader::default();
        self.last_reported = None;
        self.scan_seen_ms = t_ms;
    }
}

#[cfg(test)]
mod tests;
