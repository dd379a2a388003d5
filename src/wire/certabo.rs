//! The Certabo protocol (RFID per square) and its occupancy-only sibling Sentio
//! (Tabutronic), byte-exact and without I/O.
//!
//! Over USB the board sends, continuously, ASCII frames from `:` to `\r\n` of
//! space-separated decimal numbers. A Certabo frame has 320: 64 squares × a 5-byte RFID tag
//! id, squares a8, b8 … h8, a7 … h1 (the DGT field numbering); an empty square reads zeros.
//! A Sentio frame has 8: one bitmask per rank from rank 8, most significant bit the a-file.
//! The board wraps a frame's text with bare `\n` anywhere, even inside a number, and may
//! follow it with an `L` or `D` (its LED hardware): both are read through. The host lights
//! squares with 8 bytes, byte 0 rank 8, bit 0 the a-file.
//!
//! Tag ids say nothing by themselves: [`Calibration`] learns which id is which piece from
//! the start position (with spare queens on d3 and d6), and [`TagVoter`] takes each square's
//! majority over the last frames, since the readers return noise on empty squares and now
//! and then a wrong id.

use std::collections::{HashMap, VecDeque};

use shakmaty::{Board, File, Piece, Rank, Role, Square};

use super::frame_error::FrameError;

const PROTOCOL: &str = "certabo";

/// The longest frame text read: 320 numbers of up to 3 digits, their spaces and wraps.
const MAX_FRAME_BYTES: usize = 2048;

/// One square's RFID tag id.
pub type TagId = [u8; 5];

/// The id read on an empty square.
pub const NO_TAG: TagId = [0; 5];

/// One frame from the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A Certabo frame: the tag id read on each square (DGT field order, a8 first).
    Tags(Box<[TagId; 64]>),
    /// A Sentio frame: one occupancy bitmask per rank, rank 8 first, bit 7 the a-file.
    Occupancy([u8; 8]),
}

impl Frame {
    /// The wire bytes of this frame, wrapped every 64 characters as the board does.
    pub fn encode(&self) -> Vec<u8> {
        let numbers: Vec<u8> = match self {
            Frame::Tags(tags) => tags.iter().flatten().copied().collect(),
            Frame::Occupancy(ranks) => ranks.to_vec(),
        };
        let text = numbers
            .iter()
            .map(u8::to_string)
            .collect::<Vec<_>>()
            .join(" ");
        let mut out = vec![b':'];
        for (i, chunk) in text.as_bytes().chunks(64).enumerate() {
            if i > 0 {
                out.push(b'\n');
            }
            out.extend_from_slice(chunk);
        }
        out.extend_from_slice(b" \r\n");
        out
    }

    /// The occupied DGT fields as a bit set (bit `f` = field `f`).
    pub fn occupied(&self) -> u64 {
        (0..64)
            .filter(|&f| match self {
                Frame::Tags(tags) => !is_empty(&tags[f]),
                Frame::Occupancy(ranks) => ranks[f / 8] & (0x80 >> (f % 8)) != 0,
            })
            .fold(0, |set, f| set | 1 << f)
    }
}

/// An empty square reads all zeros. (Certabo's own software takes any id with more than two
/// zero bytes for an empty square, but real tags carry zero bytes too, `3 0 85 0 16` among
/// them, and a tag such as `3 0 85 0 0` read that way would leave its piece unread for good;
/// the readers' noise on empty squares, which does carry an id, is voted away instead.)
pub fn is_empty(id: &TagId) -> bool {
    *id == NO_TAG
}

/// The LED bytes that light the DGT fields `fields` (0 = a8).
pub fn led_bytes(fields: impl IntoIterator<Item = u8>) -> [u8; 8] {
    let mut bytes = [0; 8];
    for f in fields {
        bytes[usize::from(f & 63) / 8] |= 1 << (f % 8);
    }
    bytes
}

/// The DGT fields lit by LED bytes (the inverse of [`led_bytes`]).
pub fn lit_fields(bytes: &[u8; 8]) -> Vec<u8> {
    (0..64u8)
        .filter(|&f| bytes[usize::from(f / 8)] & (1 << (f % 8)) != 0)
        .collect()
}

