//! A Chessnut board (Air, Air+, Pro), board side (protocols 2.3). Every frame either way is
//! `[command] [length] [length bytes]`.
//!
//! After the host writes `21 01 00` (real-time mode) the board acknowledges `23 01 00` and
//! sends its position at the end of every scan: `01 24`, 32 bytes of two squares each (h8,
//! g8 … a8, h7 … a1 of its hardware, the first of a pair in the low nibble), then
//! `FF FF FF FF`. It answers the battery request `29 01 00` with `2A 02`, the charge in the
//! low seven bits and charging in bit 7 (the official document; picochess reads the second
//! byte instead); it takes LED and beep commands without a reply. The document does not
//! say that it streams across a dropped link: the host must ask again after the link comes
//! back, as after a power cycle.

use super::DeviceOptions;
use super::firmware::Firmware;
use super::hardware::{Hardware, Pending, earliest};
use crate::board::Millis;
use crate::board::kind::BoardKind;
use shakmaty::{Color, Piece, Role};

const REAL_TIME: u8 = 0x21;
const BATTERY_REQUEST: u8 = 0x29;
const POSITION: u8 = 0x01;
const MODE_ACK: u8 = 0x23;
const BATTERY: u8 = 0x2A;
/// 88 %, not charging.
const CHARGE: u8 = 88;

/// A square's nibble: 0 empty, 1 q, 2 k, 3 b, 4 p, 5 n, 6 R, 7 P, 8 r, 9 B, 10 N, 11 Q,
/// 12 K.
fn nibble(piece: Option<Piece>) -> u8 {
    let Some(piece) = piece else { return 0 };
    match (piece.color, piece.role) {
        (Color::Black, Role::Queen) => 1,
        (Color::Black, Role::King) => 2,
        (Color::Black, Role::Bishop) => 3,
        (Color::Black, Role::Pawn) => 4,
        (Color::Black, Role::Knight) => 5,
        (Color::White, Role::Rook) => 6,
        (Color::White, Role::Pawn) => 7,
        (Color::Black, Role::Rook) => 8,
        (Color::White, Role::Bishop) => 9,
        (Color::White, Role::Knight) => 10,
        (Color::White, Role::Queen) => 11,
        (Color::White, Role::King) => 12,
    }
}

/// Reads `[command] [length] [data]` frames from bytes arriving in any pieces.
#[derive(Debug, Clone, Default)]
struct FrameReader {
    pending: Vec<u8>,
}

impl FrameReader {
    fn push(&mut self, bytes: &[u8], out: &mut Vec<(u8, Vec<u8>)>) {
        for &b in bytes {
            self.pending.push(b);
            if self.pending.len() >= 2 && self.pending.len() == 2 + usize::from(self.pending[1]) {
                out.push((self.pending[0], self.pending[2..].to_vec()));
                self.pending.clear();
            }
        }
    }
}

/// A Chessnut board.
#[derive(Debug, Clone)]
pub struct ChessnutBoard {
    hw: Hardware,
    reader: FrameReader,
    requests: Pending<(u8, Vec<u8>)>,
    reply_delay_ms: Millis,
    real_time: bool,
    /// Scans up to here are done.
    scan_seen_ms: Millis,
}

impl ChessnutBoard {
    /// An empty board, just switched on, not streaming.
    pub fn new(options: &DeviceOptions) -> ChessnutBoard {
        ChessnutBoard {
            hw: Hardware::new(BoardKind::Chessnut, options),
            reader: FrameReader::default(),
            requests: Pending::default(),
            reply_delay_ms: options.reply_delay_ms,
            real_time: false,
            scan_seen_ms: 0,
        }
    }

    fn next_scan(&self) -> Option<Millis> {
        let end = self.hw.sensors.sweep_end_after(self.scan_seen_ms);
        self.real_time.then_some(end)
    }

    fn position(&self) -> Vec<u8> {
        let sensed = self.hw.sensors.sensed();
        let mut frame = vec![POSITION, 0x24];
        for rank in sensed.chunks(8) {
            let from_h: Vec<u8> = rank
                .iter()
                .rev()
                .map(|m| nibble(m.and_then(|m| m.piece())))
                .collect();
            frame.extend(from_h.chunks(2).map(|pair| pair[0] | pair[1] << 4));
        }
        frame.extend([0xFF; 4]);
        frame
    }

    fn execute(&mut self, at: Millis, command: u8, data: &[u8]) {
        match (command, data) {
            (REAL_TIME, [0x00]) => {
                self.real_time = true;
                self.scan_seen_ms = at;
                self.hw.line.send(at, &[MODE_ACK, 0x01, 0x00]);
            }
            (REAL_TIME, _) => self.real_time = false,
            (BATTERY_REQUEST, _) => self.hw.line.send(at, &[BATTERY, 0x02, CHARGE, 0x00]),
            _ => {}
        }
    }

