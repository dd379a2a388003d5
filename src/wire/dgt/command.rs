//! Commands a host sends to a DGT board (and, through the board, to a DGT3000/XL clock).

use serde::Serialize;

use super::bus::BusCommand;

/// Clock-command wrapper byte (`2B size 03 cmd payload… 00`).
const CLOCK_WRAPPER: u8 = 0x2B;
/// I2C clock wrapper of the DGT Pi (layout unknown, kept raw).
const I2C_CLOCK_WRAPPER: u8 = 0x2C;
/// Revelation II / Pegasus LED command.
const SET_LEDS: u8 = 0x60;
/// Pegasus developer key.
const DEVELOPER_KEY: u8 = 0x63;
/// First byte of a clock command's content.
const CLOCK_START: u8 = 0x03;

/// A host → board command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "command", content = "data", rename_all = "snake_case")]
pub enum Command {
    /// 0x40: back to idle mode (cancels update modes). No reply.
    Reset,
    /// 0x41: send one clock message.
    SendClock,
    /// 0x42: send a board dump.
    SendBoard,
    /// 0x43: update mode (field updates, clock at least every second).
    SendUpdate,
    /// 0x44: update mode without clock messages.
    SendUpdateBoard,
    /// 0x45: send the serial number.
    SendSerialNumber,
    /// 0x46: send the bus address.
    SendBusAddress,
    /// 0x47: send the trademark text.
    SendTrademark,
    /// 0x48: send the hardware version.
    SendHardwareVersion,
    /// 0x49: send the EEPROM move log (~8 KB, ~8 s at 9600 baud).
    SendEepromMoves,
    /// 0x4A: switch to bus mode.
    ToBusMode,
    /// 0x4B: update mode, clock messages only when they change ("nice").
    SendUpdateNice,
    /// 0x4C: send the battery status.
    SendBatteryStatus,
    /// 0x4D: send the firmware version.
    SendVersion,
    /// 0x4E: start the boot loader (never send it).
    StartBootloader,
    /// 0x50: draughts dump of the black fields.
    SendBoard50B,
    /// 0x51: draughts scan of the black fields.
    Scan50B,
    /// 0x52: draughts dump of the white fields.
    SendBoard50W,
    /// 0x53: draughts scan of the white fields.
    Scan50W,
    /// 0x54: scan all fields.
    Scan100,
    /// 0x55: send the long serial number.
    SendLongSerialNumber,
    /// 0x56: send the I2C clock message.
    SendI2cClock,
    /// 0x57: update mode with I2C clock messages.
    SendUpdateI2c,
    /// 0x58: "nice" update mode with I2C clock messages.
    SendUpdateI2cNice,
    /// Another single-byte command in 0x40..=0x5F (e.g. Pegasus 0x59, 0x5A).
    Other(u8),
    /// A clock command (0x2B wrapper).
    Clock(ClockCommand),
    /// LEDs of a Revelation II or Pegasus (0x60); the bytes between the size byte and the
    /// terminating zero.
    Leds(Vec<u8>),
    /// The Pegasus developer key (0x63); bytes between size and terminator.
    DeveloperKey(Vec<u8>),
    /// A DGT Pi I2C clock message (0x2C); bytes between size and terminator.
    I2cClock(Vec<u8>),
    /// A bus-mode command frame.
    Bus(BusCommand),
}

/// A clock time for set-and-run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Hms {
    /// Hours (binary; bit 4 = count up on clocks that support it).
    pub hours: u8,
    /// Minutes (binary, not BCD).
    pub minutes: u8,
    /// Seconds (binary).
    pub seconds: u8,
}

impl Hms {
    /// The time from milliseconds (rounded down to whole seconds, at most 9:59:59).
    pub fn from_millis(ms: u64) -> Self {
        let s = (ms / 1000).min(9 * 3600 + 59 * 60 + 59);
        Hms {
            hours: (s / 3600) as u8,
            minutes: (s / 60 % 60) as u8,
            seconds: (s % 60) as u8,
        }
    }

    /// The time in milliseconds.
    pub fn millis(&self) -> u64 {
        (u64::from(self.hours) * 3600 + u64::from(self.minutes) * 60 + u64::from(self.seconds))
            * 1000
    }
}

