//! `touchmove bench sse`: many SSE spectators on loopback.
