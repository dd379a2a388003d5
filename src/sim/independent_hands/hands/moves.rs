//! The moves themselves: quiet moves, captures, en passant, castling and promotion, each
//! made in one of several ways real hands make them.

use shakmaty::{Piece, Role, Square};

use super::{Hands, Made, Shape};
use crate::board::Millis;

impl Hands<'_> {
    // ----- moves -----

    pub(super) fn make(&mut self, t: Millis, shape: &Shape, how: &mut Vec<String>) -> Made {
        match *shape {
            Shape::Quiet { from, to, piece } => {
                let t0 = t + self.reach();
                self.lift(t0, from);
                let at = self.carry(t0, from, to, piece, how);
                let last = self.place(at, to, piece, true);
                Made {
                    release: at,
                    last,
                    hand_free: at + 40,
                }
            }
            Shape::Capture {
                from,
                to,
                piece,
                victim,
            } => self.capture(t, from, to, piece, victim, how),
            Shape::EnPassant {
                from,
                to,
                victim_sq,
                piece,
                victim,
            } => self.en_passant(t, from, to, victim_sq, piece, victim, how),
            Shape::Castle {
                king_from,
                king_to,
                rook_from,
                rook_to,
                king,
                rook,
            } => self.castle(t, king_from, king_to, rook_from, rook_to, king, rook, how),
            Shape::Promotion {
                from,
                to,
                pawn,
                new,
                victim,
            } => self.promote(t, from, to, pawn, new, victim, how),
        }
    }

    fn capture(
        &mut self,
        t: Millis,
        from: Square,
        to: Square,
        piece: Piece,
        victim: Piece,
        how: &mut Vec<String>,
    ) -> Made {
        let t0 = t + self.reach();
        match self.weighted(self.p.capture) {
            0 => {
                how.push("capture: victim off first".into());
                self.victim_off_first(t0, to, victim, from, to, piece, Some(how))
            }
            1 => {
                how.push("capture: capturer lifted, then the victim".into());
                self.victim_taken_in_hand(t0, to, victim, from, to, piece)
            }
            _ => {
                how.push("capture: capturer put on top of the victim".into());
                self.lift(t0, from);
                let at = self.carry(t0, from, to, piece, how);
                let last = self.place_on_top(at, to, piece, true);
                let gone = at + self.ms(self.p.aside_ms) / 2;
                self.discard(gone, victim);
                Made {
                    release: at,
                    last,
                    hand_free: gone,
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn en_passant(
        &mut self,
        t: Millis,
        from: Square,
        to: Square,
        victim_sq: Square,
        piece: Piece,
        victim: Piece,
        how: &mut Vec<String>,
    ) -> Made {
        let t0 = t + self.reach();
        match self.weighted(self.p.en_passant) {
            0 => {
                how.push("en passant: victim off first".into());
                self.victim_off_first(t0, victim_sq, victim, from, to, piece, None)
            }
            1 => {
                how.push("en passant: pawn lifted, victim taken, pawn placed".into());
                self.victim_taken_in_hand(t0, victim_sq, victim, from, to, piece)
            }
            _ => {
                how.push("en passant: pawn placed, victim taken after".into());
                self.lift(t0, from);
                let at = t0 + self.travel(from, to);
                self.place(at, to, piece, false);
                let t2 = at + self.ms(self.p.grip_ms) + self.reach();
                let last = self.lift(t2, victim_sq).map(|_| self.out.len() - 1);
                self.discard(t2, victim);
                Made {
                    release: t2,
                    last: last.unwrap_or(self.out.len() - 1),
                    hand_free: t2 + 60,
                }
            }
        }
    }

    /// A capture with the victim on `victim_sq` taken off the board first, then the capturer
    /// moved. Given `slide` (where the move's description goes), the capturer may slide over
    /// the squares in between; without it, it goes straight.
    #[allow(clippy::too_many_arguments)]
    fn victim_off_first(
        &mut self,
        t0: Millis,
        victim_sq: Square,
        victim: Piece,
        from: Square,
        to: Square,
        piece: Piece,
        slide: Option<&mut Vec<String>>,
    ) -> Made {
        self.lift(t0, victim_sq);
        let t1 = t0 + self.ms(self.p.aside_ms);
        self.discard(t1, victim);
        let t2 = t1 + self.reach();
        self.lift(t2, from);
        let at = match slide {
            Some(how) => self.carry(t2, from, to, piece, how),
            None => t2 + self.travel(from, to),
        };
        let last = self.place(at, to, piece, true);
        Made {
            release: at,
            last,
            hand_free: at + 40,
        }
    }

    /// A capture with the capturer lifted first, the victim on `victim_sq` picked up by the
    /// same hand, then the capturer put on `to`.
    #[allow(clippy::too_many_arguments)]
    fn victim_taken_in_hand(
        &mut self,
        t0: Millis,
        victim_sq: Square,
        victim: Piece,
        from: Square,
        to: Square,
        piece: Piece,
    ) -> Made {
        self.lift(t0, from);
        let t1 = t0 + self.travel(from, victim_sq);
        self.lift(t1, victim_sq);
        let at = t1 + self.ms(self.p.grip_ms);
        let last = self.place(at, to, piece, true);
        self.discard(at, victim);
        Made {
            release: at,
            last,
            hand_free: at + 60,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn castle(
        &mut self,
        t: Millis,
        king_from: Square,
        king_to: Square,
        rook_from: Square,
        rook_to: Square,
        king: Piece,
        rook: Piece,
        how: &mut Vec<String>,
    ) -> Made {
        let t0 = t + self.reach();
        let king_moves = king_from != king_to;
        let rook_moves = rook_from != rook_to;
        let mut mode = self.weighted(self.p.castle);
        // King first needs the king's square free of the rook; rook first the rook's free of
        // the king.
        if (mode == 0 && (king_to == rook_from || !king_moves))
            || (mode == 2 && (rook_to == king_from || !rook_moves || !king_moves))
        {
            mode = 1;
        }
        match mode {
            0 => {
                how.push("castling: king first".into());
                self.lift(t0, king_from);
                let at = if !self.steady
                    && self.board.piece_at(king_to).is_none()
                    && rook_from != king_to
                    && self.can_slide(king_from, king_to, Role::King)
                    && self.chance(self.p.slide_p)
                {
                    how.push(format!("king slid {king_from}-{king_to}"));
                    self.slide(t0, king_from, king_to, king)
                } else {
                    t0 + self.travel(king_from, king_to)
                };
                let mut last = self.place(at, king_to, king, !rook_moves);
                let mut release = at;
                if rook_moves {
                    let t1 = at + self.reach();
                    self.lift(t1, rook_from);
                    let at2 = t1 + self.travel(rook_from, rook_to);
                    last = self.place(at2, rook_to, rook, true);
                    release = at2;
                }
                Made {
                    release,
                    last,
                    hand_free: release + 40,
                }
            }
            2 => {
                how.push("castling: rook first".into());
                self.lift(t0, rook_from);
                let at = t0 + self.travel(rook_from, rook_to);
                self.place(at, rook_to, rook, false);
                let t1 = at + self.reach();
                self.lift(t1, king_from);
                let at2 = t1 + self.travel(king_from, king_to);
                let last = self.place(at2, king_to, king, true);
                self.irregular(
                    t0,
                    "4.4.2",
                    true,
                    format!("castled rook first: {rook_from} lifted before {king_from}"),
                    vec![rook_from, king_from],
                );
                Made {
                    release: at2,
                    last,
                    hand_free: at2 + 40,
                }
            }
            _ => {
                how.push("castling: king lifted, rook moved, king placed".into());
                self.lift(t0, king_from);
                let t1 = t0 + self.travel(king_from, rook_from);
                self.lift(t1, rook_from);
                let at = t1 + self.travel(rook_from, rook_to);
                self.place(at, rook_to, rook, false);
                let at2 = at + self.travel(rook_to, king_to).min(400);
                let last = self.place(at2, king_to, king, true);
                Made {
                    release: at2,
                    last,
                    hand_free: at2 + 40,
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn promote(
        &mut self,
        t: Millis,
        from: Square,
        to: Square,
        pawn: Piece,
        new: Piece,
        victim: Option<Piece>,
        how: &mut Vec<String>,
    ) -> Made {
        let mut t0 = t + self.reach();
        // A victim goes off first, or the (new or pawn) piece goes on top of it.
        let victim_first = victim.is_some() && self.chance(0.5);
        if let (true, Some(v)) = (victim_first, victim) {
            how.push("promotion capture: victim off first".into());
            self.lift(t0, to);
            t0 += self.ms(self.p.aside_ms);
            self.discard(t0, v);
            t0 += self.reach();
        }
        let on_top = victim.is_some() && !victim_first;
        if on_top {
            how.push("promotion capture: put on top of the victim".into());
        }
        let put = |h: &mut Self, at: Millis, piece: Piece, last: bool| -> usize {
            if h.board.piece_at(to).is_some() {
                h.place_on_top(at, to, piece, last)
            } else {
                h.place(at, to, piece, last)
            }
        };
        let drop_victim = |h: &mut Self, at: Millis| {
            if let (true, Some(v)) = (on_top, victim) {
                h.discard(at, v);
            }
        };
        match self.weighted(self.p.promotion) {
            0 => {
                how.push(format!(
                    "promotion: pawn off, then the {:?} placed",
                    new.role
                ));
                self.lift(t0, from);
                let t1 = t0 + self.ms(self.p.aside_ms);
                self.discard(t1, pawn);
                self.take_spare(t1, new);
                let at = t1 + self.ms(self.p.spare_ms);
                let last = put(self, at, new, true);
                drop_victim(self, at);
                Made {
                    release: at,
                    last,
                    hand_free: at + 60,
                }
            }
            1 => {
                how.push(format!(
                    "promotion: the {:?} placed first, then the pawn taken off",
                    new.role
                ));
                self.take_spare(t0, new);
                let at = t0 + self.ms(self.p.spare_ms);
                put(self, at, new, false);
                drop_victim(self, at);
                let t1 = at + self.travel(to, from).min(500);
                let last = self.out.len();
                self.lift(t1, from);
                self.discard(t1, pawn);
                Made {
                    release: t1,
                    last,
                    hand_free: t1 + 60,
                }
            }
            2 => {
                how.push(format!(
                    "promotion: pawn held, the {:?} placed, pawn dropped",
                    new.role
                ));
                self.lift(t0, from);
                let t1 = t0 + self.ms(self.p.spare_ms);
                self.take_spare(t1, new);
                let at = t1 + self.travel(from, to);
                let last = put(self, at, new, true);
                drop_victim(self, at);
                self.discard(at, pawn);
                Made {
                    release: at,
                    last,
                    hand_free: at + 60,
                }
            }
            _ => {
                how.push(format!(
                    "promotion: pawn put on {to}, swapped for the {:?}",
                    new.role
                ));
                self.lift(t0, from);
                let at = t0 + self.travel(from, to);
                put(self, at, pawn, false);
                let mut t1 = at;
                if on_top {
                    t1 += self.ms(self.p.aside_ms) / 2;
                    drop_victim(self, t1);
                }
                t1 += self.ms(self.p.spare_ms).max(150);
                self.take_spare(t1, new);
                self.lift(t1, to);
                let at2 = t1 + self.ms(self.p.grip_ms);
                let last = self.place(at2, to, new, true);
                self.discard(at2, pawn);
                Made {
                    release: at2,
                    last,
                    hand_free: at2 + 60,
                }
            }
        }
    }
}
