//! The legality core: a game with its full history over shakmaty, and the end of the game as
//! the FIDE Laws define it (Articles 3, 5, 6.9, 9 and Chess960).

mod game;

pub use game::{Game, GameError, PlayedMove};
