use super::*;
use crate::board::Millis;
use shakmaty::uci::UciMove;
use shakmaty::{Piece, Role, Square};

fn after(ucis: &[&str]) -> Chess {
    let mut pos = Chess::default();
    for u in ucis {
        let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        pos.play_unchecked(m);
    }
    pos
}

#[test]
fn one_move_is_found_and_two_orders_are_ambiguous() {
    let start = Chess::default();
    let target = after(&["e2e4"]);
    let s = sensed(target.board());
    assert_eq!(s.single_moves(&start).len(), 1);
    let target = after(&["e2e4", "d7d5", "e4d5"]);
    let s = sensed(target.board());
    assert_eq!(
        s.sequences(&start, 4, &Reports::EVERYTHING),
        Explanation::Unique(after_moves(&["e2e4", "d7d5", "e4d5"]))
    );
    let target = after(&["e2e4", "e7e5", "d2d4"]);
    let s = sensed(target.board());
    assert!(
        matches!(s.sequences(&start, 4, &Reports::EVERYTHING), Explanation::Ambiguous(v) if v.len() == 2)
    );
}

/// What a DGT board senses when it shows `board`, nothing placed since the last move.
fn sensed(board: &Board) -> Sensed<'_> {
    Sensed {
        board,
        identifies: true,
        placed: Bitboard::EMPTY,
    }
}

/// Reports at `times` (and `previous`), all belonging to the moves, 600 ms of slack.
fn reported<'a>(
    times: &'a [Option<Millis>; 64],
    previous: &'a [Option<Millis>; 64],
) -> Reports<'a> {
    Reports {
        times,
        previous,
        undated: Bitboard::EMPTY,
        since: 0,
        slack: 600,
        outage: false,
        placed: None,
        whole_frames: false,
        pressed: [None; 2],
    }
}

fn times(reports: &[(Square, Millis)]) -> [Option<Millis>; 64] {
    let mut t = [None; 64];
    for &(sq, when) in reports {
        t[sq as usize] = Some(when);
    }
    t
}

#[test]
fn report_times_pick_the_order_the_moves_were_made_in() {
    let start = Chess::default();
    let target = after(&["e2e4", "e7e5", "d2d4"]);
    let s = sensed(target.board());
    let t = times(&[
        (Square::E2, 100),
        (Square::E4, 200),
        (Square::E7, 300),
        (Square::E5, 400),
        (Square::D2, 500),
        (Square::D4, 600),
    ]);
    let reports = reported(&t, &t);
    assert_eq!(
        s.sequences(&start, 4, &reports),
        Explanation::Unique(after_moves(&["e2e4", "e7e5", "d2d4"]))
    );
    let wrong = after_moves(&["d2d4", "e7e5", "e2e4"]);
    assert_eq!(reports.inversion(&start, &wrong), Some(500));
    let strict = Reports {
        slack: 200,
        ..reports
    };
    assert_eq!(strict.inversion(&start, &wrong), None);
}

#[test]
fn an_unreported_square_serves_one_move_only() {
    // e2-e4 and ...d5 were reported; e4xd5 would need e4 to be filled and emptied again
    // without a report: two lost updates, not one.
    let start = Chess::default();
    let target = after(&["e2e4", "d7d5", "e4d5"]);
    let s = sensed(target.board());
    let t = times(&[(Square::E2, 100), (Square::D7, 300), (Square::D5, 500)]);
    let reports = reported(&t, &t);
    assert_eq!(s.sequences(&start, 4, &reports), Explanation::None);
    let outage = Reports {
        outage: true,
        ..reports
    };
    assert_eq!(
        s.sequences(&start, 4, &outage),
        Explanation::Unique(after_moves(&["e2e4", "d7d5", "e4d5"]))
    );
}

