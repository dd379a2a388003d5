//! Adopting a reading: revisions, new moves, the hold.

use shakmaty::{Bitboard, Move, Position, Role, Square};

use super::doubt::{Doubt, squares_of_all};
use super::press::WHEN_RESTORED;
use super::read_board::replaced_pieces_told;
use super::reading::Reading;
use super::{Machine, Phase, ply_number};
use crate::act::ending::{self};
use crate::act::start::SetUp;
use crate::act::{AlertRef, Event, Severity};
use crate::board::Millis;

impl Machine {
    pub(super) fn reconcile(&mut self, t: Millis, out: &mut Vec<Event>) {
        let plies_before = self.record.game().plies();
        self.read_and_adopt(t, out);
        if self.phase != Phase::Playing
            || self
                .sensed()
                .diff(self.record.game().position().board())
                .any()
        {
            return;
        }
        // A press for a move the reading withdrew, its presser's move now the last: the
        // press says that move is made.
        let n = self.record.game().plies();
        let positions = self.record.game().positions();
        self.presses.waiting_for_ply(n, |press| {
            press.ply > n + 1 && n > 0 && positions[n - 1].turn() == press.by
        });
        // An overtaken press is for the ply before the opponent's: it completes first.
        if let Some(press) = self.presses.overtaken()
            && self.try_complete(press, out)
        {
            self.presses.overtaken_done();
        }
        if let Some(press) = self.presses.waiting()
            && self.try_complete(press, out)
        {
            self.presses.waiting_done();
            // A press that waited for the board completes the moves read since; moves read
            // by a doubtful reconstruction stay open together until the next move is made,
            // and the waiting press does not make them final.
            if press.due == WHEN_RESTORED
                && self.doubts.doubt().is_some_and(Doubt::keeps_moves_open)
                && self
                    .presses
                    .completion()
                    .is_some_and(|c| c.ply == press.ply)
            {
                self.presses.completion_done();
            }
        }
        // After the waiting presses, which complete the moves before it: a reply pressed for
        // before those were read.
        if plies_before != self.record.game().plies() {
            self.complete_reply_pressed_early(out);
        }
    }

    /// Reads the board after it changed and acts on the reading: the game position stands,
    /// moves to adopt, or a board no move explains (a new game set up, or a hold).
    pub(super) fn read_and_adopt(&mut self, t: Millis, out: &mut Vec<Event>) {
        if self.exchange_after_unfinished_promotion(t, out) {
            return;
        }
        let reading = self.read_board();
        if !matches!(reading, Reading::Unexplained { .. }) {
            self.gap.take_up_dropped();
        }
        match reading {
            Reading::Current => {
                self.doubts.read_without_doubt();
                self.set_held(None, t, out);
            }
            Reading::Adopt { from, .. }
                if self.ends.pending().is_some() && from >= self.record.game().plies() =>
            {
                // The game is over if the last move stands: nothing is played after it.
            }
            Reading::Adopt { from, moves, doubt } => {
                self.adopt_reading(from, &moves, doubt, t, out)
            }
            Reading::Unexplained { in_progress } => {
                if let SetUp::Start(start) = self.starts.recognise(self.physical.board())
                    && self.record.settled() > 0
                {
                    self.begin(*start, t, out);
                    return;
                }
                if let Some(side) = self.anchor_turn_explains()
                    && self.correct_anchor_turn(side, t, out)
                {
                    self.read_and_adopt(t, out);
                    return;
                }
                self.reply_fits_a_longer_last_move(t, out);
                if !in_progress && !self.signal_under_way() {
                    self.take_up_after_quiet(t);
                }
                if (!in_progress && !self.signal_under_way()) || self.hold.is_held() {
                    // Squares a piece only passes while a move is made are no sign of a
                    // displaced piece when the hold ends.
                    let in_motion = self.hold_shows_move_under_way(in_progress, t);
                    let seen = self.hold.seen();
                    let d = self.sensed().diff(self.record.game().position().board());
                    self.set_held(Some(d), t, out);
                    if in_motion {
                        self.hold.forget_passed(seen);
                    }
                }
            }
        }
    }

