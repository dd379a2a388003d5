//! The pages and their assets, embedded in the binary (no CDN, no build step).

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::api;

/// An embedded file: name under `/assets/`, content type, bytes.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const ASSETS: &[Asset] = &[
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("assets/style.css"),
    },
    Asset {
        name: "board.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/board.js"),
    },
    Asset {
        name: "live.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/live.js"),
    },
    Asset {
        name: "tiles.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/tiles.js"),
    },
    Asset {
        name: "spectator.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/spectator.js"),
    },
    Asset {
        name: "game.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/game.js"),
    },
    Asset {
        name: "alerts.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/alerts.js"),
    },
    Asset {
        name: "arbiter.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("assets/arbiter.js"),
    },
    Asset {
        name: "favicon.svg",
        content_type: "image/svg+xml",
        body: include_str!("assets/favicon.svg"),
    },
];

fn html(body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

pub(super) async fn spectator_page() -> Response {
    html(include_str!("assets/spectator.html"))
}

pub(super) async fn game_page() -> Response {
    html(include_str!("assets/game.html"))
}

pub(super) async fn arbiter_page() -> Response {
    html(include_str!("assets/arbiter.html"))
}

/// Serves only names in the embedded table, so no request can reach the file system.
pub(super) async fn asset(Path(name): Path<String>) -> Response {
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, asset.content_type),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            asset.body,
        )
            .into_response(),
        None => api::error(StatusCode::NOT_FOUND, "no such asset"),
    }
}
