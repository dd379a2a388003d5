//! The hand simulators (ours and the independent model) and the machine reading them.

mod independent;
mod pgn;
mod property;
mod simulator;
