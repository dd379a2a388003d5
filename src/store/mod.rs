//! The crash-proof journal (SQLite) of received bytes and emitted events.
//!
//! The recorder appends every byte chunk it reads from a board before decoding it, and every
//! event and arbiter action before acting on it; after a crash it rebuilds each game from the
//! journal. See [`Journal`] for the durability rules and [`JournalError`] for the failures a
//! recorder must tell apart.

mod board_key;
mod error;
mod journal;
mod shared;

pub use board_key::{BoardKey, BoardKeyError};
pub use error::JournalError;
pub use journal::{
    Entry, GameBoundary, Journal, NewEntry, Record, Session, Stamped, continuous_times, lock_path,
};
pub use shared::{Refused, SLOW_DISK_ENV, SharedJournal};
