//! When the board reported each square: the physical board's reports, as the readings date
//! what the hands did.

use shakmaty::{Bitboard, Square};

use crate::board::Millis;

/// When the board last reported each square, when it reported it before that, and which
/// squares a board dump found changed at a time nobody knows. Changed only through its
/// methods: by each observation as it is read (`input.rs`, [`SquareReports::seen`],
/// [`SquareReports::changed_undated`]), and, when a lost update is tried, set back to what
/// it was (`lost_updates.rs`).
#[derive(Debug, Clone)]
pub(super) struct SquareReports {
    /// When the board last reported each square.
    last: [Option<Millis>; 64],
    /// When the board reported each square before that.
    before: [Option<Millis>; 64],
    /// Squares whose latest report is a board dump that found them changed: when they
    /// changed is unknown.
    undated: Bitboard,
}

impl SquareReports {
    /// No square reported yet.
    pub(super) fn new() -> SquareReports {
        SquareReports {
            last: [None; 64],
            before: [None; 64],
            undated: Bitboard::EMPTY,
        }
    }

    /// The board reported `sq` at `t`.
    pub(super) fn seen(&mut self, sq: Square, t: Millis) {
        self.before[sq as usize] = self.last[sq as usize];
        self.last[sq as usize] = Some(t);
        self.undated.discard(sq);
    }

    /// A board dump found `squares` changed, just now reported ([`SquareReports::seen`]):
    /// when they changed is unknown.
    pub(super) fn changed_undated(&mut self, squares: Bitboard) {
        self.undated |= squares;
    }

    /// When the board last reported `sq`.
    pub(super) fn last(&self, sq: Square) -> Option<Millis> {
        self.last[sq as usize]
    }

    /// When the board reported `sq` before its last report.
    pub(super) fn before(&self, sq: Square) -> Option<Millis> {
        self.before[sq as usize]
    }

    /// The squares whose latest report is a dump's, undated.
    pub(super) fn undated(&self) -> Bitboard {
        self.undated
    }

    /// When the board last reported each square, indexed by square.
    pub(super) fn last_times(&self) -> &[Option<Millis>; 64] {
        &self.last
    }

    /// When the board reported each square before its last report, indexed by square.
    pub(super) fn before_times(&self) -> &[Option<Millis>; 64] {
        &self.before
    }

    /// The latest report of any square.
    pub(super) fn latest(&self) -> Option<Millis> {
        self.last.iter().flatten().max().copied()
    }
}
