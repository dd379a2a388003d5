//! `touchmove record`: records every board of an event until interrupted.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::driver::probe::{Candidates, probe};
use crate::recorder::pairings;
use crate::recorder::{
    BoardConfig, BoardOrigins, BoardSource, EventConfig, Player, Recorder, RunOptions,
};
use crate::server::feed::Feed;

/// Arguments of `touchmove record`.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// The event file (TOML): event, site, round, time control, boards and players.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A board's serial port (repeat for several boards, numbered in order), or `auto` for
    /// every DGT board found.
    #[arg(long)]
    pub port: Vec<String>,
    /// Where to look for boards given by serial number or `auto` (repeatable; a `*` in the
    /// last component matches anything, e.g. `/dev/ttyACM*`). Default: the serial ports that
    /// look like DGT boards.
    #[arg(long, value_name = "PATTERN")]
    pub probe: Vec<PathBuf>,
    /// Pairings (PGN of headers or CSV) to put players on the boards.
    #[arg(long)]
    pub pairings: Option<PathBuf>,
    /// The output folder: `tournament.json`, `round-N/game-K.pgn`, `round-N/games.pgn`.
    #[arg(long, default_value = "touchmove-out")]
    pub out: PathBuf,
    /// The journal (SQLite); default OUT/journal.sqlite. Restarting with the same journal
    /// resumes every game.
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// Address of the web server (live view, PGN, arbiter API).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Keep the journal under about this many bytes; beyond, it fails as on a full disk
    /// (tests of a full disk).
    #[arg(long, hide = true, value_name = "BYTES")]
    pub journal_limit: Option<u64>,
    /// Do not start the web server.
    #[arg(long)]
    pub no_server: bool,
    /// Push the round to this lichess broadcast round (8-character id).
    #[arg(long, requires = "lichess_token_file")]
    pub lichess_round: Option<String>,
    /// File holding the lichess token (scope study:write).
    #[arg(long)]
    pub lichess_token_file: Option<PathBuf>,
    /// Time control (PGN syntax), overriding the event file's.
    #[arg(long)]
    pub time_control: Option<String>,
    /// Round number, overriding the event file's.
    #[arg(long)]
    pub round: Option<u32>,
    /// Event name, overriding the event file's.
    #[arg(long)]
    pub event: Option<String>,
    /// The event's cluster, when its boards are recorded on several PCs.
    #[command(flatten)]
    pub cluster: super::serve::ClusterOptions,
}

/// Builds the event from the file and the command-line options (`--port auto` is resolved
/// later, by [`add_detected_boards`]).
fn event_config(args: &RecordArgs) -> Result<(EventConfig, BoardOrigins), String> {
    let (mut config, mut origins) = match &args.config {
        Some(path) => EventConfig::load_located(path).map_err(|e| e.to_string())?,
        None => (EventConfig::default(), BoardOrigins::new()),
    };
    if let Some(event) = &args.event {
        config.event = event.clone();
    }
    if let Some(round) = args.round {
        config.round = round;
    }
    if let Some(tc) = &args.time_control {
        crate::recorder::config::check_time_control(tc)
            .map_err(|e| format!("--time-control: {e}"))?;
        config.time_control = Some(tc.clone());
    }
    for p in args.port.iter().filter(|p| *p != "auto") {
        let path = PathBuf::from(p);
        if let Some(b) = config
            .boards
            .iter()
            .find(|b| b.source == BoardSource::Port(path.clone()))
        {
            return Err(format!(
                "port {} is given twice (board {} already uses it); two boards cannot share a port",
                path.display(),
                b.number
            ));
        }
        if let Some(b) = config
            .boards
            .iter_mut()
            .find(|b| b.source == BoardSource::Auto)
        {
            b.source = BoardSource::Port(path);
            origins.insert(b.number, format!("--port {p}"));
            continue;
        }
        let number = next_number(&config);
        config.boards.push(BoardConfig {
            number,
            source: BoardSource::Port(path),
            white: Player::named("?"),
            black: Player::named("?"),
        });
        origins.insert(number, format!("--port {p}"));
    }
    if let Some(path) = &args.pairings {
        let list = pairings::load(path).map_err(|e| e.to_string())?;
        config.apply_pairings(&list);
    }
    Ok((config, origins))
}

fn next_number(config: &EventConfig) -> u32 {
    config.boards.iter().map(|b| b.number).max().unwrap_or(0) + 1
}