#[test]
fn an_arrival_taken_at_once_needs_two_reports_of_its_square() {
    // ...d5 then exd5: d5 was filled and then taken; one report of d5 saw only the end.
    let start = Chess::default();
    let seq = after_moves(&["e2e4", "d7d5", "e4d5"]);
    let t = times(&[
        (Square::E2, 100),
        (Square::E4, 500),
        (Square::D7, 300),
        (Square::D5, 600),
    ]);
    let previous = times(&[(Square::E4, 200)]);
    let reports = reported(&t, &previous);
    assert_eq!(
        reports.unseen_arrivals(&start, &seq),
        Bitboard::from(Square::D5)
    );
    let outage = Reports {
        outage: true,
        ..reports
    };
    assert_eq!(outage.unseen_arrivals(&start, &seq), Bitboard::EMPTY);
    let mut both = previous;
    both[Square::D5 as usize] = Some(400);
    let twice = Reports {
        previous: &both,
        ..reports
    };
    assert_eq!(twice.unseen_arrivals(&start, &seq), Bitboard::EMPTY);
}

#[test]
fn a_board_naming_pieces_must_have_named_an_arrival_that_stood_a_while() {
    // Bxf7+ Kxf7: f7 reported emptied (the pawn taken) and then the king arriving.
    let start = position(
        "rnbqkbnr/pppp1ppp/8/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR w KQkq - 0 1",
        false,
    );
    let seq = moves_from(&start, &["c4f7", "e8f7"]);
    let t = times(&[(Square::C4, 100), (Square::E8, 9_000), (Square::F7, 9_100)]);
    let previous = times(&[(Square::F7, 150)]);
    let white_bishop = Piece {
        color: Color::White,
        role: Role::Bishop,
    };
    let nothing_named = [];
    let named = [(Square::F7, white_bishop, 300)];
    let naming = |placed| Reports {
        placed: Some(placed),
        ..reported(&t, &previous)
    };
    // The bishop would have stood on f7 for seconds, never named there.
    assert_eq!(
        naming(&nothing_named).unseen_arrivals(&start, &seq),
        Bitboard::from(Square::F7)
    );
    assert_eq!(
        naming(&named).unseen_arrivals(&start, &seq),
        Bitboard::EMPTY
    );
    // Taken at once, within a moment of the pawn leaving: a scan may miss it.
    let quick = times(&[(Square::C4, 100), (Square::E8, 400), (Square::F7, 500)]);
    let folded = Reports {
        times: &quick,
        ..naming(&nothing_named)
    };
    assert_eq!(folded.unseen_arrivals(&start, &seq), Bitboard::EMPTY);
    // A board that does not name pieces has only the two reports to go by.
    assert_eq!(
        reported(&t, &previous).unseen_arrivals(&start, &seq),
        Bitboard::EMPTY
    );
}

/// Two reports of a square close in time may fold a piece that stood there a moment, but
/// not when the earlier one named the piece a later move brings there: the moment would
/// have come before it. Here the board named Black's bishop on a4 and then a4 empty; Ba4
/// Bxa4 Ne6 Bd1 needs a white bishop on a4 before that bishop, never named there.
#[test]
fn a_fold_needs_the_earlier_report_before_the_later_arrival() {
    let start = position(
        "2r3k1/pp5p/1n4pB/1b4N1/1P1b4/P7/6PP/3B1R1K w - - 7 31",
        false,
    );
    let seq = moves_from(&start, &["d1a4", "b5a4", "g5e6", "a4d1"]);
    let t = times(&[
        (Square::B5, 1_000),
        (Square::G5, 1_000),
        (Square::E6, 1_300),
        (Square::A4, 1_300),
        (Square::D1, 1_600),
    ]);
    let previous = times(&[(Square::A4, 1_000)]);
    let bishop = |color| Piece {
        color,
        role: Role::Bishop,
    };
    let knight = Piece {
        color: Color::White,
        role: Role::Knight,
    };
    let named_black_bishop = [
        (Square::A4, bishop(Color::Black), 1_000),
        (Square::E6, knight, 1_300),
        (Square::D1, bishop(Color::Black), 1_600),
    ];
    let reports = |placed| Reports {
        placed: Some(placed),
        ..reported(&t, &previous)
    };
    assert_eq!(
        reports(&named_black_bishop).unseen_arrivals(&start, &seq),
        Bitboard::from(Square::A4)
    );
    // a4 reported twice with no piece named: the white bishop may have stood there between.
    let named_elsewhere = &named_black_bishop[1..];
    assert_eq!(
        reports(named_elsewhere).unseen_arrivals(&start, &seq),
        Bitboard::EMPTY
    );
}

