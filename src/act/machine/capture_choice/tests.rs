use super::*;
use crate::act::search::tests::{moves_from, position};

fn capture(pos: &Chess, uci: &str) -> Move {
    moves_from(pos, &[uci])[0]
}

#[test]
fn the_capture_that_wins_material_is_likelier_than_one_into_a_defended_square() {
    // The knight on e4 can take the bishop on c3, defended by the b2 pawn, or the pawn on
    // f2, defended by the king: a knight for a bishop beats a knight for a pawn.
    let pos = position("4k3/8/8/8/4n3/2B5/1P3P2/6K1 b - - 0 1", false);
    let bishop = capture(&pos, "e4c3");
    let pawn = capture(&pos, "e4f2");
    assert_eq!(likeliest(&pos, &[pawn, bishop], None), Some(bishop));
    // A queen on e4 can take a bishop on c2, defended by the king, or a loose pawn on f4:
    // the pawn is the safer win.
    let pos = position("4k3/8/8/8/4qP2/8/2B5/3K4 b - - 0 1", false);
    let bishop = capture(&pos, "e4c2");
    let pawn = capture(&pos, "e4f4");
    assert_eq!(likeliest(&pos, &[bishop, pawn], None), Some(pawn));
}

/// Asserts that of the captures `likelier` and `other` from `fen`, `likelier` is chosen
/// whichever comes first.
fn assert_likelier(fen: &str, likelier: &str, other: &str) {
    let pos = position(fen, false);
    let (likelier, other) = (capture(&pos, likelier), capture(&pos, other));
    assert_eq!(likeliest(&pos, &[other, likelier], None), Some(likelier));
    assert_eq!(likeliest(&pos, &[likelier, other], None), Some(likelier));
}

#[test]
fn the_capture_that_mates_is_likelier_than_one_that_wins_more() {
    // The rook on d4 can take a loose rook on a4, or the knight on d8 with mate on the
    // back rank.
    assert_likelier("3n2k1/5ppp/8/8/r2R4/8/5PPP/6K1 w - - 0 1", "d4d8", "d4a4");
}

#[test]
fn between_equal_gains_a_check_is_likelier() {
    // The queen on h5 can take a pawn on h4 or, with check, the pawn on h6.
    assert_likelier("7k/8/7p/7Q/7p/8/8/6K1 w - - 0 1", "h5h6", "h5h4");
}

#[test]
fn between_equal_gains_the_recapture_is_likelier() {
    // A rook on d8 can take a knight on d4 or one on a8, both undefended: the knight that
    // just arrived on d4 is the one taken back.
    let pos = position("N2r2k1/8/8/8/3N4/8/8/6K1 b - - 0 1", false);
    let back = capture(&pos, "d8d4");
    let corner = capture(&pos, "d8a8");
    assert_eq!(
        likeliest(&pos, &[corner, back], Some(Square::D4)),
        Some(back)
    );
    assert_eq!(likeliest(&pos, &[corner, back], None), Some(corner));
}

#[test]
fn of_sequences_differing_in_one_pieces_capture_the_likeliest_is_chosen() {
    // Twic game 559: after 13...a6, Bxc6 bxc6 Nf3 and Bxa6 bxa6 Nf3 leave the same
    // squares full. A bishop for a knight at first sight beats the bishop for a pawn.
    let start = position(
        "r2qk2r/1p1n1pp1/p1n1p1p1/1BbpP3/5B2/8/PPPN1PPP/R2Q1RK1 w kq - 0 13",
        false,
    );
    let knight = moves_from(&start, &["b5c6", "b7c6", "d2f3"]);
    let pawn = moves_from(&start, &["b5a6", "b7a6", "d2f3"]);
    let seqs = [pawn.clone(), knight.clone()];
    assert_eq!(
        likeliest_capture_sequence(&start, Some(Square::A6), &seqs),
        Some((knight.clone(), vec![pawn.clone()]))
    );
    // Sequences that differ first in a quiet move are not chosen between.
    let quiet = moves_from(&start, &["d2f3", "d8b6", "f3g5"]);
    assert_eq!(
        likeliest_capture_sequence(&start, None, &[knight.clone(), quiet]),
        None
    );
    // Nor are two that make the likeliest capture and differ later.
    let other_reply = moves_from(&start, &["b5c6", "b7c6", "d2b3"]);
    assert_eq!(
        likeliest_capture_sequence(&start, None, &[knight, pawn, other_reply]),
        None
    );
}