    /// Adopts a reading of the board: records its moves, raises its doubt if it has one,
    /// and holds or releases the game by what the board still shows.
    pub(super) fn adopt_reading(
        &mut self,
        from: usize,
        moves: &[Move],
        doubt: Option<Doubt>,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        // A hold that did not end by itself is told to the arbiter (a doubt raised with the
        // reading tells it already).
        if doubt.is_none() && self.hold.is_held() && self.hold_ended_by_displacement(from, moves) {
            self.tell_held(t, true, out);
        }
        let settled_before = self.record.settled();
        let across_gap = self.across_gap(from);
        // A reading with no doubt of its own that replaces a move already made is told, and
        // read as it is: the doubt changes nothing else. A piece the touches of the moves
        // read name already (knocked, read as a move, put back) is told there, once.
        let released = doubt
            .is_none()
            .then(|| self.released_move_replaced(from, moves))
            .flatten();
        let told_before = out.len();
        self.adopt(from, moves, t, out);
        let released = released.filter(|d| !replaced_pieces_told(d, &out[told_before..]));
        // A reading of moves made final may record fewer of them.
        self.record.open_from(self.record.game().plies());
        // Moves read from a doubtful reconstruction stay open together until the
        // next move is made, and make no move before them final: a restored piece
        // may still explain the board better.
        if doubt.as_ref().is_some_and(Doubt::keeps_moves_open) {
            self.record.open_from(from.min(settled_before));
            self.doubts.reconstructed(from);
        }
        // Moves read across a gap stay open until play after them confirms how many there
        // were: the clock or the next move may say the other side is to move.
        if across_gap {
            self.record.open_from(from.min(settled_before));
        }
        let undecided = matches!(doubt, Some(Doubt::Sequences { .. }));
        match doubt.or(released) {
            Some(doubt) => self.raise_doubt(doubt, t, out),
            None => self.doubts.read_without_doubt(),
        }
        if self.phase == Phase::Playing {
            let d = self.sensed().diff(self.record.game().position().board());
            let held = if d.is_empty() {
                None
            } else if undecided {
                Some(d)
            } else {
                self.hold.squares()
            };
            // Several readings and nothing recorded past them: told at once, with
            // the 8.5.3 alert.
            if undecided {
                self.set_held_now(held, t, out);
            } else {
                self.set_held(held, t, out);
            }
        }
    }

    /// True when a hold ends by reading three moves or more at once, by replacing a recorded
    /// move, or by moves that leave a square it was on unexplained: a displaced piece may
    /// have been read as moves, so the hold did not end by itself.
    fn hold_ended_by_displacement(&self, from: usize, moves: &[Move]) -> bool {
        // A castling's king and rook land on squares its notation does not name.
        let landed = moves.iter().filter_map(|m| match *m {
            Move::Castle { king, rook } => {
                let side = m.castling_side()?;
                Some(
                    Bitboard::from(Square::from_coords(side.king_to_file(), king.rank()))
                        | Bitboard::from(Square::from_coords(side.rook_to_file(), rook.rank())),
                )
            }
            _ => None,
        });
        let touched = landed.fold(squares_of_all(moves), |all, squares| all | squares);
        moves.len() > 2
            || (self.rewrites_recorded(from, moves) && !self.last_move_went_on(from, moves))
            || (self.hold.seen() & !touched).any()
    }

    /// True when `moves`, read from position `from`, keep every recorded move but the last,
    /// and replace that by a move from the same square: the piece went on (a king past its
    /// passing square to castle, a slide that continued).
    fn last_move_went_on(&self, from: usize, moves: &[Move]) -> bool {
        let recorded = &self.record.game().moves()[from.min(self.record.game().plies())..];
        let (Some((last, before)), Some((m, same))) = (recorded.split_last(), moves.split_last())
        else {
            return false;
        };
        before.len() == same.len()
            && before.iter().zip(same).all(|(played, m)| played.mv == *m)
            && last.mv.from().is_some()
            && last.mv.from() == m.from()
    }

    /// True when `moves`, read from position `from`, replace a move already recorded.
    pub(super) fn rewrites_recorded(&self, from: usize, moves: &[Move]) -> bool {
        self.record.game().moves()[from.min(self.record.game().plies())..]
            .iter()
            .zip(moves)
            .any(|(played, m)| played.mv != *m)
    }

    /// True while the board differs from the game only by kings lifted or put on the centre
    /// squares, and pieces taken off the centre squares to make room: the players are
    /// signalling a result, not displacing pieces.
    pub(super) fn signal_under_way(&self) -> bool {
        let sensed = self.physical.board();
        let game = self.record.game().position().board();
        let d = self.sensed().diff(game);
        d.any()
            && d.into_iter().all(|sq| {
                let centre = ending::CENTRE.contains(sq);
                match sensed.piece_at(sq) {
                    None => centre || game.piece_at(sq).is_some_and(|p| p.role == Role::King),
                    Some(p) => centre && p.role == Role::King,
                }
            })
    }

    /// Withdraws every move after the first `keep` plies (a revision, by `replacing`), with
    /// what rested on them: penalty proposals, an automatic end, claims, a quick reply not
    /// yet told.
    pub(super) fn withdraw_moves_after(
        &mut self,
        keep: usize,
        replacing: &[Move],
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        let withdrawn = self.record.game().moves()[keep..]
            .iter()
            .map(|p| p.uci.clone())
            .collect();
        self.tell_reading_replaced(keep, replacing, t, out);
        out.push(Event::Revision {
            ply: ply_number(keep + 1),
            withdrawn,
            t_ms: t,
        });
        self.quick_reply_revised(keep, replacing, out);
        let withdrawn = self.record.moves_withdrawn(keep, replacing, t);
        self.tell_move_alerts_withdrawn(keep, withdrawn, t, out);
        self.withdraw_penalties(keep, t, out);
        self.ends.moves_withdrawn_after(keep);
    }

