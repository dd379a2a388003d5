//! Changes missed while the link was down, recovered from the board's EEPROM move log
//! (DGT `EE_MOVES`): the pipeline keeps a trail of the field changes it saw, and when a log
//! arrives it passes the changes after that trail on in their true order, before anything
//! received after the log.

use crate::act::Event;
use crate::board::log_recovery::{
    FieldChange, FieldTrail, RecoveredRecord, Recovery, Refusal, picture, recover, schedule,
};
use crate::board::{ClockReading, Millis, Observation, ObservationKind};
use crate::wire::dgt::{ClockSide, EepromLog, EepromRecord, Message};

use super::BoardPipeline;

/// What the pipeline keeps to recover missed changes from the board's EEPROM log.
#[derive(Debug, Clone)]
pub(super) struct BoardLog {
    /// Logs are used (the recorder's links ask for them in every handshake).
    pub(super) enabled: bool,
    /// The field changes seen, in the board's own form.
    pub(super) trail: FieldTrail,
    /// When the board was last heard before the current message.
    pub(super) last_heard_ms: Option<Millis>,
    /// The gap the last handshake closed: last heard before it, and the handshake.
    pub(super) gap: Option<(Millis, Millis)>,
    /// The last clock reading: when, and the remaining times of the left and right sides.
    pub(super) reading: Option<(Millis, ClockReading)>,
    /// What each log told (recovered records or the refusal), for the journal.
    pub(super) reports: Vec<LogReport>,
    /// Recovered observations are being passed on: their times are not observed.
    pub(super) untimed: bool,
    /// Board dumps still to come before the line is live again. What the board queued
    /// while its log downloaded (≈ 8 s at 9600 baud) arrives after it at line speed, so its
    /// times are when it arrived, not when it happened; the dump taken with the log comes
    /// first, and the one the link asks for once the log is in comes after that queue.
    pub(super) behind_log: u8,
    /// The pipeline as it stood at the last board dump that matched the changes seen, and
    /// what came after it: the moves since are re-read from there when the log shows
    /// changes the link lost (see `log_rereading`).
    pub(super) checkpoint: Option<Box<Checkpoint>>,
    /// A board dump in the chunk being read matched the changes seen, with no change after.
    pub(super) verified: bool,
    /// When a board dump showed that changes were lost mid-session, while the board's log
    /// that tells them is awaited.
    pub(super) suspected: Option<Millis>,
    /// The board's log should be asked for (taken by the caller, which owns the link).
    pub(super) wanted: bool,
    /// Board dumps that differed from the changes seen before them.
    pub(super) differing_dumps: u64,
    /// A whole picture of the board has been seen (a board dump, or a log that reaches back
    /// to a power-up): field updates have something to change.
    pub(super) pictured: bool,
    /// The board as its first log showed it, and when the log came, until a board dump
    /// pictures it: field updates before that dump change this picture.
    pub(super) logged_picture: Option<(Millis, [u8; 64])>,
    /// Field changes received after the link came back and before the board was read
    /// again (part of the gap), each field's last: the log read then must end with them.
    pub(super) gap_updates: Vec<FieldChange>,
    /// The port and serial number of the board's link, for the warnings.
    pub(super) link: Option<(String, Option<String>)>,
}

/// The pipeline at a verified picture of the board, and what happened after it.
#[derive(Debug, Clone)]
pub(super) struct Checkpoint {
    /// When the picture was verified.
    pub(super) t_ms: Millis,
    /// The pipeline then (without a checkpoint of its own).
    pub(super) pipeline: BoardPipeline,
    /// Every message received since, with its time, in order.
    pub(super) since: Vec<(Millis, Message)>,
    /// Alerts raised since.
    pub(super) alerts: Vec<crate::act::Alert>,
}

/// What one EEPROM log told the pipeline, for the journal.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LogReport {
    /// When the log arrived.
    pub t_ms: Millis,
    /// The records recovered, each with the time given to it.
    pub recovered: Vec<(Millis, RecoveredRecord)>,
    /// Why the log was not used, if it was not.
    pub refused: Option<String>,
}

impl BoardLog {
    /// A log recovery that is off until [`BoardPipeline::with_board_log`] turns it on.
    pub(super) fn new() -> BoardLog {
        BoardLog {
            enabled: false,
            trail: FieldTrail::new([0; 64]),
            last_heard_ms: None,
            gap: None,
            reading: None,
            reports: Vec::new(),
            untimed: false,
            behind_log: 0,
            checkpoint: None,
            verified: false,
            suspected: None,
            wanted: false,
            differing_dumps: 0,
            pictured: false,
            logged_picture: None,
            gap_updates: Vec::new(),
            link: None,
        }
    }

