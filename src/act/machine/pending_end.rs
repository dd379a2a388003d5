//! An automatic end reached by a move that may still be revised.

use crate::act::ending::Ending;
use crate::board::Millis;

/// An automatic end reached by a move that may still be revised.
#[derive(Debug, Clone)]
pub(super) struct PendingEnd {
    pub(super) end: Ending,
    pub(super) ply: usize,
    pub(super) t_ms: Millis,
}
