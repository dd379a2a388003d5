//! Board verification over a real pseudo-terminal: the virtual board loses field updates on
//! purpose, the driver's verification dumps correct the host's picture, and the act-of-moving
//! machine records the game as played. With verification off, the same losses leave the
//! recorded game short (the check that the losses matter). Dumps never cost a clock
//! acknowledgement.

use std::path::Path;
use std::time::Duration;

use crate::support::*;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Move};
use tokio::time::{Instant, sleep, timeout};
use touchmove::board::ObservationKind;
use touchmove::driver::dgt::{LinkConfig, LinkEvent, spawn_link};
use touchmove::driver::verify::VerifyConfig;
use touchmove::recorder::replay::{ReplayOptions, capture_history, replay_board};
use touchmove::sim::virtual_board::timeline::{Pace, lift_place};
use touchmove::sim::virtual_board::{VirtualBoard, VirtualBoardConfig};
use touchmove::wire::capture::CaptureChunk;
use touchmove::wire::dgt::{Command, Message};

const LIMIT: Duration = Duration::from_secs(20);

/// Plies of the fixture game played (both castlings are later; this keeps the test short).
const PLIES: usize = 24;

struct Played {
    expected: Vec<String>,
    recorded: Vec<String>,
    dumps_requested: usize,
    dumps_received: usize,
}

/// The first [`PLIES`] of the fixture game with the field updates at `lose` (indices into the
/// script) lost, recorded through the driver with `verify`.
async fn play(
    verify: VerifyConfig,
    lose: impl Fn(&[touchmove::board::Observation]) -> Vec<usize>,
) -> Played {
    let (_dir, dir) = temp_dir();
    let (start, moves) =
        touchmove::sim::hands::pgn_games::read_game(Path::new(GAME), 1).expect("fixture game");
    let moves: Vec<Move> = moves.into_iter().take(PLIES).collect();
    let script = lift_place(&start, &moves, Pace::default());
    let mut config = VirtualBoardConfig::new(dir.join("dgt0"), script.clone());
    config.speed = 20.0;
    config.log_traffic = true;
    config.lose_updates = lose(&script);
    assert!(!config.lose_updates.is_empty(), "the test loses updates");
    let board = VirtualBoard::spawn(config).expect("virtual board");
    let mut link_config: LinkConfig = fast_link(board.path());
    link_config.verify = verify;
    let (link, mut events) = spawn_link(link_config, Instant::now());
    let mut chunks = Vec::new();
    let deadline = Instant::now() + LIMIT;
    let mut settled_since: Option<Instant> = None;
    loop {
        // The game is over and the last quiet period has passed: nothing more will come.
        if settled_since.is_some_and(|t| t.elapsed() > Duration::from_millis(600)) {
            break;
        }
        let wait = Duration::from_millis(50);
        match timeout(wait, events.recv()).await {
            Ok(Some(LinkEvent::Bytes { t_ms, data })) => {
                chunks.push(CaptureChunk { t_ms, bytes: data })
            }
            Ok(Some(LinkEvent::Connected { .. })) => {}
            Ok(other) => panic!("unexpected link event {other:?}"),
            Err(_) => {}
        }
        if settled_since.is_none() && board.is_finished() {
            settled_since = Some(Instant::now());
        }
        assert!(Instant::now() < deadline, "game not played in time");
    }
    link.shutdown();
    sleep(Duration::from_millis(20)).await;
    let replayed = replay_board(
        &capture_history(chunks.clone()),
        (1, 1),
        &ReplayOptions::default(),
    );
    assert_eq!(replayed.skipped_bytes, 0, "a clean line");
    let recorded = replayed
        .games
        .first()
        .map(|g| g.moves.iter().map(|m| m.uci.clone()).collect())
        .unwrap_or_default();
    let expected = moves
        .iter()
        .map(|m| UciMove::from_move(*m, CastlingMode::Standard).to_string())
        .collect();
    let dumps_requested = board
        .commands()
        .iter()
        .filter(|c| matches!(c, Command::SendBoard))
        .count();
    let dumps_received = chunks_messages(&chunks)
        .iter()
        .filter(|m| matches!(m, Message::BoardDump(_)))
        .count();
    drop(board);
    Played {
        expected,
        recorded,
        dumps_requested,
        dumps_received,
    }
}

fn chunks_messages(chunks: &[CaptureChunk]) -> Vec<Message> {
    let mut decoded = Decoded::default();
    for c in chunks {
        decoded.push(c.t_ms, &c.bytes);
    }
    decoded.messages
}

