//! A public broadcast with a transmission delay, end to end.
//!
//! Two virtual boards play 24 plies each at blitz pace into `touchmove record` with
//! `broadcast_delay = "4s"` in the event file; the arbiter then gives board 2 its result at
//! the desk. Clients watch the arbiter's live stream (the desk's SSE, with the token), the
//! public stream of the round, the public PGN URL of board 1 and the arbiter's copy of its
//! file. Halfway through, the recorder is SIGKILLed and started again on the same journal;
//! both streams reconnect.
//!
//! What must hold:
//! - nothing public before its time: every ply and result the public is shown (stream
//!   events, and the snapshot it gets when it reconnects after the restart), and every text
//!   of the public PGN URL, was live at least the delay before;
//! - the public sees what the arbiter saw, the delay later: until the kill its stream is the
//!   arbiter's, event for event (moves, clocks, the game's state), each the delay after it
//!   came live (within a second); after the restart its moves go on from its snapshot with
//!   no ply skipped or repeated, and end with the arbiter's moves and result;
//! - once the games are over and the delay has passed, the public folder's files equal the
//!   arbiter's copy in `OUT.state/live`, byte for byte, and so does the PGN URL.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::recorder_support::{record_logged, state_dir, stop};
use crate::server_support::{SseEvent, take_sse_event};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;
use touchmove::bench::{fixture_games, plain_timeline, spawn_boards};
use touchmove::sim::virtual_board::timeline::Pace;

const DELAY: Duration = Duration::from_secs(4);
const PLIES: usize = 24;
const PACE: Pace = Pace {
    think_ms: 500,
    step_ms: 80,
};
/// How late a client may see what happened: the journal's commit, the SSE write, a poll.
const SEEN_WITHIN: Duration = Duration::from_millis(300);
/// How late the public may see something after its time.
const RELEASED_WITHIN: Duration = Duration::from_millis(1200);

/// Everything a client saw, with when.
type Seen<T> = Arc<Mutex<Vec<(Instant, T)>>>;

fn free_address() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// Reads the SSE stream at `path` (with `headers`) into `seen`, connecting again whenever it
/// ends, until the test ends; a `connected` marker event is noted at each connection.
async fn watch_stream(addr: SocketAddr, path: String, headers: String, seen: Seen<SseEvent>) {
    loop {
        let Ok(mut stream) = tokio::net::TcpStream::connect(addr).await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let request =
            format!("GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{headers}\r\n");
        if stream.write_all(request.as_bytes()).await.is_err() {
            continue;
        }
        let mut buffer = String::new();
        let mut head = true;
        let mut chunk = vec![0u8; 65536];
        loop {
            let n = match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            buffer.push_str(&String::from_utf8_lossy(&chunk[..n]));
            if head {
                let Some(end) = buffer.find("\r\n\r\n") else {
                    continue;
                };
                assert!(buffer.starts_with("HTTP/1.1 200"), "{path}: {buffer}");
                buffer.drain(..end + 4);
                head = false;
            }
            while let Some(event) = take_sse_event(&mut buffer) {
                seen.lock().unwrap().push((Instant::now(), event));
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `GET path` with `headers`: status and body.
async fn get(addr: SocketAddr, path: &str, headers: &str) -> Option<(u16, String)> {
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.ok()?;
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
    let body = &bytes[end + 4..];
    let status = head.split_whitespace().nth(1)?.parse().ok()?;
    let chunked = head.contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_vec()
    };
    Some((status, String::from_utf8_lossy(&body).into_owned()))
}

/// The body of a chunked answer (a chunk may end within a character).
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..line])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok());
        let rest = &body[line + 2..];
        match size {
            Some(size) if size > 0 && rest.len() >= size => {
                out.extend_from_slice(&rest[..size]);
                body = rest[size..].strip_prefix(b"\r\n").unwrap_or(&rest[size..]);
            }
            _ => break,
        }
    }
    out
}

