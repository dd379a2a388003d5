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

use shakmaty::{Bitboard, CastlingSide, Chess, Color, Position, Role, Square};

/// Parses a FEN to analyse, in standard or Chess960 castling.
pub fn parse_position(fen: &str) -> Result<Chess, String> {
    let parsed: shakmaty::fen::Fen = fen.trim().parse().map_err(|e| format!("{e}"))?;
    // Composed positions (nine queens, impossible checks) are still positions to analyse.
    let relaxed = |mode| -> Result<Chess, String> {
        parsed
            .clone()
            .into_position::<Chess>(mode)
            .or_else(shakmaty::PositionError::ignore_too_much_material)
            .or_else(shakmaty::PositionError::ignore_impossible_check)
            .map_err(|e| e.to_string())
    };
    relaxed(shakmaty::CastlingMode::Standard).or_else(|_| relaxed(shakmaty::CastlingMode::Chess960))
}

/// How much analysis a question about unwinnability may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Budget {
    time: Option<Duration>,
    cpu: Option<Duration>,
    search: bool,
}

impl Budget {
    /// At most `ms` milliseconds of wall-clock time; the search runs on a worker thread.
    pub fn millis(ms: u64) -> Budget {
        Budget {
            time: Some(Duration::from_millis(ms)),
            cpu: None,
            search: true,
        }
    }

    /// At most `ms` milliseconds of the analysing thread's CPU time, on the caller's thread: an
    /// answer that cost more is reported undetermined. Unlike [`Budget::millis`] the answers do
    /// not depend on how loaded the machine is; the caller waits for the solver to finish
    /// (seconds at worst), so this suits batch analysis, not a live game.
    pub fn cpu_millis(ms: u64) -> Budget {
        Budget {
            time: None,
            cpu: Some(Duration::from_millis(ms)),
            search: true,
        }
    }

    /// The full search on the caller's thread, bounded by the solver's own node limits
    /// (deterministic: the same position always gets the same answer; constructed positions can
    /// take seconds).
    pub fn deterministic() -> Budget {
        Budget {
            time: None,
            cpu: None,
            search: true,
        }
    }

    /// No search at all: only the static material test (deterministic, nanoseconds).
    pub fn static_only() -> Budget {
        Budget {
            time: None,
            cpu: None,
            search: false,
        }
    }

