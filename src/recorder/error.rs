//! Why a recorder could not start: each error names the cause and the fix.

use std::net::SocketAddr;
use std::path::PathBuf;

/// Why the recorder could not start.
#[derive(Debug, thiserror::Error)]
pub enum RecorderError {
    /// The output folder could not be created or written.
    #[error("cannot write the output folder {path}: {source} (choose another with --out)")]
    OutDir {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The state directory could not be created or written.
    #[error(
        "cannot use the state directory {path}: {source} (it holds the journal, token and socket; \
         make it writable or choose another --out)"
    )]
    StateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// Another recorder writes into the same output folder.
    #[error(
        "another `touchmove record` is recording into {out} (it holds {lock}); stop it first, or \
         give this one another --out"
    )]
    Busy {
        /// The output folder.
        out: PathBuf,
        /// The lock it holds.
        lock: PathBuf,
    },
    /// The journal could not be opened or read.
    #[error("journal {path}: {message}")]
    Journal {
        /// The journal file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The time control is not valid.
    #[error("{0}")]
    TimeControl(String),
    /// A board or round number is out of bounds.
    #[error("{0}")]
    Numbers(String),
    /// The event has no boards.
    #[error(
        "no boards to record: give --port PATH (or --port auto), or list [[board]] entries in the event file"
    )]
    NoBoards,
    /// The web server could not start.
    #[error("web server on {addr}: {message}")]
    Server {
        /// The address.
        addr: SocketAddr,
        /// Why.
        message: String,
    },
    /// The lichess pusher could not start.
    #[error("lichess: {0}")]
    Lichess(String),
    /// A DGT Pegasus board and no developer key to open it with.
    #[error("{0}")]
    PegasusKey(String),
}
