//! touchmove: an electronic chess board recorder.
//!
//! The crate is split into a deterministic core that performs no I/O and reads no clock
//! (`wire`, `board`, `act`, `rules`, `clock`, `record`; `event` reads files but opens
//! nothing else) and a thin asynchronous shell that owns
//! ports, files, the database and sockets (`driver`, `store`, `server`, `sim`, `cluster`,
//! `recorder`, `cli`); `bench` holds the benchmarks' harnesses, which no other module imports.
//! Observations flow forward only: driver → wire → board → act → record → store/server.

pub mod act;
pub mod bench;
pub mod board;
pub mod cli;
pub mod clock;
pub mod cluster;
pub mod driver;
pub mod event;
pub mod record;
pub mod recorder;
pub mod rules;
pub mod server;
pub mod sim;
pub mod store;
pub mod wire;
