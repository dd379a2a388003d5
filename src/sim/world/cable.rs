//! A board's cable in memory: the board's end belongs to the simulation, the host's end is
//! what the recorder's link opens ([`Connector`]) in place of a serial port.
//!
//! Like a serial port, the host's end carries bytes only while it is open: what the board
//! sends while nobody has the port open is lost, and a port whose cable is pulled out fails
//! its reads and writes and cannot be opened again until the cable is back.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;

use crate::driver::board_stream::{BoardStream, Connecting, Connector};

/// One board's cable: the simulation holds it, the recorder connects through
/// [`Cable::connector`].
#[derive(Debug, Clone)]
pub struct Cable {
    state: Arc<Mutex<CableState>>,
    /// Told whenever the host writes, so that the simulation hands the bytes to the board at
    /// the time they were written.
    written: Arc<Notify>,
}

#[derive(Debug)]
struct CableState {
    /// The port's name, for the host's messages.
    port: String,
    plugged: bool,
    /// The number of the host's current connection; a stream of an earlier one is dead.
    connection: u64,
    /// The host holds a stream of the current connection.
    open: bool,
    to_host: VecDeque<u8>,
    to_board: Vec<u8>,
    /// The host's task waiting to read.
    reader: Option<Waker>,
}

impl Cable {
    /// A plugged cable for the port named `port`; `written` is told when the host writes.
    pub fn new(port: &str, written: Arc<Notify>) -> Cable {
        Cable {
            state: Arc::new(Mutex::new(CableState {
                port: port.to_string(),
                plugged: true,
                connection: 0,
                open: false,
                to_host: VecDeque::new(),
                to_board: Vec::new(),
                reader: None,
            })),
            written,
        }
    }

    fn lock(&self) -> MutexGuard<'_, CableState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What the recorder opens instead of the port.
    pub fn connector(&self) -> Arc<dyn Connector> {
        Arc::new(self.clone())
    }

    /// True while the host has the port open.
    pub fn open(&self) -> bool {
        self.lock().open
    }

    /// Bytes from the board: the host reads them if it has the port open; otherwise they are
    /// lost, as on a serial line nobody reads.
    pub fn send_to_host(&self, bytes: &[u8]) {
        let mut state = self.lock();
        if !state.open {
            return;
        }
        state.to_host.extend(bytes);
        if let Some(reader) = state.reader.take() {
            reader.wake();
        }
    }

    /// What the host wrote since the last call.
    pub fn take_from_host(&self) -> Vec<u8> {
        std::mem::take(&mut self.lock().to_board)
    }

    /// Pulls the cable out (`false`) or puts it back (`true`). Out, the host's stream fails
    /// and the port cannot be opened.
    pub fn set_plugged(&self, plugged: bool) {
        let mut state = self.lock();
        state.plugged = plugged;
        if !plugged {
            state.open = false;
            state.connection += 1;
            state.to_host.clear();
            if let Some(reader) = state.reader.take() {
                reader.wake();
            }
        }
    }
}

impl Connector for Cable {
    fn connect(&self) -> Connecting<'_> {
        let cable = self.clone();
        Box::pin(async move {
            let mut state = cable.lock();
            if !state.plugged {
                return Err(format!(
                    "cannot open {}: no such device (the board is unplugged)",
                    state.port
                ));
            }
            state.connection += 1;
            state.open = true;
            state.to_host.clear();
            let connection = state.connection;
            drop(state);
            Ok(Box::new(CableEnd { cable, connection }) as BoardStream)
        })
    }
}

/// The host's end of one connection.
struct CableEnd {
    cable: Cable,
    connection: u64,
}

impl CableEnd {
    fn gone(&self, state: &CableState) -> Option<io::Error> {
        if state.connection != self.connection {
            let why = if state.plugged {
                "the port was opened again"
            } else {
                "the board was unplugged"
            };
            return Some(io::Error::new(
                io::ErrorKind::BrokenPipe,
                format!("{}: {why}", state.port),
            ));
        }
        None
    }
}

impl AsyncRead for CableEnd {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let mut state = self.cable.lock();
        if let Some(e) = self.gone(&state) {
            return Poll::Ready(Err(e));
        }
        if state.to_host.is_empty() {
            state.reader = Some(cx.waker().clone());
            return Poll::Pending;
        }
        let n = buf.remaining().min(state.to_host.len());
        let (front, back) = state.to_host.as_slices();
        let from_front = n.min(front.len());
        buf.put_slice(&front[..from_front]);
        buf.put_slice(&back[..n - from_front]);
        state.to_host.drain(..n);
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for CableEnd {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let mut state = self.cable.lock();
        if let Some(e) = self.gone(&state) {
            return Poll::Ready(Err(e));
        }
        state.to_board.extend_from_slice(bytes);
        drop(state);
        self.cable.written.notify_one();
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Drop for CableEnd {
    fn drop(&mut self) {
        let mut state = self.cable.lock();
        if state.connection == self.connection {
            state.open = false;
            state.to_host.clear();
        }
    }
}
