//! Doubts: why an adopted move is not certain.

use shakmaty::{Bitboard, Move, Square};

use super::exchanges::Exchange;
use crate::act::search::squares_of;
use crate::board::Millis;

/// Why an adopted move is not certain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Doubt {
    /// Several sequences from ply `from` explain the board; only their common part was
    /// adopted. With `more`, others fit as well that the search did not keep.
    Sequences {
        from: usize,
        seqs: Vec<Vec<Move>>,
        more: bool,
    },
    /// Across a gap in the link, several move orders from ply `from` reach the board:
    /// `moves`, the likeliest, were recorded; `others` reach the same position.
    Order {
        from: usize,
        moves: Vec<Move>,
        others: Vec<Vec<Move>>,
    },
    /// An occupancy-only board cannot show which piece a pawn became.
    PromotionPiece,
    /// At a press, the presser's piece was off its square and not seen put down: on an
    /// occupancy-only board `capture`, the one capture that leaves that board, shows no
    /// more (its victim's square stays occupied) than the piece still in the hand. `others`:
    /// the other captures by that piece that leave the same board, when it is not the one.
    CaptureUnseen { capture: Move, others: Vec<Move> },
    /// Several sequences of moves from position `from` explained the board, differing in
    /// which capture one piece made with its landing unseen: `moves`, with the likeliest,
    /// is recorded; `others` are the rest.
    CaptureSequence {
        from: usize,
        moves: Vec<Move>,
        others: Vec<Vec<Move>>,
    },
    /// A piece offered and taken at once, read instead of a capture elsewhere and the
    /// opponent's piece put on the offered square: the board showed the same.
    ExchangeUnseen(Exchange),
    /// The piece a pawn became at ply `from`, recorded as a queen, then made `shown`, a
    /// knight's move: the game from that ply was read again with a knight.
    PromotionShown { from: usize, shown: Move },
    /// The reconstructed moves overlapped in time by `ms`: one may be a knocked piece.
    /// `rewrites` when they replace moves already recorded.
    Overlapping {
        moves: Vec<Move>,
        ms: Millis,
        rewrites: bool,
    },
    /// The reconstructed moves put a piece on `squares` and changed them again, though the
    /// board never showed it there: a displaced piece may have been read as moves.
    /// `pressed`: those of them whose player pressed the clock after lifting the piece and
    /// before it was taken there ([`Machine::arrivals_pressed_for`]).
    UnseenArrival {
        moves: Vec<Move>,
        squares: Bitboard,
        pressed: Bitboard,
    },
    /// A game held on a board nothing else explained was read on from ply `from` as `moves`:
    /// the first of them put its piece on `stood`, which the board never reported, and the
    /// same player's next move took it on (a piece put down for less than a scan). The
    /// press that was judged a completed illegal move there completed the first move.
    StoodUnseen {
        from: usize,
        moves: Vec<Move>,
        stood: Square,
    },
    /// The reconstructed `moves` began in another order than their pieces were lifted:
    /// a later move's piece left its square `ms` before an earlier move's, more than a scan
    /// reorders. Only a lost update (a lift never reported) makes that order possible, and
    /// another order may be the real one (captures on one square).
    LiftedOutOfOrder { moves: Vec<Move>, ms: Millis },
    /// On a board that senses only occupancy, the reconstructed `moves` include `capture`,
    /// whose square the board never showed change after the capturing piece was lifted:
    /// that piece may have been still in the hand, or put on a square not yet reported.
    CaptureNotShown { moves: Vec<Move>, capture: Move },
    /// The opponent's `reply` was complete `ms` after the piece it answered was first seen
    /// arriving, and that piece then went on: a piece knocked by the moving hand may have
    /// been read as the reply.
    QuickReply { reply: Move, ms: Millis },
    /// A pawn's single step `step` was taken on its square after standing there `stood_ms`;
    /// it may have gone on with `double` and been taken en passant unseen.
    Unsampled {
        step: Move,
        double: Move,
        stood_ms: Millis,
    },
    /// The piece of the move `first` was carried on to another square `stood_ms` after it
    /// arrived: a slide seen late, or a released piece moved again (4.7); or `first` was the
    /// rook of a castling made rook first (4.4.2).
    MovedOn { first: Move, stood_ms: Millis },
    /// The piece of the pressed move `first` was moved on along the same line by `next`,
    /// begun `ms` after the opponent's reply was made, quicker than a hand answers: one move
    /// seen late (its press made before the last square was reported) or a premove.
    GoneOnAtOnce { first: Move, next: Move, ms: Millis },
    /// Moves already made final (`withdrawn`, from ply `from`) were read again as `moves`:
    /// the board's later reports explain it only that way (a slow scan reported a slide's
    /// end after the press, an update was lost).
    Reread {
        from: usize,
        withdrawn: Vec<Move>,
        moves: Vec<Move>,
    },
    /// A capture recorded among several the board could not tell apart ([`Doubt::CaptureUnseen`])
    /// and the moves since (`withdrawn`, from ply `from`) were read again as `moves`, which
    /// begin with another of those captures: the board's later reports fit it, and `also`
    /// the rest of the captures that fit them as well (the first of `moves` is the likeliest).
    CaptureReread {
        from: usize,
        withdrawn: Vec<Move>,
        moves: Vec<Move>,
        also: Vec<Move>,
    },
}

impl Doubt {
    /// True for the doubts of a displaced piece read as moves (overlapping moves, an arrival
    /// or a stay never shown): the moves read with it stay open together until the next move
    /// is made, and no press makes them final.
    pub(super) fn keeps_moves_open(&self) -> bool {
        matches!(
            self,
            Doubt::Overlapping { .. } | Doubt::UnseenArrival { .. } | Doubt::StoodUnseen { .. }
        )
    }

    /// [`Doubt::CaptureUnseen`] for `capture`, the one capture that leaves the board.
    pub(super) fn capture_unseen(capture: Move) -> Doubt {
        Doubt::CaptureUnseen {
            capture,
            others: Vec::new(),
        }
    }
}

/// Every square any of `moves` involves.
pub(super) fn squares_of_all<'a>(moves: impl IntoIterator<Item = &'a Move>) -> Bitboard {
    moves
        .into_iter()
        .fold(Bitboard::EMPTY, |squares, m| squares | squares_of(*m))
}

/// The names of `squares`, in the board's order (a1 first).
pub(super) fn square_names(squares: Bitboard) -> Vec<String> {
    squares.into_iter().map(|s| s.to_string()).collect()
}
