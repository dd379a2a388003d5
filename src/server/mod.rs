//! The HTTP server: live events (SSE), the JSON API, PGN at stable URLs, the spectator and
//! arbiter pages, and the arbiter API behind a bearer token.
//!
//! ```text
//! recorder ──► Publication ──► live Feed ──► arbiter page, arbiter API (Bearer token)
//!                   └──(delay line, when a round has a delay)──► public Feed
//!                         ──► spectators: pages, SSE, JSON API, PGN URLs
//! arbiter page ──POST /api/arbiter/action (Bearer token)──► ArbiterSink ──► recorder
//! ```
//!
//! The public routes hold a [`PublicView`] and the arbiter's a live [`Feed`]: while no round
//! has a transmission delay both are the same feed; with one, the public sees each change
//! that much later ([`publication`]).
//!
//! Routes:
//! - `GET /`, `/round/N`: spectator grid; `/round/N/game/K`: game view; `/arbiter`.
//! - `GET /api/rounds`, `/api/round/N`, `/api/round/N/game/K`: JSON state, without alerts
//!   (an `alert` event names only its kind): spectators see decisions, not suspicions.
//! - `GET /api/round/N/alerts`: the arbiter's queue, each alert with its state, the clocks
//!   and the time of day when it was raised (bearer token).
//! - `GET /api/events?after=ID[&round=N[&board=K]]`: the logged events after an id.
//! - `GET /api/stream`, `/api/round/N/stream`, `/api/round/N/game/K/stream`: SSE; a new
//!   client gets a `snapshot` event and then deltas, a client sending `Last-Event-ID` gets
//!   exactly the events it missed.
//! - `GET /round/N/games.pgn`, `/round/N/game/K.pgn`: PGN with `ETag`/`Last-Modified`.
//! - `GET /api/status`, `/status`: the process's links to the outside — lichess push,
//!   cluster backlog, web connections (open, refused, timed out) — as JSON and as text.
//! - `GET /api/current`: the round being recorded and the rounds there are (pages poll it to
//!   follow a new round).
//! - `GET /api/arbiter/session`, `POST /api/arbiter/action`, `POST /api/arbiter/next-round`,
//!   and the live state the desk shows: `GET /api/arbiter/current`,
//!   `/api/arbiter/round/N/stream` (SSE), `/api/arbiter/round/N/game/K`; the transmission
//!   delay: `GET` and `POST /api/arbiter/broadcast-delay`: arbiter API,
//!   `Authorization: Bearer TOKEN` only (no cookies, so a cross-site page cannot use it).

pub mod connections;
pub mod delay;
pub mod feed;
pub mod lichess;
pub mod publication;
pub mod status;
pub mod token;

mod api;
mod assets;
mod desk;
mod http_date;
mod next_round;
mod pgn;
mod stream;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, header};
use axum::response::Response;
use axum::routing::{get, post};
pub use connections::{ConnectionCounts, ConnectionLimits};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::record::arbiter::ArbiterRequest;
pub use feed::{Feed, GameInfo};
pub use publication::{PublicView, Publication};

/// Where the server sends arbiter actions: the recorder applies and journals each one, notes
/// an accepted one in the feed ([`Feed::note_arbiter_action`]) and answers with a message for
/// the arbiter or an error.
pub type ArbiterSink = mpsc::Sender<(ArbiterRequest, oneshot::Sender<Result<String, String>>)>;

/// An arbiter action as a broadcast node forwards it: with the round the web API chose and the
/// token the arbiter presented, which the recorder owning the board checks again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoutedAction {
    /// The round of the board.
    pub round: u32,
    /// The bearer token presented (already checked by this server).
    pub token: String,
    /// The action.
    pub request: ArbiterRequest,
}

/// Where a broadcast node's server sends arbiter actions (to the cluster); answered like
/// [`ArbiterSink`].
pub type DeskSink = mpsc::Sender<(RoutedAction, oneshot::Sender<Result<String, String>>)>;

/// The arbiter's "next round" as the server passes it on.
#[derive(Debug)]
pub struct NextRoundAsk {
    /// The round the arbiter's page showed being recorded: the recorder refuses when another
    /// one is (a request sent twice, or from a page that had not followed the event yet).
    /// `None` closes whichever round is open.
    pub closing: Option<u32>,
    /// Where the recorder answers with a message once the next round starts, or why it cannot.
    pub reply: oneshot::Sender<Result<String, String>>,
}

