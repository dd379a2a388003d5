//! Games read from PGN text as the simulator needs them: start position, moves in UCI and
//! result.

use std::io;
use std::ops::ControlFlow;

use pgn_reader::{Outcome, RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, Position};

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

#[derive(Default)]
struct Tags {
    fen: Option<String>,
    chess960: bool,
    result: Option<String>,
}

struct Movetext {
    game: PgnGame,
    pos: Option<Chess>,
    mode: CastlingMode,
}

struct Collector {
    count: usize,
}

impl Visitor for Collector {
    type Tags = Tags;
    type Movetext = Movetext;
    type Output = PgnGame;

    fn begin_tags(&mut self) -> ControlFlow<PgnGame, Tags> {
        self.count += 1;
        ControlFlow::Continue(Tags::default())
    }

    fn tag(&mut self, tags: &mut Tags, name: &[u8], value: RawTag<'_>) -> ControlFlow<PgnGame> {
        let text = value.decode_utf8_lossy().trim().to_string();
        match name {
            b"FEN" => tags.fen = Some(text),
            b"Variant" => {
                let v = text.to_ascii_lowercase();
                tags.chess960 = v.contains("960") || v.contains("fischer");
            }
            b"Result" => tags.result = Some(text),
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Tags) -> ControlFlow<PgnGame, Movetext> {
        let mode = if tags.chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let mut error = None;
        let pos = match &tags.fen {
            None => Some(Chess::default()),
            Some(fen) => match fen
                .parse::<Fen>()
                .map_err(|e| e.to_string())
                .and_then(|f| f.into_position::<Chess>(mode).map_err(|e| e.to_string()))
            {
                Ok(p) => Some(p),
                Err(e) => {
                    error = Some(format!("invalid FEN {fen:?}: {e}"));
                    None
                }
            },
        };
        ControlFlow::Continue(Movetext {
            game: PgnGame {
                index: self.count,
                fen: tags.fen,
                chess960: tags.chess960,
                moves_uci: Vec::new(),
                result: tags.result,
                error,
            },
            pos,
            mode,
        })
    }

    fn san(&mut self, m: &mut Movetext, san_plus: SanPlus) -> ControlFlow<PgnGame> {
        let Some(pos) = m.pos.as_mut() else {
            return ControlFlow::Continue(());
        };
        match san_plus.san.to_move(pos) {
            Ok(mv) => {
                m.game
                    .moves_uci
                    .push(UciMove::from_move(mv, m.mode).to_string());
                pos.play_unchecked(mv);
            }
            Err(e) => {
                m.game.error = Some(format!(
                    "move {} ({san_plus}) cannot be played: {e}",
                    m.game.moves_uci.len() + 1
                ));
                m.pos = None;
            }
        }
        ControlFlow::Continue(())
    }

    fn outcome(&mut self, m: &mut Movetext, outcome: Outcome) -> ControlFlow<PgnGame> {
        m.game.result = Some(outcome.to_string());
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, m: Movetext) -> PgnGame {
        m.game
    }
}

/// Reads every game of a PGN text. Games with an unreadable move keep the moves before it
/// and say why in [`PgnGame::error`].
pub fn read_games(pgn: &[u8]) -> io::Result<Vec<PgnGame>> {
    let mut reader = Reader::new(pgn);
    let mut collector = Collector { count: 0 };
    let mut games = Vec::new();
    while let Some(game) = reader.read_game(&mut collector)? {
        games.push(game);
    }
    Ok(games)
}

#[cfg(test)]
mod tests {
    use super::*;

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
