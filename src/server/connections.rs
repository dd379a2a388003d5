//! The web server's connections: a cap on how many are open, a time limit on a request's head
//! and on a connection where nothing moves, and the counts the operator sees.
//!
//! The web server runs in the process that holds the serial ports, the journal and the PGN
//! files. Every connection costs a file descriptor; without a cap, a client opening more
//! sockets than the process's file limit would leave none for the next PGN file or a board
//! that reconnects, and recording would stop. So the server keeps at most
//! [`ConnectionLimits::max_open`] connections, below the file limit by
//! [`RESERVED_DESCRIPTORS`]; one more is answered `503` and closed at once (counted as
//! refused). A connection must send a request's head within
//! [`ConnectionLimits::header_timeout`] (also the wait for the next request on a kept-alive
//! one), and one on which no byte moved either way for [`ConnectionLimits::idle_timeout`] (a
//! client that stopped reading its event stream) is closed.
//!
//! Spectators' event streams stay open for hours; the arbiter's requests last a moment. So
//! event streams may take all slots but [`ConnectionLimits::kept_for_requests`]: one more is
//! answered 503, and the arbiter's desk still gets through when the spectators are many.

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use serde::Serialize;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tokio::time::{Instant, Sleep};

/// File descriptors kept for everything but web connections: serial ports, the journal, PGN
/// files being rewritten, the arbiter's socket, the cluster and lichess connections.
pub const RESERVED_DESCRIPTORS: usize = 1024;

/// Most connections open at once when the file limit would allow more (each costs memory).
pub const DEFAULT_MAX_OPEN: usize = 50_000;

/// Slots of the cap kept for requests other than event streams (the arbiter's), at most half
/// the cap.
pub const KEPT_FOR_REQUESTS: usize = 16;

/// Default of [`ConnectionLimits::header_timeout`].
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);

/// Default of [`ConnectionLimits::idle_timeout`]: longer than the event streams' keep-alive
/// (15 s) and the arbiter API's wait for the recorder (10 s).
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// The answer to a connection beyond the cap, written without waiting.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\n\
Retry-After: 10\r\nConnection: close\r\nContent-Length: 44\r\n\r\n\
too many connections; try again in a moment\n";

/// How long accepting pauses when the process has no file descriptor left.
const NO_DESCRIPTOR_PAUSE: Duration = Duration::from_millis(100);

/// Limits of a web server's connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// Most connections open at once; one more is answered 503 and closed.
    pub max_open: usize,
    /// A request's head (and, on a kept-alive connection, the next request's) must arrive
    /// within this.
    pub header_timeout: Duration,
    /// A connection on which no byte moved either way for this long is closed.
    pub idle_timeout: Duration,
}

impl ConnectionLimits {
    /// Slots that event streams leave for other requests: [`KEPT_FOR_REQUESTS`], at most half
    /// the cap.
    pub fn kept_for_requests(&self) -> usize {
        KEPT_FOR_REQUESTS.min(self.max_open / 2)
    }
}

impl Default for ConnectionLimits {
    /// The cap that the process's file limit allows ([`max_open_for_file_limit`]), and the
    /// default timeouts.
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            max_open: max_open_for_file_limit(open_file_limit().map(|(soft, _)| soft)),
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
        }
    }
}

/// The connection cap a file limit of `soft` descriptors allows: the limit less
/// [`RESERVED_DESCRIPTORS`], at most [`DEFAULT_MAX_OPEN`], at least 16 (unknown limit: 1024).
pub fn max_open_for_file_limit(soft: Option<u64>) -> usize {
    let soft = soft.map_or(2 * RESERVED_DESCRIPTORS, |s| {
        usize::try_from(s).unwrap_or(usize::MAX)
    });
    soft.saturating_sub(RESERVED_DESCRIPTORS)
        .clamp(16, DEFAULT_MAX_OPEN)
}

/// The process's file limit (soft, hard), if it can be read.
pub fn open_file_limit() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct it is given.
    let read = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (read == 0).then_some((limit.rlim_cur, limit.rlim_max))
}

/// Raises the process's soft file limit to its hard limit (allowed without privileges).
/// Returns a sentence for the log: what the limit was and is, or why it stays.
pub fn raise_open_file_limit() -> String {
    let Some((soft, hard)) = open_file_limit() else {
        return "the open-file limit cannot be read; it is left as it is".to_string();
    };
    if soft >= hard {
        return format!("open-file limit {soft} (already the hard limit)");
    }
    let raised = libc::rlimit {
        rlim_cur: hard,
        rlim_max: hard,
    };
    // SAFETY: setrlimit only reads the struct it is given.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
        format!("open-file limit raised from {soft} to {hard} (the hard limit)")
    } else {
        let e = io::Error::last_os_error();
        format!("open-file limit {soft}; raising it to {hard} failed: {e}")
    }
}

