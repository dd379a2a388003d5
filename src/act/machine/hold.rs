//! The hold: the squares play is held on while nothing explains the board (7.4, 7.6), since
//! when, and when it is told.

use shakmaty::Bitboard;

use crate::act::Event;
use crate::board::Millis;

/// The squares the game is held on while nothing explains the board, and what decides when
/// the hold is told. Changed only through its methods, all called from `adopting.rs` but
/// for the start of live timing after a gap (`input.rs`) and the end of a game
/// (`start_and_end.rs`).
#[derive(Debug, Clone)]
pub(super) struct Hold {
    /// The squares held on, if the game is held.
    squares: Option<Bitboard>,
    /// When the current hold began.
    since: Millis,
    /// When the board last showed the current hold as a move still being made, or the
    /// hold began: the hold is told two scans after it.
    quiet_since: Millis,
    /// When the board began to show the hold as no move being made, while it does; `None`
    /// while it shows a move being made, or once it showed no move for a whole scan (the
    /// hold is then told two scans after it began).
    unexplained_since: Option<Millis>,
    /// False once the board showed the hold as no move being made for a whole scan.
    scan_artefact: bool,
    /// The differing squares last told in a [`Event::BoardState`]: a hold is told once it
    /// has lasted two scans, or at once when a press judgement made it.
    told: Option<Bitboard>,
    /// Every square the current hold has been on.
    seen: Bitboard,
    /// The current hold began on a recovered observation: it is timed from the first live
    /// one.
    untimed: bool,
}

impl Hold {
    /// No hold.
    pub(super) fn new() -> Hold {
        Hold {
            squares: None,
            since: 0,
            quiet_since: 0,
            unexplained_since: None,
            scan_artefact: false,
            told: None,
            seen: Bitboard::EMPTY,
            untimed: false,
        }
    }

    /// The squares held on, if the game is held.
    pub(super) fn squares(&self) -> Option<Bitboard> {
        self.squares
    }

    /// True while the game is held.
    pub(super) fn is_held(&self) -> bool {
        self.squares.is_some()
    }

    /// When the current hold began.
    pub(super) fn since(&self) -> Millis {
        self.since
    }

    /// Every square the current hold has been on.
    pub(super) fn seen(&self) -> Bitboard {
        self.seen
    }

    /// Sets back the squares the hold has been on to `seen`: squares a piece only passed
    /// while a move was made.
    pub(super) fn forget_passed(&mut self, seen: Bitboard) {
        self.seen = seen;
    }

    /// Holds on `squares` (or releases) at `t`; `untimed` when `t` is an estimate.
    pub(super) fn set(&mut self, squares: Option<Bitboard>, t: Millis, untimed: bool) {
        if self.squares.is_none() {
            self.since = t;
            self.quiet_since = t;
            self.unexplained_since = Some(t);
            self.scan_artefact = true;
            self.seen = Bitboard::EMPTY;
            self.untimed = untimed;
        }
        self.seen |= squares.unwrap_or(Bitboard::EMPTY);
        self.squares = squares;
    }

    /// A hold begun on recovered observations is timed from `t`, the first live one.
    pub(super) fn timed_from(&mut self, t: Millis) {
        if self.untimed {
            self.untimed = false;
            self.since = t;
            self.quiet_since = t;
        }
    }

    /// Notes whether the held board shows a move being made (`in_progress`) at `t`, for a
    /// board that scans its squares every `scan_period` ms. True when the hold goes on
    /// while the board shows a move being made.
    pub(super) fn shows_move_under_way(
        &mut self,
        in_progress: bool,
        t: Millis,
        scan_period: Millis,
    ) -> bool {
        if self.squares.is_none() {
            return false;
        }
        if !in_progress {
            self.unexplained_since.get_or_insert(t);
            return false;
        }
        if let Some(since) = self.unexplained_since.take()
            && t.saturating_sub(since) >= scan_period
        {
            self.scan_artefact = false;
        }
        if self.scan_artefact {
            self.quiet_since = t;
        }
        self.scan_artefact
    }

    /// When the hold, not told yet, is told: once it has lasted two scans (`scan_period`
    /// each) since it began or the board last showed a move being made, and not before
    /// `take_up_due`.
    pub(super) fn due(&self, scan_period: Millis, take_up_due: Option<Millis>) -> Option<Millis> {
        (self.squares.is_some() && self.told.is_none()).then(|| {
            if self.untimed {
                return Millis::MAX;
            }
            let due = self
                .quiet_since
                .saturating_add(scan_period.saturating_mul(2));
            take_up_due.map_or(due, |take_up| take_up.max(due))
        })
    }

    /// The hold as it stands at `t`, to tell, when it differs from what was told last and is
    /// `due` (or told `now`); a release only when the hold was told.
    pub(super) fn tell(&mut self, t: Millis, now: bool, due: Option<Millis>) -> Option<Event> {
        if self.squares == self.told || (!now && due.is_some_and(|due| t < due)) {
            return None;
        }
        self.told = self.squares;
        Some(Event::BoardState {
            held: self.squares.is_some(),
            differing: self
                .squares
                .unwrap_or(Bitboard::EMPTY)
                .into_iter()
                .map(|s| s.to_string())
                .collect(),
            t_ms: t,
        })
    }

    /// The game ended: no hold, nothing told.
    pub(super) fn end(&mut self) {
        self.squares = None;
        self.told = None;
    }
}
