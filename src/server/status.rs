//! What the operator must see about a process's links to the outside: the lichess push (is
//! it failing, since when, how many retries), the cluster forwarder's backlog (entries not
//! yet acked, age of the oldest) and the web server's connections (open, refused, timed out).
//!
//! The parts register themselves with the [`Status`] of the process's feed
//! ([`Feed::status`](super::Feed::status)); the web server answers it as JSON at
//! `/api/status` and as text at `/status`, the arbiter desk shows it, and `touchmove record`
//! prints it as its status line on the terminal ([`StatusReport::line`]).

use std::sync::{Arc, Mutex, MutexGuard};

use serde::Serialize;

use super::connections::{ConnectionCounts, Connections};
use super::lichess::PushMonitor;

/// A cluster backlog older than this is a problem even while the cluster answers.
pub const SLOW_BACKLOG_MS: u64 = 5_000;

/// What has not reached the event's cluster yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ClusterBacklog {
    /// Journal entries not acked by the stream.
    pub entries: u64,
    /// How long the oldest of them has waited (milliseconds).
    pub oldest_ms: u64,
    /// True while the cluster answers.
    pub connected: bool,
    /// The last journal sequence number acked.
    pub acked: u64,
}

/// Reads the cluster backlog now.
pub type BacklogSource = Box<dyn Fn() -> ClusterBacklog + Send + Sync>;

/// The lichess push as the operator sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LichessStatus {
    /// The lichess round pushed to.
    pub round_id: String,
    /// True from a failed push until one is accepted again.
    pub failing: bool,
    /// When the pushes started failing (milliseconds since 1970).
    pub failing_since_unix_ms: Option<u64>,
    /// Failed attempts since the last accepted push.
    pub retries: u64,
    /// The last failure.
    pub last_error: Option<String>,
    /// Versions of the round accepted so far.
    pub accepted: u64,
    /// Requests made so far.
    pub requests: u64,
}

/// Everything at one moment (the body of `/api/status`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusReport {
    /// Milliseconds since 1970 when the report was made.
    pub now_unix_ms: u64,
    /// The lichess push, when the process pushes.
    pub lichess: Option<LichessStatus>,
    /// The cluster forwarder's backlog, when the process forwards to a cluster.
    pub cluster: Option<ClusterBacklog>,
    /// The web server's connections, when it runs.
    pub web: Option<ConnectionCounts>,
    /// What needs the operator's attention, one sentence each (empty: all well).
    pub problems: Vec<String>,
}

/// The registry the parts report to; one per feed.
#[derive(Default)]
pub struct Status {
    lichess: Mutex<Option<PushMonitor>>,
    cluster: Mutex<Option<BacklogSource>>,
    web: Mutex<Option<Arc<Connections>>>,
}

impl std::fmt::Debug for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Status").finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Status {
    /// Shows this lichess pusher (`None`: no push any more).
    pub fn set_lichess(&self, monitor: Option<PushMonitor>) {
        *lock(&self.lichess) = monitor;
    }

    /// Shows the cluster backlog read by `source` (`None`: no cluster any more).
    pub fn set_cluster(&self, source: Option<BacklogSource>) {
        *lock(&self.cluster) = source;
    }

    /// Shows these web server connections (`None`: the server stopped).
    pub fn set_web(&self, connections: Option<Arc<Connections>>) {
        *lock(&self.web) = connections;
    }

    /// Everything now.
    pub fn report(&self) -> StatusReport {
        let lichess = lock(&self.lichess).as_ref().map(|m| {
            let stats = m.stats();
            LichessStatus {
                round_id: m.round_id().to_string(),
                failing: stats.failing_since_unix_ms.is_some(),
                failing_since_unix_ms: stats.failing_since_unix_ms,
                retries: stats.retries,
                last_error: stats.last_error,
                accepted: stats.accepted,
                requests: stats.requests,
            }
        });
        let cluster = lock(&self.cluster).as_ref().map(|source| source());
        let web = lock(&self.web).as_ref().map(|c| c.counts());
        let mut report = StatusReport {
            now_unix_ms: unix_ms(),
            lichess,
            cluster,
            web,
            problems: Vec::new(),
        };
        report.problems = report.find_problems();
        report
    }
}

