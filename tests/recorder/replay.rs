//! `touchmove replay` reads what `touchmove record` recorded the way the recorder read it:
//! a Certabo board's journal, and the capture of a DGT board whose clock's flag fell, give
//! the games played, as the recorder wrote them.

use std::time::{Duration, Instant};

use shakmaty::Color;

use crate::recorder_support::{demo_openings, read_board, record_logged, stop, touchmove};
use touchmove::bench::{plain_timeline, spawn_boards};
use touchmove::board::kind::BoardKind;
use touchmove::board::{Observation, ObservationKind};
use touchmove::record::GameRecord;
use touchmove::record::pgn::read_games;
use touchmove::sim::snapshot_board::{SnapshotBoard, SnapshotBoardConfig};
use touchmove::sim::virtual_board::timeline::Pace;

const PLIES: usize = 16;
/// A move every 1.05 s: the fastest pace at which a Certabo board is read exactly (its
/// readers vote over several frames).
const PACE: Pace = Pace {
    think_ms: 300,
    step_ms: 250,
};

/// The time on each side of the DGT board's clock: White, slower, runs out first.
const DGT_BASE_MS: u64 = 6_000;

/// White thinks this much longer than the pace before each of its moves.
const WHITE_DELAY_MS: u64 = 1_200;

/// `script` with White thinking [`WHITE_DELAY_MS`] longer before each move: everything from
/// the game's start, and after each press of Black's, comes that much later again.
fn white_slower(script: Vec<Observation>) -> Vec<Observation> {
    let mut delay = WHITE_DELAY_MS;
    let mut first = true;
    script
        .into_iter()
        .map(|o| {
            let shifted = Observation {
                t_ms: o.t_ms + if first { 0 } else { delay },
                kind: o.kind.clone(),
            };
            // The set-up stands before the clock starts; White's first move is later.
            first = false;
            if matches!(o.kind, ObservationKind::ClockPressed { by: Color::Black }) {
                delay += WHITE_DELAY_MS;
            }
            shifted
        })
        .collect()
}

/// `touchmove replay ARGS… --format pgn`: the games it prints.
fn replay(args: &[&str]) -> Vec<GameRecord> {
    let mut all = vec!["replay"];
    all.extend_from_slice(args);
    let out = touchmove(&all);
    assert!(
        out.status.success(),
        "touchmove {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    read_games(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

fn moves(game: &GameRecord) -> Vec<String> {
    game.moves.iter().map(|m| m.uci.clone()).collect()
}

#[test]
fn a_certabo_journal_and_a_flag_fall_on_a_dgt_clock_replay_as_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let _guard = runtime.enter();
    let games = demo_openings(PLIES);
    let (flagged, certabo_game) = (&games[0], &games[1]);
    let dgt = spawn_boards(
        dir.path(),
        vec![white_slower(plain_timeline(flagged, PACE))],
        1.0,
        DGT_BASE_MS,
        0,
    )
    .unwrap();
    let certabo_port = dir.path().join("certabo");
    let certabo = SnapshotBoard::spawn(SnapshotBoardConfig::new(
        BoardKind::Certabo,
        &certabo_port,
        plain_timeline(certabo_game, PACE),
    ))
    .unwrap();
    let event = format!(
        "event = \"Replay\"\nround = 1\ntime_control = \"1800\"\n\n[[board]]\nnumber = 1\n\
         port = \"{}\"\n\n[[board]]\nnumber = 2\nport = \"{}\"\nkind = \"certabo\"\n",
        dgt[0].path().display(),
        certabo_port.display()
    );
    let config = dir.path().join("event.toml");
    std::fs::write(&config, event).unwrap();
    let out = dir.path().join("out");
    let log = dir.path().join("recorder.log");
    let recorder = record_logged(&config, &out, ["--no-server"], &log);
    let deadline = Instant::now() + Duration::from_secs(90);
    runtime.block_on(async {
        tokio::time::timeout_at(deadline.into(), dgt[0].finished())
            .await
            .expect("the DGT board plays its game");
        tokio::time::timeout_at(deadline.into(), certabo.finished())
            .await
            .expect("the Certabo board plays its game");
        tokio::time::sleep(Duration::from_secs(2)).await;
    });
    stop(recorder);
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let journal = out.with_file_name("out.state").join("journal.sqlite");
    let journal = journal.to_str().unwrap();

    // The Certabo board, from the journal: the game played, as the recorder wrote it.
    let recorded = read_board(&out, 2);
    assert_eq!(
        moves(&recorded),
        certabo_game.moves_uci,
        "recorder log:\n{log}"
    );
    let replayed = replay(&[
        journal,
        "--board",
        "1.2",
        "--kind",
        "certabo",
        "--time-control",
        "1800",
    ]);
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    assert_eq!(moves(&replayed[0]), certabo_game.moves_uci);
    assert_eq!(replayed[0].result, recorded.result);

    // The DGT board, from its capture: White's flag fell with Black able to mate, so the
    // game is Black's, on time, with the moves made before it.
    let recorded = read_board(&out, 1);
    assert_eq!(
        (recorded.result.as_str(), recorded.tag("Termination")),
        ("0-1", Some("time forfeit")),
        "recorder log:\n{log}"
    );
    let capture = dir.path().join("board-1.capture");
    let exported = touchmove(&[
        "export-capture",
        "--journal",
        journal,
        "--board",
        "1.1",
        "--out",
        capture.to_str().unwrap(),
    ]);
    assert!(exported.status.success(), "{exported:?}");
    let replayed = replay(&[capture.to_str().unwrap(), "--time-control", "1800"]);
    assert_eq!(replayed.len(), 1, "{replayed:?}");
    let game = &replayed[0];
    assert_eq!(
        (game.result.as_str(), game.tag("Termination")),
        ("0-1", Some("time forfeit")),
        "{game:?}"
    );
    assert!(
        !game.moves.is_empty() && flagged.moves_uci.starts_with(&moves(game)),
        "{game:?}"
    );
    assert_eq!(moves(game), moves(&recorded));
}