    /// The link or the power went: real-time mode ends.
    fn stop(&mut self) {
        self.real_time = false;
        self.requests.clear();
        self.reader = FrameReader::default();
    }
}

impl Firmware for ChessnutBoard {
    fn kind(&self) -> BoardKind {
        BoardKind::Chessnut
    }

    fn hardware(&self) -> &Hardware {
        &self.hw
    }

    fn hardware_mut(&mut self) -> &mut Hardware {
        &mut self.hw
    }

    fn next_event(&self) -> Option<Millis> {
        self.next_output()
    }

    fn next_output(&self) -> Option<Millis> {
        earliest([self.requests.next_due(), self.next_scan()])
    }

    fn step(&mut self, at: Millis) {
        self.hw.sample_until(at);
        while let Some((_, (command, data))) = self.requests.pop_due(at) {
            self.execute(at, command, &data);
        }
        if self.next_scan().is_some_and(|s| s <= at) {
            self.scan_seen_ms = at;
            let frame = self.position();
            self.hw.line.send(at, &frame);
        }
    }

    fn on_bytes(&mut self, t_ms: Millis, bytes: &[u8]) {
        let mut frames = Vec::new();
        self.reader.push(bytes, &mut frames);
        for frame in frames {
            self.requests.push(t_ms + self.reply_delay_ms, frame);
        }
    }

    fn on_link(&mut self, open: bool) {
        if !open {
            self.stop();
        }
    }

    fn on_power(&mut self, _t_ms: Millis, _on: bool) {
        self.stop();
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::Square;

    use super::*;
    use crate::board::ObservationKind;
    use crate::sim::devices::test_host::{TestHost, start};

    fn board() -> TestHost {
        let mut host = TestHost::new(Box::new(ChessnutBoard::new(&DeviceOptions::new(5))));
        host.physical(0, start());
        host
    }

    /// protocols 2.3: `01 24 58 23 31 85 44×4 00×16 77×4 A6 C9 9B 6A FF FF FF FF`.
    fn start_frame() -> Vec<u8> {
        let mut frame = vec![0x01, 0x24, 0x58, 0x23, 0x31, 0x85];
        frame.extend([0x44; 4]);
        frame.extend([0x00; 16]);
        frame.extend([0x77; 4]);
        frame.extend([0xA6, 0xC9, 0x9B, 0x6A, 0xFF, 0xFF, 0xFF, 0xFF]);
        frame
    }

    #[test]
    fn real_time_mode_is_acknowledged_and_streams_the_documents_start_frame() {
        let mut host = board();
        host.run_until(1000);
        assert!(host.chunks.is_empty(), "silent until asked");
        host.host(1000, &[0x21, 0x01, 0x00]);
        host.run_until(2000);
        let (ack, frames) = host.chunks.split_first().unwrap();
        assert_eq!(ack.1, [0x23, 0x01, 0x00]);
        assert!((9..=10).contains(&frames.len()), "ten frames a second");
        assert!(frames.iter().all(|f| f.1 == start_frame()));
        host.physical(2000, ObservationKind::Emptied(Square::E2));
        host.run_until(2300);
        let last = &host.chunks.last().unwrap().1;
        assert_eq!(
            last[2 + 24..2 + 28],
            [0x77, 0x07, 0x77, 0x77],
            "e2 (h2 g2 | f2 e2 …)"
        );
    }

    #[test]
    fn the_battery_is_answered_and_leds_are_taken_silently() {
        let mut host = board();
        host.host(
            0,
            &[0x0A, 0x08, 0, 0, 0, 0, 0, 0, 0x08, 0, 0x29, 0x01, 0x00],
        );
        host.run_until(100);
        assert_eq!(host.sent_since(0), [0x2A, 0x02, 88, 0x00]);
    }

    #[test]
    fn the_stream_stops_with_the_link_or_the_power_until_asked_again() {
        let mut host = board();
        host.host(0, &[0x21, 0x01, 0x00]);
        host.connection(1000, false);
        host.connection(1100, true);
        host.run_until(2000);
        assert!(host.sent_since(1001).is_empty());
        host.host(2000, &[0x21, 0x01, 0x00]);
        host.power(3000, false);
        host.power(3100, true);
        host.run_until(4000);
        let times: Vec<Millis> = host.chunks.iter().map(|c| c.0).collect();
        assert!(times.iter().any(|&t| t > 2000 && t < 3000), "{times:?}");
        assert!(!times.iter().any(|&t| t > 3000), "{times:?}");
    }
}
