//! Observations of a physical board and the board's orientation.
//!
//! An [`Observation`] is one change reported by the sensors (a square emptied, a piece
//! placed, a full snapshot) or by the clock, with the time it was received. Squares in an
//! observation are already in game coordinates (a1 = White's queen-side rook corner): the
//! orientation mapping happens before observations reach the act-of-moving machine.

pub mod dgt;
pub mod kind;
pub mod leds;
pub mod log_recovery;
pub mod orientation;
pub mod resumption;
pub mod snapshot;

use serde::{Deserialize, Serialize};
use shakmaty::{Board, Color, Piece, Square};

pub use crate::wire::Millis;

/// One change reported by a board or its clock, in game coordinates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// When the bytes that carried this observation were received.
    pub t_ms: Millis,
    /// What changed.
    pub kind: ObservationKind,
}

/// What an observation reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ObservationKind {
    /// A square became empty (a piece was lifted or knocked off it).
    Emptied(Square),
    /// A piece was placed on a square. `None` on occupancy-only boards that cannot tell
    /// which piece it is.
    Placed(Square, Option<Piece>),
    /// A full picture of all 64 squares (a board dump). On occupancy-only boards the piece
    /// identities in the snapshot are meaningless; see [`Snapshot::identifies_pieces`].
    Snapshot(Snapshot),
    /// The clock was pressed by `by`: that player's clock stopped and the opponent's started
    /// (FIDE 6.2.1: this completes `by`'s move).
    ClockPressed {
        /// The player who pressed the clock.
        by: Color,
    },
    /// Clock times as read from an electronic clock, already mapped to White/Black.
    ClockTimes(ClockReading),
    /// One of DGT's "magic" result pieces was placed on a square: a result signal, never a
    /// piece of the game.
    MagicPiece(Square, MagicPiece),
}

/// DGT's three result pieces (piece codes 0x0D, 0x0E, 0x0F).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum MagicPiece {
    /// The game is drawn.
    Draw,
    /// White wins.
    WhiteWins,
    /// Black wins.
    BlackWins,
}

impl MagicPiece {
    /// The result piece of a DGT piece code, if it is one.
    pub fn from_code(code: u8) -> Option<MagicPiece> {
        match code {
            0x0D => Some(MagicPiece::Draw),
            0x0E => Some(MagicPiece::WhiteWins),
            0x0F => Some(MagicPiece::BlackWins),
            _ => None,
        }
    }

    /// Its DGT piece code.
    pub fn code(self) -> u8 {
        match self {
            MagicPiece::Draw => 0x0D,
            MagicPiece::WhiteWins => 0x0E,
            MagicPiece::BlackWins => 0x0F,
        }
    }

    /// The PGN result it signals.
    pub fn result(self) -> &'static str {
        match self {
            MagicPiece::Draw => "1/2-1/2",
            MagicPiece::WhiteWins => "1-0",
            MagicPiece::BlackWins => "0-1",
        }
    }
}

/// A full picture of the physical board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The pieces as the sensors see them (may be any arrangement, legal or not).
    pub board: Board,
    /// False for occupancy-only boards: only the occupied set is meaningful.
    pub identifies_pieces: bool,
}

impl Snapshot {
    /// The picture an occupancy-only board gives of the same pieces: every occupied square
    /// holds a white pawn (the piece code such boards send, [`snapshot::OCCUPIED`]).
    pub fn occupancy_only(&self) -> Snapshot {
        let mut board = Board::empty();
        for sq in self.board.occupied() {
            board.set_piece_at(sq, Color::White.pawn());
        }
        Snapshot {
            board,
            identifies_pieces: false,
        }
    }
}

/// Remaining times read from a clock, mapped to the players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockReading {
    /// White's remaining time in milliseconds.
    pub white_ms: u64,
    /// Black's remaining time in milliseconds.
    pub black_ms: u64,
    /// Whose clock is running, if any.
    pub running: Option<ColorName>,
    /// True when a flag has fallen on the clock's display.
    pub flag: bool,
}

/// A serialisable player colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorName {
    /// The white pieces.
    White,
    /// The black pieces.
    Black,
}

impl From<Color> for ColorName {
    fn from(c: Color) -> Self {
        match c {
            Color::White => ColorName::White,
            Color::Black => ColorName::Black,
        }
    }
}

impl From<ColorName> for Color {
    fn from(c: ColorName) -> Self {
        match c {
            ColorName::White => Color::White,
            ColorName::Black => Color::Black,
        }
    }
}
