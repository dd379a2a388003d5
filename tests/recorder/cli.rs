//! `touchmove record` and `touchmove arbiter` from the command line: bad input gets a clear
//! message, and arbiter actions go through the socket, are journalled and survive `kill -9`;
//! and the scripted demo, which records through the recorder's pipeline.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use crate::recorder_support::{
    arbiter, demo_openings, fixture_opening, read_board, real_time_board, state_dir, touchmove,
    uci_moves,
};
use touchmove::sim::virtual_board::timeline::Pace;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn a_config_typo_names_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("event.toml");
    std::fs::write(
        &config,
        "event = \"Open\"\nround = 2\n\n[[board]]\nnumber = 1\nprot = \"/dev/ttyACM0\"\n",
    )
    .unwrap();
    let o = touchmove(&[
        "record",
        "--config",
        config.to_str().unwrap(),
        "--no-server",
    ]);
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("event.toml:6: prot"), "{e}");

    std::fs::write(&config, "time_control = \"40/\"\n").unwrap();
    let e = stderr(&touchmove(&[
        "record",
        "--config",
        config.to_str().unwrap(),
    ]));
    assert!(e.contains("event.toml:1: time_control"), "{e}");

    let pairings = dir.path().join("pairings.csv");
    std::fs::write(&pairings, "board,white,black\n1,A,B\ntwo,C,D\n").unwrap();
    let e = stderr(&touchmove(&[
        "record",
        "--port",
        "/dev/null",
        "--pairings",
        pairings.to_str().unwrap(),
    ]));
    assert!(e.contains("pairings.csv:3: board"), "{e}");
}

/// A board or round number beyond any event (a typo such as `4294967295`) is refused with
/// the line that has it, in the event file and in pairings, before anything is recorded.
#[test]
fn board_and_round_numbers_are_bounded_with_the_line_named() {
    use touchmove::event::pairings::{parse_csv, parse_pgn_headers};
    use touchmove::recorder::EventConfig;
    let file = Path::new("event.toml");
    let refusal = |text: &str| EventConfig::parse(text, file).unwrap_err().to_string();
    let e = refusal("[[board]]\nnumber = 4294967295\nport = \"/dev/a\"\n");
    assert!(
        e.contains("event.toml:2: number") && e.contains("1 to 2000"),
        "{e}"
    );
    let e = refusal("round = 100\n");
    assert!(
        e.contains("event.toml:1: round") && e.contains("1 to 99"),
        "{e}"
    );
    assert!(EventConfig::parse("round = 99\n[[board]]\nnumber = 2000\n", file).is_ok());
    let (line, field, message) =
        parse_csv("board,white,black\n1,A,B\n4294967295,C,D\n").unwrap_err();
    assert_eq!((line, field.as_str()), (3, "board"), "{message}");
    assert!(message.contains("1 to 2000"), "{message}");
    let (line, _, message) =
        parse_pgn_headers("[Round \"1.1\"]\n[White \"A\"]\n\n[Round \"1.2001\"]\n").unwrap_err();
    assert_eq!(line, 4, "{message}");
    let dir = tempfile::tempdir().unwrap();
    let e = stderr(&touchmove(&[
        "record",
        "--round",
        "4294967295",
        "--port",
        "/dev/null",
        "--out",
        dir.path().join("out").to_str().unwrap(),
        "--no-server",
    ]));
    assert!(e.contains("--round") && e.contains("1 to 99"), "{e}");
}

#[test]
fn no_boards_and_no_recorder_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let e = stderr(&touchmove(&[
        "record",
        "--out",
        out.to_str().unwrap(),
        "--no-server",
    ]));
    assert!(e.contains("no boards to record"), "{e}");
    let e = stderr(&touchmove(&[
        "arbiter",
        "--out",
        out.to_str().unwrap(),
        "--board",
        "1",
        "new-game",
    ]));
    assert!(
        e.contains("arbiter.token") && e.contains("touchmove record"),
        "{e}"
    );
}

