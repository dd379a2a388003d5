//! Malformed PGN and FEN: a clear message naming file, game, ply and token; never a panic.

use std::process::Command;

use proptest::prelude::*;
use touchmove::record::pgn::{games, read_games, read_games_bytes};

const TAGS: &str = "[Event \"t\"]\n[Site \"?\"]\n[Date \"2026.01.01\"]\n[Round \"1\"]\n\
    [White \"A\"]\n[Black \"B\"]\n[Result \"*\"]\n\n";

#[test]
fn an_illegal_move_names_game_ply_line_and_token() {
    let text = format!("{TAGS}1. e4 e5 *\n\n{TAGS}1. e4 e5\n2. Ke3 Nc6 *\n");
    let err = read_games(&text).unwrap_err();
    assert_eq!((err.game, err.ply, err.line), (2, 3, 20));
    assert_eq!(err.token, "Ke3");
    assert!(
        err.reason
            .contains("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w"),
        "{}",
        err.reason
    );
}

/// A file whose second game has a token that is no move (a heading between sections, say):
/// game 1 is read for a simulation without the rest of the file being refused.
#[test]
fn a_game_is_read_whatever_the_games_after_it_hold() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sections.pgn");
    let text = format!(
        "{TAGS}1. d4 Nf6 2. c4 e6 *\n\nSECTION 2: rapid games\n\n{TAGS}1. e4 Ke3 *\n\n{TAGS}1. f4 e5 *\n"
    );
    std::fs::write(&path, &text).unwrap();
    let (_, moves) = touchmove::sim::hands::pgn_games::read_game(&path, 1).unwrap();
    let uci: Vec<String> = moves
        .iter()
        .map(|m| m.to_uci(shakmaty::CastlingMode::Standard).to_string())
        .collect();
    assert_eq!(uci, ["d2d4", "g8f6", "c2c4", "e7e6"]);
    // Every game is read as far as it goes, and the reader goes on after the bad ones.
    let read: Vec<_> = games(&text).collect();
    assert_eq!(read.len(), 4, "{read:?}");
    let stop = |i: usize| {
        let e = read[i].error.as_ref()?;
        Some((e.game, e.line, e.token.as_str()))
    };
    let moves = |i: usize| -> Vec<&str> {
        read[i]
            .record
            .moves
            .iter()
            .map(|m| m.uci.as_str())
            .collect()
    };
    assert_eq!(stop(0), None);
    assert_eq!(stop(1), Some((2, 11, "SECTION")));
    assert_eq!(stop(2), Some((3, 21, "Ke3")));
    assert_eq!(
        moves(2),
        ["e2e4"],
        "the moves before the bad token are kept"
    );
    assert_eq!((stop(3), moves(3)), (None, vec!["f2f4", "e7e5"]));
    // Reading the whole file still stops at the first game it cannot read.
    assert_eq!(read_games(&text).unwrap_err().game, 2);
}

#[test]
fn fide_scoresheet_forms_are_read_not_skipped() {
    let text = "[FEN \"4k3/1P6/8/3pP3/8/8/8/R3K3 w Q d6 0 1\"]\n[SetUp \"1\"]\n\n\
        1. exd6 e.p. Kd7 2. 0-0-0 Kc6 3. b8Q Kc5 4. Qb5++ *\n";
    let games = read_games(text).unwrap();
    let san: Vec<&str> = games[0].moves.iter().map(|m| m.san.as_str()).collect();
    assert_eq!(san, ["exd6", "Kd7", "O-O-O", "Kc6", "b8=Q", "Kc5", "Qb5+"]);
}

#[test]
fn a_token_that_is_not_a_move_is_an_error() {
    // pgn-reader would silently drop "Nf3++"-like garbage; we stop on it.
    let err = read_games(&format!("{TAGS}1. e4 e5 2. Nf3x!! *\n")).unwrap_err();
    assert_eq!((err.game, err.ply), (1, 3));
    let err = read_games(&format!("{TAGS}1. e4 -- *\n")).unwrap_err();
    assert!(err.reason.contains("null move"), "{}", err.reason);
    let err = read_games("-----\nSection 5\n-----\n").unwrap_err();
    assert_eq!((err.game, err.ply, err.line), (1, 1, 1));
}

#[test]
fn unknown_tags_are_kept_and_malformed_tags_rejected() {
    let games = read_games("[Event \"x\"]\n[MyOwnTag \"kept\"]\n\n1. d4 *\n").unwrap();
    assert!(
        games[0]
            .tags
            .contains(&("MyOwnTag".to_string(), "kept".to_string()))
    );
    let err = read_games("[Event \"x\"]\n[White Carlsen]\n\n1. d4 *\n").unwrap_err();
    assert_eq!((err.game, err.line), (1, 2));
    assert!(err.reason.contains("malformed tag"), "{}", err.reason);
    let err = read_games("[Event \"x\"]\n[Event \"y\"]\n\n1. d4 *\n").unwrap_err();
    assert!(err.reason.contains("twice"));
}

