//! `touchmove record`: records every board of an event until interrupted.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::driver::probe::{Candidates, probe};
use crate::recorder::{
    BoardConfig, BoardOrigins, BoardSource, EventConfig, Player, Recorder, RecorderError,
    RecorderHandle, RunOptions,
};
use crate::recorder::{pairings, rounds};
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
    /// Pairings to put players on the boards: a FIDE TRF (the round is --round), a PGN of
    /// headers or a CSV.
    #[arg(long)]
    pub pairings: Option<PathBuf>,
    /// The output folder: `tournament.json`, `round-N/game-K.pgn`, `round-N/games.pgn`. The
    /// journal, the arbiter's token and socket go to the state directory `OUT.state` beside
    /// it, which is not to be published.
    #[arg(long, default_value = "touchmove-out")]
    pub out: PathBuf,
    /// The journal (SQLite); default OUT.state/journal.sqlite (OUT/journal.sqlite when a
    /// folder recorded by an older touchmove has one). Restarting with the same journal
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
    /// Most bytes of journal entries held in memory per board while the journal refuses
    /// writes (tests of a long full disk).
    #[arg(long, hide = true, value_name = "BYTES")]
    pub journal_backlog_limit: Option<usize>,
    /// Do not start the web server.
    #[arg(long)]
    pub no_server: bool,
    /// Most web connections open at once; more are refused, so that spectators never take
    /// the file descriptors recording needs. Default and upper bound: the open-file limit
    /// less 1,024 (at most 50,000).
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// Seconds a web client has to send a request's head (default 10; tests of a flood of
    /// idle connections give more, to hold them all at once on a slow machine).
    #[arg(long, hide = true, value_name = "SECONDS")]
    pub header_timeout: Option<u64>,
    /// The lichess server to push to (tests give a local one).
    #[arg(long, hide = true, value_name = "URL")]
    pub lichess_url: Option<String>,
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
    pub cluster: crate::cluster::settings::ClusterArgs,
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
        config.round = crate::recorder::config::check_round(i64::from(round))
            .map_err(|e| format!("--round: {e}"))?;
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
        let number = next_number(&config).map_err(|e| format!("--port {p}: {e}"))?;
        config.boards.push(BoardConfig {
            number,
            source: BoardSource::Port(path),
            white: Player::named("?"),
            black: Player::named("?"),
        });
        origins.insert(number, format!("--port {p}"));
    }
    Ok((config, origins))
}

/// Reads `--pairings` for the event's round (a round the file lacks, or an unreadable file,
/// stops the start: recording the wrong round helps nobody).
fn load_pairings(args: &RecordArgs, round: u32) -> Result<Option<pairings::RoundPairings>, String> {
    args.pairings
        .as_ref()
        .map(|path| pairings::load_round(path, round).map_err(|e| e.to_string()))
        .transpose()
}

/// Puts the pairings on the boards. When the event names no board, every pairing gets a
/// board found by probing ("auto"); otherwise pairings beyond the boards are left out, each
/// with a message naming its line. Returns the messages for the arbiter.
fn place_pairings(config: &mut EventConfig, loaded: &pairings::RoundPairings) -> Vec<String> {
    let mut messages: Vec<String> = loaded.problems.iter().map(|e| e.to_string()).collect();
    if config.boards.is_empty() {
        config.apply_pairings(&loaded.pairings);
        return messages;
    }
    let (placed, extra): (Vec<_>, Vec<_>) = loaded
        .pairings
        .iter()
        .cloned()
        .partition(|p| config.board(p.board).is_some());
    let boards: Vec<String> = config.boards.iter().map(|b| b.number.to_string()).collect();
    for p in &extra {
        messages.push(format!(
            "{}:{}: board: more pairings than boards: board {} ({} – {}) has no board to \
             record on (boards: {}); connect one and add it with --port, or a [[board]] entry, \
             and restart",
            loaded.source.display(),
            p.line,
            p.board,
            p.white.name,
            p.black.name,
            boards.join(", ")
        ));
    }
    config.apply_pairings(&placed);
    messages
}

