//! Board wire protocols: byte decoders and encoders, no I/O.

pub mod capture;
pub mod dgt;
pub mod pegasus;
pub mod revelation;
