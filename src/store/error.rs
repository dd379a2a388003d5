//! Journal errors that name the file, the cause and the fix.

use std::path::{Path, PathBuf};

use rusqlite::ErrorCode;

/// Why the journal could not be opened, written or read.
///
/// The recorder tells storage failures apart with [`JournalError::is_disk_full`],
/// [`JournalError::is_read_only`], [`JournalError::is_corrupt`] and
/// [`JournalError::is_locked`]; on any of them it stops accepting new games and keeps what is
/// recorded (every append acknowledged before the error is in the file).
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// SQLITE_FULL: the disk (or the journal's size limit) is full.
    #[error(
        "journal {path}: the disk is full (or the journal reached its size limit); nothing more can be recorded. Free space on the disk, or start the recorder with a journal on another disk; everything recorded so far is kept"
    )]
    DiskFull {
        /// The journal file.
        path: PathBuf,
    },
    /// The file or its directory cannot be written.
    #[error(
        "journal {path}: {what} is read-only; nothing more can be recorded. Make it writable (e.g. chmod u+w) or choose a journal in a writable directory; everything recorded so far is kept"
    )]
    ReadOnly {
        /// The journal file.
        path: PathBuf,
        /// "the file" or "its directory ..." or SQLite's explanation.
        what: String,
    },
    /// The file is damaged or is not a SQLite database.
    #[error(
        "journal {path} is damaged ({detail}). Keep the file for recovery (sqlite3 {path} \".recover\"), and record into a new journal file"
    )]
    Corrupt {
        /// The journal file.
        path: PathBuf,
        /// What SQLite reported.
        detail: String,
    },
    /// Another recorder is writing to this journal.
    #[error(
        "journal {path} is in use by another recorder (lock file {lock}). Stop the other recorder, or give this one another --journal file"
    )]
    Locked {
        /// The journal file.
        path: PathBuf,
        /// The lock file held by the other recorder.
        lock: PathBuf,
    },
    /// A SQLite database that is not a touchmove journal, or one from a newer version.
    #[error(
        "{path} is not a touchmove journal ({detail}); choose the journal file the recorder wrote"
    )]
    NotAJournal {
        /// The file.
        path: PathBuf,
        /// Why.
        detail: String,
    },
    /// The journal to read does not exist.
    #[error("journal {path} does not exist; give the --journal file the recorder wrote")]
    NotFound {
        /// The file.
        path: PathBuf,
    },
    /// A value cannot be stored (a time beyond the range of SQLite integers, say).
    #[error("journal {path}: cannot store {detail}")]
    Unstorable {
        /// The journal file.
        path: PathBuf,
        /// What and why.
        detail: String,
    },
    /// Any other SQLite or file failure.
    #[error("journal {path}: {source}")]
    Other {
        /// The journal file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

impl JournalError {
    /// True when the disk or the journal's size limit is full.
    pub fn is_disk_full(&self) -> bool {
        matches!(self, JournalError::DiskFull { .. })
    }

    /// True when the journal file or its directory is read-only.
    pub fn is_read_only(&self) -> bool {
        matches!(self, JournalError::ReadOnly { .. })
    }

    /// True when the journal is damaged or is not a journal.
    pub fn is_corrupt(&self) -> bool {
        matches!(
            self,
            JournalError::Corrupt { .. } | JournalError::NotAJournal { .. }
        )
    }

    /// True when another recorder holds the journal.
    pub fn is_locked(&self) -> bool {
        matches!(self, JournalError::Locked { .. })
    }

    /// The same error for another caller (the underlying cause of `Other` becomes its text).
    pub(crate) fn duplicate(&self) -> JournalError {
        match self {
            JournalError::DiskFull { path } => JournalError::DiskFull { path: path.clone() },
            JournalError::ReadOnly { path, what } => JournalError::ReadOnly {
                path: path.clone(),
                what: what.clone(),
            },
            JournalError::Corrupt { path, detail } => JournalError::Corrupt {
                path: path.clone(),
                detail: detail.clone(),
            },
            JournalError::Locked { path, lock } => JournalError::Locked {
                path: path.clone(),
                lock: lock.clone(),
            },
            JournalError::NotAJournal { path, detail } => JournalError::NotAJournal {
                path: path.clone(),
                detail: detail.clone(),
            },
            JournalError::NotFound { path } => JournalError::NotFound { path: path.clone() },
            JournalError::Unstorable { path, detail } => JournalError::Unstorable {
                path: path.clone(),
                detail: detail.clone(),
            },
            JournalError::Other { path, source } => JournalError::Other {
                path: path.clone(),
                source: source.to_string().into(),
            },
        }
    }

    /// Classifies a SQLite error on `path`.
    pub(crate) fn sqlite(path: &Path, error: rusqlite::Error) -> JournalError {
        let path = path.to_path_buf();
        let code = error.sqlite_error_code();
        match code {
            Some(ErrorCode::DiskFull) => JournalError::DiskFull { path },
            Some(ErrorCode::ReadOnly) | Some(ErrorCode::PermissionDenied) => {
                JournalError::ReadOnly {
                    path,
                    what: format!("the file or its directory ({error})"),
                }
            }
            Some(ErrorCode::DatabaseCorrupt) | Some(ErrorCode::NotADatabase) => {
                JournalError::Corrupt {
                    path,
                    detail: error.to_string(),
                }
            }
            Some(ErrorCode::DatabaseBusy) | Some(ErrorCode::DatabaseLocked) => {
                let lock = super::journal::lock_path(&path);
                JournalError::Locked { path, lock }
            }
            _ => JournalError::Other {
                path,
                source: Box::new(error),
            },
        }
    }

    /// Classifies an I/O error on `path` (or on a file beside it).
    pub(crate) fn io(path: &Path, what: &str, error: std::io::Error) -> JournalError {
        let path = path.to_path_buf();
        match error.kind() {
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                JournalError::ReadOnly {
                    path,
                    what: format!("{what} ({error})"),
                }
            }
            std::io::ErrorKind::StorageFull => JournalError::DiskFull { path },
            _ => JournalError::Other {
                path,
                source: format!("{what}: {error}").into(),
            },
        }
    }
}
