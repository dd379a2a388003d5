//! A minimal HTTP/1.1 client over loopback for the server tests: raw requests (so tests can
//! send what a browser never would) and an SSE reader.

// Several test binaries include this module, each using a part of it.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use touchmove::server::{self, ArbiterSink, Feed, ServerHandle};

/// A parsed response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Starts a server on a free port with a fixed token.
pub async fn start(feed: Arc<Feed>, sink: Option<ArbiterSink>) -> ServerHandle {
    server::serve(
        "127.0.0.1:0".parse().expect("addr"),
        feed,
        sink,
        TOKEN.to_string(),
    )
    .await
    .expect("server starts")
}

pub const TOKEN: &str = "test-token-0123456789";

/// Sends raw bytes and reads the whole response (the request should say
/// `Connection: close`).
pub async fn raw(addr: SocketAddr, request: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request).await.expect("write");
    let mut bytes = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut bytes)).await;
    parse(&bytes)
}

fn parse(bytes: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(bytes);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_string()
    };
    Reply {
        status,
        headers,
        body,
    }
}

fn dechunk(mut body: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = body.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        body = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// GET with extra header lines.
pub async fn get(addr: SocketAddr, path: &str, headers: &[(&str, &str)]) -> Reply {
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    raw(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: x\r\n{extra}Connection: close\r\n\r\n").as_bytes(),
    )
    .await
}

/// POST a body with extra header lines.
pub async fn post(addr: SocketAddr, path: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    raw(
        addr,
        format!(
            "POST {path} HTTP/1.1\r\nHost: x\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
}

/// One SSE event as received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub id: Option<u64>,
    pub event: String,
    pub data: String,
}

/// An open SSE connection.
pub struct Sse {
    stream: TcpStream,
    buffer: String,
    pub status: u16,
}

impl Sse {
    /// Opens `path` with optional `Last-Event-ID`.
    pub async fn open(addr: SocketAddr, path: &str, last_event_id: Option<u64>) -> Sse {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(sse_request(path, last_event_id).as_bytes())
            .await
            .expect("write");
        let mut sse = Sse {
            stream,
            buffer: String::new(),
            status: 0,
        };
        while !sse.buffer.contains("\r\n\r\n") {
            sse.fill().await;
        }
        let (head, rest) = sse.buffer.split_once("\r\n\r\n").expect("head");
        sse.status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        sse.buffer = rest.to_string();
        sse
    }

    async fn fill(&mut self) {
        let mut chunk = [0u8; 16384];
        let n = tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut chunk))
            .await
            .expect("SSE data within 10 s")
            .expect("read");
        assert!(n > 0, "SSE stream closed");
        self.buffer.push_str(&String::from_utf8_lossy(&chunk[..n]));
    }

    /// The next event (chunk framing lines and comments skipped).
    pub async fn next(&mut self) -> SseEvent {
        loop {
            if let Some(event) = self.take_event() {
                return event;
            }
            self.fill().await;
        }
    }

    fn take_event(&mut self) -> Option<SseEvent> {
        take_sse_event(&mut self.buffer)
    }
}

/// The GET request of an SSE stream at `path`, resuming after `last_event_id`.
pub fn sse_request(path: &str, last_event_id: Option<u64>) -> String {
    let resume = last_event_id
        .map(|id| format!("Last-Event-ID: {id}\r\n"))
        .unwrap_or_default();
    format!("GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{resume}\r\n")
}

/// Takes the next whole event out of the SSE text in `buffer` (blocks without an `event:`
/// line, such as comments, are dropped); `None` until a whole event has arrived.
pub fn take_sse_event(buffer: &mut String) -> Option<SseEvent> {
    loop {
        let end = buffer.find("\n\n")?;
        let block: String = buffer[..end].to_string();
        buffer.drain(..end + 2);
        let mut event = SseEvent {
            id: None,
            event: String::new(),
            data: String::new(),
        };
        for line in block.lines() {
            if let Some(v) = line.strip_prefix("id: ") {
                event.id = v.trim().parse().ok();
            } else if let Some(v) = line.strip_prefix("event: ") {
                event.event = v.trim().to_string();
            } else if let Some(v) = line.strip_prefix("data: ") {
                event.data = v.to_string();
            }
        }
        if !event.event.is_empty() {
            return Some(event);
        }
    }
}
