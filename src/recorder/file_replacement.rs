//! Replacing a published file atomically: written to a temporary file in the same folder
//! (synced when asked), then renamed over the old one, so a poller never reads half a file;
//! or, where a reader holds the file open, rewritten through a spare copy.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Replaces `path` with `bytes` atomically (temporary file + fsync + rename).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, true)
}

/// Replaces `path` with `bytes` (temporary file + rename): readers see the old text or the
/// new one, never a part, but a power cut may lose the new text. For files rebuilt from
/// elsewhere after a crash.
pub fn replace_unsynced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace_file(path, bytes, false)
}

pub(super) fn replace_file(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A name of its own per write, so that two writers never rename each other's file.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = std::fs::File::create(&temp).and_then(|mut file| {
        file.write_all(bytes)?;
        if sync { file.sync_data() } else { Ok(()) }
    });
    let result = written.and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

/// Replaces `path` with `bytes` without a sync, through the spare copy `spare` (a file of
/// the same file system, kept for the next rewrite): readers see the old text or the new
/// one, and a rewrite makes no new file. For a small file rewritten often, such as a cursor.
pub fn replace_through(path: &Path, spare: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match replace_through_spare(path, bytes, false, spare) {
        ThroughSpare::Done(result) => result,
        ThroughSpare::Unavailable | ThroughSpare::Refused => replace_file(path, bytes, false),
    }
}

/// What became of a rewrite through a spare copy.
pub(super) enum ThroughSpare {
    /// Written (or failed as a new file would have).
    Done(std::io::Result<()>),
    /// This spare cannot be used now (another writer of this process has it, a reader still
    /// holds the version it became, or it cannot be opened): a new file is written instead.
    Unavailable,
    /// The file system does not swap names, or cannot tell whether a spare is still open: a
    /// new file is written, now and from now on.
    Refused,
}

/// Replaces `path` with `bytes` through its spare copy `spare`: the text is written over the
/// spare, which then trades names with `path` in one step, so that the spare holds the old
/// text for the next rewrite. A spare still open anywhere (a reader holding the version it
/// opened before the spare took its place) is left to its reader.
pub(super) fn replace_through_spare(
    path: &Path,
    bytes: &[u8],
    sync: bool,
    spare: &Path,
) -> ThroughSpare {
    use nix::errno::Errno;
    use nix::fcntl::{RenameFlags, renameat2};
    use std::os::unix::fs::FileExt;
    let Some(_claim) = SpareClaim::take(spare) else {
        return ThroughSpare::Unavailable;
    };
    let Ok(file) = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(spare)
    else {
        return ThroughSpare::Unavailable;
    };
    match open_elsewhere(&file) {
        Ok(false) => {}
        Ok(true) => return ThroughSpare::Unavailable,
        Err(_) => return ThroughSpare::Refused,
    }
    // Written over the old text and cut to length: the file mostly grows, so no block is freed
    // and allocated again for each rewrite, as truncating first would.
    let written = file
        .write_all_at(bytes, 0)
        .and_then(|()| file.set_len(bytes.len() as u64))
        .and_then(|()| if sync { file.sync_data() } else { Ok(()) });
    if let Err(e) = written {
        return ThroughSpare::Done(Err(e));
    }
    match renameat2(None, spare, None, path, RenameFlags::RENAME_EXCHANGE) {
        Ok(()) => ThroughSpare::Done(Ok(())),
        // The first write of `path`: nothing to trade with. A new spare is made now, when the
        // recorder starts, rather than at the next rewrite: the first moves of a round come on
        // every board at once, and making a file can cost a millisecond of the disk's time.
        Err(Errno::ENOENT) => {
            let renamed = std::fs::rename(spare, path);
            if renamed.is_ok() {
                let _ = std::fs::File::create(spare);
            }
            ThroughSpare::Done(renamed)
        }
        Err(Errno::EINVAL | Errno::ENOSYS | Errno::EXDEV | Errno::EOPNOTSUPP) => {
            ThroughSpare::Refused
        }
        Err(e) => ThroughSpare::Done(Err(e.into())),
    }
}

/// Whether what `file` opened is also open through any other open file, in this process or
/// another. The kernel grants a write lease only to the one open file of an inode,
/// so one is taken and given back at once. An open that races with it waits for the lease's
/// return and sends its break notice as `SIGURG`, which is ignored by default (the default
/// `SIGIO` would end the process).
fn open_elsewhere(file: &std::fs::File) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // Linux's fcntl command that names the signal of a lease break (`libc` lacks it; 10 in
    // the generic table that x86 and ARM use).
    const F_SETSIG: libc::c_int = 10;
    // SAFETY: fcntl with integer arguments on a descriptor `file` keeps open.
    let control =
        |command: libc::c_int, argument: libc::c_int| unsafe { libc::fcntl(fd, command, argument) };
    if control(F_SETSIG, libc::SIGURG) == -1 {
        return Err(std::io::Error::last_os_error());
    }
    if control(libc::F_SETLEASE, libc::F_WRLCK) == -1 {
        let error = std::io::Error::last_os_error();
        return match error.raw_os_error() {
            Some(libc::EAGAIN) => Ok(true),
            _ => Err(error),
        };
    }
    if control(libc::F_SETLEASE, libc::F_UNLCK) == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(false)
}

/// One writer at a time for each spare copy within this process: another one writes a new
/// file instead.
pub(super) struct SpareClaim(PathBuf);

static SPARES_IN_USE: std::sync::Mutex<std::collections::BTreeSet<PathBuf>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

impl SpareClaim {
    pub(super) fn take(spare: &Path) -> Option<SpareClaim> {
        let mut in_use = SPARES_IN_USE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        in_use
            .insert(spare.to_path_buf())
            .then(|| SpareClaim(spare.to_path_buf()))
    }
}

impl Drop for SpareClaim {
    fn drop(&mut self) {
        SPARES_IN_USE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(&self.0);
    }
}
