//! Exchanges an occupancy-only board cannot show: a piece put on a square and taken there
//! before the next scan leaves the square reported filled once, as the opponent's piece put
//! there would. The same board then fits a capture elsewhere, whose landing it did not show
//! either, followed by the opponent's piece put on that square. Which of the two was
//! played, the board cannot say; the likelier is read and the arbiter told the other.

use shakmaty::{Bitboard, Board, Chess, Color, Move, Position, Role, Square};

/// Two readings of the same board: the `offer` taken at once by the opponent's `retake`,
/// or the `capture` by the offered piece elsewhere followed by the opponent's `reply` to the
/// offered square.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Exchange {
    /// The position both readings start from.
    pub(super) ply: usize,
    pub(super) offer: Move,
    pub(super) retake: Move,
    pub(super) capture: Move,
    pub(super) reply: Move,
}

impl Exchange {
    /// The exchange read instead of `capture` from `pos` (position `ply`) and the quiet
    /// `reply`: the capturer put on the reply's square instead, and the reply's piece taking
    /// it there. `None` when either move cannot be made, or the reply is a capture or a
    /// promotion.
    pub(super) fn instead_of(pos: &Chess, ply: usize, capture: Move, reply: Move) -> Option<Self> {
        if reply.is_capture() || reply.is_promotion() || !capture.is_capture() {
            return None;
        }
        let offer = pos.legal_moves().into_iter().find(|m| {
            m.from() == capture.from()
                && m.to() == reply.to()
                && !m.is_capture()
                && !m.is_promotion()
        })?;
        let mut offered = pos.clone();
        offered.play_unchecked(offer);
        let retake = offered
            .legal_moves()
            .into_iter()
            .find(|m| m.from() == reply.from() && m.to() == reply.to())?;
        Some(Exchange {
            ply,
            offer,
            retake,
            capture,
            reply,
        })
    }

    /// True when the exchange is the likelier reading, from `pos`, the position both start
    /// from: the capture loses material once every piece bearing on its square has taken
    /// there, and the offer is an even trade (the retake neither wins nor loses). An even
    /// trade offered and taken at once (Be6 Bxe6) is how exchanges are made; a piece given
    /// for a pawn is not, nor a queen offered to a knight.
    pub(super) fn likelier(&self, pos: &Chess) -> bool {
        let mut offered = pos.clone();
        offered.play_unchecked(self.offer);
        exchange_balance(pos, self.capture) < 0 && exchange_balance(&offered, self.retake) == 0
    }
}

/// What `capture` from `pos` wins once both sides have taken on its square with their least
/// valuable pieces for as long as it pays (a static exchange): each side may stop.
fn exchange_balance(pos: &Chess, capture: Move) -> i32 {
    let (Some(from), Some(victim)) = (capture.from(), capture.capture()) else {
        return 0;
    };
    let board = pos.board();
    let to = capture.to();
    let mut occupied = board.occupied() ^ Bitboard::from(from);
    let mut gains = vec![worth(victim)];
    let mut on_square = worth(capture.role());
    let mut side = !pos.turn();
    while let Some((sq, role)) = least_valuable_attacker(board, to, side, occupied) {
        let last = gains.last().copied().unwrap_or(0);
        gains.push(on_square - last);
        on_square = worth(role);
        occupied ^= Bitboard::from(sq);
        side = !side;
    }
    while gains.len() > 1 {
        let last = gains.pop().unwrap_or(0);
        if let Some(before) = gains.last_mut() {
            *before = -(-*before).max(last);
        }
    }
    gains[0]
}

/// The least valuable piece of `side` among `occupied` that attacks `to`.
fn least_valuable_attacker(
    board: &Board,
    to: Square,
    side: Color,
    occupied: Bitboard,
) -> Option<(Square, Role)> {
    (board.attacks_to(to, side, occupied) & occupied)
        .into_iter()
        .filter_map(|sq| board.role_at(sq).map(|role| (sq, role)))
        .min_by_key(|&(_, role)| worth(role))
}

/// A piece's worth in pawns, the king's beyond any exchange.
pub(super) fn worth(role: Role) -> i32 {
    match role {
        Role::Pawn => 1,
        Role::Knight | Role::Bishop => 3,
        Role::Rook => 5,
        Role::Queen => 9,
        Role::King => 100,
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, Position, Square};

    use super::{Exchange, exchange_balance};

    fn position(fen: &str) -> Chess {
        let fen: Fen = fen.parse().expect("a valid FEN");
        fen.into_position(CastlingMode::Standard)
            .expect("a legal position")
    }

    /// The legal move from `from` to `to` in `pos`.
    fn legal_move(pos: &Chess, from: Square, to: Square) -> shakmaty::Move {
        pos.legal_moves()
            .into_iter()
            .find(|m| m.from() == Some(from) && m.to() == to)
            .expect("a legal move")
    }

    /// Nxe5 gives the knight for the pawn at first sight, but d4 takes back: a pawn up.
    /// Nxd5 on a pawn the queen defends and nothing of Black's supports loses the knight.
    #[test]
    fn an_exchange_counts_every_piece_bearing_on_the_square() {
        let open = position("r1bqkb1r/pppp1ppp/2n2n2/4p3/3PP3/5N2/PPP2PPP/RNBQKB1R w KQkq - 1 4");
        assert_eq!(
            exchange_balance(&open, legal_move(&open, Square::F3, Square::E5)),
            1
        );
        let lost = position("r3r1k1/2qn1pb1/pp1p1np1/3P3p/P3pP2/1NP1B3/1P1QB1PP/3R1R1K b - - 0 18");
        assert_eq!(
            exchange_balance(&lost, legal_move(&lost, Square::F6, Square::D5)),
            -2
        );
    }

    /// The exchange read in `fen` (position `ply`) instead of `capture` and its `reply`, each
    /// given as its from and to squares, with the position.
    fn exchange_in(
        fen: &str,
        ply: usize,
        capture: [Square; 2],
        reply: [Square; 2],
    ) -> (Chess, Exchange) {
        let pos = position(fen);
        let capture = legal_move(&pos, capture[0], capture[1]);
        let mut after = pos.clone();
        after.play_unchecked(capture);
        let reply = legal_move(&after, reply[0], reply[1]);
        let exchange = Exchange::instead_of(&pos, ply, capture, reply).expect("an exchange fits");
        (pos, exchange)
    }

    /// Bd5 Bxd5, bishop for bishop with the queen behind, is read over Bxg4 Bd5, a bishop
    /// given for a pawn (twic game 411); Qe5 Nxe5, a queen offered to a knight, is not read
    /// over Qxc2 Ne5 (lichess game 358 in the cross-check).
    #[test]
    fn only_an_even_trade_is_read_over_a_losing_capture() {
        let (even, exchange) = exchange_in(
            "r2qr1k1/4bp2/n1p1b3/1p4p1/p2PB1Pp/2P1B2P/PP1QN3/1K1R2R1 b - - 1 19",
            37,
            [Square::E6, Square::G4],
            [Square::E4, Square::D5],
        );
        assert!(exchange.likelier(&even));
        let (queen, offer) = exchange_in(
            "2kr1b1r/pppn1ppp/4pn2/5q2/3P2P1/2N2N2/PPPB1PB1/R2Q1RK1 b - - 0 12",
            23,
            [Square::F5, Square::C2],
            [Square::F3, Square::E5],
        );
        assert!(!offer.likelier(&queen));
    }
}
