//! `touchmove replay FILE --messages` on both capture formats and on a bad file.

use std::process::Command;

use serde_json::Value;

fn replay(file: &std::path::Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("replay")
        .arg(file)
        .arg("--messages")
        .output()
        .expect("the binary runs")
}

fn lines(out: &std::process::Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn replay_prints_one_json_object_per_message_of_the_real_capture() {
    let out = replay(std::path::Path::new("fixtures/real-dgt/johan.inbytes"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objects = lines(&out);
    assert_eq!(objects.len(), 956);
    assert_eq!(objects[0]["type"], "board_dump");
    assert_eq!(
        objects[0]["board"],
        "rnbqkbnrpppppppp................................PPPPPPPPRNBQKBNR"
    );
    assert_eq!(objects[3]["type"], "field_update");
    assert_eq!(objects[3]["square"], "e2");
    assert_eq!(objects[1]["clock"]["left"]["minutes"], 5);
    let times: Vec<u64> = objects
        .iter()
        .map(|o| o["t_ms"].as_u64().expect("t_ms"))
        .collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(
        times[times.len() - 1] > 60_000,
        "synthetic time follows the clock ticks"
    );
}

#[test]
fn replay_reads_the_timestamped_format_with_arbitrary_chunking() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("game.cap");
    std::fs::write(
        &path,
        "# a capture\n0 86 00\n5 43 08 09 0a 0c 0b 0a 09 08 07 07 07 07 07 07 07 07 # rest follows\n\
         7 0000000000000000000000000000000000000000000000000000000000000000\n\
         9 01 01 01 01 01 01 01 01 02 03 04 06 05 04 03 02\n120 ff 8e 00 05 34 00\n",
    )
    .expect("write");
    let out = replay(&path);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let objects = lines(&out);
    assert_eq!(objects.len(), 2);
    assert_eq!(objects[0]["t_ms"], 9);
    assert_eq!(objects[1]["t_ms"], 120);
    assert_eq!(objects[1]["square"], "e2");
    assert!(String::from_utf8_lossy(&out.stderr).contains("1 bytes"));
}

#[test]
fn a_bad_line_is_named_in_the_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bad.cap");
    std::fs::write(&path, "0 8e 00 05\n10 34 0g\n").expect("write");
    let out = replay(&path);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.cap: line 2"), "{err}");
    let out = replay(&dir.path().join("missing.cap"));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read"));
}

#[test]
fn replay_reads_standard_input_when_the_file_is_a_dash() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["replay", "-", "--messages"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("the binary runs");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(b"jgAFNAA=\n")
        .expect("write");
    let out = child.wait_with_output().expect("finishes");
    let objects = lines(&out);
    assert_eq!(objects.len(), 1);
    assert_eq!(objects[0]["square"], "e2");
}