/// Decodes the frames a Certabo or Sentio board sends, fed in chunks of any size. Bytes
/// before the first `:` are skipped; a frame cut by the next `:`, too long, or holding
/// anything but numbers is dropped with an error naming the byte. Memory is bounded by
/// [`MAX_FRAME_BYTES`].
#[derive(Debug, Clone, Default)]
pub struct Decoder {
    /// The current frame's bytes from its `:`; empty between frames.
    frame: Vec<u8>,
    frames: u64,
    skipped: u64,
    /// The frame in progress is already known to be bad: read through to its end.
    dropping: bool,
}

impl Decoder {
    /// A decoder waiting for the first `:`.
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Feeds `bytes`, appending each frame (or the reason one was dropped) to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Result<Frame, FrameError>>) {
        let mut rest = bytes;
        while !rest.is_empty() {
            // The run of bytes up to the next one that may start or end a frame is taken in
            // one go: a Certabo frame is a thousand bytes, and a stream of them the recorder's
            // busiest input.
            let ordinary = if self.frame.is_empty() {
                rest.iter().position(|&b| b == b':')
            } else {
                rest.iter().position(|&b| b == b':' || b == b'\r')
            }
            .unwrap_or(rest.len());
            let (run, next) = rest.split_at(ordinary);
            self.take_run(run, out);
            let Some((&b, after)) = next.split_first() else {
                break;
            };
            self.take_byte(b, out);
            rest = after;
        }
    }

    /// Takes bytes that are neither `:` nor `\r` (nor, between frames, `:`) as
    /// [`take_byte`](Self::take_byte) would one by one.
    fn take_run(&mut self, run: &[u8], out: &mut Vec<Result<Frame, FrameError>>) {
        if self.frame.is_empty() || self.dropping {
            self.skipped += run.len() as u64;
            return;
        }
        let room = MAX_FRAME_BYTES - self.frame.len().min(MAX_FRAME_BYTES);
        if run.len() <= room {
            self.frame.extend_from_slice(run);
            return;
        }
        self.frame.extend_from_slice(&run[..room]);
        self.take_byte(run[room], out);
        self.skipped += (run.len() - room - 1) as u64;
    }

    fn take_byte(&mut self, b: u8, out: &mut Vec<Result<Frame, FrameError>>) {
        match b {
            b':' => {
                let cut = self.frame.len();
                if cut > 0 && !self.dropping {
                    self.frame.push(b);
                    self.fail(cut, "a new frame began before this one ended", out);
                }
                self.skipped += cut as u64;
                self.frame.clear();
                self.frame.push(b':');
                self.dropping = false;
            }
            _ if self.frame.is_empty() => self.skipped += 1,
            b'\r' => {
                if !self.dropping {
                    match parse(&self.frame) {
                        Ok(Some(frame)) => {
                            self.frames += 1;
                            out.push(Ok(frame));
                        }
                        Ok(None) => {}
                        Err((offset, what)) => self.fail(offset, what, out),
                    }
                }
                if self.dropping {
                    self.skipped += self.frame.len() as u64;
                }
                self.frame.clear();
            }
            _ if self.dropping => self.skipped += 1,
            _ if self.frame.len() >= MAX_FRAME_BYTES => {
                self.frame.push(b);
                self.fail(MAX_FRAME_BYTES, "the frame is longer than 320 numbers", out);
            }
            _ => self.frame.push(b),
        }
    }

    fn fail(
        &mut self,
        offset: usize,
        what: &'static str,
        out: &mut Vec<Result<Frame, FrameError>>,
    ) {
        self.frames += 1;
        out.push(Err(FrameError::new(
            PROTOCOL,
            self.frames,
            &self.frame,
            offset,
            what,
        )));
        self.dropping = true;
    }

    /// The link to the board was lost: the frame in progress is dropped, since the bytes
    /// that come next belong to a later frame (the board streamed on while they were lost),
    /// and a frame spliced from both would picture no moment of the board.
    pub fn restart(&mut self) {
        self.skipped += self.frame.len() as u64;
        self.frame.clear();
        self.dropping = false;
    }

    /// Bytes dropped so far (before a `:`, and of bad frames).
    pub fn skipped_bytes(&self) -> u64 {
        self.skipped
    }
}

