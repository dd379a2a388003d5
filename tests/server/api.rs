//! The server's live stream, JSON API, PGN caching and arbiter forwarding, over loopback.

use std::sync::Arc;

use crate::server_support::{Sse, TOKEN, get, post, start};
use tokio::sync::mpsc;
use touchmove::act::Event;
use touchmove::board::ColorName;
use touchmove::record::arbiter::ArbiterAction;
use touchmove::server::{Feed, GameInfo};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn mv(ply: u32, uci: &str, san: &str) -> Event {
    Event::Move {
        ply,
        uci: uci.into(),
        san: san.into(),
        t_ms: u64::from(ply) * 1000,
        side: if ply % 2 == 1 {
            ColorName::White
        } else {
            ColorName::Black
        },
        fen: format!("fen-after-{ply}"),
    }
}

fn feed_with_games() -> Arc<Feed> {
    let feed = Arc::new(Feed::new());
    for board in 1..=2 {
        feed.upsert_game(GameInfo {
            round: 1,
            board,
            white: format!("White {board}"),
            black: format!("Black {board}"),
            tags: vec![("Event".into(), "Test Open".into())],
        });
        feed.publish(
            1,
            board,
            Event::GameStart {
                t_ms: 0,
                fen: START.into(),
                chess960: false,
                rotated: false,
            },
        );
    }
    feed
}

#[tokio::test]
async fn new_client_gets_snapshot_then_deltas_with_increasing_ids() {
    let feed = feed_with_games();
    let server = start(Arc::clone(&feed), None).await;
    let mut sse = Sse::open(server.local_addr(), "/api/round/1/stream", None).await;
    assert_eq!(sse.status, 200);
    let snapshot = sse.next().await;
    assert_eq!(snapshot.event, "snapshot");
    assert_eq!(snapshot.id, Some(feed.last_id()));
    let view: serde_json::Value = serde_json::from_str(&snapshot.data).expect("json");
    assert_eq!(view["games"].as_array().map(Vec::len), Some(2));
    assert_eq!(view["games"][1]["white"], "White 2");

    let a = feed.publish(1, 1, mv(1, "e2e4", "e4"));
    feed.publish(2, 1, mv(1, "d2d4", "d4")); // another round: not on this stream
    let b = feed.publish(1, 2, mv(1, "c2c4", "c4"));
    let first = sse.next().await;
    let second = sse.next().await;
    assert_eq!((first.event.as_str(), first.id), ("move", Some(a)));
    assert_eq!((second.event.as_str(), second.id), ("move", Some(b)));
    let data: serde_json::Value = serde_json::from_str(&second.data).expect("json");
    assert_eq!(data["board"], 2);
    assert_eq!(data["event"]["san"], "c4");
    assert_eq!(data["game"]["last_move"], "c2c4");
    server.shutdown().await;
}

#[tokio::test]
async fn reconnect_with_last_event_id_receives_exactly_the_missed_events() {
    let feed = feed_with_games();
    let server = start(Arc::clone(&feed), None).await;
    let seen = feed.publish(1, 1, mv(1, "e2e4", "e4"));
    let missed: Vec<u64> = vec![
        feed.publish(1, 1, mv(2, "e7e5", "e5")),
        feed.publish(1, 2, mv(1, "d2d4", "d4")),
        feed.publish(1, 1, mv(3, "g1f3", "Nf3")),
    ];
    feed.publish(3, 1, mv(1, "a2a3", "a3"));
    let mut sse = Sse::open(server.local_addr(), "/api/round/1/stream", Some(seen)).await;
    let mut got = Vec::new();
    for _ in 0..missed.len() {
        let e = sse.next().await;
        assert_eq!(
            e.event, "move",
            "a resumed stream starts with the missed events"
        );
        got.push(e.id.expect("id"));
    }
    assert_eq!(got, missed);
    let live = feed.publish(1, 2, mv(2, "d7d5", "d5"));
    assert_eq!(
        sse.next().await.id,
        Some(live),
        "then live events, nothing twice"
    );

    // Per-game stream: only that board's events.
    let mut game = Sse::open(
        server.local_addr(),
        "/api/round/1/game/1/stream",
        Some(seen),
    )
    .await;
    assert_eq!(game.next().await.id, Some(missed[0]));
    assert_eq!(game.next().await.id, Some(missed[2]));
    server.shutdown().await;
}

