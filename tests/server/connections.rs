//! The web server's connections are bounded: a cap (one more is answered 503 and closed), a
//! time limit on a request's head (a client that connects and says nothing, or trickles its
//! headers), a time limit on a connection where nothing moves (a body that never comes), and
//! the counts on `/api/status`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::server_support::{TOKEN, get};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use touchmove::server::{self, ConnectionLimits, Feed, ServerHandle};

async fn start(limits: ConnectionLimits) -> (ServerHandle, Arc<Feed>) {
    let feed = Arc::new(Feed::new());
    let handle = server::serve_with_next_round(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(server::Publication::new(feed.clone())),
        None,
        None,
        TOKEN.to_string(),
        limits,
    )
    .await
    .expect("server starts");
    (handle, feed)
}

/// Reads until the server closes the connection (or `limit` passes); what it sent, and when
/// it closed.
async fn until_closed(stream: &mut TcpStream, limit: Duration) -> (String, Option<Instant>) {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 4096];
    let until = Instant::now() + limit;
    loop {
        let left = until.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                return (
                    String::from_utf8_lossy(&bytes).into_owned(),
                    Some(Instant::now()),
                );
            }
            Ok(Ok(n)) => bytes.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&bytes).into_owned(), None),
        }
    }
}

fn web_counts(feed: &Feed) -> touchmove::server::ConnectionCounts {
    feed.status()
        .report()
        .web
        .expect("the server shows its connections")
}

