//! Which way round the board lies, and recognising start positions in either orientation.
//!
//! DGT boards number their fields 0 = a8 … 63 = h1 as seen with the connector on White's
//! left. With the board turned round (White sitting at the other end) every index is
//! mirrored: field `i` is then square `63 - i` of the normal mapping.

use serde::{Deserialize, Serialize};
use shakmaty::{Bitboard, Board, Color, File, Rank, Role, Square};

/// How the board lies relative to the players.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Orientation {
    /// Connector on White's left: field 0 is a8.
    #[default]
    Normal,
    /// Turned round: field 0 is h1.
    Rotated,
}

impl Orientation {
    /// The game square of a board field (only the low six bits of `field` are used).
    pub fn field_to_square(self, field: u8) -> Square {
        let field = u32::from(field & 63);
        let field = match self {
            Orientation::Normal => field,
            Orientation::Rotated => 63 - field,
        };
        Square::from_coords(File::new(field & 7), Rank::new(7 - (field >> 3)))
    }

    /// The board field of a game square (the inverse of [`Orientation::field_to_square`]).
    pub fn square_to_field(self, square: Square) -> u8 {
        let normal = (7 - u32::from(square.rank())) * 8 + u32::from(square.file());
        let field = match self {
            Orientation::Normal => normal,
            Orientation::Rotated => 63 - normal,
        };
        field as u8
    }

    /// The other orientation.
    pub fn flipped(self) -> Self {
        match self {
            Orientation::Normal => Orientation::Rotated,
            Orientation::Rotated => Orientation::Normal,
        }
    }

    /// The orientation in which `seen` (read with the [`Orientation::Normal`] mapping) is a
    /// start position: the standard one, any Chess960 one, or one of `setups` (positions the
    /// caller expects, e.g. from a FEN). `None` when it is a start position in neither
    /// orientation, or in both (a symmetric set-up tells nothing).
    pub fn detect(seen: &Board, setups: &[Board]) -> Option<Orientation> {
        let is_start = |b: &Board| is_chess960_start(b) || setups.contains(b);
        let normal = is_start(seen);
        let rotated = is_start(&rotated(seen));
        match (normal, rotated) {
            (true, false) => Some(Orientation::Normal),
            (false, true) => Some(Orientation::Rotated),
            _ => None,
        }
    }
}

/// The board turned round (every square mirrored through the centre).
pub fn rotated(board: &Board) -> Board {
    let mut b = board.clone();
    b.rotate_180();
    b
}

/// True for the standard start position and the other 959 Chess960 start positions.
pub fn is_chess960_start(board: &Board) -> bool {
    let rank = |r: Rank| Bitboard::from_rank(r);
    let white_pawns = board.by_piece(Role::Pawn.of(Color::White));
    let black_pawns = board.by_piece(Role::Pawn.of(Color::Black));
    if white_pawns != rank(Rank::Second)
        || black_pawns != rank(Rank::Seventh)
        || board.by_color(Color::White) != rank(Rank::First) | rank(Rank::Second)
        || board.by_color(Color::Black) != rank(Rank::Seventh) | rank(Rank::Eighth)
    {
        return false;
    }
    let roles: Vec<Role> = File::ALL
        .iter()
        .filter_map(|&f| board.role_at(Square::from_coords(f, Rank::First)))
        .collect();
    let mirrored = File::ALL.iter().zip(&roles).all(|(&f, &role)| {
        board.piece_at(Square::from_coords(f, Rank::Eighth)) == Some(role.of(Color::Black))
    });
    let files_of = |role: Role| -> Vec<usize> {
        roles
            .iter()
            .enumerate()
            .filter(|(_, r)| **r == role)
            .map(|(i, _)| i)
            .collect()
    };
    let (rooks, knights, bishops) = (
        files_of(Role::Rook),
        files_of(Role::Knight),
        files_of(Role::Bishop),
    );
    let (queens, kings) = (files_of(Role::Queen), files_of(Role::King));
    mirrored
        && rooks.len() == 2
        && knights.len() == 2
        && bishops.len() == 2
        && queens.len() == 1
        && kings.len() == 1
        && bishops[0] % 2 != bishops[1] % 2
        && rooks[0] < kings[0]
        && kings[0] < rooks[1]
}