#[test]
fn a_later_slide_over_a_vacated_square_does_not_date_its_departure() {
    // ...d5 (d7 emptied at 100), then Qh3xc8 slides over d7 at 900-1000: d7's last
    // report is the queen passing, not the pawn leaving after it arrived on d5.
    let start = position(
        "rnbqkbnr/pppppppp/8/8/8/7Q/PPPPPPPP/RNB1KBNR b KQkq - 0 1",
        false,
    );
    let seq = moves_from(&start, &["d7d5", "h3c8"]);
    let t = times(&[
        (Square::D5, 200),
        (Square::C8, 1100),
        (Square::H3, 800),
        (Square::D7, 1000),
    ]);
    assert_eq!(reported(&t, &t).inversion(&start, &seq), Some(0));
}

#[test]
fn a_chess960_castling_onto_the_rooks_square_is_in_time() {
    // King e1, rook c1: O-O-O puts the king on c1 after the rook left it for d1, so
    // c1's last report is the king arriving, not the rook leaving.
    let start = position(
        "nqrnkrbb/pppppp1p/8/6p1/8/4N3/PPPPPPPP/NQR1KRBB w FCfc - 0 2",
        true,
    );
    let castle = start
        .legal_moves()
        .into_iter()
        .find(|m| {
            matches!(
                m,
                Move::Castle {
                    rook: Square::C1,
                    ..
                }
            )
        })
        .unwrap();
    let t = times(&[(Square::C1, 1900), (Square::D1, 1000), (Square::E1, 1500)]);
    assert_eq!(reported(&t, &t).inversion(&start, &[castle]), Some(0));
}

#[test]
fn a_change_a_board_dump_found_does_not_date_the_move() {
    // Ng1-f3 seen arriving at 1000; g1 found empty only by a dump at 2500.
    let start = Chess::default();
    let seq = after_moves(&["g1f3"]);
    let t = times(&[(Square::F3, 1000), (Square::G1, 2500)]);
    let reports = reported(&t, &t);
    assert_eq!(reports.inversion(&start, &seq), None);
    let dumped = Reports {
        undated: Bitboard::from(Square::G1),
        ..reports
    };
    assert_eq!(dumped.inversion(&start, &seq), Some(0));
}

#[test]
fn a_piece_a_board_dump_named_arrived_by_the_dump() {
    // Across a gap, a dump at 1000 named White's knight on f3 (g1 empty); ...e5 was seen
    // made at 5000-5200, after the dump. The knight's move came before it, not after.
    let start = Chess::default();
    let t = times(&[
        (Square::G1, 1000),
        (Square::F3, 1000),
        (Square::E7, 5000),
        (Square::E5, 5200),
    ]);
    let placed = [(Square::F3, Piece::from_char('N').unwrap(), 1000)];
    let named = Reports {
        undated: Bitboard::from(Square::G1) | Bitboard::from(Square::F3),
        placed: Some(&placed),
        ..reported(&t, &t)
    };
    let before = moves_from(&start, &["g1f3", "e7e5"]);
    let after = moves_from(&start, &["b1c3", "e7e5", "g1f3"]);
    assert_eq!(named.inversion(&start, &before), Some(0));
    assert_eq!(named.inversion(&start, &after), None);
    // An occupancy board's dump names no piece: it dates nothing.
    let occupancy = Reports {
        placed: None,
        ..named
    };
    assert_eq!(occupancy.inversion(&start, &after), Some(0));
}

fn after_moves(ucis: &[&str]) -> Vec<Move> {
    moves_from(&Chess::default(), ucis)
}

