//! Touch-move and castling order (FIDE 4.3, 4.4): which piece was touched first, and whether
//! the move made is the one the Laws demand.
//!
//! A sensor board sees lifts, not touches: a lift is the touch it can observe. The lifts of
//! one turn are judged against the position before the move.

use shakmaty::{CastlingSide, Chess, Move, Piece, Position, Role, Square};

use super::Severity;
use super::search::ep_victim;
use crate::board::Millis;

/// A piece lifted from its square.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lift {
    /// Where.
    pub sq: Square,
    /// Which piece.
    pub piece: Piece,
    /// When.
    pub t_ms: Millis,
}

/// A breach of 4.3/4.4 found in the lifts of one move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The article, e.g. "4.3.1".
    pub article: &'static str,
    /// The squares concerned (touched piece first).
    pub squares: Vec<Square>,
    /// Times of the lifts that are the evidence.
    pub evidence_ms: Vec<Millis>,
    /// How much it asks of the arbiter.
    pub severity: Severity,
    /// A sentence for the arbiter.
    pub message: String,
}

/// Judges the move `m` made from `before` against the lifts of that turn.
pub fn judge(before: &Chess, m: Move, lifts: &[Lift]) -> Option<Finding> {
    let mover = before.turn();
    let board = before.board();
    let genuine = |l: &&Lift| board.piece_at(l.sq) == Some(l.piece);
    let own: Vec<&Lift> = lifts
        .iter()
        .filter(genuine)
        .filter(|l| l.piece.color == mover)
        .collect();
    let first_opponent = lifts
        .iter()
        .filter(genuine)
        .find(|l| l.piece.color != mover);
    if let Move::Castle { king, rook } = m {
        let king_lift = own.iter().find(|l| l.sq == king);
        let rook_lift = own.iter().find(|l| l.sq == rook);
        if let (Some(king_lift), Some(rook_lift)) = (king_lift, rook_lift)
            && (rook_lift.t_ms < king_lift.t_ms || own.first().is_some_and(|l| l.sq == rook))
        {
            return Some(Finding {
                article: "4.4.2",
                squares: vec![rook, king],
                evidence_ms: vec![rook_lift.t_ms, king_lift.t_ms],
                severity: Severity::Warning,
                message: format!(
                    "The rook on {rook} was lifted before the king on {king}; castling \
                     is not allowed on this move (the rook must be moved), but castling was \
                     completed"
                ),
            });
        }
        // Castling is judged under 4.4 when its own pieces came first; another piece touched
        // before them had to be moved or taken (4.3).
        let first = own.first().map(|l| l.t_ms);
        let castling_first = own.first().is_some_and(|l| l.sq == king || l.sq == rook);
        let opponent_before = first_opponent.is_some_and(|b| first.is_none_or(|t| b.t_ms < t));
        if (own.is_empty() || castling_first) && !opponent_before {
            return None;
        }
    }
    let legal = before.legal_moves();
    let first_own = own.first().copied();
    match (first_own, first_opponent) {
        (Some(a), Some(b)) => {
            let capture_ab = legal
                .iter()
                .any(|&c| c.from() == Some(a.sq) && captures_on(c, b.sq));
            if capture_ab {
                if m.from() == Some(a.sq) && captures_on(m, b.sq) {
                    return None;
                }
                return Some(Finding {
                    article: "4.3.3",
                    squares: vec![a.sq, b.sq],
                    evidence_ms: vec![a.t_ms, b.t_ms],
                    severity: Severity::Info,
                    message: format!(
                        "Touched own {} on {} and the opponent's {} on {}; the capture \
                         was possible but {} was played",
                        name(a.piece.role),
                        a.sq,
                        name(b.piece.role),
                        b.sq,
                        describe(m)
                    ),
                });
            }
            if a.t_ms <= b.t_ms {
                own_piece(before, &legal, m, a, &own)
            } else {
                opponent_piece(&legal, m, b)
            }
        }
        (Some(a), None) => own_piece(before, &legal, m, a, &own),
        (None, Some(b)) => opponent_piece(&legal, m, b),
        (None, None) => None,
    }
}

fn own_piece(before: &Chess, legal: &[Move], m: Move, a: &Lift, own: &[&Lift]) -> Option<Finding> {
    if m.from() == Some(a.sq) || !legal.iter().any(|c| c.from() == Some(a.sq)) {
        return None;
    }
    if a.piece.role == Role::King
        && let Some((side, rook)) = castling_intent(before, a, own)
    {
        let castle = legal
            .iter()
            .find(|c| c.is_castle() && c.castling_side() == Some(side));
        if castle.is_none() && m.role() != Role::King {
            return Some(Finding {
                article: "4.4.3",
                squares: vec![a.sq, rook.sq],
                evidence_ms: vec![a.t_ms, rook.t_ms],
                severity: Severity::Info,
                message: format!(
                    "King on {} then rook on {} touched, castling {} was illegal; another \
                     king move was due but {} was played",
                    a.sq,
                    rook.sq,
                    side_name(side),
                    describe(m)
                ),
            });
        }
        if castle.is_some() {
            return Some(Finding {
                article: "4.4.1",
                squares: vec![a.sq, rook.sq],
                evidence_ms: vec![a.t_ms, rook.t_ms],
                severity: Severity::Info,
                message: format!(
                    "King on {} then rook on {} touched; castling {} was legal and due but \
                     {} was played",
                    a.sq,
                    rook.sq,
                    side_name(side),
                    describe(m)
                ),
            });
        }
        if m.role() == Role::King {
            return None;
        }
    }
    Some(Finding {
        article: "4.3.1",
        squares: vec![a.sq, m.from().unwrap_or(m.to())],
        evidence_ms: vec![a.t_ms],
        severity: Severity::Info,
        message: format!(
            "Touched own {} on {} first (it could move), then {} was played",
            name(a.piece.role),
            a.sq,
            describe(m)
        ),
    })
}

