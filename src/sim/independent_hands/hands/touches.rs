//! Touches that are not the move: adjustments, hesitations (4.3), knocked-over pieces.

use shakmaty::{Chess, Color, Move, Position, Square, attacks};

use super::{Hands, Knock, Shape, What};
use crate::board::Millis;

impl Hands<'_> {
    // ----- touches -----

    /// An adjustment (j'adoube) of a piece not involved in the move: by `who` on `who`'s own
    /// piece (mostly) or the other side's. Returns when the hand is done.
    pub(super) fn adjust(
        &mut self,
        t: Millis,
        who: Color,
        shape: &Shape,
        off_turn: bool,
        how: &mut Vec<String>,
    ) -> Millis {
        let involved = shape.squares();
        let own = self.chance(0.75);
        let color = if own { who } else { !who };
        let candidates: Vec<Square> = self
            .board
            .iter()
            .filter(|(sq, p)| p.color == color && !involved.contains(sq))
            .map(|(sq, _)| sq)
            .collect();
        let Some((sq, piece)) = self
            .pick(&candidates)
            .and_then(|sq| Some((sq, self.board.piece_at(sq)?)))
        else {
            return t;
        };
        let t0 = t + self.reach();
        let whose = if own { "own" } else { "opponent's" };
        let when = if off_turn {
            " in the opponent's time"
        } else {
            ""
        };
        let back = if self.chance(0.4) {
            // Twisted in place: the sensor loses it for a moment.
            let back = t0 + self.ms((20, 80));
            self.emit(t0, What::Square(sq, None), true);
            self.emit(back, What::Square(sq, Some(piece)), true);
            how.push(format!(
                "{who:?} adjusted {whose} {sq} without lifting{when}"
            ));
            back
        } else {
            self.lift(t0, sq);
            let back = t0 + self.ms(self.p.adjust_ms);
            self.place(back, sq, piece, false);
            how.push(format!("{who:?} adjusted {whose} {sq} (lifted){when}"));
            back
        };
        let done = back + self.ms((100, 300));
        self.irregular(
            t0,
            "4.2.1",
            false,
            format!("{who:?} adjusted the {whose} piece on {sq}{when}"),
            vec![sq],
        );
        done
    }

    /// Lifts an own piece that could move, holds it, puts it back: then another piece moves
    /// (4.3.1 touch-move).
    pub(super) fn hesitate(
        &mut self,
        t: Millis,
        pos: &Chess,
        shape: &Shape,
        how: &mut Vec<String>,
    ) -> Millis {
        let involved = shape.squares();
        let mut movable: Vec<Square> = pos
            .legal_moves()
            .iter()
            .filter_map(|m| match *m {
                Move::Castle { king, .. } => Some(king),
                _ => m.from(),
            })
            .filter(|sq| !involved.contains(sq))
            .collect();
        movable.sort();
        movable.dedup();
        let Some(sq) = self.pick(&movable) else {
            return t;
        };
        let Some(piece) = self.board.piece_at(sq) else {
            return t;
        };
        let t0 = t + self.reach();
        self.lift(t0, sq);
        let back = t0 + self.ms(self.p.hold_ms);
        self.place(back, sq, piece, false);
        how.push(format!(
            "hesitated: lifted {sq} ({} ms), put it back",
            back - t0
        ));
        let article = if shape.victim_square().is_some() {
            "4.3.3"
        } else {
            "4.3.1"
        };
        self.irregular(
            t0,
            article,
            true,
            format!(
                "lifted the own {:?} on {sq}, which could move, put it back, then moved from {}",
                piece.role,
                shape.origin()
            ),
            vec![sq, shape.origin()],
        );
        back + self.ms((150, 500))
    }

    /// Lifts an opponent's piece that could be captured, puts it back, then makes a move that
    /// does not capture it (4.3.2).
    pub(super) fn touch_opponent(
        &mut self,
        t: Millis,
        pos: &Chess,
        shape: &Shape,
        how: &mut Vec<String>,
    ) -> Millis {
        let involved = shape.squares();
        let mut targets: Vec<Square> = pos
            .legal_moves()
            .iter()
            .filter(|m| m.is_capture() && !matches!(m, Move::EnPassant { .. }))
            .map(|m| m.to())
            .filter(|sq| !involved.contains(sq))
            .collect();
        targets.sort();
        targets.dedup();
        let Some(sq) = self.pick(&targets) else {
            return t;
        };
        let Some(piece) = self.board.piece_at(sq) else {
            return t;
        };
        let t0 = t + self.reach();
        self.lift(t0, sq);
        let back = t0 + self.ms((200, 900));
        self.place(back, sq, piece, false);
        how.push(format!("lifted the opponent's {sq}, put it back"));
        self.irregular(
            t0,
            "4.3.2",
            true,
            format!(
                "lifted the opponent's {:?} on {sq}, which could be captured, then moved from {} without capturing it",
                piece.role,
                shape.origin()
            ),
            vec![sq, shape.origin()],
        );
        back + self.ms((150, 500))
    }

    // ----- knocks -----

    pub(super) fn neighbours(sq: Square) -> Vec<Square> {
        attacks::king_attacks(sq).into_iter().collect()
    }

    /// Knocks over a piece next to `near`; it may fall on an empty neighbour.
    fn knock(&mut self, t: Millis, near: Square, shape: &Shape) -> Option<Knock> {
        let involved = shape.squares();
        let candidates: Vec<Square> = Self::neighbours(near)
            .into_iter()
            .filter(|sq| !involved.contains(sq) && self.board.piece_at(*sq).is_some())
            .collect();
        let square = self.pick(&candidates)?;
        let piece = self.board.remove_piece_at(square)?;
        self.emit(t, What::Square(square, None), false);
        let mut fell_on = None;
        if self.chance(self.p.fall_p) {
            let empty: Vec<Square> = Self::neighbours(square)
                .into_iter()
                .filter(|sq| !involved.contains(sq) && self.board.piece_at(*sq).is_none())
                .collect();
            if let Some(m) = self.pick(&empty) {
                let at = t + self.ms((30, 150));
                self.board.set_piece_at(m, piece);
                self.emit(at, What::Square(m, Some(piece)), false);
                fell_on = Some(m);
            }
        }
        Some(Knock {
            square,
            piece,
            fell_on,
            t,
        })
    }

    /// Sets a knocked piece back by hand, starting at `t`; returns when it stands.
    pub(super) fn restore(&mut self, k: Knock, t: Millis) -> Millis {
        let mut at = t;
        match k.fell_on {
            Some(m) => {
                self.lift(at, m);
                at += self.ms((150, 350));
            }
            None => {
                // Picked up from where it lies, off the squares.
                self.take_spare(at, k.piece);
                at += self.ms((50, 150));
            }
        }
        self.place(at, k.square, k.piece, false);
        at
    }

    /// Notes a knock after the release. Not one a recorder must flag: a piece off its square
    /// in the opponent's time looks to a sensor board exactly like the opponent lifting it
    /// (his own piece, or the first of a capture), and it is back before anything else
    /// happens.
    pub(super) fn note_knock(&mut self, k: Knock, after_press: bool, how: &mut Vec<String>) {
        let fell = k
            .fell_on
            .map(|m| format!(", fell on {m}"))
            .unwrap_or_default();
        let when = if after_press {
            "after the press"
        } else {
            "before the press"
        };
        how.push(format!(
            "knocked over {}{fell} after the release, restored {when}",
            k.square
        ));
        let mut squares = vec![k.square];
        squares.extend(k.fell_on);
        self.irregular(
            k.t,
            "7.4.1",
            false,
            format!(
                "knocked over the {:?} on {}{fell} while withdrawing the hand; restored {when}",
                k.piece.role, k.square
            ),
            squares,
        );
    }

    /// Knocks a neighbour while reaching for the piece, and sets it back at once.
    pub(super) fn knock_before(
        &mut self,
        t: Millis,
        shape: &Shape,
        how: &mut Vec<String>,
    ) -> Millis {
        let t0 = t + self.reach();
        let Some(k) = self.knock(t0, shape.origin(), shape) else {
            return t;
        };
        let at = t0 + self.ms((300, 900));
        let done = self.restore(k, at);
        let fell = k
            .fell_on
            .map(|m| format!(", fell on {m}"))
            .unwrap_or_default();
        how.push(format!(
            "knocked over {}{fell} while reaching, restored it first",
            k.square
        ));
        let mut squares = vec![k.square];
        squares.extend(k.fell_on);
        self.irregular(
            t0,
            "7.4.1",
            false,
            format!(
                "knocked over the {:?} on {}{fell} while reaching for the piece; restored before moving",
                k.piece.role, k.square
            ),
            squares,
        );
        done + self.ms((150, 400))
    }

    /// Knocks a neighbour of the landing square as the hand withdraws.
    pub(super) fn knock_after(&mut self, release: Millis, shape: &Shape) -> Option<Knock> {
        let t0 = release + self.ms((20, 120));
        self.knock(t0, shape.landing(), shape)
    }
}
