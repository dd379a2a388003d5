//! Messages a DGT board sends to the host.

use serde::Serialize;
use serde::ser::SerializeMap;

use super::clock::ClockMessage;
use super::eeprom::EepromRecord;
use super::frame::{HEADER_LEN, MAX_FRAME_LEN, push_header};

/// Wire ids (without the MSB) of the messages this module knows.
pub(crate) mod id {
    pub const BOARD_DUMP: u8 = 0x06;
    pub const CLOCK: u8 = 0x0D;
    pub const FIELD_UPDATE: u8 = 0x0E;
    pub const EE_MOVES: u8 = 0x0F;
    pub const BUS_ADDRESS: u8 = 0x10;
    pub const SERIAL_NUMBER: u8 = 0x11;
    pub const TRADEMARK: u8 = 0x12;
    pub const VERSION: u8 = 0x13;
    pub const HARDWARE_VERSION: u8 = 0x16;
    pub const BATTERY_STATUS: u8 = 0x20;
    pub const LONG_SERIAL_NUMBER: u8 = 0x22;
}

/// One message from the board. Squares are DGT field numbers (0 = a8 … 63 = h1 with the
/// connector on White's left) and pieces are DGT piece codes; the observer in `board::dgt`
/// turns them into game coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// All 64 fields in DGT order with their piece codes (0x86).
    BoardDump([u8; 64]),
    /// One field changed (0x8E); `piece` 0 means the field was emptied.
    FieldUpdate {
        /// Field 0..=63.
        field: u8,
        /// Piece code (0 = empty).
        piece: u8,
    },
    /// Clock times or a clock acknowledgement (0x8D).
    Clock(ClockMessage),
    /// The five-digit serial number (0x91).
    SerialNumber(String),
    /// The ten-digit serial number of Bluetooth and later boards (0xA2).
    LongSerialNumber(String),
    /// Firmware version (0x93).
    Version {
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// Hardware version (0x96).
    HardwareVersion {
        /// Major version.
        major: u8,
        /// Minor version.
        minor: u8,
    },
    /// Trademark text (0x92).
    Trademark(String),
    /// Battery status of Bluetooth boards (0xA0).
    BatteryStatus(BatteryStatus),
    /// The bus address (0x90), a 14-bit number.
    BusAddress(u16),
    /// The EEPROM move log (0x8F).
    EepromMoves(Vec<EepromRecord>),
    /// A well-framed message this decoder does not interpret (or whose content is invalid,
    /// e.g. a field number above 63), kept raw. `id` is the wire id with the MSB set.
    Unknown {
        /// The wire id byte (0x80 or more).
        id: u8,
        /// The data bytes after the header.
        data: Vec<u8>,
    },
}

/// The battery status of a Bluetooth board (nine data bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct BatteryStatus {
    /// Charge in percent.
    pub charge_percent: u8,
    /// Hours of running or charging time left (0x7F = not available).
    pub time_left_hours: u8,
    /// Minutes of running or charging time left (0x7F = not available).
    pub time_left_minutes: u8,
    /// Hours switched on.
    pub on_hours: u8,
    /// Minutes switched on.
    pub on_minutes: u8,
    /// Days in standby.
    pub standby_days: u8,
    /// Hours in standby.
    pub standby_hours: u8,
    /// Minutes in standby.
    pub standby_minutes: u8,
    /// Status bits: bit 0 charging, bit 1 discharging.
    pub status: u8,
}

impl BatteryStatus {
    /// True when the board reports it is charging.
    pub fn charging(&self) -> bool {
        self.status & 0x01 != 0
    }

    /// The nine data bytes.
    pub fn to_bytes(self) -> [u8; 9] {
        [
            self.charge_percent,
            self.time_left_hours,
            self.time_left_minutes,
            self.on_hours,
            self.on_minutes,
            self.standby_days,
            self.standby_hours,
            self.standby_minutes,
            self.status,
        ]
    }

    /// The status from its nine data bytes.
    pub fn from_bytes(d: [u8; 9]) -> Self {
        BatteryStatus {
            charge_percent: d[0],
            time_left_hours: d[1],
            time_left_minutes: d[2],
            on_hours: d[3],
            on_minutes: d[4],
            standby_days: d[5],
            standby_hours: d[6],
            standby_minutes: d[7],
            status: d[8],
        }
    }
}

