//! The output folder is what gets published: the journal and the arbiter's secrets stay out
//! of it, the arbiter's socket is private and bounded, one recorder owns a folder, and a
//! folder or journal left by an older touchmove is used as it is.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::recorder_support::state_dir;
use touchmove::record::arbiter::{ArbiterAction, ArbiterRequest};
use touchmove::recorder::{
    BoardConfig, BoardSource, EventConfig, Player, Recorder, RecorderHandle, RunOptions,
};
use touchmove::server::feed::Feed;
use touchmove::store::{BoardKey, Journal, Record};

/// An event of one board on a port that is not there (the board waits; nothing else does).
fn event(dir: &Path) -> EventConfig {
    EventConfig {
        event: "Folder test".into(),
        boards: vec![BoardConfig {
            number: 1,
            source: BoardSource::Port(dir.join("no-board")),
            kind: touchmove::board::kind::BoardKind::Dgt,
            leds: touchmove::recorder::leds::LedMode::Off,
            white: Player::named("W"),
            black: Player::named("B"),
        }],
        ..EventConfig::default()
    }
}

/// A recorder of [`event`] recording into `dir/out`, and that folder.
async fn start(dir: &Path) -> (PathBuf, RecorderHandle) {
    let out = dir.join("out");
    let recorder = Recorder::start(event(dir), RunOptions::new(&out, Arc::new(Feed::new())))
        .await
        .unwrap();
    (out, recorder)
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test]
async fn secrets_and_journal_stay_out_of_the_published_folder() {
    let dir = tempfile::tempdir().unwrap();
    let (out, recorder) = start(dir.path()).await;
    let published: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for private in ["journal.sqlite", "arbiter.token", "arbiter.sock"] {
        assert!(
            !published.iter().any(|p| p.starts_with(private)),
            "{private} is not in the published folder: {published:?}"
        );
    }
    let state = state_dir(&out);
    assert_eq!(mode(&state), 0o700, "the state directory is private");
    assert_eq!(mode(&state.join("arbiter.token")), 0o600);
    assert_eq!(mode(&state.join("arbiter.sock")), 0o600);
    assert!(state.join("journal.sqlite").exists());
    recorder.shutdown().await;
}

#[tokio::test]
async fn a_second_recorder_on_the_same_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (out, first) = start(dir.path()).await;
    let token = std::fs::read_to_string(first.token_path()).unwrap();
    let mut second = RunOptions::new(&out, Arc::new(Feed::new()));
    // Even with a journal of its own it would take the socket and the token over.
    second.journal_path = dir.path().join("other.sqlite");
    let refused = Recorder::start(event(dir.path()), second).await;
    let message = match refused {
        Ok(_) => panic!("the second recorder started on the same folder"),
        Err(e) => e.to_string(),
    };
    assert!(
        message.contains("another `touchmove record`") && message.contains("out"),
        "{message}"
    );
    assert_eq!(
        std::fs::read_to_string(first.token_path()).unwrap(),
        token,
        "the first recorder's token is untouched"
    );
    first.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_request_line_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (out, recorder) = start(dir.path()).await;
    let socket = state_dir(&out).join("arbiter.sock");
    let reply = tokio::task::spawn_blocking(move || {
        let mut stream = std::os::unix::net::UnixStream::connect(&socket).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let chunk = vec![b'x'; 16 * 1024];
        for _ in 0..8 {
            if stream.write_all(&chunk).is_err() {
                break;
            }
        }
        let mut reply = String::new();
        let _ = stream.read_to_string(&mut reply);
        reply
    })
    .await
    .unwrap();
    assert!(
        reply.contains("\"ok\":false") && reply.contains("longer than"),
        "a request line beyond the bound is refused at once: {reply:?}"
    );
    recorder.shutdown().await;
}