/// `--port auto`: one "auto" board for every detected board that no entry names by serial
/// number and no "auto" entry will take.
async fn add_detected_boards(
    config: &mut EventConfig,
    origins: &mut BoardOrigins,
    candidates: &Candidates,
    probed_bytes: &mut BTreeMap<PathBuf, Vec<(tokio::time::Instant, Vec<u8>)>>,
) -> Result<(), String> {
    let mut found = 0;
    let mut report = Vec::new();
    for port in candidates.list() {
        if config
            .boards
            .iter()
            .any(|b| b.source == BoardSource::Port(port.clone()))
        {
            continue;
        }
        match probe(&port, Duration::from_millis(800)).await {
            Ok(mut id) => {
                probed_bytes.insert(port.clone(), std::mem::take(&mut id.received));
                let named = id.serial.as_ref().is_some_and(|s| {
                    config
                        .boards
                        .iter()
                        .any(|b| b.source == BoardSource::Serial(s.clone()))
                });
                if !named {
                    found += 1;
                }
                report.push(format!(
                    "{} (DGT board serial {})",
                    port.display(),
                    id.serial.as_deref().unwrap_or("unknown")
                ));
            }
            Err(why) => report.push(format!("{} ({why})", port.display())),
        }
    }
    if found == 0 {
        let probed = if report.is_empty() {
            format!("no candidate port is present ({})", candidates.describe())
        } else {
            format!("probed {}", report.join(", "))
        };
        return Err(format!(
            "--port auto: no DGT board found to record ({probed}); plug the board in and switch \
             it on, check `touchmove ports`, or give --port PATH"
        ));
    }
    let taken = config
        .boards
        .iter()
        .filter(|b| b.source == BoardSource::Auto)
        .count();
    for _ in taken..found {
        let number = next_number(config);
        config.boards.push(BoardConfig {
            number,
            source: BoardSource::Auto,
            white: Player::named("?"),
            black: Player::named("?"),
        });
        origins.insert(number, "--port auto".to_string());
    }
    Ok(())
}

/// Runs `touchmove record`.
pub fn run(args: RecordArgs) -> ExitCode {
    let (mut config, mut origins) = match event_config(&args) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("touchmove record: {e}");
            return ExitCode::FAILURE;
        }
    };
    let cluster = match args
        .cluster
        .resolve(args.config.as_deref(), Some(&config.event))
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("touchmove record: {e}");
            return ExitCode::FAILURE;
        }
    };
    let candidates = if args.probe.is_empty() {
        Candidates::Sysfs
    } else {
        Candidates::Patterns(args.probe.clone())
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("touchmove record: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let mut options = RunOptions::new(&args.out, Arc::new(Feed::new()));
        if args.port.iter().any(|p| p == "auto")
            && let Err(e) = add_detected_boards(
                &mut config,
                &mut origins,
                &candidates,
                &mut options.probed_bytes,
            )
            .await
        {
            eprintln!("touchmove record: {e}");
            return ExitCode::FAILURE;
        }
        options.candidates = candidates;
        options.journal_limit = args.journal_limit;
        options.board_origins = origins;
        if let Some(j) = &args.journal {
            options.journal_path = j.clone();
        }
        options.listen = (!args.no_server).then_some(args.listen);
        if let (Some(round), Some(file)) = (&args.lichess_round, &args.lichess_token_file) {
            options.lichess = Some((round.clone(), file.clone()));
        }
        let boards: Vec<String> = config
            .boards
            .iter()
            .map(|b| format!("board {} on {}", b.number, b.source))
            .collect();
        let journal_path = options.journal_path.clone();
        let layout_config = config.clone();
        let handle = match Recorder::start(config, options).await {
            Ok(h) => h,
            Err(e) => {
                eprintln!("touchmove record: {e}");
                return ExitCode::FAILURE;
            }
        };
        eprintln!(
            "touchmove record: recording {} into {}{}; arbiter: `touchmove arbiter --out {} …`; Ctrl-C stops",
            boards.join(", "),
            handle.out_dir().display(),
            handle
                .server_addr()
                .map(|a| format!(", live at http://{a}/"))
                .unwrap_or_default(),
            handle.out_dir().display(),
        );
        let forwarder = match cluster.map(|settings| {
            crate::cluster::forwarder::Forwarder::for_recorder(
                settings,
                &layout_config,
                &journal_path,
                handle.out_dir(),
            )
        }) {
            Some(Err(e)) => {
                eprintln!("touchmove record: cluster: {e}");
                handle.shutdown().await;
                return ExitCode::FAILURE;
            }
            Some(Ok(f)) => Some(f),
            None => None,
        };
        super::stop_requested().await;
        handle.shutdown().await;
        if let Some(forwarder) = forwarder {
            if !forwarder.drain(Duration::from_secs(3)).await {
                let b = forwarder.backlog();
                eprintln!(
                    "touchmove record: cluster: {} journal entries not forwarded yet; they are \
                     forwarded at the next start",
                    b.entries
                );
            }
            forwarder.stop();
        }
        ExitCode::SUCCESS
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Wrapper {
        #[command(flatten)]
        args: RecordArgs,
    }

    fn args(list: &[&str]) -> RecordArgs {
        Wrapper::parse_from(std::iter::once("record").chain(list.iter().copied())).args
    }

    #[test]
    fn ports_become_numbered_boards() {
        let (c, origins) = event_config(&args(&[
            "--port", "/dev/a", "--port", "/dev/b", "--round", "4",
        ]))
        .unwrap();
        assert_eq!(origins[&2], "--port /dev/b");
        assert_eq!(c.round, 4);
        assert_eq!(c.boards.len(), 2);
        assert_eq!(c.boards[1].number, 2);
        assert_eq!(c.boards[1].source, BoardSource::Port("/dev/b".into()));
    }

    #[test]
    fn one_port_twice_is_refused() {
        let e = event_config(&args(&["--port", "/dev/a", "--port", "/dev/a"])).unwrap_err();
        assert!(e.contains("two boards cannot share a port"), "{e}");
        let e = event_config(&args(&["--time-control", "40/"])).unwrap_err();
        assert!(e.contains("--time-control"), "{e}");
    }
}
