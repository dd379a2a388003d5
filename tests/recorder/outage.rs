//! Eight boards unplugged together mid-game while the players go on, over real
//! pseudo-terminals: the real driver, the real recorder. Each virtual board keeps its EEPROM
//! move log and talks at DGT's 9600 baud (a log takes ≈ 8 s to arrive), so when it is plugged
//! in again the recorder reads the log and recovers the moves made meanwhile, in their true
//! order, then those made during the download: every game is recorded exactly.
//!
//! Scaled down: the boards play 10 times faster than real time, so the 10 s of play missed
//! are 1 s of wall time (about three moves per board); the serial line is not scaled.

use std::time::Duration;

use shakmaty::Position;

use crate::recorder_support::{
    self, read_board, state_dir, uci_moves, with_marked_orders_as_played,
};
use touchmove::bench::outage::{
    Hands, OutagePlan, OutageRun, measure, record_boards, unplug_together, wall,
};
use touchmove::bench::{BoardMake, ScriptGame, spawn_boards_with_log};
use touchmove::record::GameRecord;
use touchmove::recorder::LINK_LOST;
use touchmove::sim::virtual_board::ResumeMode;
use touchmove::store::{BoardKey, Journal, Record};
use touchmove::wire::dgt::{Decoder, Message};

const SPEED: f64 = 10.0;
const UNPLUGGED_GAME_MS: u64 = 10_000;
const BOARDS: usize = 8;

/// Boards that stayed powered and kept their update mode: their first moves after the link
/// came back arrive before the handshake's log and dump, and are read as part of the gap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_boards_unplugged_together_are_recorded_exactly_from_their_logs() {
    eight_boards_recorded_exactly(UNPLUGGED_GAME_MS, ResumeMode::Keep).await;
}

/// A minute of play missed, most of a game's middle, on boards switched off and on meanwhile
/// (a power-up and one record per piece in their logs): still every move from the logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_boards_unplugged_for_a_minute_are_recorded_exactly_from_their_logs() {
    eight_boards_recorded_exactly(60_000, ResumeMode::PowerCycle).await;
}

/// Eight boards with DGT's serial line (9600 baud: each move log takes ≈ 8 s to arrive,
/// while the players go on) unplugged together for `unplugged_game_ms` of play, coming back
/// as `resume` says: every game recorded exactly, from each board's log, which the journal
/// shows downloaded after the outage and used.
async fn eight_boards_recorded_exactly(unplugged_game_ms: u64, resume: ResumeMode) {
    let plan = OutagePlan::new(BOARDS).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (boards, out, recorder) = record_dgt_boards(&dir, &plan, resume).await;
    let finished = unplug_together(
        &boards,
        recorder,
        &plan,
        SPEED,
        wall(unplugged_game_ms, SPEED),
    )
    .await
    .unwrap();
    assert_eq!(finished, BOARDS, "every board finishes its game");

    let mut exact = 0;
    for (k, game) in plan.games.iter().enumerate() {
        let record = read_board(&out, k + 1);
        let recorded = uci_moves(&record);
        eprintln!(
            "board {}: {} of {} moves recorded",
            k + 1,
            recorded.len(),
            game.moves_uci.len()
        );
        assert_eq!(
            recorded,
            game.moves_uci[..recorded.len().min(game.moves_uci.len())].to_vec(),
            "board {}: every recorded move is the move played",
            k + 1
        );
        if recorded == game.moves_uci {
            exact += 1;
        }
    }
    assert_eq!(exact, BOARDS, "every game recorded exactly");
    logs_used_after_the_outage(&out, BOARDS);
}

/// Every board's journal has a move log received after the outage (its bytes, an EE_MOVES
/// message in a later handshake), the report of its use (records recovered, none refused)
/// and the mark of the lost connection.
fn logs_used_after_the_outage(out: &std::path::Path, boards: usize) {
    let journal = Journal::open_read_only(state_dir(out).join("journal.sqlite")).unwrap();
    let entries = journal.entries_after(0).unwrap();
    for k in 1..=boards {
        let key = BoardKey::Pairing {
            round: 1,
            board: k as u32,
        };
        let mine = || entries.iter().filter(|e| e.board.as_ref() == Some(&key));
        let mut decoder = Decoder::new();
        let mut logs = 0;
        for e in mine() {
            if let Record::Bytes(data) = &e.record {
                let mut messages = Vec::new();
                decoder.push(data, &mut messages);
                logs += messages
                    .iter()
                    .filter(|m| matches!(m, Message::EepromMoves(_)))
                    .count();
            }
        }
        assert!(
            logs >= 2,
            "board {k}: the log is downloaded in the first handshake and after the outage: \
             {logs} download(s) journalled"
        );
        let used: Vec<&serde_json::Value> = mine()
            .filter_map(|e| match &e.record {
                Record::Metadata { key, value } if key == "board-log-report" => Some(value),
                _ => None,
            })
            .filter(|v| {
                v["refused"].is_null() && v["recovered"].as_array().is_some_and(|r| !r.is_empty())
            })
            .collect();
        assert!(
            !used.is_empty(),
            "board {k}: the journal reports the log used after the outage"
        );
        assert!(
            mine().any(|e| matches!(&e.record, Record::Metadata { key, .. } if key == LINK_LOST)),
            "board {k}: the journal marks the lost connection, so that a replay reads the new \
             connection's first bytes as part of the gap"
        );
    }
}

