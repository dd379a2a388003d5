use shakmaty::fen::Fen;
use shakmaty::san::SanPlus;
use shakmaty::uci::UciMove;
use shakmaty::zobrist::Zobrist64;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Move, Position};

use super::outcome::{EndReason, GameEnd, GameResult};
use super::unwinnable::{self, Budget};

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
    /// Zobrist hash of each position (legal en passant only), to find repetitions quickly.
    keys: Vec<u64>,
}

impl Game {
    /// A game from the standard start position.
    pub fn standard() -> Game {
        Game::from_position(Chess::default(), CastlingMode::Standard)
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
        Ok(Game::from_position(pos, mode))
    }

    /// A game from a position already built.
    pub fn from_position(start: Chess, mode: CastlingMode) -> Game {
        Game {
            mode,
            keys: vec![repetition_key(&start)],
            positions: vec![start],
            moves: Vec::new(),
        }
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
        self.keys.push(repetition_key(&next));
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
        self.keys.truncate(plies + 1);
    }

    /// Plays a move given in SAN (PGN style, `+`/`#` optional).
    pub fn play_san(&mut self, san: &str) -> Result<&PlayedMove, GameError> {
        let mv = self.parse_san(san)?;
        self.play(mv)
    }

    /// The legal move a SAN text stands for in the current position.
    pub fn parse_san(&self, san: &str) -> Result<Move, GameError> {
        let illegal = || GameError::IllegalMove {
            mv: san.to_string(),
            fen: self.fen(),
        };
        let parsed = SanPlus::from_ascii(san.trim().as_bytes()).map_err(|_| illegal())?;
        parsed.san.to_move(self.position()).map_err(|_| illegal())
    }

    /// The plies (indices into [`Game::positions`]) at which the position after `ply` plies
    /// occurred, in the sense of 9.2.2, up to and including `ply`, in increasing order.
    pub fn occurrences(&self, ply: usize) -> Vec<usize> {
        match self.positions.get(ply) {
            Some(target) => self.earlier_occurrences(target, self.keys[ply], ply),
            None => Vec::new(),
        }
    }

    /// The recorded plies `<= ply` whose position equals `target`, the position at `ply`
    /// (9.2.2). Only plies since the last pawn move or capture can match.
    pub(super) fn earlier_occurrences(&self, target: &Chess, key: u64, ply: usize) -> Vec<usize> {
        let first = ply.saturating_sub(target.halfmoves() as usize);
        let mut found: Vec<usize> = (first..=ply)
            .rev()
            .step_by(2)
            .filter(|&j| {
                self.keys.get(j) == Some(&key) && same_position(&self.positions[j], target)
            })
            .collect();
        found.reverse();
        found
    }

    /// What ends the game by itself after the last move, if anything: checkmate (5.1.1),
    /// stalemate (5.2.1), the 75-move rule (9.6.2; a mate on the last move stands), fivefold
    /// repetition (9.6.1) and dead position (5.2.2).
    ///
    /// Cheap on ordinary positions: the unwinnability analysis runs only where the static
    /// filter says a dead position is possible, and then within `budget`; an undetermined
    /// analysis does not end the game.
    pub fn automatic_end(&self, budget: &Budget) -> Option<GameEnd> {
        match self.automatic_end_unanalysed() {
            EndCheck::End(end) => Some(end),
            EndCheck::Analyse
                if budget.allows_search()
                    && unwinnable::is_dead(self.position(), budget) == Some(true) =>
            {
                Some(GameEnd::draw(EndReason::DeadPosition))
            }
            EndCheck::Analyse | EndCheck::Continues => None,
        }
    }

    /// [`Game::automatic_end`] without the unwinnability analysis, which can take
    /// milliseconds: the ends found by rule and by material alone, or whether the position
    /// needs the analysis to tell a dead position (5.2.2).
    pub fn automatic_end_unanalysed(&self) -> EndCheck {
        let pos = self.position();
        let legal = pos.legal_moves();
        if legal.is_empty() {
            return EndCheck::End(if pos.is_check() {
                GameEnd {
                    result: GameResult::win_for(!pos.turn()),
                    reason: EndReason::Checkmate,
                }
            } else {
                GameEnd::draw(EndReason::Stalemate)
            });
        }
        if pos.halfmoves() >= 150 {
            return EndCheck::End(GameEnd::draw(EndReason::SeventyFiveMoveRule));
        }
        if self.occurrences(self.plies()).len() >= 5 {
            return EndCheck::End(GameEnd::draw(EndReason::FivefoldRepetition));
        }
        if unwinnable::insufficient_material(pos) {
            return EndCheck::End(GameEnd::draw(EndReason::DeadPosition));
        }
        if legal.len() <= unwinnable::FEW_MOVES || unwinnable::dead_position_possible(pos) {
            EndCheck::Analyse
        } else {
            EndCheck::Continues
        }
    }
}

/// What [`Game::automatic_end_unanalysed`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndCheck {
    /// The game ended.
    End(GameEnd),
    /// Only the unwinnability analysis can tell whether the position is dead.
    Analyse,
    /// The game goes on.
    Continues,
}

/// Hash of a position for repetition: pieces, side to move, castling rights and an en passant
/// square only when the capture is legal (9.2.2).
pub(super) fn repetition_key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

/// The same position in the sense of 9.2.2: same player to move, same pieces on the same
/// squares, same possible moves (castling rights, a legal en passant capture).
pub fn same_position(a: &Chess, b: &Chess) -> bool {
    a.turn() == b.turn()
        && a.board() == b.board()
        && a.castles().castling_rights() == b.castles().castling_rights()
        && a.legal_ep_square() == b.legal_ep_square()
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
