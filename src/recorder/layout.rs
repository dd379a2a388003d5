//! The PGN folder, in the layout DGT LiveChess writes and broadcast tools read:
//!
//! ```text
//! OUT/tournament.json            {"id", "name", "rounds": [{"count", "live"}, …]}
//! OUT/round-N/index.json         {"pairings": [{"white": {…}, "black": {…}, "result", "live"}]}
//! OUT/round-N/game-K.pgn         board K's game, rewritten after every change
//! OUT/round-N/games.pgn          every game of the round, by board number
//! ```
//!
//! Every file is replaced atomically: written to a temporary file in the same folder (synced
//! when the folder is, see [`OutputFolder::synced`]), then renamed over the old one, so a
//! poller never reads half a file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use crate::event::{EventConfig, Player};

use super::file_replacement::{ThroughSpare, replace_file, replace_through_spare};
pub use super::file_replacement::{replace_through, replace_unsynced, write_atomically};

/// The event's state directory: `OUT.state` beside the output folder `OUT` (for `--out
/// touchmove-out`, `touchmove-out.state`). It holds what must not be published with the PGN
/// files — the journal, the arbiter's token and socket, the lock that keeps a second recorder
/// out — and is created readable by the recorder's user only.
pub fn state_dir(out: &Path) -> PathBuf {
    let named = |p: &Path| {
        p.file_name().map(|name| {
            let mut state = name.to_os_string();
            state.push(".state");
            p.with_file_name(state)
        })
    };
    named(out)
        .or_else(|| out.canonicalize().ok().and_then(|p| named(&p)))
        .unwrap_or_else(|| out.join(".touchmove-state"))
}

/// The `game-K.pgn` files of a round folder, by board number `K`.
pub fn game_files(round_dir: &Path) -> std::io::Result<std::collections::BTreeMap<u32, PathBuf>> {
    let mut files = std::collections::BTreeMap::new();
    for entry in std::fs::read_dir(round_dir)? {
        let path = entry?.path();
        let board = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("game-")?.strip_suffix(".pgn")?.parse().ok());
        if let Some(board) = board {
            files.insert(board, path);
        }
    }
    Ok(files)
}

/// Creates the state directory (mode 0700) if needed.
pub fn prepare_state_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    if !dir.is_dir() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mode = std::fs::metadata(dir)?.permissions().mode();
    if mode & 0o077 != 0 {
        // Best effort on a directory made accessible on purpose (or another user's): the
        // token and the socket in it are 0600 themselves.
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
    }
    Ok(())
}

/// A player as LiveChess's `index.json` names him.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexPlayer {
    /// First name(s).
    pub fname: Option<String>,
    /// Middle name (never split out by us).
    pub mname: Option<String>,
    /// Last name.
    pub lname: String,
    /// FIDE title.
    pub title: Option<String>,
    /// Federation.
    pub federation: Option<String>,
    /// FIDE id, when known (LiveChess Cloud's feed carries it too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fideid: Option<u64>,
}

impl From<&Player> for IndexPlayer {
    fn from(p: &Player) -> IndexPlayer {
        let (lname, fname) = match p.name.split_once(',') {
            Some((last, first)) => (last.trim().to_string(), Some(first.trim().to_string())),
            None => (p.name.trim().to_string(), None),
        };
        IndexPlayer {
            fname,
            mname: None,
            lname,
            title: p.title.clone(),
            federation: p.federation.clone(),
            fideid: p.fide_id,
        }
    }
}

/// One pairing of `index.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IndexPairing {
    /// White.
    pub white: IndexPlayer,
    /// Black.
    pub black: IndexPlayer,
    /// PGN result token, `*` while playing.
    pub result: String,
    /// True while the game is in progress.
    pub live: bool,
}

/// What `index.json` and `tournament.json` need to know about one board's game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardSummary {
    /// Board number.
    pub board: u32,
    /// PGN result token.
    pub result: String,
    /// True while the game is in progress (moves made, no result).
    pub live: bool,
}

#[derive(Serialize)]
struct Index {
    pairings: Vec<IndexPairing>,
}

#[derive(Serialize)]
struct RoundCount {
    count: usize,
    live: usize,
}

