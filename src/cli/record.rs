//! `touchmove record`: records every board of an event until interrupted.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::ClusterSettings;
use crate::cluster::settings::ClusterArgs;
use crate::driver::probe::Candidates;
use crate::event::EventFile;
use crate::event::spec::EventSpec;
use crate::event::trf::Encoding;
use crate::recorder::RunOptions;
use crate::recorder::event_run::EventRun;
use crate::server::feed::Feed;

/// Arguments of `touchmove record`.
#[derive(Debug, clap::Args)]
pub struct RecordArgs {
    /// The event file (TOML): event, site, round, time control, boards and players.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A board's serial port (repeat for several boards, numbered in order), or `auto` for
    /// every DGT board found. A board of another kind is `KIND:PATH`, e.g.
    /// `millennium:/dev/ttyUSB0` (kinds: dgt, millennium, certabo, sentio, chessnut,
    /// pegasus); a Bluetooth LE board (feature `ble`) is `KIND:ble:ADDRESS-OR-NAME`, e.g.
    /// `pegasus:ble:C4:DE:E2:01:02:0F`.
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
    // Its own id: the flattened cluster arguments have an `event` (`--cluster-event`) too,
    // and clap refuses two arguments of one id (a panic in debug builds).
    #[arg(long = "event", id = "event_name", value_name = "NAME")]
    pub event: Option<String>,
    /// The developer key DGT Pegasus boards are opened with, overriding the event file's
    /// `pegasus_key`: the path of a file holding its six bytes in hex (or the bytes
    /// themselves, which other users of the machine can then read in the process list).
    #[arg(long, value_name = "KEY_OR_FILE")]
    pub pegasus_key: Option<String>,
    /// The encoding of a TRF of pairings when it is not UTF-8, over the event file's
    /// `encoding`: windows-1252 (Western Europe) or windows-1250 (Central Europe). Default:
    /// guessed from the file, and said.
    #[arg(long, value_name = "ENCODING")]
    pub encoding: Option<Encoding>,
    /// Transmission delay of the public broadcast, over the event file's `broadcast_delay`:
    /// spectators' pages, SSE, PGN URLs, the PGN folder and the lichess push show the games
    /// this much later (e.g. `15m`, `90s`, `1h30m`); the arbiter's desk stays live. A round
    /// keeps the delay it opened with.
    #[arg(long, value_name = "DELAY", value_parser = crate::event::config::parse_broadcast_delay)]
    pub broadcast_delay: Option<Duration>,
    /// The event's cluster, when its boards are recorded on several PCs.
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

impl RecordArgs {
    /// The event and round the command line describes.
    pub fn event_spec(&self) -> EventSpec {
        EventSpec {
            file: self.config.clone(),
            event: self.event.clone(),
            round: self.round,
            time_control: self.time_control.clone(),
            ports: self
                .port
                .iter()
                .filter(|p| *p != "auto")
                .map(PathBuf::from)
                .collect(),
            detect_boards: self.port.iter().any(|p| p == "auto"),
            pairings: self.pairings.clone(),
            pegasus_key: self.pegasus_key.clone(),
            encoding: self.encoding,
            ..EventSpec::default()
        }
    }

