//! The arbiter's API: the desk's live view of the games, the actions, the transmission
//! delay. Every route asks for the arbiter's bearer token and reads the live feed, never the
//! public's.

use std::time::Duration;

use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;

use super::Desk;
use super::api::{ask_recorder, error};
use super::feed::Scope;
use crate::record::arbiter::{ArbiterAction, ArbiterRequest};

/// How long the arbiter API waits for the recorder to apply an action.
const ARBITER_REPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// `/api/round/N/alerts`: the arbiter's queue, behind the token (spectators see decisions,
/// never the suspicions before them).
pub(super) async fn alerts(
    State(state): State<Desk>,
    Path(round): Path<u32>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    (
        [(header::CACHE_CONTROL, "no-store")],
        Json(state.live().alerts(round)),
    )
        .into_response()
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
pub(super) fn refusal(state: &Desk, headers: &HeaderMap) -> Option<Response> {
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

/// The request's JSON body, once the token is checked; `Err` is the refusal to send.
fn checked<T>(
    state: &Desk,
    headers: &HeaderMap,
    body: Result<Json<T>, JsonRejection>,
) -> Result<T, Box<Response>> {
    if let Some(refused) = refusal(state, headers) {
        return Err(Box::new(refused));
    }
    body.map(|Json(body)| body)
        .map_err(|rejection| Box::new(error(rejection.status(), rejection.body_text())))
}

pub(super) async fn arbiter_session(State(state): State<Desk>, headers: HeaderMap) -> Response {
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
    State(state): State<Desk>,
    headers: HeaderMap,
    body: Result<Json<ActionBody>, JsonRejection>,
) -> Response {
    let body = match checked(&state, &headers, body) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    if let Err(message) = check_action(&body.action) {
        return error(StatusCode::UNPROCESSABLE_ENTITY, message);
    }
    let round = body.round.or_else(|| {
        state
            .live()
            .rounds()
            .into_iter()
            .rev()
            .find(|r| state.live().game(*r, body.board).is_some())
    });
    let Some(round) = round.filter(|r| state.live().game(*r, body.board).is_some()) else {
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
            let id = state.live().last_id();
            Json(json!({ "ok": true, "message": message, "id": id, "round": round }))
                .into_response()
        }
        Err(response) => response,
    }
}

/// `GET /api/arbiter/current`: the round being recorded and the rounds there are, live
/// (`/api/current` is what the public's pages follow).
pub(super) async fn current(State(state): State<Desk>, headers: HeaderMap) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    Json(json!({
        "round": state.live().current_round(),
        "rounds": state.live().rounds(),
    }))
    .into_response()
}

/// `GET /api/arbiter/round/N/stream`: the round's live events (SSE), for the desk.
pub(super) async fn round_stream(
    State(state): State<Desk>,
    Path(round): Path<u32>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    super::stream::respond(
        std::sync::Arc::clone(state.live()),
        None,
        &state.shutdown,
        &state.connections,
        Scope::Round(round),
        &headers,
    )
}

/// `GET /api/arbiter/round/N/game/K`: a game as it stands now, for the desk.
pub(super) async fn game(
    State(state): State<Desk>,
    Path((round, board)): Path<(u32, u32)>,
    headers: HeaderMap,
) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    match state.live().game(round, board) {
        Some(detail) => Json(detail).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            format!("round {round} has no board {board}"),
        ),
    }
}

/// `GET /api/arbiter/broadcast-delay`: the transmission delay of the round being recorded,
/// the one chosen for the rounds to come, and whether this server can choose it.
pub(super) async fn broadcast_delay(State(state): State<Desk>, headers: HeaderMap) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    let round = state.live().current_round();
    Json(json!({
        "round": round,
        "delay_ms": round.map_or(0, |r| state.publication.delay(r).as_millis() as u64),
        "chosen": state.publication.chosen(),
        "can_choose": state.next_round.is_some(),
    }))
    .into_response()
}

/// Body of `POST /api/arbiter/broadcast-delay`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct DelayBody {
    /// The delay from the next round on: `"15m"`, `"90s"`, `"0"`.
    delay: String,
}

/// `POST /api/arbiter/broadcast-delay`: the transmission delay from the next round on. The
/// round being recorded keeps its own: shortened, it would publish moves before their time.
pub(super) async fn choose_broadcast_delay(
    State(state): State<Desk>,
    headers: HeaderMap,
    body: Result<Json<DelayBody>, JsonRejection>,
) -> Response {
    let body = match checked(&state, &headers, body) {
        Ok(body) => body,
        Err(refused) => return *refused,
    };
    if state.next_round.is_none() {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "this server does not open the rounds: set broadcast_delay in the event file of \
             every recording PC; each recorder applies it from the round it opens next",
        );
    }
    let delay = match crate::event::config::parse_broadcast_delay(&body.delay) {
        Ok(delay) => delay,
        Err(message) => return error(StatusCode::UNPROCESSABLE_ENTITY, message),
    };
    let round = state.live().current_round().unwrap_or(0);
    let next = round + 1;
    if let Err(e) = state.publication.choose_delay(next, delay) {
        return error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the delay cannot be kept in the state directory: {e}"),
        );
    }
    let now = state.publication.delay(round);
    Json(json!({
        "ok": true,
        "message": format!(
            "broadcast delay {} from round {next} on; round {round} keeps {}",
            crate::event::config::describe_delay(delay),
            crate::event::config::describe_delay(now)
        ),
    }))
    .into_response()
}
