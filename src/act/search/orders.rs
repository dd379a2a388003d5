//! Move orders across a gap: when several orders of the same moves (or of different moves)
//! reach the board's position after the board was out of touch, which one to record.
//!
//! Nothing was seen during the gap itself, so the evidence is what little the board told
//! around it: the report times of squares whose latest change it did see (a change reported
//! just before the link dropped, a recovered record, a move finished after it came back),
//! which an order must agree with ([`Reports::inversion`], [`Reports::overlap`],
//! [`Reports::finished_out_of_order`]); then the moves already recorded (an order that keeps
//! them is not a revision); then how players move (a capture is recaptured at once far more
//! often than later). Clock presses seen in the gap say that a ply ended, not which piece
//! moved: every order alternates the players the same way, so they cannot rank orders beyond
//! the report times of the squares.

use std::cmp::Reverse;

use shakmaty::{Chess, Move, Position};

use super::Reports;
use crate::board::Millis;

/// How well one order fits the evidence; lower is better, compared field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct OrderFit {
    /// How far the order runs against the report times; `Millis::MAX` when it cannot have
    /// happened at all.
    pub inversion: Millis,
    /// How long a later move was seen begun before an earlier one was seen finished.
    pub overlap: Millis,
    /// How long a later move was seen finished before an earlier one.
    pub out_of_order: Millis,
    /// Moves recorded already that the order replaces (fewer is better: an order that keeps
    /// them is no revision).
    pub rewritten: Reverse<usize>,
    /// Captures recaptured on the same square at once (more is better).
    pub recaptures: Reverse<usize>,
}

impl OrderFit {
    /// The fit of `seq`, played from `start`, with the `reports` and the moves `recorded`
    /// from `start` on.
    pub fn of(start: &Chess, seq: &[Move], reports: &Reports<'_>, recorded: &[Move]) -> OrderFit {
        let kept = recorded
            .iter()
            .zip(seq)
            .take_while(|(played, m)| played == m)
            .count();
        OrderFit {
            inversion: reports.inversion(start, seq).unwrap_or(Millis::MAX),
            overlap: reports.overlap(start, seq),
            out_of_order: reports.finished_out_of_order(start, seq),
            // The order replaces every recorded move past what it keeps, up to its length.
            rewritten: Reverse(kept),
            recaptures: Reverse(recaptures(start, seq)),
        }
    }
}

/// The orders `seqs` from `start`, from the one that fits the evidence best; orders that fit
/// equally well keep the order they were given in (the search's, which is deterministic).
pub fn rank_orders(
    start: &Chess,
    seqs: Vec<Vec<Move>>,
    reports: &Reports<'_>,
    recorded: &[Move],
) -> Vec<Vec<Move>> {
    let mut fitted: Vec<(OrderFit, Vec<Move>)> = seqs
        .into_iter()
        .map(|seq| (OrderFit::of(start, &seq, reports, recorded), seq))
        .collect();
    fitted.sort_by_key(|(fit, _)| *fit);
    fitted.into_iter().map(|(_, seq)| seq).collect()
}

