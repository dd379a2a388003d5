//! What the recorder did not see: a gap in the link to the board, the reading of the moves
//! made meanwhile until play confirms it, a game taken up from the board's position, and the
//! observations recovered from the board's memory, whose times are estimates.

use shakmaty::{Bitboard, Color, Move};

use crate::act::AlertRef;
use crate::board::Millis;

/// How long a board no short sequence of moves explains after a gap must stand unchanged
/// before it is taken up as the game's position (when no clock press says sooner that the
/// move on it is complete).
pub const TAKE_UP_QUIET_MS: Millis = 1_000;

/// A gap in the link whose reading play has not confirmed yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct UnconfirmedGap {
    /// The last position read before the link went down; `None` when the game was taken up
    /// from the board's position.
    pub(super) before: Option<usize>,
    /// The plies the game had when the gap was last read: a move read alone from here on
    /// confirms who is to move.
    pub(super) end: usize,
    /// A move was read alone since `end`, the board then the game's.
    pub(super) turn_confirmed: bool,
    /// The 8.5.3 doubt of a press was told since a reading was last adopted.
    told: bool,
}

/// An 8.5.3 alert that named the orders of `moves`, read across a gap from position `from`:
/// it stands until those moves are read otherwise or the gap is read again.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GapAlert {
    reference: AlertRef,
    from: usize,
    moves: Vec<Move>,
}

/// What the recorder did not see, and what rests on it. Changed only through its methods:
/// the link restored and board dumps that found squares changed (`gaps.rs`, `input.rs`), the
/// gap's reading read again, confirmed or told doubtful (`gap_doubts.rs`), the order alerts
/// of a gap and a game taken up from the board (`gaps.rs`), a take-up no longer due
/// (`adopting.rs`), recovered observations (`input.rs`). A new game, or a game taken up,
/// starts a new one (`start_and_end.rs`, `gaps.rs`).
#[derive(Debug, Clone)]
pub(super) struct LinkGap {
    /// When the link to the board last came back after being down, and the plies recorded
    /// then: the board may show moves nobody saw after them.
    restored: Option<(Millis, usize)>,
    /// When a board dump last found two or more squares changed: updates were lost.
    outage: Option<Millis>,
    /// Since the link last came back, the game rests on a reading of what the board showed
    /// once read again, until a move made after it is read alone: till then a press on a
    /// board the game does not explain is an 8.5.3 doubt, not an illegal move.
    unconfirmed: Option<UnconfirmedGap>,
    /// The game was taken up from the board's position after a gap with a guessed side to
    /// move, and no move has been made since: the clock or the first move may correct it.
    anchor_unsure: bool,
    /// The game was taken up from the board's position after a gap: until its first move
    /// is read, the position is a guess (the side to move, an en passant right), and a press
    /// on a board it does not explain is no illegal move of a player.
    taken_up: bool,
    /// After a gap, the board no short sequence of moves explains is taken up as the game's
    /// position at this time, unless it changed or a reading explained it meanwhile: a
    /// board read mid-move (a capture's piece in the hand) is not a position.
    take_up_due: Option<Millis>,
    /// The last gap reading the clock asked for in vain (plies recorded, side to move, the
    /// board's occupied squares): not searched again until one of them changes.
    parity_tried: Option<(usize, Color, Bitboard)>,
    /// The 8.5.3 alerts that named the orders of moves read across a gap, while those moves
    /// may still be read again: a new reading of them withdraws the alert.
    alerts: Vec<GapAlert>,
    /// Gap alerts the reading being adopted showed wrong: the next alert withdraws them.
    alerts_wrong: Vec<AlertRef>,
    /// The observation being read was recovered from the board's memory after a gap: its
    /// time is an estimate.
    untimed: bool,
    /// The times the recovered observations of the last gap were given (first, last): what
    /// happened then has no real timing, and no judgment rests on it.
    untimed_span: Option<(Millis, Millis)>,
    /// The last observation was a recovered one.
    last_recovered: bool,
    /// No game begun since the link came back: the first picture no short sequence of moves
    /// from the start explains ([`UnexplainedBoard`]).
    unexplained_start: Option<UnexplainedBoard>,
    /// The recorder had not read the board before this gap (it started, or started again
    /// on a new round, with the board as it found it).
    never_read: bool,
    /// The squares occupied in the first whole picture of the board (its dump) the recorder
    /// read, when it had not read the board before.
    first_picture: Option<Bitboard>,
}