impl StatusReport {
    fn find_problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if let Some(l) = self.lichess.as_ref().filter(|l| l.failing) {
            let since = l
                .failing_since_unix_ms
                .map(|t| {
                    format!(
                        " since {} ({} ago)",
                        clock_time(t),
                        seconds(self.now_unix_ms.saturating_sub(t))
                    )
                })
                .unwrap_or_default();
            problems.push(format!(
                "lichess push to round {} FAILING{since}, {} retries; last error: {}",
                l.round_id,
                l.retries,
                l.last_error.as_deref().unwrap_or("unknown")
            ));
        }
        if let Some(c) = self
            .cluster
            .filter(|c| c.entries > 0 && (!c.connected || c.oldest_ms >= SLOW_BACKLOG_MS))
        {
            problems.push(format!(
                "cluster: {} journal entries not forwarded, the oldest waiting {} ({}); \
                 recording goes on and they are sent in order when the cluster answers",
                c.entries,
                seconds(c.oldest_ms),
                if c.connected {
                    "the stream is slow"
                } else {
                    "the cluster is unreachable"
                }
            ));
        }
        if let Some(w) = self.web.filter(|w| w.open >= w.max_open) {
            problems.push(format!(
                "web server full: {} connections open (the cap), {} refused so far",
                w.open, w.refused
            ));
        }
        problems
    }

    /// One line for the terminal: the problems, or that all is well, with the counts.
    pub fn line(&self) -> String {
        let mut parts = Vec::new();
        if let Some(l) = self.lichess.as_ref().filter(|l| !l.failing) {
            parts.push(format!(
                "lichess round {}: {} pushes accepted",
                l.round_id, l.accepted
            ));
        }
        if let Some(c) = self
            .cluster
            .filter(|c| !(c.entries > 0 && (!c.connected || c.oldest_ms >= SLOW_BACKLOG_MS)))
        {
            parts.push(if c.entries == 0 {
                format!("cluster: all forwarded (up to entry {})", c.acked)
            } else {
                format!(
                    "cluster: {} entries in flight, the oldest {}",
                    c.entries,
                    seconds(c.oldest_ms)
                )
            });
        }
        if let Some(w) = self.web {
            parts.push(format!(
                "web: {} open of {}, {} accepted, {} refused, {} timed out",
                w.open,
                w.max_open,
                w.accepted,
                w.refused,
                w.header_timeouts + w.idle_timeouts
            ));
        }
        let head = if self.problems.is_empty() {
            "all well".to_string()
        } else {
            self.problems.join(" · ")
        };
        if parts.is_empty() {
            format!("status: {head}")
        } else {
            format!("status: {head} · {}", parts.join(" · "))
        }
    }
}

/// Milliseconds since 1970 now.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// `12:03:07 UTC` of a time in milliseconds since 1970.
fn clock_time(unix_ms: u64) -> String {
    let s = (unix_ms / 1000) % 86_400;
    format!("{:02}:{:02}:{:02} UTC", s / 3600, s / 60 % 60, s % 60)
}

/// `4.2 s` of milliseconds.
fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(cluster: ClusterBacklog) -> StatusReport {
        let mut report = StatusReport {
            now_unix_ms: 1_000_000,
            lichess: None,
            cluster: Some(cluster),
            web: None,
            problems: Vec::new(),
        };
        report.problems = report.find_problems();
        report
    }

    #[test]
    fn a_waiting_backlog_is_a_problem_a_moving_one_is_not() {
        let moving = report(ClusterBacklog {
            entries: 3,
            oldest_ms: 40,
            connected: true,
            acked: 10,
        });
        assert!(moving.problems.is_empty(), "{:?}", moving.problems);
        assert!(
            moving.line().starts_with("status: all well"),
            "{}",
            moving.line()
        );
        let stuck = report(ClusterBacklog {
            entries: 120,
            oldest_ms: 42_000,
            connected: false,
            acked: 10,
        });
        assert_eq!(stuck.problems.len(), 1);
        assert!(
            stuck.line().contains("120 journal entries not forwarded")
                && stuck.line().contains("42.0 s")
                && stuck.line().contains("unreachable"),
            "{}",
            stuck.line()
        );
    }

    #[test]
    fn clock_times_are_utc_of_the_day() {
        assert_eq!(
            clock_time((12 * 3600 + 3 * 60 + 7) * 1000 + 86_400_000),
            "12:03:07 UTC"
        );
    }
}