/// A folder recorded by an older touchmove has its journal inside: it is used where it is,
/// and its arbiter actions, journalled without a round then, are given theirs.
#[tokio::test]
async fn an_older_folder_keeps_its_journal_and_its_decisions_get_their_round() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let legacy = out.join("journal.sqlite");
    let request = |board| ArbiterRequest {
        who: "Anna".into(),
        board,
        action: ArbiterAction::SetResult {
            result: "1-0".into(),
            reason: "forfeit".into(),
        },
        key: None,
    };
    {
        let mut j = Journal::open(&legacy).unwrap();
        let r1 = BoardKey::Pairing { round: 1, board: 1 };
        let r2 = BoardKey::Pairing { round: 2, board: 1 };
        j.begin_session(1_000).unwrap();
        j.append_bytes(&r1, 10, &[0x8e]).unwrap();
        j.append(None, 20, &Record::Arbiter(request(1))).unwrap();
        j.begin_session(2_000).unwrap();
        j.append_bytes(&r2, 10, &[0x8e]).unwrap();
        j.append(None, 20, &Record::Arbiter(request(1))).unwrap();
    }
    // As the older touchmove left it: schema 1.
    rusqlite::Connection::open(&legacy)
        .unwrap()
        .execute_batch("PRAGMA user_version = 1")
        .unwrap();
    let options = RunOptions::new(&out, Arc::new(Feed::new()));
    assert_eq!(
        options.journal_path, legacy,
        "the older folder's journal is used"
    );
    let j = Journal::open(&legacy).unwrap();
    let keys: Vec<Option<BoardKey>> = j
        .entries_after(0)
        .unwrap()
        .into_iter()
        .filter(|e| matches!(e.record, Record::Arbiter(_)))
        .map(|e| e.board)
        .collect();
    assert_eq!(
        keys,
        vec![
            Some(BoardKey::Pairing { round: 1, board: 1 }),
            Some(BoardKey::Pairing { round: 2, board: 1 })
        ],
        "each decision belongs to the round its recorder was recording"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_in_the_same_process_gets_the_locks_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    for run in 0..5 {
        let mut options = RunOptions::new(&out, Arc::new(Feed::new()));
        options.listen = Some("127.0.0.1:0".parse().unwrap());
        let recorder = Recorder::start(event(dir.path()), options)
            .await
            .unwrap_or_else(|e| panic!("start {run} right after the previous stop: {e}"));
        recorder.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_of_a_published_file_keeps_the_whole_version_it_opened() {
    use crate::recorder_support::{fixture_opening, real_time_board};
    use std::io::Seek;
    use touchmove::sim::virtual_board::timeline::Pace;
    let dir = tempfile::tempdir().unwrap();
    let board = real_time_board(
        dir.path(),
        &fixture_opening(0, 16),
        Pace {
            think_ms: 120,
            step_ms: 30,
        },
    );
    let out = dir.path().join("out");
    let mut config = event(dir.path());
    config.boards[0].source = BoardSource::Port(board.path().to_path_buf());
    let recorder = Recorder::start(config, RunOptions::new(&out, Arc::new(Feed::new())))
        .await
        .unwrap();
    let files = [
        "round-1/game-1.pgn",
        "round-1/games.pgn",
        "round-1/index.json",
    ]
    .map(|f| out.join(f));
    // Readers that open each file again and again while the game goes on, and hold it.
    let mut held: Vec<(PathBuf, std::fs::File, Vec<u8>)> = Vec::new();
    let finished = board.finished();
    tokio::pin!(finished);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        for path in &files {
            if let Ok(mut file) = std::fs::File::open(path) {
                let mut first = Vec::new();
                file.read_to_end(&mut first).unwrap();
                let seen = held.iter().rev().find(|(p, ..)| p == path);
                if seen.is_none_or(|(_, _, text)| *text != first) {
                    held.push((path.clone(), file, first));
                }
            }
        }
        tokio::select! {
            _ = &mut finished => break,
            _ = tokio::time::sleep(Duration::from_millis(15)) => {}
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the board plays its moves"
        );
    }
    tokio::time::sleep(Duration::from_millis(600)).await;
    recorder.shutdown().await;
    let versions = held.iter().filter(|(p, ..)| *p == files[0]).count();
    assert!(versions >= 8, "game-1.pgn read in {versions} versions");
    for (path, mut file, first) in held {
        file.rewind().unwrap();
        let mut again = Vec::new();
        file.read_to_end(&mut again).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&again),
            String::from_utf8_lossy(&first),
            "{} as a reader opened it, read again after the later rewrites",
            path.display()
        );
    }
}
