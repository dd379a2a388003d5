//! FIDE Tournament Report Files: real files read, a round's boards, byes and forfeits, names
//! with accents in UTF-8 and Latin-1, results written back changing nothing else, and bad
//! input named by file, line and field while the boards that are fine go on.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::recorder_support::{fixture_opening, read_board, real_time_board, stop, touchmove};
use touchmove::event::trf::{Encoding, Trf, round_column};
use touchmove::sim::virtual_board::timeline::Pace;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/trf")
        .join(name)
}

fn load(name: &str) -> Trf {
    Trf::load(&fixture(name), None).expect("fixture readable")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `touchmove pairings FILE --round ROUND --format json`: its run (which must succeed) and
/// the boards it prints.
fn pairings_json(file: &Path, round: &str) -> (std::process::Output, Vec<serde_json::Value>) {
    let o = touchmove(&[
        "pairings",
        file.to_str().unwrap(),
        "--round",
        round,
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let boards = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    (o, boards)
}

#[test]
fn a_real_team_swiss_gives_every_round_without_problems() {
    let trf = load("grandmommyscup.trf");
    assert_eq!(trf.encoding, Encoding::Utf8);
    assert!(trf.problems.is_empty(), "{:?}", trf.problems);
    assert_eq!(trf.players.len(), 249);
    assert_eq!(trf.declared_rounds.map(|(n, _)| n), Some(14));
    assert_eq!(trf.players[&1].player.name, "Test0001 Player0001");
    assert_eq!(trf.players[&1].player.federation.as_deref(), Some("IND"));
    assert_eq!(trf.players[&1].player.fide_id, Some(70123454321));
    let mut total_boards = 0;
    for round in 1..=11 {
        let r = trf.round(round).unwrap();
        assert!(r.problems.is_empty(), "round {round}: {:?}", r.problems);
        let seated = 2 * r.boards.len() + r.byes.len();
        assert_eq!(seated, 249, "round {round}: every player once");
        let mut seen = std::collections::BTreeSet::new();
        for g in &r.boards {
            assert!(
                seen.insert(g.white) && seen.insert(g.black),
                "round {round}"
            );
        }
        assert_eq!(
            r.boards.iter().map(|g| g.board).collect::<Vec<_>>(),
            (1..=r.boards.len() as u32).collect::<Vec<_>>()
        );
        total_boards += r.boards.iter().filter(|g| !g.is_forfeit()).count();
    }
    // The games of the 11 rounds played (team matches with reserves sitting out).
    assert_eq!(total_boards, 878);
    // Round 1, board 1: the first match's first board, India's player 1 (black against 51).
    let r1 = trf.round(1).unwrap();
    assert_eq!((r1.boards[0].white, r1.boards[0].black), (51, 1));
    let e = trf.round(15).unwrap_err();
    assert_eq!(e.field, "round");
    assert!(e.message.contains("does not exist"), "{}", e.message);
}

#[test]
fn a_round_trip_changes_nothing_but_the_rounds_results() {
    let path = fixture("grandmommyscup.trf");
    let original = std::fs::read(&path).unwrap();
    let trf = load("grandmommyscup.trf");
    let round = 7;
    let r = trf.round(round).unwrap();
    let mut same = BTreeMap::new();
    for g in &r.boards {
        same.insert(g.white, g.codes.0);
        same.insert(g.black, g.codes.1);
    }
    assert_eq!(
        trf.with_results(round, &same),
        original,
        "writing back the same results changes nothing (CRLF, trailing blanks, 013/300 lines)"
    );
    let mut flipped = BTreeMap::new();
    for g in &r.boards {
        flipped.insert(g.white, '0');
        flipped.insert(g.black, '1');
    }
    let out = trf.with_results(round, &flipped);
    assert_eq!(out.len(), original.len());
    let result_column = round_column(round) + 7;
    let points_columns = 81..=84;
    let lines_in = original.split(|&b| b == b'\n').collect::<Vec<_>>();
    let lines_out = out.split(|&b| b == b'\n').collect::<Vec<_>>();
    let mut changed = 0;
    for (i, (a, b)) in lines_in.iter().zip(&lines_out).enumerate() {
        for (c, (x, y)) in a.iter().zip(b.iter()).enumerate() {
            if x != y && !points_columns.contains(&(c + 1)) {
                assert_eq!(c + 1, result_column, "line {} column {}", i + 1, c + 1);
                assert!(a.starts_with(b"001"), "line {}", i + 1);
                changed += 1;
            }
        }
    }
    assert!(changed > 50, "{changed}");
}

#[test]
fn the_dutch_examples_have_absences_and_no_third_round_yet() {
    let c5 = load("dutch_2025_C5.trf");
    let r2 = c5.round(2).unwrap();
    assert_eq!(r2.boards.len(), 3);
    let r3 = c5.round(3).unwrap();
    assert!(r3.boards.is_empty());
    assert!(r3.byes.iter().any(|b| b.rank == 4 && b.code == 'Z'));
    let c9 = load("dutch_2025_C9.trf");
    let r1 = c9.round(1).unwrap();
    assert_eq!(r1.boards.len(), 2);
    assert_eq!(r1.byes.len(), 1);
    assert!(c9.round(2).unwrap_err().message.contains("not paired"));
    assert!(c9.round(4).unwrap_err().message.contains("does not exist"));
}

#[test]
fn accents_read_the_same_from_utf8_and_latin1() {
    let utf8 = load("accents-utf8.trf");
    let latin1 = load("accents-latin1.trf");
    assert_eq!(utf8.encoding, Encoding::Utf8);
    assert_eq!(latin1.encoding, Encoding::Windows1252);
    assert!(utf8.problems.is_empty() && latin1.problems.is_empty());
    assert_eq!(utf8.players, latin1.players);
    assert_eq!(utf8.players[&1].player.name, "Ødegård, Åsmund");
    assert_eq!(utf8.players[&4].player.title.as_deref(), Some("WGM"));
    assert_eq!(utf8.players[&8].player.name, "Núñez, Iñaki");
    let r3 = utf8.round(3).unwrap();
    assert_eq!(
        r3.boards
            .iter()
            .map(|g| (g.board, g.white, g.black))
            .collect::<Vec<_>>(),
        vec![(1, 1, 4), (2, 7, 2), (3, 9, 8), (4, 3, 6)]
    );
    assert_eq!(r3.byes.len(), 1);
    assert_eq!((r3.byes[0].rank, r3.byes[0].code), (5, 'H'));
    let r2 = latin1.round(2).unwrap();
    let forfeits: Vec<_> = r2.boards.iter().filter(|g| g.is_forfeit()).collect();
    assert_eq!(forfeits.len(), 1);
    assert_eq!(
        (forfeits[0].white, forfeits[0].black, forfeits[0].codes),
        (4, 9, ('+', '-'))
    );
    assert!(r2.byes.iter().any(|b| b.rank == 6 && b.code == 'H'));
    assert_eq!(r2.boards.len(), 4, "the forfeit keeps its board");
    let r1 = latin1.round(1).unwrap();
    assert!(r1.byes.iter().any(|b| b.rank == 9 && b.code == 'U'));
}

#[test]
fn pairings_prints_the_boards_as_text_and_json() {
    for (name, encoding) in [
        ("accents-utf8.trf", "UTF-8"),
        ("accents-latin1.trf", "Windows-1252 (guessed"),
    ] {
        let (o, lines) = pairings_json(&fixture(name), "3");
        assert_eq!(lines.len(), 4);
        assert_eq!(lines[0]["board"], 1);
        assert_eq!(lines[0]["white"], "Ødegård, Åsmund");
        assert_eq!(lines[0]["white_title"], "GM");
        assert_eq!(lines[0]["white_fide_id"], 1500001);
        assert_eq!(lines[0]["black"], "Novák, Zoë");
        assert_eq!(lines[0]["black_federation"], "CZE");
        assert_eq!(lines[3]["white"], "Pérez, José");
        let err = text(&o.stderr);
        assert!(err.contains(&format!("read as {encoding}")), "{err}");
        assert!(err.contains("half-point bye: Sørensen, Lærke"), "{err}");
    }
    let file = fixture("accents-utf8.trf");
    let o = touchmove(&["pairings", file.to_str().unwrap(), "--round", "2"]);
    assert!(o.status.success());
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 4, "{out}");
    assert!(
        out.contains("board   1: IM Müller, Jürgen (2480, GER, FIDE 4600002) – GM Ødegård"),
        "{out}"
    );
}

/// A PGN game file as the recorder writes it.
fn game(board: u32, white: &str, black: &str, moves: &str, result: &str, extra: &str) -> String {
    format!(
        "[Event \"Test\"]\n[Round \"3.{board}\"]\n[White \"{white}\"]\n[Black \"{black}\"]\n\
         {extra}[Result \"{result}\"]\n\n{moves} {result}\n"
    )
}

#[test]
fn results_go_back_into_the_round_and_nowhere_else() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("out/round-3");
    std::fs::create_dir_all(&games).unwrap();
    let files = [
        game(
            1,
            "Ødegård, Åsmund",
            "Novák, Zoë",
            "1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7#",
            "1-0",
            "",
        ),
        game(
            2,
            "Çelik, Ömer",
            "Müller, Jürgen",
            "{0-1 forfeit: White absent}",
            "0-1",
            "[Termination \"rules infraction\"]\n",
        ),
        game(
            3,
            "Björk, Ingrid",
            "Núñez, Iñaki",
            "1. d4 d5 2. c4 e6",
            "1/2-1/2",
            "",
        ),
        game(4, "Pérez, José", "François, Hélène", "1. e4", "*", ""),
    ];
    for (k, f) in files.iter().enumerate() {
        std::fs::write(games.join(format!("game-{}.pgn", k + 1)), f).unwrap();
    }
    for name in ["accents-latin1.trf", "accents-utf8.trf"] {
        let input = fixture(name);
        let output = dir.path().join(format!("out-{name}"));
        let o = touchmove(&[
            "results",
            "--trf",
            input.to_str().unwrap(),
            "--round",
            "3",
            "--games",
            dir.path().join("out").to_str().unwrap(),
            "--out",
            output.to_str().unwrap(),
        ]);
        let err = text(&o.stderr);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("3 results of round 3"), "{err}");
        assert!(err.contains("board 4 (Pérez, José – François, Hélène) has no result yet"));
        let before = std::fs::read(&input).unwrap();
        let after = std::fs::read(&output).unwrap();
        let trf_in = Trf::parse(&before, &input, None).unwrap();
        let trf_out = Trf::parse(&after, &output, None).unwrap();
        assert_eq!(trf_out.encoding, trf_in.encoding, "{name}: encoding kept");
        let code = |rank: u32| {
            trf_out.players[&rank].rounds[2]
                .as_ref()
                .map(|e| e.result)
                .unwrap()
        };
        assert_eq!((code(1), code(4)), ('1', '0'));
        assert_eq!((code(7), code(2)), ('-', '+'));
        assert_eq!((code(9), code(8)), ('=', '='));
        assert_eq!((code(3), code(6)), (' ', ' '));
        let mut expected = BTreeMap::new();
        for (rank, c) in [(1, '1'), (4, '0'), (7, '-'), (2, '+'), (9, '='), (8, '=')] {
            expected.insert(rank, c);
        }
        assert_eq!(after, trf_in.with_results(3, &expected));
        // Everything but the lines of those six players is byte for byte the input.
        let split =
            |b: &[u8]| -> Vec<Vec<u8>> { b.split(|&x| x == b'\n').map(<[u8]>::to_vec).collect() };
        let changed_lines: Vec<usize> = split(&before)
            .iter()
            .zip(split(&after))
            .enumerate()
            .filter(|(_, (a, b))| *a != b)
            .map(|(i, _)| i + 1)
            .collect();
        let player_lines: Vec<usize> = [1, 2, 4, 7, 8, 9]
            .iter()
            .map(|r| trf_in.players[r].line)
            .collect();
        assert_eq!(changed_lines, player_lines, "{name}");
    }
}

