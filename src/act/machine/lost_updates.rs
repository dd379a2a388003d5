//! Lost updates: a piece the board shows one too many of.

use shakmaty::{Bitboard, Position, Square};

use super::reading::Reading;
use super::{Machine, Phase};
use crate::act::ending::CENTRE;
use crate::act::{Event, Severity};
use crate::board::Millis;

/// How long the board may differ from the game with nothing changing before the arbiter is
/// told: a player holds a piece in the air for seconds, not a minute; a piece standing on a
/// square the board never reported (a lost update) stays unseen until someone looks.
pub(super) const STILL_DIFFERING_MS: Millis = 60_000;
/// How long a board must have stood unchanged for its position to be taken as where the
/// players left the game: a piece moved, or being set back, changes it within seconds.
const AT_REST_MS: Millis = 5_000;

impl Machine {
    /// When a board differing from the game, with nothing reported since, is to be told, if
    /// it is: [`STILL_DIFFERING_MS`] after the last report.
    pub(super) fn still_differing_due(&self) -> Option<Millis> {
        let last_report = self.last_report();
        let ending = self.ends.signal_waiting() || self.ends.pending().is_some();
        (self.phase == Phase::Playing
            && !ending
            && self.still_told != Some(last_report)
            && self
                .sensed()
                .diff(self.record.game().position().board())
                .any())
        .then(|| last_report.saturating_add(STILL_DIFFERING_MS))
    }

    /// When the board last reported a square changed (a field update, or a dump that found
    /// it changed).
    fn last_report(&self) -> Millis {
        self.square_reports.latest().unwrap_or(0)
    }

    /// 8.5.3: the board has differed from the game for [`STILL_DIFFERING_MS`] with nothing
    /// reported: a move whose last report was lost (its piece put down unseen, its victim
    /// still shown), or a piece still in the hand. Told once until the board reports again.
    pub(super) fn tell_still_differing(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(due) = self.still_differing_due().filter(|&due| now >= due) else {
            return;
        };
        self.still_told = Some(self.last_report());
        let d = self.sensed().diff(self.record.game().position().board());
        let recorded = self.quiet_board_read(due, out);
        let mut a = self.alert("8.5.3", None, due, Severity::Warning);
        a.squares = d.into_iter().map(|sq| sq.to_string()).collect();
        let reading = if recorded.is_empty() {
            ": a piece put down where the board did not report it (a lost update), or one \
             still in the hand; the arbiter should check the board"
                .to_string()
        } else {
            format!(
                " and no clock press: it is read as {} made, as a press would have it, and \
                 recorded; the arbiter should check the board (a piece still in the hand looks \
                 the same)",
                recorded.join(" ")
            )
        };
        a.message = format!(
            "the board has differed from the game on {} for {} s with nothing reported{reading}",
            a.squares.join(" "),
            STILL_DIFFERING_MS / 1000
        );
        out.push(Event::Alert(a));
    }

    /// The arbiter ended the game at `t` (a result from the scoresheets, an upheld claim).
    /// The board will not be waited for any longer, so what it cannot vouch for is told at
    /// once, not [`STILL_DIFFERING_MS`] after the last report: a result is never recorded
    /// silently short of the game (8.5.3). The board is `unread` when its link was lost and
    /// nothing has come from it since: moves made meanwhile were never seen. Otherwise it
    /// is told when it differs from the game on squares other than the kings' and the
    /// centre's (where a result signal puts the kings and the pieces it displaces) and
    /// stands as the players left it: unchanged for [`AT_REST_MS`], or read again after a
    /// gap in its link since the last move (the differences are the gap's, however recent
    /// the reading).
    pub fn ended_by_arbiter(&mut self, t: Millis, unread: bool, out: &mut Vec<Event>) {
        if self.phase != Phase::Playing {
            return;
        }
        if unread {
            self.tell_ended_unread(t, out);
            return;
        }
        let last_report = self.last_report();
        let plies = self.record.game().plies();
        let reached = self.record.reached_at().get(plies).copied().unwrap_or(0);
        let still_for = t.saturating_sub(last_report);
        let rest = if still_for >= AT_REST_MS {
            format!("unchanged for {} s", still_for / 1000)
        } else if self.gap.across(plies, reached) {
            "read again after its link was down".to_string()
        } else {
            return;
        };
        if self.still_told == Some(last_report) {
            return;
        }
        let game_board = self.record.game().position().board();
        let kings = game_board.kings() | self.physical.board().kings();
        let unread: Bitboard = self.sensed().diff(game_board) & !kings & !CENTRE;
        if unread.is_empty() {
            if let Some(a) = self.centre_capture_unseen(t) {
                self.still_told = Some(last_report);
                out.push(Event::Alert(a));
            }
            return;
        }
        self.still_told = Some(last_report);
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.squares = unread.into_iter().map(|sq| sq.to_string()).collect();
        a.message = format!(
            "the game was ended by the arbiter while the board, {rest}, differed from the game \
             on {} (the kings and the centre squares of a result signal aside): moves may have \
             been made that the recorder could not read, and nothing is recorded after ply {}; \
             the arbiter should compare the record with the scoresheets and add any move made",
            a.squares.join(" "),
            plies,
        );
        out.push(Event::Alert(a));
    }

