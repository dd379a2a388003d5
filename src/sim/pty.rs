//! Pseudo-terminals for virtual boards: the board side holds the master, a driver opens the
//! slave path exactly as it would open `/dev/ttyACM0`.

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

use nix::fcntl::{FcntlArg, OFlag, fcntl};
use nix::sys::termios::{SetArg, cfmakeraw, tcgetattr, tcsetattr};
use tokio::io::unix::AsyncFd;

/// A pseudo-terminal pair in raw mode. The slave stays open on this side too, so the master
/// never reads an end-of-file while the driver closes and reopens the slave.
#[derive(Debug)]
pub struct Pty {
    master: AsyncFd<OwnedFd>,
    slave: OwnedFd,
    slave_path: PathBuf,
}

impl Pty {
    /// Opens a new pseudo-terminal with a raw (binary, no echo) line discipline.
    pub fn open() -> io::Result<Pty> {
        let pair = nix::pty::openpty(None, None)?;
        let mut termios = tcgetattr(&pair.slave)?;
        cfmakeraw(&mut termios);
        tcsetattr(&pair.slave, SetArg::TCSANOW, &termios)?;
        let slave_path = nix::unistd::ttyname(&pair.slave)?;
        let flags = OFlag::from_bits_truncate(fcntl(pair.master.as_raw_fd(), FcntlArg::F_GETFL)?);
        fcntl(
            pair.master.as_raw_fd(),
            FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK),
        )?;
        // SAFETY: an `OwnedFd` keeps its descriptor open and unchanged until it is dropped,
        // and the `AsyncFd` owns it for its whole life.
        let master = unsafe { AsyncFd::register(pair.master) }?;
        Ok(Pty {
            master,
            slave: pair.slave,
            slave_path,
        })
    }

    /// The path a driver opens (e.g. `/dev/pts/3`).
    pub fn slave_path(&self) -> &Path {
        &self.slave_path
    }

    /// Reads what the driver wrote; waits until at least one byte is there.
    pub async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut guard = self.master.readable().await?;
            match guard.try_io(|fd| {
                nix::unistd::read(fd.get_ref().as_raw_fd(), buf).map_err(io::Error::from)
            }) {
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }

    /// Bytes written towards the driver that it has not read yet. The kernel moves written
    /// bytes to the reading side shortly after `write` returns, so a just-written message
    /// may not be counted yet.
    pub fn unread(&self) -> io::Result<usize> {
        let mut count: libc::c_int = 0;
        // SAFETY: FIONREAD writes one `c_int` through the pointer, which points at `count`;
        // the descriptor is the open slave this `Pty` owns.
        let rc = unsafe { libc::ioctl(self.slave.as_raw_fd(), libc::FIONREAD, &mut count) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(usize::try_from(count).unwrap_or(0))
    }

    /// Writes all of `data` towards the driver.
    pub async fn write_all(&self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            let mut guard = self.master.writable().await?;
            match guard.try_io(|fd| nix::unistd::write(fd.get_ref(), data).map_err(io::Error::from))
            {
                Ok(Ok(n)) => data = &data[n..],
                Ok(Err(e)) => return Err(e),
                Err(_would_block) => continue,
            }
        }
        Ok(())
    }
}

/// A symbolic link at a fixed path that follows the current pseudo-terminal, so a driver's
/// port name stays valid when a virtual board is unplugged and plugged in again.
#[derive(Debug)]
pub struct StablePath {
    link: PathBuf,
}

impl StablePath {
    /// A stable path at `link` (nothing is created yet).
    pub fn new(link: impl Into<PathBuf>) -> Self {
        StablePath { link: link.into() }
    }

    /// The stable path.
    pub fn path(&self) -> &Path {
        &self.link
    }

    /// Points the link at `target`, replacing any previous target atomically.
    pub fn point_to(&self, target: &Path) -> io::Result<()> {
        let mut tmp = self.link.clone().into_os_string();
        tmp.push(".new");
        let tmp = PathBuf::from(tmp);
        let _ = std::fs::remove_file(&tmp);
        std::os::unix::fs::symlink(target, &tmp)?;
        std::fs::rename(&tmp, &self.link)
    }

    /// Removes the link (the port "vanishes").
    pub fn remove(&self) -> io::Result<()> {
        match std::fs::remove_file(&self.link) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    }
}

impl Drop for StablePath {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    #[tokio::test]
    async fn bytes_cross_the_pty_unchanged_both_ways() {
        let pty = Pty::open().expect("openpty");
        let mut slave = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(pty.slave_path())
            .expect("open slave");
        // Bytes a cooked terminal would rewrite: CR, NL, ^C, ^D, 0xFF.
        let sent = [0x0D, 0x0A, 0x03, 0x04, 0xFF, 0x86, 0x00];
        slave.write_all(&sent).expect("write");
        let mut got = Vec::new();
        let mut buf = [0u8; 16];
        while got.len() < sent.len() {
            let n = pty.read(&mut buf).await.expect("read");
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(got, sent);
        assert_eq!(pty.unread().expect("unread"), 0);
        pty.write_all(&sent).await.expect("write");
        let mut unread = 0;
        for _ in 0..100 {
            unread = pty.unread().expect("unread");
            if unread > 0 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert_eq!(unread, sent.len());
        let mut back = [0u8; 7];
        slave.read_exact(&mut back).expect("read back");
        assert_eq!(back, sent);
        assert_eq!(pty.unread().expect("unread"), 0);
    }

    #[test]
    fn stable_path_follows_and_vanishes() {
        let dir = tempfile::tempdir().expect("tempdir");
        let link = StablePath::new(dir.path().join("dgt0"));
        link.point_to(Path::new("/dev/null")).expect("link");
        assert_eq!(
            std::fs::read_link(link.path()).expect("readlink"),
            Path::new("/dev/null")
        );
        link.point_to(Path::new("/dev/zero")).expect("relink");
        assert_eq!(
            std::fs::read_link(link.path()).expect("readlink"),
            Path::new("/dev/zero")
        );
        link.remove().expect("remove");
        assert!(!link.path().exists());
        link.remove().expect("removing twice is fine");
    }
}
