//! Serial drivers (tokio): they own the ports and feed received bytes to the core.