/// How long pieces may be moved on a board no short sequence from the start explains before
/// the arbiter is told that a game may be in progress unrecorded: a board being set back to
/// the start position (pieces moved home, the captured ones put back) takes less.
const STILL_PLAYED_MS: Millis = 60_000;

/// A board that showed, at the first picture after the link came back, a position no short
/// sequence of moves from the start explains.
#[derive(Debug, Clone)]
struct UnexplainedBoard {
    /// The squares occupied then (or when pieces were last added).
    first: Bitboard,
    /// When pieces were first moved on it since.
    moved_at: Option<Millis>,
    /// Whether the arbiter was told.
    told: bool,
}

impl LinkGap {
    /// No gap.
    pub(super) fn new() -> LinkGap {
        LinkGap {
            restored: None,
            outage: None,
            unconfirmed: None,
            anchor_unsure: false,
            taken_up: false,
            take_up_due: None,
            parity_tried: None,
            alerts: Vec::new(),
            alerts_wrong: Vec::new(),
            untimed: false,
            untimed_span: None,
            last_recovered: false,
            unexplained_start: None,
            never_read: false,
            first_picture: None,
        }
    }

    /// A game just taken up from the board's position: its reading unconfirmed until play
    /// confirms it.
    pub(super) fn taken_up() -> LinkGap {
        LinkGap {
            taken_up: true,
            ..LinkGap::new()
        }
    }

    /// The link came back at `t` with `plies` recorded.
    pub(super) fn link_restored(&mut self, t: Millis, plies: usize) {
        self.restored = Some((t, plies));
    }

    /// No game begun since the link came back, a picture with pieces on `occupied` at `t`
    /// that no short sequence of moves from the start explains: true once, when pieces have
    /// gone on being moved on the board (two squares it had empty filled, no piece added) for
    /// [`STILL_PLAYED_MS`] without a start position: a game in progress the recorder cannot
    /// read from the start. Pieces added (the board being set up) start the comparison
    /// again, and a board set back to the start position within the minute is no game.
    pub(super) fn moved_on_unexplained_board(&mut self, occupied: Bitboard, t: Millis) -> bool {
        let board = self.unexplained_start.get_or_insert(UnexplainedBoard {
            first: occupied,
            moved_at: None,
            told: false,
        });
        if occupied.count() > board.first.count() {
            board.first = occupied;
            board.moved_at = None;
        }
        if board.told {
            return false;
        }
        if board.moved_at.is_none() && (occupied & !board.first).count() >= 2 {
            board.moved_at = Some(t);
        }
        board.told = board
            .moved_at
            .is_some_and(|moved| t.saturating_sub(moved) >= STILL_PLAYED_MS);
        board.told
    }

    /// The recorder has not read the board before: what it shows first is a gap.
    pub(super) fn never_read_before(&mut self, t: Millis) {
        self.never_read = true;
        self.link_restored(t, 0);
    }

    /// A whole picture of the board (its dump) showed pieces on `occupied`: the first one,
    /// when the recorder had not read the board before, is the board as it found it.
    pub(super) fn pictured(&mut self, occupied: Bitboard) {
        if self.never_read && self.first_picture.is_none() {
            self.first_picture = Some(occupied);
        }
    }

    /// The link was lost at `t` with nothing recorded: once the board was read, what it
    /// shows next is an ordinary gap.
    pub(super) fn lost_before_game(&mut self, t: Millis) {
        if self.first_picture.is_some() {
            self.never_read = false;
        }
        self.link_restored(t, 0);
    }