#[tokio::test]
async fn json_api_reports_games_moves_clocks_alerts_and_events() {
    let feed = feed_with_games();
    let server = start(Arc::clone(&feed), None).await;
    let addr = server.local_addr();
    feed.publish(1, 1, mv(1, "e2e4", "e4"));
    feed.publish(
        1,
        1,
        Event::Clock {
            white_ms: 890_000,
            black_ms: 900_000,
            ply: 1,
            t_ms: 1500,
        },
    );
    feed.publish(
        1,
        1,
        Event::Result {
            result: "1-0".into(),
            reason: "resignation".into(),
            t_ms: 2000,
        },
    );
    let game: serde_json::Value =
        serde_json::from_str(&get(addr, "/api/round/1/game/1", &[]).await.body).expect("json");
    assert_eq!(game["moves"][0]["san"], "e4");
    assert_eq!(game["clock"]["white_ms"], 890_000);
    assert_eq!(game["result"], "1-0");
    assert_eq!(game["tags"][0][1], "Test Open");

    let rounds: serde_json::Value =
        serde_json::from_str(&get(addr, "/api/rounds", &[]).await.body).expect("json");
    assert_eq!(rounds[0]["round"], 1);

    let events: serde_json::Value = serde_json::from_str(
        &get(addr, "/api/events?after=0&round=1&board=1", &[])
            .await
            .body,
    )
    .expect("json");
    let kinds: Vec<&str> = events["events"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|e| e["event"]["kind"].as_str())
        .collect();
    assert_eq!(kinds, ["game_start", "move", "clock", "result"]);
    assert_eq!(get(addr, "/api/round/9", &[]).await.status, 404);
    server.shutdown().await;
}

#[tokio::test]
async fn pgn_urls_are_stable_and_support_conditional_requests() {
    let feed = feed_with_games();
    let server = start(Arc::clone(&feed), None).await;
    let addr = server.local_addr();
    assert_eq!(get(addr, "/round/1/game/1.pgn", &[]).await.status, 404);
    feed.set_pgn(1, 1, "[Round \"1.1\"]\n\n1. e4 *\n".into());
    feed.set_round_pgn(
        1,
        "[Round \"1.1\"]\n\n1. e4 *\n\n[Round \"1.2\"]\n\n*\n".into(),
    );
    let first = get(addr, "/round/1/game/1.pgn", &[]).await;
    assert_eq!(first.status, 200);
    assert!(
        first
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/x-chess-pgn"))
    );
    assert_eq!(first.body, "[Round \"1.1\"]\n\n1. e4 *\n");
    let etag = first.header("etag").expect("etag").to_string();
    let modified = first
        .header("last-modified")
        .expect("last-modified")
        .to_string();
    let again = get(addr, "/round/1/game/1.pgn", &[("If-None-Match", &etag)]).await;
    assert_eq!(again.status, 304);
    assert!(again.body.is_empty());
    let since = get(
        addr,
        "/round/1/game/1.pgn",
        &[("If-Modified-Since", &modified)],
    )
    .await;
    assert_eq!(since.status, 304);

    feed.set_pgn(1, 1, "[Round \"1.1\"]\n\n1. e4 e5 *\n".into());
    let changed = get(addr, "/round/1/game/1.pgn", &[("If-None-Match", &etag)]).await;
    assert_eq!(changed.status, 200, "a new move changes the entity tag");
    assert!(changed.body.contains("e5"));
    let round = get(addr, "/round/1/games.pgn", &[]).await;
    assert_eq!(round.status, 200);
    assert!(round.body.contains("[Round \"1.2\"]"));
    server.shutdown().await;
}

