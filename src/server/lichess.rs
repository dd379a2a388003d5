//! Pushing a round to a lichess broadcast (`touchmove record --lichess-round ID
//! --lichess-token-file F`).
//!
//! The documented contract (lichess API spec `broadcast-round-broadcastRoundId-push`):
//! `POST {base}/api/broadcast/round/{id}/push` with an 8-character round id, an OAuth2 bearer
//! token with scope `study:write`, a `text/plain` body of up to 100 PGN games separated by a
//! blank line; 200 with a JSON report per game, 400 with `{"error": …}`. lichess matches each
//! game to a chapter by `Event`, `Site`, `Round "r.b"` and the players, so the PGN must keep
//! those tags stable. The general API rules apply: one request at a time, and after a 429 wait
//! a full minute.
//!
//! The pusher always sends the whole round (never a diff), so coalescing many moves into one
//! push loses nothing, and a failed push is retried with the latest text until it is accepted.
//! The HTTP requests are made in-process by `reqwest` over rustls (lichess is HTTPS-only): no
//! OpenSSL, no system library, no subprocess; the token is only ever in the `Authorization`
//! header.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Most games lichess accepts in one push.
pub const MAX_GAMES_PER_PUSH: usize = 100;

/// The public lichess server.
pub const LICHESS: &str = "https://lichess.org";

/// How the pusher talks to lichess.
#[derive(Debug, Clone)]
pub struct PusherConfig {
    /// Base URL, `https://lichess.org` in production.
    pub base_url: String,
    /// The broadcast round id (8 characters).
    pub round_id: String,
    /// Token with scope `study:write` of a contributor of the broadcast.
    pub token: String,
    /// Least time between the starts of two pushes (coalescing window).
    pub min_interval: Duration,
    /// Wait after a 429 answer.
    pub rate_limit_backoff: Duration,
    /// First wait after a network error or a 5xx answer (doubles up to `rate_limit_backoff`).
    pub error_backoff: Duration,
    /// Time limit of one request.
    pub request_timeout: Duration,
}

impl PusherConfig {
    /// The production settings for `round_id` with `token`.
    pub fn new(round_id: &str, token: &str) -> PusherConfig {
        PusherConfig {
            base_url: LICHESS.to_string(),
            round_id: round_id.to_string(),
            token: token.trim().to_string(),
            min_interval: Duration::from_secs(1),
            rate_limit_backoff: Duration::from_secs(60),
            error_backoff: Duration::from_secs(1),
            request_timeout: Duration::from_secs(30),
        }
    }
}

/// Why the pusher could not start.
#[derive(Debug, thiserror::Error)]
pub enum PushError {
    /// The round id is not what lichess issues.
    #[error(
        "lichess round id {0:?} is not 8 letters or digits; copy it from the round's URL \
         (https://lichess.org/broadcast/…/…/ID)"
    )]
    RoundId(String),
    /// The token is empty.
    #[error(
        "the lichess token is empty; create one with scope study:write at https://lichess.org/account/oauth/token"
    )]
    EmptyToken,
    /// The HTTP client could not be set up.
    #[error("{0}")]
    Client(String),
    /// The token file could not be read.
    #[error("cannot read the lichess token file {path}: {source}")]
    TokenFile {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// What the pusher has done so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushStats {
    /// Requests made.
    pub requests: u64,
    /// Versions of the round accepted by lichess.
    pub accepted: u64,
    /// Answers 429 received.
    pub rate_limited: u64,
    /// Requests that failed (network, 4xx other than 429, 5xx).
    pub failed: u64,
    /// The last failure, for the operator.
    pub last_error: Option<String>,
    /// When the pushes started failing (milliseconds since 1970): the first failure after
    /// the last accepted push; `None` while pushes are accepted.
    pub failing_since_unix_ms: Option<u64>,
    /// Failed attempts since the last accepted push (each one is retried).
    pub retries: u64,
}

#[derive(Debug, Default)]
struct Pending {
    /// Latest round PGN and its version number.
    latest: Option<(u64, Arc<str>)>,
    /// Version lichess last accepted (or rejected as invalid, which retrying cannot fix).
    settled: u64,
    closing: bool,
    stats: PushStats,
}

#[derive(Debug)]
struct Shared {
    pending: Mutex<Pending>,
    wake: Notify,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Pushes the latest PGN of a round to lichess: at most one request in flight, coalescing,
/// backing off on 429 and on errors, and retrying until the latest version is accepted.
#[derive(Debug)]
pub struct Pusher {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
    round_id: String,
}

/// Reads a [`Pusher`]'s state from elsewhere (a status page, the terminal status line).
#[derive(Debug, Clone)]
pub struct PushMonitor {
    shared: Arc<Shared>,
    round_id: String,
}

impl PushMonitor {
    /// The lichess round pushed to.
    pub fn round_id(&self) -> &str {
        &self.round_id
    }

