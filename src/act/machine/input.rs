//! Input handlers: observations and the passing of time.

use shakmaty::{Board, Piece, Position, Square};

use super::press::Press;
use super::{Machine, Phase};
use crate::act::Event;
use crate::act::ending::{self, Ending};
use crate::board::{Millis, Observation, ObservationKind};

impl Machine {
    /// Takes one observation recovered from the board's memory after a gap (the EEPROM log):
    /// read as [`Machine::observe`] reads a live one, but its time is an estimate, so the
    /// judgments that rest on timing (7.4 a reply quicker than a hand, 7.5.4 two hands, how
    /// long a hold lasted) are not made from it. A gap is never the players' fault.
    pub fn observe_recovered(&mut self, obs: &Observation, out: &mut Vec<Event>) {
        self.gap.recovered_begins(obs.t_ms);
        self.observe(obs, out);
        self.gap.recovered_ends();
    }

    /// The press observed at `t` is only a guess at who pressed: the clock tells its sides,
    /// not colours, and which side is White's is not yet known for sure (a DGT clock not
    /// seen running at the start position). Call before observing the press. A press
    /// without a move (7.5.3) is then no penalty but a warning (8.5.3): the press may have
    /// been the other player's, for the move he made.
    pub fn presser_guessed(&mut self, t: Millis) {
        self.clock.presser_guessed(t);
    }

    /// Takes one observation; appends what it caused to `out`. Never panics.
    pub fn observe(&mut self, obs: &Observation, out: &mut Vec<Event>) {
        let t = obs.t_ms;
        self.catch_up(t, out);
        self.now = self.now.max(t);
        if self.gap.observation_read() {
            // A hold begun on recovered observations lasts from the first live one.
            self.hold.timed_from(t);
        }
        // A confirmed move whose grace period ended before this observation is final before
        // the observation is read: nothing that follows may revise it (6.2.1, 4.7).
        self.correct_due_surplus(t, out);
        self.settle_completion(t);
        self.lifted_last = matches!(obs.kind, ObservationKind::Emptied(_));
        if !matches!(
            obs.kind,
            ObservationKind::Emptied(_)
                | ObservationKind::Placed(..)
                | ObservationKind::ClockTimes(_)
        ) {
            self.tell_close_lifts(None, t, out);
        }
        self.physical
            .name_after(self.record.game().position().board());
        match &obs.kind {
            ObservationKind::Emptied(sq) => self.observe_emptied(self.map(*sq), t, out),
            ObservationKind::Placed(sq, piece) => {
                self.observe_placed(self.map(*sq), *piece, t, out);
            }
            ObservationKind::Snapshot(snapshot) => self.observe_snapshot(&snapshot.board, t, out),
            ObservationKind::ClockPressed { by } => self.on_press(*by, t, out),
            ObservationKind::MagicPiece(sq, magic) => {
                let sq = self.map(*sq);
                self.seen(sq, t);
                if self.phase == Phase::Playing {
                    let signal = Ending {
                        result: magic.result(),
                        reason: format!("result signal: magic piece on {sq}"),
                    };
                    self.finish(signal, t, out);
                }
            }
            ObservationKind::ClockTimes(reading) => {
                self.observe_clock_times((reading.white_ms, reading.black_ms), t, out);
                self.clock_runs(reading.running.map(shakmaty::Color::from), t, out);
            }
        }
        self.advance(t, out);
    }

    /// The board reported `sq` (in game coordinates) emptied: a lift.
    fn observe_emptied(&mut self, sq: Square, t: Millis, out: &mut Vec<Event>) {
        self.seen(sq, t);
        let piece = self.physical.empty(sq, t);
        if let Some(piece) = piece
            && self.phase == Phase::Playing
        {
            self.on_lift(sq, piece, t, out);
            self.lift_after_move(sq, piece.color, t, out);
        }
        self.board_changed(t, out);
    }

    /// The board reported `piece` put on `sq` (in game coordinates). A piece one more of its
    /// kind than the game can have starts the wait for its lost lift
    /// ([`MachineConfig::missed_update_ms`](super::MachineConfig::missed_update_ms)).
    fn observe_placed(
        &mut self,
        sq: Square,
        piece: Option<Piece>,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        self.seen(sq, t);
        self.tell_close_lifts(Some((sq, piece)), t, out);
        if self.phase == Phase::Playing {
            self.on_place(sq, piece, t, out);
        }
        self.physical.place(sq, piece);
        if self.phase == Phase::Playing {
            self.watch_for_lost_lift(sq, t);
        }
        self.board_changed(t, out);
    }

    /// The board sent a dump of all squares (`board`, as the board is turned): the squares
    /// it found changed are undated, and two or more of them mean updates were lost.
    fn observe_snapshot(&mut self, board: &Board, t: Millis, out: &mut Vec<Event>) {
        let mut board = board.clone();
        if self.rotated {
            board.rotate_180();
        }
        let changed = self.physical.diff(&board);
        for sq in changed {
            self.seen(sq, t);
            if let Some(piece) = board.piece_at(sq) {
                self.note_placement(sq, piece, t);
            }
        }
        self.square_reports.changed_undated(changed);
        if changed.count() >= 2 {
            self.gap.outage_seen(t);
        }
        self.physical.replace(&board);
        self.gap.pictured(self.physical.board().occupied());
        self.board_changed(t, out);
    }