#[derive(Serialize)]
struct Tournament<'a> {
    id: &'a str,
    name: &'a str,
    rounds: Vec<RoundCount>,
}

/// The output folder of an event.
#[derive(Debug, Clone)]
pub struct OutputFolder {
    root: PathBuf,
    /// Files are synced to disk before they replace the old ones.
    synced: bool,
    /// Where each file's spare copy is kept ([`OutputFolder::with_spare_dir`]).
    spare_dir: Option<PathBuf>,
    /// The spare copies cannot be swapped in (another file system, an old kernel).
    spares_refused: Arc<AtomicBool>,
}

impl OutputFolder {
    /// The folder at `root` (created by [`OutputFolder::prepare`]).
    pub fn new(root: &Path) -> OutputFolder {
        OutputFolder {
            root: root.to_path_buf(),
            synced: true,
            spare_dir: None,
            spares_refused: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The same folder, rewriting each file through a spare copy of it kept in `dir`, which is
    /// created (mode 0700) if needed; give a private folder on the same file system, such
    /// as the state directory. A rewrite writes the new text over the spare and swaps the
    /// two names in one step (`renameat2` with `RENAME_EXCHANGE`), so readers still see the
    /// old file or the new one, never a part; the spare then holds the old text for the next
    /// rewrite. No file is created or deleted per rewrite, which a file system pays for: ext4
    /// without a journal checks every recently deleted inode before it hands out a new one,
    /// so at hundreds of rewrites a second most of the time went there. Where the swap is
    /// refused, or `dir` cannot be made, each rewrite writes a new temporary file and renames
    /// it over the old one, as without a spare folder.
    pub fn with_spare_dir(mut self, dir: &Path) -> OutputFolder {
        use std::os::unix::fs::DirBuilderExt;
        let made = dir.is_dir()
            || std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .is_ok();
        self.spare_dir = made.then(|| dir.to_path_buf());
        self
    }

    /// The same folder, its files no longer synced to disk before they replace the old ones
    /// ([`replace_unsynced`]): for a folder rebuilt from elsewhere after a crash, where a sync
    /// per rewrite would only cost.
    pub fn unsynced(mut self) -> OutputFolder {
        self.synced = false;
        self
    }

    /// The same folder, its files synced to disk before they replace the old ones or not.
    pub fn synced(mut self, synced: bool) -> OutputFolder {
        self.synced = synced;
        self
    }

    /// Replaces the file at `path` with `bytes`, synced or not as the folder is; readers see
    /// the old text or the new one, never a part.
    pub fn replace(&self, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        if let Some(spare) = self.spare_for(path) {
            match replace_through_spare(path, bytes, self.synced, &spare) {
                ThroughSpare::Done(result) => return result,
                ThroughSpare::Unavailable => {}
                ThroughSpare::Refused => self.spares_refused.store(true, Ordering::Relaxed),
            }
        }
        replace_file(path, bytes, self.synced)
    }

    /// The spare copy of `path`, a file of this folder: its path below the folder with `/`
    /// turned into `.` (`round-2.game-5.pgn`), in the spare folder.
    fn spare_for(&self, path: &Path) -> Option<PathBuf> {
        if self.spares_refused.load(Ordering::Relaxed) {
            return None;
        }
        let dir = self.spare_dir.as_ref()?;
        let below = path.strip_prefix(&self.root).ok()?;
        let name: Vec<String> = below
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        (!name.is_empty()).then(|| dir.join(name.join(".")))
    }

    /// The folder's path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `round-N`.
    pub fn round_dir(&self, round: u32) -> PathBuf {
        self.root.join(format!("round-{round}"))
    }

    /// `round-N/game-K.pgn`.
    pub fn game_path(&self, round: u32, board: u32) -> PathBuf {
        self.round_dir(round).join(format!("game-{board}.pgn"))
    }

    /// `round-N/games.pgn`.
    pub fn round_path(&self, round: u32) -> PathBuf {
        self.round_dir(round).join("games.pgn")
    }

    /// Creates the folder and the round's sub-folder.
    pub fn prepare(&self, round: u32) -> std::io::Result<()> {
        std::fs::create_dir_all(self.round_dir(round))
    }

    /// Rewrites `round-N/game-K.pgn`.
    pub fn write_game(&self, round: u32, board: u32, pgn: &str) -> std::io::Result<()> {
        self.replace(&self.game_path(round, board), pgn.as_bytes())
    }

    /// Rewrites `round-N/games.pgn` from the games' PGN texts in board order.
    pub fn write_round(&self, round: u32, games: &[&str]) -> std::io::Result<()> {
        self.replace(&self.round_path(round), combine(games).as_bytes())
    }

    /// Rewrites `round-N/index.json` and `tournament.json` for the configured round.
    /// Boards missing between 1 and the highest number appear with unknown players, so that
    /// position K-1 of the pairings is board K as LiveChess has it.
    pub fn write_index(
        &self,
        config: &EventConfig,
        boards: &[BoardSummary],
    ) -> std::io::Result<()> {
        let highest = config.boards.iter().map(|b| b.number).max().unwrap_or(0);
        let unknown = Player::named("?");
        let pairings: Vec<IndexPairing> = (1..=highest)
            .map(|n| {
                let board = config.board(n);
                let summary = boards.iter().find(|s| s.board == n);
                IndexPairing {
                    white: board.map_or(&unknown, |b| &b.white).into(),
                    black: board.map_or(&unknown, |b| &b.black).into(),
                    result: summary.map_or("*".to_string(), |s| s.result.clone()),
                    live: summary.is_some_and(|s| s.live),
                }
            })
            .collect();
        let live = pairings.iter().filter(|p| p.live).count();
        let count = pairings.len();
        self.replace(
            &self.round_dir(config.round).join("index.json"),
            to_json(&Index { pairings }).as_bytes(),
        )?;
        let rounds = (1..=config.round)
            .map(|r| {
                if r == config.round {
                    RoundCount { count, live }
                } else {
                    RoundCount {
                        count: self.pairings_in(r),
                        live: 0,
                    }
                }
            })
            .collect();
        let tournament = Tournament {
            id: &config.event,
            name: &config.event,
            rounds,
        };
        self.replace(
            &self.root.join("tournament.json"),
            to_json(&tournament).as_bytes(),
        )
    }

    /// Number of pairings in an earlier round's `index.json` (0 when there is none).
    fn pairings_in(&self, round: u32) -> usize {
        std::fs::read_to_string(self.round_dir(round).join("index.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .and_then(|v| v.get("pairings").and_then(|p| p.as_array()).map(Vec::len))
            .unwrap_or(0)
    }
}

/// A file of an output folder for a [`FolderWriter`] to rewrite.
#[derive(Debug, Clone)]
pub enum FileJob {
    /// `round-N/game-K.pgn`.
    Game {
        /// The round.
        round: u32,
        /// The board.
        board: u32,
        /// Its PGN.
        pgn: String,
    },
    /// `round-N/games.pgn`: the round's games, combined ([`combine`]).
    Round {
        /// The round.
        round: u32,
        /// The combined PGN.
        pgn: String,
    },
    /// `round-N/index.json` and `tournament.json`.
    Index {
        /// The round's event (its number and players).
        config: EventConfig,
        /// Its boards' results.
        summaries: Vec<BoardSummary>,
    },
}

impl FileJob {
    /// Jobs with the same key rewrite the same file.
    fn key(&self) -> (u8, u32, u32) {
        match self {
            FileJob::Game { round, board, .. } => (0, *round, *board),
            FileJob::Round { round, .. } => (1, *round, 0),
            FileJob::Index { config, .. } => (2, config.round, 0),
        }
    }
}

/// A thread that rewrites the files of an output folder off the runtime's threads: of the
/// jobs waiting, only the latest for each file is written, and the thread pauses after each
/// round of writes, so that many changes in that time cost one rewrite. A file that cannot
/// be written is said once (through the writer's `say`), until it is written again.
#[derive(Debug, Clone)]
pub struct FolderWriter {
    jobs: std::sync::mpsc::Sender<FileJob>,
}

impl FolderWriter {
    /// Starts the thread `name` writing into `out`, pausing `pause` after each round of writes.
    pub fn spawn(out: OutputFolder, pause: std::time::Duration, name: &str, say: fn(&str)) -> Self {
        let (jobs, received) = std::sync::mpsc::channel::<FileJob>();
        let spawned = std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                let mut failing: std::collections::BTreeSet<PathBuf> = Default::default();
                while let Ok(first) = received.recv() {
                    let mut latest = std::collections::BTreeMap::new();
                    for job in std::iter::once(first).chain(received.try_iter()) {
                        latest.insert(job.key(), job);
                    }
                    for job in latest.into_values() {
                        let (path, result) = match job {
                            FileJob::Game { round, board, pgn } => (
                                out.game_path(round, board),
                                out.write_game(round, board, &pgn),
                            ),
                            FileJob::Round { round, pgn } => {
                                let path = out.round_path(round);
                                let written = out.replace(&path, pgn.as_bytes());
                                (path, written)
                            }
                            FileJob::Index { config, summaries } => (
                                out.round_dir(config.round).join("index.json"),
                                out.write_index(&config, &summaries),
                            ),
                        };
                        match result {
                            Ok(()) => {
                                failing.remove(&path);
                            }
                            Err(e) => {
                                if failing.insert(path.clone()) {
                                    say(&format!("cannot write {}: {e}", path.display()));
                                }
                            }
                        }
                    }
                    std::thread::sleep(pause);
                }
            });
        if let Err(e) = spawned {
            say(&format!(
                "cannot start the thread that writes the files ({e})"
            ));
        }
        FolderWriter { jobs }
    }

    /// Queues a rewrite (dropped when the thread could not start).
    pub fn send(&self, job: FileJob) {
        let _ = self.jobs.send(job);
    }
}

/// Games separated by one blank line, as LiveChess combines them.
pub fn combine(games: &[&str]) -> String {
    let mut out = String::new();
    for g in games {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(g.trim_end());
        out.push('\n');
    }
    out
}

fn to_json<T: Serialize>(value: &T) -> String {
    // Serialising plain structs of strings and numbers cannot fail.
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::super::file_replacement::SpareClaim;
    use super::*;
    use crate::event::{BoardConfig, BoardSource};

    #[test]
    fn writes_the_livechess_layout() {
        let dir = tempfile::tempdir().unwrap();
        let out = OutputFolder::new(dir.path());
        out.prepare(2).unwrap();
        let config = EventConfig {
            event: "Open".into(),
            round: 2,
            boards: vec![BoardConfig {
                number: 2,
                source: BoardSource::Auto,
                kind: crate::board::kind::BoardKind::Dgt,
                leds: crate::recorder::leds::LedMode::Off,
                white: Player {
                    name: "Moss, M".into(),
                    fide_id: Some(7),
                    ..Player::default()
                },
                black: Player::named("Tufteland"),
            }],
            ..EventConfig::default()
        };
        out.write_game(2, 2, "[Event \"Open\"]\n\n*\n").unwrap();
        out.write_round(2, &["[A \"1\"]\n\n*\n", "[B \"2\"]\n\n*\n"])
            .unwrap();
        out.write_index(
            &config,
            &[BoardSummary {
                board: 2,
                result: "*".into(),
                live: true,
            }],
        )
        .unwrap();
        let index: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("round-2/index.json")).unwrap(),
        )
        .unwrap();
        let p = &index["pairings"];
        assert_eq!(p.as_array().unwrap().len(), 2);
        assert_eq!(p[1]["white"]["lname"], "Moss");
        assert_eq!(p[1]["white"]["fname"], "M");
        assert_eq!(p[1]["white"]["fideid"], 7);
        assert_eq!(p[1]["live"], true);
        let t: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("tournament.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(t["rounds"].as_array().unwrap().len(), 2);
        assert_eq!(t["rounds"][1]["count"], 2);
        assert_eq!(t["rounds"][1]["live"], 1);
        let games = std::fs::read_to_string(dir.path().join("round-2/games.pgn")).unwrap();
        assert_eq!(games, "[A \"1\"]\n\n*\n\n[B \"2\"]\n\n*\n");
        let leftovers = std::fs::read_dir(dir.path().join("round-2"))
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
    }

    fn inode(path: &Path) -> u64 {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).unwrap().ino()
    }

