//! The streaming decoder of board → host bytes.

use super::frame::Framer;
use super::message::{Message, accepts_length};

/// Decodes the byte stream a DGT board sends, fed in chunks of any size.
///
/// Resynchronises after garbage: a byte with the MSB set starts a frame, a frame is abandoned
/// when such a byte arrives before its end, and a header whose length does not fit its id is
/// dropped. Memory is bounded by one frame ([`super::MAX_FRAME_LEN`] bytes).
#[derive(Debug, Default, Clone)]
pub struct Decoder {
    framer: Framer,
}

impl Decoder {
    /// A decoder waiting for the first frame.
    pub fn new() -> Self {
        Decoder::default()
    }

    /// Feeds `bytes`, appending every message completed by them to `out`.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<Message>) {
        self.framer.push(
            bytes,
            |id, total| accepts_length(id & 0x7F, total),
            |frame| out.push(Message::from_frame(frame)),
        );
    }

    /// Bytes of memory held for a partly received message; never more than
    /// [`super::MAX_FRAME_LEN`].
    pub fn memory_bytes(&self) -> usize {
        self.framer.memory_bytes()
    }

    /// Bytes dropped so far because they did not belong to a well-framed message.
    pub fn skipped_bytes(&self) -> u64 {
        self.framer.skipped()
    }
}
