//! The JSON API and the arbiter API.

use std::time::Duration;

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};

use super::Shared;
use super::feed::Scope;
use crate::record::arbiter::{ArbiterAction, ArbiterRequest};

/// Most events returned by one `/api/events` call.
const MAX_EVENTS_PER_CALL: usize = 10_000;

/// How long the arbiter API waits for the recorder to apply an action.
const ARBITER_REPLY_TIMEOUT: Duration = Duration::from_secs(10);

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

pub(super) async fn rounds(State(state): State<Shared>) -> Response {
    Json(state.feed.all_rounds()).into_response()
}

pub(super) async fn round(State(state): State<Shared>, Path(round): Path<u32>) -> Response {
    match state.feed.round(round) {
        Some(view) => Json(view).into_response(),
        None => error(StatusCode::NOT_FOUND, format!("round {round} has no games")),
    }
}

pub(super) async fn game(
    State(state): State<Shared>,
    Path((round, board)): Path<(u32, u32)>,
) -> Response {
    match state.feed.game(round, board) {
        Some(detail) => Json(detail).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            format!("round {round} has no board {board}"),
        ),
    }
}

/// `/api/status`: the process's links to the outside (see [`super::status`]).
pub(super) async fn status(State(state): State<Shared>) -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(state.feed.status().report()),
    )
        .into_response()
}

/// `/status`: the same as text, one problem or part per line, for a terminal or a monitor.
pub(super) async fn status_text(State(state): State<Shared>) -> Response {
    let report = state.feed.status().report();
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

/// `/api/round/N/alerts`: the arbiter's queue, behind the token (spectators see decisions,
/// never the suspicions before them).
pub(super) async fn alerts(
    State(state): State<Shared>,
    Path(round): Path<u32>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(state.feed.alerts(round)),
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

pub(super) async fn events(State(state): State<Shared>, Query(q): Query<EventsQuery>) -> Response {
    let scope = match (q.round, q.board) {
        (None, None) => Scope::All,
        (Some(r), None) => Scope::Round(r),
        (Some(r), Some(b)) => Scope::Game(r, b),
        (None, Some(_)) => return error(StatusCode::BAD_REQUEST, "board needs a round"),
    };
    let Some(events) = state.feed.events_after(q.after, scope) else {
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

/// The token of the `Authorization: Bearer` header, if any.
fn presented_token(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
}

/// Checks the `Authorization: Bearer` header; `Some` is the refusal to send.
pub(super) fn refusal(state: &Shared, headers: &HeaderMap) -> Option<Response> {
    match presented_token(headers) {
        Some(token) if super::token::matches(token, &state.token()) => None,
        Some(_) => Some(error(StatusCode::FORBIDDEN, "wrong arbiter token")),
        None => Some(
            (
                StatusCode::UNAUTHORIZED,
                [(header::WWW_AUTHENTICATE, "Bearer")],
                Json(json!({"error": "arbiter token required (Authorization: Bearer TOKEN)"})),
            )
                .into_response(),
        ),
    }
}

pub(super) async fn arbiter_session(State(state): State<Shared>, headers: HeaderMap) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    let controls = state.arbiter.is_some() || state.desk.is_some();
    Json(json!({ "ok": true, "controls": controls })).into_response()
}

/// Body of `POST /api/arbiter/action`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ActionBody {
    /// Round of the board; the latest round with that board when absent.
    round: Option<u32>,
    board: u32,
    action: ArbiterAction,
    /// Name of the arbiter, for the journal.
    who: Option<String>,
    /// The client's key for this action, the same on a retry (at most 100 characters).
    key: Option<String>,
}

fn check_action(action: &ArbiterAction) -> Result<(), String> {
    match action {
        ArbiterAction::SetResult { result, .. }
            if !matches!(result.as_str(), "1-0" | "0-1" | "1/2-1/2" | "*") =>
        {
            Err(format!(
                "result {result:?} is not one of 1-0, 0-1, 1/2-1/2, *"
            ))
        }
        _ => Ok(()),
    }
}

pub(super) async fn arbiter_action(
    State(state): State<Shared>,
    headers: HeaderMap,
    body: Result<Json<ActionBody>, JsonRejection>,
) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    let Json(body) = match body {
        Ok(body) => body,
        Err(rejection) => return error(rejection.status(), rejection.body_text()),
    };
    if let Err(message) = check_action(&body.action) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, message);
    }
    let round = body.round.or_else(|| {
        state
            .feed
            .rounds()
            .into_iter()
            .rev()
            .find(|r| state.feed.game(*r, body.board).is_some())
    });
    let Some(round) = round.filter(|r| state.feed.game(*r, body.board).is_some()) else {
        return error(
            StatusCode::NOT_FOUND,
            format!("no game on board {}", body.board),
        );
    };
    let who = body.who.filter(|w| !w.trim().is_empty()).map_or_else(
        || "web arbiter".to_string(),
        |w| w.chars().take(80).collect(),
    );
    let request = ArbiterRequest {
        who,
        board: body.board,
        action: body.action.clone(),
        key: body
            .key
            .filter(|k| !k.trim().is_empty())
            .map(|k| k.chars().take(100).collect()),
    };
    let late = "the recorder did not answer within 10 s; the action may still be applied";
    let answer = match (state.arbiter.as_ref(), state.desk.as_ref()) {
        (Some(sink), _) => {
            ask_recorder(
                sink,
                |reply| (request, reply),
                ARBITER_REPLY_TIMEOUT,
                StatusCode::UNPROCESSABLE_ENTITY,
                late,
            )
            .await
        }
        (None, Some(desk)) => {
            let routed = super::RoutedAction {
                round,
                token: presented_token(&headers).unwrap_or_default().to_string(),
                request,
            };
            ask_recorder(
                desk,
                |reply| (routed, reply),
                ARBITER_REPLY_TIMEOUT,
                StatusCode::UNPROCESSABLE_ENTITY,
                late,
            )
            .await
        }
        (None, None) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "this server has no recorder attached: arbiter controls are off",
            );
        }
    };
    match answer {
        // The recorder noted the accepted action in the feed before answering (noting it
        // again here would settle the alerts the action itself raised).
        Ok(message) => {
            let id = state.feed.last_id();
            Json(json!({ "ok": true, "message": message, "id": id, "round": round }))
                .into_response()
        }
        Err(response) => response,
    }
}
