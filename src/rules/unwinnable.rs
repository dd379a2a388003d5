//! Unwinnability (FIDE 5.2.2 dead position, 6.9 flag fall): can a side still checkmate by any
//! series of legal moves?
//!
//! The analysis runs in tiers. The static tier (shakmaty's material test) answers most endgames
//! in nanoseconds. The complete tier is chasolver (Ambrona's algorithm, MIT), run under a
//! [`Budget`]: with a time limit it runs on a worker thread and the caller stops waiting at the
//! deadline (the answer is then `None`, undetermined); with [`Budget::deterministic`] it runs on
//! the caller's thread bounded only by chasolver's own node limits, so the same position always
//! gives the same answer.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use chasolver::Winnability;
use shakmaty::{Bitboard, CastlingSide, Chess, Color, Position, Role, Square};

/// How much analysis a question about unwinnability may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    time: Option<Duration>,
    search: bool,
}

impl Budget {
    /// At most `ms` milliseconds of wall-clock time; the search runs on a worker thread.
    pub fn millis(ms: u64) -> Budget {
        Budget {
            time: Some(Duration::from_millis(ms)),
            search: true,
        }
    }

    /// The full search on the caller's thread, bounded by the solver's own node limits
    /// (deterministic: the same position always gets the same answer; constructed positions can
    /// take seconds).
    pub fn deterministic() -> Budget {
        Budget {
            time: None,
            search: true,
        }
    }

    /// No search at all: only the static material test (deterministic, nanoseconds).
    pub fn static_only() -> Budget {
        Budget {
            time: None,
            search: false,
        }
    }

    /// The wall-clock limit, if any.
    pub fn time_limit(&self) -> Option<Duration> {
        self.time
    }
}

impl Default for Budget {
    /// One second, the CLI's default.
    fn default() -> Budget {
        Budget::millis(1000)
    }
}

/// Workers still running after their caller stopped waiting; past this many, new questions are
/// answered "undetermined" at once instead of piling up threads.
const MAX_ABANDONED_WORKERS: usize = 4;
static ABANDONED_WORKERS: AtomicUsize = AtomicUsize::new(0);

/// Can `side` checkmate from `pos` by some series of legal moves (the opponent cooperating)?
/// `Some(true)`: a helpmate exists; `Some(false)`: provably none; `None`: undetermined within
/// the budget.
pub fn can_checkmate(pos: &Chess, side: Color, budget: &Budget) -> Option<bool> {
    if pos.has_insufficient_material(side) {
        return Some(false);
    }
    if !budget.search {
        return None;
    }
    let (board, exact) = solver_board(pos)?;
    let verdict = run_within(budget, move || {
        chasolver::winnability(&board, solver_color(side))
    })??;
    match verdict {
        Winnability::Winnable { .. } => Some(true),
        // Castling rights the solver cannot represent were dropped: a proof of unwinnability
        // without them says nothing about the real position.
        Winnability::Unwinnable if exact => Some(false),
        Winnability::Unwinnable => None,
    }
}

/// Is `pos` a dead position (5.2.2): can neither side checkmate? `None` when undetermined.
pub fn is_dead(pos: &Chess, budget: &Budget) -> Option<bool> {
    if pos.is_insufficient_material() {
        return Some(true);
    }
    let mover = pos.turn();
    let first = can_checkmate(pos, mover, budget);
    if first == Some(true) {
        return Some(false);
    }
    let second = can_checkmate(pos, !mover, budget);
    match (first, second) {
        (_, Some(true)) => Some(false),
        (Some(false), Some(false)) => Some(true),
        _ => None,
    }
}

/// With at most this many legal moves, a forced sequence may lead into a dead position, so
/// [`crate::rules::Game::automatic_end`] runs the analysis whatever the pawns look like.
pub const FEW_MOVES: usize = 4;

/// A cheap test that a dead position is possible at all, so the full analysis can be skipped on
/// ordinary positions: true when no pawn is free, i.e. every pawn has something right in front
/// of it or a pawn further up its file. Together with [`FEW_MOVES`] it is checked against every
/// dead position of the labelled set (`tests/rules_dead.rs`).
pub fn dead_position_possible(pos: &Chess) -> bool {
    let board = pos.board();
    let pawns = board.pawns();
    let occupied = board.occupied();
    let has_free_pawn = pawns.into_iter().any(|sq| {
        let color = match board.color_at(sq) {
            Some(c) => c,
            None => return false,
        };
        let ahead = file_ahead(sq, color);
        match ahead.first_toward(color) {
            Some(next) => !occupied.contains(next) && (ahead & pawns).is_empty(),
            None => false,
        }
    });
    !has_free_pawn
}

