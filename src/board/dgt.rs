//! The physical DGT board and its clock, seen through decoded wire messages.
//!
//! [`DgtObserver`] keeps the 64 fields as the board reports them, maps them to game squares
//! (detecting a board turned round), and maps the clock's left/right sides to White/Black.

mod clock_side;

use shakmaty::{Board, Color, Piece, Role};

use self::clock_side::ClockSideEvidence;
use crate::board::orientation::Orientation;
use crate::board::{
    ClockReading, ColorName, MagicPiece, Millis, Observation, ObservationKind, Snapshot,
};
use crate::wire::dgt::{ClockMessage, ClockSide, ClockTimes, Message};

/// The chess piece for a DGT piece code; `None` for empty, the magic pieces and unknown
/// codes.
pub fn piece_from_code(code: u8) -> Option<Piece> {
    use Role::*;
    let (color, role) = match code {
        0x01 => (Color::White, Pawn),
        0x02 => (Color::White, Rook),
        0x03 => (Color::White, Knight),
        0x04 => (Color::White, Bishop),
        0x05 => (Color::White, King),
        0x06 => (Color::White, Queen),
        0x07 => (Color::Black, Pawn),
        0x08 => (Color::Black, Rook),
        0x09 => (Color::Black, Knight),
        0x0A => (Color::Black, Bishop),
        0x0B => (Color::Black, King),
        0x0C => (Color::Black, Queen),
        _ => return None,
    };
    Some(role.of(color))
}

/// The DGT piece code of a chess piece.
pub fn code_from_piece(piece: Piece) -> u8 {
    let base = match piece.role {
        Role::Pawn => 0x01,
        Role::Rook => 0x02,
        Role::Knight => 0x03,
        Role::Bishop => 0x04,
        Role::King => 0x05,
        Role::Queen => 0x06,
    };
    if piece.color == Color::White {
        base
    } else {
        base + 6
    }
}

/// The 64 DGT fields of a board lying in `orientation` (the inverse of reading them).
pub fn fields_from_board(board: &Board, orientation: Orientation) -> [u8; 64] {
    let mut fields = [0; 64];
    for (square, piece) in board.iter() {
        fields[usize::from(orientation.square_to_field(square))] = code_from_piece(piece);
    }
    fields
}

/// Reads DGT fields as a board in game coordinates.
pub fn board_from_fields(fields: &[u8; 64], orientation: Orientation) -> Board {
    let mut board = Board::empty();
    for (field, &code) in (0u8..).zip(fields) {
        if let Some(piece) = piece_from_code(code) {
            board.set_piece_at(orientation.field_to_square(field), piece);
        }
    }
    board
}

/// The player whose lever is on `side` when White's is on `white`.
fn player_on(side: ClockSide, white: ClockSide) -> Color {
    if side == white {
        Color::White
    } else {
        Color::Black
    }
}

/// Tracks one DGT board and its clock and turns their messages into [`Observation`]s in game
/// coordinates. Deterministic: time comes from the caller.
///
/// Orientation: whenever the pieces form a start position (standard, any Chess960, or a
/// set-up given with [`DgtObserver::expect_setup`]) only in the other orientation, the
/// mapping switches and a fresh [`Snapshot`] in the new orientation is emitted.
///
/// Pieces: a magic piece (codes 0x0D-0x0F) is reported as [`ObservationKind::MagicPiece`]
/// (a result signal); an unknown code as `Placed(square, None)`: the square is occupied by
/// something that is not a chess piece.
///
/// Clock: the documents disagree on the status byte's turn bits, so they are not used. The
/// running side comes from the running bit and the lever; while the pieces stand in a start
/// position the running side is White's. Without a start position the side is learned from
/// the pieces each player touches while his side runs, over many presses and revised when
/// later ones disagree (`dgt/clock_side.rs`); before any evidence, the lever-high side is assumed
/// White's at a start position and the left side otherwise.
#[derive(Debug, Clone)]
pub struct DgtObserver {
    fields: [u8; 64],
    orientation: Orientation,
    setups: Vec<Board>,
    identifies_pieces: bool,
    at_start: bool,
    white_side: Option<ClockSide>,
    learned_side: ClockSideEvidence,
    last_running: Option<ClockSide>,
    last_reading: Option<ClockReading>,
}

impl Default for DgtObserver {
    fn default() -> Self {
        DgtObserver::new()
    }
}

