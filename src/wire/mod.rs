//! Board wire protocols: byte decoders and encoders, no I/O.

pub mod capture;
pub mod certabo;
pub mod chessnut;
pub mod chessnut_report;
pub mod dgt;
pub mod frame_error;
pub mod gatt;
pub mod kind;
pub mod millennium;
pub mod pegasus;
pub mod revelation;

/// Milliseconds since the session (or capture) started. Time is always a parameter in the
/// core; nothing in the core reads the system clock.
pub type Millis = u64;
