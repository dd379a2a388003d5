//! A full disk and folders that cannot be written, provoked for real: the recorder says so
//! loudly, naming the file and the fix, records no new game, goes on with the game in
//! progress, and loses nothing it had recorded.
//!
//! - The journal fills up mid-game (SQLite `max_page_count`, the recorder's hidden
//!   `--journal-limit`): SQLite fails exactly as on a full disk. When room is made while
//!   recording, everything held in memory meanwhile reaches the journal.
//! - The round's folder becomes unwritable mid-game (replaced by a file: it works as root
//!   too, where permissions do not stop writes).
//! - A journal that is read-only at start (the recorder runs as `nobody` when the test runs as
//!   root, since root writes through permissions).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::Duration;

use crate::recorder_support::{
    fixture_opening, log, read_board, real_time_board, record_logged, state_dir, stop, uci_moves,
};
use std::sync::Arc;
use touchmove::act::Event;
use touchmove::record::pgn::read_games;

use touchmove::bench::{ScriptGame, event_for_ports};
use touchmove::recorder::{Recorder, RunOptions};
use touchmove::server::feed::Feed;
use touchmove::sim::virtual_board::VirtualBoard;
use touchmove::sim::virtual_board::timeline::Pace;
use touchmove::store::{BoardKey, Journal};

const PLIES: usize = 16;

fn game() -> ScriptGame {
    fixture_opening(0, PLIES)
}

/// One virtual board playing `game` (a ply every ~0.5 s) and an event file for it.
fn board_and_config(dir: &Path, game: &ScriptGame) -> (VirtualBoard, PathBuf) {
    let pace = Pace {
        think_ms: 350,
        step_ms: 60,
    };
    let board = real_time_board(dir, game, pace);
    let config = dir.join("event.toml");
    std::fs::write(
        &config,
        format!(
            "event = \"Disk test\"\n[[board]]\nnumber = 1\nport = \"{}\"\n",
            board.path().display()
        ),
    )
    .unwrap();
    (board, config)
}

fn record(dir: &Path, config: &Path, extra: &[&str]) -> Child {
    let args = std::iter::once(&"--no-server").chain(extra);
    record_logged(config, &dir.join("out"), args, &dir.join("recorder.log"))
}

/// Waits (at most `seconds`) for `board` to play its game, and a moment more for the
/// recorder to write the last move.
async fn played(board: &VirtualBoard, seconds: u64) {
    tokio::time::timeout(Duration::from_secs(seconds), board.finished())
        .await
        .expect("the board plays its game");
    tokio::time::sleep(Duration::from_millis(800)).await;
}

/// The moves the journal holds for board 1, in UCI.
fn journalled_moves(journal: &Path) -> Vec<String> {
    let journal = Journal::open_read_only(journal).unwrap();
    let mut moves: Vec<String> = Vec::new();
    for e in journal
        .events(&BoardKey::Pairing { round: 1, board: 1 })
        .unwrap()
    {
        match e.value {
            Event::Move { ply, uci, .. } => {
                moves.truncate(ply.saturating_sub(1) as usize);
                moves.push(uci);
            }
            Event::Revision { ply, .. } => moves.truncate(ply.saturating_sub(1) as usize),
            _ => {}
        }
    }
    moves
}

