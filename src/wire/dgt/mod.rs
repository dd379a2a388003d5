//! The DGT e-board serial protocol (board and clock), byte-exact and without I/O.
//!
//! * [`Decoder`] turns the bytes a board sends into [`Message`]s, resynchronising after
//!   garbage; [`Message::encode`] is the board side (used by the virtual board).
//! * [`Command`] and its [`ClockCommand`]s are what a host sends; [`CommandDecoder`] is the
//!   board side of those bytes.
//! * [`bus`] holds the daisy-chain (bus mode) frames with their checksums.
//!
//! Byte layouts follow `protocols/dgt.md`; where documents disagree the real capture wins.

pub mod bus;
mod clock;
mod command;
mod decoder;
mod eeprom;
mod frame;
mod message;

pub use clock::{
    AckKind, ClockAck, ClockButton, ClockMessage, ClockSide, ClockStatus, ClockTimes, SideTime,
};
pub use command::{ClockCommand, Command, CommandDecoder, Hms};
pub use decoder::Decoder;
pub use eeprom::{EEPROM_LOG_BYTES, EepromLog, EepromRecord, LogEnd, LogEntry};
pub use frame::MAX_FRAME_LEN;
pub use message::{BatteryStatus, Message, piece_char};