    /// What the pusher has done so far.
    pub fn stats(&self) -> PushStats {
        self.shared.lock().stats.clone()
    }
}

impl Pusher {
    /// Reads the token from `token_file` and starts pushing to the lichess round `round_id`
    /// on the server at `base_url` ([`LICHESS`] but in tests).
    pub fn from_token_file(
        base_url: &str,
        round_id: &str,
        token_file: &std::path::Path,
    ) -> Result<Pusher, PushError> {
        let token = std::fs::read_to_string(token_file).map_err(|source| PushError::TokenFile {
            path: token_file.display().to_string(),
            source,
        })?;
        Pusher::start(PusherConfig {
            base_url: base_url.to_string(),
            ..PusherConfig::new(round_id, &token)
        })
    }

    /// Starts the push task (needs a tokio runtime).
    pub fn start(config: PusherConfig) -> Result<Pusher, PushError> {
        let id_ok = config.round_id.len() == 8
            && config.round_id.bytes().all(|b| b.is_ascii_alphanumeric());
        if !id_ok {
            return Err(PushError::RoundId(config.round_id));
        }
        if config.token.is_empty() {
            return Err(PushError::EmptyToken);
        }
        let shared = Arc::new(Shared {
            pending: Mutex::new(Pending::default()),
            wake: Notify::new(),
        });
        let client = client(&config).map_err(PushError::Client)?;
        let round_id = config.round_id.clone();
        let task = tokio::spawn(run(config, client, Arc::clone(&shared)));
        Ok(Pusher {
            shared,
            task,
            round_id,
        })
    }

    /// Queues the round's current PGN; replaces any version not yet sent.
    pub fn push(&self, round_pgn: String) {
        {
            let mut pending = self.shared.lock();
            let version = pending.latest.as_ref().map_or(0, |(v, _)| *v) + 1;
            pending.latest = Some((version, round_pgn.into()));
        }
        self.shared.wake.notify_one();
    }

    /// What has been done so far.
    pub fn stats(&self) -> PushStats {
        self.shared.lock().stats.clone()
    }

    /// A view of this pusher's state for status pages, valid as long as it is kept.
    pub fn monitor(&self) -> PushMonitor {
        PushMonitor {
            shared: Arc::clone(&self.shared),
            round_id: self.round_id.clone(),
        }
    }

    /// Sends what is still pending (waiting at most `limit`), then stops.
    pub async fn finish(self, limit: Duration) -> PushStats {
        self.shared.lock().closing = true;
        self.shared.wake.notify_one();
        let mut task = self.task;
        if tokio::time::timeout(limit, &mut task).await.is_err() {
            task.abort();
        }
        self.shared.lock().stats.clone()
    }
}

/// The push loop: wait for a version newer than the settled one, send it, handle the answer.
async fn run(config: PusherConfig, client: reqwest::Client, shared: Arc<Shared>) {
    let mut last_start: Option<Instant> = None;
    let mut error_wait = config.error_backoff;
    loop {
        let job = {
            let pending = shared.lock();
            match &pending.latest {
                Some((version, text)) if *version > pending.settled => {
                    Some((*version, Arc::clone(text)))
                }
                _ if pending.closing => return,
                _ => None,
            }
        };
        let Some((version, text)) = job else {
            shared.wake.notified().await;
            continue;
        };
        if let Some(start) = last_start {
            tokio::time::sleep_until((start + config.min_interval).into()).await;
        }
        // Pick up anything that arrived while waiting: the newest text supersedes.
        let (version, text) = {
            let pending = shared.lock();
            pending
                .latest
                .as_ref()
                .map_or((version, text), |(v, t)| (*v, Arc::clone(t)))
        };
        last_start = Some(Instant::now());
        let mut outcome = Outcome::Accepted;
        for chunk in chunks(&text, MAX_GAMES_PER_PUSH) {
            outcome = send(&config, &client, &chunk).await;
            shared.lock().stats.requests += 1;
            if outcome != Outcome::Accepted {
                break;
            }
        }
        if let Outcome::RateLimited | Outcome::Rejected(_) | Outcome::Failed(_) = &outcome {
            tracing::warn!(round = %config.round_id, "lichess push: {outcome:?}");
        }
        let wait = {
            let mut pending = shared.lock();
            if outcome != Outcome::Accepted {
                pending.stats.retries += 1;
                pending
                    .stats
                    .failing_since_unix_ms
                    .get_or_insert_with(unix_ms);
            }
            match outcome {
                Outcome::Accepted => {
                    pending.settled = pending.settled.max(version);
                    pending.stats.accepted += 1;
                    pending.stats.failing_since_unix_ms = None;
                    pending.stats.retries = 0;
                    error_wait = config.error_backoff;
                    None
                }
                Outcome::RateLimited => {
                    pending.stats.rate_limited += 1;
                    pending.stats.last_error = Some("lichess answered 429 (rate limited)".into());
                    Some(config.rate_limit_backoff)
                }
                Outcome::Rejected(reason) => {
                    // Retrying the same text cannot succeed; the next move's version will
                    // be pushed when it comes.
                    pending.settled = pending.settled.max(version);
                    pending.stats.failed += 1;
                    pending.stats.last_error = Some(reason);
                    None
                }
                Outcome::Failed(reason) => {
                    pending.stats.failed += 1;
                    pending.stats.last_error = Some(reason);
                    let wait = error_wait;
                    error_wait = (error_wait * 2).min(config.rate_limit_backoff);
                    Some(wait)
                }
            }
        };
        if let Some(wait) = wait {
            tokio::time::sleep(wait).await;
        }
    }
}

/// Milliseconds since 1970 now.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Outcome {
    Accepted,
    RateLimited,
    /// 4xx other than 429: the request itself is wrong (bad token, bad PGN).
    Rejected(String),
    /// Network error or 5xx: worth retrying.
    Failed(String),
}

