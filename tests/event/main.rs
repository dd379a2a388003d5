//! Events: TRF files, board order, rounds that follow.

#[path = "../support/recorder.rs"]
mod recorder_support;

mod board_order;
mod rounds;
mod trf;