/// `plan`'s games played on virtual boards with DGT's serial line (9600 baud) in `dir`, and
/// the recorder reading them.
async fn record_dgt_boards(
    dir: &tempfile::TempDir,
    plan: &OutagePlan,
    resume: ResumeMode,
) -> (
    Vec<touchmove::sim::virtual_board::VirtualBoard>,
    std::path::PathBuf,
    touchmove::recorder::RecorderHandle,
) {
    record_boards(
        dir.path(),
        plan.scripts.clone(),
        SPEED,
        BoardMake::dgt().resuming(resume),
        "Outage test",
    )
    .await
    .unwrap()
}

/// A move log takes ≈ 8 s to arrive at 9600 baud. Meanwhile the board that sends it is not
/// recorded further (its moves made during the download queue behind the log and are read
/// after the recovered ones), and the other board's moves reach its file as they are made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_log_downloading_for_8_s_holds_up_no_other_board() {
    let plan = OutagePlan::new(2).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (boards, out, recorder) = record_dgt_boards(&dir, &plan, ResumeMode::Idle).await;
    let plies = |k: usize| uci_moves(&read_board(&out, k)).len();
    for board in &boards {
        board.playing().await;
    }
    let t0 = tokio::time::Instant::now();
    tokio::time::sleep_until(t0 + wall(plan.outage_at_ms, SPEED)).await;
    boards[0].unplug().await.unwrap();
    tokio::time::sleep(wall(UNPLUGGED_GAME_MS, SPEED)).await;
    let (first_before, other_before) = (plies(1), plies(2));
    boards[0].replug().await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (first_during, other_during) = (plies(1), plies(2));
    for board in &boards {
        let limit = wall(plan.end_ms, SPEED) + Duration::from_secs(60);
        tokio::time::timeout(limit, board.finished())
            .await
            .expect("the board finishes its game");
        board.drained(Duration::from_secs(30)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    recorder.shutdown().await;

    assert_eq!(
        first_during, first_before,
        "5 s into the download the unplugged board's record waits for its log"
    );
    assert!(
        other_during >= other_before + 4,
        "the other board is recorded meanwhile: {other_before} plies, then {other_during}"
    );
    for (k, game) in plan.games.iter().enumerate() {
        assert_eq!(
            uci_moves(&read_board(&out, k + 1)),
            game.moves_uci,
            "board {}: the game exactly",
            k + 1
        );
    }
}

/// The same outage on boards without a move log that kept their update mode: nothing tells
/// the moves made meanwhile but the board's position when it comes back (the moves sent
/// before the handshake are part of the gap). No game is held, no move is recorded wrong
/// without the mark at its gap naming the order played (or, when no short sequence explains
/// the board, the game taken up from its position with a critical alert), and every game is
/// recorded live to its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eight_boards_without_a_log_are_never_held_and_recorded_to_their_end() {
    let figures = measure(OutageRun {
        boards: BOARDS,
        unplugged_s: UNPLUGGED_GAME_MS as f64 / 1000.0 / SPEED,
        speed: SPEED,
        eeprom_log: false,
        line_bytes_per_s: None,
        hands: Hands::Plain,
        seed: 0,
        keep: None,
        resume: ResumeMode::Keep,
        pgn: None,
    })
    .await
    .unwrap();
    eprintln!("{figures:?}");
    assert!(
        figures.plies_in_gap > 0,
        "moves were made during the outage"
    );
    assert_eq!(figures.games_held, 0, "no game held");
    assert_eq!(
        figures.wrong_without_alert, 0,
        "no wrong move without an order alert"
    );
    assert_eq!(
        figures.games_live_to_end, BOARDS,
        "every game live to its end"
    );
    assert_eq!(
        figures.unearned_penalties, 0,
        "no penalty from what the recorder did not see"
    );
}

/// The recorder itself is killed (SIGKILL) mid-game and started again 30 s of play later on
/// the same journal: the moves made while it was down are recovered from the boards' logs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorder_killed_and_restarted_30_s_later_records_every_game_exactly() {
    let (dir, games) = kill_and_restart(true).await;
    let out = dir.path().join("out");
    for (k, game) in games.iter().enumerate() {
        let recorded = uci_moves(&read_board(&out, k + 1));
        eprintln!(
            "board {}: {} of {} moves recorded",
            k + 1,
            recorded.len(),
            game.moves_uci.len()
        );
        assert_eq!(
            recorded,
            game.moves_uci,
            "board {}: the game exactly",
            k + 1
        );
    }
}