/// Reads a frame's text (from its `:`): `None` when it holds no numbers (an LED marker).
fn parse(frame: &[u8]) -> Result<Option<Frame>, (usize, &'static str)> {
    let mut numbers = [0u8; 320];
    let mut count = 0;
    let mut current: Option<(u16, usize)> = None;
    let mut end_number = |current: &mut Option<(u16, usize)>| -> Result<(), (usize, &'static str)> {
        if let Some((value, start)) = current.take() {
            if count == numbers.len() {
                return Err((start, "a frame has at most 320 numbers"));
            }
            numbers[count] = u8::try_from(value).map_err(|_| (start, "a number above 255"))?;
            count += 1;
        }
        Ok(())
    };
    for (i, &b) in frame.iter().enumerate().skip(1) {
        match b {
            b'0'..=b'9' => {
                let (value, start) = current.unwrap_or((0, i));
                current = Some(((value * 10 + u16::from(b - b'0')).min(1000), start));
            }
            b'\n' => {}
            b' ' | b'L' | b'D' => end_number(&mut current)?,
            _ => return Err((i, "not a digit, space, or LED marker")),
        }
    }
    end_number(&mut current)?;
    match count {
        0 => Ok(None),
        8 => {
            let mut ranks = [0; 8];
            ranks.copy_from_slice(&numbers[..8]);
            Ok(Some(Frame::Occupancy(ranks)))
        }
        320 => {
            let mut tags = Box::new([NO_TAG; 64]);
            for (tag, chunk) in tags.iter_mut().zip(numbers.chunks(5)) {
                tag.copy_from_slice(chunk);
            }
            Ok(Some(Frame::Tags(tags)))
        }
        _ => Err((
            frame.len() - 1,
            "a frame has 320 numbers (Certabo) or 8 (Sentio)",
        )),
    }
}

/// Each square's majority id over the last frames: a square takes an id once it is read in
/// more than half of them, and reads empty while no id is. The readers return noise on
/// about a third of the empty squares in each frame, on some squares in frame after frame
/// (`fixtures/certabo/start-frames.txt`), and misread a piece far more rarely: a lifted
/// piece's square, its reads split between empty and noise, is empty, not the piece still
/// standing. (Were the piece kept until empty had the majority, a lift would be reported
/// frames after the placement that followed it, or never on a noisy square, and the move
/// read backwards.)
#[derive(Debug, Clone)]
pub struct TagVoter {
    depth: usize,
    history: VecDeque<Box<[TagId; 64]>>,
    agreed: [TagId; 64],
}

impl TagVoter {
    /// A voter over the last `depth` frames (at least 1); all squares empty until agreed.
    pub fn new(depth: usize) -> TagVoter {
        TagVoter {
            depth: depth.max(1),
            history: VecDeque::new(),
            agreed: [NO_TAG; 64],
        }
    }

    /// Forgets the frames voted over: the next frames are of a board that may have changed
    /// unseen (the link was down), and a vote mixing them with older ones pictures neither.
    pub fn restart(&mut self) {
        self.history.clear();
        self.agreed = [NO_TAG; 64];
    }

    /// True once enough frames were taken for a majority of the depth to agree.
    pub fn can_agree(&self) -> bool {
        self.history.len() * 2 > self.depth
    }