/// The moves `ucis` played from `start`.
pub(in crate::act) fn moves_from(start: &Chess, ucis: &[&str]) -> Vec<Move> {
    let mut pos = start.clone();
    ucis.iter()
        .map(|u| {
            let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            m
        })
        .collect()
}

/// The position `fen` sets up.
pub(in crate::act) fn position(fen: &str, chess960: bool) -> Chess {
    crate::rules::Game::from_fen(fen, chess960)
        .unwrap()
        .start()
        .clone()
}

/// `moves` played from `start`.
fn played(start: &Chess, moves: &[Move]) -> Chess {
    let mut pos = start.clone();
    for &m in moves {
        pos.play_unchecked(m);
    }
    pos
}

/// What a board that senses only occupancy senses when it shows `board`.
fn occupancy(board: &Board) -> Sensed<'_> {
    Sensed {
        board,
        identifies: false,
        placed: Bitboard::EMPTY,
    }
}

/// On a board that senses only occupancy, a piece still in the hand and a capture on a
/// square the board never reported leave the same squares: only a report on the captured
/// square makes the capture an explanation (24...Nd7 in the hand, 25.Rbc1 made, read as
/// 24...Nxb3 25.Rbc1).
#[test]
fn an_occupancy_board_needs_a_report_on_a_captured_square() {
    let start = position(
        "r1q3kr/5pp1/4b2p/2n5/3Q3N/pP2B3/P4PPP/1R3RK1 b - - 1 24",
        false,
    );
    let read = moves_from(&start, &["c5b3", "b1c1"]);
    let reached = played(&start, &read);
    let s = occupancy(reached.board());
    let in_the_hand = times(&[(Square::C5, 100), (Square::B1, 200), (Square::C1, 210)]);
    assert_eq!(
        s.sequences(&start, 2, &reported(&in_the_hand, &in_the_hand)),
        Explanation::None
    );
    let captured = times(&[
        (Square::C5, 100),
        (Square::B3, 150),
        (Square::B1, 200),
        (Square::C1, 210),
    ]);
    assert_eq!(
        s.sequences(&start, 2, &reported(&captured, &captured)),
        Explanation::Unique(read)
    );
}

/// A bishop put on e4 and taken on to b7 after the reply, e4 never reported (a twic game
/// on a Bluetooth board scanning at half speed): only a search for a stay between two
/// scans finds it, and not across a gap in the link, where nothing is expected reported.
#[test]
fn a_piece_stood_unseen_is_found_only_when_looked_for() {
    let start = position(
        "6k1/B4pp1/1P2p1np/2p5/2P3P1/R6P/P4P2/1b1r1BK1 b - - 0 37",
        false,
    );
    let read = moves_from(&start, &["b1e4", "a3e3", "e4b7"]);
    let reached = played(&start, &read);
    let s = occupancy(reached.board());
    let t = times(&[
        (Square::B1, 100),
        (Square::A3, 467),
        (Square::E3, 498),
        (Square::B7, 1225),
    ]);
    let reports = reported(&t, &t);
    assert_eq!(s.sequences(&start, 3, &reports), Explanation::None);
    assert_eq!(
        s.sequences_with_unseen_stay(&start, 3, &reports),
        Explanation::Unique(read)
    );
    let outage = Reports {
        outage: true,
        ..reports
    };
    assert_eq!(
        s.sequences_with_unseen_stay(&start, 3, &outage),
        Explanation::None
    );
}

#[test]
fn a_reported_square_no_move_touches_is_left_unexplained() {
    // After 1.d4 c6 2.d5: ...e5 dxe6 and ...e6 dxe6 leave the same board; the board reported
    // e5 filled and emptied, which only the double step explains.
    let start = after(&["d2d4", "c7c6", "d4d5"]);
    let t = times(&[
        (Square::E7, 100),
        (Square::D5, 200),
        (Square::E5, 500),
        (Square::E6, 400),
    ]);
    let reports = reported(&t, &t);
    let double = moves_from(&start, &["e7e5", "d5e6"]);
    let single = moves_from(&start, &["e7e6", "d5e6"]);
    assert_eq!(reports.unexplained(&start, &double), Bitboard::EMPTY);
    assert_eq!(
        reports.unexplained(&start, &single),
        Bitboard::from(Square::E5)
    );
}

