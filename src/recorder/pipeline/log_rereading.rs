//! Updates lost in the middle of a session, read again from the board's EEPROM move log.
//!
//! Every board dump that matches the field changes seen verifies the host's picture: the
//! pipeline keeps a copy of itself then (a checkpoint) and every message after it. When a
//! later dump differs, changes were lost on the line; the caller asks the board for its log
//! ([`BoardPipeline::take_log_request`]). The log gives every change since the checkpoint
//! in its true order: the ones the link lost are put back among the messages seen, the
//! copy reads them all again, and its record replaces the live one, with a revision of the
//! moves that differ and the alerts the loss caused withdrawn. A log that cannot be aligned,
//! or that does not lead to the board as it stands, changes nothing.

use shakmaty::fen::Fen;
use shakmaty::{EnPassantMode, Position};

use super::BoardPipeline;
use super::board_log::{BoardLog, Checkpoint, LogReport};
use crate::act::{Alert, AlertRef, Event, Severity};
use crate::board::kind::KindDecoder;
use crate::board::log_recovery::{FieldChange, RecoveredRecord, recover};
use crate::board::{ColorName, Millis};
use crate::wire::dgt::{EepromLog, EepromRecord, Message};

/// The most messages kept after a checkpoint: a board whose dumps never match again (a
/// board without a verifier, a sensor fault) does not grow the copy without end.
const MOST_MESSAGES_SINCE: usize = 4096;

/// The largest product of changes received and logged that are matched (the match takes
/// memory and time in proportion): a checkpoint is normally one move old.
const MOST_CHANGES_MATCHED: usize = 1 << 20;

/// How long a log asked for after a loss is awaited; a board without a log never sends it.
const LOG_AWAITED_MS: Millis = 30_000;

impl BoardLog {
    /// The checkpoint is of no use any more (the link came back, an arbiter acted).
    pub(super) fn forget_checkpoint(&mut self) {
        self.checkpoint = None;
        self.suspected = None;
        self.wanted = false;
    }

    /// Keeps `m`, received at `t_ms`, for a re-reading from the checkpoint. False when the
    /// board's log, asked for after updates were lost, did not come in time (the checkpoint
    /// is then forgotten).
    pub(super) fn keep_since_checkpoint(&mut self, t_ms: Millis, m: &Message) -> bool {
        if self.suspected.is_some_and(|t| t_ms > t + LOG_AWAITED_MS) {
            self.forget_checkpoint();
            return false;
        }
        let Some(checkpoint) = &mut self.checkpoint else {
            return true;
        };
        if checkpoint.since.len() >= MOST_MESSAGES_SINCE {
            self.forget_checkpoint();
            return true;
        }
        checkpoint.since.push((t_ms, m.clone()));
        true
    }
}

impl BoardPipeline {
    /// True once when the board's move log should be asked for (updates were lost
    /// mid-session); the caller owns the link and sends `DGT_SEND_EE_MOVES`.
    pub fn take_log_request(&mut self) -> bool {
        std::mem::take(&mut self.board_log.wanted)
    }

    /// After a chunk: a board dump in it verified the picture, so the pipeline as it stands
    /// is the new checkpoint (unless a loss is being resolved from an older one).
    pub(super) fn checkpoint_if_verified(&mut self, t_ms: Millis) {
        let log = &mut self.board_log;
        if !std::mem::take(&mut log.verified)
            || !log.enabled
            || log.suspected.is_some()
            || !self.started
            || self.ending.is_some()
        {
            return;
        }
        let copy = self.without_checkpoint();
        self.board_log.checkpoint = Some(Box::new(Checkpoint {
            t_ms,
            pipeline: copy,
            since: Vec::new(),
            alerts: Vec::new(),
        }));
    }

    /// A copy of the pipeline without its checkpoint and journal reports.
    fn without_checkpoint(&mut self) -> BoardPipeline {
        let checkpoint = self.board_log.checkpoint.take();
        let reports = std::mem::take(&mut self.board_log.reports);
        let copy = self.clone();
        self.board_log.checkpoint = checkpoint;
        self.board_log.reports = reports;
        copy
    }

    /// The board's move log arrived after updates were lost mid-session: the moves since the
    /// checkpoint are read again with the lost changes put back. Returns false when no loss
    /// is being resolved (the log is then read as after an outage).
    pub(super) fn reread_from_log(
        &mut self,
        t_ms: Millis,
        records: &[EepromRecord],
        out: &mut Vec<Event>,
    ) -> bool {
        if self.board_log.suspected.is_none() {
            return false;
        }
        let Some(checkpoint) = self.board_log.checkpoint.take() else {
            return false;
        };
        self.board_log.forget_checkpoint();
        let mut report = LogReport {
            t_ms,
            recovered: Vec::new(),
            refused: None,
        };
        match self.reread(*checkpoint, t_ms, records, &mut report, out) {
            Ok(()) => {}
            Err(reason) => {
                tracing::warn!(
                    "{}: board's move log not used after lost updates: {reason}. The moves \
                     stand as the board's position read them: check the record's alerts and \
                     correct the moves with `touchmove arbiter` if needed",
                    self.board_name()
                );
                report.refused = Some(reason);
            }
        }
        self.board_log.reports.push(report);
        true
    }

