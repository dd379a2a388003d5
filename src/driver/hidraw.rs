//! Chessnut over USB HID: a Linux `/dev/hidraw*` node as the byte stream of the snapshot
//! link, with no C library beyond the kernel's interface.
//!
//! Every read of a hidraw node returns one input report; [`HidReportStream`] turns each into
//! the frame it carries ([`frame_of_report`]) and hands the link those frames as the serial
//! stream would carry them. What the link writes is cut into frames, each sent in an output
//! report of its own, at least [`WRITE_GAP`] after the one before (Chessnut's SDK waits
//! that long between writes).
//!
//! [`is_hid_port`] tells a port path of this transport: a hidraw node, or a Unix
//! sequenced-packet socket, on which a virtual HID board serves its reports
//! ([`report_socket`](super::report_socket)). Other paths stay serial.

use std::fs::{File, OpenOptions};
use std::future::Future;
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

use super::report_socket;
use crate::wire::chessnut_report::{HostFrames, REPORT_SIZE, frame_of_report, report_of_frame};

/// The least time between two writes to the board (Chessnut's SDK waits 200 ms).
pub const WRITE_GAP: Duration = Duration::from_millis(200);

/// The udev rule that lets users other than root open a Chessnut's hidraw nodes.
pub const UDEV_RULE: &str =
    r#"KERNEL=="hidraw*", ATTRS{idVendor}=="2d80", MODE="0660", GROUP="plugdev", TAG+="uaccess""#;

/// Where the udev rule goes.
pub const UDEV_RULE_FILE: &str = "/etc/udev/rules.d/70-chessnut.rules";

/// The longest report read (the kernel's own limit is larger; Chessnut's are 64 bytes).
const READ_BUFFER: usize = 4096;

/// True when `port` names a HID transport: a `hidraw*` node (or a link to one), or a Unix
/// socket a virtual HID board listens on.
pub fn is_hid_port(port: &str) -> bool {
    let path = Path::new(port);
    if std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket()) {
        return true;
    }
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    real.file_name()
        .is_some_and(|name| name.to_string_lossy().starts_with("hidraw"))
}

/// The byte stream of a board behind a HID report channel: reads give the frames the
/// reports carry, writes go out one frame per report, paced.
#[derive(Debug)]
pub struct HidReportStream {
    node: AsyncFd<File>,
    name: String,
    report_size: usize,
    report: Vec<u8>,
    /// The frame of the last report, and how much of it was read.
    frame: Vec<u8>,
    frame_read: usize,
    written: HostFrames,
    next_write_at: Option<Instant>,
    pace: Option<Pin<Box<Sleep>>>,
    reports_dropped: u64,
}

impl HidReportStream {
    /// Opens the hidraw node (or virtual board's socket) at `port`. Errors name the node and
    /// the fix. Must be called inside a tokio runtime.
    pub fn open(port: &str) -> io::Result<HidReportStream> {
        let path = Path::new(port);
        let is_socket = std::fs::metadata(path).is_ok_and(|m| m.file_type().is_socket());
        let opened = if is_socket {
            report_socket::connect(path)
        } else {
            OpenOptions::new()
                .read(true)
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(path)
        };
        let file = opened.map_err(|e| open_error(port, e))?;
        HidReportStream::from_file(file, port, REPORT_SIZE)
    }

    /// The stream over an open non-blocking `file` whose reads return whole reports, sending
    /// reports of `report_size` bytes; `name` names it in errors.
    pub fn from_file(file: File, name: &str, report_size: usize) -> io::Result<HidReportStream> {
        // SAFETY: the `File` owns its descriptor, open and unchanged until it is dropped with
        // the `AsyncFd`.
        let node = unsafe { AsyncFd::register(file) }?;
        Ok(HidReportStream {
            node,
            name: name.to_string(),
            report_size,
            report: vec![0; READ_BUFFER],
            frame: Vec::new(),
            frame_read: 0,
            written: HostFrames::new(),
            next_write_at: None,
            pace: None,
            reports_dropped: 0,
        })
    }

