//! The clock model and the rules of the Laws: software and board clocks, time controls,
//! draws, dead positions, perft.

mod clock_props;
mod clock_real_capture;
mod clock_software;
mod clock_state;
mod clock_time_control;
mod rules_dead;
mod rules_draws;
mod rules_perft;