/// Polls something every `every` into `seen`, keeping each new version with when it was
/// first seen.
async fn poll<F, Fut>(every: Duration, seen: Seen<String>, mut read: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<String>>,
{
    loop {
        if let Some(text) = read().await {
            let mut seen = seen.lock().unwrap();
            if seen.last().is_none_or(|(_, last)| *last != text) {
                seen.push((Instant::now(), text));
            }
        }
        tokio::time::sleep(every).await;
    }
}

/// The number of moves of a PGN text (a game without moves: 0).
fn plies_of(pgn: &str) -> usize {
    touchmove::record::pgn::read_games(pgn)
        .ok()
        .and_then(|g| g.last().map(|g| g.moves.len()))
        .unwrap_or(0)
}

/// When each ply of each board, and each result, was first seen live: from the live events,
/// and from a snapshot for plies first seen there (made while the recorder was down, they
/// came in with its restart).
#[derive(Default)]
struct LiveTimes {
    plies: BTreeMap<(u64, u64), Instant>,
    results: BTreeMap<u64, Instant>,
}

impl LiveTimes {
    fn note(&mut self, at: Instant, game: &Value) {
        let (Some(board), Some(ply)) = (game["board"].as_u64(), game["ply"].as_u64()) else {
            return;
        };
        for p in 1..=ply {
            self.plies.entry((board, p)).or_insert(at);
        }
        if game["result"].is_string() {
            self.results.entry(board).or_insert(at);
        }
    }

    fn from(events: &[(Instant, SseEvent)]) -> LiveTimes {
        let mut times = LiveTimes::default();
        for (at, e) in events {
            for game in games_of(e) {
                times.note(*at, &game);
            }
        }
        times
    }
}

/// The games' states an event gives: a snapshot's every game, another event's game.
fn games_of(e: &SseEvent) -> Vec<Value> {
    let data: Value = serde_json::from_str(&e.data).unwrap_or(Value::Null);
    if e.event == "snapshot" {
        data["games"].as_array().cloned().unwrap_or_default()
    } else {
        vec![data["game"].clone()]
    }
}

/// What the public and the arbiter must agree on in an event: its kind, the event itself,
/// and the game's state but for the age of the clock reading.
fn comparable(e: &SseEvent) -> (String, Value, Value) {
    let mut data: Value = serde_json::from_str(&e.data).unwrap_or(Value::Null);
    if let Some(clock) = data["game"]["clock"].as_object_mut() {
        clock.remove("age_ms");
    }
    (e.event.clone(), data["event"].clone(), data["game"].clone())
}

fn write_config(path: &Path, boards: &[touchmove::sim::virtual_board::VirtualBoard]) {
    let mut text = String::from(
        "event = \"Delay test\"\nsite = \"Here\"\nround = 1\ntime_control = \"180+2\"\n\
         broadcast_delay = \"4s\"\n",
    );
    for (i, b) in boards.iter().enumerate() {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"White, {}\" }}\n\
             black = {{ name = \"Black, {}\" }}\n",
            i + 1,
            b.path().display(),
            i + 1,
            i + 1
        ));
    }
    std::fs::write(path, text).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_public_sees_the_arbiters_stream_the_delay_later_and_nothing_before() {
    let dir = tempfile::tempdir().unwrap();
    let games = fixture_games();
    let scripts = (0..2)
        .map(|i| {
            let mut g = games[i].clone();
            g.moves_uci.truncate(PLIES);
            plain_timeline(&g, PACE)
        })
        .collect();
    let boards = spawn_boards(dir.path(), scripts, 1.0, 180_000, 2_000).unwrap();
    let config = dir.path().join("event.toml");
    write_config(&config, &boards);
    let out = dir.path().join("out");
    let log = dir.path().join("recorder.log");
    let addr = free_address();
    let listen = ["--listen".to_string(), addr.to_string()];
    let started = Instant::now();
    let mut recorder = record_logged(&config, &out, &listen, &log);
    let token_file = state_dir(&out).join("arbiter.token");
    let token = loop {
        if let Ok(t) = std::fs::read_to_string(&token_file) {
            break t.trim().to_string();
        }
        assert!(started.elapsed() < Duration::from_secs(20), "no token");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let bearer = format!("Authorization: Bearer {token}\r\n");

    let live: Seen<SseEvent> = Arc::default();
    let public: Seen<SseEvent> = Arc::default();
    let public_pgn: Seen<String> = Arc::default();
    let live_pgn: Seen<String> = Arc::default();
    let watchers = [
        tokio::spawn(watch_stream(
            addr,
            "/api/arbiter/round/1/stream".into(),
            bearer.clone(),
            live.clone(),
        )),
        tokio::spawn(watch_stream(
            addr,
            "/api/round/1/stream".into(),
            String::new(),
            public.clone(),
        )),
        tokio::spawn(poll(
            Duration::from_millis(50),
            public_pgn.clone(),
            move || async move {
                match get(addr, "/round/1/game/1.pgn", "").await {
                    Some((200, body)) => Some(body),
                    _ => None,
                }
            },
        )),
        tokio::spawn({
            let file = state_dir(&out).join("live/round-1/game-1.pgn");
            poll(Duration::from_millis(25), live_pgn.clone(), move || {
                let file = file.clone();
                async move { std::fs::read_to_string(&file).ok() }
            })
        }),
    ];

    // The kill, once the public has seen a few moves.
    let game_time = Duration::from_millis(PLIES as u64 * 660);
    tokio::time::sleep(game_time * 2 / 5).await;
    let killed = Instant::now();
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    tokio::time::sleep(Duration::from_millis(700)).await;
    let restarted = Instant::now();
    let recorder = record_logged(&config, &out, &listen, &log);

    for b in &boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .expect("the boards finish their games");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let answer = touchmove_post(
        addr,
        "/api/arbiter/action",
        &bearer,
        r#"{"round":1,"board":2,"action":{"action":"set_result","result":"0-1","reason":"resignation"}}"#,
    )
    .await;
    assert!(answer.contains("\"ok\":true"), "{answer}");
    tokio::time::sleep(DELAY + Duration::from_secs(2)).await;

    let live_events = live.lock().unwrap().clone();
    let public_events = public.lock().unwrap().clone();
    let times = LiveTimes::from(&live_events);
    let log_text = std::fs::read_to_string(&log).unwrap_or_default();

    // Nothing public before its time.
    for (at, e) in &public_events {
        for game in games_of(e) {
            let (Some(board), Some(ply)) = (game["board"].as_u64(), game["ply"].as_u64()) else {
                continue;
            };
            if ply > 0 {
                let live_at = times.plies.get(&(board, ply)).copied();
                assert!(
                    live_at.is_some_and(|l| *at + SEEN_WITHIN >= l + DELAY),
                    "board {board} ply {ply} public at {:?} ({}), live at {:?}: before its \
                     time\n{log_text}",
                    *at - started,
                    e.event,
                    live_at.map(|l| l - started)
                );
            }
            if game["result"].is_string() {
                let live_at = times.results[&board];
                assert!(
                    *at + SEEN_WITHIN >= live_at + DELAY,
                    "board {board}'s result public before its time"
                );
            }
        }
    }
    // A text shown after the restart may be a state the arbiter's file, rewritten four times
    // a second, never had: the game after each step the journal rebuilds.
    for (at, text) in public_pgn.lock().unwrap().iter() {
        let ply = plies_of(text) as u64;
        if ply > 0 {
            let live_at = times.plies[&(1, ply)];
            assert!(
                *at + SEEN_WITHIN >= live_at + DELAY,
                "board 1's PGN with {ply} plies public at {:?}, live at {:?}",
                *at - started,
                live_at - started
            );
        }
        assert!(
            *at > killed || live_pgn.lock().unwrap().iter().any(|(_, t)| t == text),
            "the public PGN is a text the arbiter had:\n{text}"
        );
    }

    // Until the kill, the public stream is the arbiter's, event for event, the delay later.
    let before_kill = |events: &[(Instant, SseEvent)]| -> Vec<(Instant, SseEvent)> {
        events
            .iter()
            .filter(|(at, e)| *at < killed && e.event != "snapshot")
            .cloned()
            .collect()
    };
    let live_before = before_kill(&live_events);
    let public_before = before_kill(&public_events);
    assert!(
        public_before
            .iter()
            .filter(|(_, e)| e.event == "move")
            .count()
            >= 4,
        "the public saw moves before the kill"
    );
    // The live stream may have connected after the boards' first events (then in its
    // snapshot): the comparison starts at its first event, and what the public saw before
    // holds no move.
    let first = public_before
        .iter()
        .position(|(_, e)| comparable(e) == comparable(&live_before[0].1))
        .expect("the arbiter's first event reaches the public");
    for (_, e) in &public_before[..first] {
        assert!(
            games_of(e).iter().all(|g| g["ply"] == 0),
            "a move before the arbiter's stream began: {e:?}"
        );
    }
    let mut lags = Vec::new();
    for (i, (public_at, e)) in public_before[first..].iter().enumerate() {
        let (live_at, live_event) = &live_before[i];
        assert_eq!(comparable(e), comparable(live_event), "event {i}");
        let after = *public_at - *live_at;
        assert!(
            after + SEEN_WITHIN >= DELAY && after <= DELAY + RELEASED_WITHIN,
            "event {i} ({}) public {after:?} after it was live",
            e.event
        );
        lags.push(after);
    }
    eprintln!(
        "{} public events before the kill, each {:?} to {:?} after the arbiter's",
        lags.len(),
        lags.iter().min(),
        lags.iter().max()
    );
    let due = live_before
        .iter()
        .filter(|(at, _)| *at + DELAY + RELEASED_WITHIN < killed)
        .count();
    assert!(
        public_before.len() - first >= due,
        "{} public events before the kill, {due} were due",
        public_before.len() - first
    );

    // After the restart: the public's moves go on from its snapshot, none skipped or
    // repeated, and end as the arbiter's.
    let mut shown: BTreeMap<u64, u64> = BTreeMap::new();
    for (at, e) in public_events.iter().filter(|(at, _)| *at >= restarted) {
        for game in games_of(e) {
            let (Some(board), Some(ply)) = (game["board"].as_u64(), game["ply"].as_u64()) else {
                continue;
            };
            if e.event == "move" {
                let before = shown.get(&board).copied().unwrap_or(0);
                assert_eq!(ply, before + 1, "board {board} at {:?}", *at - started);
            }
            shown.insert(board, ply);
        }
    }
    for board in [1u64, 2] {
        let path = format!("/api/arbiter/round/1/game/{board}");
        let (_, live_game) = get(addr, &path, &bearer).await.expect("the live game");
        let (_, public_game) = get(addr, &format!("/api/round/1/game/{board}"), "")
            .await
            .expect("the public game");
        let live_game: Value = serde_json::from_str(&live_game).unwrap();
        let public_game: Value = serde_json::from_str(&public_game).unwrap();
        assert_eq!(live_game["moves"], public_game["moves"], "board {board}");
        assert_eq!(live_game["result"], public_game["result"], "board {board}");
        assert_eq!(live_game["ply"].as_u64(), Some(PLIES as u64));
        assert_eq!(shown.get(&board).copied(), Some(PLIES as u64));
    }
    assert_eq!(times.results.len(), 1, "board 2 has its result");

    // The end: the public files are the arbiter's.
    for name in ["game-1.pgn", "game-2.pgn", "games.pgn", "index.json"] {
        let arbiter = std::fs::read(state_dir(&out).join("live/round-1").join(name)).unwrap();
        let public = std::fs::read(out.join("round-1").join(name)).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&public),
            String::from_utf8_lossy(&arbiter),
            "{name}"
        );
    }
    let (_, url) = get(addr, "/round/1/game/1.pgn", "").await.unwrap();
    let file = std::fs::read_to_string(state_dir(&out).join("live/round-1/game-1.pgn")).unwrap();
    assert_eq!(url, file);
    assert_eq!(plies_of(&file), PLIES);

    for w in watchers {
        w.abort();
    }
    stop(recorder);
}

/// `POST path` with `headers` and a JSON body: the answer's body.
async fn touchmove_post(addr: SocketAddr, path: &str, headers: &str, body: &str) -> String {
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\n{headers}Content-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.unwrap();
    String::from_utf8_lossy(&bytes).into_owned()
}
