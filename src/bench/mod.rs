//! The harnesses of `touchmove bench`: each benchmark plays virtual boards, simulated hands or
//! spectators against the real recorder, server or cluster and prints its figures. They
//! import the domain modules and the simulator; no domain module imports them.
//!
//! One file per benchmark, named by what it measures; `boards_per_recorder` also holds the
//! virtual boards and scripted games the other benchmarks, the demo and the tests share.

pub mod boards_per_recorder;
pub mod cluster_latency;
pub mod event_day;
pub mod outage;
pub mod recognition;
pub mod sse_spectators;

pub use boards_per_recorder::{
    BoardMake, FIXTURE_GAMES, ScriptGame, event_for_ports, fixture_games, plain_timeline,
    spawn_boards, spawn_boards_with_log,
};