    /// A game may be begun at the start across the gap on a board with pieces on
    /// `occupied`, when a short sequence of moves explains it. After the link was lost, on
    /// any board. Across the recorder's first read, only on the board as it was first read,
    /// or with at most two pieces put down on it since (a move in the hand then): a game's
    /// moves take it further from the start, so a board that such a sequence explains only
    /// after pieces were taken off squares of the first picture is being set back to the
    /// start (a finished game's pieces going home), not played.
    pub(super) fn may_begin_across(&self, occupied: Bitboard) -> bool {
        match self.first_picture.filter(|_| self.never_read) {
            Some(first) => (first & !occupied).is_empty() && (occupied & !first).count() <= 2,
            None => true,
        }
    }

    /// True once the link has been down and came back (or was lost before a game began).
    pub(super) fn was_down(&self) -> bool {
        self.restored.is_some()
    }

    /// A board dump at `t` found two or more squares changed.
    pub(super) fn outage_seen(&mut self, t: Millis) {
        self.outage = Some(t);
    }

    /// True when a board dump found squares changed at or after `since`.
    pub(super) fn outage_since(&self, since: Millis) -> bool {
        self.outage.is_some_and(|o| o >= since)
    }

    /// True when the link came back, and a board dump found squares changed, after position
    /// `k` was reached at `since`.
    pub(super) fn across(&self, k: usize, since: Millis) -> bool {
        self.restored
            .is_some_and(|(t, plies)| t >= since && k <= plies)
            && self.outage_since(since)
    }

    /// The game rests from now on on a reading of a gap that began after position `before`
    /// (`None`: the game was just taken up from the board), the game at `end` plies.
    pub(super) fn reading_unconfirmed(&mut self, before: Option<usize>, end: usize) {
        self.unconfirmed = Some(UnconfirmedGap {
            before,
            end,
            turn_confirmed: false,
            told: false,
        });
    }

    /// The gap whose reading play has not confirmed, if any.
    pub(super) fn unconfirmed(&self) -> Option<UnconfirmedGap> {
        self.unconfirmed
    }

    /// The gap was read again up to `end` plies: unconfirmed again.
    pub(super) fn read_again_to(&mut self, end: usize) {
        if let Some(gap) = self.unconfirmed.as_mut() {
            *gap = UnconfirmedGap {
                end,
                turn_confirmed: false,
                told: false,
                ..*gap
            };
        }
    }

    /// A move was read alone after the gap, the board then the game's: who is to move is
    /// confirmed.
    pub(super) fn turn_confirmed(&mut self) {
        if let Some(gap) = self.unconfirmed.as_mut() {
            gap.turn_confirmed = true;
            gap.told = false;
        }
    }

    /// The board is explained again: a later press on one it is not is told anew.
    pub(super) fn board_explained(&mut self) {
        if let Some(gap) = self.unconfirmed.as_mut() {
            gap.told = false;
        }
    }

    /// Play confirmed the gap's reading: nothing rests on it any more.
    pub(super) fn confirmed(&mut self) {
        self.unconfirmed = None;
    }

    /// The doubt of a press after the unconfirmed gap is told: true when it was not told
    /// since a reading was last adopted (or there is no such gap).
    pub(super) fn doubt_told(&mut self) -> bool {
        self.unconfirmed
            .as_mut()
            .is_some_and(|gap| !std::mem::replace(&mut gap.told, true))
    }

    /// The game was taken up from the board with a guessed side to move.
    pub(super) fn anchor_guessed(&mut self) {
        self.anchor_unsure = true;
    }

    /// The side to move of the game taken up is known now.
    pub(super) fn anchor_known(&mut self) {
        self.anchor_unsure = false;
    }

    /// True while the side to move of the game taken up is a guess.
    pub(super) fn anchor_unsure(&self) -> bool {
        self.anchor_unsure
    }

    /// True when the game was taken up from the board's position after a gap.
    pub(super) fn is_taken_up(&self) -> bool {
        self.taken_up
    }

    /// The board no short sequence of moves explains is taken up at `due`.
    pub(super) fn take_up_at(&mut self, due: Millis) {
        self.take_up_due = Some(due);
    }

    /// A press at `t` while a take-up waits: it falls due at once. True when one waited.
    pub(super) fn take_up_pressed(&mut self, t: Millis) -> bool {
        let waiting = self.take_up_due.is_some();
        if waiting {
            self.take_up_due = Some(t);
        }
        waiting
    }

