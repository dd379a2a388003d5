//! Helpers shared by the driver integration tests: a virtual board playing the fixture game
//! and a driver link with short timeouts, both over a real pseudo-terminal.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::mpsc::Receiver;
use tokio::time::{Instant, timeout};
use touchmove::driver::dgt::{LinkConfig, LinkEvent};
use touchmove::sim::virtual_board::timeline::{Pace, lift_place};
use touchmove::sim::virtual_board::{Emitted, VirtualBoardConfig};
use touchmove::wire::dgt::{Decoder, Message};

/// The game every test plays (both castlings, captures, a promotion).
pub const GAME: &str = "fixtures/driver/abdusattorov-praggnanandhaa-2025.pgn";

/// A virtual board config at `dir/dgt0` playing the fixture game `speed` times faster.
pub fn board_config(dir: &Path, speed: f64) -> VirtualBoardConfig {
    let (start, moves) =
        touchmove::sim::hands::pgn_games::read_game(Path::new(GAME), 1).expect("fixture game");
    let script = lift_place(&start, &moves, Pace::default());
    let mut config = VirtualBoardConfig::new(dir.join("dgt0"), script);
    config.speed = speed;
    config.log_traffic = true;
    config
}

/// Link settings for tests: every timeout short.
pub fn fast_link(port: &Path) -> LinkConfig {
    let mut config = LinkConfig::new(port.to_str().expect("utf-8 path"));
    config.reply_timeout = Duration::from_millis(400);
    config.handshake_attempts = 1;
    config.watchdog_probe_after = Duration::from_millis(300);
    config.watchdog_timeout = Duration::from_millis(900);
    config.clock_ack_timeout = Duration::from_millis(300);
    config.reconnect_initial = Duration::from_millis(20);
    config.reconnect_max = Duration::from_millis(150);
    config
}

/// The next event, failing the test after `limit`.
pub async fn next_event(events: &mut Receiver<LinkEvent>, limit: Duration) -> LinkEvent {
    timeout(limit, events.recv())
        .await
        .expect("no link event in time")
        .expect("link event channel closed")
}

/// Waits for `Connected`, failing on anything but bytes (which are returned).
pub async fn expect_connected(
    events: &mut Receiver<LinkEvent>,
    limit: Duration,
) -> (Option<String>, Option<String>) {
    let deadline = Instant::now() + limit;
    loop {
        match next_event(events, deadline - Instant::now()).await {
            LinkEvent::Connected {
                version, serial, ..
            } => return (version, serial),
            LinkEvent::Bytes { .. } => {}
            other => panic!("expected Connected, got {other:?}"),
        }
    }
}

/// Messages decoded from a byte stream, with the number of skipped bytes.
#[derive(Debug, Default)]
pub struct Decoded {
    decoder: Decoder,
    pub messages: Vec<Message>,
    pub bytes: usize,
    pub last_t_ms: u64,
}

impl Decoded {
    pub fn push(&mut self, t_ms: u64, data: &[u8]) {
        assert!(t_ms >= self.last_t_ms, "timestamps go backwards");
        self.last_t_ms = t_ms;
        self.bytes += data.len();
        self.decoder.push(data, &mut self.messages);
    }

    pub fn skipped(&self) -> u64 {
        self.decoder.skipped_bytes()
    }

    pub fn field_updates(&self) -> Vec<(u8, u8)> {
        field_updates(self.messages.iter())
    }
}

pub fn field_updates<'a>(messages: impl Iterator<Item = &'a Message>) -> Vec<(u8, u8)> {
    messages
        .filter_map(|m| match m {
            Message::FieldUpdate { field, piece } => Some((*field, *piece)),
            _ => None,
        })
        .collect()
}

/// The field updates the board wrote in plug-in session `session`.
pub fn emitted_updates(emitted: &[Emitted], session: u32) -> Vec<(u8, u8)> {
    field_updates(
        emitted
            .iter()
            .filter(|e| e.session == session)
            .map(|e| &e.message),
    )
}

/// The board reconstructed from the last dump in `messages` and the updates after it.
pub fn board_after(messages: &[Message]) -> Option<[u8; 64]> {
    let last_dump = messages
        .iter()
        .rposition(|m| matches!(m, Message::BoardDump(_)))?;
    let Message::BoardDump(mut fields) = messages[last_dump].clone() else {
        return None;
    };
    for (field, piece) in field_updates(messages[last_dump + 1..].iter()) {
        fields[usize::from(field)] = piece;
    }
    Some(fields)
}

/// A fresh temporary directory for one test's port path.
pub fn temp_dir() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().to_path_buf();
    (dir, path)
}
