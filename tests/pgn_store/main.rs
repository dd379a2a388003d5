//! The PGN reader and writer, and the journal store under crashes, tasks and read-only files.

mod pgn_bad_input;
mod pgn_roundtrip;
mod store_async;
mod store_crash;
mod store_export_capture;
mod store_journal;
mod store_read_only;