async fn connect(addr: SocketAddr) -> TcpStream {
    TcpStream::connect(addr).await.expect("connect")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_beyond_the_cap_are_refused_and_counted() {
    let (server, feed) = start(ConnectionLimits {
        max_open: 3,
        ..ConnectionLimits::default()
    })
    .await;
    let addr = server.local_addr();
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect(addr).await);
    }
    let until = Instant::now() + Duration::from_secs(5);
    while web_counts(&feed).open < 3 {
        assert!(Instant::now() < until, "{:?}", web_counts(&feed));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut extra = connect(addr).await;
    let (answer, closed) = until_closed(&mut extra, Duration::from_secs(5)).await;
    assert!(closed.is_some(), "the connection beyond the cap is closed");
    assert!(
        answer.starts_with("HTTP/1.1 503") && answer.contains("too many connections"),
        "{answer:?}"
    );
    let counts = web_counts(&feed);
    assert_eq!(
        (
            counts.open,
            counts.accepted,
            counts.refused,
            counts.max_open
        ),
        (3, 3, 1, 3)
    );

    held.pop();
    let until = Instant::now() + Duration::from_secs(5);
    while web_counts(&feed).open > 2 {
        assert!(Instant::now() < until, "a closed connection frees its slot");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let status = get(addr, "/api/status", &[]).await;
    assert_eq!(status.status, 200, "{}", status.body);
    let json: serde_json::Value = serde_json::from_str(&status.body).unwrap();
    assert_eq!(json["web"]["refused"], 1, "{json}");
    assert_eq!(json["web"]["max_open"], 3, "{json}");
    let text = get(addr, "/status", &[]).await;
    assert!(
        text.body.contains("open of 3") && text.body.contains("1 refused"),
        "{}",
        text.body
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_head_must_arrive_in_time() {
    let header_timeout = Duration::from_millis(400);
    let (server, feed) = start(ConnectionLimits {
        header_timeout,
        ..ConnectionLimits::default()
    })
    .await;
    let addr = server.local_addr();

    let started = Instant::now();
    let mut silent = connect(addr).await;
    let (_, closed) = until_closed(&mut silent, Duration::from_secs(10)).await;
    let after = closed.expect("a connection that says nothing is closed") - started;
    assert!(
        after >= header_timeout && after < Duration::from_secs(5),
        "closed after {after:?}"
    );

    // Headers trickled one byte at a time, each in time for an idle limit, never complete.
    let started = Instant::now();
    let mut trickle = connect(addr).await;
    trickle.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
    let closed = loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if trickle.write_all(b"X").await.is_err() || started.elapsed() > Duration::from_secs(10) {
            break started.elapsed();
        }
        let mut probe = [0u8; 1];
        if let Ok(Ok(0)) =
            tokio::time::timeout(Duration::from_millis(1), trickle.read(&mut probe)).await
        {
            break started.elapsed();
        }
    };
    assert!(
        closed >= header_timeout && closed < Duration::from_secs(5),
        "a trickled head is cut off after {closed:?}"
    );
    let until = Instant::now() + Duration::from_secs(5);
    while web_counts(&feed).header_timeouts < 2 {
        assert!(Instant::now() < until, "{:?}", web_counts(&feed));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A complete request still works, on a fresh connection.
    assert_eq!(get(addr, "/api/rounds", &[]).await.status, 200);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_where_nothing_moves_is_closed() {
    let idle_timeout = Duration::from_millis(500);
    let (server, feed) = start(ConnectionLimits {
        idle_timeout,
        ..ConnectionLimits::default()
    })
    .await;
    let addr = server.local_addr();
    let mut stalled = connect(addr).await;
    // The head is complete, the body never comes.
    stalled
        .write_all(
            format!(
                "POST /api/arbiter/action HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
                 Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"board\":"
            )
            .as_bytes(),
        )
        .await
        .unwrap();
    let started = Instant::now();
    let (_, closed) = until_closed(&mut stalled, Duration::from_secs(10)).await;
    let after = closed.expect("the stalled connection is closed") - started;
    assert!(
        after >= idle_timeout / 2 && after < Duration::from_secs(5),
        "closed after {after:?}"
    );
    let until = Instant::now() + Duration::from_secs(5);
    while web_counts(&feed).idle_timeouts < 1 {
        assert!(Instant::now() < until, "{:?}", web_counts(&feed));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(web_counts(&feed).open, 0);
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_arbiter_gets_through_while_spectators_streams_fill_the_cap() {
    let feed = Arc::new(Feed::new());
    feed.upsert_game(touchmove::server::feed::GameInfo {
        round: 1,
        board: 1,
        white: "W".into(),
        black: "B".into(),
        tags: Vec::new(),
    });
    let (sink, mut actions) = tokio::sync::mpsc::channel::<(
        touchmove::record::arbiter::ArbiterRequest,
        tokio::sync::oneshot::Sender<Result<String, String>>,
    )>(4);
    tokio::spawn(async move {
        while let Some((_, reply)) = actions.recv().await {
            let _ = reply.send(Ok("applied".to_string()));
        }
    });
    let limits = ConnectionLimits {
        max_open: 40,
        ..ConnectionLimits::default()
    };
    let server = server::serve_with_next_round(
        "127.0.0.1:0".parse().unwrap(),
        Arc::new(server::Publication::new(feed.clone())),
        Some(sink),
        None,
        TOKEN.to_string(),
        limits,
    )
    .await
    .expect("server starts");
    let addr = server.local_addr();
    // Spectators open event streams until the server refuses one.
    let mut streams = Vec::new();
    let refused = loop {
        let mut stream = connect(addr).await;
        stream
            .write_all(b"GET /api/stream HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut head = vec![0u8; 12];
        stream.read_exact(&mut head).await.unwrap();
        let head = String::from_utf8_lossy(&head).into_owned();
        if !head.contains(" 200") || streams.len() > limits.max_open {
            break head;
        }
        streams.push(stream);
    };
    assert!(refused.contains(" 503"), "{refused}");
    assert_eq!(
        streams.len(),
        limits.max_open - limits.kept_for_requests(),
        "event streams leave slots for other requests"
    );
    let body = r#"{"round":1,"board":1,"who":"A","action":{"action":"new_game"}}"#;
    let mut desk = connect(addr).await;
    desk.write_all(
        format!(
            "POST /api/arbiter/action HTTP/1.1\r\nHost: x\r\nConnection: close\r\nAuthorization: \
             Bearer {TOKEN}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let (answer, _) = until_closed(&mut desk, Duration::from_secs(10)).await;
    assert!(
        answer.starts_with("HTTP/1.1 200") && answer.contains("applied"),
        "{answer}"
    );
    drop(streams);
    server.shutdown().await;
}
