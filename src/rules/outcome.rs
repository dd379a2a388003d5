//! How a game ended: the result and the article of the Laws that ended it.

use std::fmt;

use shakmaty::Color;

/// The result of a finished game.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GameResult {
    /// 1-0.
    WhiteWins,
    /// 0-1.
    BlackWins,
    /// ½-½.
    Draw,
}

impl GameResult {
    /// The PGN result token: `1-0`, `0-1` or `1/2-1/2`.
    pub fn pgn_token(self) -> &'static str {
        match self {
            GameResult::WhiteWins => "1-0",
            GameResult::BlackWins => "0-1",
            GameResult::Draw => "1/2-1/2",
        }
    }

    /// The result in which `winner` wins.
    pub fn win_for(winner: Color) -> GameResult {
        match winner {
            Color::White => GameResult::WhiteWins,
            Color::Black => GameResult::BlackWins,
        }
    }

    /// Parses a PGN result token (`*` and anything else give `None`).
    pub fn from_pgn_token(token: &str) -> Option<GameResult> {
        match token {
            "1-0" => Some(GameResult::WhiteWins),
            "0-1" => Some(GameResult::BlackWins),
            "1/2-1/2" => Some(GameResult::Draw),
            _ => None,
        }
    }
}

impl fmt::Display for GameResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pgn_token())
    }
}

/// Why the game ended, by the article of the Laws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EndReason {
    /// 5.1.1.
    Checkmate,
    /// 5.2.1.
    Stalemate,
    /// 5.2.2: neither player can checkmate by any series of legal moves.
    DeadPosition,
    /// 9.6.1: the same position for the fifth time.
    FivefoldRepetition,
    /// 9.6.2: 75 moves by each player without a pawn move or a capture.
    SeventyFiveMoveRule,
    /// 6.9: the flagged player loses.
    FlagFall,
    /// 6.9: the flag fell but the opponent cannot checkmate by any series of legal moves.
    FlagFallOpponentCannotCheckmate,
}

impl EndReason {
    /// The article of the FIDE Laws this reason comes from.
    pub fn article(self) -> &'static str {
        match self {
            EndReason::Checkmate => "5.1.1",
            EndReason::Stalemate => "5.2.1",
            EndReason::DeadPosition => "5.2.2",
            EndReason::FivefoldRepetition => "9.6.1",
            EndReason::SeventyFiveMoveRule => "9.6.2",
            EndReason::FlagFall | EndReason::FlagFallOpponentCannotCheckmate => "6.9",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EndReason::Checkmate => "checkmate",
            EndReason::Stalemate => "stalemate",
            EndReason::DeadPosition => "dead position",
            EndReason::FivefoldRepetition => "fivefold repetition",
            EndReason::SeventyFiveMoveRule => "75-move rule",
            EndReason::FlagFall => "flag fall",
            EndReason::FlagFallOpponentCannotCheckmate => "flag fall, opponent cannot checkmate",
        })
    }
}

/// The end of a game: its result and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GameEnd {
    /// The result.
    pub result: GameResult,
    /// The rule that ended the game.
    pub reason: EndReason,
}

impl GameEnd {
    /// A drawn game ended by `reason`.
    pub fn draw(reason: EndReason) -> GameEnd {
        GameEnd {
            result: GameResult::Draw,
            reason,
        }
    }
}

impl fmt::Display for GameEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.result, self.reason)
    }
}