#[test]
fn a_press_after_the_lift_vouches_for_a_capture_only_with_nothing_put_down_between() {
    // After 1. e4 d5, White's pawn is lifted from e4 at 1000 and White presses at 1200:
    // exd5 was made, wherever the board failed to show it land.
    let start: Chess = after(&["e2e4", "d7d5"]);
    let seq = moves_from(&start, &["e4d5"]);
    let lifted = times(&[(Square::E4, 1000)]);
    let pressed = Reports {
        pressed: [None, Some(1200)],
        ..reported(&lifted, &[None; 64])
    };
    assert!(pressed.pressed_after_lift(&start, &seq, 0));
    // Black's hand on the board meanwhile (his pawn lifted from d5) is no landing of White's.
    let reply_begun = times(&[(Square::E4, 1000), (Square::D5, 1100)]);
    let with_reply = Reports {
        times: &reply_begun,
        ..pressed
    };
    assert!(with_reply.pressed_after_lift(&start, &seq, 0));
    // A square put down on between the lift and the press may be where the pawn went.
    let put_down = times(&[(Square::E4, 1000), (Square::E5, 1100)]);
    let landed = Reports {
        times: &put_down,
        ..pressed
    };
    assert!(!landed.pressed_after_lift(&start, &seq, 0));
    // A press before the lift, or Black's press, says nothing of White's move.
    let early = Reports {
        pressed: [None, Some(900)],
        ..pressed
    };
    assert!(!early.pressed_after_lift(&start, &seq, 0));
    let black = Reports {
        pressed: [Some(1200), None],
        ..pressed
    };
    assert!(!black.pressed_after_lift(&start, &seq, 0));
}

#[test]
fn a_reply_made_or_pressed_after_a_scan_shows_the_move_before_it_over() {
    // After 1. e4 d5, White's pawn is lifted from e4 at 1000 (exd5, its landing unseen) and
    // Black answers Nf6: the knight lifted from g8 and put on f6.
    let start: Chess = after(&["e2e4", "d7d5"]);
    let seq = moves_from(&start, &["e4d5", "g8f6"]);
    let made = times(&[(Square::E4, 1000), (Square::G8, 2000), (Square::F6, 2400)]);
    assert!(reported(&made, &[None; 64]).answered(&start, &seq, 0));
    // Within a scan of White's lift, the reply's reports may come before White's landing is
    // sampled: White's move may still have been under way.
    let quick = times(&[(Square::E4, 1000), (Square::G8, 1200), (Square::F6, 1500)]);
    assert!(!reported(&quick, &[None; 64]).answered(&start, &seq, 0));
    // The knight lifted but not yet shown put down answers only with Black's press after it.
    let lifted = times(&[(Square::E4, 1000), (Square::G8, 2000)]);
    let unpressed = reported(&lifted, &[None; 64]);
    assert!(!unpressed.answered(&start, &seq, 0));
    let pressed = Reports {
        pressed: [Some(2300), None],
        ..unpressed
    };
    assert!(pressed.answered(&start, &seq, 0));
    // A reply begun before White's lift answers nothing of White's move.
    let before = times(&[(Square::E4, 1000), (Square::G8, 900), (Square::F6, 2400)]);
    assert!(!reported(&before, &[None; 64]).answered(&start, &seq, 0));
}

