//! Rounds in one output folder, arbiter decisions, and `kill -9` in the second round.
//!
//! Four virtual boards on pseudo-terminals play round 1 into `touchmove record`; the arbiter
//! decides on every board (a result, a take-back, a note, a time adjustment) and the
//! recorder is stopped. Four fresh boards play round 2 into the same folder (and journal);
//! on board 1 White completes an illegal move (a 7.5.1 alert) and the arbiter sets the
//! result, which settles it. Then the recorder is SIGKILLed while boards 2–4 still play and
//! restarted; an SSE client watching round 2 reconnects with `Last-Event-ID`. Finally round
//! 1 is reopened in the same folder. A second, undisturbed run does the same without the
//! kill, at the same time.
//!
//! What must hold: every round's PGN files equal the undisturbed run's (moves, comments,
//! result); round 1's files are the same before and after round 2 and the reopening (no
//! decision of one round reaches another round's games); round 2's alert queue equals the
//! undisturbed run's; the SSE client never receives an id twice or a state older than one
//! it had, and ends with the undisturbed client's view.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::recorder_support::{
    self, fixture_opening, real_time_board, record_logged, state_dir, stop,
};
use crate::server_support::{SseEvent, sse_request, take_sse_event};
use serde_json::Value;
use shakmaty::{Color, Piece, Square};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use touchmove::bench::{ScriptGame, event_for_ports, fixture_games, plain_timeline, spawn_boards};
use touchmove::board::{Observation, ObservationKind};
use touchmove::record::GameRecord;
use touchmove::record::pgn::read_games;
use touchmove::recorder::{Recorder, RecorderHandle, RunOptions};
use touchmove::server::feed::{Feed, Scope};
use touchmove::sim::virtual_board::VirtualBoard;
use touchmove::sim::virtual_board::timeline::Pace;

const BOARDS: usize = 4;
const PACE: Pace = Pace {
    think_ms: 300,
    step_ms: 60,
};

/// Round 1: the fixture games, 8 plies each.
fn round_one_scripts() -> Vec<Vec<Observation>> {
    let games = fixture_games();
    (0..BOARDS)
        .map(|i| {
            let mut g = games[i % games.len()].clone();
            g.moves_uci.truncate(8);
            plain_timeline(&g, PACE)
        })
        .collect()
}

/// Round 2: board 1 plays four plies and then White's bishop jumps over its own pawn
/// (f1–h3, illegal) with a clock press; boards 2–4 play other fixture games, 16 plies.
fn round_two_scripts() -> Vec<Vec<Observation>> {
    let games = fixture_games();
    let opening = ScriptGame {
        moves_uci: ["e2e4", "e7e5", "g1f3", "b8c6"].map(String::from).to_vec(),
        result: "*".into(),
    };
    let mut first = plain_timeline(&opening, PACE);
    let mut t = first.last().map_or(0, |o| o.t_ms) + PACE.think_ms;
    for kind in [
        ObservationKind::Emptied(Square::F1),
        ObservationKind::Placed(Square::H3, Some(Piece::from_char('B').unwrap())),
        ObservationKind::ClockPressed { by: Color::White },
    ] {
        first.push(Observation { t_ms: t, kind });
        t += PACE.step_ms;
    }
    let mut scripts = vec![first];
    for i in 1..BOARDS {
        let mut g = games[(i + 2) % games.len()].clone();
        g.moves_uci.truncate(16);
        scripts.push(plain_timeline(&g, PACE));
    }
    scripts
}

fn write_config(path: &Path, round: u32, boards: &[VirtualBoard]) {
    let mut text = format!(
        "event = \"Rounds test\"\nsite = \"Here\"\nround = {round}\ntime_control = \"600\"\n"
    );
    for (i, b) in boards.iter().enumerate() {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"White, {}{}\" }}\nblack = {{ name = \"Black, {}{}\" }}\n",
            i + 1,
            b.path().display(),
            round,
            i + 1,
            round,
            i + 1
        ));
    }
    std::fs::write(path, text).unwrap();
}

