//! A reading of the board: what explains what it shows, relative to the game, and the
//! choices among several explanations that need nothing but the explanations.

use shakmaty::{Chess, Move, Role};

use super::doubt::Doubt;
use crate::act::search::{Explanation, Reports};
use crate::board::Millis;

/// What the board shows, relative to the game.
#[derive(Debug, Clone)]
pub(super) enum Reading {
    /// Exactly the game position.
    Current,
    /// The game from ply `from` on is `moves` (a revision when `from` is before the end).
    Adopt {
        from: usize,
        moves: Vec<Move>,
        doubt: Option<Doubt>,
    },
    /// Nothing explains it; `in_progress` when it may be a move still being made.
    Unexplained { in_progress: bool },
}

impl Reading {
    /// The moves recorded from ply `from` on (`withdrawn`) read again as `moves`, and the
    /// arbiter told (8.5.3).
    pub(super) fn reread(from: usize, withdrawn: Vec<Move>, moves: Vec<Move>) -> Reading {
        Reading::Adopt {
            from,
            moves: moves.clone(),
            doubt: Some(Doubt::Reread {
                from,
                withdrawn,
                moves,
            }),
        }
    }
}

/// What the report times say of a reconstructed sequence of moves ([`Reports::overlap`],
/// [`Reports::finished_out_of_order`]).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Timing {
    pub(super) overlap: Millis,
    pub(super) out_of_order: Millis,
}

impl Timing {
    /// The timing of `seq` played from `start`.
    pub(super) fn of(reports: &Reports<'_>, start: &Chess, seq: &[Move]) -> Timing {
        Timing {
            overlap: reports.overlap(start, seq),
            out_of_order: reports.finished_out_of_order(start, seq),
        }
    }
}

/// Picks the move among single-move explanations: one, or a queen promotion among the
/// promotions an occupancy-only board cannot tell apart.
pub(super) fn choose(singles: &[(Move, Chess)]) -> Option<(Move, Option<Doubt>)> {
    match singles {
        [] => None,
        [(m, _)] => Some((*m, None)),
        _ => singles
            .iter()
            .find(|(m, _)| m.promotion() == Some(Role::Queen))
            .map(|(m, _)| (*m, Some(Doubt::PromotionPiece))),
    }
}

/// Of sequences that differ only in what their pawns promoted to, the one that promotes
/// every pawn to a queen: what an occupancy-only board records when it cannot tell.
pub(super) fn queen_promotions(seqs: &[Vec<Move>]) -> Option<Vec<Move>> {
    let queens = crate::act::search::only(seqs.iter().filter(|seq| {
        seq.iter()
            .all(|m| m.promotion().is_none_or(|role| role == Role::Queen))
    }))?;
    // Whether a move captures, not what: the piece a pawn promoted to may be taken at once.
    let same_but_promotion = |a: &Move, b: &Move| {
        (a.from(), a.to(), a.role(), a.is_capture(), a.is_promotion())
            == (b.from(), b.to(), b.role(), b.is_capture(), b.is_promotion())
    };
    let differ_only_there = |seq: &Vec<Move>| {
        seq.len() == queens.len()
            && seq
                .iter()
                .zip(queens)
                .all(|(a, b)| same_but_promotion(a, b))
    };
    (queens.iter().any(|m| m.is_promotion()) && seqs.iter().all(differ_only_there))
        .then(|| queens.clone())
}

/// Of several sequences that leave the board as it is, the one that leaves fewer of the
/// board's reports unexplained than every other (a double step whose square the board
/// reported, against a single step): a square reported changed that no move touched needs a
/// hand the sequence does not account for. Still ambiguous when no one sequence does.
pub(super) fn most_reports_explained(
    start: &Chess,
    seqs: Vec<Vec<Move>>,
    reports: &Reports<'_>,
) -> Explanation {
    let unexplained: Vec<usize> = seqs
        .iter()
        .map(|seq| reports.unexplained(start, seq).count())
        .collect();
    let Some(&fewest) = unexplained.iter().min() else {
        return Explanation::Ambiguous(seqs);
    };
    let mut best = seqs
        .iter()
        .zip(&unexplained)
        .filter(|&(_, &u)| u == fewest)
        .map(|(seq, _)| seq);
    match (best.next(), best.next()) {
        (Some(seq), None) => Explanation::Unique(seq.clone()),
        _ => Explanation::Ambiguous(seqs),
    }
}

pub(super) fn common_prefix(seqs: &[Vec<Move>]) -> Vec<Move> {
    let Some(first) = seqs.first() else {
        return Vec::new();
    };
    let len = (0..first.len())
        .take_while(|&i| seqs.iter().all(|s| s.get(i) == Some(&first[i])))
        .count();
    first[..len].to_vec()
}