    /// The recorder's options the command line gives.
    fn run_options(&self, feed: Arc<Feed>) -> Result<RunOptions, String> {
        let mut options = RunOptions::new(&self.out, feed);
        options.connection_limits = connection_limits(self.max_connections)?;
        if let Some(seconds) = self.header_timeout {
            options.connection_limits.header_timeout = Duration::from_secs(seconds.max(1));
        }
        if let Some(url) = &self.lichess_url {
            options.lichess_url = url.clone();
        }
        if !self.probe.is_empty() {
            options.candidates = Candidates::Patterns(self.probe.clone());
        }
        options.journal_limit = self.journal_limit;
        if let Some(limit) = self.journal_backlog_limit {
            options.journal_backlog_limit = limit;
        }
        if let Some(j) = &self.journal {
            options.journal_path = j.clone();
        }
        options.listen = (!self.no_server).then_some(self.listen);
        options.broadcast_delay = self.broadcast_delay;
        if let (Some(round), Some(file)) = (&self.lichess_round, &self.lichess_token_file) {
            options.lichess = Some((round.clone(), file.clone()));
        }
        Ok(options)
    }
}

/// The event file, read once, and the cluster it and the command line name.
fn read_event(
    spec: &EventSpec,
    cluster: &ClusterArgs,
) -> Result<(EventFile, Option<ClusterSettings>), String> {
    let event = spec.read()?;
    let settings = ClusterSettings::resolve(cluster, Some(&event), Some(&event.config.event))?;
    Ok((event, settings))
}

/// Runs `touchmove record`.
pub fn run(args: RecordArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("touchmove record: {message}");
        ExitCode::FAILURE
    };
    let spec = args.event_spec();
    let (event, cluster) = match read_event(&spec, &args.cluster) {
        Ok(read) => read,
        Err(e) => return fail(e),
    };
    let feed = Arc::new(Feed::new());
    // Raised before the options are made: the connection cap follows the file limit.
    eprintln!(
        "touchmove record: {}",
        crate::server::connections::raise_open_file_limit()
    );
    let options = match args.run_options(feed.clone()) {
        Ok(o) => o,
        Err(e) => return fail(e),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    runtime.block_on(async move {
        let status_line = tokio::spawn(super::status_line::run("record", feed.clone()));
        let mut run = match EventRun::open(spec, event, options).await {
            Ok(run) => run,
            Err(e) => return fail(e),
        };
        let mut forwarder = match start_forwarder(cluster.as_ref(), &run) {
            Ok(f) => f,
            Err(e) => {
                run.close().await;
                return fail(format!("cluster: {e}"));
            }
        };
        show_backlog(&feed, forwarder.as_ref());
        loop {
            let reply = tokio::select! {
                _ = super::stop_requested() => break,
                Some(reply) = run.next_round_asked() => reply,
            };
            if let Some(f) = forwarder.take() {
                f.stop();
            }
            run = match run.open_next_round(Some(reply)).await {
                Ok(run) => run,
                Err(e) => return fail(e),
            };
            forwarder = start_forwarder(cluster.as_ref(), &run).unwrap_or_else(|e| {
                eprintln!("touchmove record: cluster: {e}");
                None
            });
            show_backlog(&feed, forwarder.as_ref());
        }
        // Stopping clears the links; the line would say "all well".
        status_line.abort();
        run.close().await;
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

/// Starts forwarding the recorder's journal to the event's cluster, when it has one; the
/// forwarder resumes from its cursor in the state directory.
fn start_forwarder(
    cluster: Option<&crate::cluster::ClusterSettings>,
    run: &EventRun,
) -> Result<Option<crate::cluster::forwarder::Forwarder>, String> {
    let handle = run.handle();
    cluster
        .map(|settings| {
            crate::cluster::forwarder::Forwarder::for_recorder(
                settings.clone(),
                run.config(),
                handle.journal_path(),
                handle.state_dir(),
                Some(handle.arbiter_sink()),
                Some(handle.journal_committed()),
            )
        })
        .transpose()
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

    #[test]
    fn the_command_line_becomes_one_description_of_the_event() {
        let args = Wrapper::parse_from([
            "record",
            "--port",
            "/dev/a",
            "--port",
            "auto",
            "--round",
            "4",
            "--pairings",
            "p.trf",
        ])
        .args;
        let spec = args.event_spec();
        assert_eq!(spec.ports, vec![PathBuf::from("/dev/a")]);
        assert!(spec.detect_boards);
        assert_eq!(spec.round, Some(4));
        assert_eq!(spec.pairings, Some(PathBuf::from("p.trf")));
    }
}