/// The `n`-th observation of `kind`'s shape after the `after`-th clock press.
fn nth_after_press(
    script: &[touchmove::board::Observation],
    after: usize,
    is: impl Fn(&ObservationKind) -> bool,
) -> usize {
    let press = script
        .iter()
        .enumerate()
        .filter(|(_, o)| matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .nth(after)
        .map(|(i, _)| i)
        .expect("enough presses");
    script
        .iter()
        .enumerate()
        .skip(press + 1)
        .find(|(_, o)| is(&o.kind))
        .map(|(i, _)| i)
        .expect("such an observation")
}

/// A lift lost (a phantom piece stays on the source square) and a placement lost (the moved
/// piece is missing from its target) in two different moves.
fn a_lift_and_a_placement(script: &[touchmove::board::Observation]) -> Vec<usize> {
    vec![
        nth_after_press(script, 5, |k| matches!(k, ObservationKind::Emptied(_))),
        nth_after_press(script, 14, |k| matches!(k, ObservationKind::Placed(..))),
    ]
}

#[tokio::test]
async fn lost_updates_are_corrected_by_the_dump_after_the_press() {
    let verify = VerifyConfig {
        after_quiet: None,
        ..VerifyConfig::default()
    };
    let played = play(verify, a_lift_and_a_placement).await;
    assert_eq!(played.recorded, played.expected);
    assert_eq!(
        played.dumps_requested,
        PLIES + 2,
        "the handshake's two dumps (with the move log, and once it is in) and one per press"
    );
    assert_eq!(played.dumps_received, played.dumps_requested);
}

#[tokio::test]
async fn lost_updates_are_corrected_by_the_dump_after_a_quiet_period() {
    let verify = VerifyConfig {
        after_press: false,
        after_quiet: Some(Duration::from_millis(40)),
        ..VerifyConfig::default()
    };
    let played = play(verify, a_lift_and_a_placement).await;
    assert_eq!(played.recorded, played.expected);
    assert!(
        played.dumps_requested > 1,
        "quiet-period dumps were requested"
    );
}

#[tokio::test]
async fn without_verification_the_lost_updates_hold_the_game() {
    let played = play(VerifyConfig::off(), a_lift_and_a_placement).await;
    assert_eq!(
        played.dumps_requested, 2,
        "the handshake's dumps only (with the move log, and once it is in)"
    );
    assert!(
        played.recorded.len() < played.expected.len(),
        "the losses stop the record: {:?}",
        played.recorded
    );
    assert_eq!(
        played.recorded[..],
        played.expected[..played.recorded.len()]
    );
}

#[tokio::test]
async fn verification_dumps_leave_clock_acknowledgements_alone() {
    use touchmove::wire::dgt::{AckKind, ClockCommand, ClockMessage};
    let (_dir, dir) = temp_dir();
    let board = VirtualBoard::spawn(board_config(&dir, 100.0)).expect("virtual board");
    let (link, mut events) = spawn_link(fast_link(board.path()), Instant::now());
    let mut decoded = Decoded::default();
    let deadline = Instant::now() + LIMIT;
    let mut sent = 0;
    let acks = |d: &Decoded| {
        d.messages
            .iter()
            .filter(|m| matches!(m, Message::Clock(ClockMessage::Ack(_))))
            .count()
    };
    // Clock commands while the game is played fast: presses (and their dumps) all along.
    while acks(&decoded) < 6 {
        if let LinkEvent::Bytes { t_ms, data } =
            next_event(&mut events, deadline - Instant::now()).await
        {
            decoded.push(t_ms, &data);
        }
        if sent < 6 && decoded.messages.len() > 20 * (sent + 1) {
            link.send(Command::Clock(ClockCommand::Beep { duration: 1 }));
            sent += 1;
        }
    }
    let kinds: Vec<AckKind> = decoded
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Clock(ClockMessage::Ack(a)) => Some(a.kind()),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, vec![AckKind::Accepted { command: 0x0B }; 6]);
    let dumps = board
        .commands()
        .iter()
        .filter(|c| matches!(c, Command::SendBoard))
        .count();
    assert!(
        dumps > 6,
        "dumps interleaved with the clock commands: {dumps}"
    );
    let beeps = board
        .commands()
        .iter()
        .filter(|c| matches!(c, Command::Clock(_)))
        .count();
    assert_eq!(beeps, 6, "no clock command resent");
}
