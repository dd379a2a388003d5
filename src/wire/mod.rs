//! Board wire protocols: byte decoders and encoders, no I/O.

pub mod capture;
pub mod dgt;