#[test]
fn on_an_occupancy_board_a_report_before_the_capturers_lift_is_no_capture() {
    // After 1. e4 d5 2. exd5, Black's queen takes back on d5. The board reported d5 at 1000
    // (White's pawn arriving) and the queen lifted from d8 at 3000: that report is the pawn's,
    // and the capture itself left d5 full.
    let start: Chess = after(&["e2e4", "d7d5", "e4d5"]);
    let capture = moves_from(&start, &["d8d5"])[0];
    let reports = times(&[(Square::D5, 1000), (Square::D8, 3000)]);
    let occupancy = reported(&reports, &[None; 64]);
    assert!(!occupancy.capture_landing_reported(capture));
    assert_eq!(
        occupancy.inversion(&start, &[capture]),
        Some(0),
        "the victim's arrival is no arrival of the capturer"
    );
    // Within a scan's reordering of the lift, the report may be the capture's.
    let close = times(&[(Square::D5, 2700), (Square::D8, 3000)]);
    assert!(reported(&close, &[None; 64]).capture_landing_reported(capture));
}

/// On a board that senses only occupancy, an exchange on one square shows only the squares
/// the two capturers left: the square they took on stays occupied while a capturer is put
/// down as (or before) its victim comes off, so no frame shows it, however often frames come.
/// The reply after it shows the exchange over. Found on a Sentio at blitz pace (`touchmove
/// simulate --seed 128 --boards 6 --faults 4 --keep-boards 3 --keep-faults none`: the game
/// stopped at ply 22 of 75).
#[test]
fn an_exchange_on_one_square_is_read_on_an_occupancy_board_that_sends_whole_frames() {
    let start = after(&["e2e4", "d7d5"]);
    let target = after(&["e2e4", "d7d5", "e4d5", "d8d5", "b1c3"]);
    let s = Sensed {
        board: target.board(),
        identifies: false,
        placed: Bitboard::from(Square::C3),
    };
    let t = times(&[
        (Square::E4, 1_100),
        (Square::D8, 1_900),
        (Square::B1, 2_500),
        (Square::C3, 2_600),
    ]);
    for whole_frames in [false, true] {
        let reports = Reports {
            since: 1_000,
            whole_frames,
            ..reported(&t, &t)
        };
        assert_eq!(
            s.sequences(&start, 4, &reports),
            Explanation::Unique(moves_from(&start, &["e4d5", "d8d5", "b1c3"])),
            "whole frames: {whole_frames}"
        );
    }
}

/// The orders of `moves` (played from `start` in that order) that are legal, keep the
/// players' turns and leave the same board: each reading the board alone cannot tell from
/// the one played.
fn orders_to_same_board(start: &Chess, moves: &[Move]) -> usize {
    fn extend(pos: &Chess, left: &mut Vec<Move>, target: &Board, count: &mut usize) {
        if left.is_empty() {
            *count += usize::from(pos.board() == target);
            return;
        }
        for i in 0..left.len() {
            let m = left[i];
            if !pos.is_legal(m) {
                continue;
            }
            let mut next = pos.clone();
            next.play_unchecked(m);
            left.remove(i);
            extend(&next, left, target, count);
            left.insert(i, m);
        }
    }
    let mut end = start.clone();
    for &m in moves {
        end.play_unchecked(m);
    }
    let mut count = 0;
    extend(start, &mut moves.to_vec(), end.board(), &mut count);
    count
}

/// A random position, then `plies` random moves on squares no other of them uses (each
/// square is reported once, and the reports fit every order of them alike): the position
/// before them and the moves, or `None` when the draw found no such moves.
fn draw_history(rng: &mut rand_chacha::ChaCha8Rng, plies: usize) -> Option<(Chess, Vec<Move>)> {
    use rand::Rng;
    use rand::seq::SliceRandom;
    let mut before = Chess::default();
    for _ in 0..rng.gen_range(8..30) {
        let m = *before.legal_moves().choose(rng)?;
        before.play_unchecked(m);
    }
    let mut pos = before.clone();
    let mut history = Vec::new();
    let mut used = Bitboard::EMPTY;
    while history.len() < plies {
        let legal: Vec<Move> = pos
            .legal_moves()
            .into_iter()
            .filter(|&m| (squares_of(m) & used).is_empty())
            .collect();
        let m = *legal.choose(rng)?;
        used |= squares_of(m);
        history.push(m);
        pos.play_unchecked(m);
    }
    (!pos.is_game_over()).then_some((before, history))
}

