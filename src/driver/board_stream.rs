//! The byte stream a link reads a board through, whatever carries it: a serial port, or a
//! Bluetooth LE board's characteristics ([`super::ble`]). A link asks its [`Connector`] for
//! a fresh stream at every connection.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};

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

/// A serial port at a fixed speed.
#[derive(Debug)]
struct SerialConnector {
    port: String,
    baud: u32,
}

impl Connector for SerialConnector {
    fn connect(&self) -> Connecting<'_> {
        Box::pin(async move {
            serial::open_at(&self.port, self.baud)
                .map(|stream| Box::new(stream) as BoardStream)
                .map_err(|e| e.to_string())
        })
    }
}

/// The connector of a link: `given` when there is one (a test's peripheral), a Bluetooth LE
/// board for a `ble:` port, else the serial port at `baud`.
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
        None => Arc::new(SerialConnector {
            port: port.to_string(),
            baud,
        }),
    }
}
