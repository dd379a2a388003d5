//! Whole events in simulated time: the real recorder on virtual boards of every kind, played
//! by simulated hands through seeded faults, each judged against what was played. A failing
//! seed prints the `touchmove simulate` command that replays it.

mod regressions;
mod seeds;