    fn reread(
        &mut self,
        checkpoint: Checkpoint,
        t_ms: Millis,
        records: &[EepromRecord],
        report: &mut LogReport,
        out: &mut Vec<Event>,
    ) -> Result<(), String> {
        let log = EepromLog::from_records(records);
        let recovery = recover(&checkpoint.pipeline.board_log.trail, &log, None)
            .map_err(|refusal| refusal.to_string())?;
        let stream = with_lost_changes(&checkpoint.since, &logged_changes(&recovery.records))?;
        let lost = put_back(&stream);
        if lost.is_empty() {
            return Err("the board's log has no change the link lost".to_string());
        }
        let mut replay = checkpoint.pipeline;
        // The copy may have been taken between the bytes of one frame.
        replay.decoder = KindDecoder::new(replay.kind);
        let mut events = Vec::new();
        let differing = replay.board_log.differing_dumps;
        for s in &stream {
            replay.board_log.untimed = s.lost;
            replay.on_bytes(s.t_ms, &s.message.encode(), &mut events);
            replay.board_log.untimed = false;
        }
        replay.tick(t_ms, &mut events);
        if replay.board_log.differing_dumps != differing {
            return Err(
                "read with the changes it adds, the board's log still leaves a board dump \
                 unexplained"
                    .to_string(),
            );
        }
        if replay.board_log.trail.fields() != self.board_log.trail.fields() {
            return Err(
                "read with the changes it adds, the board's log does not lead to the board as \
                 it stands"
                    .to_string(),
            );
        }
        report.recovered = lost;
        self.take_rereading(
            replay,
            &checkpoint.alerts,
            &events,
            checkpoint.t_ms,
            t_ms,
            out,
        );
        Ok(())
    }

    /// Makes `replay` the pipeline, and tells what changed: the moves that differ revised,
    /// the alerts the loss caused withdrawn, the ones the re-reading raised added.
    fn take_rereading(
        &mut self,
        replay: BoardPipeline,
        live_alerts: &[Alert],
        replay_events: &[Event],
        since_ms: Millis,
        t_ms: Millis,
        out: &mut Vec<Event>,
    ) {
        let same =
            |a: &Alert, b: &Alert| a.article == b.article && a.ply == b.ply && a.side == b.side;
        let replay_alerts: Vec<&Alert> = replay_events
            .iter()
            .filter_map(|e| match e {
                Event::Alert(a) => Some(a),
                _ => None,
            })
            .collect();
        let withdrawn: Vec<AlertRef> = live_alerts
            .iter()
            .filter(|a| !replay_alerts.iter().any(|b| same(a, b)))
            .map(Alert::reference)
            .collect();
        let first = self.moves_read_again(&replay, t_ms, out);
        let revised = first < self.moves.len() || first < replay.moves.len();
        for alert in &replay_alerts {
            if !live_alerts.iter().any(|a| same(a, alert)) {
                out.push(Event::Alert((*alert).clone()));
            }
        }
        self.state_read_again(&replay, replay_events, t_ms, out);
        let mut a = Alert {
            article: "8.5.3".to_string(),
            side: None,
            ply: replay.moves.len() as u32 + 1,
            t_ms,
            evidence_ms: vec![since_ms, t_ms],
            squares: Vec::new(),
            severity: Severity::Info,
            message: String::new(),
            gap: None,
            withdraws: withdrawn,
            before_game: false,
        };
        a.message = format!(
            "the board's picture showed field updates lost on the line; its move log gave \
             every change since {:.1} s earlier in their true order, and the moves from then \
             were read again from it{}{}",
            (t_ms.saturating_sub(since_ms)) as f64 / 1000.0,
            if revised {
                format!(": the moves from ply {} are revised", first + 1)
            } else {
                ": the moves stand as recorded".to_string()
            },
            if a.withdraws.is_empty() {
                String::new()
            } else {
                format!("; {} earlier alert(s) withdrawn", a.withdraws.len())
            },
        );
        out.push(Event::Alert(a));
        self.adopt(replay);
    }

