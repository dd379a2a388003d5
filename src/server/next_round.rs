//! Rounds that follow: which round is being recorded (`GET /api/current`, polled by the pages
//! so that they move to a new round by themselves) and the arbiter's "next round"
//! (`POST /api/arbiter/next-round`, bearer token, body `{"round": N}` naming the round the
//! page shows being recorded, or empty).

use std::time::Duration;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::api::{ask_recorder, error};
use super::desk::refusal;
use super::{Desk, NextRoundAsk, Public};

/// How long "next round" waits for the recorder to say whether the next round can start.
const NEXT_ROUND_REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// `GET /api/current`: `{"round": N, "rounds": [1, 2, …]}` (`round` is null before any
/// game), with `"delay_ms"` when the round is broadcast with a delay.
pub(super) async fn current(State(state): State<Public>) -> Response {
    let feed = state.view.feed();
    let round = feed.current_round();
    let mut body = json!({
        "round": round,
        "rounds": feed.rounds(),
    });
    let delay = round.map_or(Duration::ZERO, |r| state.view.delay(r));
    if !delay.is_zero() {
        body["delay_ms"] = json!(delay.as_millis() as u64);
    }
    Json(body).into_response()
}

/// What the desk sends with "next round".
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NextRoundBody {
    /// The round the desk shows being recorded; the recorder closes only that one.
    round: Option<u32>,
}

/// `POST /api/arbiter/next-round`: asks the recorder to close this round and start the next
/// one. Answers once the recorder has checked the next round's pairings; the pages then follow
/// by themselves. A request naming a round that is no longer open is refused (409), so a
/// request sent again after a lost answer never starts a second round.
pub(super) async fn next_round(
    State(state): State<Desk>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Some(refused) = refusal(&state, &headers) {
        return refused;
    }
    let body = if body.iter().all(u8::is_ascii_whitespace) {
        NextRoundBody::default()
    } else {
        match serde_json::from_slice::<NextRoundBody>(&body) {
            Ok(body) => body,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("the body must be empty or {{\"round\": N}}: {e}"),
                );
            }
        }
    };
    let Some(sink) = state.next_round.as_ref() else {
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "this recorder cannot start the next round by itself: stop it and start \
             `touchmove record --round N+1` with the same --out",
        );
    };
    let answer = ask_recorder(
        sink,
        |reply| NextRoundAsk {
            closing: body.round,
            reply,
        },
        NEXT_ROUND_REPLY_TIMEOUT,
        StatusCode::CONFLICT,
        "the recorder did not answer within 30 s",
    );
    match answer.await {
        Ok(message) => Json(json!({ "ok": true, "message": message })).into_response(),
        Err(response) => response,
    }
}