    /// Takes one frame and returns the ids agreed on now.
    pub fn push(&mut self, tags: &[TagId; 64]) -> &[TagId; 64] {
        let oldest = if self.history.len() == self.depth {
            self.history.pop_front()
        } else {
            None
        };
        let mut frame = oldest.unwrap_or_else(|| Box::new([NO_TAG; 64]));
        *frame = *tags;
        self.history.push_back(frame);
        for square in 0..64 {
            let first = self.history.front().map_or(NO_TAG, |f| f[square]);
            if self.history.iter().all(|f| f[square] == first) {
                // The usual case, a square that reads alike in every frame.
                self.agreed[square] = if self.history.len() * 2 > self.depth {
                    first
                } else {
                    NO_TAG
                };
                continue;
            }
            let mut best: Option<(TagId, usize)> = None;
            for frame in &self.history {
                let id = frame[square];
                let count = self.history.iter().filter(|f| f[square] == id).count();
                if best.is_none_or(|(_, c)| count > c) {
                    best = Some((id, count));
                }
            }
            self.agreed[square] = match best {
                Some((id, count)) if count * 2 > self.depth => id,
                _ => NO_TAG,
            };
        }
        &self.agreed
    }
}

/// Which tag id is which piece, learnt from the start position.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calibration {
    pieces: HashMap<TagId, Piece>,
}

/// The DGT fields of the spare queens read at calibration: d6 for Black, d3 for White.
pub const SPARE_QUEEN_FIELDS: [(u8, shakmaty::Color); 2] =
    [(19, shakmaty::Color::Black), (43, shakmaty::Color::White)];

/// Why a picture of the start position taught the pieces nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartRefused {
    /// These start squares read no tag: their pieces are missing or their tags do not read.
    NoTag(Vec<Square>),
    /// Two squares read the same tag.
    SameTag(Square, Square),
    /// The tag on this square was learnt as another piece.
    KnownAsOther(Square, Piece),
}

impl std::fmt::Display for StartRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StartRefused::NoTag(squares) => {
                let names: Vec<String> = squares.iter().map(Square::to_string).collect();
                write!(f, "no tag was read on {}", names.join(", "))
            }
            StartRefused::SameTag(a, b) => write!(f, "{a} and {b} read the same tag"),
            StartRefused::KnownAsOther(square, piece) => write!(
                f,
                "the tag on {square} was learnt earlier as a {} {}",
                piece.color,
                format!("{:?}", piece.role).to_lowercase()
            ),
        }
    }
}

/// The square of DGT field `field` (0 = a8).
fn field_square(field: u8) -> Square {
    Square::from_coords(
        File::new(u32::from(field % 8)),
        Rank::new(u32::from(7 - field / 8)),
    )
}

impl Calibration {
    /// No id known.
    pub fn new() -> Calibration {
        Calibration::default()
    }

    /// The number of ids known.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// True before anything was learnt.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The piece of `id`, if known.
    pub fn piece(&self, id: &TagId) -> Option<Piece> {
        self.pieces.get(id).copied()
    }

    /// Learns from `tags` (agreed ids) if they stand in the standard start position: all 32
    /// start squares read distinct ids and every id already known stands on a square of its
    /// piece. Spare queens on d6 (Black) and d3 (White) are learnt with them. Returns the
    /// number of ids learnt (0 when `tags` is no start position).
    pub fn learn_start(&mut self, tags: &[TagId; 64]) -> usize {
        self.start_ids(tags).map_or(0, |learnt| self.learn(learnt))
    }

    /// The ids of `tags` and their pieces when they stand in the start position (see
    /// [`Calibration::learn_start`]), or why they do not.
    fn start_ids(&self, tags: &[TagId; 64]) -> Result<Vec<(TagId, Piece)>, StartRefused> {
        let start = Board::new();
        let mut learnt: Vec<(TagId, Piece, Square)> = Vec::new();
        let mut untagged = Vec::new();
        for (field, id) in (0u8..).zip(tags) {
            let square = field_square(field);
            let spare = SPARE_QUEEN_FIELDS
                .iter()
                .find(|(f, _)| *f == field)
                .map(|(_, color)| Role::Queen.of(*color));
            let Some(piece) = start.piece_at(square).or(spare.filter(|_| !is_empty(id))) else {
                continue;
            };
            if is_empty(id) {
                untagged.push(square);
            } else if let Some((_, _, first)) = learnt.iter().find(|(seen, ..)| seen == id) {
                return Err(StartRefused::SameTag(*first, square));
            } else if let Some(known) = self.piece(id).filter(|known| *known != piece) {
                return Err(StartRefused::KnownAsOther(square, known));
            } else {
                learnt.push((*id, piece, square));
            }
        }
        if !untagged.is_empty() {
            return Err(StartRefused::NoTag(untagged));
        }
        Ok(learnt
            .into_iter()
            .map(|(id, piece, _)| (id, piece))
            .collect())
    }

