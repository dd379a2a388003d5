//! The journal: an append-only SQLite log, committed to disk before the caller acts.
//!
//! One file for one concept, the journal's table and the queries on it: the schema, the
//! appends and the reads must agree, and are read together.

use std::borrow::{Borrow, Cow};
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use super::board_key::BoardKey;
use super::error::JournalError;
use crate::act::Event;
use crate::board::Millis;
use crate::record::arbiter::ArbiterRequest;

/// `PRAGMA application_id` of a touchmove journal ("TmJ1").
const APPLICATION_ID: i32 = 0x546d_4a31;
/// `PRAGMA user_version`: the schema this code writes. Version 2 journals every arbiter action
/// under its board's key (round and board); version 1 journalled them without a board, and is
/// migrated when opened for writing ([`Journal::open`]).
const SCHEMA_VERSION: i32 = 2;

const SCHEMA: &str = "
CREATE TABLE sessions (
    id INTEGER PRIMARY KEY,
    started_unix_ms INTEGER NOT NULL,
    program TEXT NOT NULL
);
CREATE TABLE boards (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE
);
CREATE TABLE entries (
    seq INTEGER PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(id),
    board INTEGER REFERENCES boards(id),
    t_ms INTEGER NOT NULL,
    kind INTEGER NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX entries_by_board ON entries(board, kind, seq);
";

/// Most entries a simulation's journal holds in its open transaction before committing it:
/// few enough that its pages stay in SQLite's page cache.
const MAX_UNCOMMITTED: usize = 1024;

const SELECT_ENTRIES: &str = "SELECT e.seq, e.session, b.key, e.t_ms, e.kind, e.data
    FROM entries e LEFT JOIN boards b ON b.id = e.board";

/// The crash-proof record of a recorder: every byte chunk received from a board, every event
/// emitted, every arbiter action, each with its receive time.
///
/// Opened for writing, the journal uses SQLite's write-ahead log with `synchronous=FULL`: when
/// an `append_*` call returns its sequence number, the entry is on disk and survives a
/// `kill -9` or a power loss. Each append is its own transaction; [`Journal::append_all`]
/// commits several entries at once for throughput.
///
/// Only one writer may hold a journal: a lock file (`FILE.lock`, an `flock` released by the
/// kernel when the process dies) keeps a second recorder out. Readers
/// ([`Journal::open_read_only`]) may read while the recorder writes.
///
/// Times are the recorder's milliseconds since its start; each start of a writer is a
/// [`Session`] with its wall-clock start, so entries of separate runs can be put on one
/// timeline ([`continuous_times`]).
pub struct Journal {
    path: PathBuf,
    conn: Connection,
    session: Option<u64>,
    boards: HashMap<BoardKey, i64>,
    /// Appends share one open transaction, committed when it holds [`MAX_UNCOMMITTED`]
    /// entries and when the journal is dropped ([`Journal::without_disk_syncs`]).
    grouped_commits: bool,
    /// Entries appended to the open transaction of grouped commits.
    uncommitted: usize,
    /// Held for the writer's lifetime; `None` for readers.
    _lock: Option<Flock<File>>,
}

/// One run of a recorder writing the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Session {
    /// Session number, increasing from 1.
    pub id: u64,
    /// Wall-clock time of the session's start (milliseconds since 1970, UTC).
    pub started_unix_ms: u64,
}

/// A journalled value with its place in the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped<T> {
    /// Sequence number: the order of all entries of the journal.
    pub seq: u64,
    /// The session that wrote it.
    pub session: u64,
    /// The session's milliseconds when it was received or emitted.
    pub t_ms: Millis,
    /// The value.
    pub value: T,
}

/// Any journal entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Sequence number: the order of all entries of the journal.
    pub seq: u64,
    /// The session that wrote it.
    pub session: u64,
    /// The board it concerns (`None` for journal-wide metadata).
    pub board: Option<BoardKey>,
    /// The session's milliseconds when it was received or emitted.
    pub t_ms: Millis,
    /// What was journalled.
    pub record: Record,
}

/// What a journal entry holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    /// Bytes received from a board, exactly as read.
    Bytes(Vec<u8>),
    /// An event of the act-of-moving machine.
    Event(Event),
    /// An arbiter action with its author.
    Arbiter(ArbiterRequest),
    /// A game started or ended on the board.
    Boundary(GameBoundary),
    /// Anything else the recorder needs to rebuild its state (configuration, pairings).
    Metadata {
        /// What it is.
        key: String,
        /// Its value.
        value: serde_json::Value,
    },
}

/// A new entry for [`Journal::append_all`].
#[derive(Debug, Clone, PartialEq)]
pub struct NewEntry {
    /// The board (`None` for journal-wide metadata).
    pub board: Option<BoardKey>,
    /// The session's milliseconds.
    pub t_ms: Millis,
    /// What to journal.
    pub record: Record,
}