/// The squares in front of a pawn on its file, from its own side's point of view.
fn file_ahead(sq: Square, color: Color) -> Bitboard {
    let file = Bitboard::from_file(sq.file());
    let rank = u32::from(sq.rank());
    let mask = match color {
        Color::White if rank < 7 => Bitboard(u64::MAX << (8 * (rank + 1))),
        Color::Black if rank > 0 => Bitboard(!(u64::MAX << (8 * rank))),
        _ => Bitboard::EMPTY,
    };
    file & mask
}

trait FirstToward {
    fn first_toward(self, color: Color) -> Option<Square>;
}

impl FirstToward for Bitboard {
    fn first_toward(self, color: Color) -> Option<Square> {
        match color {
            Color::White => self.first(),
            Color::Black => self.last(),
        }
    }
}

/// Runs `work` within the budget's time limit; `None` if the deadline passed first.
fn run_within<T, F>(budget: &Budget, work: F) -> Option<T>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let Some(limit) = budget.time else {
        return Some(work());
    };
    if ABANDONED_WORKERS.load(Ordering::Relaxed) >= MAX_ABANDONED_WORKERS {
        return None;
    }
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("unwinnability".into())
        .spawn(move || {
            let answer = work();
            // The caller may have stopped waiting: then nobody receives and the worker
            // was counted as abandoned.
            if tx.send(answer).is_err() {
                ABANDONED_WORKERS.fetch_sub(1, Ordering::Relaxed);
            }
        });
    if spawned.is_err() {
        return None;
    }
    match rx.recv_timeout(limit) {
        Ok(answer) => Some(answer),
        Err(_) => {
            ABANDONED_WORKERS.fetch_add(1, Ordering::Relaxed);
            // Dropping the receiver makes the worker's send fail, which releases its count.
            drop(rx);
            None
        }
    }
}

fn solver_color(color: Color) -> chess::Color {
    match color {
        Color::White => chess::Color::White,
        Color::Black => chess::Color::Black,
    }
}

/// The position as chasolver's board; `exact` is false when Chess960 castling rights had to be
/// dropped because the `chess` crate only knows castling from the standard squares.
fn solver_board(pos: &Chess) -> Option<(chess::Board, bool)> {
    let mut builder = chess::BoardBuilder::new();
    for (sq, piece) in pos.board() {
        let role = match piece.role {
            Role::Pawn => chess::Piece::Pawn,
            Role::Knight => chess::Piece::Knight,
            Role::Bishop => chess::Piece::Bishop,
            Role::Rook => chess::Piece::Rook,
            Role::Queen => chess::Piece::Queen,
            Role::King => chess::Piece::King,
        };
        builder.piece(solver_square(sq), role, solver_color(piece.color));
    }
    builder.side_to_move(solver_color(pos.turn()));
    let mut exact = true;
    for color in Color::ALL {
        let (rights, standard) = solver_castling(pos, color);
        exact &= standard;
        builder.castle_rights(solver_color(color), rights);
    }
    if let Some(ep) = pos.legal_ep_square() {
        builder.en_passant(Some(chess::File::from_index(usize::from(ep.file()))));
    }
    let board = chess::Board::try_from(&builder).ok()?;
    Some((board, exact))
}

fn solver_square(sq: Square) -> chess::Square {
    chess::Square::make_square(
        chess::Rank::from_index(usize::from(sq.rank())),
        chess::File::from_index(usize::from(sq.file())),
    )
}

/// The castling rights of `color` in the `chess` crate's terms, and whether they are exact.
fn solver_castling(pos: &Chess, color: Color) -> (chess::CastleRights, bool) {
    let castles = pos.castles();
    let back = color.backrank();
    let king_home =
        pos.board().king_of(color) == Some(Square::from_coords(shakmaty::File::E, back));
    let mut exact = true;
    let mut has = |side: CastlingSide, file: shakmaty::File| match castles.rook(color, side) {
        None => false,
        Some(rook) if king_home && rook == Square::from_coords(file, back) => true,
        Some(_) => {
            exact = false;
            false
        }
    };
    let king_side = has(CastlingSide::KingSide, shakmaty::File::H);
    let queen_side = has(CastlingSide::QueenSide, shakmaty::File::A);
    let rights = match (king_side, queen_side) {
        (true, true) => chess::CastleRights::Both,
        (true, false) => chess::CastleRights::KingSide,
        (false, true) => chess::CastleRights::QueenSide,
        (false, false) => chess::CastleRights::NoRights,
    };
    (rights, exact)
}
