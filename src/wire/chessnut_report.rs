//! Chessnut frames inside USB HID reports, without I/O.
//!
//! Over USB a Chessnut board speaks HID on its vendor-page interface (usage page 0xFF00).
//! Each input report carries one frame at its start, `[command] [length] [data]`, and
//! whatever fills the report after it. Chessnut's SDK takes the board's 32 square bytes at
//! offsets 2..34 of a position report whatever its length byte says; one driver reads
//! positions as `01 3D` in 65-byte reports (a report-number byte first), the others as
//! `01 24`. [`frame_of_report`] takes all of these and gives back the frame the serial
//! stream decoder reads ([`chessnut::Decoder`](super::chessnut::Decoder)): positions
//! always as `01 24` + 32 square bytes + 4 trailing bytes.
//!
//! The host writes frames the other way: [`report_of_frame`] puts one into an output report
//! the way Linux's hidraw takes it (report number 0 first, then the report, padded), and
//! [`HostFrames`] cuts the bytes a link writes into whole frames, one per report.

use super::chessnut::POSITION;

/// The size of a Chessnut report (input and output), without the report-number byte.
pub const REPORT_SIZE: usize = 64;

/// The square bytes of a position: two squares a byte.
pub const SQUARE_BYTES: usize = 32;

/// The length byte of a position frame as the serial stream carries it: 32 square bytes
/// and 4 trailing bytes.
pub const POSITION_LENGTH: u8 = 0x24;

/// Trailing bytes given to a position whose report ends after its squares (the value the
/// documented start-position frame carries there; no document gives their meaning).
const MISSING_TAIL: u8 = 0xFF;

/// Why a report gave no frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoFrame {
    /// The report holds nothing but zeros (or nothing at all).
    Empty,
    /// The report ends before the frame its length byte announces.
    Cut {
        /// The command byte.
        command: u8,
        /// The frame bytes needed.
        needed: usize,
        /// The frame bytes the report holds.
        held: usize,
    },
}

impl std::fmt::Display for NoFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoFrame::Empty => write!(f, "an empty report"),
            NoFrame::Cut {
                command,
                needed,
                held,
            } => write!(
                f,
                "a report cut short: command {command:#04x} needs {needed} bytes, the report \
                 holds {held}"
            ),
        }
    }
}

/// The frame one input report carries, as the serial stream would carry it.
///
/// A leading 0x00 is a report number (no Chessnut command is 0); bytes after the frame are
/// padding. A position keeps its 32 square bytes and the 4 bytes after them (0xFF when the
/// report holds none) under the length byte 0x24, whatever length byte it came with.
pub fn frame_of_report(report: &[u8]) -> Result<Vec<u8>, NoFrame> {
    let frame = report.strip_prefix(&[0]).unwrap_or(report);
    let (command, length, data) = match frame {
        [] | [0, ..] => return Err(NoFrame::Empty),
        [command, length, data @ ..] => (*command, *length, data),
        [command] => (*command, 0, &[][..]),
    };
    let cut = |needed: usize| NoFrame::Cut {
        command,
        needed,
        held: frame.len(),
    };
    if command == POSITION {
        return position_frame(data, usize::from(length)).ok_or(cut(2 + SQUARE_BYTES));
    }
    let needed = 2 + usize::from(length);
    match data.get(..usize::from(length)) {
        Some(data) if frame.len() >= 2 => Ok([&[command, length][..], data].concat()),
        _ => Err(cut(needed)),
    }
}

/// The serial frame of a position report's `data`, whose length byte said `length`: the
/// squares, then up to 4 of the bytes the length covers after them, 0xFF for the rest.
fn position_frame(data: &[u8], length: usize) -> Option<Vec<u8>> {
    let squares = data.get(..SQUARE_BYTES)?;
    let covered = length.clamp(SQUARE_BYTES, data.len());
    let tail_len = usize::from(POSITION_LENGTH) - SQUARE_BYTES;
    let mut out = vec![POSITION, POSITION_LENGTH];
    out.extend(squares);
    out.extend(data[SQUARE_BYTES..covered].iter().take(tail_len));
    out.resize(2 + usize::from(POSITION_LENGTH), MISSING_TAIL);
    Some(out)
}

