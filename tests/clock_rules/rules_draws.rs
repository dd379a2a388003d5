//! The draw and end rules of the Laws on hand-built histories: 9.2 (threefold, with the
//! castling and en passant subtleties of 9.2.2), 9.3 (fifty moves), 9.6.1 (fivefold), 9.6.2
//! (75 moves, mate on the last move stands), 5.1.1, 5.2.1, 5.2.2 and 6.9.

use shakmaty::Color;
use shakmaty::Position;
use touchmove::rules::{Budget, EndReason, Game, GameResult, flag_fall};

fn play(game: &mut Game, moves: &str) {
    for san in moves.split_whitespace() {
        game.play_san(san)
            .unwrap_or_else(|e| panic!("{san} should be legal: {e}"));
    }
}

fn san_move(game: &Game, san: &str) -> shakmaty::Move {
    game.parse_san(san).unwrap()
}

const SHUFFLE: &str = "Nf3 Nf6 Ng1 Ng8";

#[test]
fn threefold_counts_the_start_position() {
    let mut game = Game::standard();
    play(&mut game, SHUFFLE);
    let verdict = game.claim_threefold(None);
    assert!(!verdict.valid, "{}", verdict.explanation);
    assert_eq!(verdict.plies, vec![0, 4]);
    play(&mut game, SHUFFLE);
    let verdict = game.claim_threefold(None);
    assert!(verdict.valid, "{}", verdict.explanation);
    assert_eq!(verdict.plies, vec![0, 4, 8]);
}

