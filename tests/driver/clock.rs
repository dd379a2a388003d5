//! Clock commands through the real driver and the virtual board: one outstanding at a time,
//! acknowledged in order, resent a bounded number of times when no acknowledgement comes.

use std::time::Duration;

use crate::support::*;
use tokio::time::{Instant, sleep};
use touchmove::driver::dgt::{LinkEvent, UpdateMode, spawn_link};
use touchmove::sim::virtual_board::VirtualBoard;
use touchmove::wire::dgt::{AckKind, ClockCommand, ClockMessage, Command, Hms, Message};

const LIMIT: Duration = Duration::from_secs(10);

fn clock_commands(board: &VirtualBoard) -> Vec<ClockCommand> {
    board
        .commands()
        .into_iter()
        .filter_map(|c| match c {
            Command::Clock(c) => Some(c),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn clock_commands_are_acknowledged_one_after_another() {
    let (_dir, dir) = temp_dir();
    let board = VirtualBoard::spawn(board_config(&dir, 1.0)).expect("virtual board");
    let (link, mut events) = spawn_link(fast_link(board.path()), Instant::now());
    expect_connected(&mut events, LIMIT).await;
    let set = ClockCommand::SetAndRun {
        left: Hms {
            hours: 0,
            minutes: 3,
            seconds: 0,
        },
        right: Hms {
            hours: 1,
            minutes: 30,
            seconds: 0,
        },
        mode: 0x01,
    };
    let sent = vec![
        ClockCommand::Version,
        ClockCommand::ascii("touchmv", 0),
        ClockCommand::Beep { duration: 4 },
        set,
    ];
    for c in &sent {
        link.send(Command::Clock(c.clone()));
    }
    let mut decoded = Decoded::default();
    let acks = |d: &Decoded| -> Vec<AckKind> {
        d.messages
            .iter()
            .filter_map(|m| match m {
                Message::Clock(ClockMessage::Ack(a)) => Some(a.kind()),
                _ => None,
            })
            .collect()
    };
    let deadline = Instant::now() + LIMIT;
    while acks(&decoded).len() < sent.len() {
        if let LinkEvent::Bytes { t_ms, data } =
            next_event(&mut events, deadline - Instant::now()).await
        {
            decoded.push(t_ms, &data);
        }
    }
    assert_eq!(
        acks(&decoded),
        [
            AckKind::Version { major: 2, minor: 0 },
            AckKind::Accepted { command: 0x0C },
            AckKind::Accepted { command: 0x0B },
            AckKind::Accepted { command: 0x0A },
        ]
    );
    assert_eq!(clock_commands(&board), sent, "each sent once, in order");
    // The set-and-run took effect: the clock now shows 1:30:00 on the right.
    let deadline = Instant::now() + LIMIT;
    loop {
        let shows_new_time = decoded.messages.iter().any(|m| {
            matches!(m, Message::Clock(ClockMessage::Times(t))
                if t.right.hours == 1 && t.right.minutes == 30 && t.left.minutes <= 3)
        });
        if shows_new_time {
            break;
        }
        if let LinkEvent::Bytes { t_ms, data } =
            next_event(&mut events, deadline - Instant::now()).await
        {
            decoded.push(t_ms, &data);
        }
    }
    link.shutdown();
}

#[tokio::test]
async fn unacknowledged_clock_commands_are_resent_then_dropped_one_at_a_time() {
    let (_dir, dir) = temp_dir();
    let board = VirtualBoard::spawn(board_config(&dir, 1.0)).expect("virtual board");
    let mut config = fast_link(board.path());
    // In the board-only mode a board sends no clock acknowledgements.
    config.update_mode = UpdateMode::BoardOnly;
    config.clock_ack_timeout = Duration::from_millis(100);
    config.clock_max_resends = 2;
    let (link, mut events) = spawn_link(config, Instant::now());
    expect_connected(&mut events, LIMIT).await;
    let beep = ClockCommand::Beep { duration: 1 };
    link.send(Command::Clock(beep.clone()));
    link.send(Command::Clock(ClockCommand::End));
    let expected = vec![
        beep.clone(),
        beep.clone(),
        beep,
        ClockCommand::End,
        ClockCommand::End,
        ClockCommand::End,
    ];
    let deadline = Instant::now() + LIMIT;
    while clock_commands(&board).len() < expected.len() && Instant::now() < deadline {
        sleep(Duration::from_millis(20)).await;
    }
    // Given up after the last resend: nothing more comes.
    sleep(Duration::from_millis(400)).await;
    assert_eq!(clock_commands(&board), expected);
    link.shutdown();
}
