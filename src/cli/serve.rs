//! `touchmove serve`: a broadcast node of an event on several PCs.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use crate::cluster::ClusterSettings;
use crate::cluster::broadcast::Broadcast;
use crate::cluster::settings::ClusterArgs;
use crate::event::EventFile;
use crate::server::Publication;
use crate::server::feed::Feed;

/// Arguments of `touchmove serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The cluster.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// An event file whose [cluster] table says where the cluster is.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The output folder: `round-N/game-K.pgn`, `round-N/games.pgn`, `index.json`.
    #[arg(long, default_value = "touchmove-serve")]
    pub out: PathBuf,
    /// Address of the web server.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Do not start the web server (PGN files only).
    #[arg(long)]
    pub no_server: bool,
    /// Most web connections open at once; more are refused. Default and upper bound: the
    /// open-file limit less 1,024 (at most 50,000).
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
}

/// Runs `touchmove serve`.
pub fn run(args: ServeArgs) -> ExitCode {
    let fail = |message: String| {
        eprintln!("touchmove serve: {message}");
        ExitCode::FAILURE
    };
    let settings = match cluster_settings(&args) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        return fail(format!("cannot create {}: {e}", args.out.display()));
    }
    eprintln!(
        "touchmove serve: {}",
        crate::server::connections::raise_open_file_limit()
    );
    let limits = match super::record::connection_limits(args.max_connections) {
        Ok(l) => l,
        Err(e) => return fail(e),
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the runtime: {e}")),
    };
    runtime.block_on(async move {
        let feed = Arc::new(Feed::new());
        // Rounds broadcast with a delay are the public's in `--out`; the arbiter's copy of
        // their files is in the state directory.
        let public_folder = crate::recorder::layout::OutputFolder::new(&args.out)
            .unsynced()
            .with_spare_dir(
                &crate::recorder::layout::state_dir(&args.out)
                    .join(crate::recorder::SPARE_DIR_NAME),
            );
        let publication =
            Arc::new(Publication::new(feed.clone()).with_public_folder(public_folder));
        let (server, token_follower) = if args.no_server {
            (None, None)
        } else {
            match start_desk(&args, &settings, &publication, limits).await {
                Ok((server, follower)) => (Some(server), Some(follower)),
                Err(e) => return fail(e),
            }
        };
        let status_line = tokio::spawn(super::status_line::run("serve", feed.clone()));
        let broadcast = Broadcast::publish(settings.clone(), &args.out, publication);
        eprintln!(
            "touchmove serve: broadcasting event {:?} from {} into {}{}; Ctrl-C stops",
            settings.event,
            settings.urls.join(","),
            args.out.display(),
            server
                .as_ref()
                .map(|s| format!(", live at http://{}/", s.local_addr()))
                .unwrap_or_default()
        );
        super::stop_requested().await;
        status_line.abort();
        if let Some(follower) = token_follower {
            follower.abort();
        }
        let stats = broadcast.stats();
        broadcast.stop();
        if let Some(server) = server {
            server.shutdown().await;
        }
        eprintln!(
            "touchmove serve: {} messages read, {} entries applied, {} duplicates dropped, {} \
             undecodable skipped",
            stats.messages, stats.applied, stats.duplicates, stats.undecodable
        );
        ExitCode::SUCCESS
    })
}

/// The cluster the command line and the event file name.
fn cluster_settings(args: &ServeArgs) -> Result<ClusterSettings, String> {
    let event = args.config.as_deref().map(EventFile::load).transpose();
    let event = event.map_err(|e| e.to_string())?;
    ClusterSettings::resolve(&args.cluster, event.as_ref(), None)?.ok_or_else(|| {
        "no cluster: give --cluster nats://HOST:PORT (or urls in the event file's [cluster] \
         table)"
            .to_string()
    })
}

/// Starts the web server with the arbiter's desk for every board of the event, and the task
/// that follows the event's arbiter token. Like the recorder's, the token stays out of the
/// published folder; it is the event's, the same on every serve node and checked again by the
/// recorders.
async fn start_desk(
    args: &ServeArgs,
    settings: &ClusterSettings,
    publication: &Arc<Publication>,
    limits: crate::server::ConnectionLimits,
) -> Result<(crate::server::ServerHandle, tokio::task::JoinHandle<()>), String> {
    let state = crate::recorder::layout::state_dir(&args.out);
    crate::recorder::layout::prepare_state_dir(&state)
        .map_err(|e| format!("cannot create {}: {e}", state.display()))?;
    let token = match crate::cluster::desk::event_token(settings).await {
        Ok(token) => token,
        Err(e) => {
            eprintln!(
                "touchmove serve: the event's arbiter token cannot be read ({e}); this node uses \
                 a token of its own, which the recorders refuse: restart it when the cluster \
                 answers to act as arbiter here"
            );
            crate::server::token::generate()
        }
    };
    crate::recorder::channel::write_token(&state, &token)
        .map_err(|e| format!("cannot write the token in {}: {e}", state.display()))?;
    // The token the node accepts now; the event's replaces it when it changes.
    let held = std::sync::Mutex::new(token.clone());
    let (desk, actions) = tokio::sync::mpsc::channel(64);
    tokio::spawn(crate::cluster::desk::route_actions(
        settings.clone(),
        actions,
    ));
    let server =
        crate::server::serve_with_desk(args.listen, publication.clone(), desk, token, limits)
            .await
            .map_err(|e| e.to_string())?;
    eprintln!(
        "touchmove serve: arbiter desk for every board of the event at http://{}/arbiter; the \
         event's token is in {}",
        server.local_addr(),
        state.join(crate::recorder::channel::TOKEN_NAME).display()
    );
    let set_token = server.token_setter();
    let follower = tokio::spawn(crate::cluster::desk::follow_token(
        settings.clone(),
        move |event_token: &str| {
            let mut held = held.lock().unwrap_or_else(|e| e.into_inner());
            if *held == event_token {
                return;
            }
            *held = event_token.to_string();
            set_token(event_token.to_string());
            match crate::recorder::channel::write_token(&state, event_token) {
                Ok(()) => eprintln!(
                    "touchmove serve: the event's arbiter token changed; this node accepts the \
                     new one only"
                ),
                Err(e) => eprintln!(
                    "touchmove serve: the event's arbiter token changed, but cannot be written \
                     in {}: {e}",
                    state.display()
                ),
            }
        },
    ));
    Ok((server, follower))
}