/// What a web server's connections have done, for its status page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ConnectionCounts {
    /// Open now.
    pub open: usize,
    /// The cap.
    pub max_open: usize,
    /// Accepted since the start.
    pub accepted: u64,
    /// Refused because the cap was reached.
    pub refused: u64,
    /// Closed because a request's head did not arrive in time.
    pub header_timeouts: u64,
    /// Closed because nothing moved for the idle time.
    pub idle_timeouts: u64,
    /// Times accepting failed because the process had no file descriptor left.
    pub out_of_descriptors: u64,
    /// See [`ConnectionLimits::header_timeout`] (milliseconds).
    pub header_timeout_ms: u64,
    /// See [`ConnectionLimits::idle_timeout`] (milliseconds).
    pub idle_timeout_ms: u64,
}

/// The live counters of one server's connections.
#[derive(Debug)]
pub struct Connections {
    limits: ConnectionLimits,
    open: AtomicUsize,
    accepted: AtomicU64,
    refused: AtomicU64,
    header_timeouts: AtomicU64,
    idle_timeouts: AtomicU64,
    out_of_descriptors: AtomicU64,
    streams: AtomicUsize,
}

impl Connections {
    /// Counters for a server with `limits`.
    pub fn new(limits: ConnectionLimits) -> Connections {
        Connections {
            limits,
            open: AtomicUsize::new(0),
            accepted: AtomicU64::new(0),
            refused: AtomicU64::new(0),
            header_timeouts: AtomicU64::new(0),
            idle_timeouts: AtomicU64::new(0),
            out_of_descriptors: AtomicU64::new(0),
            streams: AtomicUsize::new(0),
        }
    }

    /// Takes a place for an event stream, or `None` when event streams hold every slot but
    /// those kept for other requests.
    pub(super) fn stream_permit(self: &Arc<Connections>) -> Option<StreamPermit> {
        let most = self.limits.max_open - self.limits.kept_for_requests();
        self.streams
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < most).then_some(open + 1)
            })
            .ok()
            .map(|_| StreamPermit(Arc::clone(self)))
    }

    /// The counts now.
    pub fn counts(&self) -> ConnectionCounts {
        ConnectionCounts {
            open: self.open.load(Ordering::Relaxed),
            max_open: self.limits.max_open,
            accepted: self.accepted.load(Ordering::Relaxed),
            refused: self.refused.load(Ordering::Relaxed),
            header_timeouts: self.header_timeouts.load(Ordering::Relaxed),
            idle_timeouts: self.idle_timeouts.load(Ordering::Relaxed),
            out_of_descriptors: self.out_of_descriptors.load(Ordering::Relaxed),
            header_timeout_ms: self.limits.header_timeout.as_millis() as u64,
            idle_timeout_ms: self.limits.idle_timeout.as_millis() as u64,
        }
    }

    /// Takes a slot for a new connection, or `None` at the cap.
    fn admit(self: &Arc<Connections>) -> Option<Slot> {
        let taken = self
            .open
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |open| {
                (open < self.limits.max_open).then_some(open + 1)
            });
        match taken {
            Ok(_) => {
                self.accepted.fetch_add(1, Ordering::Relaxed);
                Some(Slot(Arc::clone(self)))
            }
            Err(_) => {
                self.refused.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }
}

/// An event stream's place, given back when the stream ends.
#[derive(Debug)]
pub(super) struct StreamPermit(Arc<Connections>);

impl Drop for StreamPermit {
    fn drop(&mut self) {
        self.0.streams.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An open connection's place under the cap, given back when the connection is dropped.
#[derive(Debug)]
struct Slot(Arc<Connections>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Accepts connections on `listener` and serves `app` on each, within `connections`' limits,
/// until `shutdown` turns true; then lets open requests finish. Dropping the future closes
/// every connection.
pub(super) async fn serve(
    listener: TcpListener,
    app: Router,
    connections: Arc<Connections>,
    mut shutdown: watch::Receiver<bool>,
) -> io::Result<()> {
    let mut open = JoinSet::new();
    let mut out_of_descriptors_said = false;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = open.join_next(), if !open.is_empty() => continue,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE)) => {
                connections
                    .out_of_descriptors
                    .fetch_add(1, Ordering::Relaxed);
                if !std::mem::replace(&mut out_of_descriptors_said, true) {
                    tracing::error!(
                        "web server: no file descriptor left to accept a connection ({e}); \
                         lower --max-connections or raise the open-file limit (ulimit -n)"
                    );
                }
                tokio::time::sleep(NO_DESCRIPTOR_PAUSE).await;
                continue;
            }
            // A connection reset before it was accepted, and the like: nothing to do.
            Err(_) => continue,
        };
        let Some(slot) = connections.admit() else {
            let _ = stream.try_write(REFUSAL);
            continue;
        };
        let _ = stream.set_nodelay(true);
        let guarded = Guarded::new(stream, slot, connections.limits.idle_timeout);
        open.spawn(connection(
            guarded,
            app.clone(),
            Arc::clone(&connections),
            shutdown.clone(),
        ));
    }
    drop(listener);
    while open.join_next().await.is_some() {}
    Ok(())
}