    /// Tells, with one info 8.5.3 alert, that what was said of how the moves after the
    /// first `keep` plies were made is `withdrawn` with them.
    fn tell_move_alerts_withdrawn(
        &self,
        keep: usize,
        withdrawn: Vec<AlertRef>,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        if withdrawn.is_empty() {
            return;
        }
        let mut a = self.alert("8.5.3", None, t, Severity::Info);
        a.ply = ply_number(keep + 1);
        a.evidence_ms = vec![t];
        let articles: Vec<&str> = withdrawn.iter().map(|r| r.article.as_str()).collect();
        a.message = format!(
            "what was noted of how the moves from ply {} were made ({}) no longer stands: \
             those moves were read again as other moves",
            ply_number(keep + 1),
            articles.join(", ")
        );
        a.withdraws = withdrawn;
        out.push(Event::Alert(a));
    }

    pub(super) fn adopt(&mut self, from: usize, moves: &[Move], t: Millis, out: &mut Vec<Event>) {
        self.gap_read_again(from, moves);
        self.reread_capture_choices(from, moves);
        let n = self.record.game().plies();
        let same = self.record.game().moves()[from.min(n)..]
            .iter()
            .zip(moves)
            .take_while(|(played, m)| played.mv == **m)
            .count();
        let keep = from + same;
        if keep < n {
            self.withdraw_moves_after(keep, &moves[same..], t, out);
        }
        let added = &moves[same..];
        for (i, &m) in added.iter().enumerate() {
            if self.phase != Phase::Playing || self.ends.pending().is_some() {
                break;
            }
            // Moves read together share the time of reading; each player's touches end
            // where the next move's piece was lifted. When that lift is no longer known (a
            // game read again from far back), his touches are not told: any of them may
            // belong to a later move.
            let since = self.record.turn_start().last().copied().unwrap_or(0);
            let touches_before = match added.get(i + 1) {
                Some(&next) => next
                    .from()
                    .and_then(|sq| {
                        self.first_lift(sq, !self.record.game().position().turn(), since)
                    })
                    .unwrap_or(since),
                None => t.saturating_add(1),
            };
            self.record_touched_before(m, t, touches_before, out);
        }
        self.captures_kept_open(keep);
        self.confirm_gap(from, moves);
        if keep < n
            && let Some(c) = self.presses.completion()
            && self.phase == Phase::Playing
        {
            let plies = self.record.game().plies();
            if plies > self.record.completed() && self.record.game().position().turn() != c.by {
                self.complete(c.by, c.pressed, plies, out);
            }
        }
    }

    /// Holds play on the `held` squares (or releases it). A hold the board's reading made is
    /// told once due ([`Machine::hold_due`]): a piece adjusted or a move still being made ends
    /// it sooner, and that is no alarm. [`Machine::set_held_now`] tells it at once.
    pub(super) fn set_held(&mut self, held: Option<Bitboard>, t: Millis, out: &mut Vec<Event>) {
        self.hold(held, t);
        self.tell_held(t, false, out);
    }

    /// [`Machine::set_held`], told at once: a judgement of a press holds play.
    pub(super) fn set_held_now(&mut self, held: Option<Bitboard>, t: Millis, out: &mut Vec<Event>) {
        self.hold(held, t);
        self.tell_held(t, true, out);
    }

    fn hold(&mut self, held: Option<Bitboard>, t: Millis) {
        if held != self.hold.squares() {
            if held.is_none() {
                self.doubts.position_restored();
            }
            self.hold.set(held, t, self.gap.untimed());
        }
    }

    /// Notes whether the held board shows a move being made. Two reports of one scan pass
    /// may show a board no move explains for a moment (a king seen on its castling square
    /// before its passing square is seen empty, a reply's piece lifted just before the
    /// move's piece is seen down); while every such moment is shorter than a scan and the
    /// board shows a move being made again, the hold is told only if it lasts two scans
    /// from there.
    ///
    /// True when the hold goes on while the board shows a move being made.
    fn hold_shows_move_under_way(&mut self, in_progress: bool, t: Millis) -> bool {
        self.hold
            .shows_move_under_way(in_progress, t, self.config.scan_period_ms)
    }

    /// When the hold, not told yet, is told: once it has lasted two scans since it began or
    /// the board last showed a move being made.
    pub(super) fn hold_due(&self) -> Option<Millis> {
        // A board that may be taken up as the game's position is no hold until then.
        self.hold
            .due(self.config.scan_period_ms, self.gap.take_up_due())
    }

    /// Tells the hold as it stands when it differs from what was told last and is due (or
    /// `now`); a release only when the hold was told.
    pub(super) fn tell_held(&mut self, t: Millis, now: bool, out: &mut Vec<Event>) {
        let due = self.hold_due();
        out.extend(self.hold.tell(t, now, due));
    }
}