#[test]
fn results_refuse_games_of_another_pairing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("game-1.pgn"),
        game(1, "Carlsen, Magnus", "Novák, Zoë", "1. e4", "1-0", ""),
    )
    .unwrap();
    let input = fixture("accents-utf8.trf");
    let output = dir.path().join("out.trf");
    let o = touchmove(&[
        "results",
        "--trf",
        input.to_str().unwrap(),
        "--round",
        "3",
        "--games",
        dir.path().to_str().unwrap(),
        "--out",
        output.to_str().unwrap(),
    ]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains("game-1.pgn: White \"Carlsen, Magnus\" and Black \"Novák, Zoë\" are not a pairing of round 3"),
        "{err}"
    );
    assert!(!output.exists(), "nothing written");
}

/// A TRF with a malformed rating, a player paired twice and a good pairing.
fn bad_trf(dir: &Path) -> PathBuf {
    let line = |rank: u32, name: &str, rating: &str, block: &str| {
        format!(
            "001 {rank:>4}      {name:<33} {rating:>4} NOR {:>11} 1990/00/00  0.0 {rank:>4}  {block}",
            1_000_000 + rank
        )
    };
    let text = [
        "012 Bad input".to_string(),
        line(1, "Alpha, A", "2400", "   2 w  "),
        line(2, "Beta, B", "2x00", "   1 b  "),
        line(3, "Gamma, C", "2200", "   4 w  "),
        line(4, "Delta, D", "2100", "   3 b  "),
        line(5, "Epsilon, E", "2000", "   4 w  "),
        line(6, "Zeta, Z", "1900", "   7 w  "),
        line(7, "Eta, H", "1800", "   6 b  "),
        "XXR 5".to_string(),
    ]
    .join("\n");
    let path = dir.join("bad.trf");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn bad_lines_are_named_and_the_good_boards_stand() {
    let dir = tempfile::tempdir().unwrap();
    let path = bad_trf(dir.path());
    let o = touchmove(&["pairings", path.to_str().unwrap(), "--round", "1"]);
    assert!(!o.status.success(), "problems make `pairings` fail");
    let err = text(&o.stderr);
    let file = path.display().to_string();
    assert!(
        err.contains(&format!(
            "{file}:3: rating (column 49): player 2: expected a rating"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "{file}:6: round 1 opponent (column 92): player 5 is paired with 4, but 4's line (line 5) pairs 4 with 3"
        )),
        "{err}"
    );
    let out = text(&o.stdout);
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(out.contains("Alpha, A") && out.contains("Gamma, C") && out.contains("Zeta, Z"));
    assert!(!out.contains("Epsilon"), "{out}");
    let o = touchmove(&["pairings", path.to_str().unwrap(), "--round", "9"]);
    assert!(!o.status.success());
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "{file}:9: round (column 172): round 9 does not exist: the file has 5 round(s)"
        )),
        "{err}"
    );
    let o = touchmove(&["pairings", path.to_str().unwrap(), "--round", "2"]);
    assert!(text(&o.stderr).contains("round 2 is not paired in this file yet"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn more_pairings_than_boards_records_the_boards_there_are() {
    let dir = tempfile::tempdir().unwrap();
    let path = bad_trf(dir.path());
    let board = real_time_board(
        dir.path(),
        &fixture_opening(0, 4),
        Pace {
            think_ms: 200,
            step_ms: 50,
        },
    );
    let out = dir.path().join("out");
    let log = dir.path().join("stderr.txt");
    let child = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .args(["record", "--no-server", "--round", "1", "--port"])
        .arg(board.path())
        .arg("--pairings")
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    tokio::time::timeout(Duration::from_secs(30), board.finished())
        .await
        .expect("the board plays its moves");
    tokio::time::sleep(Duration::from_millis(800)).await;
    stop(child);
    let err = std::fs::read_to_string(&log).unwrap();
    let file = path.display().to_string();
    assert!(
        err.contains(&format!(
            "{file}:4: board: more pairings than boards: board 2"
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("{file}:3: rating (column 49)")),
        "{err}"
    );
    let record = read_board(&out, 1);
    assert_eq!(record.moves.len(), 4, "board 1 recorded");
    let tag = |name: &str| record.tag(name);
    assert_eq!(tag("White"), Some("Alpha, A"));
    assert_eq!(tag("Black"), Some("Beta, B"));
    assert_eq!(tag("WhiteFed"), Some("NOR"));
    assert_eq!(tag("WhiteFideId"), Some("1000001"));
    assert_eq!(tag("WhiteElo"), Some("2400"));
    assert_eq!(tag("Round"), Some("1.1"));
}

/// Runs `touchmove results` for round 2 of `input`, the games in `games`, into `output`.
fn results(input: &Path, games: &Path, output: &Path, extra: &[&str]) -> (bool, String) {
    let mut args = vec![
        "results",
        "--trf",
        input.to_str().unwrap(),
        "--round",
        "2",
        "--games",
        games.to_str().unwrap(),
        "--out",
        output.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = touchmove(&args);
    (o.status.success(), text(&o.stderr))
}

/// The line of player `rank` in a file's bytes.
fn player_line(bytes: &[u8], rank: u32) -> Vec<u8> {
    let start = format!("001 {rank:>4}");
    bytes
        .split(|&b| b == b'\n')
        .find(|l| l.starts_with(start.as_bytes()))
        .unwrap()
        .to_vec()
}

#[test]
fn a_central_european_file_keeps_its_names_the_arbiters_results_and_its_bytes() {
    let input = fixture("central-europe-1250.trf");
    let trf = load("central-europe-1250.trf");
    assert_eq!(
        (trf.encoding, trf.encoding_guessed),
        (Encoding::Windows1250, true)
    );
    let names: Vec<&str> = trf
        .players
        .values()
        .map(|p| p.player.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "Šimek, Tomáš",
            "Świątek, Łukasz",
            "Kőrösi, Ödön",
            "Kuś, Paweł",
            "Szőke, Réka",
            "Nováková, Šárka"
        ]
    );
    let west = Trf::load(&input, Some(Encoding::Windows1252)).unwrap();
    assert!(!west.encoding_guessed);
    assert_eq!(west.players[&2].player.name, "Œwi¹tek, £ukasz");

    // The names as the recorder puts them into the PGN tags: no control characters.
    let o = touchmove(&[
        "pairings",
        input.to_str().unwrap(),
        "--round",
        "2",
        "--format",
        "json",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        !out.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)),
        "{out}"
    );
    let boards: Vec<serde_json::Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(boards[0]["white"], "Nováková, Šárka");
    assert_eq!(boards[0]["black"], "Šimek, Tomáš");
    assert_eq!(boards[1]["black"], "Świątek, Łukasz");
    assert_eq!(boards[2]["black"], "Kuś, Paweł");
    assert!(
        text(&o.stderr).contains("read as Windows-1250 (guessed"),
        "{}",
        text(&o.stderr)
    );

    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("out/round-2");
    std::fs::create_dir_all(&games).unwrap();
    std::fs::write(
        games.join("game-1.pgn"),
        game(
            1,
            "Nováková, Šárka",
            "Šimek, Tomáš",
            "1. f3 e5 2. g4 Qh4#",
            "0-1",
            "",
        ),
    )
    .unwrap();
    // The arbiter entered 0-1 for board 2 in the pairing program; the board says a draw.
    std::fs::write(
        games.join("game-2.pgn"),
        game(
            2,
            "Kőrösi, Ödön",
            "Świątek, Łukasz",
            "1. d4 d5 2. c4 c6",
            "1/2-1/2",
            "",
        ),
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    let kept = dir.path().join("kept.trf");
    let (ok, err) = results(&input, &dir.path().join("out"), &kept, &[]);
    assert!(ok, "{err}");
    assert!(err.contains("read as Windows-1250"), "{err}");
    assert!(
        err.contains(
            "board 2 (Kőrösi, Ödön – Świątek, Łukasz): the file has 0 1, the recorded game says \
             = =; the file's result is kept (give --replace to write the recorded one)"
        ),
        "{err}"
    );
    assert!(
        err.contains("board 3 (Szőke, Réka – Kuś, Paweł): no game recorded"),
        "{err}"
    );
    let after = std::fs::read(&kept).unwrap();
    // Board 1: Šimek wins; his points go from 1.0 to 2.0, hers stay 1.0.
    let mut expected = before.clone();
    for (rank, from, to) in [
        (
            1,
            &b" 1.0    1     4 w 1     6 b  "[..],
            &b" 2.0    1     4 w 1     6 b 1"[..],
        ),
        (
            6,
            &b" 1.0    6     3 b 1     1 w  "[..],
            &b" 1.0    6     3 b 1     1 w 0"[..],
        ),
    ] {
        let line = player_line(&before, rank);
        let at = find(&expected, &line).unwrap();
        assert_eq!(&line[80..109], from, "player {rank}");
        expected.splice(at + 80..at + 109, to.iter().copied());
    }
    assert_eq!(
        String::from_utf8_lossy(&after),
        String::from_utf8_lossy(&expected)
    );
    assert_eq!(
        after, expected,
        "every other byte (names, CRLF) is the input's"
    );

    let replaced = dir.path().join("replaced.trf");
    let (ok, err) = results(&input, &dir.path().join("out"), &replaced, &["--replace"]);
    assert!(ok, "{err}");
    assert!(
        err.contains("the recorded result is written (--replace)"),
        "{err}"
    );
    let after = std::fs::read(&replaced).unwrap();
    assert_eq!(
        &player_line(&after, 2)[80..109],
        b" 1.0    2     5 w =     3 b ="
    );
    assert_eq!(
        &player_line(&after, 3)[80..109],
        b" 0.5    3     6 w 0     2 w ="
    );
    assert_eq!(
        &player_line(&after, 2)[14..30],
        &player_line(&before, 2)[14..30]
    );
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// A player line (`001`) of round 1 with its name's bytes as the file holds them.
fn player_bytes(rank: u32, name: &[u8], federation: &str, opponent: u32, colour: char) -> Vec<u8> {
    let mut line = format!("001 {rank:>4} m    ").into_bytes();
    line.extend(name);
    line.extend(std::iter::repeat_n(b' ', 33 - name.len()));
    let rest = format!(
        " 2400 {federation} {:>11} 1990/01/01  0.0 {rank:>4}  {opponent:>4} {colour}  ",
        1_000_000 + rank
    );
    line.extend(rest.bytes());
    line
}

/// A file of Spanish players with one Czech player, written by a Central European pairing
/// program: the "ť" of his name (0x9D) is no character in Windows-1252, so the file is not
/// Windows-1252, however Spanish its federations, and every name is read as written.
#[test]
fn a_byte_a_code_page_leaves_undefined_rules_it_out() {
    let czech = b"\x8a\x9dastn\xfd, Jan";
    let lines = [
        player_bytes(1, b"P\xe9rez, Jos\xe9", "ESP", 2, 'w'),
        player_bytes(2, czech, "CZE", 1, 'b'),
        player_bytes(3, b"Garc\xeda, Luc\xeda", "ESP", 4, 'w'),
        player_bytes(4, b"Mart\xedn, \xc1lvaro", "ESP", 3, 'b'),
        player_bytes(5, b"L\xf3pez, Ra\xfal", "ESP", 0, '-'),
    ];
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("open.trf");
    std::fs::write(&path, lines.join(&b"\r\n"[..])).unwrap();
    let (o, boards) = pairings_json(&path, "1");
    assert_eq!(boards[0]["white"], "Pérez, José");
    assert_eq!(boards[0]["black"], "Šťastný, Jan");
    assert_eq!(boards[1]["black"], "Martín, Álvaro");
    assert!(
        text(&o.stderr).contains("read as Windows-1250 (guessed"),
        "{}",
        text(&o.stderr)
    );
}

/// A Windows-1250 file named UTF-8 is refused, naming the line and the byte that is not
/// UTF-8, by every command that reads a TRF.
#[test]
fn a_file_not_valid_in_the_encoding_named_is_refused_naming_line_and_byte() {
    let input = fixture("central-europe-1250.trf");
    let bytes = std::fs::read(&input).unwrap();
    let (line, column, byte) = bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .find_map(|(i, l)| {
            let at = std::str::from_utf8(l).err()?.valid_up_to();
            Some((i + 1, at + 1, l[at]))
        })
        .expect("a byte that is not UTF-8");
    let expected = format!(
        "central-europe-1250.trf:{line}: encoding (column {column}): byte {column} (0x{byte:02X}) \
         is not UTF-8"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("out/round-2")).unwrap();
    let written = dir.path().join("written.trf");
    let (ok, err) = results(
        &input,
        &dir.path().join("out"),
        &written,
        &["--encoding", "utf-8"],
    );
    assert!(!ok && err.contains(&expected), "{err}");
    assert!(!written.exists(), "nothing written");
    let o = touchmove(&[
        "pairings",
        input.to_str().unwrap(),
        "--round",
        "2",
        "--encoding",
        "utf-8",
    ]);
    assert!(
        !o.status.success() && text(&o.stderr).contains(&expected),
        "{}",
        text(&o.stderr)
    );
    // Named rightly, it is read.
    let o = touchmove(&[
        "pairings",
        input.to_str().unwrap(),
        "--round",
        "2",
        "--encoding",
        "windows-1250",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("Świątek, Łukasz"),
        "{}",
        text(&o.stdout)
    );
}