impl DgtObserver {
    /// An observer of a board that identifies pieces, assumed normal orientation until a
    /// start position says otherwise.
    pub fn new() -> Self {
        DgtObserver {
            fields: [0; 64],
            orientation: Orientation::Normal,
            setups: Vec::new(),
            identifies_pieces: true,
            at_start: false,
            white_side: None,
            learned_side: ClockSideEvidence::default(),
            last_running: None,
            last_reading: None,
        }
    }

    /// An observer of an occupancy-only board (DGT Pegasus): placed pieces are reported
    /// without identity and snapshots are marked as such.
    pub fn occupancy_only() -> Self {
        DgtObserver {
            identifies_pieces: false,
            ..DgtObserver::new()
        }
    }

    /// Also recognise `setup` (in game coordinates, e.g. from a FEN) as a start position.
    pub fn expect_setup(&mut self, setup: Board) {
        self.setups.push(setup);
        self.after_board_change();
    }

    /// The current mapping from board fields to squares.
    pub fn orientation(&self) -> Orientation {
        self.orientation
    }

    /// The clock side found (or set) to be White's, if known: set, seen running at a start
    /// position, or pointed to by the pieces touched while each side ran.
    pub fn white_side(&self) -> Option<ClockSide> {
        self.white_side.or(self.learned_side.white_side())
    }

    /// True when White's clock side is set, was seen at a start position, or clearly more
    /// presses agree on it than not; false while it rests on a press or two, or on nothing.
    pub fn white_side_sure(&self) -> bool {
        self.white_side.is_some() || self.learned_side.is_sure()
    }

    /// Fixes White's clock side (e.g. from the arbiter's configuration).
    pub fn set_white_side(&mut self, side: ClockSide) {
        self.white_side = Some(side);
    }

    /// A lever press recovered from the board's log (`halted` stopped): the player who
    /// pressed, and the side running after it, so that the next clock reading is not taken
    /// for another press.
    pub fn recovered_press(&mut self, halted: ClockSide) -> Color {
        self.last_running = Some(halted.opposite());
        player_on(halted, self.white_side().unwrap_or(ClockSide::Left))
    }

    /// The pieces on the board now, in game coordinates.
    pub fn board(&self) -> Board {
        board_from_fields(&self.fields, self.orientation)
    }

