//! The crash-proof journal (SQLite) of received bytes and emitted events.
