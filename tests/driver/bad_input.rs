//! Bad input on the serial side: wrong port names, ports that are not DGT boards, boards that
//! stop answering or never come back. Every failure names the port and the fix.

use std::time::Duration;

use crate::support::*;
use tokio::time::{Instant, timeout};
use touchmove::driver::dgt::{LinkConfig, LinkEvent, spawn_link};
use touchmove::sim::pty::Pty;
use touchmove::sim::virtual_board::VirtualBoard;

const LIMIT: Duration = Duration::from_secs(10);

async fn failure_of(config: LinkConfig) -> String {
    let (_link, mut events) = spawn_link(config, Instant::now());
    loop {
        match next_event(&mut events, LIMIT).await {
            LinkEvent::Failed { message } => return message,
            LinkEvent::Bytes { .. } => {}
            other => panic!("expected Failed, got {other:?}"),
        }
    }
}

#[tokio::test]
async fn wrong_port_name_fails_naming_port_and_fix() {
    let message = failure_of(LinkConfig::new("/dev/ttyACM-touchmove-test")).await;
    assert!(
        message.starts_with("/dev/ttyACM-touchmove-test: no such port"),
        "{message}"
    );
    assert!(message.contains("touchmove ports"), "{message}");
}

#[tokio::test]
async fn directory_or_plain_file_is_not_a_serial_device() {
    let (_dir, dir) = temp_dir();
    let message = failure_of(LinkConfig::new(dir.to_str().expect("utf-8"))).await;
    assert!(message.contains("not a serial device"), "{message}");
    assert!(message.contains(dir.to_str().expect("utf-8")), "{message}");
    let file = dir.join("capture.txt");
    std::fs::write(&file, "0 86 00 43\n").expect("write");
    let message = failure_of(LinkConfig::new(file.to_str().expect("utf-8"))).await;
    assert!(message.contains("not a serial device"), "{message}");
    assert!(
        message.contains("/dev/ttyACM0"),
        "names an example of a right path: {message}"
    );
}

#[tokio::test]
async fn silent_port_is_not_a_dgt_board_after_the_version_timeout() {
    // A terminal that never answers (a modem, a GPS, a board switched off).
    let pty = Pty::open().expect("pty");
    let port = pty.slave_path().to_str().expect("utf-8").to_string();
    let mut config = LinkConfig::new(&port);
    config.reply_timeout = Duration::from_millis(250);
    config.handshake_attempts = 2;
    let started = Instant::now();
    let message = failure_of(config).await;
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(500),
        "gave up after {waited:?}"
    );
    assert!(
        message.starts_with(&format!("{port}: no reply")),
        "{message}"
    );
    assert!(message.contains("not a DGT board"), "{message}");
    assert!(message.contains("0.5 s"), "{message}");
    // The driver did ask: reset and version, twice.
    let mut buf = [0u8; 16];
    let n = timeout(LIMIT, pty.read(&mut buf))
        .await
        .expect("read")
        .expect("read");
    assert_eq!(buf[..2], [0x40, 0x4D], "{:02x?}", &buf[..n]);
}

#[tokio::test]
async fn board_that_stops_answering_is_noticed_by_the_watchdog() {
    let (_dir, dir) = temp_dir();
    let board = VirtualBoard::spawn(board_config(&dir, 1.0)).expect("virtual board");
    let config = fast_link(board.path());
    let watchdog = config.watchdog_timeout;
    let (link, mut events) = spawn_link(config, Instant::now());
    expect_connected(&mut events, LIMIT).await;
    board.set_silent(true);
    let silenced = Instant::now();
    let reason = loop {
        match next_event(&mut events, LIMIT).await {
            LinkEvent::Disconnected { reason } => break reason,
            LinkEvent::Bytes { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    };
    let noticed = silenced.elapsed();
    assert!(
        noticed >= watchdog - Duration::from_millis(100) && noticed < watchdog * 3,
        "noticed after {noticed:?}"
    );
    assert!(
        reason.contains(board.path().to_str().expect("utf-8")),
        "{reason}"
    );
    assert!(reason.contains("stopped answering"), "{reason}");
    // The board answered the watchdog's probe before it hung (serial number requests).
    assert!(
        board
            .commands()
            .contains(&touchmove::wire::dgt::Command::SendSerialNumber)
    );
    // When it talks again the driver is back without help.
    board.set_silent(false);
    expect_connected(&mut events, LIMIT).await;
    link.shutdown();
}

#[tokio::test]
async fn board_gone_for_good_fails_after_the_give_up_time() {
    let (_dir, dir) = temp_dir();
    let board = VirtualBoard::spawn(board_config(&dir, 1.0)).expect("virtual board");
    let mut config = fast_link(board.path());
    config.give_up_after = Some(Duration::from_millis(400));
    let (_link, mut events) = spawn_link(config, Instant::now());
    expect_connected(&mut events, LIMIT).await;
    board.unplug().await.expect("unplug");
    let mut saw_disconnect = false;
    let message = loop {
        match next_event(&mut events, LIMIT).await {
            LinkEvent::Failed { message } => break message,
            LinkEvent::Disconnected { .. } => saw_disconnect = true,
            LinkEvent::Bytes { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    };
    assert!(saw_disconnect);
    assert!(
        message.contains(board.path().to_str().expect("utf-8")),
        "{message}"
    );
    assert!(message.contains("giving up"), "{message}");
    assert!(message.contains("no such port"), "{message}");
}

/// Set in the child process of [`permission_denied_names_the_dialout_fix`]: the port to open.
const CHILD_PORT: &str = "TOUCHMOVE_TEST_DENIED_PORT";

#[tokio::test]
async fn permission_denied_names_the_dialout_fix() {
    if let Ok(port) = std::env::var(CHILD_PORT) {
        // Child: open the port as an unprivileged user and report the driver's message.
        println!("MESSAGE {}", failure_of(LinkConfig::new(port)).await);
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let pty = Pty::open().expect("pty");
    let port = pty.slave_path().to_path_buf();
    std::fs::set_permissions(&port, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"));
    child
        .args([
            "--exact",
            "bad_input::permission_denied_names_the_dialout_fix",
            "--nocapture",
        ])
        .env(CHILD_PORT, &port);
    // root may open anything: the child runs as `nobody`.
    let root = std::fs::metadata("/proc/self").is_ok_and(|m| {
        use std::os::unix::fs::MetadataExt;
        m.uid() == 0
    });
    if root {
        child.uid(65534).gid(65534);
    }
    let output = child.output().expect("child runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let message = stdout
        .lines()
        .find_map(|l| l.strip_prefix("MESSAGE "))
        .unwrap_or_else(|| panic!("no message from the child: {stdout}"));
    assert!(
        message.starts_with(&format!("{}: permission denied", port.display())),
        "{message}"
    );
    assert!(message.contains("dialout"), "{message}");
}