    /// Reports read that carried no frame (empty or cut short).
    pub fn reports_dropped(&self) -> u64 {
        self.reports_dropped
    }

    /// Ready once [`WRITE_GAP`] has passed since the last write.
    fn poll_pace(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        let Some(at) = self.next_write_at else {
            return Poll::Ready(());
        };
        if Instant::now() >= at {
            return Poll::Ready(());
        }
        let pace = self
            .pace
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(at)));
        if pace.deadline() != at {
            pace.as_mut().reset(at);
        }
        pace.as_mut().poll(cx)
    }

    /// Writes one whole report.
    fn poll_write_report(&mut self, cx: &mut Context<'_>, report: &[u8]) -> Poll<io::Result<()>> {
        loop {
            let mut ready = ready!(self.node.poll_write_ready(cx))?;
            if let Ok(written) = ready.try_io(|node| node.get_ref().write(report)) {
                return Poll::Ready(match written {
                    Ok(n) if n == report.len() => Ok(()),
                    Ok(n) => Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        format!(
                            "{}: {n} of {} report bytes written",
                            self.name,
                            report.len()
                        ),
                    )),
                    Err(e) => Err(transfer_error(&self.name, e)),
                });
            }
        }
    }
}

impl AsyncRead for HidReportStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.frame_read < this.frame.len() {
                let unread = &this.frame[this.frame_read..];
                let n = unread.len().min(buf.remaining());
                buf.put_slice(&unread[..n]);
                this.frame_read += n;
                return Poll::Ready(Ok(()));
            }
            let mut ready = ready!(this.node.poll_read_ready(cx))?;
            let report = &mut this.report;
            let Ok(read) = ready.try_io(|node| node.get_ref().read(report)) else {
                continue;
            };
            let n = match read {
                Ok(0) => return Poll::Ready(Ok(())),
                Ok(n) => n,
                Err(e) => return Poll::Ready(Err(transfer_error(&this.name, e))),
            };
            match frame_of_report(&this.report[..n]) {
                Ok(frame) => {
                    this.frame = frame;
                    this.frame_read = 0;
                }
                Err(why) => {
                    this.reports_dropped += 1;
                    tracing::debug!(port = %this.name, %why, "report dropped");
                }
            }
        }
    }
}

