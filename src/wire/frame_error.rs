//! Why a decoder of a snapshot board's stream dropped bytes: the byte and the frame it was in.

/// One thing a decoder could not read. The decoder goes on with the next frame; the error
/// says which byte of which frame was wrong, so that a log of it points at the fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{protocol} frame {frame} (starting {start:?}): byte {byte:#04x} at offset {offset}: {what}"
)]
pub struct FrameError {
    /// The protocol (`millennium`, `certabo`, `chessnut`).
    pub protocol: &'static str,
    /// The number of the frame in the stream, counting from 1 (bytes not in any frame
    /// count towards the frame they precede).
    pub frame: u64,
    /// The first bytes of the frame as received (at most 8), to find it in a capture.
    pub start: Vec<u8>,
    /// The offset of the wrong byte from the frame's first byte.
    pub offset: usize,
    /// The wrong byte.
    pub byte: u8,
    /// What is wrong with it.
    pub what: &'static str,
}

impl FrameError {
    /// An error at `offset` of `frame_bytes`, the `frame`-th frame of `protocol`'s stream.
    pub(crate) fn new(
        protocol: &'static str,
        frame: u64,
        frame_bytes: &[u8],
        offset: usize,
        what: &'static str,
    ) -> FrameError {
        FrameError {
            protocol,
            frame,
            start: frame_bytes.iter().take(8).copied().collect(),
            offset,
            byte: frame_bytes.get(offset).copied().unwrap_or(0),
            what,
        }
    }
}

/// Parses one whole frame, or names the offset of the byte it cannot read and why.
pub type FrameParser<M> = fn(&[u8]) -> Result<M, (usize, &'static str)>;