    /// 8.5.3: the arbiter ended the game while the board's link was down: it has not been
    /// read since, and the moves made meanwhile, if any, are not recorded.
    fn tell_ended_unread(&mut self, t: Millis, out: &mut Vec<Event>) {
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.message = format!(
            "the game was ended by the arbiter while the board was not being read: its link \
             was lost and nothing has come from it since, so any move made after the link was \
             lost is missing, and nothing is recorded after ply {}; the arbiter should compare \
             the record with the scoresheets and add any move made",
            self.record.game().plies(),
        );
        out.push(Event::Alert(a));
    }

    /// When a board that has differed from the game without a break since `since`, while
    /// it went on reporting, is to be told: [`STILL_DIFFERING_MS`] after `since`.
    pub(super) fn kept_differing_due(&self) -> Option<Millis> {
        match self.differing_since {
            Some((since, false)) if self.last_report() > since => {
                Some(since.saturating_add(STILL_DIFFERING_MS))
            }
            _ => None,
        }
    }

    /// 8.4, 8.5.3: the board has differed from the game for [`STILL_DIFFERING_MS`] while
    /// play went on (its reports kept coming): moves are being made that the recorder cannot
    /// read, and the record stops short of the game. A hold is shown on the desk from its
    /// start, but a player may hold a piece for a while; a minute of it is an alert, told
    /// once until the board matches the game again, on every kind of board.
    pub(super) fn tell_kept_differing(&mut self, now: Millis, out: &mut Vec<Event>) {
        let differs = self.phase == Phase::Playing
            && self
                .sensed()
                .diff(self.record.game().position().board())
                .any();
        if !differs {
            self.differing_since = None;
            return;
        }
        let since = *self.differing_since.get_or_insert((now, false));
        let Some(due) = self.kept_differing_due().filter(|&due| now >= due) else {
            return;
        };
        self.differing_since = Some((since.0, true));
        let d = self.sensed().diff(self.record.game().position().board());
        let mut a = self.alert("8.5.3", None, due, Severity::Warning);
        a.squares = d.into_iter().map(|sq| sq.to_string()).collect();
        a.message = format!(
            "the board has differed from the game on {} for {} s while pieces went on being \
             moved: moves may have been made that the recorder could not read, and nothing \
             is recorded after ply {}; the arbiter should compare the board with the game and \
             reconstruct the missing moves (8.5.3)",
            a.squares.join(" "),
            STILL_DIFFERING_MS / 1000,
            self.record.game().plies(),
        );
        out.push(Event::Alert(a));
    }

    /// Looks for a lost lift once a surplus piece has stood long enough; before anything
    /// is settled, so that the move it corrects is still open.
    pub(super) fn correct_due_surplus(&mut self, now: Millis, out: &mut Vec<Event>) {
        if let Some((sq, placed_at, due)) = self.surplus
            && now >= due
        {
            self.surplus = None;
            if self.phase != Phase::Playing {
                return;
            }
            if self.correct_missed_lift(sq, placed_at, now, out) {
                self.read_and_adopt(now, out);
            } else if self.surplus_at(sq) {
                // Moves still being made may explain it later: look again after as long.
                self.surplus = Some((
                    sq,
                    placed_at,
                    now.saturating_add(self.config.missed_update_ms),
                ));
            }
        }
    }

    /// True while the piece `ply` moved stands also further along its line, one more of its
    /// kind than the game can have: the lift from its landing square is not reported yet
    /// (a slide reported place before lift), so the move may still be going on.
    pub(super) fn slide_reported_ahead(&self, ply: usize) -> bool {
        let Some(played) = ply
            .checked_sub(1)
            .and_then(|i| self.record.game().moves().get(i))
        else {
            return false;
        };
        let (Some(from), to) = (played.mv.from(), played.mv.to()) else {
            return false;
        };
        self.surplus.is_some_and(|(sq, _, _)| {
            self.physical.board().piece_at(sq)
                == self.record.game().positions()[ply].board().piece_at(to)
                && shakmaty::attacks::between(from, sq).contains(to)
        })
    }

    /// Pieces of the kind on `sq` that the board shows beyond what any position of the game
    /// still open has: a lift of one of them was not reported, or not yet.
    pub(super) fn surplus_at(&self, sq: Square) -> bool {
        let Some(piece) = self.physical.board().piece_at(sq) else {
            return false;
        };
        let sensed = self.physical.board().by_piece(piece).count();
        let most = self.record.game().positions()[self.record.settled()..]
            .iter()
            .map(|pos| pos.board().by_piece(piece).count())
            .max()
            .unwrap_or(0);
        sensed > most
    }

