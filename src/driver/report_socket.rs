//! Unix sequenced-packet sockets: channels of whole messages, as a hidraw node's reads and
//! writes are whole reports. A virtual HID board listens on one at a path, and the HID
//! transport opens that path as it opens `/dev/hidraw*`, so the same code reads both.
//!
//! The standard library has stream and datagram Unix sockets only; these few calls go to
//! the C library's socket functions directly.

use std::ffi::OsStr;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use tokio::io::unix::AsyncFd;

/// The address of the socket at `path`.
fn address(path: &Path) -> io::Result<(libc::sockaddr_un, libc::socklen_t)> {
    // SAFETY: sockaddr_un is plain data; all zeros is a valid (empty) address.
    let mut address: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    address.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = OsStr::as_bytes(path.as_os_str());
    if bytes.len() >= address.sun_path.len() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{}: a socket path may have at most {} bytes",
                path.display(),
                address.sun_path.len() - 1
            ),
        ));
    }
    for (slot, &byte) in address.sun_path.iter_mut().zip(bytes) {
        *slot = byte as libc::c_char;
    }
    let length = std::mem::size_of::<libc::sa_family_t>() + bytes.len() + 1;
    Ok((address, length as libc::socklen_t))
}

/// A new non-blocking sequenced-packet socket.
fn new_socket() -> io::Result<OwnedFd> {
    // SAFETY: plain system call; the descriptor it returns is owned by nobody else.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned here only.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Connects to the listening socket at `path`: a non-blocking file whose reads return one
/// message each and whose writes send one.
pub fn connect(path: &Path) -> io::Result<File> {
    let socket = new_socket()?;
    let (address, length) = address(path)?;
    // SAFETY: `address` is a valid sockaddr_un of `length` bytes.
    let rc = unsafe {
        libc::connect(
            socket.as_raw_fd(),
            (&raw const address).cast::<libc::sockaddr>(),
            length,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(File::from(socket))
}

/// A socket listening for report channels at a path (removed again when dropped).
#[derive(Debug)]
pub struct ReportListener {
    socket: AsyncFd<OwnedFd>,
    path: PathBuf,
}

impl ReportListener {
    /// Listens at `path`, replacing a socket left there. Must be called inside a tokio
    /// runtime.
    pub fn bind(path: &Path) -> io::Result<ReportListener> {
        if std::fs::symlink_metadata(path)
            .is_ok_and(|m| std::os::unix::fs::FileTypeExt::is_socket(&m.file_type()))
        {
            std::fs::remove_file(path)?;
        }
        let socket = new_socket()?;
        let (address, length) = address(path)?;
        // SAFETY: `address` is a valid sockaddr_un of `length` bytes.
        let bound = unsafe {
            libc::bind(
                socket.as_raw_fd(),
                (&raw const address).cast::<libc::sockaddr>(),
                length,
            )
        };
        // SAFETY: plain system call on a socket owned here.
        if bound != 0 || unsafe { libc::listen(socket.as_raw_fd(), 4) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the `OwnedFd` keeps its descriptor open and unchanged until it is dropped
        // with the `AsyncFd`.
        let socket = unsafe { AsyncFd::register(socket) }?;
        Ok(ReportListener {
            socket,
            path: path.to_path_buf(),
        })
    }

    /// The path it listens at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits for the next host to connect.
    pub async fn accept(&self) -> io::Result<ReportChannel> {
        loop {
            let mut ready = self.socket.readable().await?;
            let accepted = ready.try_io(|socket| {
                // SAFETY: plain system call; no peer address is asked for.
                let fd = unsafe {
                    libc::accept4(
                        socket.as_raw_fd(),
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                        libc::SOCK_CLOEXEC | libc::SOCK_NONBLOCK,
                    )
                };
                if fd < 0 {
                    return Err(io::Error::last_os_error());
                }
                // SAFETY: `fd` was just accepted and is owned here only.
                Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
            });
            if let Ok(channel) = accepted {
                // SAFETY: the `File` owns its descriptor, open and unchanged until it is
                // dropped with the `AsyncFd`.
                let socket = unsafe { AsyncFd::register(channel?) }?;
                return Ok(ReportChannel { socket });
            }
        }
    }
}

impl Drop for ReportListener {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// One connected channel of whole messages (the board's end).
#[derive(Debug)]
pub struct ReportChannel {
    socket: AsyncFd<File>,
}

impl ReportChannel {
    /// Receives one message into `buf`; 0 when the host closed its end.
    pub async fn recv(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.socket.readable().await?;
            if let Ok(read) = ready.try_io(|socket| socket.get_ref().read(buf)) {
                return read;
            }
        }
    }

    /// Sends `message` whole.
    pub async fn send(&self, message: &[u8]) -> io::Result<()> {
        loop {
            let mut ready = self.socket.writable().await?;
            if let Ok(written) = ready.try_io(|socket| socket.get_ref().write(message)) {
                return match written? {
                    n if n == message.len() => Ok(()),
                    n => Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        format!("{n} of {} bytes sent", message.len()),
                    )),
                };
            }
        }
    }
}
