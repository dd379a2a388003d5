//! Notation: the PGN writer and reader, and FIDE scoresheet notation.
//!
//! [`GameRecord`] is what every output (replay, the recorder's files, the server) writes.

pub mod arbiter;
pub mod pgn;
pub mod scoresheet;

use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, EnPassantMode};

use crate::board::Millis;
use crate::rules::{Game, GameError};

/// One move of a recorded game, with what is known about its timing and any comments.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordedMove {
    /// SAN with check/mate suffix.
    pub san: String,
    /// UCI form of the same move.
    pub uci: String,
    /// Remaining time of the mover after the move, if a clock reading is known (`[%clk]`).
    pub clock_ms: Option<u64>,
    /// Time the mover spent on the move, if known (`[%emt]`).
    pub elapsed_ms: Option<u64>,
    /// When the move was made, in the session's milliseconds.
    pub t_ms: Option<Millis>,
    /// Comments after the move (arbiter notes, irregularities), written as `{...}`.
    pub comments: Vec<String>,
}

/// A game as it is written to PGN.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GameRecord {
    /// Tags in any order; the writer puts the seven-tag roster first, in its order.
    pub tags: Vec<(String, String)>,
    /// FEN of the start position when it is not the standard start.
    pub start_fen: Option<String>,
    /// True for a Chess960 game (`[Variant "Chess960"]`).
    pub chess960: bool,
    /// Comment before the first move.
    pub initial_comments: Vec<String>,
    /// The moves.
    pub moves: Vec<RecordedMove>,
    /// PGN result token (`1-0`, `0-1`, `1/2-1/2`, `*`).
    pub result: String,
}

impl RecordedMove {
    /// Puts the move recognised at `ply` (1-based) into `moves`: whatever was recorded from
    /// that ply on is withdrawn first, as a revision or a replacement requires.
    pub fn place(moves: &mut Vec<RecordedMove>, ply: u32, san: &str, uci: &str, t_ms: Millis) {
        moves.truncate(ply.saturating_sub(1) as usize);
        moves.push(RecordedMove {
            san: san.to_string(),
            uci: uci.to_string(),
            t_ms: Some(t_ms),
            ..RecordedMove::default()
        });
    }
}

impl GameRecord {
    /// The value of tag `name`, if the game has it.
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The record of a game as played so far: moves with SAN and UCI, the start FEN when the
    /// start is not the standard one, the Chess960 flag; no tags, result `*`.
    pub fn from_game(game: &Game) -> GameRecord {
        let chess960 = game.castling_mode() == CastlingMode::Chess960;
        let start_fen = Fen::from_position(game.start(), EnPassantMode::Legal).to_string();
        let standard = !chess960 && start_fen == STANDARD_START_FEN;
        GameRecord {
            start_fen: (!standard).then_some(start_fen),
            chess960,
            moves: game
                .moves()
                .iter()
                .map(|m| RecordedMove {
                    san: m.san.clone(),
                    uci: m.uci.clone(),
                    ..RecordedMove::default()
                })
                .collect(),
            result: "*".to_string(),
            ..GameRecord::default()
        }
    }

    /// Rebuilds the game by replaying every move (by UCI when it is given, else by SAN or
    /// scoresheet notation).
    pub fn to_game(&self) -> Result<Game, ReplayError> {
        let mut game = match &self.start_fen {
            Some(fen) => Game::from_fen(fen, self.chess960),
            None if self.chess960 => Game::from_fen(STANDARD_START_FEN, true),
            None => Ok(Game::standard()),
        }
        .map_err(|source| ReplayError { ply: 0, source })?;
        for (i, mv) in self.moves.iter().enumerate() {
            let played = if mv.uci.is_empty() {
                scoresheet::parse_move(game.position(), &mv.san)
                    .map_err(|e| GameError::IllegalMove {
                        mv: format!("{} ({e})", mv.san),
                        fen: game.fen(),
                    })
                    .and_then(|m| game.play(m).map(|_| ()))
            } else {
                game.play_uci(&mv.uci).map(|_| ())
            };
            played.map_err(|source| ReplayError { ply: i + 1, source })?;
        }
        Ok(game)
    }
}

/// A record whose moves cannot be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("ply {ply}: {source}")]
pub struct ReplayError {
    /// The ply (from 1) that failed; 0 for the start position.
    pub ply: usize,
    /// What failed.
    pub source: GameError,
}

/// FEN of the standard start position.
pub const STANDARD_START_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
