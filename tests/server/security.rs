//! Security of the server: the arbiter API is closed to spectators, tag values are data,
//! no path reaches the file system, and bad requests get 4xx without harming the server.

use std::sync::Arc;

use crate::server_support::{TOKEN, get, post, raw, start};
use tokio::sync::mpsc;
use touchmove::act::Event;
use touchmove::server::{Feed, GameInfo};

const ACTION: &str = r#"{"board":1,"action":{"action":"set_result","result":"1-0","reason":"x"}}"#;
const EVIL: &str = "<script>alert(1)</script><img src=x onerror=alert(2)>";

fn feed() -> Arc<Feed> {
    let feed = Arc::new(Feed::new());
    feed.upsert_game(GameInfo {
        round: 1,
        board: 1,
        white: EVIL.into(),
        black: "Black".into(),
        tags: vec![("Event".into(), EVIL.into())],
    });
    feed.set_pgn(1, 1, "[Event \"x\"]\n\n*\n".into());
    feed
}

#[tokio::test]
async fn arbiter_api_refuses_missing_wrong_and_misplaced_tokens() {
    let (sink, mut requests) = mpsc::channel(4);
    let server = start(feed(), Some(sink)).await;
    let addr = server.local_addr();
    let json = ("Content-Type", "application/json");
    let missing = post(addr, "/api/arbiter/action", &[json], ACTION).await;
    assert_eq!(missing.status, 401);
    assert_eq!(missing.header("www-authenticate"), Some("Bearer"));
    let wrong = post(
        addr,
        "/api/arbiter/action",
        &[json, ("Authorization", "Bearer nope")],
        ACTION,
    )
    .await;
    assert_eq!(wrong.status, 403);
    let prefix = format!("Bearer {}", &TOKEN[..TOKEN.len() - 1]);
    let truncated = post(
        addr,
        "/api/arbiter/action",
        &[json, ("Authorization", &prefix)],
        ACTION,
    )
    .await;
    assert_eq!(truncated.status, 403);
    let basic = post(
        addr,
        "/api/arbiter/action",
        &[json, ("Authorization", &format!("Basic {TOKEN}"))],
        ACTION,
    )
    .await;
    assert_eq!(basic.status, 401);
    let cookie = post(
        addr,
        "/api/arbiter/action",
        &[json, ("Cookie", &format!("token={TOKEN}"))],
        ACTION,
    )
    .await;
    assert_eq!(
        cookie.status, 401,
        "a cookie is never a credential (no CSRF)"
    );
    let query = post(
        addr,
        &format!("/api/arbiter/action?token={TOKEN}"),
        &[json],
        ACTION,
    )
    .await;
    assert_eq!(query.status, 401);
    assert_eq!(get(addr, "/api/arbiter/session", &[]).await.status, 401);
    assert_eq!(get(addr, "/api/arbiter/action", &[]).await.status, 405);
    assert!(
        requests.try_recv().is_err(),
        "nothing refused reached the recorder"
    );
    server.shutdown().await;
}

