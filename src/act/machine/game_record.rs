//! The game as recorded: its moves, which of them are final and completed, when each
//! position was reached and its player got the move, and what was said of them (touch-move
//! findings, penalty proposals, claims still open).

use shakmaty::{Color, Move};

use crate::act::AlertRef;
use crate::board::Millis;
use crate::rules::{Game, PlayedMove};

/// The game as recorded. Changed only through its methods, each a transition of the
/// record: a move recorded and timed (`recording.rs`), moves withdrawn by a revision
/// (`adopting.rs`), moves settled or kept open (`settling.rs`, `adopting.rs`,
/// `dead_position.rs`; `recording.rs` on a copy it reads as if they were open), a move
/// completed by a press (`settling.rs`), a penalty proposed or withdrawn
/// (`illegal_moves.rs`), a claim lapsed (`hands.rs`); a new game starts a new record
/// (`start_and_end.rs`, `gaps.rs`).
#[derive(Debug, Clone)]
pub(super) struct GameRecord {
    game: Game,
    /// Plies made final: no later observation revises them (only a re-reading may).
    settled: usize,
    /// Plies up to which a clock press completed the moves (6.2.1).
    completed: usize,
    /// For each position of the game, when its player got the move: the move's arrival or,
    /// later, its press.
    turn_start: Vec<Millis>,
    /// For each position of the game, when the move that reached it was read.
    reached_at: Vec<Millis>,
    /// The alerts about how recorded moves were made (touch-move findings): a revision that
    /// withdraws a move withdraws what was said of it.
    move_alerts: Vec<AlertRef>,
    /// The 7.5.5 proposals standing (each a completed illegal move of its player), with the
    /// number of recorded moves each rests on.
    penalties: Vec<(Color, usize)>,
    /// Touch-move findings (ply, mover) the opponent may still claim: the right lapses
    /// once the opponent touches a piece (4.8).
    open_claims: Vec<(u32, Color)>,
    /// The last move withdrawn with nothing read in its place (the board back to the
    /// position before it): when, the plies before it, the move.
    taken_back: Option<(Millis, usize, Move)>,
}

impl GameRecord {
    /// A record of `game`, its position reached at `t`.
    pub(super) fn new(game: Game, t: Millis) -> GameRecord {
        GameRecord {
            game,
            settled: 0,
            completed: 0,
            turn_start: vec![t],
            reached_at: vec![t],
            move_alerts: Vec::new(),
            penalties: Vec::new(),
            open_claims: Vec::new(),
            taken_back: None,
        }
    }

    /// The game as recorded.
    pub(super) fn game(&self) -> &Game {
        &self.game
    }

    /// Plies made final.
    pub(super) fn settled(&self) -> usize {
        self.settled
    }

    /// Plies up to which a clock press completed the moves.
    pub(super) fn completed(&self) -> usize {
        self.completed
    }

    /// For each position, when its player got the move.
    pub(super) fn turn_start(&self) -> &[Millis] {
        &self.turn_start
    }

    /// For each position, when the move that reached it was read.
    pub(super) fn reached_at(&self) -> &[Millis] {
        &self.reached_at
    }

    /// The alerts standing about how recorded moves were made.
    pub(super) fn move_alerts(&self) -> &[AlertRef] {
        &self.move_alerts
    }

    /// The 7.5.5 proposals standing.
    pub(super) fn penalties(&self) -> &[(Color, usize)] {
        &self.penalties
    }

    /// A move recorded; `None` when it is no legal move of the position. What is judged of
    /// it (a reply quicker than a hand, touch-move) is judged before it is timed
    /// ([`GameRecord::move_timed`]).
    pub(super) fn move_recorded(&mut self, m: Move) -> Option<&PlayedMove> {
        self.game.play(m).ok()?;
        self.game.moves().last()
    }

    /// The move just recorded was read at `t`: its position was reached, and its player's
    /// opponent got the move, then.
    pub(super) fn move_timed(&mut self, t: Millis) {
        self.turn_start.push(t);
        self.reached_at.push(t);
    }

    /// A touch-move finding told of the move at `ply` by `mover`: withdrawn with the move,
    /// and open to the opponent's claim.
    pub(super) fn finding_told(&mut self, finding: AlertRef, ply: u32, mover: Color) {
        self.move_alerts.push(finding);
        self.open_claims.push((ply, mover));
    }

    /// The moves after the first `keep` plies withdrawn at `t` by a revision that reads them
    /// again as `replacing`: what was said of them is returned, to be withdrawn with them, but
    /// for a move read again unchanged at its ply.
    pub(super) fn moves_withdrawn(
        &mut self,
        keep: usize,
        replacing: &[Move],
        t: Millis,
    ) -> Vec<AlertRef> {
        let moves = self.game.moves();
        self.taken_back = match (&moves[keep.min(moves.len())..], replacing) {
            ([only], []) => Some((t, keep, only.mv)),
            _ => None,
        };
        let changed = |ply: usize| {
            let recorded = moves.get(ply - 1).map(|p| p.mv);
            recorded.is_none() || recorded != replacing.get(ply - 1 - keep).copied()
        };
        let withdrawn = self
            .move_alerts
            .extract_if(.., |r| r.ply as usize > keep && changed(r.ply as usize))
            .collect();
        self.game.truncate(keep);
        self.turn_start.truncate(keep + 1);
        self.reached_at.truncate(keep + 1);
        self.completed = self.completed.min(keep);
        self.open_claims.retain(|&(ply, _)| (ply as usize) <= keep);
        withdrawn
    }

    /// The last move, if it was withdrawn with nothing in its place and nothing has been
    /// recorded since: when, and the move.
    pub(super) fn last_taken_back(&self) -> Option<(Millis, Move)> {
        self.taken_back
            .filter(|&(_, plies, _)| plies == self.game.plies())
            .map(|(t, _, mv)| (t, mv))
    }

    /// The first `plies` moves (at most those recorded) made final, the rest open.
    pub(super) fn settled_to(&mut self, plies: usize) {
        self.settled = plies.min(self.game.plies());
    }

    /// The moves from ply `from + 1` on kept open (no longer final).
    pub(super) fn open_from(&mut self, from: usize) {
        self.settled = self.settled.min(from);
    }

    /// The moves up to ply `n` completed by a press at `t`: the player to move at `n` got
    /// the move no earlier than the press.
    pub(super) fn completed_by_press(&mut self, n: usize, t: Millis) {
        self.completed = n;
        if let Some(start) = self.turn_start.get_mut(n) {
            *start = (*start).max(t);
        }
    }

    /// A 7.5.5 penalty proposed against `by`, resting on the first `basis` moves.
    pub(super) fn penalty_proposed(&mut self, by: Color, basis: usize) {
        self.penalties.push((by, basis));
    }

    /// The proposals whose basis `rests_on` accepts withdrawn, and returned.
    pub(super) fn penalties_withdrawn(
        &mut self,
        rests_on: impl Fn(usize) -> bool,
    ) -> Vec<(Color, usize)> {
        self.penalties
            .extract_if(.., |&mut (_, basis)| rests_on(basis))
            .collect()
    }

    /// `lifter` touched a piece: his opponent's claims lapse (4.8), and are returned.
    pub(super) fn claims_lapsed(&mut self, lifter: Color) -> Vec<(u32, Color)> {
        self.open_claims
            .extract_if(.., |&mut (_, mover)| mover != lifter)
            .collect()
    }
}