    /// The moves of `replay` from the first one that differs from the record's: the ones
    /// withdrawn (a revision) and the ones read in their place. Returns how many stand.
    fn moves_read_again(
        &self,
        replay: &BoardPipeline,
        t_ms: Millis,
        out: &mut Vec<Event>,
    ) -> usize {
        let first = self
            .moves
            .iter()
            .zip(&replay.moves)
            .take_while(|(a, b)| a.uci == b.uci)
            .count();
        if first < self.moves.len() {
            out.push(Event::Revision {
                ply: first as u32 + 1,
                withdrawn: self.moves[first..].iter().map(|m| m.uci.clone()).collect(),
                t_ms,
            });
        }
        for (i, m) in replay.moves.iter().enumerate().skip(first) {
            let positions = replay.game.positions();
            let (Some(before), Some(after)) = (positions.get(i), positions.get(i + 1)) else {
                break;
            };
            out.push(Event::Move {
                ply: i as u32 + 1,
                uci: m.uci.clone(),
                san: m.san.clone(),
                t_ms: m.t_ms.unwrap_or(t_ms),
                side: ColorName::from(before.turn()),
                fen: Fen::from_position(after, EnPassantMode::Legal).to_string(),
            });
        }
        first
    }

    /// What else `replay` reads differently: whether play is held, the result, the clock.
    fn state_read_again(
        &self,
        replay: &BoardPipeline,
        replay_events: &[Event],
        t_ms: Millis,
        out: &mut Vec<Event>,
    ) {
        if replay.held != self.held {
            let state = replay_events
                .iter()
                .rev()
                .find(|e| matches!(e, Event::BoardState { .. }))
                .cloned()
                .unwrap_or(Event::BoardState {
                    held: replay.held,
                    differing: Vec::new(),
                    t_ms,
                });
            out.push(state);
        }
        if replay.ending != self.ending
            && let Some(ending) = &replay.ending
        {
            out.push(Event::Result {
                result: ending.result.clone(),
                reason: ending.reason.clone(),
                t_ms,
            });
        }
        if let Some(clock) = replay_events
            .iter()
            .rev()
            .find(|e| matches!(e, Event::Clock { .. }))
        {
            out.push(clock.clone());
        }
    }

    /// Makes `replay` the pipeline, keeping what the live pipeline owns: the decoder is
    /// mid-chunk, and the journal's reports are not yet taken.
    fn adopt(&mut self, mut replay: BoardPipeline) {
        replay.decoder = std::mem::take(&mut self.decoder);
        replay.board_log.reports = std::mem::take(&mut self.board_log.reports);
        // The copy's own checkpoint (its last verified dump) holds, unless it too found a loss.
        if replay.board_log.suspected.is_some() {
            replay.board_log.forget_checkpoint();
        }
        replay.messages = std::mem::take(&mut self.messages);
        replay.observations = std::mem::take(&mut self.observations);
        *self = replay;
    }
}

/// The log's field changes, each with the lever presses logged before it.
fn logged_changes(records: &[RecoveredRecord]) -> Vec<(FieldChange, usize)> {
    records
        .iter()
        .scan(0, |presses, record| {
            Some(match *record {
                RecoveredRecord::Field { field, piece, .. } => {
                    Some((FieldChange { field, piece }, *presses))
                }
                RecoveredRecord::Press { .. } => {
                    *presses += 1;
                    None
                }
            })
        })
        .flatten()
        .collect()
}

/// The changes a re-reading put back from the log, with the times it gave them.
fn put_back(stream: &[Reread]) -> Vec<(Millis, RecoveredRecord)> {
    stream
        .iter()
        .filter(|s| s.lost)
        .filter_map(|s| match s.message {
            Message::FieldUpdate { field, piece } => Some((
                s.t_ms,
                RecoveredRecord::Field {
                    field,
                    piece,
                    quick: false,
                },
            )),
            _ => None,
        })
        .collect()
}

/// One message of a re-reading: received, or put back from the log.
struct Reread {
    t_ms: Millis,
    message: Message,
    /// A change the link lost, put back from the log.
    lost: bool,
}