/// The same restart with boards that have no move log: each game comes back with the moves
/// made while the recorder was down read from the board's position — in an order the
/// record flags when another was possible, or, when no short sequence explains the board,
/// taken up from its position (the moves before it kept in a comment) — and is recorded
/// live to its end, every move after the gap the one played.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorder_killed_and_restarted_30_s_later_without_logs_records_every_game_to_its_end() {
    let (dir, games) = kill_and_restart(false).await;
    let out = dir.path().join("out");
    let failures: Vec<String> = games
        .iter()
        .enumerate()
        .filter_map(|(k, game)| {
            let record = read_board(&out, k + 1);
            eprintln!(
                "board {}: {} of {} moves recorded, from {:?}",
                k + 1,
                record.moves.len(),
                game.moves_uci.len(),
                record.start_fen
            );
            recorded_to_its_end(&record, &game.moves_uci)
                .err()
                .map(|e| format!("board {}: {e}", k + 1))
        })
        .collect();
    let alerts: Vec<String> = recorder_support::log(dir.path())
        .lines()
        .filter(|l| l.contains("8.5.3") || l.contains("7.5"))
        .map(str::to_string)
        .collect();
    assert!(
        failures.is_empty(),
        "{}\nthe recorder's alerts:\n{}",
        failures.join("\n"),
        alerts.join("\n")
    );
}

/// Whether `record` holds the game `played` as well as a board without a move log can tell
/// it across a gap: the whole game, every move in its place but in spans the record marks
/// "order not observed" whose mark names the order played (so the final position and the
/// moves after the gap are the game's), or the game taken up from the board's real position
/// and its moves from there.
fn recorded_to_its_end(record: &GameRecord, played: &[String]) -> Result<(), String> {
    let recorded = uci_moves(record);
    match &record.start_fen {
        Some(fen) => {
            if recorded.is_empty() || !played.ends_with(&recorded) {
                return Err(format!(
                    "the moves after the take-up are not the game's last ones: {recorded:?}"
                ));
            }
            let mut before = touchmove::rules::Game::standard();
            for m in &played[..played.len() - recorded.len()] {
                before.play_uci(m).map_err(|e| e.to_string())?;
            }
            let taken_up =
                touchmove::rules::Game::from_fen(fen, false).map_err(|e| e.to_string())?;
            let (real, taken) = (before.position(), taken_up.position());
            if (taken.board(), taken.turn()) != (real.board(), real.turn()) {
                return Err(format!(
                    "taken up from {fen}, not from the board's real position {}",
                    shakmaty::fen::Fen::from_position(real, shakmaty::EnPassantMode::Legal)
                ));
            }
            Ok(())
        }
        None if recorded == played => Ok(()),
        None => {
            let fixed = with_marked_orders_as_played(record, played)?;
            if fixed == played {
                Ok(())
            } else {
                Err(format!(
                    "recorded {recorded:?}\n  played {played:?}\n  comments {:?}",
                    record
                        .moves
                        .iter()
                        .enumerate()
                        .filter(|(_, m)| !m.comments.is_empty())
                        .map(|(i, m)| (i + 1, &m.comments))
                        .collect::<Vec<_>>()
                ))
            }
        }
    }
}

/// Plays [`OutagePlan`]'s games on virtual boards (with or without their move logs) while a
/// recorder is SIGKILLed mid-game and started again 30 s of play later; returns the folder
/// (`out` in it) once every board finished, and the games played.
async fn kill_and_restart(eeprom_log: bool) -> (tempfile::TempDir, Vec<ScriptGame>) {
    const KILLED_BOARDS: usize = 4;
    const DOWN_GAME_MS: u64 = 30_000;
    let OutagePlan {
        games,
        scripts,
        outage_at_ms: kill_at_ms,
        end_ms,
        ..
    } = OutagePlan::new(KILLED_BOARDS).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let boards = spawn_boards_with_log(
        dir.path(),
        scripts,
        SPEED,
        30 * 60 * 1000,
        0,
        BoardMake::default().with_log(eeprom_log),
    )
    .unwrap();
    let mut config = String::from("event = \"Kill test\"\nsite = \"here\"\nround = 1\n");
    for (i, b) in boards.iter().enumerate() {
        config.push_str(&format!(
            "\n[[board]]\nnumber = {}\nport = \"{}\"\nwhite = {{ name = \"W{}\" }}\nblack = {{ name = \"B{}\" }}\n",
            i + 1,
            b.path().display(),
            i + 1,
            i + 1
        ));
    }
    let config_path = dir.path().join("event.toml");
    std::fs::write(&config_path, config).unwrap();
    let out = dir.path().join("out");
    let start = || {
        recorder_support::record_logged(
            &config_path,
            &out,
            ["--no-server"],
            &dir.path().join("recorder.log"),
        )
    };
    let wall = |game_ms: u64| wall(game_ms, SPEED);
    let t0 = tokio::time::Instant::now();
    let mut recorder = start();
    tokio::time::sleep_until(t0 + wall(kill_at_ms)).await;
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    tokio::time::sleep(wall(DOWN_GAME_MS)).await;
    let recorder = start();
    for board in &boards {
        tokio::time::timeout(wall(end_ms) + Duration::from_secs(60), board.finished())
            .await
            .expect("the board finishes its game");
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    recorder_support::stop(recorder);
    (dir, games)
}
