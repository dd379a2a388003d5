//! The bounds of board and round numbers, shared by event files, pairings and the command line.

/// The highest board number accepted: no event has more boards, and a typo (`4294967295`)
/// must not make the recorder list billions of boards.
pub const MAX_BOARD: u32 = 2_000;

/// The highest round number accepted.
pub const MAX_ROUND: u32 = 99;

/// Checks a board number: 1 to [`MAX_BOARD`]. The error says what is wrong.
pub fn check_board(number: i64) -> Result<u32, String> {
    u32::try_from(number)
        .ok()
        .filter(|n| (1..=MAX_BOARD).contains(n))
        .ok_or_else(|| format!("board number must be from 1 to {MAX_BOARD}, not {number}"))
}

/// Checks a round number: 1 to [`MAX_ROUND`]. The error says what is wrong.
pub fn check_round(number: i64) -> Result<u32, String> {
    u32::try_from(number)
        .ok()
        .filter(|n| (1..=MAX_ROUND).contains(n))
        .ok_or_else(|| format!("round must be from 1 to {MAX_ROUND}, not {number}"))
}
