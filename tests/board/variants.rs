//! DGT's variants on pseudo-terminals: a virtual Pegasus read through the developer-key step
//! and the occupancy-only path, the recorder's link to it (the key at each connection, the
//! board read again), and a virtual Revelation II recognised by the probe and
//! lighting the LEDs it is told to.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;
use touchmove::act::{Event, Machine, MachineConfig};
use touchmove::bench::{fixture_games, plain_timeline};
use touchmove::board::Observation;
use touchmove::board::dgt::DgtObserver;
use touchmove::driver::dgt::{LinkConfig, LinkEvent, spawn_link};
use touchmove::driver::probe::probe;
use touchmove::sim::virtual_board::model::BoardModel;
use touchmove::sim::virtual_board::timeline::Pace;
use touchmove::sim::virtual_board::{VirtualBoard, VirtualBoardConfig};
use touchmove::sim::virtual_pegasus::{VirtualPegasus, VirtualPegasusConfig};
use touchmove::wire::pegasus::{
    DeveloperKey, PegasusCommand, PegasusDecoder, PegasusMessage, connect_sequence,
};
use touchmove::wire::revelation::RevelationLeds;

/// The moves a machine configured for an occupancy-only board records from
/// `observations`, revisions applied.
fn moves_recorded(observations: &[Observation], end_ms: u64) -> Vec<String> {
    let mut machine = Machine::new(MachineConfig {
        identifies_pieces: false,
        ..MachineConfig::default()
    });
    let mut events = Vec::new();
    for obs in observations {
        machine.observe(obs, &mut events);
    }
    machine.advance(end_ms, &mut events);
    let mut moves: Vec<String> = Vec::new();
    for event in events {
        match event {
            Event::Move { ply, uci, .. } => {
                moves.truncate(ply as usize - 1);
                moves.push(uci);
            }
            Event::Revision { ply, .. } => moves.truncate(ply as usize - 1),
            _ => {}
        }
    }
    moves
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pegasus_game_is_read_after_the_key_through_the_occupancy_only_path() {
    let mut game = fixture_games().remove(0);
    game.moves_uci.truncate(16);
    assert!(
        game.moves_uci.iter().all(|m| m.len() == 4),
        "no promotion: an occupancy-only board cannot show the piece"
    );
    let pace = Pace {
        think_ms: 250,
        step_ms: 50,
    };
    let dir = tempfile::tempdir().unwrap();
    let config = VirtualPegasusConfig::new(dir.path().join("pegasus"), plain_timeline(&game, pace));
    let board = VirtualPegasus::spawn(config).unwrap();
    let path = board.path().to_str().unwrap().to_string();
    let mut port = touchmove::driver::serial::open(&path).unwrap();
    let mut buf = [0u8; 512];

    // Without a key the board keeps its position to itself.
    port.write_all(&PegasusCommand::SendBoard.encode())
        .await
        .unwrap();
    let silent = tokio::time::timeout(Duration::from_millis(300), port.read(&mut buf)).await;
    assert!(silent.is_err(), "no answer before the key: {silent:?}");

    // Any key opens the virtual board (a real one wants DGT's, which the user names).
    let key = DeveloperKey::parse("01 02 03 04 05 06").unwrap();
    port.write_all(&connect_sequence(&key)).await.unwrap();
    let start = Instant::now();
    let mut decoder = PegasusDecoder::new();
    let mut observer = DgtObserver::occupancy_only();
    let mut observations = Vec::new();
    let mut messages = Vec::new();
    let mut trademark = false;
    let mut finished_at = None;
    loop {
        if finished_at.is_none() && board.is_finished() {
            finished_at = Some(Instant::now());
        }
        if finished_at.is_some_and(|at| at.elapsed() > Duration::from_millis(300)) {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the game ends");
        let Ok(read) = tokio::time::timeout(Duration::from_millis(50), port.read(&mut buf)).await
        else {
            continue;
        };
        let n = read.unwrap();
        let t_ms = start.elapsed().as_millis() as u64;
        messages.clear();
        decoder.push(&buf[..n], &mut messages);
        for message in &messages {
            if let PegasusMessage::Invalid(e) = message {
                panic!("the virtual Pegasus sent a piece code: {e}");
            }
            if let PegasusMessage::Other(touchmove::wire::dgt::Message::Trademark(_)) = message {
                trademark = true;
            }
            let dgt = message.to_message().expect("valid");
            observer.on_message(t_ms, &dgt, &mut observations);
        }
    }
    assert!(
        board.keyed() && trademark,
        "the key was taken and the board answered"
    );
    assert!(
        observations.iter().all(|o| match &o.kind {
            touchmove::board::ObservationKind::Placed(_, piece) => piece.is_none(),
            _ => true,
        }),
        "placements carry no piece"
    );
    let end = start.elapsed().as_millis() as u64 + 60_000;
    assert_eq!(moves_recorded(&observations, end), game.moves_uci);
    assert!(board.refused().is_empty(), "{:?}", board.refused());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revelation_is_recognised_by_the_probe_and_lights_its_leds() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = VirtualBoardConfig::new(dir.path().join("rev"), Vec::new());
    config.model = BoardModel::RevelationII;
    let revelation = VirtualBoard::spawn(config).unwrap();
    let dgt =
        VirtualBoard::spawn(VirtualBoardConfig::new(dir.path().join("dgt"), Vec::new())).unwrap();
    let found = probe(revelation.path(), Duration::from_secs(2))
        .await
        .unwrap();
    assert_eq!(found.model(), "Revelation II", "{found:?}");
    let plain = probe(dgt.path(), Duration::from_secs(2)).await.unwrap();
    assert_eq!(plain.model(), "DGT board", "{plain:?}");

    let path = revelation.path().to_str().unwrap().to_string();
    let mut port = touchmove::driver::serial::open(&path).unwrap();
    let mut bytes = RevelationLeds::Fields {
        on: true,
        start: 12,
        end: 14,
    }
    .encode();
    bytes.extend(
        RevelationLeds::Fields {
            on: false,
            start: 13,
            end: 13,
        }
        .encode(),
    );
    port.write_all(&bytes).await.unwrap();
    let lit = || {
        let leds = revelation.leds().0;
        (0..64).filter(|&f| leds[f]).collect::<Vec<usize>>()
    };
    let deadline = Instant::now() + Duration::from_secs(5);
    while lit() != [12, 14] && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(lit(), [12, 14]);
    port.write_all(&RevelationLeds::AllOff.encode())
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !lit().is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(lit().is_empty());
}

/// The occupancy of every field (DGT numbering) after `moves` from the start position.
fn occupancy_after(moves: &[String]) -> [bool; 64] {
    let mut position = shakmaty::Chess::default();
    for uci in moves {
        let m = uci
            .parse::<shakmaty::uci::UciMove>()
            .unwrap()
            .to_move(&position)
            .unwrap();
        position = shakmaty::Position::play(position, m).unwrap();
    }
    let mut occupied = [false; 64];
    for (square, _) in shakmaty::Position::board(&position).iter() {
        let field = touchmove::board::orientation::Orientation::Normal.square_to_field(square);
        occupied[usize::from(field)] = true;
    }
    occupied
}

/// What the link reported until `until` holds or `limit` passes: the events, and every
/// board dump decoded from the bytes, with the number of `Connected` before it.
async fn follow_link(
    events: &mut tokio::sync::mpsc::Receiver<LinkEvent>,
    decoder: &mut PegasusDecoder,
    seen: &mut Vec<(usize, [bool; 64])>,
    connections: &mut usize,
    limit: Duration,
    until: impl Fn(&[(usize, [bool; 64])], usize) -> bool,
) {
    let deadline = Instant::now() + limit;
    while !until(seen, *connections) {
        let Ok(Some(event)) = tokio::time::timeout_at(deadline, events.recv()).await else {
            return;
        };
        match event {
            LinkEvent::Connected { .. } => *connections += 1,
            LinkEvent::Bytes { data, .. } => {
                let mut messages = Vec::new();
                decoder.push(&data, &mut messages);
                for message in messages {
                    if let PegasusMessage::Occupancy(occupied) = message {
                        seen.push((*connections, occupied));
                    }
                }
            }
            LinkEvent::Failed { message } => panic!("the link failed: {message}"),
            LinkEvent::Disconnected { .. } => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pegasus_link_gives_the_key_at_each_connection_and_reads_the_board_again() {
    let mut game = fixture_games().remove(0);
    game.moves_uci.truncate(2);
    let pace = Pace {
        think_ms: 300,
        step_ms: 50,
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pegasus");
    let first = VirtualPegasus::spawn(VirtualPegasusConfig::new(
        &path,
        plain_timeline(&game, pace),
    ))
    .unwrap();
    let key = DeveloperKey::parse("01 02 03 04 05 06").unwrap();
    let (link, mut events) = spawn_link(
        LinkConfig::pegasus(path.to_str().unwrap(), key),
        Instant::now(),
    );
    let mut decoder = PegasusDecoder::new();
    let mut dumps = Vec::new();
    let mut connections = 0;
    let after_game = occupancy_after(&game.moves_uci);

    // The handshake's dump shows the start; once the moves have stopped for the quiet
    // period, the link reads the board again, and the dump shows them.
    follow_link(
        &mut events,
        &mut decoder,
        &mut dumps,
        &mut connections,
        Duration::from_secs(20),
        |dumps, _| dumps.iter().any(|(_, d)| *d == after_game),
    )
    .await;
    assert!(first.keyed() && first.is_finished(), "the key opened it");
    // Held until the handshake ends: it comes after the first `Connected`.
    assert_eq!(
        dumps.first().map(|(c, d)| (*c, *d)),
        Some((1, occupancy_after(&[])))
    );
    assert!(
        dumps.iter().any(|(_, d)| *d == after_game),
        "read again after the moves: {} dumps",
        dumps.len()
    );

    // Another board on the port (the link came back): it is given the key again and read.
    drop(first);
    let gone = Instant::now() + Duration::from_secs(5);
    while path.symlink_metadata().is_ok() && Instant::now() < gone {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut config = VirtualPegasusConfig::new(&path, Vec::new());
    config.initial = {
        let mut g = touchmove::rules::Game::standard();
        for uci in &game.moves_uci {
            g.play_uci(uci).unwrap();
        }
        shakmaty::Position::board(g.position()).clone()
    };
    let second = VirtualPegasus::spawn(config).unwrap();
    let before = dumps.len();
    follow_link(
        &mut events,
        &mut decoder,
        &mut dumps,
        &mut connections,
        Duration::from_secs(20),
        |dumps, connections| connections >= 2 && dumps.len() > before,
    )
    .await;
    assert!(second.keyed(), "the key is given at the new connection");
    assert_eq!(connections, 2);
    assert_eq!(dumps.last().map(|(c, d)| (*c, *d)), Some((2, after_game)));
    assert!(second.refused().is_empty(), "{:?}", second.refused());
    link.shutdown();
}
