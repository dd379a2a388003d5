//! Certabo (an RFID reader under every square) and Sentio / Tabutronic (occupancy only),
//! board side (protocols 2.2). Both stream from power-up without being asked, one frame at
//! the end of every scan: `:`, space-separated decimal numbers, CR LF.
//!
//! * Certabo: 320 numbers, the 5-byte tag id read on each square, a8 of the hardware first,
//!   zeros on an empty square. Every piece carries a tag of its own, shaped as real ones are
//!   (`3 0 83..85 x y`); the readers now and then read a wrong id on an occupied square and a
//!   random one on an empty square (the real frames have one on about a quarter of them).
//!   Spare queens on d3 and d6 stand there with the arrangement the board is switched on
//!   with, for the host to learn their tags, and are taken off at the first change.
//! * Sentio: 8 numbers, one bitmask per rank from rank 8, the most significant bit the
//!   a-file.
//!
//! What the host writes (LED bytes) needs no reply and changes nothing the board sends.
//! The link closing changes nothing on the board: it goes on streaming into the void.

use std::collections::HashMap;

use rand::Rng;
use shakmaty::{Color, Role, Square};

use super::arrangement::{Man, Shape};
use super::firmware::Firmware;
use super::hardware::{Applied, Hardware};
use super::{DeviceOptions, TagNoise};
use crate::board::kind::BoardKind;
use crate::board::{Millis, ObservationKind};

/// One square's tag id.
type Tag = [u8; 5];

/// The spare queens and their squares (protocols 2.2: d6 Black, d3 White).
const SPARE_QUEENS: [(Square, Color); 2] = [(Square::D3, Color::White), (Square::D6, Color::Black)];

/// A Certabo or Sentio board.
#[derive(Debug, Clone)]
pub struct CertaboBoard {
    kind: BoardKind,
    hw: Hardware,
    noise: TagNoise,
    spare_queens: bool,
    /// The spare queens stand on the board.
    spares_shown: bool,
    tags: HashMap<u32, Tag>,
    /// Scans up to here are done.
    scan_seen_ms: Millis,
}

impl CertaboBoard {
    /// An empty board of `kind` (Certabo or Sentio), just switched on, streaming.
    pub fn new(kind: BoardKind, options: &DeviceOptions) -> CertaboBoard {
        CertaboBoard {
            kind,
            hw: Hardware::new(kind, options),
            noise: options.tag_noise,
            spare_queens: options.spare_queens && kind == BoardKind::Certabo,
            spares_shown: false,
            tags: HashMap::new(),
            scan_seen_ms: 0,
        }
    }

    fn frame(&mut self) -> Vec<u8> {
        let sensed = *self.hw.sensors.sensed();
        let numbers: Vec<u8> = match self.kind {
            BoardKind::Sentio => sensed
                .chunks(8)
                .map(|rank| {
                    (rank.iter().enumerate())
                        .filter(|(_, m)| m.is_some())
                        .fold(0, |mask, (file, _)| mask | 0x80 >> file)
                })
                .collect(),
            _ => sensed.iter().flat_map(|&man| self.read_tag(man)).collect(),
        };
        let mut text = Vec::with_capacity(numbers.len() * 4 + 3);
        text.push(b':');
        for n in numbers {
            push_decimal(&mut text, n);
            text.push(b' ');
        }
        text.extend_from_slice(b"\r\n");
        text
    }

    /// What a square's reader returns in one frame.
    fn read_tag(&mut self, man: Option<Man>) -> Tag {
        let chance = if man.is_some() {
            self.noise.misread
        } else {
            self.noise.ghost
        };
        if self.hw.rng.gen_bool(chance.clamp(0.0, 1.0)) {
            return self.hw.rng.r#gen();
        }
        man.map_or([0; 5], |man| self.tag_of(man))
    }

    /// The tag of a piece: its own, made when it is first read.
    fn tag_of(&mut self, man: Man) -> Tag {
        if let Some(tag) = self.tags.get(&man.id) {
            return *tag;
        }
        let tag = loop {
            let tag = [
                3,
                0,
                self.hw.rng.gen_range(83..=85),
                self.hw.rng.r#gen(),
                self.hw.rng.r#gen(),
            ];
            if !self.tags.values().any(|t| *t == tag) {
                break tag;
            }
        };
        self.tags.insert(man.id, tag);
        tag
    }

    /// Puts the spare queens on their squares, if empty, as part of the arrangement the
    /// board was switched on with.
    fn show_spares(&mut self, t_ms: Millis) {
        for (square, color) in SPARE_QUEENS {
            if self.hw.arrangement.at(square).is_none() {
                let queen = Some(Role::Queen.of(color));
                self.hw.apply(t_ms, &ObservationKind::Placed(square, queen));
            }
        }
        self.hw.sensors.read_all();
        self.spares_shown = true;
    }

    /// Takes the spare queens off (the arbiter puts them beside the board).
    fn remove_spares(&mut self, t_ms: Millis) {
        self.spares_shown = false;
        for (square, color) in SPARE_QUEENS {
            let queen = Shape::Piece(Role::Queen.of(color));
            if self
                .hw
                .arrangement
                .at(square)
                .is_some_and(|m| m.shape == queen)
            {
                self.hw.apply(t_ms, &ObservationKind::Emptied(square));
            }
        }
    }
}

impl Firmware for CertaboBoard {
    fn kind(&self) -> BoardKind {
        self.kind
    }

    fn hardware(&self) -> &Hardware {
        &self.hw
    }

    fn hardware_mut(&mut self) -> &mut Hardware {
        &mut self.hw
    }

    /// The end of the next scan.
    fn next_event(&self) -> Option<Millis> {
        Some(self.hw.sensors.sweep_end_after(self.scan_seen_ms))
    }

    fn next_output(&self) -> Option<Millis> {
        self.next_event()
    }

    fn step(&mut self, at: Millis) {
        self.hw.sample_until(at);
        self.scan_seen_ms = at;
        // A frame goes when the one before has left; otherwise this scan's is not sent.
        if self.hw.line.idle_at(at) {
            let frame = self.frame();
            self.hw.line.send(at, &frame);
        }
    }

    fn on_physical(&mut self, t_ms: Millis, what: &ObservationKind) {
        let moves_pieces = !matches!(
            what,
            ObservationKind::ClockPressed { .. } | ObservationKind::ClockTimes(_)
        );
        if self.spares_shown && moves_pieces {
            self.remove_spares(t_ms);
        }
        if self.hw.apply(t_ms, what) == Applied::Initial && self.spare_queens {
            self.show_spares(t_ms);
        }
    }

    /// LED bytes: nothing to answer.
    fn on_bytes(&mut self, _t_ms: Millis, _bytes: &[u8]) {}

    fn on_power(&mut self, t_ms: Millis, _on: bool) {
        self.scan_seen_ms = t_ms;
    }
}

/// Appends `n` in decimal, as the board writes its numbers.
fn push_decimal(text: &mut Vec<u8>, n: u8) {
    if n >= 100 {
        text.push(b'0' + n / 100);
    }
    if n >= 10 {
        text.push(b'0' + n / 10 % 10);
    }
    text.push(b'0' + n % 10);
}

#[cfg(test)]
mod tests;