    /// A piece placed on `placed_on` long enough ago that the board cannot hold: one more of
    /// its kind than any position of the game still open has, so the lift of one of its kind
    /// was lost (a dropped update, or a slide whose passing square's "emptied" was lost).
    /// When forgetting exactly one of them makes the board a legal continuation (or one being
    /// made), that square is taken as emptied and the arbiter is told. Returns true when it
    /// corrected the picture.
    pub(super) fn correct_missed_lift(
        &mut self,
        placed_on: Square,
        placed_at: Millis,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.surplus_at(placed_on) {
            return false;
        }
        if let Reading::Current | Reading::Adopt { doubt: None, .. } = self.read_board() {
            return false;
        }
        let Some(piece) = self.physical.board().piece_at(placed_on) else {
            return false;
        };
        // Each square of the kind may be the one whose "emptied" was lost, the placed one
        // too (a slide's passing square). A reading that completes the board beats one that
        // leaves a move in progress.
        let mut complete = Vec::new();
        let mut in_progress = Vec::new();
        for sq in self.physical.board().by_piece(piece) {
            let mut trial = self.physical.clone();
            trial.forget(sq);
            let kept = std::mem::replace(&mut self.physical, trial);
            let reports = self.square_reports.clone();
            self.seen(sq, placed_at);
            match self.read_board() {
                // The placed piece only passed there: a move of its kind went over it.
                Reading::Adopt {
                    moves, doubt: None, ..
                } if sq == placed_on => {
                    if moves.iter().any(|m| {
                        m.role() == piece.role
                            && m.from().is_some_and(|from| {
                                shakmaty::attacks::between(from, m.to()).contains(sq)
                            })
                    }) {
                        complete.push(sq);
                    }
                }
                _ if sq == placed_on => {}
                Reading::Current | Reading::Adopt { doubt: None, .. } => complete.push(sq),
                Reading::Unexplained { in_progress: true } => in_progress.push(sq),
                Reading::Unexplained { .. } | Reading::Adopt { .. } => {}
            }
            self.physical = kept;
            self.square_reports = reports;
        }
        let (([missed], _) | ([], [missed])) = (&complete[..], &in_progress[..]) else {
            return false;
        };
        let missed = *missed;
        self.physical.forget(missed);
        self.seen(missed, placed_at);
        let mut a = self.alert("8.5.3", None, t, Severity::Info);
        a.evidence_ms = vec![t];
        a.squares = vec![missed.to_string(), placed_on.to_string()];
        a.message = if missed == placed_on {
            format!(
                "the board reported a piece placed on {placed_on} but never that it left again \
                 (a lost update); {missed} is taken as empty"
            )
        } else {
            format!(
                "the board reported a piece placed on {placed_on} but never that one left \
                 {missed} (a lost update); {missed} is taken as empty"
            )
        };
        out.push(Event::Alert(a));
        true
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::{Color, Piece, Role, Square};

    use super::{Machine, STILL_DIFFERING_MS};
    use crate::act::{Event, Severity};
    use crate::board::{Millis, Observation, ObservationKind};

    fn observe(machine: &mut Machine, t_ms: Millis, kind: ObservationKind, out: &mut Vec<Event>) {
        machine.observe(&Observation { t_ms, kind }, out);
    }

    fn differing_alerts(events: &[Event]) -> Vec<(Millis, Vec<String>)> {
        events
            .iter()
            .filter_map(|e| match e {
                Event::Alert(a) if a.article == "8.5.3" && a.severity == Severity::Warning => {
                    Some((a.t_ms, a.squares.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// A board that stops matching the game while its pieces go on being moved (a game the
    /// recorder lost the thread of, on an occupancy-only board seen in `touchmove simulate
    /// --seed 4 --boards 6 --faults 0`) is told once a minute after it began to differ, on
    /// the squares that differ; before, it was told only after a minute with no report at
    /// all, which never came.
    #[test]
    fn a_board_that_keeps_differing_while_played_on_is_told_within_a_minute() {
        for identifies_pieces in [true, false] {
            let (mut machine, mut events) = super::super::at_start(identifies_pieces);
            // Two pawns gone from the board, no move of either: the game is held on them.
            observe(
                &mut machine,
                1_000,
                ObservationKind::Emptied(Square::E2),
                &mut events,
            );
            observe(
                &mut machine,
                1_100,
                ObservationKind::Emptied(Square::D2),
                &mut events,
            );
            // A knight lifted and put back every 10 s: the board keeps reporting.
            let knight = Some(Piece {
                color: Color::White,
                role: Role::Knight,
            })
            .filter(|_| identifies_pieces);
            for k in 1..=9 {
                let t = 1_100 + k * 10_000;
                observe(
                    &mut machine,
                    t,
                    ObservationKind::Emptied(Square::B1),
                    &mut events,
                );
                let place = ObservationKind::Placed(Square::B1, knight);
                observe(&mut machine, t + 300, place, &mut events);
            }
            let alerts = differing_alerts(&events);
            assert!(
                matches!(&alerts[..], [(t, squares)] if *t == 1_000 + STILL_DIFFERING_MS
                    && ["d2", "e2"].iter().all(|sq| squares.iter().any(|s| s == sq))),
                "identifies pieces: {identifies_pieces}; {alerts:?}"
            );
        }
    }
}
