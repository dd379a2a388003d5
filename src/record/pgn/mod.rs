//! PGN out and in: the one writer every output uses (replay, the recorder's files, the
//! server, the demo) and the one reader every input uses (PGN files to check, to simulate, to
//! take results from).

mod read;
mod write;

pub use read::{
    Games, PgnError, ReadGame, games, parse_clock, read_games, read_games_bytes, text_of,
};
pub use write::{clock_text, write_game, write_games};