fn opponent_piece(legal: &[Move], m: Move, b: &Lift) -> Option<Finding> {
    if captures_on(m, b.sq) || !legal.iter().any(|&c| captures_on(c, b.sq)) {
        return None;
    }
    Some(Finding {
        article: "4.3.2",
        squares: vec![b.sq, m.to()],
        evidence_ms: vec![b.t_ms],
        severity: Severity::Info,
        message: format!(
            "Touched the opponent's {} on {} first (it could be captured), then {} was \
             played",
            name(b.piece.role),
            b.sq,
            describe(m)
        ),
    })
}

/// A rook of the king's colour lifted after the king, and the castling side it is the rook
/// of: castling can be meant only with a rook the player still has the right to castle with
/// (after the king has moved, a king then a rook touched is 4.3.1, not 4.4.3).
fn castling_intent<'a>(
    before: &Chess,
    king: &Lift,
    own: &[&'a Lift],
) -> Option<(CastlingSide, &'a Lift)> {
    let rights = before.castles();
    own.iter()
        .filter(|l| l.piece.role == Role::Rook && l.t_ms >= king.t_ms)
        .find_map(|l| {
            CastlingSide::ALL
                .into_iter()
                .find(|&side| rights.rook(king.piece.color, side) == Some(l.sq))
                .map(|side| (side, *l))
        })
}

/// True when `m` captures the piece standing on `sq`.
pub fn captures_on(m: Move, sq: Square) -> bool {
    match m {
        Move::Normal { capture, to, .. } => capture.is_some() && to == sq,
        Move::EnPassant { from, to } => ep_victim(from, to) == sq,
        Move::Castle { .. } | Move::Put { .. } => false,
    }
}

fn side_name(side: CastlingSide) -> &'static str {
    match side {
        CastlingSide::KingSide => "king-side",
        CastlingSide::QueenSide => "queen-side",
    }
}

/// The English name of a piece.
pub fn name(role: Role) -> &'static str {
    match role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

/// A move in long form for messages, e.g. "knight g1-f3".
pub fn describe(m: Move) -> String {
    match m {
        Move::Castle { .. } => "castling".to_string(),
        _ => format!(
            "{} {}-{}",
            name(m.role()),
            m.from().map_or_else(String::new, |f| f.to_string()),
            m.to()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Color;

    #[test]
    fn first_touched_own_piece_must_move() {
        let pos = Chess::default();
        let lifts = [
            Lift {
                sq: Square::G1,
                piece: Color::White.knight(),
                t_ms: 10,
            },
            Lift {
                sq: Square::E2,
                piece: Color::White.pawn(),
                t_ms: 900,
            },
        ];
        let e4 = Move::Normal {
            role: Role::Pawn,
            from: Square::E2,
            capture: None,
            to: Square::E4,
            promotion: None,
        };
        let f = judge(&pos, e4, &lifts).unwrap();
        assert_eq!(f.article, "4.3.1");
        assert!(judge(&pos, e4, &lifts[1..]).is_none());
    }

    #[test]
    fn a_piece_touched_before_castling_had_to_move() {
        let pos: Chess = crate::rules::Game::from_fen("4k3/8/8/8/8/8/P7/4K2R w K - 0 1", false)
            .unwrap()
            .start()
            .clone();
        let lift = |sq, piece, t_ms| Lift { sq, piece, t_ms };
        let lifts = [
            lift(Square::A2, Color::White.pawn(), 10),
            lift(Square::E1, Color::White.king(), 900),
            lift(Square::H1, Color::White.rook(), 1200),
        ];
        let castle = Move::Castle {
            king: Square::E1,
            rook: Square::H1,
        };
        let f = judge(&pos, castle, &lifts).unwrap();
        assert_eq!(f.article, "4.3.1");
        assert!(judge(&pos, castle, &lifts[1..]).is_none());
    }

    #[test]
    fn king_then_rook_is_4_4_3_only_while_castling_with_that_rook_is_a_right() {
        let position = |fen| -> Chess {
            crate::rules::Game::from_fen(fen, false)
                .unwrap()
                .start()
                .clone()
        };
        let lift = |sq, piece, t_ms| Lift { sq, piece, t_ms };
        let lifts = [
            lift(Square::E1, Color::White.king(), 10),
            lift(Square::A1, Color::White.rook(), 400),
        ];
        let rook_up = Move::Normal {
            role: Role::Rook,
            from: Square::A1,
            capture: None,
            to: Square::A2,
            promotion: None,
        };
        // Castling queen-side is a right but illegal here (the knight on b1 is in the way).
        let with_right = position("4k3/8/8/8/8/8/8/RN2K3 w Q - 0 1");
        assert_eq!(
            judge(&with_right, rook_up, &lifts).unwrap().article,
            "4.4.3"
        );
        // The king has moved before: nobody castles, the king touched first had to move.
        let without = position("4k3/8/8/8/8/8/8/RN2K3 w - - 0 1");
        assert_eq!(judge(&without, rook_up, &lifts).unwrap().article, "4.3.1");
    }
}
