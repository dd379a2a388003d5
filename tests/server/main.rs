//! The web server: live stream, API, connection limits, security, the lichess pusher.

#[path = "../support/server.rs"]
mod server_support;

mod api;
mod connections;
mod delay;
mod lichess;
mod security;
