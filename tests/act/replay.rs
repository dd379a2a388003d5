//! `touchmove replay` on the real DGT capture: the recognised game is the game played, and the
//! kings placed on the centre squares (after Black's flag fell) are the result, not a move.

use std::path::Path;
use std::process::Command;

use touchmove::record::pgn::read_games;

fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/real-dgt")
        .join(name)
}

/// `touchmove replay CAPTURE ARGS…`'s standard output; the run must succeed.
fn replay_capture(capture: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("replay")
        .arg(capture)
        .args(args)
        .output()
        .expect("touchmove runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// [`replay_capture`] on the real capture.
fn replay(args: &[&str]) -> String {
    replay_capture(&fixture("johan.inbytes"), args)
}

fn johan_uci() -> String {
    let pgn = std::fs::read_to_string(fixture("johan.pgn")).expect("johan.pgn");
    let games = read_games(&pgn).expect("johan.pgn parses");
    let game = games[0].to_game().expect("johan.pgn replays");
    let mut line: Vec<String> = game.moves().iter().map(|m| m.uci.clone()).collect();
    line.push(games[0].result.clone());
    line.join(" ")
}

#[test]
fn uci_output_is_the_game_played_with_the_result_signal_as_result() {
    let out = replay(&["--format", "uci"]);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1, "{out}");
    assert_eq!(lines[0], johan_uci());
    assert!(lines[0].ends_with("c5c6 1-0"), "{}", lines[0]);
}

#[test]
fn pgn_output_reads_back_as_the_same_game() {
    let out = replay(&[]);
    let games = read_games(&out).expect("replay writes readable PGN");
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].result, "1-0");
    let game = games[0].to_game().expect("the PGN replays");
    let uci: Vec<String> = game.moves().iter().map(|m| m.uci.clone()).collect();
    assert_eq!(format!("{} 1-0", uci.join(" ")), johan_uci());
}

#[test]
fn events_are_json_lines_with_moves_and_the_result() {
    let out = replay(&["--events"]);
    let events: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    let kind = |k: &str| events.iter().filter(|e| e["kind"] == k).count();
    assert_eq!(kind("game_start"), 1);
    assert!(kind("move") >= 43);
    // Black's flag fell (the clock's last reading) before the kings went to the centre:
    // the recorder ends the game on time first, and the signal says the same.
    let result: Vec<&serde_json::Value> = events.iter().filter(|e| e["kind"] == "result").collect();
    assert!(!result.is_empty());
    assert!(result.iter().all(|r| r["result"] == "1-0"), "{result:?}");
    assert_eq!(result[0]["reason"], "black lost on time (6.9)");
    let first = events.iter().find(|e| e["kind"] == "move").expect("a move");
    assert_eq!(first["uci"], "e2e4");
    assert_eq!(first["san"], "e4");
    assert_eq!(first["ply"], 1);
    assert!(first["t_ms"].is_u64());
}

/// A capture in our timestamped format with a reconnect mid-game: 1.e4 e5 2.Nf3 Nc6, the
/// board's version (a handshake: the link came back), and a dump showing 3.Bc4 Bc5 4.c3 Nf6
/// 5.d4 made meanwhile. The replay reads them as a gap, as the recorder does, and prints the
/// whole game (in one of the orders that reach the board, with the alert naming the others).
#[test]
fn a_reconnect_mid_game_reads_the_moves_made_meanwhile() {
    use shakmaty::Position;
    use touchmove::board::dgt::{code_from_piece, fields_from_board};
    use touchmove::board::orientation::Orientation;
    use touchmove::rules::Game;
    use touchmove::wire::dgt::Message;

    let hex = |bytes: Vec<u8>| -> String { bytes.iter().map(|b| format!("{b:02x}")).collect() };
    let field = |sq: shakmaty::Square| (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file());
    let dump = |game: &Game| {
        Message::BoardDump(fields_from_board(
            game.position().board(),
            Orientation::Normal,
        ))
        .encode()
    };
    let mut game = Game::standard();
    let mut lines = vec![format!("10 {}", hex(dump(&game)))];
    let mut t = 1_000;
    for uci in ["e2e4", "e7e5", "g1f3", "b8c6"] {
        let from: shakmaty::Square = uci[..2].parse().unwrap();
        let to: shakmaty::Square = uci[2..4].parse().unwrap();
        let piece = game.position().board().piece_at(from).unwrap();
        game.play_uci(uci).unwrap();
        for (sq, code) in [(from, 0), (to, code_from_piece(piece))] {
            let update = Message::FieldUpdate {
                field: field(sq),
                piece: code,
            };
            lines.push(format!("{t} {}", hex(update.encode())));
            t += 450;
        }
    }
    let version = Message::Version { major: 1, minor: 2 }.encode();
    lines.push(format!("60000 {}", hex(version)));
    for uci in ["f1c4", "f8c5", "c2c3", "g8f6", "d2d4"] {
        game.play_uci(uci).unwrap();
    }
    lines.push(format!("60100 {}", hex(dump(&game))));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("reconnect.txt");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let pgn = replay_capture(&path, &[]);
    let games = read_games(&pgn).unwrap_or_else(|e| panic!("{e}: {pgn}"));
    assert_eq!(games.len(), 1, "{pgn}");
    let replayed = games[0].to_game().unwrap_or_else(|e| panic!("{e}: {pgn}"));
    assert_eq!(replayed.plies(), 9, "{pgn}");
    assert_eq!(
        replayed.position().board(),
        game.position().board(),
        "{pgn}"
    );
    let words = pgn.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(words.contains("order not observed"), "{pgn}");
}
