//! The act-of-moving machine (FIDE Art. 4/7): scenarios, replayed captures, simulated and
//! arbitrary input, penalty proposals.

mod arbitrary_input;
mod folded_frames;
mod gaps;
mod penalties;
mod replay;
mod scenarios;
mod simulated;