fn start(config: &Path, out: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["record", "--no-server", "--config"])
        .arg(config)
        .arg("--out")
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arbiter_actions_are_journalled_and_survive_kill_nine() {
    let dir = tempfile::tempdir().unwrap();
    let board = real_time_board(
        dir.path(),
        &fixture_opening(0, 6),
        Pace {
            think_ms: 300,
            step_ms: 60,
        },
    );
    let config = dir.path().join("event.toml");
    std::fs::write(
        &config,
        format!(
            "event = \"Arbiter test\"\ntime_control = \"600\"\n[[board]]\nnumber = 1\nport = \"{}\"\n",
            board.path().display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut child = start(&config, &out);
    tokio::time::timeout(Duration::from_secs(30), board.finished())
        .await
        .expect("the board plays its moves");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let out2 = out.clone();
    let answers = tokio::task::spawn_blocking(move || {
        (
            arbiter(&out2, 1, &["note", "2", "player asked for the arbiter"]),
            arbiter(&out2, 1, &["time", "white", "--", "-60"]),
            arbiter(&out2, 1, &["claim", "threefold"]),
            arbiter(&out2, 1, &["result", "0-1", "--reason", "forfeit"]),
            arbiter(&out2, 1, &["takeback", "99"]),
        )
    })
    .await
    .unwrap();
    assert!(answers.0.is_ok(), "{answers:?}");
    assert_eq!(answers.1.as_deref(), Ok("-1:00 for White"));
    assert!(
        answers.2.as_ref().unwrap().starts_with("claim incorrect"),
        "{answers:?}"
    );
    assert!(answers.3.is_ok(), "{answers:?}");
    assert!(
        answers.4.as_ref().unwrap_err().contains("out of range"),
        "{answers:?}"
    );

    child.kill().unwrap();
    child.wait().unwrap();
    let before = std::fs::read_to_string(out.join("round-1/game-1.pgn")).unwrap();
    let mut child = start(&config, &out);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let _ = child.kill();
    let _ = child.wait();
    let after = std::fs::read_to_string(out.join("round-1/game-1.pgn")).unwrap();
    assert_eq!(
        after, before,
        "the restarted recorder rebuilt the same game"
    );
    let record = read_board(&out, 1);
    assert_eq!(record.result, "0-1");
    assert_eq!(record.moves.len(), 6);
    assert!(
        after.contains("Anna: player asked for the arbiter"),
        "{after}"
    );
    assert!(
        after.contains("Arbiter Anna: result 0-1 (forfeit)"),
        "{after}"
    );
    assert!(
        after.contains("[Termination \"rules infraction\"]"),
        "{after}"
    );
}

/// The recorder's log reaches the operator (a tracing subscriber writes to stderr, with
/// timestamps), and SIGHUP — the SSH session closed — stops it cleanly like Ctrl-C instead
/// of killing it.
#[test]
fn warnings_reach_stderr_and_sighup_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let mut command = Command::new(env!("CARGO_BIN_EXE_touchmove"));
    command
        .args(["record", "--no-server", "--port"])
        .arg(dir.path().join("no-such-port"))
        .arg("--out")
        .arg(&out)
        .env("RUST_LOG", "touchmove=debug")
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    // A suite started under `nohup` passes SIGHUP ignored on to its children, and a recorder
    // started that way rightly keeps running when hung up: this one is started as from a
    // terminal.
    // SAFETY: between fork and exec only `signal`, which is async-signal-safe, is called.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut command, || {
            nix::sys::signal::signal(
                nix::sys::signal::Signal::SIGHUP,
                nix::sys::signal::SigHandler::SigDfl,
            )
            .map(|_| ())
            .map_err(std::io::Error::from)
        });
    }
    let child = command.spawn().unwrap();
    let socket = state_dir(&out).join("arbiter.sock");
    let started = || socket.exists() || out.join("arbiter.sock").exists();
    for _ in 0..200 {
        if started() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(started(), "the recorder started");
    std::thread::sleep(Duration::from_millis(1500));
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    // A recorder that does not stop fails the test instead of hanging the suite.
    let (stopped, stop_seen) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            stop_seen.recv_timeout(Duration::from_secs(60))
        {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    });
    let output = child.wait_with_output().unwrap();
    drop(stopped);
    watchdog.join().unwrap();
    let e = stderr(&output);
    assert!(
        output.status.success(),
        "SIGHUP stops the recorder cleanly: {:?}\n{e}",
        output.status
    );
    assert!(
        e.contains("touchmove::driver"),
        "the driver's log about the missing port reaches stderr:\n{e}"
    );
    assert!(!socket.exists(), "a clean stop removes the socket");
}

/// `touchmove demo --scripted` plays the demo's games into the recorder's pipeline: board 1's
/// file holds the opening of the first demo game (the moves the hands played, as the
/// recorder read them), and Ctrl-C stops the demo with its files complete.
#[test]
fn the_scripted_demo_records_the_games_played_and_stops_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("demo");
    let child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args([
            "demo",
            "--scripted",
            "--speed",
            "20",
            "--listen",
            "127.0.0.1:0",
        ])
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let game = out.join("round-1/game-1.pgn");
    let plies = || {
        std::fs::read_to_string(&game)
            .ok()
            .and_then(|text| touchmove::record::pgn::read_games(&text).ok())
            .and_then(|games| games.last().map(|g| g.moves.len()))
            .unwrap_or(0)
    };
    for _ in 0..600 {
        if plies() >= 4 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    // A demo that does not stop fails the test instead of hanging the suite.
    let (stopped, stop_seen) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
            stop_seen.recv_timeout(Duration::from_secs(20))
        {
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL);
        }
    });
    let output = child.wait_with_output().unwrap();
    drop(stopped);
    watchdog.join().unwrap();
    assert!(
        output.status.success(),
        "Ctrl-C stops the demo: {:?}",
        output.status
    );
    let played = demo_openings(usize::MAX).remove(0).moves_uci;
    let text = std::fs::read_to_string(&game).unwrap();
    let games = touchmove::record::pgn::read_games(&text).unwrap();
    let moves = uci_moves(&games[0]);
    assert!(moves.len() >= 4, "{text}");
    assert!(
        played.starts_with(&moves),
        "{moves:?} is the opening of {played:?}"
    );
}
