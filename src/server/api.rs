//! The public JSON API, and what the arbiter's API shares with it.

use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::Public;
use super::feed::Scope;

/// Most events returned by one `/api/events` call.
const MAX_EVENTS_PER_CALL: usize = 10_000;

/// A JSON error body with a status.
pub(super) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, Json(json!({ "error": message.into() }))).into_response()
}

/// Sends the recorder the request `make` builds around a reply channel and waits up to
/// `limit` for its answer. `Err` is the response to send instead: `refused` with the
/// recorder's reason, 503 when the recorder is gone, 504 with `late` when it did not answer.
pub(super) async fn ask_recorder<T>(
    sink: &mpsc::Sender<T>,
    make: impl FnOnce(oneshot::Sender<Result<String, String>>) -> T,
    limit: Duration,
    refused: StatusCode,
    late: &str,
) -> Result<String, Response> {
    let (reply_tx, reply_rx) = oneshot::channel();
    if sink.send(make(reply_tx)).await.is_err() {
        return Err(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the recorder has stopped",
        ));
    }
    match tokio::time::timeout(limit, reply_rx).await {
        Ok(Ok(Ok(message))) => Ok(message),
        Ok(Ok(Err(message))) => Err(error(refused, message)),
        Ok(Err(_)) => Err(error(
            StatusCode::SERVICE_UNAVAILABLE,
            "the recorder dropped the request",
        )),
        Err(_) => Err(error(StatusCode::GATEWAY_TIMEOUT, late)),
    }
}

pub(super) async fn not_found() -> Response {
    error(StatusCode::NOT_FOUND, "no such page")
}

pub(super) async fn rounds(State(state): State<Public>) -> Response {
    Json(state.view.feed().all_rounds()).into_response()
}

pub(super) async fn round(State(state): State<Public>, Path(round): Path<u32>) -> Response {
    match state.view.feed().round(round) {
        Some(view) => Json(view).into_response(),
        None => error(StatusCode::NOT_FOUND, format!("round {round} has no games")),
    }
}

pub(super) async fn game(
    State(state): State<Public>,
    Path((round, board)): Path<(u32, u32)>,
) -> Response {
    match state.view.feed().game(round, board) {
        Some(detail) => Json(detail).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            format!("round {round} has no board {board}"),
        ),
    }
}

/// `/api/status`: the process's links to the outside (see [`super::status`]).
pub(super) async fn status(State(state): State<Public>) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(state.view.status()),
    )
        .into_response()
}

/// `/status`: the same as text, one problem or part per line, for a terminal or a monitor.
pub(super) async fn status_text(State(state): State<Public>) -> Response {
    let report = state.view.status();
    let mut text = report.line().replace(" · ", "\n");
    text.push('\n');
    (
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
        ],
        text,
    )
        .into_response()
}

/// Query of `/api/events`.
#[derive(Debug, Deserialize)]
pub(super) struct EventsQuery {
    #[serde(default)]
    after: u64,
    round: Option<u32>,
    board: Option<u32>,
    limit: Option<usize>,
}

pub(super) async fn events(State(state): State<Public>, Query(q): Query<EventsQuery>) -> Response {
    let scope = match (q.round, q.board) {
        (None, None) => Scope::All,
        (Some(r), None) => Scope::Round(r),
        (Some(r), Some(b)) => Scope::Game(r, b),
        (None, Some(_)) => return error(StatusCode::BAD_REQUEST, "board needs a round"),
    };
    let Some(events) = state.view.feed().events_after(q.after, scope) else {
        return error(
            StatusCode::GONE,
            format!(
                "events after {} are no longer kept; load /api/rounds and continue from its last_id",
                q.after
            ),
        );
    };
    let limit = q.limit.unwrap_or(1000).clamp(1, MAX_EVENTS_PER_CALL);
    let shown = &events[..events.len().min(limit)];
    let body = format!(
        "{{\"complete\":{},\"events\":[{}]}}",
        shown.len() == events.len(),
        shown
            .iter()
            .map(|e| e.json.as_str())
            .collect::<Vec<_>>()
            .join(",")
    );
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}
