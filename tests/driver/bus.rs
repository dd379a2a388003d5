//! Bus mode over a real pseudo-terminal: a chain of boards (played by this test) whose replies
//! are sometimes corrupted or lost; the driver asks to repeat the changes and loses none.

use std::collections::HashMap;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::{Instant, timeout};
use touchmove::driver::bus::{BusConfig, BusEvent, spawn_bus};
use touchmove::sim::pty::Pty;
use touchmove::wire::dgt::bus::{BusCommand, BusCommandKind, BusReply, BusReplyBody};
use touchmove::wire::dgt::{ClockMessage, Command, CommandDecoder, EepromRecord};

const LIMIT: Duration = Duration::from_secs(10);
const CHANGES_PER_BOARD: u8 = 20;

#[derive(Default)]
struct FakeBoard {
    made: u8,
    pending: Vec<EepromRecord>,
    last_batch: Vec<EepromRecord>,
    spoil_next_batch: bool,
}

/// Plays a chain of boards at addresses 7 and 9: each makes a change every 15 ms; board 7
/// loses its first non-empty changes reply, board 9 corrupts the checksum of its first one.
async fn chain(pty: Pty, seen: mpsc::UnboundedSender<BusCommand>) {
    let mut boards: HashMap<u16, FakeBoard> = [7, 9]
        .into_iter()
        .map(|a| {
            let board = FakeBoard {
                spoil_next_batch: true,
                ..FakeBoard::default()
            };
            (a, board)
        })
        .collect();
    let mut decoder = CommandDecoder::new();
    let mut commands = Vec::new();
    let mut buf = [0u8; 64];
    let mut tick = tokio::time::interval(Duration::from_millis(15));
    loop {
        tokio::select! {
            _ = tick.tick() => {
                for board in boards.values_mut() {
                    if board.made < CHANGES_PER_BOARD {
                        board.pending.push(EepromRecord::FieldChange {
                            field: board.made,
                            piece: 1,
                            quick: false,
                        });
                        board.made += 1;
                    }
                }
            }
            read = pty.read(&mut buf) => {
                let Ok(n) = read else { return };
                commands.clear();
                decoder.push(&buf[..n], &mut commands);
                for command in commands.drain(..) {
                    let Command::Bus(cmd) = command else { continue };
                    let _ = seen.send(cmd);
                    let Some(board) = boards.get_mut(&cmd.address) else { continue };
                    let body = match cmd.kind {
                        BusCommandKind::SendVersion => BusReplyBody::Version { major: 1, minor: 2 },
                        BusCommandKind::SendClock => BusReplyBody::Clock {
                            clock: ClockMessage::Times(Default::default()),
                        },
                        BusCommandKind::SendBoard => BusReplyBody::BoardDump { fields: vec![0; 64] },
                        BusCommandKind::SendChanges => {
                            board.last_batch = std::mem::take(&mut board.pending);
                            BusReplyBody::Changes { records: board.last_batch.clone() }
                        }
                        BusCommandKind::RepeatChanges => {
                            BusReplyBody::Changes { records: board.last_batch.clone() }
                        }
                        _ => continue,
                    };
                    let mut frame = BusReply { address: cmd.address, body }.encode();
                    let spoil = board.spoil_next_batch
                        && cmd.kind == BusCommandKind::SendChanges
                        && !board.last_batch.is_empty();
                    if spoil {
                        board.spoil_next_batch = false;
                        if cmd.address == 7 {
                            continue;
                        }
                        if let Some(sum) = frame.last_mut() {
                            *sum ^= 0x01;
                        }
                    }
                    if pty.write_all(&frame).await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

#[tokio::test]
async fn lost_and_corrupt_change_replies_are_repeated_and_nothing_is_lost() {
    let pty = Pty::open().expect("pty");
    let port = pty.slave_path().to_str().expect("utf-8").to_string();
    let (seen_tx, mut seen_rx) = mpsc::unbounded_channel();
    tokio::spawn(chain(pty, seen_tx));
    let mut config = BusConfig::new(&port, vec![7, 9, 11]);
    config.reply_timeout = Duration::from_millis(40);
    config.max_retries = 2;
    config.poll_interval = Duration::from_millis(10);
    let (link, mut events) = spawn_bus(config, Instant::now());

    let mut received: HashMap<u16, Vec<u8>> = HashMap::new();
    let mut dumps = Vec::new();
    let mut unresponsive = Vec::new();
    let deadline = Instant::now() + LIMIT;
    let complete = |r: &HashMap<u16, Vec<u8>>| {
        [7, 9]
            .iter()
            .all(|a| r.get(a).map_or(0, Vec::len) >= usize::from(CHANGES_PER_BOARD))
    };
    while !complete(&received) {
        let event = timeout(deadline - Instant::now(), events.recv())
            .await
            .expect("changes in time")
            .expect("bus link running");
        match event {
            BusEvent::Changes { address, records } => {
                received
                    .entry(address)
                    .or_default()
                    .extend(records.iter().filter_map(|r| match r {
                        EepromRecord::FieldChange { field, .. } => Some(*field),
                        _ => None,
                    }));
            }
            BusEvent::Board { address, .. } => dumps.push(address),
            BusEvent::Unresponsive { address, reason } => unresponsive.push((address, reason)),
            BusEvent::Failed { message } => panic!("{message}"),
            _ => {}
        }
    }
    link.shutdown();
    // Every change of both boards exactly once, in order.
    let all: Vec<u8> = (0..CHANGES_PER_BOARD).collect();
    assert_eq!(received[&7], all);
    assert_eq!(received[&9], all);
    assert!(dumps.contains(&7) && dumps.contains(&9), "{dumps:?}");
    // Board 11 is not on the chain.
    let (address, reason) = unresponsive.first().expect("board 11 reported");
    assert_eq!(*address, 11);
    assert!(
        reason.contains(&port) && reason.contains("bus board 11"),
        "{reason}"
    );
    assert!(unresponsive.iter().all(|(a, _)| *a == 11));
    // The lost and the corrupt reply were both answered with REPEAT_CHANGES.
    let mut repeats = Vec::new();
    while let Ok(cmd) = seen_rx.try_recv() {
        if cmd.kind == BusCommandKind::RepeatChanges && cmd.address != 11 {
            repeats.push(cmd.address);
        }
    }
    assert!(repeats.contains(&7) && repeats.contains(&9), "{repeats:?}");
}