/// Item 3 of issue 58, as a property over random board histories: plies made between two
/// reports of a DGT board that name every square they changed at one time (a dump after lost
/// updates), on squares no two of them share, so that no report tells their orders apart.
/// When more orders fit than the search keeps (five plies), its answer is no choice: neither
/// one sequence nor a list a later rule could pick from as if it were whole, since the orders
/// it did not keep fit as well. When two fit (three plies), neither is chosen and the one
/// played is named.
#[test]
fn no_reading_is_chosen_from_a_list_the_search_cut_short() {
    use rand::SeedableRng;
    let (mut beyond_limit, mut two) = (0, 0);
    for seed in 0..300u64 {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for plies in [5, 3] {
            let Some((before, history)) = draw_history(&mut rng, plies) else {
                continue;
            };
            let mut end = before.clone();
            for &m in &history {
                end.play_unchecked(m);
            }
            let changed = crate::act::physical::board_diff(before.board(), end.board(), true);
            let mut t = [None; 64];
            for sq in changed {
                t[sq as usize] = Some(1_000);
            }
            let reports = reported(&t, &t);
            let found = sensed(end.board()).sequences(&before, plies, &reports);
            let shorter = match &found {
                Explanation::Unique(seq) => seq.len() < plies,
                Explanation::Ambiguous(seqs) => seqs.iter().any(|seq| seq.len() < plies),
                _ => false,
            };
            if shorter {
                // Fewer moves explain the board: the reading is of them, not of these orders.
                continue;
            }
            let orders = orders_to_same_board(&before, &history);
            if orders > sequences::SEQUENCES_KEPT {
                beyond_limit += 1;
                assert!(
                    !matches!(found, Explanation::Unique(_) | Explanation::Ambiguous(_)),
                    "seed {seed}: {orders} orders fit, the search gave {found:?}"
                );
            } else if orders == 2 {
                two += 1;
                assert!(
                    !matches!(found, Explanation::Unique(_)),
                    "seed {seed}: two orders fit, the search chose {found:?}"
                );
                if let Explanation::Ambiguous(seqs) = &found {
                    assert!(seqs.contains(&history), "seed {seed}: {seqs:?}");
                }
            }
        }
    }
    assert!(
        beyond_limit >= 20 && two >= 20,
        "the histories drawn must include both cases: {beyond_limit} beyond the limit, {two} \
         with two orders"
    );
}

/// Seven moves made while the link was down, in a blitz game (TWIC 1599, Praggnanandhaa–
/// Rapport, 18.Nc1 Qd7 19.Bc4 Rc8 20.Qe2 e4 21.Bb3): the board's dump after the gap is read
/// within the search's limit, every order of them named.
#[test]
fn a_gap_of_seven_moves_is_read_within_the_search_limit() {
    let fen = "3q1rk1/5pb1/1p1p2p1/1N1Ppb1p/rp5P/5P2/PP1QN1P1/K2R1B1R w - - 3 18";
    let start: Chess = fen
        .parse::<shakmaty::fen::Fen>()
        .unwrap()
        .into_position(shakmaty::CastlingMode::Standard)
        .unwrap();
    let played = moves_from(
        &start,
        &["e2c1", "d8d7", "f1c4", "f8c8", "d2e2", "e5e4", "c4b3"],
    );
    let mut end = start.clone();
    for &m in &played {
        end.play_unchecked(m);
    }
    let s = sensed(end.board());
    // After the gap only the dump's changed squares are reported, at the dump's time.
    let changed = board_diff(start.board(), end.board(), true);
    let t = times(
        &changed
            .into_iter()
            .map(|sq| (sq, 1_000))
            .collect::<Vec<_>>(),
    );
    let reports = Reports {
        undated: changed,
        outage: true,
        ..reported(&t, &t)
    };
    let Explanation::Ambiguous(orders) = s.sequences(&start, 8, &reports) else {
        panic!("every order of the gap's moves");
    };
    assert_eq!(orders.len(), 6);
    assert!(orders.contains(&played));
}
