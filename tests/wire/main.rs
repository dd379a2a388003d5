//! The wire codecs of every board kind: properties, real captures, the DGT observer.

mod brands_props;
mod brands_real;
mod devices;
mod johan;
mod observer;
mod props;
mod replay;
mod variants_props;