    /// A message received after the link came back, before the board was read again: its
    /// change is told by the board's log or dump, not by it.
    pub(super) fn keep_in_gap(&mut self, t_ms: Millis, m: &Message) {
        tracing::debug!(
            t_ms,
            ?m,
            "received after the link came back: part of the gap"
        );
        if let &Message::FieldUpdate { field, piece } = m {
            self.gap_updates.retain(|c| c.field != field);
            self.gap_updates.push(FieldChange { field, piece });
        }
    }

    /// The board's dump came: it shows whatever the gap changed.
    pub(super) fn gap_read(&mut self) {
        self.gap_updates.clear();
    }
}

impl BoardPipeline {
    /// Passes recovered observations on. Their times are estimates, not observed: the
    /// judgments that rest on timing (7.4 "quicker than a reply", 7.5.4 two hands) are not
    /// made from them (Laws 7.4, 7.5.4; a gap is never the players' fault).
    fn take_recovered(&mut self, out: &mut Vec<Event>) {
        self.board_log.untimed = true;
        self.take_pending_observations(out);
        self.board_log.untimed = false;
    }

    /// Keeps the trail of field changes and lever presses seen, the last clock reading and
    /// the gap a handshake closes; `self.observations[seen..]` is what `m` told.
    pub(super) fn follow_trail(&mut self, t_ms: Millis, m: &Message, seen: usize) {
        let log = &mut self.board_log;
        match m {
            &Message::FieldUpdate { field, piece } => {
                log.trail.push(field, piece);
                log.verified = false;
            }
            Message::BoardDump(fields) => {
                log.pictured = true;
                log.logged_picture = None;
                let lost = *fields != log.trail.fields();
                log.verified = !lost;
                log.differing_dumps += u64::from(lost);
                if lost && log.checkpoint.is_some() && log.suspected.is_none() {
                    // Changes were lost since the last verified picture: the board's log
                    // tells which, and when.
                    log.suspected = Some(t_ms);
                    log.wanted = true;
                }
                log.trail.restart_if_different(*fields);
            }
            Message::Version { .. } => {
                let from = log.last_heard_ms.unwrap_or(t_ms);
                // A second handshake right after the first (prober, then link) keeps the gap.
                if log.gap.is_none_or(|(_, to)| to < from) {
                    log.gap = Some((from, t_ms));
                }
            }
            _ => {}
        }
        for obs in &self.observations[seen..] {
            match &obs.kind {
                ObservationKind::ClockTimes(reading) => log.reading = Some((obs.t_ms, *reading)),
                ObservationKind::ClockPressed { .. } => log.trail.pressed(),
                _ => {}
            }
        }
        log.last_heard_ms = Some(t_ms);
    }

