//! Simulation: virtual boards and models of human hands.

pub mod hands;
