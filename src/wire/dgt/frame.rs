//! Framing shared by board messages and bus replies: an id byte with the MSB set, a 14-bit
//! total length in two 7-bit bytes, then data bytes with the MSB clear.

/// The largest frame the 14-bit length field can describe, header included.
pub const MAX_FRAME_LEN: usize = (1 << 14) - 1;

/// The length of the header (id and two length bytes).
pub(crate) const HEADER_LEN: usize = 3;

/// Writes a frame header for a frame of `total_len` bytes (header included).
pub(crate) fn push_header(out: &mut Vec<u8>, id: u8, total_len: usize) {
    let len = total_len.min(MAX_FRAME_LEN);
    out.push(id | 0x80);
    out.push(((len >> 7) & 0x7F) as u8);
    out.push((len & 0x7F) as u8);
}

/// A streaming splitter of framed bytes. Memory is bounded by [`MAX_FRAME_LEN`].
///
/// Resynchronisation: a byte with the MSB set always starts a new frame (data bytes never have
/// it), so a partial frame is abandoned as soon as one arrives; a header whose length the
/// caller's `accepts` rejects is dropped whole (its three bytes cannot start a frame).
#[derive(Debug, Clone)]
pub(crate) struct Framer {
    frame: Vec<u8>,
    expected: usize,
    skipped: u64,
}

impl Default for Framer {
    fn default() -> Self {
        Framer {
            frame: Vec::with_capacity(HEADER_LEN),
            expected: 0,
            skipped: 0,
        }
    }
}

impl Framer {
    /// Bytes dropped so far (garbage and abandoned partial frames).
    pub(crate) fn skipped(&self) -> u64 {
        self.skipped
    }

    /// Bytes of memory held for the frame being assembled (at most [`MAX_FRAME_LEN`]).
    pub(crate) fn memory_bytes(&self) -> usize {
        self.frame.capacity()
    }

    /// Feeds `bytes`; calls `emit` with each complete frame (header included).
    pub(crate) fn push(
        &mut self,
        mut bytes: &[u8],
        accepts: impl Fn(u8, usize) -> bool,
        mut emit: impl FnMut(&[u8]),
    ) {
        while let Some((&first, rest)) = bytes.split_first() {
            if self.frame.len() >= HEADER_LEN {
                // Fast path: copy data bytes up to the frame end or the first MSB byte.
                let want = (self.expected - self.frame.len()).min(bytes.len());
                let clean = bytes[..want]
                    .iter()
                    .position(|b| b & 0x80 != 0)
                    .unwrap_or(want);
                self.frame.extend_from_slice(&bytes[..clean]);
                bytes = &bytes[clean..];
                if self.frame.len() == self.expected {
                    emit(&self.frame);
                    self.frame.clear();
                } else if clean < want {
                    self.abandon();
                }
                continue;
            }
            bytes = rest;
            if first & 0x80 != 0 {
                self.abandon();
                self.frame.push(first);
                continue;
            }
            if self.frame.is_empty() {
                self.skipped += 1;
                continue;
            }
            self.frame.push(first);
            if self.frame.len() == HEADER_LEN {
                let total = (usize::from(self.frame[1]) << 7) | usize::from(self.frame[2]);
                if total < HEADER_LEN || !accepts(self.frame[0], total) {
                    self.abandon();
                } else if total == HEADER_LEN {
                    emit(&self.frame);
                    self.frame.clear();
                } else {
                    self.expected = total;
                    self.frame.reserve_exact(total - HEADER_LEN);
                }
            }
        }
    }

    fn abandon(&mut self) {
        self.skipped += self.frame.len() as u64;
        self.frame.clear();
    }
}