/// Where a game begins or ends in a board's stream, so that a restart replays only the
/// current game's bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "boundary", rename_all = "snake_case")]
pub enum GameBoundary {
    /// A game starts with the bytes after this entry.
    Started {
        /// The recorder's name for the game (e.g. "round 3 board 12").
        game: String,
    },
    /// The game ended.
    Ended {
        /// The recorder's name for the game.
        game: String,
        /// PGN result token.
        result: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bytes = 1,
    Event = 2,
    Arbiter = 3,
    Boundary = 4,
    Metadata = 5,
}

#[derive(Serialize, Deserialize)]
struct MetadataJson {
    key: String,
    value: serde_json::Value,
}

/// The lock file that keeps a second writer out of `journal`.
pub fn lock_path(journal: &Path) -> PathBuf {
    let mut name = journal.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

impl Journal {
    /// Opens (creating if needed) the journal at `path` for writing.
    ///
    /// Fails with a [`JournalError`] naming the cause: read-only file or directory, another
    /// recorder holding the journal, a damaged file or a file that is not a journal.
    pub fn open(path: impl AsRef<Path>) -> Result<Journal, JournalError> {
        let path = path.as_ref().to_path_buf();
        check_writable(&path)?;
        let lock = acquire_lock(&path)?;
        let existed = path.exists();
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags)
            .map_err(|e| JournalError::sqlite(&path, e))?;
        let mut journal = Journal {
            path,
            conn,
            session: None,
            boards: HashMap::new(),
            grouped_commits: false,
            uncommitted: 0,
            _lock: Some(lock),
        };
        journal.configure_for_writing()?;
        journal.check_identity(true)?;
        journal.migrate()?;
        if !existed {
            sync_parent_directory(&journal.path)?;
        }
        Ok(journal)
    }

    /// Opens an existing journal for reading only (while a recorder may be writing it).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Journal, JournalError> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(JournalError::NotFound { path });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(&path, flags)
            .map_err(|e| JournalError::sqlite(&path, e))?;
        let journal = Journal {
            path,
            conn,
            session: None,
            boards: HashMap::new(),
            grouped_commits: false,
            uncommitted: 0,
            _lock: None,
        };
        journal
            .conn
            .busy_timeout(Duration::from_secs(5))
            .map_err(|e| journal.error(e))?;
        journal.check_identity(false)?;
        Ok(journal)
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Starts a new session (a run of the recorder) whose time 0 is `started_unix_ms`
    /// (milliseconds since 1970, UTC). Appends start a session themselves, dated now, if none
    /// was started.
    pub fn begin_session(&mut self, started_unix_ms: u64) -> Result<u64, JournalError> {
        let started = self.to_sql_int(started_unix_ms, "session start time")?;
        self.conn
            .execute(
                "INSERT INTO sessions(started_unix_ms, program) VALUES (?1, ?2)",
                params![started, concat!("touchmove ", env!("CARGO_PKG_VERSION"))],
            )
            .map_err(|e| self.error(e))?;
        let id = self.conn.last_insert_rowid() as u64;
        self.session = Some(id);
        Ok(id)
    }

    /// The current session, if one was started by this writer.
    pub fn session(&self) -> Option<u64> {
        self.session
    }

    /// Journals bytes received from `board` at `t_ms`; returns their sequence number once they
    /// are on disk.
    pub fn append_bytes(
        &mut self,
        board: impl Borrow<BoardKey>,
        t_ms: Millis,
        bytes: &[u8],
    ) -> Result<u64, JournalError> {
        self.append_encoded(Some(board.borrow()), t_ms, Kind::Bytes, bytes)
    }

    /// Journals an event of `board`'s act-of-moving machine.
    pub fn append_event(
        &mut self,
        board: impl Borrow<BoardKey>,
        t_ms: Millis,
        event: &Event,
    ) -> Result<u64, JournalError> {
        let json = self.to_json(event)?;
        self.append_encoded(Some(board.borrow()), t_ms, Kind::Event, &json)
    }

    /// Journals an arbiter action on `board` (its round and number: the request itself names
    /// only the board number, which every round reuses) with its author.
    pub fn append_arbiter(
        &mut self,
        board: impl Borrow<BoardKey>,
        t_ms: Millis,
        request: &ArbiterRequest,
    ) -> Result<u64, JournalError> {
        let json = self.to_json(request)?;
        self.append_encoded(Some(board.borrow()), t_ms, Kind::Arbiter, &json)
    }

    /// Journals the start or end of a game on `board`.
    pub fn append_boundary(
        &mut self,
        board: impl Borrow<BoardKey>,
        t_ms: Millis,
        boundary: &GameBoundary,
    ) -> Result<u64, JournalError> {
        let json = self.to_json(boundary)?;
        self.append_encoded(Some(board.borrow()), t_ms, Kind::Boundary, &json)
    }

    /// Journals recorder state under `key`, for `board` or (with `None`) for the journal.
    pub fn append_metadata(
        &mut self,
        board: Option<&BoardKey>,
        t_ms: Millis,
        key: &str,
        value: &serde_json::Value,
    ) -> Result<u64, JournalError> {
        let record = Record::Metadata {
            key: key.to_string(),
            value: value.clone(),
        };
        self.append(board, t_ms, &record)
    }

    /// Journals any record, for `board` or (with `None`) for the journal.
    pub fn append(
        &mut self,
        board: Option<&BoardKey>,
        t_ms: Millis,
        record: &Record,
    ) -> Result<u64, JournalError> {
        let (kind, data) = self.encode(record)?;
        self.append_encoded(board, t_ms, kind, &data)
    }

    /// Journals several entries in one transaction (one disk sync): all of them or, on error,
    /// none. Returns their sequence numbers in order.
    pub fn append_all(&mut self, entries: &[NewEntry]) -> Result<Vec<u64>, JournalError> {
        let mut encoded = Vec::with_capacity(entries.len());
        for entry in entries {
            let t_ms = self.to_sql_int(entry.t_ms, "time")?;
            let (kind, data) = self.encode(&entry.record)?;
            encoded.push((entry.board.as_ref(), t_ms, kind, data));
        }
        let rows: Vec<Row<'_>> = encoded
            .iter()
            .map(|(board, t_ms, kind, data)| (*board, *t_ms, *kind, data.as_ref()))
            .collect();
        self.commit_rows(&rows)
    }

    /// Commits without waiting for the disk (`synchronous=OFF`), writing each transaction's
    /// pages straight into the file with its rollback journal in memory, and appends in one
    /// open transaction, committed every [`MAX_UNCOMMITTED`] entries and when the journal is
    /// dropped. For a simulation: its recorder runs on the simulation's one thread and is
    /// killed by dropping it, so only ever between two appends, and the drop commits what
    /// was appended: each append is as safe as it is for a real recorder once its call
    /// returns, and the run costs a transaction per thousand entries instead of one per
    /// entry. A write-ahead log would cost every commit twice the page writes, their checksums
    /// and a copy back. Each append still is all or none (a savepoint), and reads on this
    /// journal see every entry appended.
    pub fn without_disk_syncs(&mut self) -> Result<(), JournalError> {
        self.conn
            .pragma_update(None, "synchronous", "OFF")
            .map_err(|e| self.error(e))?;
        // One connection at a time (a simulation's recorder, then its replay, then its
        // judge): no file lock taken and released around every transaction.
        self.conn
            .pragma_update(None, "locking_mode", "EXCLUSIVE")
            .map_err(|e| self.error(e))?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = MEMORY", [], |r| r.get(0))
            .map_err(|e| self.error(e))?;
        if mode.eq_ignore_ascii_case("memory") {
            self.grouped_commits = true;
            Ok(())
        } else {
            Err(JournalError::Other {
                path: self.path.clone(),
                source: format!("SQLite kept journal_mode {mode} instead of memory").into(),
            })
        }
    }

    /// Limits the journal file to about `max_bytes` (SQLite's `max_page_count`); appends beyond
    /// it fail as [`JournalError::DiskFull`]. Returns the limit in force, in bytes.
    pub fn limit_size(&mut self, max_bytes: u64) -> Result<u64, JournalError> {
        // A full disk may roll back the whole open transaction: from now on each append
        // commits on its own, as a real recorder's does.
        self.commit_open_transaction()?;
        self.grouped_commits = false;
        let page_size: i64 = self
            .conn
            .query_row("PRAGMA page_size", [], |r| r.get(0))
            .map_err(|e| self.error(e))?;
        let pages = (max_bytes / page_size.max(1) as u64).max(1);
        let set: i64 = self
            .conn
            .query_row(&format!("PRAGMA max_page_count = {pages}"), [], |r| {
                r.get(0)
            })
            .map_err(|e| self.error(e))?;
        Ok(set as u64 * page_size as u64)
    }

    /// Runs SQLite's `quick_check` over the whole file.
    pub fn check_integrity(&self) -> Result<(), JournalError> {
        let result: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))
            .map_err(|e| self.error(e))?;
        if result == "ok" {
            Ok(())
        } else {
            Err(JournalError::Corrupt {
                path: self.path.clone(),
                detail: result,
            })
        }
    }

    /// Every session, oldest first.
    pub fn sessions(&self) -> Result<Vec<Session>, JournalError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, started_unix_ms FROM sessions ORDER BY id")
            .map_err(|e| self.error(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(Session {
                    id: r.get::<_, i64>(0)? as u64,
                    started_unix_ms: r.get::<_, i64>(1)?.max(0) as u64,
                })
            })
            .map_err(|e| self.error(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.error(e))
    }

    /// Every board that has entries, in the order they first appeared.
    pub fn boards(&self) -> Result<Vec<BoardKey>, JournalError> {
        let mut stmt = self
            .conn
            .prepare("SELECT key FROM boards ORDER BY id")
            .map_err(|e| self.error(e))?;
        let keys = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .map_err(|e| self.error(e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.error(e))?;
        keys.iter().map(|k| self.parse_key(k)).collect()
    }

    /// The bytes received from `board`, in order.
    pub fn bytes(&self, board: &BoardKey) -> Result<Vec<Stamped<Vec<u8>>>, JournalError> {
        self.bytes_after(board, 0)
    }

    /// The bytes received from `board` after entry `after_seq` (e.g. a game's start boundary).
    pub fn bytes_after(
        &self,
        board: &BoardKey,
        after_seq: u64,
    ) -> Result<Vec<Stamped<Vec<u8>>>, JournalError> {
        self.typed(board, Kind::Bytes, after_seq, |r| match r {
            Record::Bytes(b) => Some(b),
            _ => None,
        })
    }

    /// The events emitted for `board`, in order.
    pub fn events(&self, board: &BoardKey) -> Result<Vec<Stamped<Event>>, JournalError> {
        self.typed(board, Kind::Event, 0, |r| match r {
            Record::Event(e) => Some(e),
            _ => None,
        })
    }

    /// The game boundaries of `board`, in order.
    pub fn boundaries(&self, board: &BoardKey) -> Result<Vec<Stamped<GameBoundary>>, JournalError> {
        self.typed(board, Kind::Boundary, 0, |r| match r {
            Record::Boundary(b) => Some(b),
            _ => None,
        })
    }

    /// Every arbiter action, in order.
    pub fn arbiter_actions(&self) -> Result<Vec<Stamped<ArbiterRequest>>, JournalError> {
        let entries = self.select(
            "WHERE e.kind = ?1 ORDER BY e.seq",
            params![Kind::Arbiter as i64],
        )?;
        Ok(entries
            .into_iter()
            .filter_map(|e| match e.record {
                Record::Arbiter(request) => Some(Stamped {
                    seq: e.seq,
                    session: e.session,
                    t_ms: e.t_ms,
                    value: request,
                }),
                _ => None,
            })
            .collect())
    }

    /// Every entry after `after_seq`, of every board, in journal order: what a restarted
    /// recorder replays.
    pub fn entries_after(&self, after_seq: u64) -> Result<Vec<Entry>, JournalError> {
        self.entries_after_limit(after_seq, usize::MAX)
    }

    /// At most `limit` entries after `after_seq`, of every board, in journal order: what an
    /// outbox (the cluster forwarder) sends next.
    pub fn entries_after_limit(
        &self,
        after_seq: u64,
        limit: usize,
    ) -> Result<Vec<Entry>, JournalError> {
        let after = self.to_sql_int(after_seq, "sequence number")?;
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.select(
            "WHERE e.seq > ?1 ORDER BY e.seq LIMIT ?2",
            params![after, limit],
        )
    }

    /// Every entry of `board` after `after_seq`, in journal order.
    pub fn board_entries(
        &self,
        board: &BoardKey,
        after_seq: u64,
    ) -> Result<Vec<Entry>, JournalError> {
        let after = self.to_sql_int(after_seq, "sequence number")?;
        self.select(
            "WHERE b.key = ?1 AND e.seq > ?2 ORDER BY e.seq",
            params![board.to_string(), after],
        )
    }

    /// The sequence number of the last entry (0 for an empty journal).
    pub fn last_seq(&self) -> Result<u64, JournalError> {
        // Cached: a cluster forwarder asks after every commit.
        let last: Option<i64> = self
            .conn
            .prepare_cached("SELECT max(seq) FROM entries")
            .and_then(|mut stmt| stmt.query_row([], |r| r.get(0)))
            .map_err(|e| self.error(e))?;
        Ok(last.unwrap_or(0).max(0) as u64)
    }

    fn configure_for_writing(&mut self) -> Result<(), JournalError> {
        self.conn
            .busy_timeout(Duration::from_secs(5))
            .map_err(|e| self.error(e))?;
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .map_err(|e| self.error(e))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(JournalError::Other {
                path: self.path.clone(),
                source: format!(
                    "SQLite refused write-ahead logging (journal_mode is {mode}); put the journal on a local disk"
                )
                .into(),
            });
        }
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(|e| self.error(e))?;
        // macOS fsync does not flush the drive cache; F_FULLFSYNC does.
        #[cfg(target_os = "macos")]
        self.conn
            .pragma_update(None, "fullfsync", "ON")
            .map_err(|e| self.error(e))?;
        Ok(())
    }

    fn check_identity(&self, create: bool) -> Result<(), JournalError> {
        let read = |pragma: &str| -> Result<i64, JournalError> {
            self.conn
                .query_row(pragma, [], |r| r.get(0))
                .map_err(|e| self.error(e))
        };
        let application_id = read("PRAGMA application_id")?;
        let version = read("PRAGMA user_version")?;
        let objects = read("SELECT count(*) FROM sqlite_master")?;
        let not_a_journal = |detail: String| JournalError::NotAJournal {
            path: self.path.clone(),
            detail,
        };
        if application_id == 0 && objects == 0 {
            if !create {
                return Err(not_a_journal("the database is empty".into()));
            }
            let init = format!(
                "BEGIN IMMEDIATE; {SCHEMA} PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION}; COMMIT;"
            );
            return self.conn.execute_batch(&init).map_err(|e| self.error(e));
        }
        if application_id != i64::from(APPLICATION_ID) {
            return Err(not_a_journal(format!(
                "a SQLite database with application id {application_id:#x}"
            )));
        }
        if version > i64::from(SCHEMA_VERSION) {
            return Err(not_a_journal(format!(
                "written by a newer touchmove (journal schema {version}, this one reads {SCHEMA_VERSION}); use that version"
            )));
        }
        Ok(())
    }

    /// Brings a journal of an older schema up to [`SCHEMA_VERSION`], in one transaction.
    ///
    /// Version 1 journalled arbiter actions without a board key, so a restart applied them to
    /// that board number of whatever round it replayed. Each such action gets the round its
    /// recorder run was recording: a run records one round, so the round of the other
    /// entries of the action's session (the nearest one when a session saw several, the
    /// nearest session's when its own has none). An action no entry dates stays without a
    /// board, and no replay applies it.
    fn migrate(&mut self) -> Result<(), JournalError> {
        let version: i64 = self
            .conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| self.error(e))?;
        if version >= i64::from(SCHEMA_VERSION) {
            return Ok(());
        }
        let path = self.path.clone();
        let fail = |e| JournalError::sqlite(&path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let orphans: Vec<(i64, i64, Vec<u8>)> = {
            let mut stmt = tx
                .prepare(
                    "SELECT seq, session, data FROM entries WHERE kind = ?1 AND board IS NULL \
                     ORDER BY seq",
                )
                .map_err(fail)?;
            stmt.query_map([Kind::Arbiter as i64], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .map_err(fail)?
            .collect::<Result<_, _>>()
            .map_err(fail)?
        };
        // (session, seq, round) of every pairing-keyed board's first and last entry in each
        // session: enough to find the nearest round.
        let marks: Vec<(i64, i64, u32)> = {
            let mut stmt = tx
                .prepare(
                    "SELECT e.session, min(e.seq), max(e.seq), b.key FROM entries e \
                     JOIN boards b ON b.id = e.board GROUP BY e.session, b.key",
                )
                .map_err(fail)?;
            let rows: Vec<(i64, i64, i64, String)> = stmt
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
                .map_err(fail)?
                .collect::<Result<_, _>>()
                .map_err(fail)?;
            rows.into_iter()
                .filter_map(|(session, first, last, key)| match key.parse() {
                    Ok(BoardKey::Pairing { round, .. }) => {
                        Some([(session, first, round), (session, last, round)])
                    }
                    _ => None,
                })
                .flatten()
                .collect()
        };
        for (seq, session, data) in orphans {
            let Ok(request) = serde_json::from_slice::<ArbiterRequest>(&data) else {
                continue;
            };
            let nearest = marks
                .iter()
                .min_by_key(|(s, at, _)| ((*s - session).abs(), (*at - seq).abs()))
                .map(|(_, _, round)| *round);
            let Some(round) = nearest else {
                continue;
            };
            let key = BoardKey::Pairing {
                round,
                board: request.board,
            }
            .to_string();
            tx.execute("INSERT OR IGNORE INTO boards(key) VALUES (?1)", [&key])
                .map_err(fail)?;
            tx.execute(
                "UPDATE entries SET board = (SELECT id FROM boards WHERE key = ?1) WHERE seq = ?2",
                params![key, seq],
            )
            .map_err(fail)?;
        }
        tx.execute_batch(&format!("PRAGMA user_version = {SCHEMA_VERSION}"))
            .map_err(fail)?;
        tx.commit().map_err(fail)?;
        self.boards.clear();
        Ok(())
    }

    fn ensure_session(&mut self) -> Result<u64, JournalError> {
        match self.session {
            Some(id) => Ok(id),
            None => self.begin_session(unix_now_ms()),
        }
    }

    fn append_encoded(
        &mut self,
        board: Option<&BoardKey>,
        t_ms: Millis,
        kind: Kind,
        data: &[u8],
    ) -> Result<u64, JournalError> {
        let t_ms = self.to_sql_int(t_ms, "time")?;
        let seqs = self.commit_rows(&[(board, t_ms, kind, data)])?;
        seqs.first().copied().ok_or_else(|| JournalError::Other {
            path: self.path.clone(),
            source: "SQLite gave no sequence number for the entry".into(),
        })
    }

    /// Inserts `rows` in one transaction (one disk sync), with the boards they name that the
    /// journal does not know yet: a board's first entry costs no sync of its own, so that a
    /// round's boards starting together share the syncs of their first entries.
    fn commit_rows(&mut self, rows: &[Row<'_>]) -> Result<Vec<u64>, JournalError> {
        let session = self.ensure_session()?;
        if self.grouped_commits {
            return self.append_to_open_transaction(session, rows);
        }
        let path = &self.path;
        let fail = |e| JournalError::sqlite(path, e);
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(fail)?;
        let mut added = HashMap::new();
        let seqs = insert_rows(&tx, &self.boards, &mut added, session, rows).map_err(fail)?;
        tx.commit().map_err(fail)?;
        // Known only once committed: a rolled-back transaction took its boards with it.
        self.boards.extend(added);
        Ok(seqs)
    }

    /// [`commit_rows`](Self::commit_rows) for grouped commits: `rows` go into the open
    /// transaction (begun if none is) under a savepoint, so that they are all or none.
    fn append_to_open_transaction(
        &mut self,
        session: u64,
        rows: &[Row<'_>],
    ) -> Result<Vec<u64>, JournalError> {
        if self.uncommitted >= MAX_UNCOMMITTED {
            self.commit_open_transaction()?;
        }
        let path = &self.path;
        let fail = |e| JournalError::sqlite(path, e);
        if self.conn.is_autocommit() {
            run_cached(&self.conn, "BEGIN IMMEDIATE").map_err(fail)?;
        }
        // One row of a known board is one statement, all or none by itself.
        let alone = match rows {
            [(board, ..)] => board.is_none_or(|key| self.boards.contains_key(key)),
            _ => false,
        };
        if !alone {
            run_cached(&self.conn, "SAVEPOINT append").map_err(fail)?;
        }
        let mut added = HashMap::new();
        let inserted =
            insert_rows(&self.conn, &self.boards, &mut added, session, rows).and_then(|seqs| {
                if !alone {
                    run_cached(&self.conn, "RELEASE append")?;
                }
                Ok(seqs)
            });
        match inserted {
            Ok(seqs) => {
                self.boards.extend(added);
                self.uncommitted += rows.len();
                Ok(seqs)
            }
            Err(e) => {
                // Undoes these rows only: the appends before them were answered, and stay.
                if !alone {
                    let _ = run_cached(&self.conn, "ROLLBACK TO append");
                    let _ = run_cached(&self.conn, "RELEASE append");
                }
                if self.conn.is_autocommit() && self.uncommitted > 0 {
                    // SQLite ended the whole transaction (out of memory, an I/O error).
                    tracing::error!(
                        "journal {}: {} entries appended before this error were rolled back",
                        self.path.display(),
                        self.uncommitted
                    );
                    self.uncommitted = 0;
                }
                Err(JournalError::sqlite(&self.path, e))
            }
        }
    }

    /// Commits the open transaction of grouped commits, if one is open.
    fn commit_open_transaction(&mut self) -> Result<(), JournalError> {
        if self.conn.is_autocommit() {
            return Ok(());
        }
        run_cached(&self.conn, "COMMIT").map_err(|e| self.error(e))?;
        self.uncommitted = 0;
        Ok(())
    }

    /// The kind and stored bytes of `record`; bytes received are stored as they are.
    fn encode<'r>(&self, record: &'r Record) -> Result<(Kind, Cow<'r, [u8]>), JournalError> {
        let json = |value: Vec<u8>| Cow::Owned(value);
        Ok(match record {
            Record::Bytes(bytes) => (Kind::Bytes, Cow::Borrowed(bytes.as_slice())),
            Record::Event(event) => (Kind::Event, json(self.to_json(event)?)),
            Record::Arbiter(request) => (Kind::Arbiter, json(self.to_json(request)?)),
            Record::Boundary(boundary) => (Kind::Boundary, json(self.to_json(boundary)?)),
            Record::Metadata { key, value } => (
                Kind::Metadata,
                json(self.to_json(&MetadataJson {
                    key: key.clone(),
                    value: value.clone(),
                })?),
            ),
        })
    }

    fn decode(&self, seq: u64, kind: i64, data: Vec<u8>) -> Result<Record, JournalError> {
        let corrupt = |detail: String| JournalError::Corrupt {
            path: self.path.clone(),
            detail: format!("entry {seq}: {detail}"),
        };
        let json_err = |e: serde_json::Error| corrupt(format!("unreadable JSON ({e})"));
        Ok(match kind {
            1 => Record::Bytes(data),
            2 => Record::Event(serde_json::from_slice(&data).map_err(json_err)?),
            3 => Record::Arbiter(serde_json::from_slice(&data).map_err(json_err)?),
            4 => Record::Boundary(serde_json::from_slice(&data).map_err(json_err)?),
            5 => {
                let m: MetadataJson = serde_json::from_slice(&data).map_err(json_err)?;
                Record::Metadata {
                    key: m.key,
                    value: m.value,
                }
            }
            other => return Err(corrupt(format!("unknown entry kind {other}"))),
        })
    }

    fn select(
        &self,
        filter: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<Entry>, JournalError> {
        let mut stmt = self
            .conn
            .prepare_cached(&format!("{SELECT_ENTRIES} {filter}"))
            .map_err(|e| self.error(e))?;
        let rows = stmt
            .query_map(params, |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Vec<u8>>(5)?,
                ))
            })
            .map_err(|e| self.error(e))?;
        let mut entries = Vec::new();
        for row in rows {
            let (seq, session, board, t_ms, kind, data) = row.map_err(|e| self.error(e))?;
            let seq = seq.max(0) as u64;
            entries.push(Entry {
                seq,
                session: session.max(0) as u64,
                board: board.map(|k| self.parse_key(&k)).transpose()?,
                t_ms: t_ms.max(0) as u64,
                record: self.decode(seq, kind, data)?,
            });
        }
        Ok(entries)
    }

    fn typed<T>(
        &self,
        board: &BoardKey,
        kind: Kind,
        after_seq: u64,
        pick: impl Fn(Record) -> Option<T>,
    ) -> Result<Vec<Stamped<T>>, JournalError> {
        let after = self.to_sql_int(after_seq, "sequence number")?;
        let entries = self.select(
            "WHERE b.key = ?1 AND e.kind = ?2 AND e.seq > ?3 ORDER BY e.seq",
            params![board.to_string(), kind as i64, after],
        )?;
        Ok(entries
            .into_iter()
            .filter_map(|e| {
                pick(e.record).map(|value| Stamped {
                    seq: e.seq,
                    session: e.session,
                    t_ms: e.t_ms,
                    value,
                })
            })
            .collect())
    }

    fn parse_key(&self, text: &str) -> Result<BoardKey, JournalError> {
        text.parse().map_err(|e| JournalError::Corrupt {
            path: self.path.clone(),
            detail: format!("board table: {e}"),
        })
    }

    fn to_json<T: Serialize>(&self, value: &T) -> Result<Vec<u8>, JournalError> {
        serde_json::to_vec(value).map_err(|e| JournalError::Unstorable {
            path: self.path.clone(),
            detail: format!("a value that does not serialise to JSON ({e})"),
        })
    }

    fn to_sql_int(&self, value: u64, what: &str) -> Result<i64, JournalError> {
        i64::try_from(value).map_err(|_| JournalError::Unstorable {
            path: self.path.clone(),
            detail: format!("{what} {value}: beyond SQLite's integer range"),
        })
    }

    fn error(&self, e: rusqlite::Error) -> JournalError {
        JournalError::sqlite(&self.path, e)
    }
}