    /// When the waiting take-up falls due.
    pub(super) fn take_up_due(&self) -> Option<Millis> {
        self.take_up_due
    }

    /// The take-up due by `now`, if any, is taken off to be made: true when it was due.
    pub(super) fn take_up_falls_due(&mut self, now: Millis) -> bool {
        if self.take_up_due.is_none_or(|due| now < due) {
            return false;
        }
        self.take_up_due = None;
        true
    }

    /// The board is explained after all: no take-up waits.
    pub(super) fn take_up_dropped(&mut self) {
        self.take_up_due = None;
    }

    /// True when the clock asked for this gap reading (`tried`) in vain already.
    pub(super) fn parity_tried(&self, tried: (usize, Color, Bitboard)) -> bool {
        self.parity_tried == Some(tried)
    }

    /// The clock asked for the gap reading `tried` in vain.
    pub(super) fn parity_tried_in_vain(&mut self, tried: (usize, Color, Bitboard)) {
        self.parity_tried = Some(tried);
    }

    /// Before moves are adopted from position `from`, the game then being `after`: the
    /// order alerts whose moves they read otherwise stand no more, and wait to be withdrawn
    /// by the next alert.
    pub(super) fn read_otherwise(&mut self, from: usize, after: &[Move]) {
        let (wrong, standing): (Vec<GapAlert>, Vec<GapAlert>) =
            std::mem::take(&mut self.alerts).into_iter().partition(|a| {
                let end = a.from + a.moves.len();
                from < end && after.get(a.from..end) != Some(&a.moves[..])
            });
        self.alerts = standing;
        self.alerts_wrong
            .extend(wrong.into_iter().map(|a| a.reference));
    }

    /// True when no order alert of a gap stands.
    pub(super) fn no_order_alerts(&self) -> bool {
        self.alerts.is_empty()
    }

    /// An order alert (`reference`) raised for `moves` read across a gap from position
    /// `from`, with `settled` plies final: returns the alerts it withdraws (read otherwise,
    /// or of the same gap read again). It stands until its own moves are read again.
    pub(super) fn order_alert_raised(
        &mut self,
        reference: AlertRef,
        from: usize,
        moves: &[Move],
        settled: usize,
        reread_plies: usize,
    ) -> Vec<AlertRef> {
        let (replaced, standing): (Vec<GapAlert>, Vec<GapAlert>) = std::mem::take(&mut self.alerts)
            .into_iter()
            .partition(|a| a.from == from);
        self.alerts = standing;
        let mut withdraws = std::mem::take(&mut self.alerts_wrong);
        withdraws.extend(replaced.into_iter().map(|a| a.reference));
        // Moves made final long ago are read again no more.
        self.alerts
            .retain(|a| a.from + a.moves.len() + reread_plies > settled);
        self.alerts.push(GapAlert {
            reference,
            from,
            moves: moves.to_vec(),
        });
        withdraws
    }

    /// The alerts shown wrong that no new order alert withdrew, taken to be withdrawn.
    pub(super) fn wrong_alerts_taken(&mut self) -> Vec<AlertRef> {
        std::mem::take(&mut self.alerts_wrong)
    }

    /// An observation recovered from the board's memory, given time `t`, is being read.
    pub(super) fn recovered_begins(&mut self, t: Millis) {
        self.untimed_span = Some(match self.untimed_span {
            Some((first, last)) if self.last_recovered => (first, last.max(t)),
            _ => (t, t),
        });
        self.untimed = true;
    }

    /// The recovered observation was read.
    pub(super) fn recovered_ends(&mut self) {
        self.untimed = false;
    }

    /// An observation is read: true when it is a live one.
    pub(super) fn observation_read(&mut self) -> bool {
        self.last_recovered = self.untimed;
        !self.untimed
    }

    /// True while the observation being read is a recovered one.
    pub(super) fn untimed(&self) -> bool {
        self.untimed
    }

    /// True when something at `t` rests on estimated times: the observation being read, or
    /// one the last gap's recovery gave that time.
    pub(super) fn untimed_at(&self, t: Millis) -> bool {
        self.untimed
            || self
                .untimed_span
                .is_some_and(|(first, last)| (first..=last).contains(&t))
    }
}