/// Serves HTTP/1.1 on one connection until it closes, or gracefully ends it at shutdown.
async fn connection(
    io: Guarded,
    app: Router,
    connections: Arc<Connections>,
    mut shutdown: watch::Receiver<bool>,
) {
    let service = TowerToHyperService::new(app);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(connections.limits.header_timeout)
        .keep_alive(true);
    let conn = builder.serve_connection(TokioIo::new(io), service);
    tokio::pin!(conn);
    let stopped = async move {
        let _ = shutdown.wait_for(|stop| *stop).await;
    };
    let result = tokio::select! {
        result = conn.as_mut() => result,
        () = stopped => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(e) = result
        && e.is_timeout()
    {
        connections.header_timeouts.fetch_add(1, Ordering::Relaxed);
    }
}

/// A connection's socket with its slot under the cap and its idle time limit: a read or
/// write that waits while nothing has moved for the idle time fails with `TimedOut`, which
/// ends the connection.
struct Guarded {
    stream: TcpStream,
    _slot: Slot,
    idle: Duration,
    last_moved: Instant,
    /// Wakes a waiting read or write when the idle time may be over; moved forward lazily
    /// (only when it fires), so that traffic costs no timer update.
    check: Pin<Box<Sleep>>,
}

impl Guarded {
    fn new(stream: TcpStream, slot: Slot, idle: Duration) -> Guarded {
        let now = Instant::now();
        Guarded {
            stream,
            _slot: slot,
            idle,
            last_moved: now,
            check: Box::pin(tokio::time::sleep_until(now + idle)),
        }
    }

    /// Called when a read or write has to wait: `Ready(Err)` once the idle time is over.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        loop {
            if self.check.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let due = self.last_moved + self.idle;
            if Instant::now() >= due {
                self._slot.0.idle_timeouts.fetch_add(1, Ordering::Relaxed);
                return Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "nothing moved on the connection for the idle time",
                )));
            }
            self.check.as_mut().reset(due);
        }
    }

    fn moved(&mut self) {
        self.last_moved = Instant::now();
    }

    /// What a write of the stream gave: bytes written count as movement; a write that waits
    /// may be cut off by the idle timeout.
    fn written(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<io::Result<usize>>,
    ) -> Poll<io::Result<usize>> {
        match polled {
            Poll::Ready(result) => {
                if matches!(result, Ok(n) if n > 0) {
                    self.moved();
                }
                Poll::Ready(result)
            }
            Poll::Pending => match self.poll_idle(cx) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                _ => Poll::Pending,
            },
        }
    }
}

impl AsyncRead for Guarded {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.stream).poll_read(cx, buf) {
            Poll::Ready(result) => {
                if buf.filled().len() > before {
                    self.moved();
                }
                Poll::Ready(result)
            }
            Poll::Pending => match self.poll_idle(cx) {
                Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                _ => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for Guarded {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write(cx, buf);
        self.written(cx, polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        self.written(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_leaves_descriptors_for_recording() {
        assert_eq!(max_open_for_file_limit(Some(20_000)), 18_976);
        assert_eq!(max_open_for_file_limit(Some(1_024)), 16);
        assert_eq!(max_open_for_file_limit(Some(1 << 20)), DEFAULT_MAX_OPEN);
        assert_eq!(max_open_for_file_limit(None), 1_024);
    }

    #[test]
    fn a_slot_is_given_back_when_its_connection_ends() {
        let connections = Arc::new(Connections::new(ConnectionLimits {
            max_open: 2,
            ..ConnectionLimits::default()
        }));
        let first = connections.admit().expect("room for one");
        let _second = connections.admit().expect("room for two");
        assert!(connections.admit().is_none(), "the cap holds");
        drop(first);
        assert!(
            connections.admit().is_some(),
            "a closed connection frees its slot"
        );
        let counts = connections.counts();
        assert_eq!((counts.accepted, counts.refused), (3, 1));
    }
}