impl Drop for Journal {
    /// Commits what grouped commits hold: what was appended is on disk when the journal is
    /// let go, as when a recorder is killed.
    fn drop(&mut self) {
        if let Err(e) = self.commit_open_transaction() {
            tracing::error!("{e}");
        }
    }
}

/// Runs a statement without parameters or rows (a transaction's begin or end), prepared once
/// per connection.
fn run_cached(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

/// Inserts `rows` with the boards they name that the journal does not know yet (in `known`),
/// noting those in `added`; gives their sequence numbers.
fn insert_rows(
    conn: &Connection,
    known: &HashMap<BoardKey, i64>,
    added: &mut HashMap<BoardKey, i64>,
    session: u64,
    rows: &[Row<'_>],
) -> rusqlite::Result<Vec<u64>> {
    let mut seqs = Vec::with_capacity(rows.len());
    for (board, t_ms, kind, data) in rows {
        let board = match board {
            Some(key) => Some(board_id(conn, known, added, key)?),
            None => None,
        };
        seqs.push(insert(conn, session, board, *t_ms, *kind, data)?);
    }
    Ok(seqs)
}

/// A row for [`Journal::commit_rows`]: board, time, kind, encoded record.
type Row<'a> = (Option<&'a BoardKey>, i64, Kind, &'a [u8]);

/// The id of board `key` in the `boards` table: from `known`, from `added` (boards inserted by
/// the transaction `conn` is in), from the table, or inserted now (and noted in `added`).
fn board_id(
    conn: &Connection,
    known: &HashMap<BoardKey, i64>,
    added: &mut HashMap<BoardKey, i64>,
    key: &BoardKey,
) -> rusqlite::Result<i64> {
    if let Some(id) = known.get(key).or_else(|| added.get(key)) {
        return Ok(*id);
    }
    let text = key.to_string();
    let existing: Option<i64> = conn
        .query_row("SELECT id FROM boards WHERE key = ?1", [&text], |r| {
            r.get(0)
        })
        .optional()?;
    let id = match existing {
        Some(id) => id,
        None => {
            conn.execute("INSERT INTO boards(key) VALUES (?1)", [&text])?;
            conn.last_insert_rowid()
        }
    };
    added.insert(key.clone(), id);
    Ok(id)
}

fn insert(
    conn: &Connection,
    session: u64,
    board: Option<i64>,
    t_ms: i64,
    kind: Kind,
    data: &[u8],
) -> rusqlite::Result<u64> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO entries(session, board, t_ms, kind, data) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    stmt.execute(params![session as i64, board, t_ms, kind as i64, data])?;
    Ok(conn.last_insert_rowid() as u64)
}

/// Puts `(session, t_ms)` stamps, in journal order, on one timeline of milliseconds since the
/// first session's start: each session is shifted by its wall-clock start relative to the
/// first, and times never decrease (a wall clock set back between runs cannot reorder them).
pub fn continuous_times(
    sessions: &[Session],
    stamps: impl IntoIterator<Item = (u64, Millis)>,
) -> Vec<Millis> {
    let start_of = |id: u64| {
        sessions
            .iter()
            .find(|s| s.id == id)
            .map(|s| s.started_unix_ms)
    };
    let origin = sessions.first().map_or(0, |s| s.started_unix_ms);
    let mut current: Option<(u64, Millis)> = None;
    let mut last: Millis = 0;
    let mut out = Vec::new();
    for (session, t_ms) in stamps {
        let offset = match current {
            Some((id, offset)) if id == session => offset,
            _ => {
                let wall = start_of(session).map_or(0, |s| s.saturating_sub(origin));
                let offset = if current.is_none() {
                    wall
                } else {
                    wall.max(last)
                };
                current = Some((session, offset));
                offset
            }
        };
        last = last.max(offset.saturating_add(t_ms));
        out.push(last);
    }
    out
}

fn unix_now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

fn check_writable(path: &Path) -> Result<(), JournalError> {
    use nix::fcntl::AtFlags;
    use nix::unistd::{AccessFlags, faccessat};
    // The effective user decides what this process may write (`access` would ask about the
    // real user).
    let writable = |p: &Path| faccessat(None, p, AccessFlags::W_OK, AtFlags::AT_EACCESS).is_ok();
    let read_only = |what: String| JournalError::ReadOnly {
        path: path.to_path_buf(),
        what,
    };
    if path.exists() {
        if !writable(path) {
            return Err(read_only("the file".into()));
        }
    } else {
        let dir = directory_of(path);
        if !dir.is_dir() {
            return Err(JournalError::Other {
                path: path.to_path_buf(),
                source: format!(
                    "directory {} does not exist; create it or choose another --journal path",
                    dir.display()
                )
                .into(),
            });
        }
    }
    let dir = directory_of(path);
    if !writable(dir) {
        return Err(read_only(format!(
            "its directory {} (SQLite needs to create FILE-wal and FILE-shm there)",
            dir.display()
        )));
    }
    Ok(())
}

fn acquire_lock(path: &Path) -> Result<Flock<File>, JournalError> {
    let lock = lock_path(path);
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock)
        .map_err(|e| JournalError::io(path, &format!("lock file {}", lock.display()), e))?;
    Flock::lock(file, FlockArg::LockExclusiveNonblock).map_err(|(_, errno)| {
        if errno == nix::errno::Errno::EWOULDBLOCK {
            JournalError::Locked {
                path: path.to_path_buf(),
                lock: lock.clone(),
            }
        } else {
            JournalError::io(
                path,
                &format!("locking {}", lock.display()),
                std::io::Error::from(errno),
            )
        }
    })
}

/// Makes a new journal's directory entry durable.
fn sync_parent_directory(path: &Path) -> Result<(), JournalError> {
    let dir = directory_of(path);
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| JournalError::io(path, &format!("syncing directory {}", dir.display()), e))
}