/// How many moves of `seq` capture on the square the move before them landed on.
fn recaptures(start: &Chess, seq: &[Move]) -> usize {
    let mut pos = start.clone();
    let mut count = 0;
    let mut previous: Option<Move> = None;
    for &m in seq {
        if m.is_capture() && previous.is_some_and(|p| p.is_capture() && p.to() == m.to()) {
            count += 1;
        }
        if !pos.is_legal(m) {
            break;
        }
        pos.play_unchecked(m);
        previous = Some(m);
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::act::search::tests::moves_from;
    use shakmaty::Square;

    fn nothing_reported() -> ([Option<Millis>; 64], [Option<Millis>; 64]) {
        ([None; 64], [None; 64])
    }

    fn reports<'a>(
        times: &'a [Option<Millis>; 64],
        previous: &'a [Option<Millis>; 64],
    ) -> Reports<'a> {
        Reports {
            times,
            previous,
            undated: shakmaty::Bitboard::EMPTY,
            since: 0,
            slack: 600,
            outage: true,
            placed: None,
            whole_frames: false,
            pressed: [None; 2],
        }
    }

    #[test]
    fn the_order_the_report_times_agree_with_comes_first() {
        let start = Chess::default();
        let first = moves_from(&start, &["e2e4", "e7e5", "d2d4"]);
        let second = moves_from(&start, &["d2d4", "e7e5", "e2e4"]);
        // d2-d4 and e2-e4 were seen (d4 first, within a scan's reordering of each other);
        // ...e5 came in the dump after the link came back.
        let (mut times, previous) = nothing_reported();
        times[Square::D2 as usize] = Some(100);
        times[Square::D4 as usize] = Some(300);
        times[Square::E2 as usize] = Some(700);
        times[Square::E4 as usize] = Some(900);
        let r = reports(&times, &previous);
        let ranked = rank_orders(&start, vec![first.clone(), second.clone()], &r, &[]);
        assert_eq!(ranked, vec![second.clone(), first.clone()]);
        // With nothing reported the given order stands.
        let (times, previous) = nothing_reported();
        let r = reports(&times, &previous);
        assert_eq!(
            rank_orders(&start, vec![first.clone(), second.clone()], &r, &[]),
            vec![first, second]
        );
    }

    #[test]
    fn an_order_that_keeps_the_recorded_moves_comes_before_one_that_rewrites_them() {
        let start = Chess::default();
        let first = moves_from(&start, &["e2e4", "e7e5", "d2d4"]);
        let second = moves_from(&start, &["d2d4", "e7e5", "e2e4"]);
        let (times, previous) = nothing_reported();
        let r = reports(&times, &previous);
        let recorded = moves_from(&start, &["d2d4"]);
        assert_eq!(
            rank_orders(&start, vec![first.clone(), second.clone()], &r, &recorded),
            vec![second, first]
        );
    }

    #[test]
    fn a_capture_recaptured_at_once_comes_before_a_delayed_recapture() {
        // After 1.e4 d5 2.Nc3: ...Nf6 exd5 Nxd5 recaptures at once; ...Nf6 exd5 a6 does not.
        let start = Chess::default();
        let prefix = ["e2e4", "d7d5", "b1c3"];
        let base = {
            let mut pos = start.clone();
            for m in moves_from(&start, &prefix) {
                pos.play_unchecked(m);
            }
            pos
        };
        let at_once = moves_from(&base, &["g8f6", "e4d5", "f6d5"]);
        let (times, previous) = nothing_reported();
        let r = reports(&times, &previous);
        assert_eq!(OrderFit::of(&base, &at_once, &r, &[]).recaptures.0, 1);
        let delayed = moves_from(&base, &["g8f6", "e4d5", "a7a6"]);
        assert_eq!(recaptures(&base, &delayed), 0);
        assert_eq!(recaptures(&base, &at_once), 1);
        let ranked = rank_orders(&base, vec![delayed.clone(), at_once.clone()], &r, &[]);
        assert_eq!(ranked[0], at_once);
    }

    #[test]
    fn an_order_the_report_times_rule_out_comes_last() {
        let start = Chess::default();
        let first = moves_from(&start, &["e2e4", "e7e5", "d2d4"]);
        let second = moves_from(&start, &["d2d4", "e7e5", "e2e4"]);
        // e4 seen arriving 2 s before d2 was seen left: d4 cannot have come first.
        let (mut times, previous) = nothing_reported();
        times[Square::E4 as usize] = Some(100);
        times[Square::D2 as usize] = Some(2_100);
        let r = reports(&times, &previous);
        assert_eq!(OrderFit::of(&start, &first, &r, &[]).inversion, 0);
        let ranked = rank_orders(&start, vec![second.clone(), first.clone()], &r, &[]);
        assert_eq!(ranked, vec![first, second]);
    }
}
