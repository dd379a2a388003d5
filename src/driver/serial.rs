//! Opening a serial port at the DGT line settings (9600 baud, 8 data bits, no parity, 1 stop
//! bit, no flow control), with errors that name the port and the fix.

use std::fmt;
use std::io;
use std::os::unix::fs::FileTypeExt;

use tokio_serial::{DataBits, FlowControl, Parity, SerialPortBuilderExt, SerialStream, StopBits};

/// The DGT line speed.
pub const DGT_BAUD_RATE: u32 = 9600;

/// Why a port could not be opened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpenErrorKind {
    /// Nothing exists at that path (wrong name, or the device is unplugged).
    NotFound,
    /// The user may not open the device.
    PermissionDenied,
    /// The path exists but is not a serial device (a directory, a regular file, …).
    NotASerialDevice,
    /// Another program holds the port exclusively.
    Busy,
    /// Anything else the operating system reported.
    Other,
}

/// A port that could not be opened; `Display` names the port, the cause and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenError {
    /// The port as given by the user.
    pub port: String,
    /// The class of failure.
    pub kind: OpenErrorKind,
    /// What the operating system said.
    pub detail: String,
}

impl OpenError {
    /// The likely fix, for the user.
    pub fn fix(&self) -> &'static str {
        match self.kind {
            OpenErrorKind::NotFound => {
                "check the cable and the port name; `touchmove ports` lists the serial ports present"
            }
            OpenErrorKind::PermissionDenied => {
                "add your user to the group owning the device (usually `dialout`: \
                 `sudo usermod -aG dialout $USER`, then log out and in again)"
            }
            OpenErrorKind::NotASerialDevice => {
                "give the path of a serial device such as /dev/ttyACM0 or /dev/rfcomm0; \
                 `touchmove ports` lists them"
            }
            OpenErrorKind::Busy => {
                "close the other program using the board (DGT LiveChess, another touchmove, a \
                 terminal) and try again"
            }
            OpenErrorKind::Other => "check the device with `touchmove ports` and the system log",
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self.kind {
            OpenErrorKind::NotFound => "no such port",
            OpenErrorKind::PermissionDenied => "permission denied",
            OpenErrorKind::NotASerialDevice => "not a serial device",
            OpenErrorKind::Busy => "port in use by another program",
            OpenErrorKind::Other => "cannot open port",
        };
        write!(f, "{}: {what} ({}); {}", self.port, self.detail, self.fix())
    }
}

impl std::error::Error for OpenError {}

/// Opens `port` at 9600 8N1 without flow control, for use from tokio.
pub fn open(port: &str) -> Result<SerialStream, OpenError> {
    open_at(port, DGT_BAUD_RATE)
}

/// Opens `port` at `baud` 8N1 without flow control, for use from tokio. (A Millennium
/// board's 7O1 is the same bits: its codec sets the parity bit itself.)
pub fn open_at(port: &str, baud: u32) -> Result<SerialStream, OpenError> {
    let error = |kind, detail: String| OpenError {
        port: port.to_string(),
        kind,
        detail,
    };
    match std::fs::metadata(port) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(error(OpenErrorKind::NotFound, e.to_string()));
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(error(OpenErrorKind::PermissionDenied, e.to_string()));
        }
        Err(e) => return Err(error(OpenErrorKind::Other, e.to_string())),
        Ok(meta) if meta.is_dir() => {
            return Err(error(
                OpenErrorKind::NotASerialDevice,
                "it is a directory".to_string(),
            ));
        }
        Ok(meta) if !meta.file_type().is_char_device() => {
            return Err(error(
                OpenErrorKind::NotASerialDevice,
                "it is not a character device".to_string(),
            ));
        }
        Ok(_) => {}
    }
    tokio_serial::new(port, baud)
        .data_bits(DataBits::Eight)
        .parity(Parity::None)
        .stop_bits(StopBits::One)
        .flow_control(FlowControl::None)
        .open_native_async()
        .map_err(|e| classify(port, e))
}

fn classify(port: &str, e: tokio_serial::Error) -> OpenError {
    use tokio_serial::ErrorKind as K;
    let kind = match e.kind {
        K::Io(io::ErrorKind::NotFound) => OpenErrorKind::NotFound,
        K::Io(io::ErrorKind::PermissionDenied) => OpenErrorKind::PermissionDenied,
        K::NoDevice => OpenErrorKind::Busy,
        // tcgetattr on something that is not a terminal fails with ENOTTY.
        _ if e.description == nix::errno::Errno::ENOTTY.desc() => OpenErrorKind::NotASerialDevice,
        _ => OpenErrorKind::Other,
    };
    OpenError {
        port: port.to_string(),
        kind,
        detail: e.description,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_port_is_not_found_and_names_the_port() {
        let e = open("/dev/touchmove-no-such-port").expect_err("must fail");
        assert_eq!(e.kind, OpenErrorKind::NotFound);
        let msg = e.to_string();
        assert!(msg.contains("/dev/touchmove-no-such-port"), "{msg}");
        assert!(msg.contains("touchmove ports"), "{msg}");
    }

    #[test]
    fn directory_and_regular_file_are_not_serial_devices() {
        let dir = tempfile::tempdir().expect("tempdir");
        let e = open(dir.path().to_str().expect("utf8")).expect_err("must fail");
        assert_eq!(e.kind, OpenErrorKind::NotASerialDevice);
        let file = dir.path().join("plain");
        std::fs::write(&file, b"x").expect("write");
        let e = open(file.to_str().expect("utf8")).expect_err("must fail");
        assert_eq!(e.kind, OpenErrorKind::NotASerialDevice);
        assert!(e.to_string().contains("/dev/ttyACM0"));
    }

    #[test]
    fn non_tty_character_device_is_not_a_serial_device() {
        let e = open("/dev/null").expect_err("must fail");
        assert_eq!(e.kind, OpenErrorKind::NotASerialDevice, "{e}");
    }

    #[test]
    fn permission_fix_names_dialout() {
        let e = OpenError {
            port: "/dev/ttyACM0".into(),
            kind: OpenErrorKind::PermissionDenied,
            detail: "EACCES".into(),
        };
        assert!(e.to_string().contains("dialout"));
    }
}
