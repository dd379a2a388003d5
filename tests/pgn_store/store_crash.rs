//! Crash durability: a child process appends to the journal and reports each acknowledged
//! sequence number; it is killed with SIGKILL mid-stream; every acknowledged append must be in
//! the journal when it is reopened, and the journal must take new appends.
//!
//! The test binary plays both parts: run with `TOUCHMOVE_JOURNAL_CHILD=<path>` it is the
//! writer.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use touchmove::act::Event;
use touchmove::store::{BoardKey, Journal};

const CHILD_ENV: &str = "TOUCHMOVE_JOURNAL_CHILD";
/// The harness's name of the test: its path in the `pgn_store` test binary.
const TEST_NAME: &str = "store_crash::acknowledged_appends_survive_sigkill";

fn boards() -> [BoardKey; 3] {
    [
        BoardKey::Pairing { round: 1, board: 1 },
        BoardKey::Pairing { round: 1, board: 2 },
        BoardKey::Serial("4711".into()),
    ]
}

/// The bytes of the `i`-th chunk, so the parent can check content, not only presence.
fn chunk(i: u64) -> Vec<u8> {
    (0..(i % 40 + 1)).map(|k| (i * 7 + k) as u8).collect()
}

fn event(i: u64) -> Event {
    Event::Clock {
        white_ms: i,
        black_ms: i * 2,
        ply: i as u32,
        t_ms: i,
    }
}

/// The writer: appends forever, printing `seq i` after each acknowledged append.
fn run_child(path: &str) -> ! {
    let mut journal = match Journal::open(path) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("child: {e}");
            std::process::exit(2)
        }
    };
    let boards = boards();
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        let board = &boards[(i % 3) as usize];
        let seq = if i % 5 == 4 {
            journal.append_event(board, i, &event(i))
        } else {
            journal.append_bytes(board, i, &chunk(i))
        };
        match seq {
            Ok(seq) => {
                use std::io::Write;
                // The line is written only after the append returned: it is the acknowledgement.
                let _ = writeln!(out, "{seq} {i}");
                let _ = out.flush();
            }
            Err(e) => {
                eprintln!("child: {e}");
                std::process::exit(3)
            }
        }
    }
    unreachable!("the loop never ends")
}

#[test]
fn acknowledged_appends_survive_sigkill() {
    if let Ok(path) = std::env::var(CHILD_ENV) {
        run_child(&path);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("crash.journal");
    let mut acknowledged: Vec<(u64, u64)> = Vec::new();
    for (round, kill_after) in [(0, 150usize), (1, 37), (2, 400)] {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut seen = 0;
        let mut lines = BufReader::new(stdout).lines();
        while seen < kill_after {
            let line = lines
                .next()
                .expect("child stopped writing")
                .expect("child stdout");
            let mut fields = line.split_whitespace().map(|f| f.parse::<u64>());
            let (Some(Ok(seq)), Some(Ok(i))) = (fields.next(), fields.next()) else {
                continue; // libtest's own output
            };
            acknowledged.push((seq, i));
            seen += 1;
        }
        // SIGKILL while the child is still appending.
        child.kill().unwrap();
        child.wait().unwrap();
        // Acknowledgements already in the pipe are appends that returned before the kill.
        for line in lines.map_while(Result::ok) {
            let mut fields = line.split_whitespace().map(|f| f.parse::<u64>());
            if let (Some(Ok(seq)), Some(Ok(i))) = (fields.next(), fields.next()) {
                acknowledged.push((seq, i));
            }
        }

        let journal = Journal::open(&path).unwrap_or_else(|e| panic!("round {round}: {e}"));
        journal.check_integrity().unwrap();
        let entries = journal.entries_after(0).unwrap();
        let sessions: std::collections::BTreeSet<u64> = entries.iter().map(|e| e.session).collect();
        assert_eq!(sessions.len(), round + 1, "one session per child run");
        for &(seq, i) in &acknowledged {
            let entry = entries
                .iter()
                .find(|e| e.seq == seq)
                .unwrap_or_else(|| panic!("round {round}: acknowledged append {seq} lost"));
            assert_eq!(entry.t_ms, i);
            assert_eq!(entry.board.as_ref(), Some(&boards()[(i % 3) as usize]));
            let expected = if i % 5 == 4 {
                touchmove::store::Record::Event(event(i))
            } else {
                touchmove::store::Record::Bytes(chunk(i))
            };
            assert_eq!(entry.record, expected, "round {round}: entry {seq} differs");
        }
    }
    assert!(acknowledged.len() >= 587);
}
