//! A virtual Chessnut on USB HID, written from the documents (Chessnut's USB SDK and BLE
//! API, and the drivers the protocol notes cite), not from the recorder's decoder.
//!
//! It serves on a Unix sequenced-packet socket at a path, one host at a time: the HID
//! transport opens that path as it opens a `/dev/hidraw*` node, and every message is one
//! report, as every read and write of a hidraw node is. The board:
//! * reads each host report as the kernel hands it on: a leading report number 0 dropped,
//!   then `[command] [length] [data]`, the rest padding. `21 01 00` starts the stream
//!   (answered `23 01 00`), `29 01 00` asks for the battery (`2A 02 …`), `0A 08` + 8 bytes
//!   lights squares, `0B 04` beeps; anything else is kept as refused;
//! * sends its position every scan once streaming, as `01 24` + 32 square bytes + 4 bytes
//!   (or `01 3D` and more bytes, [`ChessnutHidConfig::position_length`]), in a report of
//!   [`ChessnutHidConfig::report_size`] bytes filled with
//!   [`ChessnutHidConfig::padding`], with a report number 0 first when
//!   [`ChessnutHidConfig::report_number`] is set;
//! * keeps the shortest time between two host reports, which Chessnut's SDK keeps at
//!   200 ms or more.
//!
//! Squares go two to a byte, the first in the low nibble, in the order h8, g8 … a8, h7 … a1;
//! pieces are 1 q, 2 k, 3 b, 4 p, 5 n, 6 R, 7 P, 8 r, 9 B, 10 N, 11 Q, 12 K, 0 empty. The
//! script plays as on the other virtual boards: in game coordinates, from
//! [`ChessnutHidConfig::start_delay`] after the host started the stream.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use shakmaty::{Board, Color, File, Piece, Rank, Role, Square};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::board::kind::BoardKind;
use crate::board::{Observation, ObservationKind};
use crate::driver::report_socket::{ReportChannel, ReportListener};

/// Settings of a virtual Chessnut on USB HID.
#[derive(Debug, Clone)]
pub struct ChessnutHidConfig {
    /// Where it listens (the port a host opens).
    pub path: PathBuf,
    /// What happens on the board, in game coordinates, `t_ms` from the start of the script.
    pub script: Vec<Observation>,
    /// Speed factor: 1.0 plays in real time.
    pub speed: f64,
    /// The pieces before the script starts.
    pub initial: Board,
    /// Time between two position reports.
    pub scan_period: Duration,
    /// Bytes in a report, without the report number.
    pub report_size: usize,
    /// Each input report starts with report number 0 (a 65-byte read).
    pub report_number: bool,
    /// The length byte of a position: 0x24 (the serial and BLE frame) or 0x3D (one driver's
    /// reading of the HID report); bytes past the squares are the 4 trailing bytes and zeros.
    pub position_length: u8,
    /// The byte that fills a report after its frame.
    pub padding: u8,
    /// How long after the host started the stream the script starts, in real time.
    pub start_delay: Duration,
}

impl ChessnutHidConfig {
    /// A board at `path` in the start position playing `script` in real time, sending
    /// `01 24` positions in 64-byte reports padded with zeros.
    pub fn new(path: impl Into<PathBuf>, script: Vec<Observation>) -> Self {
        ChessnutHidConfig {
            path: path.into(),
            script,
            speed: 1.0,
            initial: Board::new(),
            scan_period: Duration::from_millis(BoardKind::Chessnut.scan_period_ms()),
            report_size: 64,
            report_number: false,
            position_length: 0x24,
            padding: 0,
            start_delay: Duration::from_millis(1500),
        }
    }
}

/// What the board shows the outside.
#[derive(Debug, Default)]
struct Seen {
    /// Lit squares as DGT fields (0 = a8).
    leds: Vec<u8>,
    positions: u64,
    host_reports: u64,
    shortest_write_gap: Option<Duration>,
    refused: Vec<Vec<u8>>,
}

