use super::*;
use crate::act::MachineConfig;
use shakmaty::Square;

/// A machine for a board that names its pieces or senses only occupancy.
fn sensing(identifies_pieces: bool) -> Machine {
    Machine::new(MachineConfig {
        identifies_pieces,
        ..MachineConfig::default()
    })
}

/// Moves that need a piece on a square the board never showed it on, each vouched for by
/// its player's press: for the log on a board that names pieces, a warning on one that
/// senses only occupancy (the press says a move was made, not which).
#[test]
fn an_unseen_arrival_the_presses_vouch_for_warns_only_on_an_occupancy_board() {
    let severity = |identifies_pieces| {
        let e5 = Bitboard::from_square(Square::E5);
        sensing(identifies_pieces)
            .unseen_arrival_alert(&[], e5, e5, 0)
            .severity
    };
    assert_eq!(severity(true), Severity::Info);
    assert_eq!(severity(false), Severity::Warning);
}

/// Moves read from actions that overlapped less than a hand answers in: a reply begun as
/// the move ended, for the log, on a board that names the pieces; a warning on one that
/// senses only occupancy, where a knocked piece leaves the same squares as a reply.
#[test]
fn a_quick_overlap_warns_only_on_an_occupancy_board() {
    let severity = |identifies_pieces| {
        sensing(identifies_pieces)
            .overlapping_alert(&[], 100, false, 0)
            .severity
    };
    assert_eq!(severity(true), Severity::Info);
    assert_eq!(severity(false), Severity::Warning);
}