/// The messages received since the checkpoint, with the field changes of `logged` that none
/// of them reported put back in their true place. `logged` holds the log's field changes
/// after the checkpoint, each with the lever presses logged before it since the checkpoint.
///
/// The changes received and logged are matched in order (a longest common subsequence: a
/// change received may also be missing from the log, which folds repeated changes of one
/// field). A lost change goes right after the matched change before it when no press came
/// between them, else right before the matched change after it when none comes between
/// those, else where the time between the two falls in the same share as its presses.
fn with_lost_changes(
    since: &[(Millis, Message)],
    logged: &[(FieldChange, usize)],
) -> Result<Vec<Reread>, String> {
    let received: Vec<(usize, FieldChange)> = since
        .iter()
        .enumerate()
        .filter_map(|(i, (_, m))| match *m {
            Message::FieldUpdate { field, piece } => Some((i, FieldChange { field, piece })),
            _ => None,
        })
        .collect();
    if received.len().saturating_mul(logged.len()) > MOST_CHANGES_MATCHED {
        return Err(format!(
            "{} changes received and {} logged since the last verified board dump are too many \
             to match",
            received.len(),
            logged.len()
        ));
    }
    let matched = common_subsequence(&received, logged);
    // For each logged change, the index in `since` of its message, if it was received.
    let mut at: Vec<Option<usize>> = vec![None; logged.len()];
    for (r, l) in matched {
        at[l] = Some(received[r].0);
    }
    // Where each lost change goes: before `since[slot]` (slot == since.len(): at the end),
    // and after the lost changes already put there.
    let mut inserts: Vec<(usize, usize)> = Vec::new();
    for (l, (_, presses)) in logged.iter().enumerate() {
        if at[l].is_some() {
            continue;
        }
        let before = (0..l).rev().find_map(|k| at[k].map(|i| (i, logged[k].1)));
        let after = (l + 1..logged.len()).find_map(|k| at[k].map(|i| (i, logged[k].1)));
        let from = before.map_or(0, |(i, _)| i + 1);
        let slot = slot_between(since, logged, *presses, before, after);
        // Never after a board dump that already shows the change.
        let change = logged[l].0;
        let shown = |i: usize| {
            matches!(&since[i].1, Message::BoardDump(fields)
                if fields[usize::from(change.field & 63)] == change.piece)
        };
        let slot = (from..slot).find(|&i| shown(i)).unwrap_or(slot);
        // In the log's order, whatever the rules above say.
        let slot = inserts.last().map_or(slot, |&(last, _)| slot.max(last));
        inserts.push((slot, l));
    }
    Ok(merged(since, logged, &inserts))
}

/// Where a lost change with `presses` before it goes, between the matched changes `before`
/// and `after` (their messages' indices in `since` and their presses): right after `before`
/// when no press came between them, else right before `after` when none comes between those,
/// else where the time between the two falls in the same share as its presses.
fn slot_between(
    since: &[(Millis, Message)],
    logged: &[(FieldChange, usize)],
    presses: usize,
    before: Option<(usize, usize)>,
    after: Option<(usize, usize)>,
) -> usize {
    let from = before.map_or(0, |(i, _)| i + 1);
    match (before, after) {
        (Some((i, p)), _) if p == presses => i + 1,
        (_, Some((i, p))) if p == presses => i,
        (before, after) => {
            let p_from = before.map_or(0, |(_, p)| p);
            let (to, p_to) = after.unwrap_or((since.len(), logged.last().map_or(0, |x| x.1)));
            let t_from = since.get(from).map_or(0, |(t, _)| *t);
            let t_to = since
                .get(to)
                .map_or_else(|| since.last().map_or(t_from, |(t, _)| *t), |(t, _)| *t);
            let share =
                presses.saturating_sub(p_from) as f64 / (p_to.saturating_sub(p_from)).max(1) as f64;
            let t = t_from + ((t_to.saturating_sub(t_from)) as f64 * share) as Millis;
            (from..to).find(|&i| since[i].0 > t).unwrap_or(to)
        }
    }
}

/// The messages of `since` with the lost changes of `logged` put in at their `inserts`
/// (before `since[slot]`, or at the end), each lost change a message of its own.
fn merged(
    since: &[(Millis, Message)],
    logged: &[(FieldChange, usize)],
    inserts: &[(usize, usize)],
) -> Vec<Reread> {
    let mut stream = Vec::with_capacity(since.len() + inserts.len());
    let mut next = inserts.iter().peekable();
    for (i, (t, m)) in since.iter().enumerate() {
        while let Some(&&(slot, l)) = next.peek()
            && slot <= i
        {
            stream.push(lost_change(*t, logged[l].0));
            next.next();
        }
        stream.push(Reread {
            t_ms: *t,
            message: m.clone(),
            lost: false,
        });
    }
    let end = since.last().map_or(0, |(t, _)| *t);
    for &(_, l) in next {
        stream.push(lost_change(end, logged[l].0));
    }
    stream
}

fn lost_change(t_ms: Millis, change: FieldChange) -> Reread {
    Reread {
        t_ms,
        message: Message::FieldUpdate {
            field: change.field,
            piece: change.piece,
        },
        lost: true,
    }
}

/// The pairs (index in `received`, index in `logged`) of a longest common subsequence of
/// the two, in order.
fn common_subsequence(
    received: &[(usize, FieldChange)],
    logged: &[(FieldChange, usize)],
) -> Vec<(usize, usize)> {
    let (n, m) = (received.len(), logged.len());
    let mut lengths = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lengths[i][j] = if received[i].1 == logged[j].0 {
                lengths[i + 1][j + 1] + 1
            } else {
                lengths[i + 1][j].max(lengths[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut pairs = Vec::new();
    while i < n && j < m {
        if received[i].1 == logged[j].0 {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if lengths[i + 1][j] >= lengths[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}