    /// Processes one message received at `t_ms`, appending what it tells to `out`.
    pub fn on_message(&mut self, t_ms: Millis, msg: &Message, out: &mut Vec<Observation>) {
        let mut emit = |kind| out.push(Observation { t_ms, kind });
        match msg {
            Message::BoardDump(fields) => {
                self.fields = *fields;
                self.after_board_change();
                emit(ObservationKind::Snapshot(self.snapshot()));
            }
            &Message::FieldUpdate { field, piece } => {
                let slot = &mut self.fields[usize::from(field & 63)];
                if *slot == piece {
                    return;
                }
                let lifted = std::mem::replace(slot, piece);
                if let Some(p) =
                    piece_from_code(lifted).filter(|_| piece == 0 && self.identifies_pieces)
                {
                    self.learned_side.touched(p.color, false, t_ms);
                }
                let square = self.orientation.field_to_square(field);
                let identity = piece_from_code(piece).filter(|_| self.identifies_pieces);
                if let Some(magic) = MagicPiece::from_code(piece) {
                    emit(ObservationKind::MagicPiece(square, magic));
                } else if piece == 0 {
                    emit(ObservationKind::Emptied(square));
                } else {
                    if let Some(p) = identity {
                        self.learned_side.touched(p.color, true, t_ms);
                    }
                    emit(ObservationKind::Placed(square, identity));
                }
                if self.after_board_change() {
                    emit(ObservationKind::Snapshot(self.snapshot()));
                }
            }
            Message::Clock(ClockMessage::Times(times)) => self.on_clock(t_ms, times, &mut emit),
            _ => {}
        }
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            board: self.board(),
            identifies_pieces: self.identifies_pieces,
        }
    }

    /// Re-examines the pieces; true when the orientation switched.
    fn after_board_change(&mut self) -> bool {
        let normal = board_from_fields(&self.fields, Orientation::Normal);
        let detected = Orientation::detect(&normal, &self.setups);
        self.at_start = detected.is_some();
        match detected {
            Some(o) if o != self.orientation => {
                self.orientation = o;
                true
            }
            _ => false,
        }
    }

    fn color_of(&self, side: ClockSide, times: &ClockTimes) -> Color {
        let white = self.white_side().unwrap_or(if self.at_start {
            times.status.lever_high_side()
        } else {
            ClockSide::Left
        });
        player_on(side, white)
    }

    fn on_clock(
        &mut self,
        t_ms: Millis,
        times: &ClockTimes,
        emit: &mut impl FnMut(ObservationKind),
    ) {
        if times.status.no_clock {
            return;
        }
        let running = times.status.running_side();
        if let Some(now) = running {
            if self.at_start {
                self.white_side = Some(now);
            }
            self.learned_side.runs(now, t_ms);
            if let Some(before) = self.last_running.filter(|&b| b != now) {
                emit(ObservationKind::ClockPressed {
                    by: self.color_of(before, times),
                });
            }
            self.last_running = Some(now);
        }
        let white = self.color_of(ClockSide::Left, times) == Color::White;
        let (white_time, black_time) = if white {
            (times.left, times.right)
        } else {
            (times.right, times.left)
        };
        let flag = [times.left, times.right]
            .iter()
            .any(|s| s.flag_fallen || s.flag_shown);
        let reading = ClockReading {
            white_ms: white_time.millis(),
            black_ms: black_time.millis(),
            running: running.map(|s| ColorName::from(self.color_of(s, times))),
            flag,
        };
        if self.last_reading != Some(reading) {
            self.last_reading = Some(reading);
            emit(ObservationKind::ClockTimes(reading));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::dgt::{ClockStatus, SideTime};

    /// A clock reading with the left or the right side running.
    fn running(side: ClockSide) -> Message {
        let status = if side == ClockSide::Left { 0x01 } else { 0x03 };
        Message::Clock(ClockMessage::Times(ClockTimes {
            left: SideTime::default(),
            right: SideTime::default(),
            status: ClockStatus::from_byte(status),
        }))
    }

    fn field(field: u8, piece: u8) -> Message {
        Message::FieldUpdate { field, piece }
    }

    fn presses(out: &[Observation]) -> Vec<Color> {
        out.iter()
            .filter_map(|o| match o.kind {
                ObservationKind::ClockPressed { by } => Some(by),
                _ => None,
            })
            .collect()
    }

    /// An observer that saw the start position, then 1.e4 and the clock first running on
    /// `side` (not seen at the start), with what it emitted.
    fn after_e4_with_clock_on(side: ClockSide) -> (DgtObserver, Vec<Observation>) {
        let mut observer = DgtObserver::new();
        let mut out = Vec::new();
        let start = Message::BoardDump(fields_from_board(&Board::new(), Orientation::Normal));
        observer.on_message(0, &start, &mut out);
        observer.on_message(1_000, &field(52, 0), &mut out); // e2 lifted
        observer.on_message(1_200, &field(36, 1), &mut out); // e4 put down
        observer.on_message(1_500, &running(side), &mut out);
        (observer, out)
    }

    /// Seed 1003: the clock is first seen after 1.e4, Black's side (the left) running;
    /// Black lifts e7 and presses, and the board reports e5 75 ms after the press. The old
    /// rule took the last piece put down before the first press (White's e4) as the
    /// presser's and gave every press after it to the wrong player.
    #[test]
    fn a_move_reported_after_the_first_press_gives_the_press_to_its_player() {
        let (mut observer, mut out) = after_e4_with_clock_on(ClockSide::Left);
        observer.on_message(3_000, &field(12, 0), &mut out); // e7 lifted
        observer.on_message(3_500, &running(ClockSide::Right), &mut out); // Black presses
        observer.on_message(3_575, &field(28, 7), &mut out); // e5 reported late
        observer.on_message(5_000, &field(62, 0), &mut out); // g1 lifted
        observer.on_message(5_300, &field(45, 3), &mut out); // Nf3
        observer.on_message(5_500, &running(ClockSide::Left), &mut out); // White presses
        assert_eq!(presses(&out), [Color::Black, Color::White]);
        assert_eq!(observer.white_side(), Some(ClockSide::Right));
        assert!(observer.white_side_sure());
    }

    /// Seed 5101: White replies (Nf3) before Black presses for e5; the last piece put
    /// down before the press is White's, yet the side that ran was Black's.
    #[test]
    fn a_reply_made_before_the_press_does_not_give_the_press_to_the_replier() {
        let (mut observer, mut out) = after_e4_with_clock_on(ClockSide::Right);
        observer.on_message(3_000, &field(12, 0), &mut out); // e7 lifted
        observer.on_message(3_200, &field(28, 7), &mut out); // e5
        observer.on_message(3_700, &field(62, 0), &mut out); // g1 lifted
        observer.on_message(3_900, &field(45, 3), &mut out); // Nf3, before Black's press
        observer.on_message(4_200, &running(ClockSide::Left), &mut out); // Black presses
        assert_eq!(presses(&out), [Color::Black]);
        assert!(
            !observer.white_side_sure(),
            "one press decides nothing for sure"
        );
    }
}
