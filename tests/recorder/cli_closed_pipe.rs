//! Every subcommand writes into a pipe whose reader has gone (`touchmove … | head -1`): the
//! program ends with status 0 and no panic message, as a closed pipe is the reader having
//! read enough.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long one command may take to notice the closed pipe.
const LIMIT: Duration = Duration::from_secs(60);

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
        .display()
        .to_string()
}

/// Runs touchmove with `args`, its stdout a pipe nobody reads; returns its exit status and
/// stderr.
fn into_closed_pipe(args: &[String]) -> (Option<i32>, String) {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let mut child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(Stdio::piped())
        .spawn()
        .expect("touchmove starts");
    let until = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() > until {
            let _ = child.kill();
            panic!("touchmove {args:?} still runs after {LIMIT:?} with its stdout closed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let stderr = std::io::read_to_string(child.stderr.take().expect("stderr")).unwrap_or_default();
    (status.code(), stderr)
}

/// The subcommands `touchmove --help` lists.
fn subcommands() -> Vec<String> {
    let help = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("--help")
        .output()
        .expect("touchmove --help");
    let text = String::from_utf8_lossy(&help.stdout).to_string();
    text.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_ends_quietly_when_its_reader_has_gone() {
    let out = tempfile::tempdir().expect("a folder");
    let demo_out = out.path().join("demo").display().to_string();
    let trf = fixture("trf/dutch_2025_C5.trf");
    let pgn = fixture("recorder-games.pgn");
    // Each subcommand with arguments that make it write to stdout at once; those that only
    // run for long (recorders, servers, boards) print their help.
    let runs: Vec<(&str, Vec<String>)> = vec![
        ("pgn", vec!["pgn".into(), "normalize".into(), pgn.clone()]),
        ("pgn", vec!["pgn".into(), "check".into(), pgn]),
        (
            "analyse",
            vec!["analyse".into(), "8/8/8/8/8/8/8/K1k5 w - - 0 1".into()],
        ),
        ("ports", vec!["ports".into()]),
        (
            "replay",
            vec!["replay".into(), fixture("real-dgt/johan.inbytes")],
        ),
        (
            "pairings",
            vec!["pairings".into(), trf, "--round".into(), "1".into()],
        ),
        (
            "demo",
            vec![
                "demo".into(),
                "--scripted".into(),
                "--listen".into(),
                "127.0.0.1:0".into(),
                "--out".into(),
                demo_out,
            ],
        ),
        ("sim", vec!["sim".into(), "--help".into()]),
        (
            "simulate",
            vec![
                "simulate".into(),
                "--table-cell".into(),
                "dgt,steady,none".into(),
            ],
        ),
        ("bench", vec!["bench".into(), "--help".into()]),
        ("record", vec!["record".into(), "--help".into()]),
        (
            "export-capture",
            vec!["export-capture".into(), "--help".into()],
        ),
        ("arbiter", vec!["arbiter".into(), "--help".into()]),
        ("results", vec!["results".into(), "--help".into()]),
        ("serve", vec!["serve".into(), "--help".into()]),
        ("event", vec!["event".into(), "--help".into()]),
        ("--version", vec!["--version".into()]),
    ];
    let listed = subcommands();
    assert!(listed.len() >= 10, "touchmove --help lists {listed:?}");
    for name in &listed {
        assert!(
            runs.iter().any(|(n, _)| n == name),
            "subcommand {name} is not run into a closed pipe by this test"
        );
    }
    for (_, args) in &runs {
        let (code, stderr) = into_closed_pipe(args);
        assert!(
            !stderr.contains("panicked") && !stderr.contains("Broken pipe"),
            "touchmove {args:?} into a closed pipe:\n{stderr}"
        );
        assert_eq!(
            code,
            Some(0),
            "touchmove {args:?} into a closed pipe ends with status 0:\n{stderr}"
        );
    }
}
