//! A Bluetooth LE board as one byte stream: the notifications of its profile's
//! characteristics, in arrival order, are what the link reads; what the link writes goes to
//! the profile's write characteristic, cut to the profile's write size. A lost connection
//! ends the stream with its reason, as an unplugged serial port does.

use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};

use tokio::sync::mpsc;

use super::peripheral::{BleError, BlePeripheral, FoundCharacteristic, Notification};
use crate::driver::board_stream::{BoardStream, Connecting, Connector};
use crate::wire::gatt::{GattProfile, GattUuid, uuid_text};

/// Bytes that may wait between the board and the link in either direction.
const STREAM_BUFFER: usize = 64 * 1024;

/// The link's end of a Bluetooth LE board's stream.
#[derive(Debug)]
pub struct BleStream {
    link_side: DuplexStream,
    /// Why the connection ended, once it has.
    ended: Arc<Mutex<Option<String>>>,
}

impl BleStream {
    fn ended(&self) -> Option<String> {
        self.ended.lock().ok().and_then(|e| e.clone())
    }
}

impl AsyncRead for BleStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        match Pin::new(&mut self.link_side).poll_read(cx, buf) {
            Poll::Ready(Ok(())) if buf.filled().len() == before => match self.ended() {
                Some(reason) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    reason,
                ))),
                None => Poll::Ready(Ok(())),
            },
            other => other,
        }
    }
}

impl AsyncWrite for BleStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match Pin::new(&mut self.link_side).poll_write(cx, buf) {
            Poll::Ready(Err(e)) => Poll::Ready(Err(match self.ended() {
                Some(reason) => io::Error::new(io::ErrorKind::ConnectionAborted, reason),
                None => e,
            })),
            other => other,
        }
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.link_side).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.link_side).poll_shutdown(cx)
    }
}

/// Connects to `peripheral`, checks that it has `profile`'s characteristics, subscribes to
/// its notifications and gives the stream. Must be called inside a tokio runtime: a task
/// carries the bytes until the connection ends or the stream is dropped.
pub async fn open_ble_stream<P: BlePeripheral>(
    peripheral: Arc<P>,
    profile: &'static GattProfile,
) -> Result<BleStream, BleError> {
    peripheral.connect().await?;
    let notifications = match subscribe(&*peripheral, profile).await {
        Ok(notifications) => notifications,
        Err(e) => {
            peripheral.disconnect().await;
            return Err(e);
        }
    };
    let (link_side, board_side) = tokio::io::duplex(STREAM_BUFFER);
    let ended = Arc::new(Mutex::new(None));
    tokio::spawn(carry(
        peripheral,
        profile,
        notifications,
        board_side,
        Arc::clone(&ended),
    ));
    Ok(BleStream { link_side, ended })
}

/// Checks that the connected `peripheral` has `profile`'s characteristics and subscribes to
/// its notifications.
async fn subscribe<P: BlePeripheral>(
    peripheral: &P,
    profile: &'static GattProfile,
) -> Result<mpsc::Receiver<Notification>, BleError> {
    let found = peripheral.discover().await?;
    let has = |uuid: &GattUuid, usable: fn(&FoundCharacteristic) -> bool| {
        found.iter().any(|c| c.uuid == *uuid && usable(c))
    };
    let missing: Vec<String> = profile
        .notify
        .iter()
        .filter(|u| !has(u, |c| c.notifies))
        .chain(std::iter::once(&profile.write).filter(|u| !has(u, |c| c.writable)))
        .map(|u| uuid_text(*u))
        .collect();
    if !missing.is_empty() {
        let kind = profile.kind;
        return Err(BleError(format!(
            "{}: not a {kind} board: it lacks the characteristics {} of the {kind}'s \
             Bluetooth LE service {}; `touchmove ports --ble` lists the boards in reach",
            peripheral.describe(),
            missing.join(", "),
            uuid_text(profile.services[0])
        )));
    }
    // Taken before subscribing, so that no notification comes before anyone listens.
    let notifications = peripheral.notifications().await?;
    for characteristic in profile.notify {
        peripheral.subscribe(*characteristic).await?;
    }
    Ok(notifications)
}

/// Carries notifications to the link and the link's writes to the board until one side
/// ends; leaves the reason for the link.
async fn carry<P: BlePeripheral>(
    peripheral: Arc<P>,
    profile: &'static GattProfile,
    mut notifications: mpsc::Receiver<Notification>,
    mut board_side: DuplexStream,
    ended: Arc<Mutex<Option<String>>>,
) {
    let board = peripheral.describe();
    let lost = peripheral.disconnected();
    tokio::pin!(lost);
    let mut buf = vec![0u8; 1024];
    let reason = loop {
        tokio::select! {
            notification = notifications.recv() => match notification {
                Some(n) if profile.notify.contains(&n.characteristic) => {
                    if board_side.write_all(&n.value).await.is_err() {
                        peripheral.disconnect().await;
                        return;
                    }
                }
                Some(_) => {}
                None => break format!("{board}: the board stopped notifying (connection lost)"),
            },
            read = board_side.read(&mut buf) => match read {
                Ok(0) | Err(_) => {
                    // The link dropped the stream: it is done with this connection.
                    peripheral.disconnect().await;
                    return;
                }
                Ok(n) => {
                    let mut failed = None;
                    for chunk in buf[..n].chunks(profile.write_chunk) {
                        if let Err(e) = peripheral.write(profile.write, chunk).await {
                            failed = Some(format!("{board}: write failed ({e})"));
                            break;
                        }
                    }
                    if let Some(reason) = failed {
                        peripheral.disconnect().await;
                        break reason;
                    }
                }
            },
            reason = &mut lost => break format!("{board}: connection lost ({reason})"),
        }
    };
    tracing::info!(%reason, "Bluetooth LE board");
    if let Ok(mut slot) = ended.lock() {
        *slot = Some(reason);
    }
}

/// The connector of a link to a Bluetooth LE board reached through `peripheral`.
pub struct BleConnector<P> {
    peripheral: Arc<P>,
    profile: &'static GattProfile,
}

impl<P: BlePeripheral> BleConnector<P> {
    /// A connector to `peripheral`, read as a board of `profile`'s kind.
    pub fn new(peripheral: Arc<P>, profile: &'static GattProfile) -> Self {
        BleConnector {
            peripheral,
            profile,
        }
    }
}

impl<P> std::fmt::Debug for BleConnector<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BleConnector")
            .field("kind", &self.profile.kind)
            .finish_non_exhaustive()
    }
}

impl<P: BlePeripheral> Connector for BleConnector<P> {
    fn connect(&self) -> Connecting<'_> {
        Box::pin(async move {
            open_ble_stream(Arc::clone(&self.peripheral), self.profile)
                .await
                .map(|stream| Box::new(stream) as BoardStream)
                .map_err(|e| e.to_string())
        })
    }
}
