//! Board wire protocols: byte decoders and encoders, no I/O.