    /// Whether any search is allowed (false for [`Budget::static_only`]).
    pub fn allows_search(&self) -> bool {
        self.search
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

/// Analysis workers running at once (answered or abandoned by a caller that stopped waiting);
/// past this many, new questions are answered "undetermined" at once instead of piling up
/// threads that compete for the cores.
const MAX_RUNNING_WORKERS: usize = 8;
static RUNNING_WORKERS: AtomicUsize = AtomicUsize::new(0);

/// Can `side` checkmate from `pos` by some series of legal moves (the opponent cooperating)?
/// `Some(true)`: a helpmate exists; `Some(false)`: provably none; `None`: undetermined within
/// the budget.
pub fn can_checkmate(pos: &Chess, side: Color, budget: &Budget) -> Option<bool> {
    if cannot_checkmate_by_material(pos, side) {
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
        chasolver::Winnability::Winnable { .. } => Some(true),
        // Castling rights the solver cannot represent were dropped: a proof of unwinnability
        // without them says nothing about the real position.
        chasolver::Winnability::Unwinnable if exact => Some(false),
        chasolver::Winnability::Unwinnable => None,
    }
}

/// Is `pos` a dead position (5.2.2): can neither side checkmate? `None` when undetermined.
pub fn is_dead(pos: &Chess, budget: &Budget) -> Option<bool> {
    if insufficient_material(pos) {
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

/// Neither side has the material to checkmate (the static tier of [`is_dead`]).
pub fn insufficient_material(pos: &Chess) -> bool {
    cannot_checkmate_by_material(pos, Color::White)
        && cannot_checkmate_by_material(pos, Color::Black)
}

/// `side` cannot checkmate whatever the moves, by material alone: a bare king; a lone knight
/// when the opponent has nothing that could block its own king but queens; bishops all on one
/// colour of square when there are no knights or pawns on the board and the opponent has no
/// rook or queen. (shakmaty's `has_insufficient_material` forgets that an opponent's rooks and
/// queens can block their king's flight squares on the other colour, see
/// `8/8/8/8/8/1k6/b1b5/RKR5 w - -`, where Black's bishops can mate.)
pub fn cannot_checkmate_by_material(pos: &Chess, side: Color) -> bool {
    let board = pos.board();
    let ours = board.by_color(side);
    let theirs = board.by_color(!side);
    if (ours & (board.pawns() | board.rooks_and_queens())).any() {
        return false;
    }
    if (ours & board.knights()).any() {
        return ours.count() <= 2 && (theirs & !board.kings() & !board.queens()).is_empty();
    }
    if (ours & board.bishops()).any() {
        let bishops = board.bishops();
        let one_colour = (bishops & Bitboard::DARK_SQUARES).is_empty()
            || (bishops & Bitboard::LIGHT_SQUARES).is_empty();
        return one_colour
            && board.knights().is_empty()
            && board.pawns().is_empty()
            && (theirs & board.rooks_and_queens()).is_empty();
    }
    true
}

/// With at most this many legal moves, a forced sequence may lead into a dead position, so
/// [`crate::rules::Game::automatic_end`] runs the analysis whatever the pawns look like.
pub const FEW_MOVES: usize = 4;

/// A cheap test that a dead position is possible at all, so the full analysis can be skipped on
/// ordinary positions: true when no pawn is free (see `has_free_pawn`), or when the side not
/// to move is nearly immobile
/// (forced stalemates). Together with [`FEW_MOVES`] for the side to move it is checked
/// against every dead position of the labelled set (`tests/clock_rules/rules_dead.rs`).
pub fn dead_position_possible(pos: &Chess) -> bool {
    !has_free_pawn(pos) || opponent_nearly_immobile(pos)
}

/// The side not to move would have at most [`FEW_MOVES`] legal moves if it were its turn. When
/// the side to move is in check the turn cannot be swapped; an opponent with nothing but king
/// and pawns then counts as nearly immobile.
fn opponent_nearly_immobile(pos: &Chess) -> bool {
    if pos.is_check() {
        let board = pos.board();
        let pieces = board.by_color(!pos.turn()) & !board.kings() & !board.pawns();
        return pieces.is_empty();
    }
    match pos.clone().swap_turn() {
        Ok(swapped) => swapped.legal_moves().len() <= FEW_MOVES,
        Err(_) => true,
    }
}

/// A pawn that can still change the structure: the square in front of it is empty, and either
/// no pawn stands further up its file, or two squares are empty and the other side has pieces it
/// could capture (a knight, rook or queen, or two bishops).
fn has_free_pawn(pos: &Chess) -> bool {
    let board = pos.board();
    let occupied = board.occupied();
    let pawns = board.pawns();
    let has_targets = |color: Color| {
        let theirs = board.by_color(!color);
        (theirs & (board.knights() | board.rooks_and_queens())).any()
            || (theirs & board.bishops()).count() >= 2
    };
    pawns.into_iter().any(|sq| {
        let Some(color) = board.color_at(sq) else {
            return false;
        };
        let ahead = file_ahead(sq, color);
        let mut path = ahead;
        match (path.pop_toward(color), path.pop_toward(color)) {
            (Some(next), _) if occupied.contains(next) => false,
            (Some(_), _) if (ahead & pawns).is_empty() => true,
            (Some(_), Some(after)) => !occupied.contains(after) && has_targets(color),
            _ => false,
        }
    })
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

trait PopToward {
    fn pop_toward(&mut self, color: Color) -> Option<Square>;
}

impl PopToward for Bitboard {
    /// Removes and returns the square nearest to `color`'s side of the board.
    fn pop_toward(&mut self, color: Color) -> Option<Square> {
        match color {
            Color::White => self.pop_front(),
            Color::Black => self.pop_back(),
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
        let start = thread_cpu_time();
        let answer = work();
        return match budget.cpu {
            Some(cpu) if thread_cpu_time().saturating_sub(start) > cpu => None,
            _ => Some(answer),
        };
    };
    if RUNNING_WORKERS.fetch_add(1, Ordering::SeqCst) >= MAX_RUNNING_WORKERS {
        RUNNING_WORKERS.fetch_sub(1, Ordering::SeqCst);
        return None;
    }
    let (tx, rx) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("unwinnability".into())
        .spawn(move || {
            let answer = work();
            RUNNING_WORKERS.fetch_sub(1, Ordering::SeqCst);
            // The caller may have stopped waiting; the answer is then dropped.
            let _ = tx.send(answer);
        });
    if spawned.is_err() {
        RUNNING_WORKERS.fetch_sub(1, Ordering::SeqCst);
        return None;
    }
    rx.recv_timeout(limit).ok()
}

/// CPU time consumed so far by the calling thread.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec we own; CLOCK_THREAD_CPUTIME_ID is
    // supported on every platform we build for. On failure the timespec stays zero.
    unsafe {
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts);
    }
    Duration::new(
        ts.tv_sec.max(0) as u64,
        ts.tv_nsec.clamp(0, 999_999_999) as u32,
    )
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

/// Who can still checkmate in a position, and whether it is dead; `None` = undetermined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Winnability {
    /// Can White checkmate by some series of legal moves?
    pub white_can_checkmate: Option<bool>,
    /// Can Black checkmate by some series of legal moves?
    pub black_can_checkmate: Option<bool>,
}

impl Winnability {
    /// Analyses both colours of `pos` within `budget` each.
    pub fn of(pos: &Chess, budget: &Budget) -> Winnability {
        Winnability {
            white_can_checkmate: can_checkmate(pos, Color::White, budget),
            black_can_checkmate: can_checkmate(pos, Color::Black, budget),
        }
    }

    /// Dead position (5.2.2): neither side can checkmate.
    pub fn dead(&self) -> Option<bool> {
        match (self.white_can_checkmate, self.black_can_checkmate) {
            (Some(true), _) | (_, Some(true)) => Some(false),
            (Some(false), Some(false)) => Some(true),
            _ => None,
        }
    }
}
