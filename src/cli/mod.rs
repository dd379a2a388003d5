//! The `touchmove` command line. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod analyse;
pub mod arbiter;
pub mod bench;
pub mod demo;
pub mod export_capture;
pub mod pgn;
pub mod ports;
pub mod record;
pub mod replay;
pub mod serve;
pub mod sim;

/// touchmove: records games from electronic chess boards under the FIDE Laws.
#[derive(Debug, Parser)]
#[command(name = "touchmove", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
// Parsed once per run: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check or normalise PGN files.
    #[command(subcommand)]
    Pgn(pgn::PgnCommand),
    /// Analyse positions for dead position / unwinnability (one JSON object per position).
    Analyse(analyse::AnalyseArgs),
    /// List serial ports and mark likely DGT boards.
    Ports(ports::PortsArgs),
    /// Run a virtual DGT board on a pseudo-terminal playing a PGN game.
    Sim(sim::SimArgs),
    /// Replay a DGT capture file and print the recognised game(s) or decoded messages.
    Replay(replay::ReplayArgs),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Record every board of an event.
    Record(record::RecordArgs),
    /// Export the raw byte log of a board from a journal as a timestamped capture.
    ExportCapture(export_capture::ExportCaptureArgs),
    /// Arbiter controls for a running recorder.
    Arbiter(arbiter::ArbiterArgs),
    /// A live demo on virtual boards: recorder, web pages and PGN files, no hardware needed.
    Demo(demo::DemoArgs),
    /// A broadcast node of an event on several PCs: rebuilds every game from the cluster and
    /// serves the same pages and PGN files as `record`.
    Serve(serve::ServeArgs),
}

/// Parses the command line and runs the subcommand.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Pgn(c) => pgn::run(c),
        Command::Analyse(a) => analyse::run(a),
        Command::Ports(a) => ports::run(a),
        Command::Sim(a) => sim::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Bench(c) => bench::run(c),
        Command::Record(a) => record::run(a),
        Command::ExportCapture(a) => export_capture::run(a),
        Command::Arbiter(a) => arbiter::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Serve(a) => serve::run(a),
    }
}

/// Resolves on Ctrl-C or SIGTERM: how the long-running subcommands are asked to stop cleanly.
pub(crate) async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
        }
    }
}