/// A config naming ports that are gone (round 1 reopened after its boards were put away).
fn write_config_without_boards(path: &Path, round: u32, dir: &Path) {
    let mut text = format!(
        "event = \"Rounds test\"\nsite = \"Here\"\nround = {round}\ntime_control = \"600\"\n"
    );
    for i in 0..BOARDS {
        text.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"White, {}{}\" }}\nblack = {{ name = \"Black, {}{}\" }}\n",
            i + 1,
            dir.join(format!("gone-{}", i + 1)).display(),
            round,
            i + 1,
            round,
            i + 1
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn start_recorder(config: &Path, out: &Path, listen: SocketAddr, log: &Path) -> Child {
    record_logged(config, out, ["--listen", &listen.to_string()], log)
}

/// `touchmove arbiter --out OUT --board K ARGS…`, retried while the recorder starts.
fn arbiter(out: &Path, board: usize, args: &[&str]) -> String {
    recorder_support::arbiter(out, board, args)
        .unwrap_or_else(|e| panic!("arbiter {args:?} on board {board} refused: {e}"))
}

fn free_address() -> SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap()
}

/// What two runs must agree on in a game file: moves, comments (without clock readings,
/// which may differ by a second between runs), result.
type Essentials = (Vec<String>, Vec<String>, String);

fn essentials(game: &GameRecord) -> Essentials {
    let comments = game
        .initial_comments
        .iter()
        .chain(game.moves.iter().flat_map(|m| &m.comments))
        .filter(|c| !c.contains("[%"))
        .map(|c| without_intervals(c))
        .collect();
    (
        game.moves.iter().map(|m| m.san.clone()).collect(),
        comments,
        game.result.clone(),
    )
}

/// A comment with the intervals the hands took ("within 55 ms", timing of this run) blanked.
fn without_intervals(comment: &str) -> String {
    let mut out = String::new();
    let mut rest = comment;
    while let Some(at) = rest.find("within ") {
        let (head, tail) = rest.split_at(at + "within ".len());
        out.push_str(head);
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 && tail[digits..].starts_with(" ms") {
            out.push('#');
        }
        rest = &tail[digits..];
    }
    out.push_str(rest);
    out
}

fn read_round(out: &Path, round: u32) -> Vec<Essentials> {
    (1..=BOARDS)
        .map(|k| {
            let path = out.join(format!("round-{round}/game-{k}.pgn"));
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{} missing: {e}", path.display()));
            let games = read_games(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            essentials(games.last().expect("a game"))
        })
        .collect()
}

/// Reads an SSE stream until it ends, appending every event to `into`.
async fn collect_sse(
    addr: SocketAddr,
    path: &str,
    last: Option<u64>,
    into: Arc<Mutex<Vec<SseEvent>>>,
) {
    let mut stream = loop {
        match tokio::net::TcpStream::connect(addr).await {
            Ok(s) => break s,
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    if stream
        .write_all(sse_request(path, last).as_bytes())
        .await
        .is_err()
    {
        return;
    }
    let mut buffer = String::new();
    let mut head_done = false;
    let mut chunk = vec![0u8; 65536];
    loop {
        let n = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        buffer.push_str(&String::from_utf8_lossy(&chunk[..n]));
        if !head_done {
            let Some(end) = buffer.find("\r\n\r\n") else {
                continue;
            };
            buffer.drain(..end + 4);
            head_done = true;
        }
        while let Some(event) = take_sse_event(&mut buffer) {
            into.lock().unwrap().push(event);
        }
    }
}

/// A board's tile as a client shows it.
type Tile = (u64, String, Option<String>);

fn tile(summary: &Value) -> Option<(u64, Tile)> {
    Some((
        summary["board"].as_u64()?,
        (
            summary["ply"].as_u64()?,
            summary["fen"].as_str()?.to_string(),
            summary["result"].as_str().map(String::from),
        ),
    ))
}

/// The client's view after `events`: each board's latest tile. Checks on the way that ids
/// only increase and no board's tile goes back to fewer plies.
fn client_view(events: &[SseEvent]) -> BTreeMap<u64, Tile> {
    let mut view: BTreeMap<u64, Tile> = BTreeMap::new();
    let mut last_id = 0;
    for e in events {
        let id = e.id.expect("every event has an id");
        assert!(
            id > last_id || (e.event == "snapshot" && id == last_id),
            "event id {id} ({}) after id {last_id}: ids repeat or go back",
            e.event
        );
        last_id = id;
        let data: Value = serde_json::from_str(&e.data).expect("JSON data");
        let summaries: Vec<&Value> = if e.event == "snapshot" {
            data["games"].as_array().expect("games").iter().collect()
        } else {
            vec![&data["game"]]
        };
        for s in summaries {
            let Some((board, t)) = tile(s) else { continue };
            if let Some(before) = view.get(&board) {
                assert!(
                    t.0 >= before.0,
                    "board {board} went back from {} to {} plies at event {id} ({}): the client \
                     was sent events it had seen",
                    before.0,
                    t.0,
                    e.event
                );
            }
            view.insert(board, t);
        }
    }
    view
}

/// Round 2's alert queue, as the arbiter's desk reads it with the token in `out`'s state
/// folder: (board, article, ply, severity, no longer open).
async fn alert_queue(addr: SocketAddr, out: &Path) -> Vec<(u64, String, u64, String, bool)> {
    let token = [state_dir(out), out.to_path_buf()]
        .iter()
        .find_map(|d| std::fs::read_to_string(d.join("arbiter.token")).ok())
        .expect("the recorder's token file");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let request = format!(
        "GET /api/round/2/alerts HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
         Connection: close\r\n\r\n",
        token.trim()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).await.unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let alerts: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}"));
    alerts
        .as_array()
        .expect("a list")
        .iter()
        .map(|a| {
            (
                a["board"].as_u64().unwrap_or(0),
                a["article"].as_str().unwrap_or("").to_string(),
                a["ply"].as_u64().unwrap_or(0),
                a["severity"].to_string(),
                a["state"] != "open" && a["state"] != "open_after_end",
            )
        })
        .collect()
}

/// What a run leaves.
#[derive(Debug)]
struct Outcome {
    round_one: Vec<Essentials>,
    round_one_reopened: Vec<Essentials>,
    round_two: Vec<Essentials>,
    alerts: Vec<(u64, String, u64, String, bool)>,
    view: BTreeMap<u64, Tile>,
    log: String,
}

async fn play(dir: &Path, kill: bool) -> Outcome {
    let out = dir.join("out");
    let log = dir.join("recorder.log");
    let listen = free_address();

    // Round 1, with a decision on every board.
    let r1 = dir.join("r1");
    std::fs::create_dir_all(&r1).unwrap();
    let boards = spawn_boards(&r1, round_one_scripts(), 1.0, 600_000, 0).unwrap();
    let config_one = dir.join("round1.toml");
    write_config(&config_one, 1, &boards);
    let child = start_recorder(&config_one, &out, listen, &log);
    for b in &boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .expect("round 1 is played");
    }
    tokio::time::sleep(Duration::from_millis(800)).await;
    let o = out.clone();
    tokio::task::spawn_blocking(move || {
        arbiter(&o, 1, &["result", "1-0", "--reason", "forfeit"]);
        arbiter(&o, 2, &["takeback", "2"]);
        arbiter(&o, 3, &["note", "1", "round one note"]);
        arbiter(&o, 4, &["time", "white", "--", "-60"]);
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop(child);
    drop(boards);
    let round_one = read_round(&out, 1);

    // Round 2 in the same folder.
    let r2 = dir.join("r2");
    std::fs::create_dir_all(&r2).unwrap();
    let boards = spawn_boards(&r2, round_two_scripts(), 1.0, 600_000, 0).unwrap();
    let config_two = dir.join("round2.toml");
    write_config(&config_two, 2, &boards);
    let mut child = start_recorder(&config_two, &out, listen, &log);
    let events = Arc::new(Mutex::new(Vec::new()));
    let watcher = tokio::spawn(collect_sse(
        listen,
        "/api/round/2/stream",
        None,
        Arc::clone(&events),
    ));
    tokio::time::timeout(Duration::from_secs(60), boards[0].finished())
        .await
        .expect("round 2 board 1 is played");
    // The arbiter decides once the illegal move is on the desk.
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    while !alert_queue(listen, &out)
        .await
        .iter()
        .any(|a| a.0 == 1 && a.1 == "7.5.1")
    {
        assert!(
            tokio::time::Instant::now() < until,
            "the illegal move on board 1 never reached the arbiter's desk"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let o = out.clone();
    tokio::task::spawn_blocking(move || {
        arbiter(&o, 1, &["result", "0-1", "--reason", "illegal move"]);
    })
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !boards[1].is_finished(),
        "boards 2-4 still play when the recorder is killed (the test is too slow here)"
    );
    let watcher = if kill {
        child.kill().expect("SIGKILL");
        child.wait().unwrap();
        let _ = tokio::time::timeout(Duration::from_secs(10), watcher).await;
        child = start_recorder(&config_two, &out, listen, &log);
        let last = events.lock().unwrap().iter().filter_map(|e| e.id).max();
        tokio::spawn(collect_sse(
            listen,
            "/api/round/2/stream",
            last,
            Arc::clone(&events),
        ))
    } else {
        watcher
    };
    for b in &boards {
        tokio::time::timeout(Duration::from_secs(60), b.finished())
            .await
            .expect("round 2 is played");
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let alerts = alert_queue(listen, &out).await;
    let view = client_view(&events.lock().unwrap());
    watcher.abort();
    stop(child);
    drop(boards);
    let round_two = read_round(&out, 2);

    // Round 1 reopened in the same folder.
    let config_again = dir.join("round1-again.toml");
    write_config_without_boards(&config_again, 1, dir);
    let child = start_recorder(&config_again, &out, listen, &log);
    let o = out.clone();
    tokio::task::spawn_blocking(move || {
        // The recorder answers once it runs (the files are rewritten by then).
        arbiter(&o, 3, &["note", "0", "reopened"]);
    })
    .await
    .unwrap();
    stop(child);
    let mut round_one_reopened = read_round(&out, 1);
    let reopened_note = "Anna: reopened";
    let board3 = &mut round_one_reopened[2].1;
    assert!(
        board3.iter().any(|c| c.contains(reopened_note)),
        "the reopened round 1 was rewritten: {board3:?}"
    );
    board3.retain(|c| !c.contains(reopened_note));
    Outcome {
        round_one,
        round_one_reopened,
        round_two,
        alerts,
        view,
        log: std::fs::read_to_string(&log).unwrap_or_default(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rounds_in_one_folder_survive_kill_nine_with_every_decision_in_its_round() {
    let calm = tempfile::tempdir().unwrap();
    let killed = tempfile::tempdir().unwrap();
    let (calm_run, killed_run) = tokio::join!(play(calm.path(), false), play(killed.path(), true));
    let logs = format!(
        "undisturbed run's log:\n{}\nkilled run's log:\n{}",
        calm_run.log, killed_run.log
    );
    for (name, run) in [("undisturbed", &calm_run), ("killed", &killed_run)] {
        assert_eq!(
            run.round_one_reopened, run.round_one,
            "round 1 reopened after round 2 is round 1 as it was: no decision of round 2 \
             reached it\n{logs}"
        );
        let result = &run.round_one[0].2;
        assert_eq!(
            result, "1-0",
            "round 1's decisions are in its files\n{logs}"
        );
        assert!(
            run.round_two[0].1.iter().any(|c| c.contains("7.5.1")),
            "round 2 board 1 has its illegal move: {:?}\n{logs}",
            run.round_two[0]
        );
        assert!(
            run.alerts.iter().any(|a| a.0 == 1 && a.1 == "7.5.1" && a.4),
            "{name} run: the 7.5.1 alert is in the queue, settled by the result: {:?}",
            run.alerts
        );
    }
    assert_eq!(
        killed_run.round_one, calm_run.round_one,
        "round 1 equals the undisturbed run's\n{logs}"
    );
    for k in 0..BOARDS {
        assert_eq!(
            killed_run.round_two[k],
            calm_run.round_two[k],
            "round 2 board {} equals the undisturbed run's (no decision of round 1 reached it)\n{logs}",
            k + 1
        );
    }
    assert_eq!(
        killed_run.alerts, calm_run.alerts,
        "round 2's alert queue after the restart equals the undisturbed run's"
    );
    assert_eq!(
        killed_run.view, calm_run.view,
        "the SSE client that reconnected across the restart sees what the undisturbed one sees"
    );
}

/// A virtual board playing `game` in real time (10 minutes each), and an in-process recorder
/// of event `event` recording it into `dir/out` through `feed` (with its web server on a free
/// loopback port when `listen`).
async fn one_board(
    dir: &Path,
    game: &ScriptGame,
    event: &str,
    listen: bool,
) -> (VirtualBoard, PathBuf, Arc<Feed>, RecorderHandle) {
    let board = real_time_board(dir, game, PACE);
    let config = event_for_ports(event, "600", &[board.path().to_path_buf()]);
    let out = dir.join("out");
    let feed = Arc::new(Feed::new());
    let mut options = RunOptions::new(&out, Arc::clone(&feed));
    if listen {
        options.listen = Some("127.0.0.1:0".parse().unwrap());
    }
    let recorder = Recorder::start(config, options).await.unwrap();
    (board, out, feed, recorder)
}

/// An action the arbiter takes through the web is noted in the feed once: the recorder notes
/// it when it applies it, and the web API does not note it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_action_is_noted_once() {
    let dir = tempfile::tempdir().unwrap();
    let game = fixture_opening(0, 4);
    let (board, out, feed, recorder) = one_board(dir.path(), &game, "Web test", true).await;
    let addr = recorder.server_addr().expect("the server runs");
    tokio::time::timeout(Duration::from_secs(30), board.finished())
        .await
        .expect("the board plays");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let token = [state_dir(&out), out.clone()]
        .iter()
        .find_map(|d| std::fs::read_to_string(d.join("arbiter.token")).ok())
        .expect("the token file");
    // Sent twice with one key, as the desk retries an action whose answer was lost: applied
    // and noted once, the retry answered as applied.
    let body = r#"{"round":1,"board":1,"key":"web-1","action":{"action":"annotate","ply":1,"text":"checked"},"who":"Web"}"#;
    let mut replies = Vec::new();
    for _ in 0..2 {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let request = format!(
            "POST /api/arbiter/action HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\n\
             Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            token.trim(),
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await.unwrap();
        let reply = String::from_utf8_lossy(&reply).into_owned();
        assert!(reply.starts_with("HTTP/1.1 200"), "{reply}");
        replies.push(reply);
    }
    assert!(replies[1].contains("already applied"), "{}", replies[1]);
    let noted = feed
        .events_after(0, Scope::All)
        .expect("the log reaches back")
        .iter()
        .filter(|e| e.kind == "arbiter")
        .count();
    assert_eq!(noted, 1, "the action is noted once in the feed");
    let pgn = std::fs::read_to_string(out.join("round-1/game-1.pgn")).unwrap();
    assert_eq!(pgn.matches("checked").count(), 1, "{pgn}");
    recorder.shutdown().await;
}

/// A board task that panics (a bug) is not silently gone: the arbiter's desk gets a critical
/// alert, and the board is rebuilt from the journal and records on to the end of the game.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_board_task_that_panics_is_rebuilt_and_records_on() {
    let dir = tempfile::tempdir().unwrap();
    let game = fixture_opening(1, 12);
    let (board, out, feed, recorder) = one_board(dir.path(), &game, "Panic test", false).await;
    let until = tokio::time::Instant::now() + Duration::from_secs(20);
    while feed.game(1, 1).map_or(0, |g| g.summary.ply) < 4 {
        assert!(tokio::time::Instant::now() < until, "the game never began");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    recorder.crash_board_task(1).await;
    tokio::time::timeout(Duration::from_secs(30), board.finished())
        .await
        .expect("the board plays its game");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let detail = feed.game(1, 1).expect("the game");
    assert!(
        detail.alerts.iter().any(|a| a.alert.article == "recorder"
            && a.alert.severity == touchmove::act::Severity::Critical),
        "the failure is on the arbiter's desk: {:?}",
        detail.alerts
    );
    recorder.shutdown().await;
    let text = std::fs::read_to_string(out.join("round-1/game-1.pgn")).unwrap();
    let record = read_games(&text).unwrap().pop().unwrap();
    assert_eq!(
        record.moves.len(),
        game.moves_uci.len(),
        "every move after the panic is recorded too:\n{text}"
    );
}