    #[test]
    fn rewrites_through_a_spare_copy_without_making_files() {
        let dir = tempfile::tempdir().unwrap();
        let spares = dir.path().join("out.state/spare");
        let out = OutputFolder::new(&dir.path().join("out"))
            .unsynced()
            .with_spare_dir(&spares);
        out.prepare(1).unwrap();
        let path = out.game_path(1, 3);
        let texts = [
            "1. e4 *\n",
            "1. e4 e5 2. Nf3 Nc6 *\n",
            "1. e4 e5 *\n",
            "1. d4 *\n",
        ];
        let spare = spares.join("round-1.game-3.pgn");
        let mut inodes = std::collections::BTreeSet::new();
        for text in texts {
            out.write_game(1, 3, text).unwrap();
            assert!(spare.exists(), "the next rewrite has its spare ready");
            assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
            inodes.insert(inode(&path));
        }
        assert_eq!(inodes.len(), 2, "the file and its spare trade places");
        assert_eq!(std::fs::read_to_string(spare).unwrap(), texts[2]);
        let published: Vec<String> = std::fs::read_dir(out.round_dir(1))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(published, ["game-3.pgn"]);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&spares).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o700);
    }

    #[test]
    fn a_reader_keeps_the_version_it_opened_through_any_number_of_rewrites() {
        use std::io::Read;
        let dir = tempfile::tempdir().unwrap();
        let out = OutputFolder::new(&dir.path().join("out"))
            .unsynced()
            .with_spare_dir(&dir.path().join("spare"));
        out.prepare(1).unwrap();
        let path = out.game_path(1, 1);
        let text = |n: usize| format!("{}*\n", "e4 e5 ".repeat(n));
        let mut readers = Vec::new();
        for n in 1..=6 {
            out.write_game(1, 1, &text(n)).unwrap();
            readers.push((std::fs::File::open(&path).unwrap(), text(n)));
        }
        for (mut file, opened) in readers {
            let mut read = String::new();
            file.read_to_string(&mut read).unwrap();
            assert_eq!(read, opened, "a reader reads the version it opened");
        }
        let inodes: std::collections::BTreeSet<u64> = (7..=10)
            .map(|n| {
                out.write_game(1, 1, &text(n)).unwrap();
                assert_eq!(std::fs::read_to_string(&path).unwrap(), text(n));
                inode(&path)
            })
            .collect();
        assert_eq!(inodes.len(), 2, "once let go, the spare serves again");
    }

    #[test]
    fn without_a_usable_spare_folder_files_are_still_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("not-a-folder");
        std::fs::write(&blocker, "").unwrap();
        let out = OutputFolder::new(&dir.path().join("out")).with_spare_dir(&blocker.join("spare"));
        out.prepare(1).unwrap();
        let path = out.game_path(1, 1);
        out.write_game(1, 1, "1. e4 *\n").unwrap();
        let first = inode(&path);
        out.write_game(1, 1, "1. e4 e5 *\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "1. e4 e5 *\n");
        assert_ne!(inode(&path), first, "a new file replaced the old one");
    }

    #[test]
    fn a_spare_in_use_by_another_writer_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let spares = dir.path().join("spare");
        let out = OutputFolder::new(&dir.path().join("out")).with_spare_dir(&spares);
        out.prepare(1).unwrap();
        out.write_game(1, 1, "1. e4 *\n").unwrap();
        let spare = spares.join("round-1.game-1.pgn");
        let ready = inode(&spare);
        let claim = SpareClaim::take(&spare).unwrap();
        out.write_game(1, 1, "1. e4 e5 *\n").unwrap();
        drop(claim);
        assert_eq!(
            std::fs::read_to_string(out.game_path(1, 1)).unwrap(),
            "1. e4 e5 *\n"
        );
        assert_eq!(
            (inode(&spare), std::fs::read_to_string(&spare).unwrap()),
            (ready, String::new()),
            "the spare was not touched while claimed"
        );
    }
}
