//! The lichess pusher against a local server that records each request and checks it
//! against lichess's documented push contract (POST /api/broadcast/round/{8-char id}/push,
//! `Authorization: Bearer`, `text/plain` body of at most 100 games separated by blank lines).

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use touchmove::server::lichess::{Pusher, PusherConfig};

#[derive(Debug, Clone)]
struct Seen {
    at: Instant,
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
    /// Requests open at the moment this one arrived (including itself).
    in_flight: usize,
}

#[derive(Default)]
struct Recorder {
    seen: Vec<Seen>,
    in_flight: usize,
    /// Statuses to answer, in order; 200 once used up.
    script: Vec<u16>,
}

async fn lichess_double(script: Vec<u16>, delay: Duration) -> (String, Arc<Mutex<Recorder>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let recorder = Arc::new(Mutex::new(Recorder {
        script,
        ..Recorder::default()
    }));
    let shared = Arc::clone(&recorder);
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let shared = Arc::clone(&shared);
            tokio::spawn(async move {
                let mut bytes = Vec::new();
                let mut buf = [0u8; 65536];
                let (head, body_start) = loop {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    bytes.extend_from_slice(&buf[..n]);
                    if let Some(i) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                        break (String::from_utf8_lossy(&bytes[..i]).to_string(), i + 4);
                    }
                };
                let mut lines = head.lines();
                let request_line: Vec<String> = lines
                    .next()
                    .unwrap_or("")
                    .split(' ')
                    .map(String::from)
                    .collect();
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
                    .collect();
                let length: usize = headers
                    .iter()
                    .find(|(k, _)| k == "content-length")
                    .and_then(|(_, v)| v.parse().ok())
                    .unwrap_or(0);
                while bytes.len() < body_start + length {
                    let Ok(n) = socket.read(&mut buf).await else {
                        return;
                    };
                    if n == 0 {
                        break;
                    }
                    bytes.extend_from_slice(&buf[..n]);
                }
                let status = {
                    let mut r = shared.lock().expect("lock");
                    r.in_flight += 1;
                    let in_flight = r.in_flight;
                    r.seen.push(Seen {
                        at: Instant::now(),
                        method: request_line.first().cloned().unwrap_or_default(),
                        path: request_line.get(1).cloned().unwrap_or_default(),
                        headers,
                        body: String::from_utf8_lossy(&bytes[body_start..]).to_string(),
                        in_flight,
                    });
                    if r.script.is_empty() {
                        200
                    } else {
                        r.script.remove(0)
                    }
                };
                tokio::time::sleep(delay).await;
                let body = if status == 200 {
                    r#"{"games":[]}"#
                } else {
                    r#"{"error":"x"}"#
                };
                let reply = format!(
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(reply.as_bytes()).await;
                shared.lock().expect("lock").in_flight -= 1;
            });
        }
    });
    (base, recorder)
}

fn config(base: &str) -> PusherConfig {
    PusherConfig {
        base_url: base.to_string(),
        min_interval: Duration::from_millis(50),
        rate_limit_backoff: Duration::from_millis(700),
        error_backoff: Duration::from_millis(100),
        ..PusherConfig::new("AbCd1234", "lip_secret\n")
    }
}

