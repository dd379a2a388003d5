//! Games read from PGN text as the simulator needs them: start position, moves in UCI and
//! result. A thin view of the one PGN reader ([`crate::record::pgn::games`]).

use std::io;
use std::path::Path;

use shakmaty::{Chess, Move};

use crate::record::pgn::{games, text_of};
use crate::record::{GameRecord, ReplayError};

/// One game of a PGN file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnGame {
    /// 1-based index of the game in its file.
    pub index: usize,
    /// The `[FEN]` tag, if the game does not start from the standard position.
    pub fen: Option<String>,
    /// True for `[Variant "Chess960"]` (or "Fischerandom").
    pub chess960: bool,
    /// The moves in UCI of the game's castling mode, up to the first one that could not
    /// be read or played.
    pub moves_uci: Vec<String>,
    /// The result token of the movetext (or the `[Result]` tag).
    pub result: Option<String>,
    /// Why the moves stop early, if they do.
    pub error: Option<String>,
}

/// Reads every game of a PGN text. Games with an unreadable move keep the moves before it
/// and say why in [`PgnGame::error`]; the games after it are read on.
pub fn read_games(pgn: &[u8]) -> io::Result<Vec<PgnGame>> {
    Ok(games(&text_of(pgn))
        .zip(1..)
        .map(|(game, index)| PgnGame {
            index,
            fen: game.record.start_fen,
            chess960: game.record.chess960,
            moves_uci: game.record.moves.into_iter().map(|m| m.uci).collect(),
            result: Some(game.record.result),
            error: game.error.map(|e| e.to_string()),
        })
        .collect())
}

/// Game number `index` (1-based) of a PGN file, read up to that game and no further: what
/// comes after it (a bad token, a heading between sections) does not matter. The error names
/// the file, and the game, ply, line and token that cannot be read.
pub fn read_record(path: &Path, index: usize) -> Result<GameRecord, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let text = text_of(&bytes);
    let mut count = 0;
    for game in games(&text).take(index) {
        count += 1;
        if count == index {
            return match game.error {
                Some(e) => Err(format!("{}: {e}", path.display())),
                None => Ok(game.record),
            };
        }
    }
    Err(format!(
        "{}: game {index} asked, but the file holds {count} game(s)",
        path.display()
    ))
}

/// Game number `index` (1-based) of a PGN file ([`read_record`]): its start position and
/// its moves.
pub fn read_game(path: &Path, index: usize) -> Result<(Chess, Vec<Move>), String> {
    start_and_moves(&read_record(path, index)?)
        .map_err(|e| format!("{} game {index}: {e}", path.display()))
}

/// A game record's start position and its moves, replayed.
pub fn start_and_moves(record: &GameRecord) -> Result<(Chess, Vec<Move>), ReplayError> {
    let game = record.to_game()?;
    let moves = game.moves().iter().map(|played| played.mv).collect();
    Ok((game.start().clone(), moves))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_asked_game_and_names_an_illegal_move() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pgn = dir.path().join("g.pgn");
        std::fs::write(
            &pgn,
            "[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 d5 *\n",
        )
        .expect("write");
        let (_, moves) = read_game(&pgn, 2).expect("game 2");
        assert_eq!(moves.len(), 2);
        let e = read_game(&pgn, 3).expect_err("missing");
        assert!(e.contains("holds 2 game(s)"), "{e}");
        std::fs::write(&pgn, "[Event \"b\"]\n\n1. d4 d5\n2. Ke3 *\n").expect("write");
        let e = read_game(&pgn, 1).expect_err("illegal");
        assert!(e.contains("Ke3") && e.contains("line 4"), "{e}");
    }

    #[test]
    fn reads_moves_castling_and_result() {
        let pgn = b"[Event \"x\"]\n[Result \"1-0\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O Nf6 1-0\n\n\
[Variant \"Chess960\"]\n[FEN \"bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9\"]\n\n\
9. g3 cxb2 *\n";
        let games = read_games(pgn).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].moves_uci.last().map(String::as_str), Some("g8f6"));
        assert_eq!(games[0].moves_uci[6], "e1g1");
        assert_eq!(games[0].result.as_deref(), Some("1-0"));
        assert!(games[1].chess960);
        assert_eq!(games[1].moves_uci, vec!["g2g3".to_string()]);
        assert!(games[1].error.is_some());
    }
}