#[test]
fn bom_latin1_and_empty_games() {
    let mut bytes = b"\xef\xbb\xbf[White \"M\xc3\xbcller\"]\n\n1. e4 *\n".to_vec();
    let games = read_games_bytes(&bytes).unwrap();
    assert_eq!(games[0].tags[0].1, "Müller");
    bytes = b"[White \"M\xfcller\"]\n\n1. e4 *\n".to_vec();
    let games = read_games_bytes(&bytes).unwrap();
    assert_eq!(
        games[0].tags[0].1, "Müller",
        "ISO-8859-1 is the PGN standard's encoding"
    );
    let games = read_games(&format!("{TAGS}*\n\n{TAGS}1. c4 *\n")).unwrap();
    assert_eq!(games.len(), 2);
    assert!(games[0].moves.is_empty());
    assert_eq!(read_games("").unwrap().len(), 0);
    assert_eq!(read_games("\n\n  \n").unwrap().len(), 0);
}

#[test]
fn bad_fen_unclosed_comment_and_wrong_result() {
    let err = read_games("[SetUp \"1\"]\n[FEN \"8/8/8 w - - 0 1\"]\n\n1. e4 *\n").unwrap_err();
    assert_eq!((err.game, err.ply), (1, 0));
    assert!(err.reason.contains("bad FEN"), "{}", err.reason);
    let err = read_games(&format!("{TAGS}1. e4 {{never closed\n")).unwrap_err();
    assert!(err.reason.contains("comment"), "{}", err.reason);
    let err = read_games("[Result \"1-0\"]\n\n1. e4 0-1\n").unwrap_err();
    assert!(err.reason.contains("Result tag"), "{}", err.reason);
    let err = read_games(&format!("{TAGS}1. e4 (1. d4 d5 *\n")).unwrap_err();
    assert!(err.reason.contains("variation"), "{}", err.reason);
}

#[test]
fn the_cli_names_file_game_and_ply() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.pgn");
    let bad = dir.path().join("bad.pgn");
    std::fs::write(&good, format!("{TAGS}1. e4 e5 2. Nf3 *\n")).unwrap();
    std::fs::write(
        &bad,
        format!("{TAGS}1. e4 e5 *\n\n{TAGS}1. e4 e5 2. Qxf7 *\n"),
    )
    .unwrap();
    let bin = env!("CARGO_BIN_EXE_touchmove");
    let out = Command::new(bin)
        .args(["pgn", "check"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("good.pgn: 1 games, 3 plies"));
    let out = Command::new(bin)
        .args(["pgn", "check"])
        .arg(&good)
        .arg(&bad)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("bad.pgn:2:3: "), "{stderr}");
    assert!(stderr.contains("Qxf7"), "{stderr}");
    let missing = dir.path().join("missing.pgn");
    let out = Command::new(bin)
        .args(["pgn", "normalize"])
        .arg(&missing)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.pgn: cannot read"));
    let out = Command::new(bin)
        .args(["pgn", "normalize"])
        .arg(&good)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("[Event \"t\"]\n[Site \"?\"]"), "{text}");
    assert!(text.contains("\n1. e4 e5 2. Nf3 *\n"), "{text}");
}

#[test]
fn analyse_reports_a_malformed_fen_and_goes_on() {
    let bin = env!("CARGO_BIN_EXE_touchmove");
    let out = Command::new(bin)
        .args(["analyse", "not a fen", "8/8/8/8/8/8/8/K1k5 w - - 0 1"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("argument 1: invalid FEN \"not a fen\""),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        stdout.trim(),
        "{\"fen\":\"8/8/8/8/8/8/8/K1k5 w - - 0 1\",\"white_can_checkmate\":false,\
         \"black_can_checkmate\":false,\"dead\":true}"
    );
}

proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = read_games_bytes(&bytes);
    }

    #[test]
    fn pgn_like_text_never_panics(text in "[\\[\\]{}()\"; a-hKQRBN1-8x=+#.\\-*/\\n%$!?0O]{0,120}") {
        let _ = read_games(&text);
        // Read game by game, past every error, the reader always reaches the end.
        prop_assert!(games(&text).count() <= text.len() + 1);
    }
}

/// A `[%clk]` too large to count in milliseconds is not a clock reading (no overflow, no
/// wrapped time): the comment is kept as written.
#[test]
fn a_huge_clock_is_kept_as_text_not_overflowed() {
    use touchmove::record::pgn::parse_clock;
    assert_eq!(parse_clock("99999999999999999"), None);
    assert_eq!(parse_clock("18446744073709551.616"), None);
    assert_eq!(parse_clock("0:99999999999999999"), None);
    assert_eq!(parse_clock("1:02:03.5"), Some(3_723_500));
    let text = format!("{TAGS}1. e4 {{[%clk 99999999999999999]}} e5 *\n");
    let games = read_games(&text).unwrap();
    assert_eq!(games[0].moves[0].clock_ms, None);
    assert!(
        games[0].moves[0]
            .comments
            .iter()
            .any(|c| c.contains("99999999999999999")),
        "{:?}",
        games[0].moves[0].comments
    );
}