fn round_pgn(games: u32, plies: usize) -> String {
    let moves = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Ba4", "Nf6"];
    (1..=games)
        .map(|b| {
            let text: Vec<String> = moves[..plies.min(moves.len())]
                .iter()
                .enumerate()
                .map(|(i, m)| if i % 2 == 0 { format!("{}. {m}", i / 2 + 1) } else { m.to_string() })
                .collect();
            format!(
                "[Event \"Open\"]\n[Site \"Hall\"]\n[Round \"1.{b}\"]\n[White \"W{b}\"]\n[Black \"B{b}\"]\n[Result \"*\"]\n\n{} *\n",
                text.join(" ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The checks a request must pass to be what lichess documents.
fn assert_contract(seen: &Seen) {
    assert_eq!(seen.method, "POST");
    assert_eq!(seen.path, "/api/broadcast/round/AbCd1234/push");
    let header = |name: &str| {
        seen.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    assert_eq!(header("authorization"), Some("Bearer lip_secret"));
    assert!(header("content-type").is_some_and(|t| t.starts_with("text/plain")));
    assert!(header("user-agent").is_some_and(|u| u.starts_with("touchmove/")));
    let games: Vec<&str> = seen.body.split("\n\n[Event").collect();
    assert!(games.len() <= 100, "at most 100 games per push");
    for tag in ["[Event ", "[Site ", "[Round \"1.", "[White ", "[Black "] {
        assert_eq!(
            seen.body.matches(tag).count(),
            games.len(),
            "every game has the tags lichess matches by ({tag})"
        );
    }
    assert_eq!(seen.in_flight, 1, "never two requests in flight");
}

#[tokio::test]
async fn every_move_is_pushed_coalesced_with_one_request_in_flight() {
    let (base, recorder) = lichess_double(vec![], Duration::from_millis(120)).await;
    let pusher = Pusher::start(config(&base)).expect("starts");
    for plies in 1..=8 {
        pusher.push(round_pgn(3, plies));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stats = pusher.finish(Duration::from_secs(10)).await;
    let seen = recorder.lock().expect("lock").seen.clone();
    assert!(
        !seen.is_empty() && seen.len() < 8,
        "coalesced: {} requests",
        seen.len()
    );
    seen.iter().for_each(assert_contract);
    let last = seen.last().expect("a push");
    assert!(
        last.body.contains("4. Ba4 Nf6"),
        "the final position is pushed"
    );
    assert_eq!(last.body.matches("[Round ").count(), 3, "no game dropped");
    assert_eq!(stats.failed, 0);
}

#[tokio::test]
async fn rate_limit_waits_then_retries_with_the_latest_text() {
    let (base, recorder) = lichess_double(vec![429, 500], Duration::ZERO).await;
    let pusher = Pusher::start(config(&base)).expect("starts");
    pusher.push(round_pgn(2, 1));
    tokio::time::sleep(Duration::from_millis(100)).await;
    pusher.push(round_pgn(2, 2));
    let stats = pusher.finish(Duration::from_secs(10)).await;
    let seen = recorder.lock().expect("lock").seen.clone();
    assert_eq!(seen.len(), 3, "429, then 500, then accepted");
    seen.iter().for_each(assert_contract);
    assert!(
        seen[1].at - seen[0].at >= Duration::from_millis(650),
        "waited after 429: {:?}",
        seen[1].at - seen[0].at
    );
    assert!(
        seen[2].body.contains("1. e4 e5"),
        "retries carry the newest text"
    );
    assert_eq!((stats.rate_limited, stats.accepted), (1, 1));
}

#[tokio::test]
async fn large_rounds_are_split_into_pushes_of_at_most_100_games() {
    let (base, recorder) = lichess_double(vec![], Duration::ZERO).await;
    let pusher = Pusher::start(config(&base)).expect("starts");
    pusher.push(round_pgn(230, 2));
    pusher.finish(Duration::from_secs(10)).await;
    let seen = recorder.lock().expect("lock").seen.clone();
    assert_eq!(seen.len(), 3);
    seen.iter().for_each(assert_contract);
    let total: usize = seen.iter().map(|s| s.body.matches("[Round ").count()).sum();
    assert_eq!(total, 230, "every game pushed once");
}

#[tokio::test]
async fn unreachable_server_is_retried_not_dropped() {
    let pusher = Pusher::start(config("http://127.0.0.1:9")).expect("starts");
    pusher.push(round_pgn(1, 1));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let stats = pusher.stats();
    assert!(stats.failed >= 2, "kept retrying: {stats:?}");
    assert_eq!(stats.accepted, 0);
    pusher.finish(Duration::from_millis(100)).await;
}

/// A round with a transmission delay is pushed as the public sees it: a move reaches lichess
/// the delay after it was made, not before.
#[tokio::test]
async fn a_delayed_round_is_pushed_the_delay_after_each_move() {
    use touchmove::recorder::layout::BoardSummary;
    use touchmove::server::{Feed, Publication};
    let delay = Duration::from_millis(1200);
    let (base, recorder) = lichess_double(vec![], Duration::ZERO).await;
    let publication = Publication::new(std::sync::Arc::new(Feed::new()));
    let opened = tokio::time::Instant::now();
    publication.delay_round(1, opened, delay);
    let pusher = Pusher::start(config(&base)).expect("starts");
    assert!(
        publication.push_delayed(1, pusher).is_none(),
        "the delayed round's"
    );
    let made = Instant::now();
    let text = round_pgn(1, 2);
    let summary = BoardSummary {
        board: 1,
        result: "*".into(),
        live: true,
    };
    publication.text(tokio::time::Instant::now(), 1, 1, text.clone(), summary);
    let pushed = loop {
        if let Some(seen) = recorder.lock().expect("lock").seen.first().cloned() {
            break seen;
        }
        assert!(made.elapsed() < Duration::from_secs(10), "nothing pushed");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_contract(&pushed);
    assert_eq!(pushed.body.trim_end(), text.trim_end());
    let after = pushed.at - made;
    assert!(
        after >= delay && after < delay + Duration::from_secs(1),
        "pushed {after:?} after the move"
    );
}