#[tokio::test]
async fn tag_values_are_data_and_pages_are_static_with_a_strict_policy() {
    let server = start(feed(), None).await;
    let addr = server.local_addr();
    for page in ["/", "/round/1", "/round/1/game/1", "/arbiter"] {
        let reply = get(addr, page, &[]).await;
        assert_eq!(reply.status, 200, "{page}");
        assert!(
            !reply.body.contains("alert(1)"),
            "{page} never embeds tag values"
        );
        let policy = reply.header("content-security-policy").expect("CSP");
        assert!(policy.contains("script-src 'self'") && !policy.contains("unsafe-inline"));
        assert_eq!(reply.header("x-content-type-options"), Some("nosniff"));
    }
    let game = get(addr, "/api/round/1/game/1", &[]).await;
    assert!(
        game.header("content-type")
            .is_some_and(|t| t.starts_with("application/json"))
    );
    let value: serde_json::Value = serde_json::from_str(&game.body).expect("json");
    assert_eq!(
        value["white"], EVIL,
        "the JSON carries the text unchanged, as data"
    );
    // The page scripts build the DOM with text nodes; only the board sprite (constant
    // drawings) uses innerHTML.
    for script in [
        "spectator.js",
        "game.js",
        "arbiter.js",
        "tiles.js",
        "live.js",
        "board.js",
    ] {
        let body = get(addr, &format!("/assets/{script}"), &[]).await.body;
        let html_sinks = body.matches("innerHTML").count()
            + body.matches("outerHTML").count()
            + body.matches("insertAdjacentHTML").count()
            + body.matches("document.write").count();
        let allowed = usize::from(script == "board.js");
        assert_eq!(html_sinks, allowed, "{script} writes HTML");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn path_traversal_is_refused_on_asset_and_pgn_routes() {
    let server = start(feed(), None).await;
    let addr = server.local_addr();
    for path in [
        "/assets/../../Cargo.toml",
        "/assets/..%2f..%2fCargo.toml",
        "/assets/%2e%2e/%2e%2e/Cargo.toml",
        "/assets/..%5c..%5cCargo.toml",
        "/assets/%2fetc%2fpasswd",
        "/assets//etc/passwd",
        "/round/1/game/..%2f..%2f..%2fetc%2fpasswd.pgn",
        "/round/../../../etc/passwd",
        "/round/1/game/1.pgn/../../../../etc/passwd",
        "/round/%2e%2e/games.pgn",
        "/../../../../etc/passwd",
    ] {
        let reply = raw(
            addr,
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes(),
        )
        .await;
        assert!(
            (400..500).contains(&reply.status),
            "{path}: {}",
            reply.status
        );
        assert!(
            !reply.body.contains("[package]") && !reply.body.contains("root:"),
            "{path}"
        );
    }
    assert_eq!(get(addr, "/assets/style.css", &[]).await.status, 200);
    server.shutdown().await;
}

#[tokio::test]
async fn oversized_and_malformed_requests_get_4xx_and_the_server_survives() {
    let (sink, _requests) = mpsc::channel(4);
    let server = start(feed(), Some(sink)).await;
    let addr = server.local_addr();
    let auth = format!("Bearer {TOKEN}");
    let json = ("Content-Type", "application/json");
    let with_token = [json, ("Authorization", auth.as_str())];
    let huge = format!(
        r#"{{"board":1,"action":{{"action":"annotate","ply":1,"text":"{}"}}}}"#,
        "x".repeat(200_000)
    );
    assert_eq!(
        post(addr, "/api/arbiter/action", &with_token, &huge)
            .await
            .status,
        413
    );
    for body in [
        "",
        "{",
        "null",
        r#"{"board":-1,"action":{"action":"new_game"}}"#,
        r#"{"board":1,"action":{"action":"launch_missiles"}}"#,
        r#"{"board":1,"action":{"action":"set_result","result":"2-0","reason":"x"}}"#,
        r#"{"board":1,"action":{"action":"new_game"},"extra":1}"#,
        "\u{0}\u{1}\u{2}",
    ] {
        let reply = post(addr, "/api/arbiter/action", &with_token, body).await;
        assert!(
            (400..500).contains(&reply.status),
            "{body:?}: {}",
            reply.status
        );
    }
    let plain = post(
        addr,
        "/api/arbiter/action",
        &[("Authorization", &auth)],
        ACTION,
    )
    .await;
    assert_eq!(plain.status, 415, "only JSON bodies are accepted");
    let unknown_board = r#"{"board":99,"action":{"action":"new_game"}}"#;
    assert_eq!(
        post(addr, "/api/arbiter/action", &with_token, unknown_board)
            .await
            .status,
        404
    );
    for path in [
        "/api/round/abc",
        "/api/round/99999999999999999999",
        "/api/round/1/game/-3",
        "/round/1/game/x.pgn",
        "/api/events?after=nope",
        "/api/events?board=1",
        "/api/events?after=99999",
    ] {
        let reply = get(addr, path, &[]).await;
        assert!(
            (400..500).contains(&reply.status),
            "{path}: {}",
            reply.status
        );
    }
    for garbage in [
        &b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"[..],
        b"GET\r\n\r\n",
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /api/rounds HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
    ] {
        let reply = raw(addr, garbage).await;
        assert!(
            reply.status == 0 || (400..500).contains(&reply.status),
            "{}",
            reply.status
        );
    }
    let long_header = format!(
        "GET / HTTP/1.1\r\nHost: x\r\nX-Long: {}\r\n\r\n",
        "a".repeat(1 << 20)
    );
    let reply = raw(addr, long_header.as_bytes()).await;
    assert!(
        reply.status == 0 || (400..500).contains(&reply.status),
        "{}",
        reply.status
    );
    let stream = get(
        addr,
        "/api/round/1/game/1/stream",
        &[("Last-Event-ID", "garbage")],
    );
    let _ = tokio::time::timeout(std::time::Duration::from_millis(300), stream).await;
    let alive = get(addr, "/api/rounds", &[]).await;
    assert_eq!(alive.status, 200, "the server still answers");
    server.shutdown().await;
}

#[tokio::test]
async fn events_feed_keeps_markup_as_json_text() {
    let feed = feed();
    let server = start(Arc::clone(&feed), None).await;
    feed.publish(
        1,
        1,
        Event::Result {
            result: "1-0".into(),
            reason: EVIL.into(),
            t_ms: 0,
        },
    );
    let reply = get(server.local_addr(), "/api/events?after=0", &[]).await;
    let value: serde_json::Value = serde_json::from_str(&reply.body).expect("valid JSON");
    assert_eq!(value["events"][1]["event"]["reason"], EVIL);
    server.shutdown().await;
}
