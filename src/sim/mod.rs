//! Simulation: virtual boards and models of human hands.

pub mod after_game;
pub mod devices;
pub mod hands;
pub mod independent_hands;
pub mod pty;
pub mod snapshot_board;
pub mod virtual_board;
pub mod virtual_bus;
pub mod virtual_chessnut_hid;
pub mod virtual_pegasus;
pub mod virtual_peripheral;
pub mod world;
