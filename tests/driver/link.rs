//! The real driver over a real pseudo-terminal against the virtual board: handshake, a whole
//! game of lifts and places delivered in order, unplug and replug with resynchronisation.

use std::time::Duration;

use crate::support::*;
use shakmaty::{Chess, Position};
use tokio::time::{Instant, sleep, timeout};
use touchmove::board::dgt::fields_from_board;
use touchmove::board::orientation::Orientation;
use touchmove::driver::dgt::{LinkEvent, spawn_link};
use touchmove::sim::virtual_board::VirtualBoard;
use touchmove::wire::dgt::{ClockMessage, Command, Message};

const LIMIT: Duration = Duration::from_secs(10);

/// The final position of the fixture game as DGT fields.
fn final_fields(orientation: Orientation) -> [u8; 64] {
    let (start, moves) = touchmove::sim::hands::pgn_games::read_game(std::path::Path::new(GAME), 1)
        .expect("fixture");
    let mut pos: Chess = start;
    for m in &moves {
        pos.play_unchecked(*m);
    }
    fields_from_board(pos.board(), orientation)
}

#[tokio::test]
async fn handshake_then_whole_game_arrives_in_order() {
    let (_dir, dir) = temp_dir();
    let board = VirtualBoard::spawn(board_config(&dir, 400.0)).expect("virtual board");
    let epoch = Instant::now();
    let (link, mut events) = spawn_link(fast_link(board.path()), epoch);

    let (version, serial) = expect_connected(&mut events, LIMIT).await;
    assert_eq!(version.as_deref(), Some("1.02"));
    assert_eq!(serial.as_deref(), Some("01025"));

    let mut decoded = Decoded::default();
    timeout(LIMIT, board.finished())
        .await
        .expect("game played in time");
    let emitted: Vec<Message> = board.emitted().into_iter().map(|e| e.message).collect();
    let deadline = Instant::now() + LIMIT;
    while decoded.messages.len() < emitted.len() {
        match next_event(&mut events, deadline - Instant::now()).await {
            LinkEvent::Bytes { t_ms, data } => decoded.push(t_ms, &data),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(decoded.skipped(), 0);
    // Every message the board wrote arrived, in order: handshake replies, the dump, every
    // field update and clock reading.
    assert_eq!(decoded.messages[..emitted.len()], emitted[..]);
    assert!(matches!(
        decoded.messages[..2],
        [Message::Version { .. }, Message::SerialNumber(_)]
    ));
    // Every observation of the script that changes a square is one field update.
    let updates = decoded.field_updates();
    assert!(updates.len() > 180, "{}", updates.len());
    assert_eq!(
        board_after(&decoded.messages),
        Some(final_fields(Orientation::Normal))
    );
    assert_eq!(board.fields(), final_fields(Orientation::Normal));
    // Clock readings went through too: at least one per clock press (98 plies).
    let clocks = decoded
        .messages
        .iter()
        .filter(|m| matches!(m, Message::Clock(ClockMessage::Times(_))))
        .count();
    assert!(clocks >= 98, "{clocks} clock messages");
    link.shutdown();
    timeout(LIMIT, link.stopped()).await.expect("link stops");
}

#[tokio::test]
async fn rotated_board_sends_mirrored_fields() {
    let (_dir, dir) = temp_dir();
    let mut config = board_config(&dir, 400.0);
    config.orientation = Orientation::Rotated;
    let board = VirtualBoard::spawn(config).expect("virtual board");
    let (link, mut events) = spawn_link(fast_link(board.path()), Instant::now());
    expect_connected(&mut events, LIMIT).await;
    timeout(LIMIT, board.finished()).await.expect("played");
    let expected = emitted_updates(&board.emitted(), 0);
    let mut decoded = Decoded::default();
    let deadline = Instant::now() + LIMIT;
    while decoded.field_updates().len() < expected.len() {
        if let LinkEvent::Bytes { t_ms, data } =
            next_event(&mut events, deadline - Instant::now()).await
        {
            decoded.push(t_ms, &data);
        }
    }
    // The first lift of 1. e4 is field 52 (e2) normally, 63 - 52 = 11 when rotated.
    assert_eq!(decoded.field_updates()[0], (11, 0));
    assert_eq!(
        board_after(&decoded.messages),
        Some(final_fields(Orientation::Rotated))
    );
    link.shutdown();
}

#[tokio::test]
async fn unplug_replug_reconnects_resyncs_and_loses_nothing_after() {
    let (_dir, dir) = temp_dir();
    let board = VirtualBoard::spawn(board_config(&dir, 100.0)).expect("virtual board");
    let (link, mut events) = spawn_link(fast_link(board.path()), Instant::now());
    expect_connected(&mut events, LIMIT).await;

    // Play a while, then pull the cable in the middle of the game.
    let mut first = Decoded::default();
    let deadline = Instant::now() + LIMIT;
    while first.field_updates().len() < 60 {
        match next_event(&mut events, deadline - Instant::now()).await {
            LinkEvent::Bytes { t_ms, data } => first.push(t_ms, &data),
            other => panic!("unexpected {other:?}"),
        }
    }
    board.unplug().await.expect("unplug");
    let fields_at_unplug = board.fields();
    let reason = loop {
        match next_event(&mut events, LIMIT).await {
            LinkEvent::Disconnected { reason } => break reason,
            LinkEvent::Bytes { t_ms, data } => first.push(t_ms, &data),
            other => panic!("unexpected {other:?}"),
        }
    };
    assert!(
        reason.contains(board.path().to_str().expect("utf-8")),
        "{reason}"
    );
    // What arrived before the cable was pulled is what the board sent, in order (bytes still
    // in flight when the cable goes are lost, as on a real cable; the dump covers them).
    let sent_before = emitted_updates(&board.emitted(), 0);
    assert!(sent_before.starts_with(&first.field_updates()));
    assert!(first.field_updates().len() >= 60);

    // The game goes on while unplugged; the board remembers its pieces.
    sleep(Duration::from_millis(300)).await;
    assert!(
        !board.is_finished(),
        "the game must continue after the replug"
    );
    let fields_while_unplugged = board.fields();
    assert_ne!(
        fields_at_unplug, fields_while_unplugged,
        "moves made while unplugged"
    );
    board.replug().await.expect("replug");

    let mut second = Decoded::default();
    let deadline = Instant::now() + LIMIT;
    loop {
        match next_event(&mut events, deadline - Instant::now()).await {
            LinkEvent::Connected { .. } => break,
            LinkEvent::Bytes { .. } => panic!("bytes before Connected"),
            LinkEvent::Disconnected { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    timeout(LIMIT, board.finished()).await.expect("played");
    let expected = emitted_updates(&board.emitted(), 1);
    assert!(!expected.is_empty(), "moves after the replug");
    while second.field_updates().len() < expected.len()
        || !second
            .messages
            .iter()
            .any(|m| matches!(m, Message::BoardDump(_)))
    {
        match next_event(&mut events, deadline - Instant::now()).await {
            LinkEvent::Bytes { t_ms, data } => second.push(t_ms, &data),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(second.skipped(), 0);
    // Every field update after the reconnection arrived, in order, and the resync dump plus
    // those updates is the final position.
    assert_eq!(second.field_updates(), expected);
    assert_eq!(
        board_after(&second.messages),
        Some(final_fields(Orientation::Normal))
    );
    // The dump showed the moves made while unplugged.
    let dump = second.messages.iter().find_map(|m| match m {
        Message::BoardDump(f) => Some(*f),
        _ => None,
    });
    assert_ne!(dump, Some(fields_at_unplug));
    link.shutdown();
}

/// A board without the move log answers the dump asked for after it first, which tells the
/// link it has none; after two handshakes without one, the link stops asking.
#[tokio::test]
async fn a_board_without_a_move_log_is_not_asked_for_it_at_every_reconnection() {
    let (_dir, dir) = temp_dir();
    let mut config = board_config(&dir, 1.0);
    config.eeprom_log = false;
    let board = VirtualBoard::spawn(config).expect("virtual board");
    let mut link_config = fast_link(board.path());
    link_config.read_log = true;
    let (link, mut events) = spawn_link(link_config, Instant::now());
    expect_connected(&mut events, LIMIT).await;
    for _ in 0..3 {
        board.unplug().await.expect("unplug");
        loop {
            if let LinkEvent::Disconnected { .. } = next_event(&mut events, LIMIT).await {
                break;
            }
        }
        board.replug().await.expect("replug");
        expect_connected(&mut events, LIMIT).await;
    }
    let asked = board
        .commands()
        .iter()
        .filter(|c| matches!(c, Command::SendEepromMoves))
        .count();
    assert_eq!(
        asked, 2,
        "four handshakes, the log asked for in the first two only"
    );
    link.shutdown();
}
