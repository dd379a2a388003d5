//! The byte stream a link reads a board through, whatever carries it: a serial port, a
//! Chessnut's hidraw node ([`super::hidraw`]), or a Bluetooth LE board's characteristics
//! ([`super::ble`]). A link asks its [`Connector`] for a fresh stream at every connection.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

use super::hidraw::{self, HidReportStream};
use super::serial;
use crate::board::kind::BoardKind;
use crate::wire::gatt::BleTarget;

/// Anything a link can read a board's bytes from and write its commands to.
pub trait ByteStream: AsyncRead + AsyncWrite + Send + Unpin {}

impl<T: AsyncRead + AsyncWrite + Send + Unpin> ByteStream for T {}

/// One connection's stream.
pub type BoardStream = Box<dyn ByteStream>;

/// A connection attempt: the stream, or what went wrong, naming the port and the fix.
pub type Connecting<'a> = Pin<Box<dyn Future<Output = Result<BoardStream, String>> + Send + 'a>>;

/// Opens a board's stream, again at every reconnection.
pub trait Connector: Send + Sync + fmt::Debug {
    /// Connects, giving the stream or an error that names the port, the cause and the fix.
    fn connect(&self) -> Connecting<'_>;
}

/// A device path: a hidraw node (or a virtual HID board's socket) through the HID transport,
/// any other path as a serial port at a fixed speed. Which one is decided at each connection,
/// as the path may not exist before the board is plugged in.
#[derive(Debug)]
struct PathConnector {
    port: String,
    baud: u32,
}

impl Connector for PathConnector {
    fn connect(&self) -> Connecting<'_> {
        Box::pin(async move {
            if hidraw::is_hid_port(&self.port) {
                return HidReportStream::open(&self.port)
                    .map(|stream| Box::new(stream) as BoardStream)
                    .map_err(|e| e.to_string());
            }
            serial::open_at(&self.port, self.baud)
                .map(|stream| Box::new(stream) as BoardStream)
                .map_err(|e| e.to_string())
        })
    }
}

/// The connector of a link: `given` when there is one (a test's peripheral), a Bluetooth LE
/// board for a `ble:` port, else the device path (a hidraw node, or a serial port at
/// `baud`).
pub fn connector_for(
    port: &str,
    baud: u32,
    kind: BoardKind,
    given: Option<Arc<dyn Connector>>,
) -> Arc<dyn Connector> {
    if let Some(given) = given {
        return given;
    }
    match BleTarget::of_port(port) {
        Some(target) => super::ble::port_connector(port, kind, target),
        None => Arc::new(PathConnector {
            port: port.to_string(),
            baud,
        }),
    }
}
