//! The decoding of each kind of board's bytes into the messages the DGT observer takes (the
//! kinds themselves are the wire's: [`BoardKind`]).
//!
//! DGT boards report changes; the others send whole-board frames, which go through the one
//! [`SnapshotAdapter`](super::snapshot::SnapshotAdapter). A frame a decoder could not read
//! is counted and kept for the log ([`KindDecoder::take_errors`]); it never stops the board.

use crate::board::Millis;
use crate::board::snapshot::SnapshotAdapter;
use crate::wire::dgt::{self, Message};
use crate::wire::frame_error::FrameError;
pub use crate::wire::kind::BoardKind;
use crate::wire::pegasus::{PegasusDecoder, PegasusMessage};
use crate::wire::{certabo, chessnut, millennium};

// One decoder per board: the Certabo variant's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
enum Inner {
    Dgt(dgt::Decoder),
    Millennium(millennium::Decoder),
    Certabo(certabo::Decoder, certabo::TagReader),
    Sentio(certabo::Decoder),
    Chessnut(chessnut::Decoder),
    Pegasus(PegasusDecoder),
}

/// Decodes one board's bytes, of any kind, into DGT [`Message`]s: a DGT board's as they
/// are, the others' frames through a [`SnapshotAdapter`]. A Millennium version reply and a
/// Chessnut mode acknowledgement are the handshake of those boards and read as a DGT
/// version message (a link that came back); the picture after it is reported whole.
#[derive(Debug, Clone)]
pub struct KindDecoder {
    inner: Inner,
    adapter: SnapshotAdapter,
    errors: Vec<FrameError>,
    error_count: u64,
    frames: u64,
    /// Since when pieces are moved unread ([`KindDecoder::pieces_unread_due`]), and whether
    /// the arbiter was told.
    unread_since: Option<(Millis, bool)>,
}

/// How long pieces are moved on a board that cannot read them before the arbiter is told:
/// long enough for an arbiter setting the pieces up to finish.
pub const PIECES_UNREAD_ALERT_MS: Millis = 30_000;

/// Frame errors kept for the log between two [`KindDecoder::take_errors`].
const ERRORS_KEPT: usize = 16;

impl Default for KindDecoder {
    /// A DGT decoder.
    fn default() -> Self {
        KindDecoder::new(BoardKind::Dgt)
    }
}

impl KindDecoder {
    /// A decoder for a board of `kind`.
    pub fn new(kind: BoardKind) -> Self {
        let inner = match kind {
            BoardKind::Dgt => Inner::Dgt(dgt::Decoder::new()),
            BoardKind::Millennium => Inner::Millennium(millennium::Decoder::new()),
            BoardKind::Certabo => {
                Inner::Certabo(certabo::Decoder::new(), certabo::TagReader::new())
            }
            BoardKind::Sentio => Inner::Sentio(certabo::Decoder::new()),
            BoardKind::Chessnut => Inner::Chessnut(chessnut::Decoder::new()),
            BoardKind::Pegasus => Inner::Pegasus(PegasusDecoder::new()),
        };
        KindDecoder {
            inner,
            adapter: SnapshotAdapter::new(),
            errors: Vec::new(),
            error_count: 0,
            frames: 0,
            unread_since: None,
        }
    }

