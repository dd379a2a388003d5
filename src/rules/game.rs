use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

/// Why a game could not be created or a move could not be played.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The FEN text could not be parsed or describes an illegal position.
    #[error("invalid FEN {fen:?}: {reason}")]
    InvalidFen {
        /// The offending text.
        fen: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The move is not legal in the current position.
    #[error("illegal move {mv} in position {fen}")]
    IllegalMove {
        /// The move as given.
        mv: String,
        /// The position it was tried in.
        fen: String,
    },
}

/// A move as played in a game, with its notations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayedMove {
    /// The move itself.
    pub mv: Move,
    /// SAN with check/mate suffix.
    pub san: String,
    /// UCI in the game's castling mode.
    pub uci: String,
}

/// A game record over shakmaty: start position, every move played and every position reached.
#[derive(Debug, Clone)]
pub struct Game {
    mode: CastlingMode,
    positions: Vec<Chess>,
    moves: Vec<PlayedMove>,
}

impl Game {
    /// A game from the standard start position.
    pub fn standard() -> Game {
        Game {
            mode: CastlingMode::Standard,
            positions: vec![Chess::default()],
            moves: Vec::new(),
        }
    }

    /// A game from a FEN (X-FEN or Shredder-FEN castling rights accepted when `chess960`).
    pub fn from_fen(fen: &str, chess960: bool) -> Result<Game, GameError> {
        let invalid = |reason: String| GameError::InvalidFen {
            fen: fen.to_string(),
            reason,
        };
        let parsed: Fen = fen.trim().parse().map_err(|e| invalid(format!("{e}")))?;
        let mode = if chess960 {
            CastlingMode::Chess960
        } else {
            CastlingMode::Standard
        };
        let pos: Chess = parsed
            .into_position(mode)
            .map_err(|e| invalid(format!("{e}")))?;
        Ok(Game {
            mode,
            positions: vec![pos],
            moves: Vec::new(),
        })
    }

    /// The castling mode (Chess960 or standard) used for UCI and FEN.
    pub fn castling_mode(&self) -> CastlingMode {
        self.mode
    }

    /// The start position.
    pub fn start(&self) -> &Chess {
        &self.positions[0]
    }

    /// The current position.
    pub fn position(&self) -> &Chess {
        self.positions
            .last()
            .expect("a game always has its start position")
    }

    /// Every position from the start to now; `positions()[n]` is the position after `n` plies.
    pub fn positions(&self) -> &[Chess] {
        &self.positions
    }

    /// Every move played.
    pub fn moves(&self) -> &[PlayedMove] {
        &self.moves
    }

    /// Number of plies played.
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// FEN of the current position.
    pub fn fen(&self) -> String {
        Fen::from_position(self.position(), EnPassantMode::Legal).to_string()
    }

    /// Plays a legal move, returning it with its notations.
    pub fn play(&mut self, mv: Move) -> Result<&PlayedMove, GameError> {
        let pos = self.position();
        if !pos.is_legal(mv) {
            return Err(GameError::IllegalMove {
                mv: UciMove::from_move(mv, self.mode).to_string(),
                fen: self.fen(),
            });
        }
        let mut next = pos.clone();
        let san = SanPlus::from_move_and_play_unchecked(&mut next, mv).to_string();
        let uci = UciMove::from_move(mv, self.mode).to_string();
        self.positions.push(next);
        self.moves.push(PlayedMove { mv, san, uci });
        Ok(self.moves.last().expect("just pushed"))
    }

    /// Plays a move given in UCI.
    pub fn play_uci(&mut self, uci: &str) -> Result<&PlayedMove, GameError> {
        let illegal = || GameError::IllegalMove {
            mv: uci.to_string(),
            fen: self.fen(),
        };
        let parsed: UciMove = uci.parse().map_err(|_| illegal())?;
        let mv = parsed.to_move(self.position()).map_err(|_| illegal())?;
        self.play(mv)
    }

    /// Takes back every move after the first `plies` plies.
    pub fn truncate(&mut self, plies: usize) {
        self.moves.truncate(plies);
        self.positions.truncate(plies + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scholar_mate_has_mate_suffix() {
        let mut g = Game::standard();
        for m in ["e2e4", "e7e5", "f1c4", "b8c6", "d1h5", "g8f6", "h5f7"] {
            g.play_uci(m).unwrap();
        }
        assert_eq!(g.moves().last().unwrap().san, "Qxf7#");
        g.truncate(2);
        assert_eq!(g.plies(), 2);
        assert!(g.play_uci("e1e2").is_ok());
        assert!(g.play_uci("a1a8").is_err());
    }
}