/// A running virtual Chessnut on USB HID.
#[derive(Debug)]
pub struct VirtualChessnutHid {
    path: PathBuf,
    seen: Arc<Mutex<Seen>>,
    finished: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl VirtualChessnutHid {
    /// Listens at `config.path` and starts the board. Must be called inside a tokio runtime.
    pub fn spawn(config: ChessnutHidConfig) -> io::Result<VirtualChessnutHid> {
        let listener = ReportListener::bind(&config.path)?;
        let (finished_tx, finished) = watch::channel(config.script.is_empty());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let path = config.path.clone();
        let task = tokio::spawn(
            Runner {
                board: config.initial.clone(),
                config,
                seen: Arc::clone(&seen),
                finished: finished_tx,
                started: None,
                last_host_report: None,
            }
            .run(listener),
        );
        Ok(VirtualChessnutHid {
            path,
            seen,
            finished,
            task,
        })
    }

    /// The port path a host opens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits until the whole script has been played.
    pub async fn finished(&self) {
        let mut rx = self.finished.clone();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// The DGT fields (0 = a8) whose LEDs are lit now.
    pub fn lit_fields(&self) -> Vec<u8> {
        self.seen(|s| s.leds.clone())
    }

    /// Position reports sent so far.
    pub fn positions_sent(&self) -> u64 {
        self.seen(|s| s.positions)
    }

    /// Reports the host wrote so far.
    pub fn host_reports(&self) -> u64 {
        self.seen(|s| s.host_reports)
    }

    /// The shortest time between two reports the host wrote; `None` before the second.
    pub fn shortest_write_gap(&self) -> Option<Duration> {
        self.seen(|s| s.shortest_write_gap)
    }

    /// Host reports the board did not understand, as written.
    pub fn refused(&self) -> Vec<Vec<u8>> {
        self.seen(|s| s.refused.clone())
    }

    fn seen<T: Default>(&self, read: impl FnOnce(&Seen) -> T) -> T {
        self.seen.lock().map(|s| read(&s)).unwrap_or_default()
    }
}

impl Drop for VirtualChessnutHid {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The nibble of a piece in Chessnut's code.
fn nibble(piece: Option<Piece>) -> u8 {
    let Some(piece) = piece else { return 0 };
    let codes = match piece.role {
        Role::Queen => (11, 1),
        Role::King => (12, 2),
        Role::Bishop => (9, 3),
        Role::Pawn => (7, 4),
        Role::Knight => (10, 5),
        Role::Rook => (6, 8),
    };
    match piece.color {
        Color::White => codes.0,
        Color::Black => codes.1,
    }
}

/// The square sent at position `index` of the wire order (0 = h8, 1 = g8 … 63 = a1).
fn wire_square(index: usize) -> Square {
    let file = File::new(7 - (index % 8) as u32);
    let rank = Rank::new(7 - (index / 8 % 8) as u32);
    Square::from_coords(file, rank)
}

struct Runner {
    config: ChessnutHidConfig,
    board: Board,
    seen: Arc<Mutex<Seen>>,
    finished: watch::Sender<bool>,
    started: Option<Instant>,
    last_host_report: Option<Instant>,
}

impl Runner {
    async fn run(mut self, listener: ReportListener) {
        let mut script = std::mem::take(&mut self.config.script);
        script.reverse();
        while let Ok(channel) = listener.accept().await {
            self.serve(&channel, &mut script).await;
        }
    }

    /// One host, until it closes its end.
    async fn serve(&mut self, channel: &ReportChannel, script: &mut Vec<Observation>) {
        let mut scan = tokio::time::interval(self.config.scan_period);
        scan.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut streaming = false;
        let mut buf = vec![0u8; 1024];
        loop {
            tokio::select! {
                received = channel.recv(&mut buf) => {
                    let n = match received {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let report = buf[..n].to_vec();
                    let reply = self.on_host_report(&report, &mut streaming);
                    if let Some(frame) = reply
                        && channel.send(&self.report(&frame)).await.is_err()
                    {
                        return;
                    }
                }
                _ = scan.tick() => {
                    self.play(script);
                    if !streaming {
                        continue;
                    }
                    let position = self.position_frame();
                    if channel.send(&self.report(&position)).await.is_err() {
                        return;
                    }
                    if let Ok(mut seen) = self.seen.lock() {
                        seen.positions += 1;
                    }
                }
            }
        }
    }

    /// Applies the observations that are due.
    fn play(&mut self, script: &mut Vec<Observation>) {
        let Some(t0) = self.started else { return };
        let now = Instant::now();
        let elapsed = now.saturating_duration_since(t0).as_secs_f64() * 1000.0 * self.config.speed;
        while script
            .last()
            .is_some_and(|o| o.t_ms as f64 <= elapsed && now >= t0)
        {
            let Some(observation) = script.pop() else {
                break;
            };
            match observation.kind {
                ObservationKind::Emptied(square) => {
                    self.board.discard_piece_at(square);
                }
                ObservationKind::Placed(square, piece) => {
                    self.board
                        .set_piece_at(square, piece.unwrap_or(Role::Pawn.of(Color::White)));
                }
                _ => {}
            }
        }
        if script.is_empty() {
            let _ = self.finished.send(true);
        }
    }

    /// What the board does with one report the host wrote; the frame it answers with.
    fn on_host_report(&mut self, report: &[u8], streaming: &mut bool) -> Option<Vec<u8>> {
        let now = Instant::now();
        let gap = self.last_host_report.map(|last| now - last);
        self.last_host_report = Some(now);
        if let Ok(mut seen) = self.seen.lock() {
            seen.host_reports += 1;
            if let Some(gap) = gap {
                seen.shortest_write_gap = Some(seen.shortest_write_gap.map_or(gap, |g| g.min(gap)));
            }
        }
        let frame = report.strip_prefix(&[0]).unwrap_or(report);
        let length = usize::from(*frame.get(1)?);
        let data = frame.get(2..2 + length);
        match (frame[0], data) {
            (0x21, Some([0])) => {
                *streaming = true;
                if self.started.is_none() {
                    self.started = Some(now + self.config.start_delay);
                }
                Some(vec![0x23, 0x01, 0x00])
            }
            (0x29, Some([0])) => Some(vec![0x2A, 0x02, 0x57, 0x00]),
            (0x0A, Some(rows)) if rows.len() == 8 => {
                let lit = (0..64u8)
                    .filter(|&f| rows[usize::from(f / 8)] & (0x80 >> (f % 8)) != 0)
                    .collect();
                if let Ok(mut seen) = self.seen.lock() {
                    seen.leds = lit;
                }
                None
            }
            (0x0B, Some(beep)) if beep.len() == 4 => None,
            _ => {
                if let Ok(mut seen) = self.seen.lock() {
                    seen.refused.push(report.to_vec());
                }
                None
            }
        }
    }

    /// The position as the board sends it: command, length byte, squares, trailing bytes.
    fn position_frame(&self) -> Vec<u8> {
        let length = usize::from(self.config.position_length);
        let mut frame = vec![0x01, self.config.position_length];
        for pair in 0..32 {
            let first = self.board.piece_at(wire_square(2 * pair));
            let second = self.board.piece_at(wire_square(2 * pair + 1));
            frame.push(nibble(first) | nibble(second) << 4);
        }
        frame.extend([0xFF; 4]);
        frame.resize(2 + length.max(32), 0);
        frame
    }

    /// `frame` in one input report: report number, frame, padding.
    fn report(&self, frame: &[u8]) -> Vec<u8> {
        let numbered = usize::from(self.config.report_number);
        let mut report = Vec::with_capacity(numbered + self.config.report_size);
        if self.config.report_number {
            report.push(0);
        }
        report.extend(frame);
        report.resize(
            numbered + self.config.report_size.max(frame.len()),
            self.config.padding,
        );
        report
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_start_position_is_the_documented_frame() {
        let runner = Runner {
            config: ChessnutHidConfig::new("unused", Vec::new()),
            board: Board::new(),
            seen: Arc::default(),
            finished: watch::channel(false).0,
            started: None,
            last_host_report: None,
        };
        // The picochess parser test vector of the protocol notes.
        let documented: Vec<u8> = "01 24 58 23 31 85 44 44 44 44 00 00 00 00 00 00 00 00 00 \
            00 00 00 00 00 00 00 77 77 77 77 A6 C9 9B 6A FF FF FF FF"
            .split_whitespace()
            .map(|h| u8::from_str_radix(h, 16).unwrap())
            .collect();
        assert_eq!(runner.position_frame(), documented);
        let report = runner.report(&documented);
        assert_eq!(report.len(), 64);
        assert_eq!(&report[..38], documented);
    }
}