    /// Adds `learnt` and returns the number of ids new among them.
    fn learn(&mut self, learnt: Vec<(TagId, Piece)>) -> usize {
        let before = self.pieces.len();
        self.pieces.extend(learnt);
        self.pieces.len() - before
    }

    /// The pieces the ids stand for, in DGT field order; an unknown id reads as empty (the
    /// readers return noise on empty squares).
    pub fn pieces(&self, tags: &[TagId; 64]) -> [Option<Piece>; 64] {
        let mut pieces = [None; 64];
        for (slot, id) in pieces.iter_mut().zip(tags) {
            // No empty reading is ever learnt (`learn_start`): not looked up.
            if !is_empty(id) {
                *slot = self.piece(id);
            }
        }
        pieces
    }
}

/// A Certabo board's frames read as pieces: voted, calibrated from the first start position
/// and again whenever a start position shows ids not known yet (new pieces). While no start
/// position taught it the pieces, it watches for pieces being moved all the same, so that
/// the arbiter can be told ([`TagReader::pieces_unread`]).
#[derive(Debug, Clone)]
pub struct TagReader {
    voter: TagVoter,
    calibration: Calibration,
    /// Before calibration: the fields that read an id in the last agreed picture.
    occupied: u64,
    /// Before calibration: a piece was lifted from a board set with pieces.
    moved_uncalibrated: bool,
    /// Before calibration: why the last picture nearly in the start position taught nothing.
    refused: Option<StartRefused>,
}

/// Frames a square's reading is voted over.
pub const VOTE_DEPTH: usize = 3;

/// A lift counts as a piece moved once this many squares read ids: setting the pieces up
/// only puts them down.
const PIECES_FOR_PLAY: u32 = 16;

/// The DGT fields of the start position's pieces: ranks 8, 7, 2 and 1.
const START_FIELDS: u64 = 0xFFFF_0000_0000_FFFF;

impl Default for TagReader {
    fn default() -> Self {
        TagReader {
            voter: TagVoter::new(VOTE_DEPTH),
            calibration: Calibration::new(),
            occupied: 0,
            moved_uncalibrated: false,
            refused: None,
        }
    }
}

impl TagReader {
    /// A reader that knows no piece yet.
    pub fn new() -> TagReader {
        TagReader::default()
    }

    /// The pieces of one frame, or `None` while no start position was seen to calibrate, or
    /// while too few frames were read to vote over since the reader (re)started.
    pub fn read(&mut self, tags: &[TagId; 64]) -> Option<[Option<Piece>; 64]> {
        let agreed = *self.voter.push(tags);
        if !self.voter.can_agree() {
            return None;
        }
        match self.calibration.start_ids(&agreed) {
            Ok(learnt) => {
                self.calibration.learn(learnt);
            }
            Err(why) if self.calibration.is_empty() => self.watch_uncalibrated(&agreed, why),
            Err(_) => {}
        }
        (!self.calibration.is_empty()).then(|| self.calibration.pieces(&agreed))
    }

    /// Notes, before calibration, a piece lifted and a start position refused.
    fn watch_uncalibrated(&mut self, agreed: &[TagId; 64], why: StartRefused) {
        let occupied = (0..64)
            .filter(|&f| !is_empty(&agreed[f]))
            .fold(0u64, |set, f| set | 1 << f);
        if self.occupied & !occupied != 0 && self.occupied.count_ones() >= PIECES_FOR_PLAY {
            self.moved_uncalibrated = true;
        }
        self.occupied = occupied;
        let spares = SPARE_QUEEN_FIELDS
            .iter()
            .fold(0u64, |set, (f, _)| set | 1 << f);
        let nearly_start = occupied & !(START_FIELDS | spares) == 0
            && (START_FIELDS & !occupied).count_ones() <= 4;
        if nearly_start {
            self.refused = Some(why);
        }
    }