/// The number after the highest board's, within [`crate::recorder::config::MAX_BOARD`].
fn next_number(config: &EventConfig) -> Result<u32, String> {
    let highest = config.boards.iter().map(|b| b.number).max().unwrap_or(0);
    crate::recorder::config::check_board(i64::from(highest) + 1)
        .map_err(|e| format!("no board number left after board {highest} ({e})"))
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
        // A bus chain's port is never probed: single-board commands would take its boards
        // out of bus mode.
        if config.boards.iter().any(|b| match &b.source {
            BoardSource::Port(p) | BoardSource::Bus { port: p, .. } => *p == port,
            _ => false,
        }) {
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
                    "{} ({} serial {})",
                    port.display(),
                    id.model(),
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
        let number = next_number(config).map_err(|e| format!("--port auto: {e}"))?;
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
    let cluster = match crate::cluster::ClusterSettings::resolve(
        &args.cluster,
        args.config.as_deref(),
        Some(&config.event),
    ) {
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
    let loaded = match load_pairings(&args, config.round) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("touchmove record: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "touchmove record: {}",
        crate::server::connections::raise_open_file_limit()
    );
    runtime.block_on(async move {
        let feed = Arc::new(Feed::new());
        let mut options = RunOptions::new(&args.out, feed.clone());
        options.connection_limits = match connection_limits(args.max_connections) {
            Ok(mut limits) => {
                if let Some(seconds) = args.header_timeout {
                    limits.header_timeout = Duration::from_secs(seconds.max(1));
                }
                limits
            }
            Err(e) => {
                eprintln!("touchmove record: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Some(url) = &args.lichess_url {
            options.lichess_url = url.clone();
        }
        let status_line = tokio::spawn(super::status_line::run("record", feed.clone()));
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
        let sources = config.clone();
        if let Some(loaded) = &loaded {
            for note in &loaded.notes {
                eprintln!("touchmove record: {note}");
            }
            for message in place_pairings(&mut config, loaded) {
                eprintln!("touchmove record: PAIRINGS: {message}");
            }
        }
        for problem in rounds::show_earlier_rounds(&feed, &args.out, config.round) {
            eprintln!("touchmove record: an earlier round's game cannot be shown: {problem}");
        }
        options.candidates = candidates;
        options.journal_limit = args.journal_limit;
        if let Some(limit) = args.journal_backlog_limit {
            options.journal_backlog_limit = limit;
        }
        options.board_origins = origins;
        if let Some(j) = &args.journal {
            options.journal_path = j.clone();
        }
        options.listen = (!args.no_server).then_some(args.listen);
        if let (Some(round), Some(file)) = (&args.lichess_round, &args.lichess_token_file) {
            options.lichess = Some((round.clone(), file.clone()));
        }
        let (next_tx, mut next_rx) = tokio::sync::mpsc::channel(4);
        options.next_round = Some(next_tx);
        let journal_path = options.journal_path.clone();
        let mut handle = match start(&config, &options).await {
            Some(h) => h,
            None => return ExitCode::FAILURE,
        };
        let mut forwarder = match start_forwarder(cluster.as_ref(), &config, &journal_path, &handle)
        {
            Ok(f) => f,
            Err(e) => {
                eprintln!("touchmove record: cluster: {e}");
                handle.shutdown().await;
                return ExitCode::FAILURE;
            }
        };
        show_backlog(&feed, forwarder.as_ref());
        loop {
            let reply = tokio::select! {
                _ = super::stop_requested() => break,
                Some(reply) = next_rx.recv() => reply,
            };
            let next = config.round + 1;
            let (next_config, messages) = match next_round_config(&args, &sources, next) {
                Ok(n) => n,
                Err(e) => {
                    eprintln!("touchmove record: round {next} cannot start: {e}");
                    let _ = reply.send(Err(e));
                    continue;
                }
            };
            let _ = reply.send(Ok(format!(
                "round {next} starts on {} boards; round {} is kept in {}",
                next_config.boards.len(),
                config.round,
                args.out.display()
            )));
            for message in messages {
                eprintln!("touchmove record: {message}");
            }
            options.arbiter_token = std::fs::read_to_string(handle.token_path()).ok();
            if options.lichess.take().is_some() {
                eprintln!(
                    "touchmove record: the lichess push of round {} stops; restart with the next \
                     round's --lichess-round to push round {next}",
                    config.round
                );
            }
            handle.shutdown().await;
            if let Some(f) = forwarder.take() {
                f.stop();
            }
            config = next_config;
            handle = match start(&config, &options).await {
                Some(h) => h,
                None => return ExitCode::FAILURE,
            };
            forwarder = start_forwarder(cluster.as_ref(), &config, &journal_path, &handle)
                .unwrap_or_else(|e| {
                    eprintln!("touchmove record: cluster: {e}");
                    None
                });
            show_backlog(&feed, forwarder.as_ref());
        }
        // Stopping clears the links; the line would say "all well".
        status_line.abort();
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

/// The web server's limits for `--max-connections`: at most what the open-file limit allows.
pub(crate) fn connection_limits(
    max_connections: Option<usize>,
) -> Result<crate::server::ConnectionLimits, String> {
    let mut limits = crate::server::ConnectionLimits::default();
    if let Some(asked) = max_connections {
        if asked == 0 {
            return Err(
                "--max-connections 0: the web server needs at least one connection; \
                        use --no-server for none"
                    .to_string(),
            );
        }
        if asked > limits.max_open {
            return Err(format!(
                "--max-connections {asked}: the open-file limit allows at most {} (it keeps {} \
                 descriptors for recording); raise it (ulimit -n) or ask for fewer",
                limits.max_open,
                crate::server::connections::RESERVED_DESCRIPTORS
            ));
        }
        limits.max_open = asked;
    }
    Ok(limits)
}

/// Shows `forwarder`'s backlog (or no cluster) in the status page and line.
fn show_backlog(feed: &Feed, forwarder: Option<&crate::cluster::forwarder::Forwarder>) {
    feed.status().set_cluster(forwarder.map(|f| {
        let watch = f.watch();
        Box::new(move || {
            let b = watch.backlog();
            crate::server::status::ClusterBacklog {
                entries: b.entries,
                oldest_ms: b.oldest_ms,
                connected: b.connected,
                acked: b.acked,
            }
        }) as crate::server::status::BacklogSource
    }));
}

/// Starts the recorder on `config` and says where it records; `None` (after saying why) when
/// it cannot start. The round that ended has let go of the journal and the folder when its
/// shutdown returned, so the next round starts at once.
async fn start(config: &EventConfig, options: &RunOptions) -> Option<RecorderHandle> {
    announce(
        config,
        Recorder::start(config.clone(), options.clone()).await,
    )
}

/// Starts forwarding the recorder's journal to the event's cluster, when it has one; the
/// forwarder resumes from its cursor in the state directory.
fn start_forwarder(
    cluster: Option<&crate::cluster::ClusterSettings>,
    config: &EventConfig,
    journal_path: &std::path::Path,
    handle: &RecorderHandle,
) -> Result<Option<crate::cluster::forwarder::Forwarder>, String> {
    cluster
        .map(|settings| {
            crate::cluster::forwarder::Forwarder::for_recorder(
                settings.clone(),
                config,
                journal_path,
                handle.state_dir(),
                Some(handle.arbiter_sink()),
                Some(handle.journal_committed()),
            )
        })
        .transpose()
}

/// Says where a started recorder records, or why it did not start.
fn announce(
    config: &EventConfig,
    started: Result<RecorderHandle, RecorderError>,
) -> Option<RecorderHandle> {
    let boards: Vec<String> = config
        .boards
        .iter()
        .map(|b| format!("board {} on {}", b.number, b.source))
        .collect();
    let handle = match started {
        Ok(h) => h,
        Err(e) => {
            eprintln!("touchmove record: {e}");
            return None;
        }
    };
    eprintln!(
        "touchmove record: round {}: recording {} into {}{}; arbiter: `touchmove arbiter --out {} …`; Ctrl-C stops",
        config.round,
        boards.join(", "),
        handle.out_dir().display(),
        handle
            .server_addr()
            .map(|a| format!(", live at http://{a}/"))
            .unwrap_or_default(),
        handle.out_dir().display(),
    );
    Some(handle)
}

/// The event of round `round` on the same boards as `sources` (the boards before any
/// pairings): players from `--pairings` read again for that round (the pairing program has
/// written the new round into the file), else unknown. Returns the messages to show.
fn next_round_config(
    args: &RecordArgs,
    sources: &EventConfig,
    round: u32,
) -> Result<(EventConfig, Vec<String>), String> {
    let mut next = sources.clone();
    next.round = round;
    for b in &mut next.boards {
        b.white = Player::named("?");
        b.black = Player::named("?");
    }
    let mut messages = Vec::new();
    if let Some(loaded) = load_pairings(args, round)? {
        messages.extend(loaded.notes.iter().cloned());
        messages.extend(
            place_pairings(&mut next, &loaded)
                .into_iter()
                .map(|m| format!("PAIRINGS: {m}")),
        );
    }
    if next.boards.is_empty() {
        return Err("no boards for the next round".to_string());
    }
    Ok((next, messages))
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
