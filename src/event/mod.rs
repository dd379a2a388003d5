//! The event: its players, rounds, pairings and results, as the recorder and the cluster both
//! use them.
//!
//! - [`player`]: a player as pairings name him;
//! - [`trf`]: FIDE Tournament Report Files (players and pairings in, results out);
//! - [`pairings`]: a round's boards from a TRF, a PGN of headers or a CSV;
//! - [`config`]: the event file (TOML) and the event a recorder records;
//! - [`pegasus_key`]: the DGT Pegasus developer key the event file or command line names;
//! - [`file`]: the event file read once ([`file::EventFile`]);
//! - [`spec`]: the event as a command describes it ([`spec::EventSpec`]: the event file and
//!   what the command line changes in it) and each round of it;
//! - [`bounds`], [`error`]: the numbers accepted, and what a file that cannot be used says.
//!
//! The modules depend on each other in that order only (`spec` uses `file`, which reads
//! `config`, which reads `pairings`, which reads `trf`), and on nothing of the shell: they read
//! files, but open no port, socket or journal.

pub mod bounds;
pub mod config;
pub mod error;
pub mod file;
pub mod pairings;
pub mod pegasus_key;
pub mod player;
pub mod spec;
pub mod trf;

pub use config::{BoardConfig, BoardOrigins, BoardSource, EventConfig};
pub use error::ConfigError;
pub use file::EventFile;
pub use player::Player;
