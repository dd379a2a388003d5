//! The touches the board saw: the pieces lifted since the oldest move still open, the last
//! placement, and the pieces a board that names them saw put down.

use shakmaty::{Color, Piece, Square};

use crate::act::touch::Lift;
use crate::board::Millis;

/// How many placements are kept at most, however long the open moves took.
const PLACEMENTS_KEPT: usize = 256;

/// The lifts and placements the board reported, as far back as a move may still be read
/// again. Changed only through its methods: by each lift and placement as it is read
/// (`hands.rs`; a piece a board names, `readers.rs`), and when moves become final
/// (`settling.rs`).
#[derive(Debug, Clone)]
pub(super) struct Touches {
    /// Pieces lifted since the oldest move still open: the touches judged under 4.3 and 4.4.
    lifts: Vec<Lift>,
    /// The last placement and its time, for 7.5.4.
    last_place: Option<(Square, Millis)>,
    /// The pieces the board named put on a square (or a dump found there) since the
    /// oldest move still open to a re-reading, with the time: what a reconstruction's
    /// captured arrivals and promotions must have been seen as.
    placements: Vec<(Square, Piece, Millis)>,
}

impl Touches {
    /// No touch yet.
    pub(super) fn new() -> Touches {
        Touches {
            lifts: Vec::new(),
            last_place: None,
            placements: Vec::new(),
        }
    }

    /// The pieces lifted since the oldest move still open, oldest first.
    pub(super) fn lifts(&self) -> &[Lift] {
        &self.lifts
    }

    /// A piece was lifted.
    pub(super) fn lifted(&mut self, lift: Lift) {
        self.lifts.push(lift);
    }

    /// The last placement and its time.
    pub(super) fn last_place(&self) -> Option<(Square, Millis)> {
        self.last_place
    }

    /// A piece was put on `sq` at `t`.
    pub(super) fn placed(&mut self, sq: Square, t: Millis) {
        self.last_place = Some((sq, t));
    }

    /// The pieces the board named put down, oldest first.
    pub(super) fn placements(&self) -> &[(Square, Piece, Millis)] {
        &self.placements
    }

    /// The board named `piece` put on `sq` at `t`; the oldest is forgotten beyond
    /// [`PLACEMENTS_KEPT`].
    pub(super) fn named(&mut self, sq: Square, piece: Piece, t: Millis) {
        if self.placements.len() == PLACEMENTS_KEPT {
            self.placements.remove(0);
        }
        self.placements.push((sq, piece, t));
    }

    /// True when the board named `piece` put down on `sq` at or after `since`.
    pub(super) fn named_on(&self, sq: Square, piece: Piece, since: Millis) -> bool {
        self.placements
            .iter()
            .any(|&(at, p, t)| at == sq && p == piece && t >= since)
    }

    /// When `color` first lifted a piece from `sq` at or after `since`, if seen.
    pub(super) fn first_lift(&self, sq: Square, color: Color, since: Millis) -> Option<Millis> {
        self.lifts
            .iter()
            .filter(|l| l.t_ms >= since && l.sq == sq && l.piece.color == color)
            .map(|l| l.t_ms)
            .min()
    }

    /// Forgets the lifts made before `t`: no move they may belong to can be read again.
    pub(super) fn forget_lifts_before(&mut self, t: Millis) {
        self.lifts.retain(|l| l.t_ms >= t);
    }

    /// Forgets the placements made before `t`.
    pub(super) fn forget_placements_before(&mut self, t: Millis) {
        self.placements.retain(|&(_, _, at)| at >= t);
    }
}
