//! Server-Sent Events: a snapshot or the missed events first, then every new event.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Response};
use tokio::sync::broadcast::Receiver;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;

use super::Public;
use super::connections::Connections;
use super::feed::{Feed, FeedEvent, Scope};

/// A comment line sent when nothing happened for a while, so proxies and browsers keep the
/// connection open and a dead client is noticed.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Tells `EventSource` how soon to reconnect after the connection drops.
const RETRY_FRAME: &[u8] = b"retry: 2000\n\n";

pub(super) async fn all(State(state): State<Public>, headers: HeaderMap) -> Response {
    public_stream(&state, Scope::All, &headers)
}

pub(super) async fn round(
    State(state): State<Public>,
    Path(round): Path<u32>,
    headers: HeaderMap,
) -> Response {
    public_stream(&state, Scope::Round(round), &headers)
}

pub(super) async fn game(
    State(state): State<Public>,
    Path((round, board)): Path<(u32, u32)>,
    headers: HeaderMap,
) -> Response {
    public_stream(&state, Scope::Game(round, board), &headers)
}

/// The event id a reconnecting `EventSource` sends; anything unparsable counts as none
/// (the client then gets a snapshot, which is always correct).
fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("last-event-id")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

struct Subscriber {
    feed: Arc<Feed>,
    scope: Scope,
    pending: VecDeque<Bytes>,
    last_id: u64,
    live: Receiver<Arc<FeedEvent>>,
    shutdown: watch::Receiver<bool>,
    /// Changes when the feed is no longer the one to read (the public's replaced).
    replaced: Option<watch::Receiver<u64>>,
    keep_alive: tokio::time::Interval,
    /// Held while the stream is open.
    _permit: super::connections::StreamPermit,
}

impl Subscriber {
    /// The next frame to write, or `None` when the stream ends (server shutting down).
    async fn next_frame(&mut self) -> Option<Bytes> {
        loop {
            if let Some(frame) = self.pending.pop_front() {
                return Some(frame);
            }
            if *self.shutdown.borrow() {
                return None;
            }
            // One long-lived timer per subscriber: cheaper than a new timeout per event.
            let received = tokio::select! {
                _ = self.shutdown.changed() => return None,
                _ = replaced(&mut self.replaced) => return None,
                _ = self.keep_alive.tick() => None,
                received = self.live.recv() => Some(received),
            };
            match received {
                None => return Some(Bytes::from_static(b": keep-alive\n\n")),
                Some(Ok(event)) => {
                    if event.id > self.last_id && self.scope.contains(event.round, event.board) {
                        self.last_id = event.id;
                        return Some(event.frame.clone());
                    }
                }
                Some(Err(RecvError::Lagged(_))) => {
                    let (frames, last_id) = self.feed.catch_up(self.scope, self.last_id);
                    self.pending.extend(frames);
                    self.last_id = last_id;
                }
                Some(Err(RecvError::Closed)) => return None,
            }
        }
    }
}

/// Waits until the feed read is replaced (forever without one to watch).
async fn replaced(watch: &mut Option<watch::Receiver<u64>>) {
    match watch {
        Some(watch) => {
            if watch.changed().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
        None => std::future::pending().await,
    }
}

/// A public event stream: on the public feed, ending when it is replaced (the client comes
/// back to the new one).
fn public_stream(state: &Public, scope: Scope, headers: &HeaderMap) -> Response {
    let replaced = state.view.replaced();
    respond(
        state.view.feed(),
        Some(replaced),
        &state.shutdown,
        &state.connections,
        scope,
        headers,
    )
}

/// An event stream of `feed` within `scope`, until the server stops or `replaced` changes.
pub(super) fn respond(
    feed: Arc<Feed>,
    replaced: Option<watch::Receiver<u64>>,
    shutdown: &watch::Receiver<bool>,
    connections: &Arc<Connections>,
    scope: Scope,
    headers: &HeaderMap,
) -> Response {
    let Some(permit) = connections.stream_permit() else {
        let mut refused = super::api::error(
            axum::http::StatusCode::SERVICE_UNAVAILABLE,
            "too many spectators' event streams; try again in a moment",
        );
        refused
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("10"));
        return refused;
    };
    let subscription = feed.subscribe(scope, last_event_id(headers));
    let mut pending = VecDeque::with_capacity(subscription.initial.len() + 1);
    pending.push_back(Bytes::from_static(RETRY_FRAME));
    pending.extend(subscription.initial);
    let subscriber = Subscriber {
        feed,
        scope,
        pending,
        last_id: subscription.last_id,
        live: subscription.live,
        shutdown: shutdown.clone(),
        replaced,
        keep_alive: tokio::time::interval_at(tokio::time::Instant::now() + KEEP_ALIVE, KEEP_ALIVE),
        _permit: permit,
    };
    let frames = futures_util::stream::unfold(subscriber, |mut s| async move {
        let frame = s.next_frame().await?;
        Some((Ok::<Bytes, Infallible>(frame), s))
    });
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
            (header::HeaderName::from_static("x-accel-buffering"), "no"),
        ],
        Body::from_stream(frames),
    )
        .into_response()
}
