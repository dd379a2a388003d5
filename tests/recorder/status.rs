//! The operator sees the recorder's links to the outside while it runs: a failing lichess
//! push (last error, since when, retries) and a cluster backlog (entries not acked, age of the
//! oldest) are on the terminal status line, on `/api/status` and `/status`, and on the arbiter
//! desk; the open-file limit is raised at the start; a web server reachable from the network
//! without TLS is warned about.

use crate::recorder_support;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cluster_support::{self, NatsServer};

/// A `touchmove record` process of one board on a port that is not there (the board waits;
/// the rest runs), its stderr in `recorder.log`.
struct Recording {
    child: Option<Child>,
    log: PathBuf,
    addr: SocketAddr,
}

impl Recording {
    fn start(dir: &Path, listen: &str, extra: &[&str]) -> Recording {
        Recording::start_with(dir, listen, extra, |_| {})
    }

    fn start_with(
        dir: &Path,
        listen: &str,
        extra: &[&str],
        adjust: impl FnOnce(&mut Command),
    ) -> Recording {
        let log = dir.join("recorder.log");
        let file = std::fs::File::create(&log).unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_touchmove"));
        command
            .arg("record")
            .arg("--port")
            .arg(dir.join("no-board"))
            .arg("--out")
            .arg(dir.join("out"))
            .args(["--listen", listen])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(file);
        adjust(&mut command);
        let child = command.spawn().expect("the touchmove binary starts");
        let mut recording = Recording {
            child: Some(child),
            log,
            addr: "127.0.0.1:0".parse().unwrap(),
        };
        let text = recording.wait_log("live at http://", Duration::from_secs(20));
        let addr = text
            .split("live at http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("no address in the log: {text}"));
        recording.addr = addr;
        recording
    }

    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log holds `needle`; the log then.
    fn wait_log(&mut self, needle: &str, limit: Duration) -> String {
        let until = Instant::now() + limit;
        loop {
            let text = self.log();
            if text.contains(needle) {
                return text;
            }
            if let Some(Ok(Some(status))) = self.child.as_mut().map(Child::try_wait) {
                panic!("the recorder ended ({status}) before saying {needle:?}: {text}");
            }
            assert!(
                Instant::now() < until,
                "the recorder never said {needle:?}: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// `GET path` on the recorder's web server: the body.
    fn get(&self, path: &str) -> String {
        let (head, body) = recorder_support::http_get(self.addr, path);
        assert!(head.starts_with("HTTP/1.1 200"), "{path}: {head}");
        body
    }

    fn status(&self) -> serde_json::Value {
        serde_json::from_str(&self.get("/api/status")).expect("/api/status is JSON")
    }

    /// Waits until `/api/status` satisfies `check`; that status.
    fn wait_status(
        &self,
        what: &str,
        limit: Duration,
        check: impl Fn(&serde_json::Value) -> bool,
    ) -> serde_json::Value {
        let until = Instant::now() + limit;
        loop {
            let status = self.status();
            if check(&status) {
                return status;
            }
            assert!(
                Instant::now() < until,
                "{what}: never seen; last status {status}; log: {}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        if let Some(child) = self.child.take() {
            recorder_support::stop(child);
        }
    }
}

/// A stand-in for lichess on loopback answering every push with the status in `answer`;
/// counts the pushes.
fn lichess_stub(answer: Arc<AtomicU16>, pushes: Arc<AtomicU64>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
            let mut bytes = Vec::new();
            let mut buf = [0u8; 65536];
            let complete = loop {
                let Ok(n) = stream.read(&mut buf) else {
                    break false;
                };
                if n == 0 {
                    break false;
                }
                bytes.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&bytes);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let length: usize = head
                        .lines()
                        .filter_map(|l| l.split_once(':'))
                        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                        .and_then(|(_, v)| v.trim().parse().ok())
                        .unwrap_or(0);
                    if body.len() >= length {
                        break true;
                    }
                }
            };
            if !complete {
                continue;
            }
            pushes.fetch_add(1, Ordering::SeqCst);
            let status = answer.load(Ordering::SeqCst);
            let body = if status == 200 { "{\"games\":[]}" } else { "" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    base
}

#[test]
fn a_failing_lichess_push_is_shown_until_it_is_accepted_again() {
    let dir = tempfile::tempdir().unwrap();
    let answer = Arc::new(AtomicU16::new(500));
    let pushes = Arc::new(AtomicU64::new(0));
    let base = lichess_stub(answer.clone(), pushes.clone());
    let token = dir.path().join("lichess.token");
    std::fs::write(&token, "lip_test\n").unwrap();
    let mut recording = Recording::start(
        dir.path(),
        "127.0.0.1:0",
        &[
            "--lichess-round",
            "abcdefgh",
            "--lichess-token-file",
            token.to_str().unwrap(),
            "--lichess-url",
            &base,
        ],
    );
    let failing = recording.wait_status("two failed pushes", Duration::from_secs(20), |s| {
        s["lichess"]["retries"].as_u64().unwrap_or(0) >= 2
    });
    let lichess = &failing["lichess"];
    assert_eq!(lichess["failing"], true, "{failing}");
    assert_eq!(lichess["round_id"], "abcdefgh");
    assert!(
        lichess["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("500")),
        "{failing}"
    );
    let since = lichess["failing_since_unix_ms"]
        .as_u64()
        .expect("since when");
    let now = failing["now_unix_ms"].as_u64().unwrap();
    assert!(since <= now && now - since < 60_000, "{failing}");
    assert!(
        failing["problems"][0]
            .as_str()
            .is_some_and(|p| p.contains("FAILING") && p.contains("retries")),
        "{failing}"
    );
    let page = recording.get("/status");
    assert!(
        page.contains("lichess push to round abcdefgh FAILING since"),
        "{page}"
    );
    let log = recording.wait_log(
        "status: lichess push to round abcdefgh FAILING",
        Duration::from_secs(10),
    );
    assert!(log.contains("lichess answered 500"), "{log}");
    // The desk shows the same report.
    let desk = recording.get("/arbiter");
    assert!(desk.contains("id=\"links\""), "{desk}");
    let script = recording.get("/assets/arbiter.js");
    assert!(
        script.contains("fetch(\"/api/status\")") && script.contains("status.problems"),
        "the desk reads /api/status"
    );

    answer.store(200, Ordering::SeqCst);
    let healed = recording.wait_status(
        "an accepted push after the failures",
        Duration::from_secs(30),
        |s| s["lichess"]["failing"] == false,
    );
    assert!(
        healed["lichess"]["accepted"].as_u64().unwrap() >= 1,
        "{healed}"
    );
    assert_eq!(healed["lichess"]["retries"], 0, "{healed}");
    assert_eq!(healed["problems"], serde_json::json!([]), "{healed}");
    recording.wait_log("status: all well", Duration::from_secs(10));
    assert!(pushes.load(Ordering::SeqCst) >= 3);
}

#[test]
fn a_cluster_backlog_is_counted_while_unreachable_and_flushed_after() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let mut nats = NatsServer::reserve(dir.path(), &[]);
    let url = nats.url();
    // A board that plays a few moves, so that there are journal entries to forward.
    let boards_runtime = tokio::runtime::Runtime::new().unwrap();
    let board = boards_runtime.block_on(async {
        recorder_support::real_time_board(
            dir.path(),
            &recorder_support::fixture_opening(0, 8),
            touchmove::sim::virtual_board::timeline::Pace {
                think_ms: 300,
                step_ms: 60,
            },
        )
    });
    let port = board.path().to_string_lossy().into_owned();
    let mut recording = Recording::start(
        dir.path(),
        "127.0.0.1:0",
        &[
            "--port",
            &port,
            "--cluster",
            &url,
            "--cluster-event",
            "status-test",
            "--cluster-member",
            "pc1",
        ],
    );
    let waiting = recording.wait_status(
        "a backlog while the cluster is unreachable",
        Duration::from_secs(20),
        |s| {
            s["cluster"]["entries"].as_u64().unwrap_or(0) > 0
                && s["cluster"]["oldest_ms"].as_u64().unwrap_or(0) > 0
        },
    );
    assert_eq!(waiting["cluster"]["connected"], false, "{waiting}");
    assert!(
        waiting["problems"][0]
            .as_str()
            .is_some_and(|p| p.contains("not forwarded") && p.contains("unreachable")),
        "{waiting}"
    );
    let log = recording.wait_log("journal entries not forwarded", Duration::from_secs(10));
    assert!(log.contains("status: cluster:"), "{log}");
    assert!(recording.get("/status").contains("not forwarded"));

    nats.restart();
    let flushed = recording.wait_status(
        "the backlog flushed once the cluster answers",
        Duration::from_secs(30),
        |s| s["cluster"]["entries"] == 0 && s["cluster"]["connected"] == true,
    );
    assert!(
        flushed["cluster"]["acked"].as_u64().unwrap()
            >= waiting["cluster"]["entries"].as_u64().unwrap(),
        "{flushed}"
    );
    assert_eq!(flushed["problems"], serde_json::json!([]), "{flushed}");
    recording.wait_log("status: all well", Duration::from_secs(10));
}

#[test]
fn the_open_file_limit_is_raised_and_sets_the_connection_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut hard = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut hard) },
        0
    );
    let hard = hard.rlim_max;
    assert!(
        hard > 1024,
        "this test needs a hard open-file limit above 1024"
    );
    let recording = Recording::start_with(dir.path(), "127.0.0.1:0", &[], |command| {
        use std::os::unix::process::CommandExt;
        // SAFETY: only setrlimit, which is async-signal-safe, runs in the child.
        unsafe {
            command.pre_exec(move || {
                let low = libc::rlimit {
                    rlim_cur: 1024,
                    rlim_max: hard,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &low) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    });
    let log = recording.log();
    assert!(
        log.contains(&format!("open-file limit raised from 1024 to {hard}")),
        "{log}"
    );
    let status = recording.status();
    let expected = touchmove::server::connections::max_open_for_file_limit(Some(hard));
    assert_eq!(status["web"]["max_open"], expected, "{status}");
    assert!(expected > 1024, "the cap follows the raised limit");
    assert!(
        !log.contains("without TLS"),
        "no warning on loopback: {log}"
    );
}

#[test]
fn a_web_server_open_to_the_network_without_tls_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let mut recording = Recording::start(dir.path(), "0.0.0.0:0", &[]);
    let log = recording.wait_log("without TLS", Duration::from_secs(5));
    assert!(
        log.contains("reachable from other computers")
            && log.contains("TLS reverse proxy")
            && log.contains("127.0.0.1"),
        "{log}"
    );
}
