//! Whole-board frames turned into what a DGT board reports, so that every board feeds the
//! same observer and machine.
//!
//! Millennium, Certabo and Chessnut boards send a picture of all 64 squares on every scan
//! (10–25 a second) instead of one report per change. [`SnapshotAdapter`] keeps the last
//! picture and turns each new one into the DGT messages a board that reports changes would
//! have sent: the first picture (and the first after [`SnapshotAdapter::restart`]) whole, as
//! a board dump, and after that one field update per changed square, empty squares first,
//! all at the frame's time. Boards that cannot tell pieces apart (Sentio) give occupancy:
//! every occupied square then carries [`OCCUPIED`], which the occupancy-only observer reads
//! as a piece without identity.
//!
//! Squares are DGT field numbers (0 = a8 … 63 = h1 with the board the normal way round); the
//! observer finds a board turned round from the start position, as for DGT boards.

use shakmaty::Piece;

use crate::board::dgt::code_from_piece;
use crate::wire::dgt::Message;

/// The piece code given to an occupied square of an occupancy-only board (a white pawn's
/// code: any piece code will do, the occupancy-only observer drops identities).
pub const OCCUPIED: u8 = 0x01;

/// Turns a stream of whole-board pictures into board dumps and field updates.
#[derive(Debug, Clone, Default)]
pub struct SnapshotAdapter {
    fields: Option<[u8; 64]>,
}

impl SnapshotAdapter {
    /// An adapter whose first picture is reported whole.
    pub fn new() -> Self {
        SnapshotAdapter::default()
    }

    /// The next picture is reported whole (the link came back: what changed meanwhile is
    /// read from the whole picture).
    pub fn restart(&mut self) {
        self.fields = None;
    }

    /// A picture of a board that names its pieces, in field order.
    pub fn on_pieces(&mut self, pieces: &[Option<Piece>; 64], out: &mut Vec<Message>) {
        let mut fields = [0; 64];
        for (code, piece) in fields.iter_mut().zip(pieces) {
            *code = piece.map_or(0, code_from_piece);
        }
        self.on_fields(fields, out);
    }

    /// A picture of an occupancy-only board: bit `f` set when field `f` is occupied.
    pub fn on_occupancy(&mut self, occupied: u64, out: &mut Vec<Message>) {
        let mut fields = [0; 64];
        for (f, code) in fields.iter_mut().enumerate() {
            if occupied & (1 << f) != 0 {
                *code = OCCUPIED;
            }
        }
        self.on_fields(fields, out);
    }

    fn on_fields(&mut self, fields: [u8; 64], out: &mut Vec<Message>) {
        let Some(before) = self.fields.replace(fields) else {
            out.push(Message::BoardDump(fields));
            return;
        };
        let changed = (0u8..64).filter(|&f| before[usize::from(f)] != fields[usize::from(f)]);
        let (emptied, placed): (Vec<u8>, Vec<u8>) =
            changed.partition(|&f| fields[usize::from(f)] == 0);
        for field in emptied.into_iter().chain(placed) {
            out.push(Message::FieldUpdate {
                field,
                piece: fields[usize::from(field)],
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Color, Role};

    #[test]
    fn a_capture_in_one_frame_is_an_emptied_square_then_a_placement() {
        let mut adapter = SnapshotAdapter::new();
        let mut pieces = [None; 64];
        pieces[52] = Some(Role::Pawn.of(Color::White));
        pieces[43] = Some(Role::Knight.of(Color::Black));
        let mut out = Vec::new();
        adapter.on_pieces(&pieces, &mut out);
        assert!(matches!(out[0], Message::BoardDump(_)));
        out.clear();
        adapter.on_pieces(&pieces, &mut out);
        assert!(out.is_empty(), "an unchanged frame reports nothing");
        pieces[43] = pieces[52].take();
        adapter.on_pieces(&pieces, &mut out);
        assert_eq!(
            out,
            [
                Message::FieldUpdate {
                    field: 52,
                    piece: 0
                },
                Message::FieldUpdate {
                    field: 43,
                    piece: 0x01
                },
            ]
        );
    }
}
