//! The board layer over real pseudo-terminals: reconnects, the EEPROM move log, DGT variants.

mod log_recovery;
mod log_rereading;
mod reconnect;
mod snapshot_relink;
mod variants;