/// The bytes written to a hidraw node to send `frame` in one output report of
/// `report_size` bytes: report number 0 (the board numbers no reports), the frame, zeros.
/// A frame longer than the report is written whole.
pub fn report_of_frame(frame: &[u8], report_size: usize) -> Vec<u8> {
    let mut report = Vec::with_capacity(1 + report_size.max(frame.len()));
    report.push(0);
    report.extend(frame);
    report.resize(1 + report_size.max(frame.len()), 0);
    report
}

/// Cuts the bytes a host writes into whole `[command] [length] [data]` frames, so that each
/// goes out in a report of its own.
#[derive(Debug, Clone, Default)]
pub struct HostFrames {
    partial: Vec<u8>,
}

impl HostFrames {
    /// Nothing written yet.
    pub fn new() -> Self {
        HostFrames::default()
    }

    /// How many leading bytes of `bytes` complete the frame begun so far; `None` when all of
    /// them leave it incomplete.
    pub fn completed_by(&self, bytes: &[u8]) -> Option<usize> {
        let have = self.partial.len();
        let length = match (self.partial.get(1), bytes.get(1usize.saturating_sub(have))) {
            (Some(&length), _) | (None, Some(&length)) => length,
            (None, None) => return None,
        };
        let needed = (2 + usize::from(length)).saturating_sub(have);
        (needed <= bytes.len()).then_some(needed)
    }

    /// The frame made of the bytes begun so far and `rest`, which
    /// [`HostFrames::completed_by`] said completes it. Nothing is taken until
    /// [`HostFrames::clear`]: the frame may have to wait for its report.
    pub fn frame_with(&self, rest: &[u8]) -> Vec<u8> {
        [&self.partial[..], rest].concat()
    }

    /// Forgets the frame begun: it went out.
    pub fn clear(&mut self) {
        self.partial.clear();
    }