    /// Feeds `bytes`, appending the messages they complete to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Message>) {
        let adapter = &mut self.adapter;
        let mut failed = Vec::new();
        let mut good = 0;
        match &mut self.inner {
            Inner::Dgt(decoder) => {
                let before = out.len();
                decoder.push(bytes, out);
                good = out.len() - before;
            }
            Inner::Millennium(decoder) => {
                let mut frames = Vec::new();
                decoder.push(bytes, &mut frames);
                good += frames.iter().filter(|f| f.is_ok()).count();
                for frame in frames {
                    match frame {
                        Ok(millennium::Message::Status(pieces)) => adapter.on_pieces(&pieces, out),
                        Ok(millennium::Message::Version { major, minor }) => {
                            adapter.restart();
                            out.push(Message::Version { major, minor });
                        }
                        Ok(_) => {}
                        Err(e) => failed.push(e),
                    }
                }
            }
            Inner::Certabo(decoder, reader) => {
                let mut frames = Vec::new();
                decoder.push(bytes, &mut frames);
                good += frames.iter().filter(|f| f.is_ok()).count();
                for frame in frames {
                    match frame {
                        Ok(certabo::Frame::Tags(tags)) => {
                            if let Some(pieces) = reader.read(&tags) {
                                adapter.on_pieces(&pieces, out);
                            }
                        }
                        Ok(certabo::Frame::Occupancy(_)) => {}
                        Err(e) => failed.push(e),
                    }
                }
            }
            Inner::Sentio(decoder) => {
                let mut frames = Vec::new();
                decoder.push(bytes, &mut frames);
                good += frames.iter().filter(|f| f.is_ok()).count();
                for frame in frames {
                    match frame {
                        Ok(f @ certabo::Frame::Occupancy(_)) => {
                            adapter.on_occupancy(f.occupied(), out)
                        }
                        Ok(certabo::Frame::Tags(_)) => {}
                        Err(e) => failed.push(e),
                    }
                }
            }
            Inner::Chessnut(decoder) => {
                let mut frames = Vec::new();
                decoder.push(bytes, &mut frames);
                good += frames.iter().filter(|f| f.is_ok()).count();
                for frame in frames {
                    match frame {
                        Ok(m @ chessnut::Message::Position { .. }) => {
                            if let Some(pieces) = m.fields() {
                                adapter.on_pieces(&pieces, out);
                            }
                        }
                        Ok(chessnut::Message::ModeAck(status)) => {
                            adapter.restart();
                            out.push(Message::Version {
                                major: 0,
                                minor: status,
                            });
                        }
                        Ok(chessnut::Message::Battery { .. }) => {}
                        Err(e) => failed.push(e),
                    }
                }
            }
            Inner::Pegasus(decoder) => {
                let mut messages = Vec::new();
                decoder.push(bytes, &mut messages);
                for message in messages {
                    match message {
                        PegasusMessage::Invalid(e) => failed.push(e.to_frame_error()),
                        valid => {
                            good += 1;
                            out.extend(valid.to_message());
                        }
                    }
                }
            }
        }
        self.frames += good as u64;
        self.error_count += failed.len() as u64;
        let room = ERRORS_KEPT.saturating_sub(self.errors.len());
        self.errors.extend(failed.into_iter().take(room));
    }

    /// The link to the board was lost (or the host restarted): the next picture of a board
    /// that sends whole frames is reported whole, as a board dump, since what changed while
    /// the link was down is read from it. Millennium and Chessnut boards say they are back
    /// with their handshake; Certabo and Sentio boards just stream again, so the link's own
    /// mark is what restarts them. A frame the loss cut short is dropped, on every board that
    /// sends whole frames. A Certabo board's pictures are voted over its last frames: the
    /// vote starts again from the new connection's frames.
    pub fn link_lost(&mut self) {
        self.adapter.restart();
        match &mut self.inner {
            Inner::Certabo(decoder, reader) => {
                decoder.restart();
                reader.restart();
            }
            Inner::Sentio(decoder) => decoder.restart(),
            Inner::Millennium(decoder) => decoder.restart(),
            Inner::Chessnut(decoder) => decoder.restart(),
            Inner::Dgt(_) | Inner::Pegasus(_) => {}
        }
    }

    /// Bytes dropped so far because they did not make a valid frame.
    pub fn skipped_bytes(&self) -> u64 {
        match &self.inner {
            Inner::Dgt(d) => d.skipped_bytes(),
            Inner::Millennium(d) => d.skipped_bytes(),
            Inner::Certabo(d, _) | Inner::Sentio(d) => d.skipped_bytes(),
            Inner::Chessnut(d) => d.skipped_bytes(),
            Inner::Pegasus(d) => d.skipped_bytes(),
        }
    }

    /// The frames dropped since the last call (at most 16 kept), for the log.
    pub fn take_errors(&mut self) -> Vec<FrameError> {
        std::mem::take(&mut self.errors)
    }

    /// Frames read so far (whether or not they changed anything).
    pub fn frames_read(&self) -> u64 {
        self.frames
    }

    /// Frames dropped so far.
    pub fn error_count(&self) -> u64 {
        self.error_count
    }

    /// On a board that names its pieces by tags it learns (Certabo), pieces moved for
    /// [`PIECES_UNREAD_ALERT_MS`] up to `t_ms` while it cannot read them: why, once for each
    /// such stretch, for the arbiter. `None` otherwise, and on every other board.
    pub fn pieces_unread_due(&mut self, t_ms: Millis) -> Option<certabo::PiecesUnread> {
        let unread = match &self.inner {
            Inner::Certabo(_, reader) => reader.pieces_unread(),
            _ => None,
        };
        let Some(unread) = unread else {
            self.unread_since = None;
            return None;
        };
        let (since, told) = self.unread_since.get_or_insert((t_ms, false));
        if *told || t_ms < since.saturating_add(PIECES_UNREAD_ALERT_MS) {
            return None;
        }
        *told = true;
        Some(unread)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::dgt::code_from_piece;
    use crate::wire::pegasus::PegasusMessage;
    use shakmaty::{Color, Piece, Role};

    #[test]
    fn pegasus_is_named_and_reports_field_changes_without_pieces() {
        assert_eq!("Pegasus".parse::<BoardKind>(), Ok(BoardKind::Pegasus));
        assert_eq!(BoardKind::Pegasus.name(), "pegasus");
        let kind = BoardKind::Pegasus;
        assert!(!kind.identifies_pieces() && !kind.sends_snapshots() && !kind.has_move_log());
        assert!(kind.needs_developer_key() && kind.has_leds());
        assert_eq!(kind.report_lag_ms(), 0);
        assert!(BoardKind::Dgt.has_move_log() && !BoardKind::Dgt.needs_developer_key());
        let unknown = "abacus".parse::<BoardKind>().unwrap_err();
        assert!(unknown.contains("pegasus"), "{unknown}");
    }

    #[test]
    fn a_pegasus_stream_decodes_to_dgt_messages_and_a_piece_code_is_an_error() {
        let mut bytes = PegasusMessage::Occupancy([true; 64]).encode();
        bytes.extend(
            PegasusMessage::Field {
                field: 52,
                occupied: false,
            }
            .encode(),
        );
        bytes.extend(
            Message::FieldUpdate {
                field: 36,
                piece: 6,
            }
            .encode(),
        );
        bytes.extend(Message::Version { major: 1, minor: 0 }.encode());
        let mut decoder = KindDecoder::new(BoardKind::Pegasus);
        let mut out = Vec::new();
        decoder.push(&bytes, &mut out);
        assert_eq!(
            out,
            [
                Message::BoardDump([1; 64]),
                Message::FieldUpdate {
                    field: 52,
                    piece: 0
                },
                Message::Version { major: 1, minor: 0 },
            ]
        );
        assert_eq!((decoder.frames_read(), decoder.error_count()), (3, 1));
        let errors = decoder.take_errors();
        assert!(
            errors[0].to_string().starts_with("pegasus frame 3"),
            "{}",
            errors[0]
        );
    }

    /// Two pictures of a board whose wire order is `0..64`: pawns on the first and last 16
    /// squares, then one of them moved on by two rows (`moved`).
    fn two_pictures() -> ([Option<Piece>; 64], [Option<Piece>; 64]) {
        let mut before = [None; 64];
        for i in 0..16 {
            before[i] = Some(Role::Pawn.of(Color::White));
            before[63 - i] = Some(Role::Pawn.of(Color::Black));
        }
        let mut moved = before;
        moved[24] = moved[8].take();
        (before, moved)
    }

    /// On a board of `kind` whose frames `frame` writes: a frame cut short by a lost link,
    /// then a whole one. The picture after the loss is that whole frame's, with no frame
    /// error: the bytes of the cut frame are not spliced with it.
    fn cut_frame_dropped(kind: BoardKind, frame: impl Fn(&[Option<Piece>; 64]) -> Vec<u8>) {
        let (before, moved) = two_pictures();
        let mut alone = KindDecoder::new(kind);
        let mut expected = Vec::new();
        alone.push(&frame(&moved), &mut expected);
        assert!(
            matches!(expected[..], [Message::BoardDump(_)]),
            "{expected:?}"
        );
        let mut decoder = KindDecoder::new(kind);
        let mut out = Vec::new();
        decoder.push(&frame(&before), &mut out);
        let cut = frame(&before);
        decoder.push(&cut[..cut.len() / 2], &mut out);
        decoder.link_lost();
        out.clear();
        decoder.push(&frame(&moved), &mut out);
        assert_eq!(out, expected, "{kind}");
        assert_eq!(
            decoder.error_count(),
            0,
            "{kind}: {:?}",
            decoder.take_errors()
        );
    }

    #[test]
    fn a_millennium_frame_cut_by_a_lost_link_is_dropped() {
        cut_frame_dropped(BoardKind::Millennium, |squares| {
            millennium::Message::Status(*squares).encode()
        });
    }

    #[test]
    fn a_chessnut_frame_cut_by_a_lost_link_is_dropped() {
        cut_frame_dropped(BoardKind::Chessnut, |squares| {
            chessnut::Message::Position {
                squares: *squares,
                tail: [0; 4],
            }
            .encode()
        });
    }

    /// A Certabo board's picture after its link came back is the board as the new
    /// connection's frames show it, whole: neither the frames voted over before the link was
    /// lost nor the frame the loss cut short are part of it.
    #[test]
    fn a_certabo_picture_after_a_lost_link_is_voted_from_the_new_frames_only() {
        // Each piece of the start position carries its own tag id.
        let mut start = [certabo::NO_TAG; 64];
        for field in (0..16).chain(48..64) {
            start[field] = [field as u8 + 1, 7, 7, 7, 7];
        }
        let frame = |tags: &[certabo::TagId; 64]| certabo::Frame::Tags(Box::new(*tags)).encode();
        let mut decoder = KindDecoder::new(BoardKind::Certabo);
        let mut out = Vec::new();
        for _ in 0..3 {
            decoder.push(&frame(&start), &mut out);
        }
        assert!(matches!(out[..], [Message::BoardDump(_)]), "{out:?}");
        // 1.e4 e5 2.Nf3 while the link was down (e2 → e4, e7 → e5, g1 → f3, in DGT fields).
        let mut played = start;
        for (from, to) in [(52, 36), (12, 28), (62, 45)] {
            played[to] = played[from];
            played[from] = certabo::NO_TAG;
        }
        let cut = frame(&start);
        decoder.push(&cut[..cut.len() / 2], &mut out);
        decoder.link_lost();
        out.clear();
        for _ in 0..3 {
            decoder.push(&frame(&played), &mut out);
        }
        let [Message::BoardDump(fields)] = &out[..] else {
            panic!("one whole picture: {out:?}");
        };
        let white_pawn = code_from_piece(Role::Pawn.of(Color::White));
        assert_eq!((fields[52], fields[36]), (0, white_pawn));
        assert_eq!(fields[62], 0);
        assert_eq!(fields[28], code_from_piece(Role::Pawn.of(Color::Black)));
    }

    /// A Certabo frame's bytes, as the board sends them (protocols 2.2).
    fn certabo_text(tags: &[certabo::TagId; 64]) -> Vec<u8> {
        certabo::Frame::Tags(Box::new(*tags)).encode()
    }

    /// The start position with a tag shaped as real ones (`3 0 84 x y`) on each piece, and
    /// `king` on e8 (DGT field 4).
    fn start_tags(king: certabo::TagId) -> [certabo::TagId; 64] {
        let mut tags = [certabo::NO_TAG; 64];
        for field in (0..16).chain(48..64) {
            tags[field] = [3, 0, 84, 17, field as u8 + 1];
        }
        tags[4] = king;
        tags
    }

    /// `tags` with the readers' noise of frame `n` on two empty squares: ids that come and
    /// go, one with three zero bytes.
    fn with_noise(tags: &[certabo::TagId; 64], n: usize) -> [certabo::TagId; 64] {
        let mut noisy = *tags;
        for (field, id) in [
            (16 + n % 16, [118, 144, 181, 62, n as u8]),
            (32 + n % 16, [n as u8 + 1, 0, 0, 0, 9]),
        ] {
            if noisy[field] == certabo::NO_TAG {
                noisy[field] = id;
            }
        }
        noisy
    }

    /// A king whose tag is `3 0 85 0 0`: Certabo's own rule (more than two zero bytes is an
    /// empty square) would read e8 empty in every frame, refuse every start position, and
    /// leave the board unread for good. The start position is read with the king on e8, and
    /// then 1.d4.
    #[test]
    fn a_tag_with_three_zero_bytes_is_a_piece_and_the_start_position_is_learnt() {
        let start = start_tags([3, 0, 85, 0, 0]);
        let mut decoder = KindDecoder::new(BoardKind::Certabo);
        let mut out = Vec::new();
        for n in 0..3 {
            decoder.push(&certabo_text(&with_noise(&start, n)), &mut out);
        }
        let [Message::BoardDump(fields)] = &out[..] else {
            panic!("the start position read: {out:?}");
        };
        assert_eq!(fields[4], code_from_piece(Role::King.of(Color::Black)));
        // 1.d4: d2 (field 51) to d4 (field 35).
        let mut played = start;
        played[35] = played[51];
        played[51] = certabo::NO_TAG;
        out.clear();
        for n in 3..6 {
            decoder.push(&certabo_text(&with_noise(&played, n)), &mut out);
        }
        let pawn = code_from_piece(Role::Pawn.of(Color::White));
        for update in [(51, 0), (35, pawn)] {
            let (field, piece) = update;
            assert!(
                out.contains(&Message::FieldUpdate { field, piece }),
                "{update:?} in {out:?}"
            );
        }
        assert_eq!(decoder.pieces_unread_due(60_000), None);
    }

    /// The frames of a board read every 300 ms from `from_ms` to `to_ms` showing `tags`, each
    /// pushed to `decoder`: the times at which the arbiter is to be told the pieces are not
    /// read, and the messages decoded.
    fn stream(
        decoder: &mut KindDecoder,
        tags: &[certabo::TagId; 64],
        (from_ms, to_ms): (Millis, Millis),
        told: &mut Vec<(Millis, String)>,
    ) -> Vec<Message> {
        let mut out = Vec::new();
        for t in (from_ms..to_ms).step_by(300) {
            decoder.push(&certabo_text(&with_noise(tags, t as usize / 300)), &mut out);
            if let Some(unread) = decoder.pieces_unread_due(t) {
                told.push((t, unread.to_string()));
            }
        }
        out
    }

    /// A king whose tag does not read (e8 reads zeros): no start position can be learnt, so
    /// nothing on the board is read. The spare queens taken off and 1.d4 played, the arbiter
    /// is told once, within a minute, naming e8 and what to do.
    #[test]
    fn pieces_moved_on_a_board_that_cannot_learn_them_are_told_within_a_minute() {
        let mut start = start_tags(certabo::NO_TAG);
        let mut decoder = KindDecoder::new(BoardKind::Certabo);
        let mut told = Vec::new();
        let mut with_spares = start;
        with_spares[19] = [3, 0, 84, 18, 1];
        with_spares[43] = [3, 0, 84, 18, 2];
        let mut out = stream(&mut decoder, &with_spares, (0, 6_300), &mut told);
        out.extend(stream(&mut decoder, &start, (6_300, 19_200), &mut told));
        start[35] = start[51];
        start[51] = certabo::NO_TAG;
        out.extend(stream(&mut decoder, &start, (19_200, 120_000), &mut told));
        assert_eq!(out, [], "nothing on the board can be read");
        let [(t_ms, message)] = &told[..] else {
            panic!("told once: {told:?}");
        };
        assert!(*t_ms <= 6_300 + 60_000, "{t_ms}");
        assert!(message.contains("no tag was read on e8"), "{message}");
        assert!(message.contains("set up on it again"), "{message}");
    }

    /// An arbiter setting the pieces up one a second, and putting one back straight halfway:
    /// the start position, once whole, is learnt, and the board is read; nobody is told of
    /// pieces moved unread.
    #[test]
    fn a_slow_set_up_is_no_board_moved_unread() {
        let start = start_tags([3, 0, 84, 99, 99]);
        let mut decoder = KindDecoder::new(BoardKind::Certabo);
        let mut told = Vec::new();
        let mut shown = [certabo::NO_TAG; 64];
        let mut out = Vec::new();
        let mut t = 0;
        let mut show = |shown: &[certabo::TagId; 64], for_ms: Millis| {
            out.extend(stream(&mut decoder, shown, (t, t + for_ms), &mut told));
            t += for_ms;
        };
        for (i, field) in (48..64).chain(0..16).enumerate() {
            shown[field] = start[field];
            show(&shown, 1_500);
            if i == 20 {
                let mut lifted = shown;
                lifted[50] = certabo::NO_TAG;
                show(&lifted, 1_500);
            }
        }
        show(&shown, 60_000);
        assert_eq!(told, []);
        assert!(
            matches!(out.first(), Some(Message::BoardDump(fields)) if fields[4] != 0),
            "{out:?}"
        );
    }
}
