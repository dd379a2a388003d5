//! A board's entries journalled before they are used: committed with the other boards' in
//! one transaction, held in memory (up to a bound) while the journal refuses them, and
//! committed, in order, once it takes them again.

use super::super::{loud, say};
use super::BoardTask;
use crate::act::Event;
use crate::board::Millis;
use crate::store::{NewEntry, Record};

impl BoardTask {
    pub(super) fn event_entry(&self, t_ms: Millis, event: &Event) -> NewEntry {
        NewEntry {
            board: Some(self.key.clone()),
            t_ms,
            record: Record::Event(event.clone()),
        }
    }

    /// Journals `entries` after the entries the journal refused before, in one transaction.
    /// False when the journal refuses again: they all wait, in order, for the next attempt
    /// (the next chunk, or the next tick), up to the backlog's bound.
    pub(super) async fn commit(&mut self, entries: Vec<NewEntry>) -> bool {
        self.hold(entries);
        if self.backlog.is_empty() {
            return true;
        }
        let held = self.backlog.len();
        let pending = std::mem::take(&mut self.backlog);
        match self.shared.journal.append_or_return(pending).await {
            Ok(_) => {
                self.backlog_bytes = 0;
                let dropped = std::mem::take(&mut self.backlog_dropped);
                if self.shared.board_recovered(self.number) {
                    let lost = if dropped == 0 {
                        ", nothing was lost".to_string()
                    } else {
                        format!(
                            "; {dropped} later entries did not fit in memory and are NOT in the \
                             journal (the PGN files have the moves; a restart would not rebuild \
                             them: check the game with `touchmove arbiter`)"
                        )
                    };
                    loud(&format!(
                        "board {}: the journal {} accepts writes again; the {held} entries held \
                         in memory are journalled{lost}",
                        self.number,
                        self.shared.journal_path.display()
                    ));
                }
                true
            }
            Err((e, returned)) => {
                self.backlog_bytes = returned.iter().map(entry_size).sum();
                self.backlog = returned;
                if self.shared.board_failed(self.number) {
                    loud(&format!(
                        "JOURNAL FAILING (board {}): {e}. The games in progress go on in memory \
                         and in the PGN files and are journalled as soon as the journal accepts \
                         writes again; no new game is recorded until then, and a crash before \
                         then would lose the moves since now.",
                        self.number
                    ));
                }
                false
            }
        }
    }

    /// Adds `entries` to the backlog, up to [`Shared::backlog_limit`]: beyond it they are
    /// not kept (said once), so that a long outage cannot exhaust the memory.
    pub(super) fn hold(&mut self, entries: Vec<NewEntry>) {
        for entry in entries {
            let size = entry_size(&entry);
            if !self.backlog.is_empty()
                && self.backlog_bytes.saturating_add(size) > self.shared.backlog_limit
            {
                if self.backlog_dropped == 0 {
                    loud(&format!(
                        "board {}: JOURNAL BACKLOG FULL: {} entries ({} KiB) wait for the journal \
                         {}; newer ones are not kept for it. The game goes on in memory and in \
                         the PGN files, but a restart would not rebuild the moves from now on: \
                         free space on the disk now",
                        self.number,
                        self.backlog.len(),
                        self.backlog_bytes / 1024,
                        self.shared.journal_path.display()
                    ));
                }
                self.backlog_dropped += 1;
                continue;
            }
            self.backlog_bytes += size;
            self.backlog.push(entry);
        }
    }

    /// The journal took the new game that was held back: publish it.
    pub(super) fn release_held_game(&mut self) {
        if std::mem::take(&mut self.holding_new_game) {
            say(&format!(
                "board {}: the new game is journalled and recorded now",
                self.number
            ));
            self.write_files(true);
        }
    }
}

/// About what an entry costs in memory while it waits for the journal.
pub(super) fn entry_size(entry: &NewEntry) -> usize {
    match &entry.record {
        Record::Bytes(bytes) => bytes.len() + 64,
        _ => 512,
    }
}