#[test]
fn threefold_claim_with_the_intended_move() {
    let mut game = Game::standard();
    play(&mut game, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1");
    assert!(!game.claim_threefold(None).valid);
    let intended = san_move(&game, "Ng8");
    let verdict = game.claim_threefold(Some(intended));
    assert!(verdict.valid, "{}", verdict.explanation);
    assert_eq!(verdict.plies, vec![0, 4, 8]);
    let other = san_move(&game, "Nc6");
    assert!(!game.claim_threefold(Some(other)).valid);
    let illegal = san_move(&Game::standard(), "e4");
    let mut after_e4 = Game::standard();
    play(&mut after_e4, "e4");
    assert!(!after_e4.claim_threefold(Some(illegal)).valid);
}

#[test]
fn lost_castling_rights_make_a_different_position() {
    let mut game = Game::from_fen("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1", false).unwrap();
    let rook_shuffle = "Rb1 Rb8 Ra1 Ra8";
    play(&mut game, rook_shuffle);
    // Same pieces on the same squares as the start, but no castling rights now.
    assert_eq!(game.occurrences(4), vec![4]);
    play(&mut game, rook_shuffle);
    play(&mut game, rook_shuffle);
    let verdict = game.claim_threefold(None);
    assert!(verdict.valid);
    assert_eq!(verdict.plies, vec![4, 8, 12]);
}

#[test]
fn en_passant_square_without_a_legal_capture_does_not_count() {
    let mut game = Game::standard();
    // After 1.e4 the en passant square e3 has no capturer: the position is the same as the one
    // reached later by knight moves.
    play(&mut game, "e4 Nf6 Nf3 Ng8 Ng1 Nf6 Nf3 Ng8 Ng1");
    let verdict = game.claim_threefold(None);
    assert!(verdict.valid, "{}", verdict.explanation);
    assert_eq!(verdict.plies, vec![1, 5, 9]);
}

#[test]
fn a_legal_en_passant_capture_makes_a_different_position() {
    let mut game = Game::from_fen("4k3/8/8/8/3p4/8/4P3/4K3 w - - 0 1", false).unwrap();
    let king_shuffle = "Kd7 Kd1 Ke8 Ke1";
    play(&mut game, "e4");
    play(&mut game, king_shuffle);
    play(&mut game, king_shuffle);
    // Ply 1 had dxe3 available; plies 5 and 9 look the same but do not.
    assert_eq!(game.occurrences(9), vec![5, 9]);
    assert!(!game.claim_threefold(None).valid);
}

#[test]
fn a_pinned_en_passant_capturer_does_not_count() {
    // After 1...e5 the d5 pawn could take en passant, but it is pinned on the fifth rank by
    // the rook on h5: the e6 square gives no legal move, so the position repeats later.
    let mut game = Game::from_fen("8/4p3/8/K2P3r/8/8/8/7k b - - 0 1", false).unwrap();
    play(&mut game, "e5 Kb4 Kg1 Ka5 Kh1 Kb4 Kg1 Ka5 Kh1");
    assert_eq!(game.occurrences(9), vec![1, 5, 9]);
}

#[test]
fn fivefold_ends_the_game_even_when_not_consecutive() {
    let mut game = Game::standard();
    let budget = Budget::static_only();
    for _ in 0..3 {
        play(&mut game, SHUFFLE);
    }
    assert_eq!(game.occurrences(game.plies()).len(), 4);
    play(&mut game, "Nc3 Nc6 Nf3 Nf6 Nb1 Nb8 Ng1");
    assert_eq!(game.automatic_end(&budget), None);
    play(&mut game, "Ng8");
    let end = game.automatic_end(&budget).expect("fivefold");
    assert_eq!(end.reason, EndReason::FivefoldRepetition);
    assert_eq!(end.result, GameResult::Draw);
    assert_eq!(game.occurrences(game.plies()), vec![0, 4, 8, 12, 20]);
}

#[test]
fn fifty_move_claim_with_and_without_the_intended_move() {
    let game = Game::from_fen("4k3/8/8/8/8/8/4P3/R3K3 w - - 99 80", false).unwrap();
    let without = game.claim_fifty(None);
    assert!(!without.valid, "{}", without.explanation);
    let rook = game.claim_fifty(Some(san_move(&game, "Ra2")));
    assert!(rook.valid, "{}", rook.explanation);
    let pawn = game.claim_fifty(Some(san_move(&game, "e4")));
    assert!(!pawn.valid);

    let mut game = Game::standard();
    play(&mut game, "e4 e5");
    for _ in 0..25 {
        play(&mut game, SHUFFLE);
    }
    let verdict = game.claim_fifty(None);
    assert!(verdict.valid, "{}", verdict.explanation);
    assert_eq!(verdict.plies, vec![2]);
    game.truncate(game.plies() - 1);
    assert!(!game.claim_fifty(None).valid);
}

#[test]
fn seventy_five_moves_end_the_game_but_a_mate_on_the_last_move_stands() {
    let budget = Budget::static_only();
    let mut quiet = Game::from_fen("7k/8/6K1/8/8/8/8/R7 w - - 149 120", false).unwrap();
    assert_eq!(quiet.automatic_end(&budget), None);
    play(&mut quiet, "Rb1");
    let end = quiet.automatic_end(&budget).expect("75 moves");
    assert_eq!(end.reason, EndReason::SeventyFiveMoveRule);
    assert_eq!(end.result, GameResult::Draw);

    let mut mate = Game::from_fen("7k/8/6K1/8/8/8/8/R7 w - - 149 120", false).unwrap();
    play(&mut mate, "Ra8#");
    assert_eq!(mate.position().halfmoves(), 150);
    let end = mate.automatic_end(&budget).expect("mate");
    assert_eq!(end.reason, EndReason::Checkmate);
    assert_eq!(end.result, GameResult::WhiteWins);
}

#[test]
fn checkmate_and_stalemate() {
    let budget = Budget::static_only();
    let mut fools = Game::standard();
    play(&mut fools, "f3 e5 g4 Qh4#");
    let end = fools.automatic_end(&budget).unwrap();
    assert_eq!(
        (end.result, end.reason),
        (GameResult::BlackWins, EndReason::Checkmate)
    );
    assert_eq!(end.result.pgn_token(), "0-1");

    let mut stale = Game::from_fen("7k/8/5K2/8/8/8/8/6Q1 w - - 0 1", false).unwrap();
    assert_eq!(stale.automatic_end(&budget), None);
    play(&mut stale, "Qg2");
    assert_eq!(stale.automatic_end(&budget), None);
    stale.truncate(0);
    play(&mut stale, "Qg6");
    let end = stale.automatic_end(&budget).unwrap();
    assert_eq!(
        (end.result, end.reason),
        (GameResult::Draw, EndReason::Stalemate)
    );
    assert_eq!(end.reason.to_string(), "stalemate");
}

#[test]
fn dead_positions_end_the_game() {
    let budget = Budget::deterministic();
    // A capture leaves king and bishop against king: insufficient material.
    let mut bishop = Game::from_fen("4k3/8/8/8/8/8/3r4/3BK3 w - - 0 1", false).unwrap();
    assert_eq!(bishop.automatic_end(&budget), None);
    play(&mut bishop, "Kxd2");
    assert_eq!(
        bishop.automatic_end(&budget).unwrap().reason,
        EndReason::DeadPosition
    );

    // A locked pawn wall with bishops that cannot break through: dead, with all the material.
    let mut wall =
        Game::from_fen("2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1", false).unwrap();
    play(&mut wall, "Kd1");
    let end = wall.automatic_end(&budget).unwrap();
    assert_eq!(
        (end.result, end.reason),
        (GameResult::Draw, EndReason::DeadPosition)
    );

    // The same wall with an open file is alive.
    let mut open = Game::from_fen("2b1k3/8/8/1p1p1p2/1P1P1P2/8/8/2B1K3 w - - 0 1", false).unwrap();
    play(&mut open, "Kd1");
    assert_eq!(open.automatic_end(&budget), None);
}

#[test]
fn flag_fall_is_a_loss_unless_the_opponent_cannot_checkmate() {
    let budget = Budget::deterministic();
    // Black has a lone knight against a bare king: Black cannot mate, White's flag is a draw.
    let knight = Game::from_fen("4k3/8/8/8/8/8/8/2n1K3 w - - 0 1", false).unwrap();
    let end = flag_fall(&knight, Color::White, &budget);
    assert_eq!(
        (end.result, end.reason),
        (GameResult::Draw, EndReason::FlagFallOpponentCannotCheckmate)
    );
    assert_eq!(
        end.reason.to_string(),
        "flag fall, opponent cannot checkmate"
    );
    // Black's own flag: White, with a bare king, cannot mate either.
    assert_eq!(
        flag_fall(&knight, Color::Black, &budget).result,
        GameResult::Draw
    );

    // With a white pawn on the board a knight can mate (the pawn may block its own king).
    let pawn = Game::from_fen("4k3/8/8/8/8/8/P7/2n1K3 w - - 0 1", false).unwrap();
    let end = flag_fall(&pawn, Color::White, &budget);
    assert_eq!(
        (end.result, end.reason),
        (GameResult::BlackWins, EndReason::FlagFall)
    );

    // A locked wall: neither side can mate, so a flag fall is a draw (6.9).
    let wall = Game::from_fen("2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1", false).unwrap();
    assert_eq!(
        flag_fall(&wall, Color::Black, &budget).result,
        GameResult::Draw
    );
}

#[test]
fn arbiter_claims_take_the_intended_move_in_any_notation() {
    use touchmove::record::arbiter::DrawClaim;
    let mut game = Game::standard();
    play(&mut game, "Nf3 Nf6 Ng1 Ng8 Nf3 Nf6 Ng1");
    for text in ["Ng8", "g8-h6", "f6g8", "Nf6-g8"] {
        let verdict = DrawClaim::Threefold.check(&game, Some(text));
        match text {
            "g8-h6" => assert!(verdict.is_err(), "{text}: no piece on g8"),
            _ => assert!(verdict.unwrap().valid, "{text}"),
        }
    }
    assert!(!DrawClaim::Threefold.check(&game, None).unwrap().valid);
    assert!(
        !DrawClaim::FiftyMoves
            .check(&game, Some("Ng8"))
            .unwrap()
            .valid
    );
}
