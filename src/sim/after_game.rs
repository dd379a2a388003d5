//! What players do with the pieces once a game is over: they set them back on their start
//! squares (one by one, or swept off the board first), in any order and at their own pace,
//! and often play a post-mortem on the board with the clock stopped.

use rand::Rng;
use rand::seq::SliceRandom;
use shakmaty::{Board, Chess};

use crate::board::{Millis, Observation, ObservationKind};
use crate::sim::virtual_board::timeline::{Pace, lift_place};

/// The board that `observations` leave, from `start`.
pub fn board_after(start: &Board, observations: &[Observation]) -> Board {
    let mut board = start.clone();
    for obs in observations {
        match &obs.kind {
            ObservationKind::Emptied(sq) => {
                board.discard_piece_at(*sq);
            }
            ObservationKind::Placed(sq, Some(piece)) => board.set_piece_at(*sq, *piece),
            ObservationKind::Snapshot(snapshot) => board = snapshot.board.clone(),
            _ => {}
        }
    }
    board
}

/// How the players put the pieces back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetBack {
    /// Each piece off its start square is lifted and the right pieces put there, lifts and
    /// placements mixed as two pairs of hands do it.
    PieceByPiece,
    /// Every piece is swept off the board first, then the whole set is put back.
    Sweep,
}

/// The observations of setting `from` back to the standard start position from `t_ms` on,
/// in an order and at a pace drawn from `rng` (80–700 ms between two hand actions).
pub fn set_back(from: &Board, how: SetBack, t_ms: Millis, rng: &mut impl Rng) -> Vec<Observation> {
    let start = Board::new();
    let differing = |sq| from.piece_at(sq) != start.piece_at(sq);
    let mut lifts: Vec<_> = match how {
        SetBack::Sweep => from.occupied().into_iter().collect(),
        SetBack::PieceByPiece => from
            .occupied()
            .into_iter()
            .filter(|&sq| differing(sq))
            .collect(),
    };
    let mut places: Vec<_> = match how {
        SetBack::Sweep => start.occupied().into_iter().collect(),
        SetBack::PieceByPiece => start
            .occupied()
            .into_iter()
            .filter(|&sq| differing(sq))
            .collect(),
    };
    lifts.shuffle(rng);
    places.shuffle(rng);
    let mut occupied = from.occupied();
    let mut out = Vec::new();
    let mut t = t_ms;
    // A sweep clears the board before a piece goes back; by hand, a placement waits only
    // for its own square.
    while !lifts.is_empty() || !places.is_empty() {
        let placeable = places.iter().position(|&sq| {
            !occupied.contains(sq) && (how == SetBack::PieceByPiece || lifts.is_empty())
        });
        let lift_now = !lifts.is_empty() && (placeable.is_none() || rng.gen_bool(0.5));
        if lift_now && let Some(sq) = lifts.pop() {
            occupied.discard(sq);
            t += rng.gen_range(80..=700);
            out.push(Observation {
                t_ms: t,
                kind: ObservationKind::Emptied(sq),
            });
        } else if let Some(i) = placeable {
            let sq = places.remove(i);
            occupied.add(sq);
            t += rng.gen_range(80..=700);
            out.push(Observation {
                t_ms: t,
                kind: ObservationKind::Placed(sq, start.piece_at(sq)),
            });
        } else {
            break;
        }
    }
    out
}

/// The observations of a post-mortem from the start position from `t_ms` on: `moves`
/// (UCI) lifted and placed at `pace`, the clock stopped (no press).
pub fn post_mortem(moves: &[String], pace: Pace, t_ms: Millis) -> Vec<Observation> {
    let mut game = crate::rules::Game::standard();
    let played: Vec<_> = moves
        .iter()
        .map_while(|m| game.play_uci(m).ok().map(|p| p.mv))
        .collect();
    lift_place(&Chess::default(), &played, pace)
        .into_iter()
        .filter(|o| !matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .map(|o| Observation {
            t_ms: o.t_ms + t_ms,
            kind: o.kind,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn after_fools_mate() -> Board {
        let mut game = crate::rules::Game::standard();
        for m in ["f2f3", "e7e5", "g2g4", "d8h4"] {
            game.play_uci(m).unwrap();
        }
        shakmaty::Position::board(game.position()).clone()
    }

    #[test]
    fn every_way_of_setting_back_ends_on_the_start_position() {
        for how in [SetBack::PieceByPiece, SetBack::Sweep] {
            for seed in 0..20 {
                let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
                let from = after_fools_mate();
                let script = set_back(&from, how, 1_000, &mut rng);
                assert_eq!(board_after(&from, &script), Board::new(), "{how:?} {seed}");
                assert!(script.windows(2).all(|w| w[0].t_ms < w[1].t_ms));
                let lifts = script
                    .iter()
                    .filter(|o| matches!(o.kind, ObservationKind::Emptied(_)))
                    .count();
                match how {
                    SetBack::Sweep => assert_eq!(lifts, 32),
                    // The four pieces that moved.
                    SetBack::PieceByPiece => assert_eq!(lifts, 4),
                }
            }
        }
    }

    #[test]
    fn a_post_mortem_presses_no_clock_and_starts_later() {
        let moves: Vec<String> = ["e2e4", "e7e5"].map(String::from).to_vec();
        let script = post_mortem(&moves, Pace::default(), 50_000);
        assert_eq!(script.len(), 4);
        assert!(script.iter().all(|o| o.t_ms > 50_000));
        let mut board = Board::new();
        board.discard_piece_at(shakmaty::Square::E2);
        board.discard_piece_at(shakmaty::Square::E7);
        board.set_piece_at(
            shakmaty::Square::E4,
            shakmaty::Piece::from_char('P').unwrap(),
        );
        board.set_piece_at(
            shakmaty::Square::E5,
            shakmaty::Piece::from_char('p').unwrap(),
        );
        assert_eq!(board_after(&Board::new(), &script), board);
    }
}
