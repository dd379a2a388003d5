//! An event on several PCs through a private nats-server: broadcast, the arbiter desk,
//! faults and bad input.

#[path = "../support/cluster/mod.rs"]
mod cluster_support;
#[path = "../support/recorder.rs"]
mod recorder_support;

mod bad_input;
mod broadcast;
mod desk;
mod faults;
mod kinds;
