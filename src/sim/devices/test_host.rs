//! The host of the unit tests: drives a device as a world loop would and keeps what it
//! sends, as raw bytes (the unit tests read them without `wire`'s decoders).

use shakmaty::Board;

use super::Device;
use crate::board::{Millis, ObservationKind, Snapshot};

/// A device and everything it sent so far.
pub struct TestHost {
    pub device: Box<dyn Device>,
    pub chunks: Vec<(Millis, Vec<u8>)>,
}

impl TestHost {
    pub fn new(device: Box<dyn Device>) -> TestHost {
        TestHost {
            device,
            chunks: Vec::new(),
        }
    }

    /// Runs the device to `t_ms`, taking each chunk at the time it left.
    pub fn run_until(&mut self, t_ms: Millis) {
        while let Some(next) = self.device.next_transmit_ms().filter(|&n| n < t_ms) {
            self.device.transmit(next, &mut self.chunks);
        }
        self.device.transmit(t_ms, &mut self.chunks);
    }

    pub fn physical(&mut self, t_ms: Millis, what: ObservationKind) {
        self.run_until(t_ms);
        self.device.physical(t_ms, &what);
    }

    pub fn host(&mut self, t_ms: Millis, bytes: &[u8]) {
        self.run_until(t_ms);
        self.device.receive(t_ms, bytes);
    }

    pub fn power(&mut self, t_ms: Millis, on: bool) {
        self.run_until(t_ms);
        self.device.power(t_ms, on);
    }

    pub fn connection(&mut self, t_ms: Millis, open: bool) {
        self.run_until(t_ms);
        self.device.connection(t_ms, open);
    }

    /// Everything sent from `t_ms` on, as one byte string.
    pub fn sent_since(&self, t_ms: Millis) -> Vec<u8> {
        self.chunks
            .iter()
            .filter(|(at, _)| *at >= t_ms)
            .flat_map(|(_, bytes)| bytes.clone())
            .collect()
    }

    /// Forgets what was sent so far.
    pub fn clear(&mut self) {
        self.chunks.clear();
    }
}

/// The hands set up the start position.
pub fn start() -> ObservationKind {
    ObservationKind::Snapshot(Snapshot {
        board: Board::new(),
        identifies_pieces: true,
    })
}