#[tokio::test]
async fn arbiter_actions_reach_the_recorder_and_settle_alerts() {
    let feed = feed_with_games();
    let (sink, mut requests) = mpsc::channel(4);
    let server = start(Arc::clone(&feed), Some(sink)).await;
    let addr = server.local_addr();
    let recorder_feed = Arc::clone(&feed);
    let recorder = tokio::spawn(async move {
        let (request, reply) = requests.recv().await.expect("a request");
        if let ArbiterAction::SetResult { result, reason } = &request.action {
            recorder_feed.publish(
                1,
                request.board,
                Event::Result {
                    result: result.clone(),
                    reason: reason.clone(),
                    t_ms: 0,
                },
            );
        }
        let _ = reply.send(Ok("done".into()));
        request
    });
    let auth = format!("Bearer {TOKEN}");
    let reply = post(
        addr,
        "/api/arbiter/action",
        &[("Authorization", &auth), ("Content-Type", "application/json")],
        r#"{"board":2,"action":{"action":"set_result","result":"0-1","reason":"forfeit"},"who":"Chief arbiter"}"#,
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    let request = recorder.await.expect("recorder task");
    assert_eq!(request.board, 2);
    assert_eq!(request.who, "Chief arbiter");
    assert_eq!(
        request.action,
        ArbiterAction::SetResult {
            result: "0-1".into(),
            reason: "forfeit".into()
        }
    );
    assert_eq!(
        feed.game(1, 2).and_then(|g| g.summary.result),
        Some("0-1".into())
    );
    let session = get(addr, "/api/arbiter/session", &[("Authorization", &auth)]).await;
    assert_eq!(session.status, 200);
    server.shutdown().await;
}

/// Spectators see decisions, not suspicions: the alert queue answers only the arbiter's
/// token, and the public JSON, events and streams carry no alert's details.
#[tokio::test]
async fn alerts_reach_the_arbiter_only() {
    let feed = feed_with_games();
    let server = start(Arc::clone(&feed), None).await;
    let addr = server.local_addr();
    let mut sse = Sse::open(addr, "/api/round/1/stream", None).await;
    assert_eq!(sse.next().await.event, "snapshot");
    feed.publish(
        1,
        2,
        Event::Alert(touchmove::act::Alert {
            article: "7.5.4".into(),
            side: Some(ColorName::White),
            ply: 3,
            t_ms: 2000,
            evidence_ms: vec![1900, 2000],
            squares: vec!["e4".into(), "d5".into()],
            severity: touchmove::act::Severity::Warning,
            message: "Suspected two hands".into(),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        }),
    );
    let streamed = sse.next().await;
    assert_eq!(streamed.event, "alert");
    assert!(!streamed.data.contains("7.5.4"), "{}", streamed.data);
    for path in ["/api/round/1", "/api/round/1/game/2", "/api/events?after=0"] {
        let body = get(addr, path, &[]).await.body;
        assert!(
            !body.contains("7.5.4") && !body.contains("two hands") && !body.contains("alerts"),
            "{path}: {body}"
        );
    }
    assert_eq!(get(addr, "/api/round/1/alerts", &[]).await.status, 401);
    let auth = format!("Bearer {TOKEN}");
    let queue = get(addr, "/api/round/1/alerts", &[("Authorization", &auth)]).await;
    assert_eq!(queue.status, 200);
    let queue: serde_json::Value = serde_json::from_str(&queue.body).expect("json");
    assert_eq!(queue[0]["article"], "7.5.4");
    assert_eq!(queue[0]["state"], "open");
    server.shutdown().await;
}

#[tokio::test]
async fn shutdown_ends_open_streams() {
    let feed = feed_with_games();
    let server = start(Arc::clone(&feed), None).await;
    let mut sse = Sse::open(server.local_addr(), "/api/stream", None).await;
    assert_eq!(sse.next().await.event, "snapshot");
    tokio::time::timeout(std::time::Duration::from_secs(3), server.shutdown())
        .await
        .expect("shutdown does not wait for spectators");
}

/// A poller that sends only `If-Modified-Since` (whole seconds) must not be told "not
/// modified" when the text changed again within the second it holds: the final move and the
/// result often come in the same second.
#[tokio::test]
async fn a_change_within_the_same_second_is_never_answered_304_to_a_date() {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};
    let feed = feed_with_games();
    let server = start(Arc::clone(&feed), None).await;
    let addr = server.local_addr();
    let now = || SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
    let mut attempt = 0;
    let first = loop {
        attempt += 1;
        assert!(attempt < 10, "never managed two versions within one second");
        // Start right after a second begins, so that both versions fall within it.
        let wait = 1000 - now().subsec_millis();
        tokio::time::sleep(Duration::from_millis(u64::from(wait) + 5)).await;
        let started = now().as_secs();
        feed.set_pgn(
            1,
            1,
            format!("[Round \"1.1\"]\n\n1. e4 {{try {attempt}}} *\n"),
        );
        let first = get(addr, "/round/1/game/1.pgn", &[]).await;
        feed.set_pgn(1, 1, "[Round \"1.1\"]\n\n1. e4 e5 1-0\n".into());
        if now().as_secs() == started {
            break first;
        }
    };
    assert_eq!(first.status, 200);
    assert!(!first.body.contains("1-0"));
    let modified = first
        .header("last-modified")
        .expect("last-modified")
        .to_string();
    let since = get(
        addr,
        "/round/1/game/1.pgn",
        &[("If-Modified-Since", &modified)],
    )
    .await;
    assert_eq!(
        since.status, 200,
        "the text changed within the second of {modified}: the poller must get it"
    );
    assert!(since.body.contains("1-0"), "{}", since.body);
    // The entity tag still answers 304 for the current text.
    let etag = since.header("etag").expect("etag").to_string();
    let tagged = get(addr, "/round/1/game/1.pgn", &[("If-None-Match", &etag)]).await;
    assert_eq!(tagged.status, 304);
    server.shutdown().await;
}