fn arbiter_new_game(out: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["arbiter", "--who", "Anna", "--out"])
        .arg(out)
        .args(["--board", "1", "new-game"])
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_journal_stops_new_games_and_keeps_every_move() {
    let dir = tempfile::tempdir().unwrap();
    let game = game();
    let (board, config) = board_and_config(dir.path(), &game);
    let out = dir.path().join("out");
    let journal = state_dir(&out).join("journal.sqlite");
    let child = record(dir.path(), &config, &["--journal-limit", "36864"]);
    played(&board, 40).await;
    let refused = arbiter_new_game(&out);
    stop(child);

    let text = log(dir.path());
    let failing = text
        .lines()
        .find(|l| l.contains("JOURNAL FAILING"))
        .unwrap_or_else(|| panic!("the full journal was not reported:\n{text}"));
    for needle in [
        journal.display().to_string().as_str(),
        "the disk is full",
        "Free space",
        "no new game is recorded",
    ] {
        assert!(failing.contains(needle), "{needle:?} not in: {failing}");
    }
    assert!(!refused.status.success(), "a new game was accepted");
    let answer = String::from_utf8_lossy(&refused.stderr);
    assert!(
        answer.contains(&journal.display().to_string()) && answer.contains("no new game"),
        "{answer}"
    );

    // The game in progress went on: every move is in the PGN file.
    assert_eq!(uci_moves(&read_board(&out, 1)), game.moves_uci);
    // What the journal took before it was full is there, in order.
    let kept = journalled_moves(&journal);
    assert!(
        !kept.is_empty() && kept.len() < PLIES,
        "the journal filled up mid-game ({} of {PLIES} moves journalled); adjust the limit",
        kept.len()
    );
    assert_eq!(kept, game.moves_uci[..kept.len()].to_vec());

    // Restarted with room: the game is rebuilt from the journal, and the PGN file written
    // before, which knew more moves, is kept beside it.
    let child = record(dir.path(), &config, &[]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    stop(child);
    let rebuilt = uci_moves(&read_board(&out, 1));
    eprintln!(
        "journalled before it was full: {} plies; rebuilt after the restart: {} plies",
        kept.len(),
        rebuilt.len()
    );
    assert!(rebuilt.len() >= kept.len(), "{rebuilt:?}");
    assert_eq!(rebuilt, game.moves_uci[..rebuilt.len()].to_vec());
    if rebuilt.len() < PLIES {
        let kept_file = out.join("round-1/game-1.before-restart.pgn");
        let text = std::fs::read_to_string(&kept_file)
            .unwrap_or_else(|e| panic!("{}: {e}", kept_file.display()));
        assert_eq!(
            read_games(&text).unwrap()[0].moves.len(),
            PLIES,
            "{}",
            kept_file.display()
        );
        assert!(log(dir.path()).contains("game-1.before-restart.pgn"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unwritable_round_folder_is_reported_once_and_written_again_when_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let game = game();
    let (board, config) = board_and_config(dir.path(), &game);
    let out = dir.path().join("out");
    let round = out.join("round-1");
    let child = record(dir.path(), &config, &[]);
    // Mid-game, the folder is moved away and a file takes its place.
    let moved = out.join("round-1.moved");
    tokio::time::sleep(Duration::from_secs(3)).await;
    std::fs::rename(&round, &moved).unwrap();
    std::fs::write(&round, b"not a folder").unwrap();
    tokio::time::sleep(Duration::from_secs(2)).await;
    std::fs::remove_file(&round).unwrap();
    std::fs::rename(&moved, &round).unwrap();
    played(&board, 40).await;
    stop(child);

    let text = log(dir.path());
    let game_file = round.join("game-1.pgn").display().to_string();
    let reports: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(&format!("CANNOT WRITE {game_file}")))
        .collect();
    assert_eq!(reports.len(), 1, "said once:\n{text}");
    assert!(
        reports[0].contains("journal") && reports[0].contains("make the folder writable"),
        "{}",
        reports[0]
    );
    assert!(
        text.contains(&format!("{game_file} is written again")),
        "{text}"
    );
    assert_eq!(uci_moves(&read_board(&out, 1)), game.moves_uci);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_only_journal_is_refused_with_the_fix_and_stays_readable() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let game = fixture_opening(0, 4);
    let (board, config) = board_and_config(dir.path(), &game);
    let out = dir.path().join("out");
    let journal = state_dir(&out).join("journal.sqlite");
    let child = record(dir.path(), &config, &[]);
    played(&board, 30).await;
    stop(child);
    assert_eq!(journalled_moves(&journal), game.moves_uci);

    let mode = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m));
    mode(dir.path(), 0o755).unwrap();
    let state = state_dir(&out);
    for folder in [&out, &state] {
        mode(folder, 0o777).unwrap();
        for entry in std::fs::read_dir(folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                mode(&path, 0o666).unwrap();
            }
        }
    }
    mode(&config, 0o644).unwrap();
    mode(&journal, 0o444).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_touchmove"));
    command
        .args(["record", "--no-server", "--config"])
        .arg(&config)
        .arg("--out")
        .arg(&out);
    // SAFETY: a plain system call without arguments.
    if unsafe { libc::geteuid() } == 0 {
        command.uid(65534).gid(65534);
    }
    let o = command.output().unwrap();
    assert!(
        !o.status.success(),
        "the recorder started on a read-only journal"
    );
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains(&journal.display().to_string())
            && e.contains("read-only")
            && e.contains("Make it writable"),
        "{e}"
    );
    assert_eq!(journalled_moves(&journal), game.moves_uci, "nothing lost");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_journal_has_room_again_everything_held_is_journalled() {
    let dir = tempfile::tempdir().unwrap();
    let game = game();
    let (board, _) = board_and_config(dir.path(), &game);
    let config = event_for_ports("Disk test", "600", &[board.path().to_path_buf()]);
    let out = dir.path().join("out");
    let mut options = RunOptions::new(&out, Arc::new(Feed::new()));
    options.journal_limit = Some(36_864);
    let recorder = Recorder::start(config, options).await.unwrap();
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    while !recorder.journal_failing() {
        assert!(
            tokio::time::Instant::now() < until,
            "the journal never filled up"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Some moves are played while the journal is full, then room is made.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let held = journalled_moves(&state_dir(&out).join("journal.sqlite")).len();
    recorder.limit_journal(None).unwrap();
    played(&board, 40).await;
    assert!(!recorder.journal_failing(), "the journal recovered");
    recorder.shutdown().await;
    assert!(held < PLIES, "the journal was full mid-game ({held} plies)");
    assert_eq!(uci_moves(&read_board(&out, 1)), game.moves_uci);
    assert_eq!(
        journalled_moves(&state_dir(&out).join("journal.sqlite")),
        game.moves_uci,
        "every move is in the journal once it had room again"
    );
}

/// While the journal refuses writes, what waits for it in memory is bounded: at the bound the
/// recorder says so (newer entries are not kept for the journal) and the game goes on in the
/// PGN files, every move recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_backlog_of_a_full_journal_is_bounded_and_the_game_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let game = game();
    let (board, config) = board_and_config(dir.path(), &game);
    let out = dir.path().join("out");
    let child = record(
        dir.path(),
        &config,
        &[
            "--journal-limit",
            "36864",
            "--journal-backlog-limit",
            "4096",
        ],
    );
    played(&board, 40).await;
    stop(child);
    let text = log(dir.path());
    let full = text
        .lines()
        .find(|l| l.contains("JOURNAL BACKLOG FULL"))
        .unwrap_or_else(|| panic!("the bound was not reported:\n{text}"));
    assert!(
        full.contains("a restart would not rebuild") && full.contains("free space"),
        "{full}"
    );
    assert_eq!(
        uci_moves(&read_board(&out, 1)),
        game.moves_uci,
        "every move is in the PGN file"
    );
}
