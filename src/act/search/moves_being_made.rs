//! A move still being made, or made with something left undone: what the board shows
//! while a hand is on the way, or at a press that came too soon.

use shakmaty::{Bitboard, Chess, Move, Piece, Position, Role, Square};

use super::{Sensed, only, squares_of, touches};
use crate::act::physical::board_diff;

/// True when `a` and `b` differ as a board that names pieces (or only sees occupancy) tells
/// them apart.
fn board_diff_at(a: Option<Piece>, b: Option<Piece>, identifies: bool) -> bool {
    if identifies {
        a != b
    } else {
        a.is_some() != b.is_some()
    }
}

impl Sensed<'_> {
    /// True when the sensed board could be a move from `pos` still being made: every
    /// differing square is one the move changes and holds either nothing yet or what the
    /// move puts there (a pawn on the promotion square counts as an unfinished promotion).
    pub fn in_progress(&self, pos: &Chess) -> bool {
        let d = self.diff(pos.board());
        if d.is_empty() {
            return true;
        }
        if d.count() > 4 {
            return false;
        }
        pos.legal_moves()
            .into_iter()
            .any(|m| self.partly_made(pos, m, d))
    }

    /// True when the sensed board could be one move from `pos` made (and perhaps still
    /// sliding) while the next player's move is being made: a fast reply begun before the
    /// previous move's last board update.
    pub fn in_progress_after_one(&self, pos: &Chess) -> bool {
        let d = self.diff(pos.board());
        if d.count() > 9 {
            return false;
        }
        pos.legal_moves().into_iter().any(|m| {
            touches(m, d) && {
                let mut after = pos.clone();
                after.play_unchecked(m);
                // Strictly partial: a finished second move is a sequence, not a move in
                // progress.
                self.diff(after.board()).any()
                    && self.in_progress(&after)
                    && self.single_moves(&after).is_empty()
            }
        })
    }

    fn partly_made(&self, pos: &Chess, m: Move, d: Bitboard) -> bool {
        let mut after = pos.clone();
        after.play_unchecked(m);
        let changed = board_diff(pos.board(), after.board(), true) | squares_of(m);
        let extra = d & !changed;
        if extra.any() && !self.on_its_way(pos, m, extra) {
            return false;
        }
        (d & changed)
            .into_iter()
            .all(|sq| match self.board.piece_at(sq) {
                None => true,
                Some(_) if !self.identifies => after.board().piece_at(sq).is_some(),
                Some(p) => {
                    after.board().piece_at(sq) == Some(p)
                        || (m.is_promotion() && sq == m.to() && p == pos.turn().pawn())
                }
            })
    }

    /// True when `extra` is one empty square on which the lifted piece of `m` stands for a
    /// moment: a piece slid across the board, or a capturer on its way to its victim. A
    /// board that names pieces may report it there before it reports it leaving the squares
    /// behind (its scan order): the square of departure, and squares passed on the way, may
    /// still show the piece.
    fn on_its_way(&self, pos: &Chess, m: Move, extra: Bitboard) -> bool {
        let (Move::Normal { from, to, .. } | Move::EnPassant { from, to }) = m else {
            return false;
        };
        let path = shakmaty::attacks::between(from, to);
        let mover = pos.board().piece_at(from);
        if !extra.is_subset(path) || (extra & pos.board().occupied()).any() {
            return false;
        }
        if self.identifies {
            let shows_mover = |sq: Square| self.board.piece_at(sq) == mover;
            extra.any() && extra.into_iter().all(shows_mover)
        } else {
            extra.count() == 1 && self.board.piece_at(from).is_none()
        }
    }

    /// The one legal move from `pos` whose every square the sensed board shows as the move
    /// left it, the board being otherwise that move's position with one or two pieces off
    /// their squares (knocked off or over by the hand that made the move and not yet set
    /// back), lying off the board or on empty squares, and the squares that differ. `None`
    /// when no move, or more than one, fits.
    pub fn move_with_pieces_displaced(&self, pos: &Chess) -> Option<(Move, Bitboard)> {
        let fits = pos.legal_moves().into_iter().filter_map(|m| {
            let mut after = pos.clone();
            after.play_unchecked(m);
            let d = self.diff(after.board());
            if !(d & squares_of(m)).is_empty() {
                return None;
            }
            let mut missing: Vec<(Square, Piece)> = Vec::new();
            let mut landed: Vec<(Square, Piece)> = Vec::new();
            for sq in d {
                match (after.board().piece_at(sq), self.board.piece_at(sq)) {
                    (Some(p), None) => missing.push((sq, p)),
                    (None, Some(p)) => landed.push((sq, p)),
                    _ => return None,
                }
            }
            if !(1..=2).contains(&missing.len()) || landed.len() > missing.len() {
                return None;
            }
            // A piece knocked over falls next to its square.
            for (sq, p) in landed {
                let i = missing.iter().position(|&(from, q)| {
                    (q == p || !self.identifies) && from.distance(sq) == 1
                })?;
                missing.swap_remove(i);
            }
            Some((m, d))
        });
        only(fits)
    }

    /// The legal moves from `pos` the sensed board shows made but for their arrival: the
    /// piece is off the square it left, and the board has not shown it on any square it
    /// may have reached (a report lost, or not sent yet). With the move's arriving pieces
    /// put where it leaves them, the board is that move's position, or the next player's
    /// move begun or made from there. A board that shows a piece where no legal move puts
    /// it never fits: only a piece missing does. On a board that cannot name pieces, a
    /// piece put down since the last recorded move is evidence of where it went, and
    /// nothing fits.
    pub fn arrival_unseen(&self, pos: &Chess) -> Vec<Move> {
        let d = self.diff(pos.board());
        if d.is_empty() || d.count() > 9 || (!self.identifies && self.placed.any()) {
            return Vec::new();
        }
        pos.legal_moves()
            .into_iter()
            .filter(|&m| touches(m, d) && self.shows_all_but_arrival(pos, m))
            .collect()
    }

    /// The squares whose piece, were it gone, would leave the board a legal move from `pos`
    /// (the next player's move begun or made after it, or not): a piece the board shows one
    /// too many of, the report of its lift lost. Only pieces of a kind the board shows more
    /// of than `pos` has (every square, on a board that cannot name pieces, when it shows
    /// more pieces than `pos`).
    pub fn lift_unseen(&self, pos: &Chess) -> Bitboard {
        let d = self.diff(pos.board());
        if d.is_empty() || d.count() > 9 {
            return Bitboard::EMPTY;
        }
        let surplus = |sq: Square| match self.board.piece_at(sq) {
            None => false,
            Some(_) if !self.identifies => {
                self.board.occupied().count() > pos.board().occupied().count()
            }
            Some(p) => self.board.by_piece(p).count() > pos.board().by_piece(p).count(),
        };
        self.board
            .occupied()
            .into_iter()
            .filter(|&sq| surplus(sq))
            .filter(|&sq| {
                let mut board = self.board.clone();
                board.discard_piece_at(sq);
                let without = Sensed {
                    board: &board,
                    identifies: self.identifies,
                    placed: self.placed,
                };
                let d = without.diff(pos.board());
                pos.legal_moves().into_iter().any(|m| {
                    if !touches(m, d) {
                        return false;
                    }
                    let mut after = pos.clone();
                    after.play_unchecked(m);
                    without.shows(&after, m)
                        || (without.diff(after.board()).any()
                            && (without.in_progress(&after)
                                || !without.single_moves(&after).is_empty()))
                })
            })
            .collect()
    }

    /// On a board that senses only occupancy, the one legal capture from `pos` whose
    /// position the sensed board shows: the capturer is off its square, and its victim's
    /// square, never seen empty, shows the same whether the capturer replaced the victim or
    /// is still in the hand. `None` on a board that names pieces, and when no capture, or
    /// more than one, fits.
    pub fn capture_landed_unseen(&self, pos: &Chess) -> Option<Move> {
        only(self.captures_landed_unseen(pos).into_iter())
    }

    /// On a board that senses only occupancy, every plain capture from `pos` after which the
    /// board shows exactly what it shows: the capturer's square empty, the victim's as full
    /// as before.
    pub fn captures_landed_unseen(&self, pos: &Chess) -> Vec<Move> {
        let d = self.diff(pos.board());
        if self.identifies || d.is_empty() {
            return Vec::new();
        }
        pos.legal_moves()
            .into_iter()
            .filter(|&m| {
                let plain_capture = matches!(
                    m,
                    Move::Normal {
                        capture: Some(_),
                        promotion: None,
                        ..
                    }
                );
                plain_capture && {
                    let mut after = pos.clone();
                    after.play_unchecked(m);
                    self.diff(after.board()).is_empty()
                }
            })
            .collect()
    }

    /// On a board that senses only occupancy, the plain captures from `pos` whose landing
    /// the board did not show, each with what the board shows of the reply begun since:
    /// the squares that differ from the position after the capture (none: use
    /// [`Sensed::capture_landed_unseen`]), all of them squares the reply may have changed
    /// (its pieces lifted, or one reply made), with that reply when one explains them.
    pub fn captures_landed_unseen_before_reply(
        &self,
        pos: &Chess,
    ) -> Vec<(Move, Bitboard, Option<Move>)> {
        if self.identifies {
            return Vec::new();
        }
        let mut found = Vec::new();
        for m in pos.legal_moves() {
            let Move::Normal {
                capture: Some(_),
                promotion: None,
                ..
            } = m
            else {
                continue;
            };
            let mut after = pos.clone();
            after.play_unchecked(m);
            let d = self.diff(after.board());
            if d.is_empty() || d.contains(m.to()) {
                continue;
            }
            if let Some((reply, _)) = only(self.single_moves(&after).into_iter()) {
                found.push((m, d, Some(reply)));
            } else if d.is_subset(after.board().by_color(after.turn()) & !self.board.occupied()) {
                found.push((m, d, None));
            }
        }
        found
    }

    fn shows_all_but_arrival(&self, pos: &Chess, m: Move) -> bool {
        let mut after = pos.clone();
        after.play_unchecked(m);
        let arrived = after.board().by_color(pos.turn()) & !pos.board().by_color(pos.turn());
        let mut board = self.board.clone();
        let mut unseen = false;
        for sq in arrived {
            let shown = self.board.piece_at(sq);
            let arriving = after.board().piece_at(sq);
            if board_diff_at(shown, arriving, self.identifies) {
                // Nothing of the move there yet: empty, or still the piece it captures.
                if shown.is_some() && shown != pos.board().piece_at(sq) {
                    return false;
                }
                if let Some(piece) = arriving {
                    board.set_piece_at(sq, piece);
                }
                unseen = true;
            }
        }
        if !unseen {
            return false;
        }
        let completed = Sensed {
            board: &board,
            identifies: self.identifies,
            placed: self.placed,
        };
        completed.diff(after.board()).is_empty()
            || completed.in_progress(&after)
            || !completed.single_moves(&after).is_empty()
    }

    /// The one legal move from `pos` that leaves every piece of the side to move where the
    /// sensed board shows it, the board differing from that move's position only in the
    /// opponent's pieces (lifted, or put down where no legal reply puts them: a reply
    /// under way, a piece touched down on its way), with the squares where it differs. Only on
    /// a board that names pieces; `None` when no move, or more than one, fits, or when the
    /// board shows the move's position.
    pub fn move_with_opponent_hand(&self, pos: &Chess) -> Option<(Move, Bitboard)> {
        if !self.identifies {
            return None;
        }
        let d = self.diff(pos.board());
        let mover = pos.turn();
        let fits = pos.legal_moves().into_iter().filter_map(|m| {
            if !touches(m, d) {
                return None;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            let rest = self.diff(after.board());
            let opponents = |p: Option<Piece>| p.is_none_or(|p| p.color != mover);
            let theirs = rest.any()
                && rest.into_iter().all(|sq| {
                    opponents(after.board().piece_at(sq)) && opponents(self.board.piece_at(sq))
                });
            theirs.then_some((m, rest))
        });
        only(fits)
    }

    /// The promotion the sensed board shows unfinished: the pawn of the side to move stands
    /// on the last rank, and the board is otherwise the position after that promotion.
    pub fn unfinished_promotion(&self, pos: &Chess) -> Option<Move> {
        let d = self.diff(pos.board());
        if d.is_empty() || d.count() > 2 {
            return None;
        }
        let pawn = pos.turn().pawn();
        pos.legal_moves().into_iter().find(|&m| {
            if m.promotion() != Some(Role::Queen) {
                return false;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            let mut board = after.board().clone();
            board.set_piece_at(m.to(), pawn);
            board_diff(self.board, &board, self.identifies).is_empty()
        })
    }
}
