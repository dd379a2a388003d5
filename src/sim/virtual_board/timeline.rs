//! A plain, deterministic timeline for a game: every move is lifted and placed by one careful
//! hand at a fixed pace, then the clock is pressed. (Realistic hands live in `sim::hands`.)

use shakmaty::{Chess, Color, Move, Position, Role, Square};

use crate::board::{Observation, ObservationKind};

/// The pace of the plain timeline, in game milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Before each move (thinking).
    pub think_ms: u64,
    /// Between two hand actions of one move.
    pub step_ms: u64,
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            think_ms: 2000,
            step_ms: 300,
        }
    }
}

/// The observations of playing `moves` from `start`: lift, (remove the victim,) place, (rook
/// for castling,) then press the clock. Stops at the first move that is not legal.
pub fn lift_place(start: &Chess, moves: &[Move], pace: Pace) -> Vec<Observation> {
    let mut position = start.clone();
    let mut out = Vec::new();
    let mut t_ms = 0;
    for m in moves {
        if !position.is_legal(*m) {
            break;
        }
        let mover = position.turn();
        t_ms += pace.think_ms;
        let mut act = |kind| {
            out.push(Observation { t_ms, kind });
            t_ms += pace.step_ms;
        };
        for kind in hand_actions(m, mover) {
            act(kind);
        }
        act(ObservationKind::ClockPressed { by: mover });
        position.play_unchecked(*m);
    }
    out
}

fn hand_actions(m: &Move, mover: Color) -> Vec<ObservationKind> {
    use ObservationKind::{Emptied, Placed};
    let piece = |role: Role| Some(role.of(mover));
    match *m {
        Move::Normal {
            role,
            from,
            capture,
            to,
            promotion,
        } => {
            let mut acts = vec![Emptied(from)];
            if capture.is_some() {
                acts.push(Emptied(to));
            }
            acts.push(Placed(to, piece(promotion.unwrap_or(role))));
            acts
        }
        Move::EnPassant { from, to } => {
            let victim = Square::from_coords(to.file(), from.rank());
            vec![
                Emptied(from),
                Placed(to, piece(Role::Pawn)),
                Emptied(victim),
            ]
        }
        Move::Castle { king, rook } => {
            let side = m
                .castling_side()
                .unwrap_or(shakmaty::CastlingSide::KingSide);
            let king_to = side.king_to(mover);
            let rook_to = side.rook_to(mover);
            if king_to == rook || rook_to == king {
                // Chess960 castling where a piece lands where the other stands: lift both first.
                vec![
                    Emptied(king),
                    Emptied(rook),
                    Placed(king_to, piece(Role::King)),
                    Placed(rook_to, piece(Role::Rook)),
                ]
            } else {
                vec![
                    Emptied(king),
                    Placed(king_to, piece(Role::King)),
                    Emptied(rook),
                    Placed(rook_to, piece(Role::Rook)),
                ]
            }
        }
        Move::Put { role, to } => vec![Placed(to, piece(role))],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::san::San;

    fn moves(sans: &[&str]) -> Vec<Move> {
        let mut pos = Chess::default();
        sans.iter()
            .map(|s| {
                let m = s.parse::<San>().expect("san").to_move(&pos).expect("legal");
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    #[test]
    fn capture_castle_and_en_passant_actions() {
        use ObservationKind::*;
        let ms = moves(&[
            "e4", "d5", "exd5", "c5", "dxc6", "Nf6", "Nf3", "e6", "Be2", "Bb4", "O-O",
        ]);
        let obs = lift_place(&Chess::default(), &ms, Pace::default());
        let kinds: Vec<_> = obs.iter().map(|o| o.kind.clone()).collect();
        let wp = Some(Color::White.pawn());
        // exd5: lift, victim off, place.
        assert_eq!(
            kinds[6..10],
            [
                Emptied(Square::E4),
                Emptied(Square::D5),
                Placed(Square::D5, wp),
                ClockPressed { by: Color::White }
            ]
        );
        // dxc6 en passant: the victim on c5 is removed last.
        assert_eq!(
            kinds[13..16],
            [
                Emptied(Square::D5),
                Placed(Square::C6, wp),
                Emptied(Square::C5)
            ]
        );
        let n = kinds.len();
        assert_eq!(
            kinds[n - 5..],
            [
                Emptied(Square::E1),
                Placed(Square::G1, Some(Color::White.king())),
                Emptied(Square::H1),
                Placed(Square::F1, Some(Color::White.rook())),
                ClockPressed { by: Color::White }
            ]
        );
        assert!(obs.windows(2).all(|w| w[0].t_ms < w[1].t_ms));
    }

    #[test]
    fn promotion_places_the_new_piece_and_illegal_moves_stop_the_timeline() {
        let pos: Chess = "7k/P7/8/8/8/8/8/K7 w - - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .expect("fen")
            .into_position(shakmaty::CastlingMode::Standard)
            .expect("position");
        let promote = Move::Normal {
            role: Role::Pawn,
            from: Square::A7,
            capture: None,
            to: Square::A8,
            promotion: Some(Role::Queen),
        };
        let illegal = Move::Normal {
            role: Role::King,
            from: Square::A1,
            capture: None,
            to: Square::H8,
            promotion: None,
        };
        let obs = lift_place(&pos, &[promote, illegal], Pace::default());
        assert_eq!(obs.len(), 3);
        assert_eq!(
            obs[1].kind,
            ObservationKind::Placed(Square::A8, Some(Color::White.queen()))
        );
    }
}
