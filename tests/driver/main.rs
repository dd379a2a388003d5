//! The DGT driver over real pseudo-terminals against the virtual board.

mod support;

mod bad_input;
mod bus;
mod cli;
mod clock;
mod link;
mod verify;