/// A command for a DGT3000 or DGT XL clock, sent through the board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "clock_command", rename_all = "snake_case")]
pub enum ClockCommand {
    /// 0x01: show six 7-segment characters (XL), in wire order C B A F E D.
    Display {
        /// Segment bits of the six characters in wire order.
        segments: [u8; 6],
        /// Dots, colons and "1" digits.
        icons: u8,
        /// 0x03 beeps; 0x01 or 0x00 is silent.
        beep: u8,
    },
    /// 0x02: set the icons.
    Icons {
        /// Left icons (time, Fischer, delay, hourglass, up-count, byo-yomi, end).
        left: u8,
        /// Right icons.
        right: u8,
        /// Left period (bits 0-4) and flag (bit 5).
        left_period: u8,
        /// Right period and flag.
        right_period: u8,
        /// Special icons (clear, sound, black-white, white-black, battery…).
        special: u8,
    },
    /// 0x03: back to the time display.
    End,
    /// 0x08: request the button state.
    Button,
    /// 0x09: request the clock version.
    Version,
    /// 0x0A: set both times and start (only in mode 23).
    SetAndRun {
        /// Left time.
        left: Hms,
        /// Right time.
        right: Hms,
        /// 0x01 left runs, 0x02 right runs, 0x04 pause, 0x08 toggle on lever.
        mode: u8,
    },
    /// 0x0B: beep for `duration` × 64 ms.
    Beep {
        /// Duration in units of 64 ms.
        duration: u8,
    },
    /// 0x0C: show eight ASCII characters (DGT3000).
    Ascii {
        /// The characters.
        text: [u8; 8],
        /// Beep length code (0 = none).
        beep: u8,
    },
    /// 0x0D: show eleven ASCII characters (Revelation II firmware 3.24H and later).
    Rev2Ascii {
        /// The characters.
        text: [u8; 11],
        /// Beep length code (0 = none).
        beep: u8,
    },
    /// Anything else sent with the 0x2B wrapper: the bytes after the size byte, terminator
    /// included.
    Raw(Vec<u8>),
}

impl ClockCommand {
    /// An ASCII text command; `text` is cut or space-padded to eight characters.
    pub fn ascii(text: &str, beep: u8) -> Self {
        ClockCommand::Ascii {
            text: padded(text),
            beep,
        }
    }

    /// The bytes after the size byte, terminator included.
    fn content(&self) -> Vec<u8> {
        let (code, payload): (u8, Vec<u8>) = match self {
            ClockCommand::Raw(raw) => return raw.clone(),
            ClockCommand::Display {
                segments,
                icons,
                beep,
            } => (0x01, [&segments[..], &[*icons, *beep]].concat()),
            ClockCommand::Icons {
                left,
                right,
                left_period,
                right_period,
                special,
            } => (
                0x02,
                vec![
                    *left,
                    *right,
                    *left_period,
                    *right_period,
                    *special,
                    0,
                    0,
                    0,
                ],
            ),
            ClockCommand::End => (0x03, vec![]),
            ClockCommand::Button => (0x08, vec![]),
            ClockCommand::Version => (0x09, vec![]),
            ClockCommand::SetAndRun { left, right, mode } => (
                0x0A,
                vec![
                    left.hours,
                    left.minutes,
                    left.seconds,
                    right.hours,
                    right.minutes,
                    right.seconds,
                    *mode,
                ],
            ),
            ClockCommand::Beep { duration } => (0x0B, vec![*duration]),
            ClockCommand::Ascii { text, beep } => (0x0C, [&text[..], &[*beep]].concat()),
            ClockCommand::Rev2Ascii { text, beep } => (0x0D, [&text[..], &[*beep]].concat()),
        };
        let mut content = vec![CLOCK_START, code];
        content.extend(payload);
        content.push(0);
        content
    }

    /// Parses the bytes after the size byte (terminator included); layouts it does not know
    /// give [`ClockCommand::Raw`].
    fn from_content(content: &[u8]) -> Self {
        let raw = || ClockCommand::Raw(content.to_vec());
        let [CLOCK_START, code, payload @ .., 0] = content else {
            return raw();
        };
        let p = payload;
        match (code, p.len()) {
            (0x01, 8) => ClockCommand::Display {
                segments: [p[0], p[1], p[2], p[3], p[4], p[5]],
                icons: p[6],
                beep: p[7],
            },
            (0x02, 8) if p[5..] == [0, 0, 0] => ClockCommand::Icons {
                left: p[0],
                right: p[1],
                left_period: p[2],
                right_period: p[3],
                special: p[4],
            },
            (0x03, 0) => ClockCommand::End,
            (0x08, 0) => ClockCommand::Button,
            (0x09, 0) => ClockCommand::Version,
            (0x0A, 7) => ClockCommand::SetAndRun {
                left: Hms {
                    hours: p[0],
                    minutes: p[1],
                    seconds: p[2],
                },
                right: Hms {
                    hours: p[3],
                    minutes: p[4],
                    seconds: p[5],
                },
                mode: p[6],
            },
            (0x0B, 1) => ClockCommand::Beep { duration: p[0] },
            (0x0C, 9) => ClockCommand::Ascii {
                text: [p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]],
                beep: p[8],
            },
            (0x0D, 12) => {
                let mut text = [0; 11];
                text.copy_from_slice(&p[..11]);
                ClockCommand::Rev2Ascii { text, beep: p[11] }
            }
            _ => raw(),
        }
    }
}

