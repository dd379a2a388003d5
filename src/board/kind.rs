//! The kinds of board the recorder reads, and the decoding of each kind's bytes into the
//! messages the DGT observer takes.
//!
//! DGT boards report changes; the others send whole-board frames, which go through the one
//! [`SnapshotAdapter`](super::snapshot::SnapshotAdapter). A frame a decoder could not read
//! is counted and kept for the log ([`KindDecoder::take_errors`]); it never stops the board.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::board::Millis;
use crate::board::snapshot::SnapshotAdapter;
use crate::wire::dgt::{self, Message};
use crate::wire::frame_error::FrameError;
use crate::wire::pegasus::{PegasusDecoder, PegasusMessage};
use crate::wire::{certabo, chessnut, millennium};

/// A kind of electronic board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BoardKind {
    /// DGT e-board (USB, serial, Bluetooth serial).
    #[default]
    Dgt,
    /// Millennium ChessLink, Exclusive, Performance, eONE.
    Millennium,
    /// Certabo (RFID tag per piece).
    Certabo,
    /// Certabo Sentio / Tabutronic (occupancy only).
    Sentio,
    /// Chessnut Air, Air+, Pro.
    Chessnut,
    /// DGT Pegasus: DGT's framing and field updates, occupancy only, streaming after the
    /// developer key (Bluetooth LE; a serial path carries the same bytes).
    Pegasus,
}

impl BoardKind {
    /// Every kind, in the order they are listed to users.
    pub const ALL: [BoardKind; 6] = [
        BoardKind::Dgt,
        BoardKind::Millennium,
        BoardKind::Certabo,
        BoardKind::Sentio,
        BoardKind::Chessnut,
        BoardKind::Pegasus,
    ];

    /// The name used in event files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            BoardKind::Dgt => "dgt",
            BoardKind::Millennium => "millennium",
            BoardKind::Certabo => "certabo",
            BoardKind::Sentio => "sentio",
            BoardKind::Chessnut => "chessnut",
            BoardKind::Pegasus => "pegasus",
        }
    }

    /// False for boards that sense only occupancy (Sentio, Pegasus): they take the
    /// occupancy-only path, where a promotion's piece is the arbiter's (4.6).
    pub fn identifies_pieces(self) -> bool {
        !matches!(self, BoardKind::Sentio | BoardKind::Pegasus)
    }

    /// How long the board takes to read all its squares once: a DGT board samples its
    /// squares one by one in about 250 ms; a Millennium board scans every 41 ms (register
    /// 0x01's default); a Certabo frame of about 820 characters fills the 38400-baud line
    /// for 210 ms, so frames come about 3 a second; Sentio and Chessnut about 10. No
    /// document gives the Pegasus's scan: it reports field changes one by one as DGT boards
    /// do, and is modelled as DGT's Bluetooth boards, which scan at half a USB board's
    /// speed (`protocols` 1.7).
    pub fn scan_period_ms(self) -> Millis {
        match self {
            BoardKind::Dgt => 250,
            BoardKind::Pegasus => 500,
            BoardKind::Millennium => 41,
            BoardKind::Certabo => 300,
            BoardKind::Sentio | BoardKind::Chessnut => 100,
        }
    }

    /// How long a change takes to show on the host after it happens: one scan, and for
    /// Certabo the frames its vote needs.
    pub fn report_delay_ms(self) -> Millis {
        match self {
            BoardKind::Certabo => self.scan_period_ms() * (certabo::VOTE_DEPTH as u64 / 2 + 1),
            _ => self.scan_period_ms(),
        }
    }

    /// How long one frame takes on the line (38400 baud carries 3840 bytes a second): a
    /// Millennium status is 67 bytes, a Certabo frame about 820 characters, a Chessnut
    /// position 38 bytes, a Sentio frame about 30 characters. Zero for DGT (its updates are
    /// modelled one by one).
    pub fn frame_transfer_ms(self) -> Millis {
        let bytes = match self {
            BoardKind::Dgt | BoardKind::Pegasus => 0,
            BoardKind::Millennium => 67,
            BoardKind::Certabo => 820,
            BoardKind::Sentio => 30,
            BoardKind::Chessnut => 38,
        };
        bytes * 1000 / 3840
    }

    /// How much later than the clock a square's change reaches the host: the report delay and
    /// one frame on the line for boards that send whole frames; 0 for DGT, whose square
    /// updates and clock messages come on one line as they happen (and for the Pegasus,
    /// which has no clock).
    pub fn report_lag_ms(self) -> Millis {
        if self.sends_snapshots() {
            self.report_delay_ms() + self.frame_transfer_ms()
        } else {
            0
        }
    }

    /// True for boards with LEDs the host can light.
    pub fn has_leds(self) -> bool {
        self != BoardKind::Dgt
    }

    /// True for boards that send whole-board frames (not DGT and Pegasus, which report
    /// each field change).
    pub fn sends_snapshots(self) -> bool {
        !matches!(self, BoardKind::Dgt | BoardKind::Pegasus)
    }

    /// True for boards that keep a move log the host can read after a gap (DGT's EEPROM
    /// log); the others are read again from their position.
    pub fn has_move_log(self) -> bool {
        self == BoardKind::Dgt
    }

    /// True for boards that stream only after the host gave DGT's developer key (Pegasus).
    pub fn needs_developer_key(self) -> bool {
        self == BoardKind::Pegasus
    }
}

impl fmt::Display for BoardKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for BoardKind {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let text = text.trim().to_ascii_lowercase();
        BoardKind::ALL
            .into_iter()
            .find(|k| k.name() == text)
            .ok_or_else(|| {
                let names: Vec<&str> = BoardKind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown board kind `{text}`: give one of {}",
                    names.join(", ")
                )
            })
    }
}

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
}

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
    /// mark is what restarts them.
    pub fn link_lost(&mut self) {
        self.adapter.restart();
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::pegasus::PegasusMessage;

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
}