    /// Pieces are moved on the board but cannot be read: no start position taught their tags
    /// (and why the last one shown did not), or `None`.
    pub fn pieces_unread(&self) -> Option<PiecesUnread> {
        (self.calibration.is_empty() && self.moved_uncalibrated).then(|| PiecesUnread {
            refused: self.refused.clone(),
        })
    }

    /// The link to the board was lost (or the host restarted): the frames from before do
    /// not vote on the next picture, which tells what changed meanwhile. What was learnt of
    /// the pieces stays.
    pub fn restart(&mut self) {
        self.voter.restart();
        self.occupied = 0;
    }

    /// What is known of the ids.
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }
}

/// A Certabo board on which pieces are moved while no start position taught it their tags:
/// nothing it shows can be read. Displayed, it says so and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PiecesUnread {
    /// Why the last picture nearly in the start position taught nothing, if one was shown.
    pub refused: Option<StartRefused>,
}

impl std::fmt::Display for PiecesUnread {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "pieces are moved on the board but cannot be read, so nothing is recorded: a \
             Certabo board tells its pieces apart by the tags it learns from the start \
             position, and it has not shown one it could learn from"
        )?;
        if let Some(why) = &self.refused {
            write!(f, " (when it was nearly set up, {why})")?;
        }
        write!(
            f,
            "; have the start position set up on it again, all 32 pieces on their squares"
        )?;
        if matches!(self.refused, Some(StartRefused::NoTag(_))) {
            write!(
                f,
                ", and if a square is named again with its piece on it, replace that piece: \
                 its tag does not read"
            )?;
        }
        write!(
            f,
            "; a game played meanwhile must be entered from the scoresheets"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrapped_frame_with_a_split_number_and_led_marker_reads() {
        let mut out = Vec::new();
        Decoder::new().push(b"xx:255 255 0 0 0 0 25\n5 254\nL\r\n", &mut out);
        assert_eq!(
            out,
            [Ok(Frame::Occupancy([255, 255, 0, 0, 0, 0, 255, 254]))]
        );
    }

    #[test]
    fn a_bad_character_names_its_byte_and_frame() {
        let mut out = Vec::new();
        Decoder::new().push(b":1 2 3 4 5 6 7 8\r\n:1 2 X 4\r\n", &mut out);
        let err = out[1].as_ref().unwrap_err();
        assert_eq!((err.frame, err.offset, err.byte), (2, 5, b'X'));
    }

    /// A piece lifted from a square that then reads noise as often as empty: the square reads
    /// empty in the second frame after the lift, as a piece put down reads in the second
    /// frame after it.
    #[test]
    fn a_lift_read_through_noise_is_reported_as_soon_as_a_placement() {
        let piece = [3, 0, 84, 252, 153];
        let mut voter = TagVoter::new(VOTE_DEPTH);
        let mut frame = [NO_TAG; 64];
        frame[10] = piece;
        for _ in 0..VOTE_DEPTH {
            voter.push(&frame);
        }
        let mut moved = frame;
        moved[10] = NO_TAG;
        moved[20] = piece;
        assert_eq!(voter.push(&moved)[10], piece, "one frame is no majority");
        moved[10] = [9, 9, 9, 9, 9];
        let agreed = voter.push(&moved);
        assert_eq!((agreed[10], agreed[20]), (NO_TAG, piece));
    }

    #[test]
    fn voting_ignores_one_noisy_frame() {
        let mut voter = TagVoter::new(3);
        let piece = [3, 0, 84, 252, 153];
        let mut frame = [NO_TAG; 64];
        frame[10] = piece;
        voter.push(&frame);
        assert_eq!(voter.push(&frame)[10], piece);
        let mut noisy = frame;
        noisy[10] = [9, 9, 9, 9, 9];
        noisy[20] = [7, 7, 7, 7, 7];
        let agreed = voter.push(&noisy);
        assert_eq!((agreed[10], agreed[20]), (piece, NO_TAG));
    }
}
