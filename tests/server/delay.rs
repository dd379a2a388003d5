//! The web server of a broadcast with a transmission delay: the arbiter's routes are live and
//! closed to spectators; the public routes (JSON, SSE, PGN) show a move only the delay after
//! it was made, and say that the round is delayed.

use std::sync::Arc;
use std::time::Duration;

use crate::server_support::{Sse, TOKEN, get, post};
use serde_json::Value;
use tokio::time::Instant;
use touchmove::act::Event;
use touchmove::board::ColorName;
use touchmove::recorder::layout::BoardSummary;
use touchmove::server::{self, ConnectionLimits, Feed, GameInfo, Publication};

const DELAY: Duration = Duration::from_millis(1500);

fn plies(body: &str) -> u64 {
    let game: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    game["ply"].as_u64().expect("a ply count")
}

#[tokio::test]
async fn the_desk_is_live_and_the_public_sees_a_move_the_delay_later() {
    let live = Arc::new(Feed::new());
    let publication = Arc::new(Publication::new(live.clone()));
    let opened = Instant::now();
    publication.delay_round(1, opened, DELAY);
    publication.current_round(opened, 1);
    publication.game(GameInfo {
        round: 1,
        board: 1,
        white: "White".into(),
        black: "Black".into(),
        tags: Vec::new(),
    });
    let server = server::serve_with_next_round(
        "127.0.0.1:0".parse().unwrap(),
        publication.clone(),
        None,
        None,
        TOKEN.to_string(),
        ConnectionLimits::default(),
    )
    .await
    .expect("server starts");
    let addr = server.local_addr();
    let bearer = ("Authorization", format!("Bearer {TOKEN}"));
    let bearer = [(bearer.0, bearer.1.as_str())];

    let mut public_stream = Sse::open(addr, "/api/round/1/stream", None).await;
    assert_eq!(public_stream.next().await.event, "snapshot");
    let made = Instant::now();
    let e4 = Event::Move {
        ply: 1,
        uci: "e2e4".into(),
        san: "e4".into(),
        t_ms: 0,
        side: ColorName::White,
        fen: "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".into(),
    };
    publication.event(made, 1, 1, e4);
    let summary = BoardSummary {
        board: 1,
        result: "*".into(),
        live: true,
    };
    publication.text(made, 1, 1, "1. e4 *\n".into(), summary);

    for path in [
        "/api/arbiter/round/1/game/1",
        "/api/arbiter/round/1/stream",
        "/api/arbiter/current",
        "/api/arbiter/broadcast-delay",
    ] {
        assert_eq!(
            get(addr, path, &[]).await.status,
            401,
            "{path} needs the token"
        );
    }
    let desk = get(addr, "/api/arbiter/round/1/game/1", &bearer).await;
    assert_eq!(plies(&desk.body), 1, "the desk is live");
    let public = get(addr, "/api/round/1/game/1", &[]).await;
    assert_eq!(plies(&public.body), 0, "the public is not");
    assert_eq!(get(addr, "/round/1/game/1.pgn", &[]).await.status, 404);
    let current: Value = serde_json::from_str(&get(addr, "/api/current", &[]).await.body).unwrap();
    assert_eq!(current["delay_ms"], 1500, "{current}");
    let delay: Value = serde_json::from_str(
        &get(addr, "/api/arbiter/broadcast-delay", &bearer)
            .await
            .body,
    )
    .unwrap();
    assert_eq!(
        (delay["delay_ms"].as_u64(), delay["can_choose"].as_bool()),
        (Some(1500), Some(false))
    );
    let chosen = post(
        addr,
        "/api/arbiter/broadcast-delay",
        &[bearer[0], ("Content-Type", "application/json")],
        r#"{"delay":"15m"}"#,
    )
    .await;
    assert_eq!(
        chosen.status, 503,
        "only a recorder opens rounds: {}",
        chosen.body
    );

    let moved = public_stream.next().await;
    let waited = made.elapsed();
    assert_eq!(moved.event, "move");
    assert!(
        waited >= DELAY && waited < DELAY + Duration::from_secs(1),
        "the public stream had the move {waited:?} after it was made"
    );
    let public = get(addr, "/api/round/1/game/1", &[]).await;
    assert_eq!(plies(&public.body), 1);
    let pgn = get(addr, "/round/1/game/1.pgn", &[]).await;
    assert_eq!((pgn.status, pgn.body.as_str()), (200, "1. e4 *\n"));
    server.shutdown().await;
}
