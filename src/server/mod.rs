//! The HTTP server: live events, PGN and the arbiter API.