    /// Keeps `bytes`, which do not complete the frame, for the next write.
    pub fn keep(&mut self, bytes: &[u8]) {
        self.partial.extend(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::chessnut::{Decoder, Message};
    use proptest::prelude::*;

    /// The documented start position (picochess's parser test vector), squares only.
    const START_SQUARES: [u8; 32] = [
        0x58, 0x23, 0x31, 0x85, 0x44, 0x44, 0x44, 0x44, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0x77, 0x77, 0x77, 0x77, 0xA6, 0xC9, 0x9B, 0x6A,
    ];

    fn start_frame() -> Vec<u8> {
        [&[0x01, 0x24][..], &START_SQUARES, &[0xFF; 4]].concat()
    }

    /// A report as a board might send it: optional report number, the frame, padding.
    fn report(numbered: bool, frame: &[u8], size: usize) -> Vec<u8> {
        let mut r = Vec::new();
        if numbered {
            r.push(0);
        }
        r.extend(frame);
        r.resize(usize::from(numbered) + size.max(frame.len()), 0);
        r
    }

    fn decoded(frame: &[u8]) -> Vec<Message> {
        let mut out = Vec::new();
        Decoder::new().push(frame, &mut out);
        out.into_iter().map(|m| m.expect("a valid frame")).collect()
    }

    #[test]
    fn every_documented_position_layout_gives_the_serial_frame() {
        let long = [&[0x01, 0x3D][..], &START_SQUARES, &[0xFF; 4], &[0x5A; 25]].concat();
        for frame in [start_frame(), long] {
            for numbered in [false, true] {
                let r = report(numbered, &frame, REPORT_SIZE);
                assert_eq!(frame_of_report(&r), Ok(start_frame()), "{r:02X?}");
            }
        }
        let squares_only = [&[0x01, 0x24][..], &START_SQUARES].concat();
        assert_eq!(frame_of_report(&squares_only), Ok(start_frame()));
        assert_eq!(decoded(&start_frame()).len(), 1);
    }

    #[test]
    fn other_frames_keep_their_length_and_lose_the_padding() {
        let battery = [0x2A, 0x02, 0x64, 0x01];
        assert_eq!(
            frame_of_report(&report(true, &battery, 64)),
            Ok(battery.to_vec())
        );
        assert_eq!(
            decoded(&frame_of_report(&report(false, &battery, 64)).unwrap()),
            [Message::Battery {
                percent: 100,
                charging: true
            }]
        );
        assert_eq!(frame_of_report(&[0; 65]), Err(NoFrame::Empty));
        assert_eq!(frame_of_report(&[]), Err(NoFrame::Empty));
        assert_eq!(
            frame_of_report(&[0x2A, 0x05, 1]),
            Err(NoFrame::Cut {
                command: 0x2A,
                needed: 7,
                held: 3
            })
        );
        assert!(matches!(
            frame_of_report(&[0x01, 0x24, 0x58]),
            Err(NoFrame::Cut { needed: 34, .. })
        ));
    }

    #[test]
    fn a_written_frame_is_report_number_zero_then_the_frame_then_zeros() {
        let report = report_of_frame(&[0x21, 0x01, 0x00], REPORT_SIZE);
        assert_eq!(report.len(), 65);
        assert_eq!(&report[..4], [0, 0x21, 0x01, 0x00]);
        assert!(report[4..].iter().all(|&b| b == 0));
        assert_eq!(report_of_frame(&[7; 70], REPORT_SIZE).len(), 71);
    }

    #[test]
    fn host_bytes_are_cut_into_frames_however_they_are_written() {
        let stream = [
            &[0x21, 0x01, 0x00][..],
            &[0x0A, 0x08, 1, 2, 3, 4, 5, 6, 7, 8],
            &[0x29, 0x01, 0x00],
        ]
        .concat();
        for step in 1..stream.len() {
            let mut frames = HostFrames::new();
            let mut out = Vec::new();
            for chunk in stream.chunks(step) {
                let mut rest = chunk;
                while let Some(n) = frames.completed_by(rest) {
                    out.push(frames.frame_with(&rest[..n]));
                    frames.clear();
                    rest = &rest[n..];
                }
                frames.keep(rest);
            }
            assert_eq!(out.concat(), stream, "chunks of {step}");
            assert_eq!(out.len(), 3, "chunks of {step}");
        }
    }

    proptest! {
        #[test]
        fn any_report_gives_a_frame_or_a_reason_and_never_panics(
            report in proptest::collection::vec(any::<u8>(), 0..200)
        ) {
            if let Ok(frame) = frame_of_report(&report) {
                prop_assert!(frame.len() >= 2);
                prop_assert_eq!(frame.len(), 2 + usize::from(frame[1]));
                let carried = report.starts_with(&frame)
                    || report.get(1..).is_some_and(|r| r.starts_with(&frame));
                prop_assert!(carried || frame[0] == POSITION);
            }
        }

        #[test]
        fn a_frame_sent_in_a_report_comes_back_whole(
            command in 2u8..=255,
            data in proptest::collection::vec(any::<u8>(), 0..62),
            numbered in any::<bool>(),
            padding in 0usize..40,
        ) {
            let mut frame = vec![command, data.len() as u8];
            frame.extend(&data);
            let mut r = report(numbered, &frame, 0);
            r.extend(std::iter::repeat_n(0, padding));
            prop_assert_eq!(frame_of_report(&r), Ok(frame.clone()));
            let written = report_of_frame(&frame, REPORT_SIZE);
            prop_assert_eq!(frame_of_report(&written), Ok(frame));
        }

        #[test]
        fn a_position_in_any_report_reads_as_the_same_squares(
            squares in proptest::collection::vec(0u8..=0xCC, 32),
            length in prop_oneof![Just(0x24u8), Just(0x3D), 0x20u8..=0x3E],
            numbered in any::<bool>(),
        ) {
            let squares: Vec<u8> = squares
                .into_iter()
                .map(|b| (b & 0x0F).min(12) | (b >> 4).min(12) << 4)
                .collect();
            let mut frame = vec![POSITION, length];
            frame.extend(&squares);
            frame.resize(2 + usize::from(length).max(32), 0xEE);
            let got = frame_of_report(&report(numbered, &frame, REPORT_SIZE)).unwrap();
            prop_assert_eq!(got.len(), 38);
            prop_assert_eq!(&got[..2], &[POSITION, POSITION_LENGTH]);
            prop_assert_eq!(&got[2..34], &squares[..]);
            prop_assert_eq!(decoded(&got).len(), 1);
        }
    }
}
