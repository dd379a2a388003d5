//! `touchmove export-capture`: a board's bytes from a journal written by two recorder runs,
//! as a timestamped capture.

use std::process::Command;

use touchmove::store::{BoardKey, Journal};
use touchmove::wire::capture::read_capture;

fn touchmove() -> Command {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
}

/// Reads the capture back with the wire module's reader.
fn parse(text: &str) -> Vec<(u64, Vec<u8>)> {
    read_capture(text)
        .unwrap()
        .into_iter()
        .map(|c| (c.t_ms, c.bytes))
        .collect()
}

#[test]
fn exports_one_boards_bytes_on_one_timeline_across_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event.journal");
    let board = BoardKey::Pairing { round: 2, board: 7 };
    let other = BoardKey::Serial("999".into());
    {
        let mut j = Journal::open(&path).unwrap();
        j.begin_session(1_000_000).unwrap();
        j.append_bytes(&board, 0, &[0x86, 0x00]).unwrap();
        j.append_bytes(&other, 5, &[0xff]).unwrap();
        j.append_bytes(&board, 250, &[0x8e, 0x00, 0x05, 0x34, 0x00])
            .unwrap();
    }
    {
        let mut j = Journal::open(&path).unwrap();
        j.begin_session(1_010_000).unwrap();
        j.append_bytes(&board, 30, &[0x0a]).unwrap();
    }
    let out = dir.path().join("board.capture");
    let status = touchmove()
        .args(["export-capture", "--journal"])
        .arg(&path)
        .args(["--board", "2.7", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.starts_with("# touchmove capture v1"), "{text}");
    assert!(
        text.contains("# recorder session 2 (started at unix time 1010000 ms) begins at 10030 ms"),
        "{text}"
    );
    assert_eq!(
        parse(&text),
        vec![
            (0, vec![0x86, 0x00]),
            (250, vec![0x8e, 0x00, 0x05, 0x34, 0x00]),
            (10_030, vec![0x0a]),
        ]
    );
    assert!(text.contains("\n250 8e 00 05 34 00\n"), "{text}");

    // Without --out the capture goes to standard output.
    let stdout = touchmove()
        .args(["export-capture", "--board", "serial:999", "--journal"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(stdout.status.success());
    assert_eq!(
        parse(&String::from_utf8(stdout.stdout).unwrap()),
        vec![(5, vec![0xff])]
    );
}

#[test]
fn unknown_boards_and_missing_journals_are_explained() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("event.journal");
    Journal::open(&path)
        .unwrap()
        .append_bytes(BoardKey::Pairing { round: 1, board: 1 }, 0, &[1])
        .unwrap();
    let output = touchmove()
        .args(["export-capture", "--board", "1.2", "--journal"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(err.contains("no bytes of board 1.2"), "{err}");
    assert!(err.contains("boards in it: 1.1"), "{err}");

    let output = touchmove()
        .args(["export-capture", "--board", "1.1", "--journal"])
        .arg(dir.path().join("nope"))
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(err.contains("does not exist"), "{err}");

    let output = touchmove()
        .args(["export-capture", "--board", "board one", "--journal"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8(output.stderr).unwrap();
    assert!(err.contains("ROUND.BOARD"), "{err}");
}