impl NextRoundAsk {
    /// Where to answer once the next round starts, when this request may close `open`, the
    /// round open now; otherwise the request is answered with the reason, which is returned.
    pub fn accept(self, open: u32) -> Result<oneshot::Sender<Result<String, String>>, String> {
        match self.closing.filter(|&asked| asked != open) {
            None => Ok(self.reply),
            Some(asked) => {
                let why = format!(
                    "round {asked} is no longer being recorded (round {open} is): nothing was \
                     started; to close round {open}, ask from a page that shows it"
                );
                let _ = self.reply.send(Err(why.clone()));
                Err(why)
            }
        }
    }
}

/// Where the server sends the arbiter's "next round".
pub type NextRoundSink = mpsc::Sender<NextRoundAsk>;

/// Largest request body accepted (arbiter actions are small JSON objects).
const MAX_BODY_BYTES: usize = 64 * 1024;

/// How long shutdown waits for open connections to close.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The listening socket could not be opened.
    #[error(
        "cannot listen on {addr}: {source} (is another touchmove or web server using it? \
         choose another address with --listen)"
    )]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the OS said.
        source: io::Error,
    },
    /// The arbiter token is empty.
    #[error("the arbiter token is empty; generate one with server::token::generate")]
    EmptyToken,
}

/// What the public routes reach: the public feed only.
#[derive(Debug)]
struct PublicState {
    view: PublicView,
    shutdown: watch::Receiver<bool>,
    connections: Arc<connections::Connections>,
}

/// What the arbiter's routes reach: the live feed and the recorder.
#[derive(Debug)]
struct DeskState {
    publication: Arc<Publication>,
    arbiter: Option<ArbiterSink>,
    next_round: Option<NextRoundSink>,
    desk: Option<DeskSink>,
    /// Replaced while running when the event's token changes ([`ServerHandle::token_setter`]).
    token: std::sync::RwLock<String>,
    shutdown: watch::Receiver<bool>,
    connections: Arc<connections::Connections>,
}