fn padded<const N: usize>(text: &str) -> [u8; N] {
    let mut out = [b' '; N];
    for (slot, c) in out.iter_mut().zip(text.chars()) {
        *slot = if c.is_ascii() { c as u8 } else { b'?' };
    }
    out
}

/// Single-byte commands in code order from 0x40.
const SINGLE: [(u8, Command); 24] = [
    (0x40, Command::Reset),
    (0x41, Command::SendClock),
    (0x42, Command::SendBoard),
    (0x43, Command::SendUpdate),
    (0x44, Command::SendUpdateBoard),
    (0x45, Command::SendSerialNumber),
    (0x46, Command::SendBusAddress),
    (0x47, Command::SendTrademark),
    (0x48, Command::SendHardwareVersion),
    (0x49, Command::SendEepromMoves),
    (0x4A, Command::ToBusMode),
    (0x4B, Command::SendUpdateNice),
    (0x4C, Command::SendBatteryStatus),
    (0x4D, Command::SendVersion),
    (0x4E, Command::StartBootloader),
    (0x50, Command::SendBoard50B),
    (0x51, Command::Scan50B),
    (0x52, Command::SendBoard50W),
    (0x53, Command::Scan50W),
    (0x54, Command::Scan100),
    (0x55, Command::SendLongSerialNumber),
    (0x56, Command::SendI2cClock),
    (0x57, Command::SendUpdateI2c),
    (0x58, Command::SendUpdateI2cNice),
];

fn with_size(wrapper: u8, content: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(content.len() + 2);
    out.push(wrapper);
    out.push(content.len().min(255) as u8);
    out.extend(content.iter().take(255));
    out
}

fn with_terminator(payload: &[u8]) -> Vec<u8> {
    let mut content = payload.to_vec();
    content.push(0);
    content
}

impl Command {
    /// The command for a single byte in 0x40..=0x5F.
    pub fn from_single_byte(b: u8) -> Option<Command> {
        if !(0x40..=0x5F).contains(&b) {
            return None;
        }
        Some(
            SINGLE
                .iter()
                .find(|(code, _)| *code == b)
                .map_or(Command::Other(b), |(_, c)| c.clone()),
        )
    }

    /// The bytes to send.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Command::Clock(c) => with_size(CLOCK_WRAPPER, &c.content()),
            Command::Leds(p) => with_size(SET_LEDS, &with_terminator(p)),
            Command::DeveloperKey(p) => with_size(DEVELOPER_KEY, &with_terminator(p)),
            Command::I2cClock(p) => with_size(I2C_CLOCK_WRAPPER, &with_terminator(p)),
            Command::Bus(b) => b.encode().to_vec(),
            Command::Other(b) => vec![*b],
            single => SINGLE
                .iter()
                .find(|(_, c)| c == single)
                .map(|(code, _)| vec![*code])
                .unwrap_or_default(),
        }
    }
}

/// Decodes host → board bytes into commands (the board side; used by the virtual board).
/// Bytes that start no command are skipped and counted. Memory is bounded (a data command
/// carries at most 255 bytes).
#[derive(Debug, Default, Clone)]
pub struct CommandDecoder {
    pending: Vec<u8>,
    skipped: u64,
}

impl CommandDecoder {
    /// A decoder waiting for the first command.
    pub fn new() -> Self {
        CommandDecoder::default()
    }

    /// Bytes skipped so far.
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped
    }

    /// Feeds `bytes`, appending every command completed by them to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Command>) {
        for &b in bytes {
            self.push_byte(b, out);
        }
    }

    fn push_byte(&mut self, b: u8, out: &mut Vec<Command>) {
        if self.pending.is_empty() {
            if let Some(c) = Command::from_single_byte(b) {
                out.push(c);
            } else if matches!(
                b,
                CLOCK_WRAPPER | I2C_CLOCK_WRAPPER | SET_LEDS | DEVELOPER_KEY
            ) || b & 0x80 != 0
            {
                self.pending.push(b);
            } else {
                self.skipped += 1;
            }
            return;
        }
        self.pending.push(b);
        let first = self.pending[0];
        if first & 0x80 != 0 {
            if self.pending.len() == 4 {
                match BusCommand::decode(&self.pending) {
                    Some(c) => out.push(Command::Bus(c)),
                    None => self.skipped += 4,
                }
                self.pending.clear();
            }
            return;
        }
        let size = usize::from(self.pending[1]);
        if size == 0 {
            self.skipped += 2;
            self.pending.clear();
            return;
        }
        if self.pending.len() < size + 2 {
            return;
        }
        let content = &self.pending[2..];
        let payload = || content[..content.len() - 1].to_vec();
        let command = match first {
            CLOCK_WRAPPER => Command::Clock(ClockCommand::from_content(content)),
            SET_LEDS => Command::Leds(payload()),
            DEVELOPER_KEY => Command::DeveloperKey(payload()),
            _ => Command::I2cClock(payload()),
        };
        out.push(command);
        self.pending.clear();
    }
}
