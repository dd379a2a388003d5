//! The PGN reader and writer, and the journal store under crashes and tasks (read-only files:
//! `tests/store_read_only.rs`, a process of its own).

mod pgn_bad_input;
mod pgn_roundtrip;
mod store_async;
mod store_crash;
mod store_export_capture;
mod store_journal;