    /// The clock showed `times` (White's, Black's): reported when they changed.
    fn observe_clock_times(&mut self, times: (u64, u64), t: Millis, out: &mut Vec<Event>) {
        if self.phase == Phase::Playing && self.clock.times_changed(times) {
            out.push(Event::Clock {
                white_ms: times.0,
                black_ms: times.1,
                ply: self.ply(),
                t_ms: t,
            });
        }
    }

    /// Does, at its own time, whatever fell due before `t` (a press judged, a lost lift
    /// corrected, a move made final): on the board as it stood then, as a timer would have,
    /// however long the board then stayed silent. [`Machine::observe`] calls it itself; a
    /// caller that knows when the next observation comes may call it first, to tell the
    /// timers' events from the observation's.
    pub fn catch_up(&mut self, t: Millis, out: &mut Vec<Event>) {
        let mut last = None;
        while let Some(due) = self.next_deadline()
            && due < t
            && last.is_none_or(|l| due > l)
        {
            self.advance(due, out);
            last = Some(due);
        }
    }

    /// Lets time pass without an observation: a clock press whose board updates did not
    /// follow is judged once the grace period is over. Call it from a timer when the board is
    /// silent; [`Machine::observe`] calls it itself.
    pub fn advance(&mut self, now: Millis, out: &mut Vec<Event>) {
        self.now = self.now.max(now);
        self.correct_due_surplus(now, out);
        self.judge_overtaken_press(now, out);
        if let Some(press) = self.presses.waiting_falls_due(now)
            && self.phase == Phase::Playing
            && !self.gone_on_to_unseen_capture(press, now, false, out)
            && !self.try_complete(press, out)
            && self.is_for_next_move(press)
        {
            match self.wait_for_motion(press, now) {
                Some(due) => self.presses.waits(Press { due, ..press }),
                None => self.judge_press(press, out),
            }
        }
        self.completed_move_gone_on(now, out);
        self.settle_completion(now);
        self.withdraw_wrong_gap_alerts(now, out);
        self.take_up_if_due(now, out);
        self.confirm_end(now, out);
        if self.phase == Phase::Playing {
            self.tell_held(now, false, out);
        }
        if let Some((signal, at)) = self.ends.signal_stood(now)
            && self.phase == Phase::Playing
        {
            let before = out.len();
            self.result_signal(signal, at, out);
            self.tell_signal_doubts(before, at, out);
        }
        self.tell_still_differing(now, out);
        self.tell_kept_differing(now, out);
    }

    /// When [`Machine::advance`] next has something to decide, if anything is waiting.
    pub fn next_deadline(&self) -> Option<Millis> {
        let press = self.presses.next_due();
        // A completion whose landing square was vacated again waits for the board, not the
        // clock.
        let settle = self
            .presses
            .completion()
            .filter(|c| {
                !self.slide_may_continue(c.ply)
                    && !self.held_since_made(c.ply)
                    && !self.slide_reported_ahead(c.ply)
            })
            .map(|c| self.completion_due(c));
        // ... and for a report of where the piece went on to, a while.
        let gone_on = self
            .completed_move_gone_on_due()
            .map(|(_, due)| due)
            .filter(|&due| due > self.now);
        let surplus = self.surplus.map(|(_, _, due)| due);
        // An end whose move's landing square was vacated again waits for the board too.
        let end = self
            .ends
            .pending()
            .filter(|p| self.landing_stands(p.ply))
            .map(|p| p.t_ms.saturating_add(self.config.end_confirm_ms));
        let signal = self.ends.signal_due();
        [
            press,
            settle,
            gone_on,
            surplus,
            end,
            signal,
            self.hold_due(),
            self.gap.take_up_due(),
            self.still_differing_due(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    pub(super) fn board_changed(&mut self, t: Millis, out: &mut Vec<Event>) {
        match self.phase {
            Phase::Ended => {
                // The arbiter may still be moving the kings: the signal that stands counts,
                // until the pieces leave the final position (the board is being cleared).
                if self.ends.signalled().is_some() && self.left_final_position() {
                    self.ends.board_cleared();
                }
                if let Some(before) = self.ends.signalled()
                    && let Some(signal) = ending::result_signal(self.physical.board())
                    && signal.result != before
                {
                    self.ends.ended_by_signal(signal.result);
                    self.finish(signal, t, out);
                }
                self.look_for_start(t, out);
            }
            Phase::Waiting => self.look_for_start(t, out),
            Phase::Playing => match ending::result_signal(self.physical.board()) {
                Some(signal) => self.ends.signal_seen(signal, t),
                None => {
                    self.ends.signal_gone();
                    self.reconcile(t, out);
                }
            },
        }
    }
}
