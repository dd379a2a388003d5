//! Serial drivers (tokio): they own the ports and feed received bytes to the core.

pub mod backoff;
pub mod clock_pacing;
pub mod dgt;
pub mod ports;
pub mod serial;