/// Splits a multi-game PGN into texts of at most `max` games each.
fn chunks(pgn: &str, max: usize) -> Vec<String> {
    let mut games: Vec<String> = Vec::new();
    let mut in_movetext = false;
    for line in pgn.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && (in_movetext || games.is_empty()) {
            games.push(String::new());
            in_movetext = false;
        } else if !trimmed.is_empty() && !trimmed.starts_with('[') {
            in_movetext = true;
        }
        if let Some(game) = games.last_mut() {
            game.push_str(line);
            game.push('\n');
        }
    }
    games
        .chunks(max.max(1))
        .map(|group| {
            group
                .iter()
                .map(|g| g.trim_end())
                .collect::<Vec<_>>()
                .join("\n\n")
                + "\n"
        })
        .collect()
}

/// The HTTP client of a pusher: rustls with the bundled web PKI roots (no OpenSSL, no
/// system certificate store), the request time limit and our user agent.
fn client(config: &PusherConfig) -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .user_agent(concat!("touchmove/", env!("CARGO_PKG_VERSION")))
        .timeout(config.request_timeout.max(Duration::from_millis(1)))
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

/// One push: the answer's status decides what happens next. The token goes only into the
/// `Authorization` header, marked sensitive, so it is in no message and no log.
async fn send(config: &PusherConfig, client: &reqwest::Client, body: &str) -> Outcome {
    let url = format!(
        "{}/api/broadcast/round/{}/push",
        config.base_url.trim_end_matches('/'),
        config.round_id
    );
    let answer = client
        .post(&url)
        .bearer_auth(&config.token)
        .header(reqwest::header::CONTENT_TYPE, "text/plain; charset=utf-8")
        .body(body.to_string())
        .send()
        .await;
    let response = match answer {
        Ok(response) => response,
        Err(e) => {
            let why = if e.is_timeout() {
                format!("no answer within {:?}", config.request_timeout)
            } else {
                // The error's source chain says what failed (DNS, refused, TLS) without the URL's
                // query or any header.
                let e = e.without_url();
                let mut why = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(s) = source {
                    why.push_str(&format!(": {s}"));
                    source = s.source();
                }
                why
            };
            return Outcome::Failed(format!("no answer from {}: {why}", config.base_url));
        }
    };
    let status = response.status().as_u16();
    match status {
        200..=299 => Outcome::Accepted,
        429 => Outcome::RateLimited,
        400..=499 => {
            let answer = response.text().await.unwrap_or_default();
            Outcome::Rejected(format!(
                "lichess refused the push ({status}): {}",
                answer.trim()
            ))
        }
        _ => Outcome::Failed(format!("lichess answered {status}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_split_between_games_only() {
        let game =
            |n: u32| format!("[Event \"E\"]\n[Round \"1.{n}\"]\n\n1. e4 {{[%clk 0:01:00]}} *\n");
        let pgn: String = (1..=5).map(game).collect::<Vec<_>>().join("\n");
        let parts = chunks(&pgn, 2);
        assert_eq!(parts.len(), 3);
        assert!(parts[0].contains("1.1") && parts[0].contains("1.2") && !parts[0].contains("1.3"));
        assert!(parts[2].contains("1.5"));
        assert_eq!(chunks(&pgn, 100).len(), 1);
    }

    #[test]
    fn bad_round_ids_are_refused() {
        let config = PusherConfig::new("abc/../x", "t");
        assert!(matches!(
            tokio::runtime::Runtime::new()
                .expect("runtime")
                .block_on(async { Pusher::start(config) }),
            Err(PushError::RoundId(_))
        ));
    }
}
