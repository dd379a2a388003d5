//! `touchmove record` end to end: boards of every kind on pseudo-terminals, outages, crashes,
//! full disks, rounds, the operator's status; and every subcommand on a closed pipe.

#[path = "../support/cluster/mod.rs"]
mod cluster_support;
#[path = "../support/recorder.rs"]
mod recorder_support;
#[path = "../support/server.rs"]
mod server_support;

mod brands;
mod broadcast_delay;
mod bus;
mod chessnut_hid;
mod cli;
mod cli_closed_pipe;
mod crash;
mod discovery;
mod disk;
mod folder;
mod lost_updates;
mod outage;
mod outage_capture;
mod published_durable;
mod replay;
mod rounds;
mod status;
mod unplug;
