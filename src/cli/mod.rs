//! The `touchmove` command line. Each subcommand lives in its own module.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub mod analyse;
pub mod arbiter;
pub mod bench;
pub mod ble_scan;
pub mod demo;
pub mod event;
pub mod export_capture;
pub mod pairings;
pub mod pgn;
pub mod ports;
pub mod record;
pub mod replay;
pub mod results;
pub mod serve;
pub mod sim;
pub mod simulate;
mod status_line;

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
    Record(Box<record::RecordArgs>),
    /// Export the raw byte log of a board from a journal as a timestamped capture.
    ExportCapture(export_capture::ExportCaptureArgs),
    /// Arbiter controls for a running recorder.
    Arbiter(arbiter::ArbiterArgs),
    /// A live demo on virtual boards: recorder, web pages and PGN files, no hardware needed.
    Demo(demo::DemoArgs),
    /// Print the boards of a round from a TRF, PGN or CSV pairings file.
    Pairings(pairings::PairingsArgs),
    /// Write the results recorded in an output folder into round N of a FIDE TRF.
    Results(results::ResultsArgs),
    /// A broadcast node of an event on several PCs: rebuilds every game from the cluster and
    /// serves the same pages and PGN files as `record`.
    Serve(serve::ServeArgs),
    /// The event's layout in the cluster: boards, players, the PC of each board.
    #[command(subcommand)]
    Event(event::EventCommand),
    /// Whole events in simulated time: every kind of board through unplugs, power cycles,
    /// noisy lines and recorder restarts, judged against the moves played; prints one JSON
    /// line per failing seed (with the command that replays it) and a summary.
    Simulate(simulate::SimulateArgs),
}

/// The log level when `RUST_LOG` is not set: touchmove's warnings and notices (a failed
/// lichess push, a board reconnecting), other crates' warnings.
pub const DEFAULT_LOG: &str = "warn,touchmove=info";

/// Sends `tracing` events to stderr, with timestamps, filtered by `RUST_LOG` (default
/// `default`, [`DEFAULT_LOG`] for most commands). A write to a closed terminal is dropped, never a panic.
pub fn install_log(default: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

/// Parses the command line and runs the subcommand.
pub fn main() -> ExitCode {
    end_quietly_on_closed_pipe();
    let cli = Cli::parse();
    // A simulation's recorders reconnect and warn thousands of times on purpose, and it
    // judges what they record: only errors.
    install_log(match cli.command {
        Command::Simulate(_) => "error",
        _ => DEFAULT_LOG,
    });
    match cli.command {
        Command::Pgn(c) => pgn::run(c),
        Command::Analyse(a) => analyse::run(a),
        Command::Ports(a) => ports::run(a),
        Command::Sim(a) => sim::run(a),
        Command::Replay(a) => replay::run(a),
        Command::Bench(c) => bench::run(c),
        Command::Record(a) => record::run(*a),
        Command::ExportCapture(a) => export_capture::run(a),
        Command::Arbiter(a) => arbiter::run(a),
        Command::Demo(a) => demo::run(a),
        Command::Pairings(a) => pairings::run(a),
        Command::Results(a) => results::run(a),
        Command::Serve(a) => serve::run(a),
        Command::Event(c) => event::run(c),
        Command::Simulate(a) => simulate::run(a),
    }
}

/// A reader that closed its end of the pipe (`touchmove pairings … | head -1`) has read all
/// it wants: the write to stdout or stderr that finds the pipe closed ends the program with
/// status 0 and no message, whichever subcommand wrote. Every other panic is reported as
/// before.
fn end_quietly_on_closed_pipe() {
    let closed = std::io::Error::from_raw_os_error(libc::EPIPE).to_string();
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| payload.downcast_ref::<&str>().copied())
            .unwrap_or_default();
        let printing = message.starts_with("failed printing to stdout")
            || message.starts_with("failed printing to stderr");
        if printing && message.ends_with(&closed) {
            std::process::exit(0);
        }
        default_hook(info);
    }));
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP: how the long-running subcommands are asked to stop
/// cleanly. SIGHUP (the SSH session or terminal closed) stops them like Ctrl-C, everything
/// recorded kept, instead of killing them; started under `nohup` (SIGHUP ignored) it stays
/// ignored, so `nohup touchmove record …` records on after the session closes.
pub(crate) async fn stop_requested() {
    use tokio::signal::unix::{SignalKind, signal};
    let hangup = if hangup_ignored() {
        None
    } else {
        signal(SignalKind::hangup()).ok()
    };
    let hung_up = async move {
        match hangup {
            Some(mut h) => {
                h.recv().await;
            }
            None => std::future::pending().await,
        }
    };
    match signal(SignalKind::terminate()) {
        Ok(mut term) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
                () = hung_up => {}
            }
        }
        Err(_) => {
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                () = hung_up => {}
            }
        }
    }
}

/// True when this process was started with SIGHUP ignored (`nohup`).
fn hangup_ignored() -> bool {
    use nix::sys::signal::{SaFlags, SigAction, SigHandler, SigSet, Signal, sigaction};
    let ignore = SigAction::new(SigHandler::SigIgn, SaFlags::empty(), SigSet::empty());
    // SAFETY: SIG_IGN is no handler code of ours, and the previous disposition is put back
    // at once; no other thread sets SIGHUP's disposition meanwhile (this runs before the
    // subcommand waits for signals).
    let Ok(previous) = (unsafe { sigaction(Signal::SIGHUP, &ignore) }) else {
        return false;
    };
    // SAFETY: restores the disposition read above.
    let _ = unsafe { sigaction(Signal::SIGHUP, &previous) };
    previous.handler() == SigHandler::SigIgn
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// clap checks a command's definition (two arguments of one id, say) only in debug
    /// builds, where a faulty one panics at the first use: checked here for every build.
    #[test]
    fn every_subcommand_is_well_defined() {
        super::Cli::command().debug_assert();
    }
}