impl AsyncWrite for HidReportStream {
    /// Takes the bytes up to the end of the next whole frame and sends that frame in one
    /// report (waiting out the gap after the last); the bytes of a frame not yet whole are
    /// kept for the next write.
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let Some(taken) = this.written.completed_by(bytes) else {
            this.written.keep(bytes);
            return Poll::Ready(Ok(bytes.len()));
        };
        ready!(this.poll_pace(cx));
        let report = report_of_frame(&this.written.frame_with(&bytes[..taken]), this.report_size);
        ready!(this.poll_write_report(cx, &report))?;
        this.written.clear();
        this.next_write_at = Some(Instant::now() + WRITE_GAP);
        Poll::Ready(Ok(taken))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// An error opening `port`, naming the node and the fix.
fn open_error(port: &str, e: io::Error) -> io::Error {
    let fix = match e.kind() {
        io::ErrorKind::NotFound => "no such node: plug the board in (USB) and run \
             `touchmove ports`, which lists Chessnut boards with their hidraw node"
            .to_string(),
        io::ErrorKind::PermissionDenied => format!(
            "permission denied: add the rule `{UDEV_RULE}` to {UDEV_RULE_FILE}, run `sudo \
             udevadm control --reload && sudo udevadm trigger`, and plug the board in again"
        ),
        _ => "is it a Chessnut's hidraw node? `touchmove ports` lists them".to_string(),
    };
    io::Error::new(e.kind(), format!("{port}: cannot open ({e}); {fix}"))
}

/// A read or write error, with what it means for a USB board.
fn transfer_error(name: &str, e: io::Error) -> io::Error {
    let unplugged = matches!(
        e.raw_os_error(),
        Some(libc::ENODEV | libc::EIO | libc::EPIPE)
    );
    let what = if unplugged {
        "the board was unplugged or switched off"
    } else {
        "the node failed"
    };
    io::Error::new(e.kind(), format!("{name}: {what} ({e})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixDatagram;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A report channel pair: the stream's end and the board's end.
    fn pair() -> (HidReportStream, UnixDatagram) {
        let (ours, board) = UnixDatagram::pair().unwrap();
        ours.set_nonblocking(true).unwrap();
        let file = File::from(OwnedFd::from(ours));
        (
            HidReportStream::from_file(file, "test node", REPORT_SIZE).unwrap(),
            board,
        )
    }

    #[tokio::test]
    async fn reads_give_the_frames_of_the_reports_and_skip_empty_ones() {
        let (mut stream, board) = pair();
        let mut battery = vec![0, 0x2A, 0x02, 0x50, 0x00];
        battery.resize(65, 0);
        board.send(&[0; 64]).unwrap();
        board.send(&battery).unwrap();
        board.send(&[0x23, 0x01, 0x00, 0, 0, 0]).unwrap();
        let mut got = [0u8; 7];
        stream.read_exact(&mut got).await.unwrap();
        assert_eq!(got, [0x2A, 0x02, 0x50, 0x00, 0x23, 0x01, 0x00]);
        assert_eq!(stream.reports_dropped(), 1);
    }

    #[tokio::test]
    async fn writes_go_one_frame_a_report_at_least_the_gap_apart() {
        let (mut stream, board) = pair();
        let written = [
            &[0x21, 0x01, 0x00][..],
            &[0x0A, 0x08, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0x29, 0x01, 0x00],
        ]
        .concat();
        let start = std::time::Instant::now();
        stream.write_all(&written[..5]).await.unwrap();
        stream.write_all(&written[5..]).await.unwrap();
        let elapsed = start.elapsed();
        let mut reports = Vec::new();
        let mut buf = [0u8; 128];
        for _ in 0..3 {
            let n = board.recv(&mut buf).unwrap();
            reports.push(buf[..n].to_vec());
        }
        assert!(elapsed >= 2 * WRITE_GAP, "three writes took {elapsed:?}");
        assert!(reports.iter().all(|r| r.len() == 65 && r[0] == 0));
        assert_eq!(&reports[0][1..4], [0x21, 0x01, 0x00]);
        assert_eq!(&reports[1][1..11], [0x0A, 0x08, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(&reports[2][1..4], [0x29, 0x01, 0x00]);
    }

    #[test]
    fn a_missing_node_names_the_fix_and_a_denied_one_the_udev_rule() {
        let missing = open_error("/dev/hidraw9", io::Error::from(io::ErrorKind::NotFound));
        assert!(missing.to_string().starts_with("/dev/hidraw9: cannot open"));
        assert!(missing.to_string().contains("touchmove ports"));
        let denied = open_error(
            "/dev/hidraw9",
            io::Error::from(io::ErrorKind::PermissionDenied),
        );
        assert!(denied.to_string().contains(UDEV_RULE), "{denied}");
    }

    #[tokio::test]
    async fn the_snapshot_link_opens_a_hidraw_path_as_hid_and_names_the_fix() {
        use crate::board::kind::BoardKind;
        use crate::driver::dgt::LinkEvent;
        use crate::driver::snapshot_link::{SnapshotLinkConfig, spawn_snapshot_link};
        let port = "/nonexistent/hidraw9";
        let config = SnapshotLinkConfig::new(BoardKind::Chessnut, port);
        let (_handle, mut events, _lights) = spawn_snapshot_link(config, Instant::now());
        match events.recv().await {
            Some(LinkEvent::Failed { message }) => {
                assert!(
                    message.starts_with(&format!("{port}: cannot open")),
                    "{message}"
                );
                assert!(message.contains("touchmove ports"), "{message}");
            }
            other => panic!("the link fails on a missing node: {other:?}"),
        }
    }

    #[test]
    fn hidraw_nodes_and_sockets_are_hid_ports_and_ttys_are_not() {
        assert!(is_hid_port("/dev/hidraw3"));
        assert!(!is_hid_port("/dev/ttyACM0"));
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("chessnut-1");
        let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
        assert!(is_hid_port(socket.to_str().unwrap()));
    }
}
