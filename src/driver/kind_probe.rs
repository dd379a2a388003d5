//! Which kind of board is behind a serial port: by its USB ids where they are the maker's
//! own, by asking it where they are a common USB-serial chip's (FTDI for Millennium, Silicon
//! Labs CP210x for Certabo), which many other devices use too.

use std::path::Path;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::ports::{DGT_USB_VENDOR_ID, UsbInfo};
use super::probe::probe;
use super::serial;
use super::snapshot_link::SNAPSHOT_BAUD_RATE;
use crate::board::kind::BoardKind;
use crate::wire::{certabo, chessnut, millennium};

/// FTDI's vendor id (Millennium's USB cable, and many other adapters).
pub const FTDI_VENDOR_ID: u16 = 0x0403;
/// Silicon Labs' vendor id (Certabo's CP210x, and many other adapters).
pub const SILABS_VENDOR_ID: u16 = 0x10C4;
/// Chessnut's vendor id (its USB HID interface).
pub const CHESSNUT_VENDOR_ID: u16 = 0x2D80;

/// What the USB ids say: `Some(kind)` when only that kind uses them; `None` when they are
/// a generic chip's and only a probe can tell (or no board's at all).
pub fn kind_by_usb(usb: &UsbInfo) -> Option<BoardKind> {
    match usb.vendor_id {
        DGT_USB_VENDOR_ID => Some(BoardKind::Dgt),
        CHESSNUT_VENDOR_ID => Some(BoardKind::Chessnut),
        _ => None,
    }
}

/// The kinds a generic USB-serial chip may carry, for the listing.
pub fn kinds_possible_by_usb(usb: &UsbInfo) -> &'static [BoardKind] {
    match usb.vendor_id {
        FTDI_VENDOR_ID => &[BoardKind::Millennium, BoardKind::Dgt],
        SILABS_VENDOR_ID => &[BoardKind::Certabo, BoardKind::Sentio],
        _ => &[],
    }
}

/// Asks the board on `port` what it is: at 38400 baud a Millennium board answers its
/// version request, a Chessnut board its real-time request, and Certabo and Sentio boards
/// stream frames unasked; failing those, the DGT probe at 9600 baud. Waits at most
/// `timeout` for each.
pub async fn probe_kind(port: &Path, timeout: Duration) -> Result<BoardKind, String> {
    let name = port.to_string_lossy();
    let mut stream = serial::open_at(&name, SNAPSHOT_BAUD_RATE).map_err(|e| e.to_string())?;
    let mut request = millennium::Command::Version.encode();
    request.extend(chessnut::Command::RealTime.encode());
    stream
        .write_all(&request)
        .await
        .map_err(|e| format!("{name}: write failed ({e})"))?;
    let mut millennium_frames = millennium::Decoder::new();
    let mut certabo_frames = certabo::Decoder::new();
    let mut chessnut_frames = chessnut::Decoder::new();
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; 512];
    while let Ok(read) = tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
        let n = match read {
            Ok(0) => return Err(format!("{name}: the port was closed")),
            Ok(n) => n,
            Err(e) => return Err(format!("{name}: read failed ({e})")),
        };
        let mut out = Vec::new();
        millennium_frames.push(&buf[..n], &mut out);
        if out
            .iter()
            .any(|m| matches!(m, Ok(millennium::Message::Version { .. })))
        {
            return Ok(BoardKind::Millennium);
        }
        let mut out = Vec::new();
        certabo_frames.push(&buf[..n], &mut out);
        if let Some(frame) = out.into_iter().flatten().next() {
            return Ok(match frame {
                certabo::Frame::Tags(_) => BoardKind::Certabo,
                certabo::Frame::Occupancy(_) => BoardKind::Sentio,
            });
        }
        let mut out = Vec::new();
        chessnut_frames.push(&buf[..n], &mut out);
        if out.iter().any(|m| m.is_ok()) {
            return Ok(BoardKind::Chessnut);
        }
    }
    drop(stream);
    match probe(port, timeout).await {
        Ok(_) => Ok(BoardKind::Dgt),
        Err(why) => Err(format!("{name}: no board answered ({why})")),
    }
}
