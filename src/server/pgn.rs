//! PGN at stable URLs with validators, so platforms can poll cheaply.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::feed::{PgnDoc, whole_second};
use super::{Public, api, assets, http_date};

pub(super) async fn round_pgn(
    State(state): State<Public>,
    Path(round): Path<u32>,
    headers: HeaderMap,
) -> Response {
    match state.view.feed().round_pgn(round) {
        Some(doc) => respond(&doc, &headers, &format!("round-{round}.pgn")),
        None => api::error(
            StatusCode::NOT_FOUND,
            format!("round {round} has no PGN yet"),
        ),
    }
}

/// `/round/N/game/K` is the game page, `/round/N/game/K.pgn` its PGN.
pub(super) async fn game_page_or_pgn(
    State(state): State<Public>,
    Path((round, board)): Path<(u32, String)>,
    headers: HeaderMap,
) -> Response {
    let (number, is_pgn) = match board.strip_suffix(".pgn") {
        Some(number) => (number, true),
        None => (board.as_str(), false),
    };
    let Ok(board) = number.parse::<u32>() else {
        return api::error(StatusCode::BAD_REQUEST, "board must be a number");
    };
    if !is_pgn {
        return assets::game_page().await;
    }
    match state.view.feed().game_pgn(round, board) {
        Some(doc) => respond(&doc, &headers, &format!("round-{round}-game-{board}.pgn")),
        None => api::error(
            StatusCode::NOT_FOUND,
            format!("round {round} board {board} has no PGN yet"),
        ),
    }
}

/// True when the client's copy is the current text. The entity tag decides when the client
/// sends one; a date alone (whole seconds) only when the text did not change twice within
/// the second of its last change, since the client may hold the earlier version of that
/// second.
fn not_modified(doc: &PgnDoc, headers: &HeaderMap) -> bool {
    let header_text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(tags) = header_text(header::IF_NONE_MATCH) {
        return tags
            .split(',')
            .map(|t| t.trim().trim_start_matches("W/"))
            .any(|t| t == "*" || t == doc.etag);
    }
    let modified = whole_second(doc.modified);
    header_text(header::IF_MODIFIED_SINCE)
        .and_then(http_date::parse)
        .map(whole_second)
        .is_some_and(|since| modified < since || (modified == since && !doc.changed_within_second))
}

fn respond(doc: &PgnDoc, headers: &HeaderMap, filename: &str) -> Response {
    let validators = [
        (header::ETAG, doc.etag.clone()),
        (header::LAST_MODIFIED, http_date::format(doc.modified)),
        (header::CACHE_CONTROL, "no-cache".to_string()),
    ];
    if not_modified(doc, headers) {
        return (StatusCode::NOT_MODIFIED, validators).into_response();
    }
    (
        validators,
        [
            (
                header::CONTENT_TYPE,
                "application/x-chess-pgn; charset=utf-8".to_string(),
            ),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{filename}\""),
            ),
        ],
        doc.text.to_string(),
    )
        .into_response()
}