    /// The board's move log arrived: the changes missed since the trail's last one are
    /// recovered and passed on in their true order, marked as recovered, before anything
    /// received after the log. What came before the log has been passed on already; field
    /// updates received after the link came back and before the log are in it, after the
    /// changes missed. Returns false when the log was not used (the board's dump then tells
    /// the gap).
    pub(super) fn recover_from_log(
        &mut self,
        t_ms: Millis,
        records: &[EepromRecord],
        out: &mut Vec<Event>,
    ) -> bool {
        let log = EepromLog::from_records(records);
        self.board_log.behind_log = 2;
        let (from, to) = self
            .board_log
            .gap
            .take()
            .unwrap_or((self.board_log.last_heard_ms.unwrap_or(t_ms), t_ms));
        let mut report = LogReport {
            t_ms,
            recovered: Vec::new(),
            refused: None,
        };
        if !self.board_log.pictured {
            // Nothing seen can have been missed; the log's picture is kept for field updates
            // that may come before the first board dump (moves made during the download).
            self.board_log.logged_picture = picture(&log).map(|fields| (t_ms, fields));
            return true;
        }
        let gap_updates = std::mem::take(&mut self.board_log.gap_updates);
        let recovered = recover(&self.board_log.trail, &log, None)
            .and_then(|r| ends_with(self.board_log.trail.fields(), r, &gap_updates));
        let used = recovered.is_ok();
        match recovered {
            Err(refusal) => {
                // A board's first handshake comes before anything was seen of it: nothing can
                // have been missed, so that refusal is no news for the operator.
                if self.board_log.trail.changes().next().is_none() {
                    tracing::debug!(
                        "{}: board's move log not used: {refusal}",
                        self.board_name()
                    );
                } else {
                    tracing::warn!("{}", self.log_refused_warning(&refusal));
                }
                report.refused = Some(refusal.to_string());
            }
            Ok(recovery) => {
                let reading = self.board_log.reading.and_then(|(t, r)| {
                    let white_left = self.observer.white_side()? == ClockSide::Left;
                    let sides = if white_left {
                        [r.white_ms, r.black_ms]
                    } else {
                        [r.black_ms, r.white_ms]
                    };
                    Some((t, sides))
                });
                let times = schedule(&recovery.records, from, to.max(from + 1), reading);
                for (&t, record) in times.iter().zip(&recovery.records) {
                    report.recovered.push((t, *record));
                    match *record {
                        RecoveredRecord::Field { field, piece, .. } => {
                            let m = Message::FieldUpdate { field, piece };
                            self.observer.on_message(t, &m, &mut self.observations);
                            self.board_log.trail.push(field, piece);
                        }
                        RecoveredRecord::Press { halted, .. } => {
                            let by = self.observer.recovered_press(halted);
                            self.board_log.trail.pressed();
                            self.observations.push(Observation {
                                t_ms: t,
                                kind: ObservationKind::ClockPressed { by },
                            });
                        }
                    }
                    self.take_recovered(out);
                }
            }
        }
        self.board_log.reports.push(report);
        used
    }

    /// The warning for a move log refused after a gap: which board, why, and what the
    /// arbiter should do.
    pub(super) fn log_refused_warning(&self, refusal: &Refusal) -> String {
        format!(
            "{}: board's move log not used: {refusal}. The moves made while the link was down \
             are read from the board's position instead: the arbiter should check the moves \
             the record marks \"order not observed\" (or the game taken up from the board) \
             and confirm or correct them with `touchmove arbiter`",
            self.board_name()
        )
    }

    /// The board named for the arbiter: round, board, port and serial number.
    pub(super) fn board_name(&self) -> String {
        let tag = |name: &str| {
            self.tags
                .tags()
                .iter()
                .find(|(k, _)| k == name)
                .map_or("?", |(_, v)| v.as_str())
                .to_string()
        };
        let round = tag("Round");
        let round = round.split('.').next().unwrap_or("?").to_string();
        let (port, serial) = match &self.board_log.link {
            Some((port, serial)) => (port.as_str(), serial.as_deref().unwrap_or("unknown")),
            None => ("unknown", "unknown"),
        };
        format!(
            "round {round}, board {} (port {port}, serial {serial})",
            tag("Board")
        )
    }

    /// The link to the board (re)connected on `port`, to board `serial`: warnings name them.
    pub fn set_link(&mut self, port: &str, serial: Option<&str>) {
        self.board_log.link = Some((port.to_string(), serial.map(str::to_string)));
    }

    /// A field update before any board dump: the board as its first log showed it (≈ 8 s
    /// of download before the dump the handshake asks for) is what it changes, passed on as
    /// a board dump would be.
    pub(super) fn picture_before_first_update(&mut self, t_ms: Millis) {
        let Some((logged_ms, fields)) = self.board_log.logged_picture.take() else {
            return;
        };
        let dump = Message::BoardDump(fields);
        let seen = self.observations.len();
        self.observer
            .on_message(logged_ms.min(t_ms), &dump, &mut self.observations);
        self.follow_trail(logged_ms.min(t_ms), &dump, seen);
    }
}

/// The recovery, when the changes it ends on agree with the field updates received after the
/// link came back (`gap_updates`, each field's last): the log was taken after them.
fn ends_with(
    mut fields: [u8; 64],
    recovery: Recovery,
    gap_updates: &[FieldChange],
) -> Result<Recovery, Refusal> {
    for record in &recovery.records {
        if let &RecoveredRecord::Field { field, piece, .. } = record {
            fields[usize::from(field & 63)] = piece;
        }
    }
    match gap_updates
        .iter()
        .find(|c| fields[usize::from(c.field & 63)] != c.piece)
    {
        Some(c) => Err(Refusal::Contradiction { field: c.field }),
        None => Ok(recovery),
    }
}