/// The character for a DGT piece code: `PRNBKQ` white, `prnbkq` black, `.` empty, `X`/`Y`/`Z`
/// for the three "magic" pieces (draw, white wins, black wins), `?` for anything else.
pub fn piece_char(code: u8) -> char {
    const CHARS: &[u8; 16] = b".PRNBKQprnbkqXYZ";
    CHARS.get(usize::from(code)).map_or('?', |&c| char::from(c))
}

/// The name of a DGT field in the board's own numbering (connector on White's left).
pub(crate) fn field_name(field: u8) -> String {
    let file = char::from(b'a' + (field & 7));
    let rank = 8 - (field >> 3);
    format!("{file}{rank}")
}

/// Whether a frame of `total` bytes (header included) is plausible for message `id` (without
/// the MSB): fixed lengths for fixed layouts, anything up to [`MAX_FRAME_LEN`] otherwise.
pub(crate) fn accepts_length(id: u8, total: usize) -> bool {
    let fixed = match id {
        id::BOARD_DUMP => 67,
        id::CLOCK => 10,
        id::FIELD_UPDATE | id::BUS_ADDRESS | id::VERSION | id::HARDWARE_VERSION => 5,
        id::SERIAL_NUMBER => return total == 8 || total == 12,
        id::BATTERY_STATUS => 12,
        id::LONG_SERIAL_NUMBER => 13,
        0x14 | 0x15 => 53,
        _ => return total <= MAX_FRAME_LEN,
    };
    total == fixed
}

fn ascii(data: &[u8]) -> String {
    data.iter().map(|&b| char::from(b & 0x7F)).collect()
}

fn two<T>(data: &[u8], f: impl FnOnce(u8, u8) -> T) -> Option<T> {
    match *data {
        [a, b] => Some(f(a, b)),
        _ => None,
    }
}

impl Message {
    /// Decodes one complete frame (header included). Content that does not fit the id's
    /// layout gives [`Message::Unknown`].
    pub fn from_frame(frame: &[u8]) -> Message {
        let id = frame.first().copied().unwrap_or(0x80);
        let data = frame.get(HEADER_LEN..).unwrap_or(&[]);
        Message::from_parts(id & 0x7F, data).unwrap_or_else(|| Message::Unknown {
            id: id | 0x80,
            data: data.to_vec(),
        })
    }

    fn from_parts(id: u8, data: &[u8]) -> Option<Message> {
        Some(match id {
            id::BOARD_DUMP => Message::BoardDump(data.try_into().ok()?),
            id::FIELD_UPDATE => match *data {
                [field, piece] if field < 64 => Message::FieldUpdate { field, piece },
                _ => return None,
            },
            id::CLOCK => Message::Clock(ClockMessage::decode(data.try_into().ok()?)?),
            id::SERIAL_NUMBER => Message::SerialNumber(ascii(data)),
            id::LONG_SERIAL_NUMBER => Message::LongSerialNumber(ascii(data)),
            id::TRADEMARK => Message::Trademark(ascii(data)),
            id::VERSION => two(data, |major, minor| Message::Version { major, minor })?,
            id::HARDWARE_VERSION => two(data, |major, minor| Message::HardwareVersion {
                major,
                minor,
            })?,
            id::BATTERY_STATUS => {
                Message::BatteryStatus(BatteryStatus::from_bytes(data.try_into().ok()?))
            }
            id::BUS_ADDRESS => two(data, |hi, lo| {
                Message::BusAddress((u16::from(hi) << 7) | u16::from(lo))
            })?,
            id::EE_MOVES => Message::EepromMoves(EepromRecord::parse_all(data)),
            _ => return None,
        })
    }

    /// The wire id byte (MSB set).
    pub fn wire_id(&self) -> u8 {
        0x80 | match self {
            Message::BoardDump(_) => id::BOARD_DUMP,
            Message::FieldUpdate { .. } => id::FIELD_UPDATE,
            Message::Clock(_) => id::CLOCK,
            Message::SerialNumber(_) => id::SERIAL_NUMBER,
            Message::LongSerialNumber(_) => id::LONG_SERIAL_NUMBER,
            Message::Version { .. } => id::VERSION,
            Message::HardwareVersion { .. } => id::HARDWARE_VERSION,
            Message::Trademark(_) => id::TRADEMARK,
            Message::BatteryStatus(_) => id::BATTERY_STATUS,
            Message::BusAddress(_) => id::BUS_ADDRESS,
            Message::EepromMoves(_) => id::EE_MOVES,
            Message::Unknown { id, .. } => *id,
        }
    }

