//! Round trip on real games: every game of `fixtures/pgn/*.pgn` replays, is written by our PGN
//! writer, read back, and gives the same moves, clocks, comments and tags; our SAN equals the
//! SAN of the source file as pgn-reader tokenises it (an independent reader).

use std::ops::ControlFlow;

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use touchmove::record::GameRecord;
use touchmove::record::pgn::{read_games, read_games_bytes, write_game};

/// Collects the SAN tokens of each game as pgn-reader sees them.
struct SourceSan;

impl Visitor for SourceSan {
    type Tags = ();
    type Movetext = Vec<String>;
    type Output = Vec<String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(())
    }

    fn tag(&mut self, _: &mut (), _: &[u8], _: RawTag<'_>) -> ControlFlow<Self::Output> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _: ()) -> ControlFlow<Self::Output, Self::Movetext> {
        ControlFlow::Continue(Vec::new())
    }

    fn san(&mut self, moves: &mut Vec<String>, san: SanPlus) -> ControlFlow<Self::Output> {
        moves.push(san.to_string());
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, moves: Vec<String>) -> Self::Output {
        moves
    }
}

fn source_san(bytes: &[u8]) -> Vec<Vec<String>> {
    let mut reader = Reader::new(bytes);
    let mut games = Vec::new();
    while let Some(moves) = reader.read_game(&mut SourceSan).expect("in-memory read") {
        games.push(moves);
    }
    games
}

fn round_trip(file: &str, expected_games: usize) {
    let path = format!("{}/fixtures/pgn/{file}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap();
    let games = read_games_bytes(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
    assert_eq!(games.len(), expected_games, "{file}");
    let sources = source_san(&bytes);
    assert_eq!(sources.len(), games.len(), "{file}: pgn-reader game count");
    let mut plies = 0;
    for (i, (game, source)) in games.iter().zip(&sources).enumerate() {
        let ours: Vec<&str> = game.moves.iter().map(|m| m.san.as_str()).collect();
        assert_eq!(
            &ours,
            source,
            "{file} game {}: SAN differs from the source",
            i + 1
        );
        let written = write_game(game);
        for line in written.lines().filter(|l| !l.starts_with('[')) {
            assert!(
                line.chars().count() < 80,
                "{file} game {}: long line {line:?}",
                i + 1
            );
        }
        let back = read_games(&written)
            .unwrap_or_else(|e| panic!("{file} game {}: {e}\n{written}", i + 1));
        assert_eq!(back.len(), 1);
        assert_eq!(
            &back[0],
            game,
            "{file} game {}: differs after the round trip",
            i + 1
        );
        let replayed = game.to_game().unwrap();
        assert_eq!(replayed.plies(), game.moves.len());
        plies += game.moves.len();
    }
    assert!(plies > 10_000, "{file}: only {plies} plies");
}

#[test]
fn twic_games_round_trip() {
    round_trip("twic1599_1000k.pgn", 1110);
}

#[test]
fn lichess_games_round_trip_with_clocks() {
    round_trip("lichess_db_1000k.pgn", 438);
    let path = format!(
        "{}/fixtures/pgn/lichess_db_1000k.pgn",
        env!("CARGO_MANIFEST_DIR")
    );
    let games = read_games_bytes(&std::fs::read(path).unwrap()).unwrap();
    let clocked = games
        .iter()
        .flat_map(|g| &g.moves)
        .filter(|m| m.clock_ms.is_some())
        .count();
    let total: usize = games.iter().map(|g| g.moves.len()).sum();
    assert_eq!(clocked, total, "every lichess move carries [%clk]");
}

#[test]
fn writer_output_is_canonical() {
    let mut record = GameRecord {
        tags: vec![
            ("White".into(), "Carlsen, \"Magnus\"".into()),
            ("Annotator".into(), "back\\slash".into()),
            ("Event".into(), "Test".into()),
        ],
        result: "1-0".into(),
        ..GameRecord::default()
    };
    let mut game = touchmove::rules::Game::standard();
    for (i, san) in ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"]
        .iter()
        .enumerate()
    {
        let played = game.play_san(san).unwrap();
        record.moves.push(touchmove::record::RecordedMove {
            san: played.san.clone(),
            uci: played.uci.clone(),
            clock_ms: Some(300_000 - 1000 * i as u64),
            elapsed_ms: (i == 2).then_some(1500),
            comments: if i == 3 {
                vec!["arbiter: clock {fixed}".into()]
            } else {
                vec![]
            },
            ..Default::default()
        });
    }
    let text = write_game(&record);
    let expected = "[Event \"Test\"]\n[Site \"?\"]\n[Date \"????.??.??\"]\n[Round \"?\"]\n\
        [White \"Carlsen, \\\"Magnus\\\"\"]\n[Black \"?\"]\n[Result \"1-0\"]\n\
        [Annotator \"back\\\\slash\"]\n\n\
        1. e4 {[%clk 0:05:00]} 1... e5 {[%clk 0:04:59]} 2. Qh5\n\
        {[%clk 0:04:58] [%emt 0:00:01.5]} 2... Nc6 {[%clk 0:04:57]}\n\
        {arbiter: clock (fixed)} 3. Bc4 {[%clk 0:04:56]} 3... Nf6 {[%clk 0:04:55]}\n\
        4. Qxf7# {[%clk 0:04:54]} 1-0\n\n";
    assert_eq!(text, expected);
    let back = read_games(&text).unwrap();
    assert!(
        back[0]
            .tags
            .contains(&("White".to_string(), "Carlsen, \"Magnus\"".to_string()))
    );
    assert_eq!(back[0].moves[2].elapsed_ms, Some(1500));
    assert_eq!(back[0].result, "1-0");
}

#[test]
fn chess960_and_set_up_games_carry_variant_setup_and_fen() {
    let fen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1";
    let mut game = touchmove::rules::Game::from_fen(fen, true).unwrap();
    for san in ["O-O", "O-O-O", "d4", "d5"] {
        game.play_san(san).unwrap();
    }
    assert_eq!(
        game.moves()[0].uci,
        "e1g1",
        "Chess960 UCI castling is king takes rook"
    );
    assert_eq!(game.moves()[1].uci, "e8b8");
    let mut record = GameRecord::from_game(&game);
    record.result = "1/2-1/2".into();
    let text = write_game(&record);
    assert!(
        text.contains("[Variant \"Chess960\"]\n[SetUp \"1\"]\n[FEN \""),
        "{text}"
    );
    assert!(text.contains("\n1. O-O O-O-O 2. d4 d5 1/2-1/2\n"), "{text}");
    let back = read_games(&text).unwrap();
    // The writer fills the seven-tag roster with "?"; everything else comes back as it was.
    assert_eq!(back[0].tags.len(), 6);
    assert_eq!(
        GameRecord {
            tags: vec![],
            ..back[0].clone()
        },
        record
    );
    let replayed = back[0].to_game().unwrap();
    assert_eq!(replayed.fen(), game.fen());

    // A standard game from a set-up position with Black to move starts with "N...".
    let mut setup =
        touchmove::rules::Game::from_fen("4k3/8/8/8/8/8/4P3/4K3 b - - 0 40", false).unwrap();
    setup.play_san("Kd7").unwrap();
    setup.play_san("e4").unwrap();
    let text = write_game(&GameRecord::from_game(&setup));
    assert!(text.contains("\n40... Kd7 41. e4 *\n"), "{text}");
    assert!(!text.contains("Variant"), "{text}");
}
