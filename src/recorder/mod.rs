//! The recorder (shell): runs every board of an event — driver, decoder, act-of-moving
//! machine, journal, PGN files, clocks and arbiter controls.