    /// The data bytes (after the header), each with the MSB clear.
    pub fn encode_data(&self, out: &mut Vec<u8>) {
        let text = |out: &mut Vec<u8>, s: &str| {
            out.extend(s.chars().map(|c| if c.is_ascii() { c as u8 } else { b'?' }))
        };
        match self {
            Message::BoardDump(fields) => out.extend(fields.iter().map(|b| b & 0x7F)),
            Message::FieldUpdate { field, piece } => out.extend([field & 0x3F, piece & 0x7F]),
            Message::Clock(c) => out.extend(c.encode()),
            Message::SerialNumber(s) | Message::LongSerialNumber(s) | Message::Trademark(s) => {
                text(out, s)
            }
            Message::Version { major, minor } | Message::HardwareVersion { major, minor } => {
                out.extend([major & 0x7F, minor & 0x7F])
            }
            Message::BatteryStatus(b) => out.extend(b.to_bytes().map(|b| b & 0x7F)),
            Message::BusAddress(a) => out.extend([((a >> 7) & 0x7F) as u8, (a & 0x7F) as u8]),
            Message::EepromMoves(records) => records.iter().for_each(|r| r.encode_into(out)),
            Message::Unknown { data, .. } => out.extend(data.iter().map(|b| b & 0x7F)),
        }
    }

    /// The complete frame as the board sends it. Data longer than the 14-bit length allows
    /// is cut at [`MAX_FRAME_LEN`].
    pub fn encode(&self) -> Vec<u8> {
        let mut data = Vec::new();
        self.encode_data(&mut data);
        data.truncate(MAX_FRAME_LEN - HEADER_LEN);
        let mut out = Vec::with_capacity(HEADER_LEN + data.len());
        push_header(&mut out, self.wire_id(), HEADER_LEN + data.len());
        out.extend(data);
        out
    }

    /// A short snake_case name of the message kind (the `type` field of its JSON form).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Message::BoardDump(_) => "board_dump",
            Message::FieldUpdate { .. } => "field_update",
            Message::Clock(_) => "clock",
            Message::SerialNumber(_) => "serial_number",
            Message::LongSerialNumber(_) => "long_serial_number",
            Message::Version { .. } => "version",
            Message::HardwareVersion { .. } => "hardware_version",
            Message::Trademark(_) => "trademark",
            Message::BatteryStatus(_) => "battery_status",
            Message::BusAddress(_) => "bus_address",
            Message::EepromMoves(_) => "eeprom_moves",
            Message::Unknown { .. } => "unknown",
        }
    }
}

/// JSON form: a flat object with a `type` field, e.g.
/// `{"type":"field_update","field":52,"square":"e2","piece":"."}`.
impl Serialize for Message {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", self.kind_name())?;
        match self {
            Message::BoardDump(fields) => {
                let board: String = fields.iter().map(|&c| piece_char(c)).collect();
                m.serialize_entry("board", &board)?;
                m.serialize_entry("codes", &fields[..])?;
            }
            Message::FieldUpdate { field, piece } => {
                m.serialize_entry("field", field)?;
                m.serialize_entry("square", &field_name(*field))?;
                m.serialize_entry("piece", &piece_char(*piece).to_string())?;
                m.serialize_entry("code", piece)?;
            }
            Message::Clock(c) => m.serialize_entry("clock", c)?,
            Message::SerialNumber(t) | Message::LongSerialNumber(t) | Message::Trademark(t) => {
                m.serialize_entry("text", t)?
            }
            Message::Version { major, minor } | Message::HardwareVersion { major, minor } => {
                m.serialize_entry("major", major)?;
                m.serialize_entry("minor", minor)?;
            }
            Message::BatteryStatus(b) => m.serialize_entry("battery", b)?,
            Message::BusAddress(a) => m.serialize_entry("address", a)?,
            Message::EepromMoves(records) => m.serialize_entry("records", records)?,
            Message::Unknown { id, data } => {
                m.serialize_entry("id", id)?;
                m.serialize_entry("data", data)?;
            }
        }
        m.end()
    }
}
