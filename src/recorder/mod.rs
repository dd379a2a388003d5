//! The recorder (shell): runs every board of an event — driver, decoder, act-of-moving
//! machine, journal, PGN files, clocks and arbiter controls.

pub mod channel;
pub mod config;
pub mod layout;
pub mod pairings;

pub use channel::ArbiterSink;
pub use config::{BoardConfig, BoardSource, EventConfig, Player};
