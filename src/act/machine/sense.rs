//! What a board senses of its squares, which decides how the machine reads it: chosen once,
//! from the board's kind, when the machine is built.

/// What the board senses of its squares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Sense {
    /// It names the piece on each square (DGT, Millennium, Certabo, Chessnut): a capture
    /// shows its landing and a promotion its piece.
    PieceNames,
    /// It senses only whether a square is occupied (Sentio, Pegasus): a capture may show no
    /// landing, a promotion no piece, and the machine reads what such a board cannot show
    /// as well ([`Machine`](super::Machine)'s readers, `readers.rs`).
    Occupancy,
}

impl Sense {
    /// The sense of a board that names its pieces or not.
    pub(super) fn of(identifies_pieces: bool) -> Sense {
        if identifies_pieces {
            Sense::PieceNames
        } else {
            Sense::Occupancy
        }
    }
}