impl DeskState {
    /// The arbiter's bearer token now.
    fn token(&self) -> String {
        self.token.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// The arbiter's live feed.
    fn live(&self) -> &Arc<Feed> {
        self.publication.live()
    }
}

type Public = Arc<PublicState>;
type Desk = Arc<DeskState>;

/// A running server. Dropping it leaves the server running; call
/// [`shutdown`](ServerHandle::shutdown) to stop it.
#[derive(Debug)]
pub struct ServerHandle {
    local_addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: JoinHandle<io::Result<()>>,
    state: Desk,
}

impl ServerHandle {
    /// A function that makes the server accept its argument as the arbiter's bearer token
    /// from then on, instead of the one before (an empty token is ignored).
    pub fn token_setter(&self) -> impl Fn(String) + Send + Sync + 'static {
        let state = Arc::clone(&self.state);
        move |token: String| {
            if !token.trim().is_empty() {
                *state.token.write().unwrap_or_else(|e| e.into_inner()) = token;
            }
        }
    }

    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Stops accepting connections, ends every event stream and waits (a few seconds at
    /// most) for open requests to finish.
    pub async fn shutdown(self) {
        let _ = self.stop.send(true);
        let mut task = self.task;
        if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
            .await
            .is_err()
        {
            task.abort();
        }
    }
}

/// Starts the server on `addr` (port 0 picks a free port) serving `feed`, forwarding arbiter
/// actions to `arbiter` (without a sink the arbiter API answers 503), and accepting `token`
/// as the arbiter's bearer token; its connections within the limits the process's file limit
/// allows ([`ConnectionLimits::default`]). The public and the arbiter see the same feed.
pub async fn serve(
    addr: SocketAddr,
    feed: Arc<Feed>,
    arbiter: Option<ArbiterSink>,
    token: String,
) -> Result<ServerHandle, ServerError> {
    serve_with_next_round(
        addr,
        Arc::new(Publication::new(feed)),
        arbiter,
        None,
        token,
        ConnectionLimits::default(),
    )
    .await
}

/// Like [`serve`] for what `publication` gives the arbiter and the public, also passing the
/// arbiter's "next round" to `next_round` (without it, `POST /api/arbiter/next-round` answers
/// 503 with what to do instead), with `limits` on its connections. The connection counts are
/// shown in the live feed's [`status`](Feed::status).
pub async fn serve_with_next_round(
    addr: SocketAddr,
    publication: Arc<Publication>,
    arbiter: Option<ArbiterSink>,
    next_round: Option<NextRoundSink>,
    token: String,
    limits: ConnectionLimits,
) -> Result<ServerHandle, ServerError> {
    serve_routes(addr, publication, arbiter, next_round, None, token, limits).await
}

/// Like [`serve`] on a broadcast node: arbiter actions go to `desk`, with their round and the
/// token presented, to reach the recorder that owns the board over the cluster; `limits` on
/// its connections.
pub async fn serve_with_desk(
    addr: SocketAddr,
    publication: Arc<Publication>,
    desk: DeskSink,
    token: String,
    limits: ConnectionLimits,
) -> Result<ServerHandle, ServerError> {
    serve_routes(addr, publication, None, None, Some(desk), token, limits).await
}

async fn serve_routes(
    addr: SocketAddr,
    publication: Arc<Publication>,
    arbiter: Option<ArbiterSink>,
    next_round: Option<NextRoundSink>,
    desk: Option<DeskSink>,
    token: String,
    limits: ConnectionLimits,
) -> Result<ServerHandle, ServerError> {
    if token.trim().is_empty() {
        return Err(ServerError::EmptyToken);
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| ServerError::Bind { addr, source })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| ServerError::Bind { addr, source })?;
    let (stop, shutdown) = watch::channel(false);
    let connections = Arc::new(connections::Connections::new(limits));
    publication
        .live()
        .status()
        .set_web(Some(Arc::clone(&connections)));
    let public = Arc::new(PublicState {
        view: publication.public_view(),
        shutdown: shutdown.clone(),
        connections: Arc::clone(&connections),
    });
    let state = Arc::new(DeskState {
        publication,
        arbiter,
        next_round,
        desk,
        token: std::sync::RwLock::new(token),
        shutdown: shutdown.clone(),
        connections: Arc::clone(&connections),
    });
    let app = router(public, Arc::clone(&state));
    let task = tokio::spawn(connections::serve(listener, app, connections, shutdown));
    Ok(ServerHandle {
        local_addr,
        stop,
        task,
        state,
    })
}

fn router(public: Public, desk: Desk) -> Router {
    let spectators = Router::new()
        .route("/", get(assets::spectator_page))
        .route("/round/{round}", get(assets::spectator_page))
        .route("/round/{round}/game/{board}", get(pgn::game_page_or_pgn))
        .route("/round/{round}/games.pgn", get(pgn::round_pgn))
        .route("/arbiter", get(assets::arbiter_page))
        .route("/assets/{name}", get(assets::asset))
        .route("/api/rounds", get(api::rounds))
        .route("/api/round/{round}", get(api::round))
        .route("/api/round/{round}/game/{board}", get(api::game))
        .route("/api/events", get(api::events))
        .route("/api/stream", get(stream::all))
        .route("/api/round/{round}/stream", get(stream::round))
        .route("/api/round/{round}/game/{board}/stream", get(stream::game))
        .route("/api/current", get(next_round::current))
        .route("/api/status", get(api::status))
        .route("/status", get(api::status_text))
        .fallback(api::not_found)
        .with_state(public);
    let arbiter = Router::new()
        .route("/api/round/{round}/alerts", get(desk::alerts))
        .route("/api/arbiter/session", get(desk::arbiter_session))
        .route("/api/arbiter/action", post(desk::arbiter_action))
        .route("/api/arbiter/next-round", post(next_round::next_round))
        .route("/api/arbiter/current", get(desk::current))
        .route("/api/arbiter/round/{round}/stream", get(desk::round_stream))
        .route("/api/arbiter/round/{round}/game/{board}", get(desk::game))
        .route(
            "/api/arbiter/broadcast-delay",
            get(desk::broadcast_delay).post(desk::choose_broadcast_delay),
        )
        .with_state(desk);
    spectators
        .merge(arbiter)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::map_response(security_headers))
}

/// Headers on every response: the pages load only our own embedded assets and cannot be
/// framed, so injected markup could neither run scripts nor be clickjacked.
async fn security_headers(mut response: Response) -> Response {
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; \
             connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
        ),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
