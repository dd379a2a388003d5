//! Gaps in the link: moves made while the board was out of touch and its move log could not
//! tell them. The position after the gap is certain; the order of its moves may not be, and
//! a board no short sequence of legal moves explains is taken as the game's position. The
//! game is never held for a gap: it goes on, with one alert for the arbiter.

use shakmaty::fen::Fen;
use shakmaty::{
    Bitboard, Board, Chess, Color, EnPassantMode, FromSetup, Move, Position, Rank, Setup, Square,
};

use super::doubt::{Doubt, square_names, squares_of_all};
use super::game_record::GameRecord;
use super::link_gap::{LinkGap, TAKE_UP_QUIET_MS};
use super::reading::Reading;
use super::{Machine, Phase, REREAD_PLIES, ply_number};
use crate::act::search::{Explanation, Reports, rank_orders};
use crate::act::{Alert, Event, GapAccount, Severity};
use crate::board::Millis;
use crate::rules::Game;

impl Machine {
    /// The link to the board was down and came back at `t` (a cable plugged in again, a
    /// Bluetooth stack that recovered) without the board's move log telling what was played
    /// meanwhile, or before it did: the next board dump may show moves nobody saw. They are
    /// read as a gap (up to [`MachineConfig::max_gap_plies`](super::MachineConfig) plies,
    /// never held for).
    ///
    /// Until play confirms the position the gap's reading reached, a press on a board the
    /// game does not explain is an 8.5.3 doubt for the arbiter, not an illegal move (see
    /// `gap_doubts`).
    pub fn link_restored(&mut self, t: Millis) {
        self.gap.link_restored(t, self.record.game().plies());
        self.gap_unconfirmed(Some(self.record.game().plies()));
    }

    /// True when the link came back, and a board dump found squares changed, after the game
    /// reached position `k`: moves from `k` on may have been made unseen. (Positions read
    /// after the link came back, from the dump itself, are not.)
    pub(super) fn across_gap(&self, k: usize) -> bool {
        let since = self.record.reached_at().get(k).copied().unwrap_or(0);
        self.gap.across(k, since)
    }

    /// The last position the game reached before the link came back, while the moves read
    /// after it are still open: where the moves of the gap begin.
    pub(super) fn gap_start(&self) -> Option<usize> {
        let n = self.record.game().plies();
        (self.record.settled()..=n)
            .rev()
            .find(|&k| self.across_gap(k))
    }

    /// The clock shows `side` to move while the moves read across a gap, still open, leave
    /// the other side to move, and no late press explains it: the other side pressed with no
    /// move on the board and his move before the reply already completed. The clock is then
    /// evidence the board's position is not (the shortest reading may miss a move that went
    /// and came back, a bishop's detour). A press alone, or the clock running, is not: a
    /// player may press after his opponent's reply (6.2.1.2), so a press by the side the
    /// reading leaves to move completes his move before that reply. The gap is read again
    /// with as many moves as leave `side` to move, when some explain the board. Returns
    /// true when it was.
    pub(super) fn correct_gap_parity(
        &mut self,
        side: Color,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        let Some(g) = self.gap_start() else {
            return false;
        };
        let n = self.record.game().plies();
        if self.phase != Phase::Playing || g == n || self.record.game().position().turn() == side {
            return false;
        }
        let tried = (n, side, self.physical.board().occupied());
        if self.gap.parity_tried(tried) {
            return false;
        }
        let positions = self.record.game().positions();
        let start = &positions[g];
        let s = self.sensed();
        if !s.diff(positions[n].board()).is_empty() {
            return false;
        }
        let reports = self.reports(g);
        let first = if start.turn() == side { 2 } else { 3 };
        let explanation = (first..=self.config.max_gap_plies)
            .step_by(2)
            .map(|depth| s.sequences_within(start, depth..=depth, &reports))
            .find(|e| *e != Explanation::None);
        let reading = match explanation {
            Some(Explanation::Unique(moves)) => Some(Reading::Adopt {
                from: g,
                moves,
                doubt: None,
            }),
            Some(Explanation::Ambiguous(seqs)) => Some(self.order_across_gap(g, seqs, &reports)),
            // More orders fit than were kept: none is chosen.
            Some(Explanation::None | Explanation::Partial(_)) | None => None,
        };
        let Some(Reading::Adopt { from, moves, doubt }) = reading else {
            self.gap.parity_tried_in_vain(tried);
            return false;
        };
        self.adopt_reading(from, &moves, doubt, t, out);
        true
    }

    /// The longest reconstruction from position `k`: deeper across a gap in the link.
    pub(super) fn reconstruction_depth(&self, k: usize) -> usize {
        if self.across_gap(k) {
            self.config
                .max_gap_plies
                .max(self.config.max_reconstruction_plies)
        } else {
            self.config.max_reconstruction_plies
        }
    }

    /// The reading of a gap that several move orders from position `k` explain: the order
    /// that fits the evidence best is the game, with a doubt naming the others.
    pub(super) fn order_across_gap(
        &self,
        k: usize,
        seqs: Vec<Vec<Move>>,
        reports: &Reports<'_>,
    ) -> Reading {
        let positions = self.record.game().positions();
        let mut ranked = rank_orders(&positions[k], seqs, reports, &self.moves_since(k));
        let moves = ranked.remove(0);
        Reading::Adopt {
            from: k,
            moves: moves.clone(),
            doubt: Some(Doubt::Order {
                from: k,
                moves,
                others: ranked,
            }),
        }
    }

    /// 8.5.3 warning about `moves` recorded from position `from` where the `others` fit as
    /// well, naming `squares`: `message` is given the recorded line and each other one, in
    /// numbered SAN.
    pub(super) fn alternatives_alert(
        &self,
        from: usize,
        moves: &[Move],
        others: &[Vec<Move>],
        squares: Bitboard,
        t: Millis,
        message: impl FnOnce(&str, &[String]) -> String,
    ) -> Alert {
        let start = self
            .record
            .game()
            .positions()
            .get(from)
            .cloned()
            .unwrap_or_default();
        let alternatives: Vec<String> = others.iter().map(|o| numbered_san(&start, o)).collect();
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.ply = ply_number(from + 1);
        a.squares = square_names(squares);
        a.message = message(&numbered_san(&start, moves), &alternatives);
        a
    }

    /// 8.5.3: the moves of a gap reach a certain position, but their order was not seen;
    /// recorded in the likeliest, the others named for the arbiter to confirm or pick.
    pub(super) fn order_alert(
        &self,
        from: usize,
        moves: &[Move],
        others: &[Vec<Move>],
        t: Millis,
    ) -> Alert {
        let squares = squares_of_all(moves);
        let n = moves.len();
        let made = if self.across_gap(from) {
            format!("the link to the board was down and {n} moves were made meanwhile")
        } else {
            format!("{n} moves were made quicker than the board's frames show them")
        };
        let mut a = self.alternatives_alert(from, moves, others, squares, t, |recorded, others| {
            format!(
                "order not observed: also possible {}; {made}, recorded as {recorded}: the \
                 position after them is certain, their order is not; the arbiter should \
                 confirm it or pick another",
                others.join(" | "),
            )
        });
        let uci = |seq: &[Move]| -> Vec<String> {
            seq.iter()
                .map(|m| {
                    shakmaty::uci::UciMove::from_move(*m, self.record.game().castling_mode())
                        .to_string()
                })
                .collect()
        };
        a.gap = Some(GapAccount::Orders {
            recorded: uci(moves),
            others: others.iter().map(|o| uci(o)).collect(),
        });
        a
    }

    /// After a gap in the link the board shows a position no short sequence of moves
    /// reaches: it is taken up once it has stood [`TAKE_UP_QUIET_MS`], or at once when a
    /// clock press says the move on it is complete.
    pub(super) fn take_up_after_quiet(&mut self, t: Millis) {
        if self.phase == Phase::Playing && self.across_gap(self.record.settled()) {
            self.gap.take_up_at(t.saturating_add(TAKE_UP_QUIET_MS));
        }
    }

    /// A press by `by` while a take-up waits: the presser's move on the board is complete,
    /// and the board is taken up now if still nothing explains it.
    pub(super) fn take_up_at_press(&mut self, by: Color, t: Millis, out: &mut Vec<Event>) {
        if self.gap.take_up_pressed(t) {
            // The press started the other side's clock: that side is to move.
            self.clock.runs(!by);
            self.take_up_if_due(t, out);
        }
    }

    /// A take-up due by `now`: the board is read once more and taken up if still nothing
    /// explains it.
    pub(super) fn take_up_if_due(&mut self, now: Millis, out: &mut Vec<Event>) {
        if !self.gap.take_up_falls_due(now) {
            return;
        }
        if self.phase == Phase::Playing
            && matches!(
                self.read_board(),
                Reading::Unexplained { in_progress: false }
            )
            && !self.signal_under_way()
        {
            self.reanchor_after_gap(now, out);
        }
    }

    /// After a gap in the link, no legal sequence of up to
    /// [`MachineConfig::max_gap_plies`](super::MachineConfig) plies reaches the board: the
    /// game goes on from the board's position (the side to move as the board and the clock
    /// tell it), with a critical alert. Returns false when the board is not a position a game
    /// can go on from (a king missing, the side not to move in check): the game is then held.
    pub(super) fn reanchor_after_gap(&mut self, t: Millis, out: &mut Vec<Event>) -> bool {
        if self.phase != Phase::Playing || !self.across_gap(self.record.settled()) {
            return false;
        }
        let turn = self.anchor_turn();
        let Some(pos) = self.board_position(turn) else {
            return false;
        };
        let before = self.record.game().plies();
        let fen = self.take_up(pos, t, out);
        let mut a = self.alert("8.5.3", None, t, Severity::Critical);
        a.ply = ply_number(before + 1);
        a.message = format!(
            "the link to the board was down and no legal sequence of up to {} moves leads \
             from the game's position after ply {before} to the board's: the game goes on \
             from the board's position ({fen}), the moves before the gap kept; the arbiter \
             should enter the moves made meanwhile (replace moves from ply {}) to restore \
             the whole game",
            self.config.max_gap_plies,
            before + 1,
        );
        a.gap = Some(GapAccount::Reanchored { fen });
        out.push(Event::Alert(a));
        self.gap.anchor_guessed();
        true
    }

    /// The side to move when the game is taken up from the board: a side in check, else
    /// the side whose clock runs, else the side that was to move.
    fn anchor_turn(&self) -> Color {
        let board = self.physical.board();
        for side in [Color::White, Color::Black] {
            let in_check = board
                .king_of(side)
                .is_some_and(|k| board.attacks_to(k, !side, board.occupied()).any());
            if in_check {
                return side;
            }
        }
        self.clock
            .running()
            .unwrap_or_else(|| self.record.game().position().turn())
    }

    /// The board's position with `turn` to move, keeping the castling rights its pieces
    /// still allow; `None` when no game can go on from it.
    fn board_position(&self, turn: Color) -> Option<Chess> {
        let current = self.record.game().position();
        let mode = self.record.game().castling_mode();
        let setup = Setup {
            board: self.physical.board().clone(),
            turn,
            castling_rights: current.castles().castling_rights(),
            halfmoves: 0,
            fullmoves: current.fullmoves(),
            ..Setup::empty()
        };
        position_of(setup, mode)
    }

    /// Makes `pos` the game's position from now on: a game of its own, plies counted from
    /// it, nothing open. Returns its FEN.
    fn take_up(&mut self, pos: Chess, t: Millis, out: &mut Vec<Event>) -> String {
        let mode = self.record.game().castling_mode();
        let fen = Fen::from_position(&pos, EnPassantMode::Legal).to_string();
        // A hold told is released: the board is the game again.
        self.set_held_now(None, t, out);
        let fresh = Machine::new(self.config.clone());
        let physical = std::mem::replace(&mut self.physical, fresh.physical.clone());
        *self = Machine {
            physical,
            rotated: self.rotated,
            phase: Phase::Playing,
            record: GameRecord::new(Game::from_position(pos, mode), t),
            chess960: self.chess960,
            clock: self.clock,
            now: self.now,
            gap: LinkGap::taken_up(),
            ..fresh
        };
        self.physical.clear_placed();
        self.gap_unconfirmed(None);
        fen
    }

    /// A press by `by` on a board the position just taken up from the board does not
    /// explain, before any move of it was read: that position was the guess, not the
    /// player's move. The game is taken up again from the board as it stands, `by`'s
    /// opponent to move (an Info alert; the gap's critical alert stands). Returns false when
    /// the board is no position a game can go on from.
    pub(super) fn take_up_again_at_press(
        &mut self,
        by: Color,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.gap.is_taken_up() || self.record.game().plies() > 0 {
            return false;
        }
        let Some(pos) = self.board_position(!by) else {
            return false;
        };
        let fen = self.take_up(pos, t, out);
        let mut a = self.alert("8.5.3", None, t, Severity::Info);
        a.ply = 0;
        a.message = format!(
            "what was played after the game was taken up from the board does not fit the \
             position taken up; {} pressed, and the game is taken up again from the board as \
             it stands, {:?} to move ({fen})",
            super::color_word(by),
            !by
        );
        a.gap = Some(GapAccount::Reanchored { fen });
        out.push(Event::Alert(a));
        true
    }

    /// Before `moves` are adopted from position `from`: the gap alerts whose moves they
    /// read otherwise stand no more, and are withdrawn by the next alert (the gap's new
    /// order alert, or [`Machine::withdraw_wrong_gap_alerts`]).
    pub(super) fn gap_read_again(&mut self, from: usize, moves: &[Move]) {
        if self.gap.no_order_alerts() {
            return;
        }
        let recorded = self.record.game().moves();
        let after: Vec<Move> = recorded[..from.min(recorded.len())]
            .iter()
            .map(|p| p.mv)
            .chain(moves.iter().copied())
            .collect();
        self.gap.read_otherwise(from, &after);
    }

    /// `alert` was just raised for `doubt`: an order alert withdraws the gap alerts it
    /// replaces (read otherwise, or of the same gap read again), and stands until its own
    /// moves are.
    pub(super) fn gap_alert_raised(&mut self, doubt: &Doubt, alert: &mut Alert) {
        let Doubt::Order { from, moves, .. } = doubt else {
            return;
        };
        alert.withdraws = self.gap.order_alert_raised(
            alert.reference(),
            *from,
            moves,
            self.record.settled(),
            REREAD_PLIES,
        );
    }

    /// Gap alerts a reading showed wrong and no new order alert replaced (the gap read
    /// again has one order only, or its moves were withdrawn): withdrawn by an Info 8.5.3
    /// alert that tells how the moves are read now.
    pub(super) fn withdraw_wrong_gap_alerts(&mut self, t: Millis, out: &mut Vec<Event>) {
        let withdraws = self.gap.wrong_alerts_taken();
        if withdraws.is_empty() {
            return;
        }
        let first = withdraws.iter().map(|r| r.ply).min().unwrap_or(1);
        let from = (first.saturating_sub(1) as usize).min(self.record.game().plies());
        let mut a = self.alert("8.5.3", None, t, Severity::Info);
        a.ply = ply_number(from + 1);
        let moves = self.moves_since(from);
        a.squares = square_names(squares_of_all(&moves));
        let read = if moves.is_empty() {
            "withdrawn".to_string()
        } else {
            format!(
                "read again as {}",
                numbered_san(&self.record.game().positions()[from], &moves)
            )
        };
        a.message = format!(
            "the moves made while the link was down, from ply {}, were {read}: the order \
             alert raised for them no longer stands",
            from + 1
        );
        a.withdraws = withdraws;
        out.push(Event::Alert(a));
    }

    /// The clock shows `running`'s clock running: while the game taken up from the board
    /// has no move yet, that is the side to move. (Not so for moves read across a gap: the
    /// opponent may have pressed after `running`'s reply, 6.2.1.2, and the reading stands
    /// until a press without a move contradicts it, see [`Machine::correct_gap_parity`].)
    pub(super) fn clock_runs(&mut self, running: Option<Color>, t: Millis, out: &mut Vec<Event>) {
        if let Some(side) = running {
            self.clock.runs(side);
            self.correct_anchor_turn(side, t, out);
        }
    }

    /// While the game taken up from the board has no move, `side` is to move after all: it
    /// is taken up again with that side to move (an Info alert, for the record's position).
    /// Returns true when it did.
    pub(super) fn correct_anchor_turn(
        &mut self,
        side: Color,
        t: Millis,
        out: &mut Vec<Event>,
    ) -> bool {
        if !self.gap.anchor_unsure()
            || self.record.game().plies() > 0
            || self.record.game().position().turn() == side
        {
            return false;
        }
        // The position taken up, not the board as it is now: a piece may be in the air.
        let Some(pos) = self.board_position_of(self.record.game().position(), side) else {
            return false;
        };
        let physical = self.physical.clone();
        let fen = self.take_up(pos, t, out);
        let mut a = self.alert("8.5.3", Some(side), t, Severity::Info);
        a.ply = 0;
        a.message = format!(
            "the game taken up from the board's position goes on with {side:?} to move ({fen})"
        );
        a.gap = Some(GapAccount::Reanchored { fen });
        out.push(Event::Alert(a));
        // Corrected once: the side is known now (no flipping back and forth).
        self.gap.anchor_known();
        self.physical = physical;
        true
    }

    /// After the game was taken up from the board with a guessed side to move and nothing
    /// explains the board, one move of the other side may: then that side was to move.
    pub(super) fn anchor_turn_explains(&self) -> Option<Color> {
        if !self.gap.anchor_unsure() || self.record.game().plies() > 0 {
            return None;
        }
        let other = !self.record.game().position().turn();
        let pos = self.board_position_of(self.record.game().position(), other)?;
        (!self.sensed().single_moves(&pos).is_empty()).then_some(other)
    }

    /// `pos` with `turn` to move.
    fn board_position_of(&self, pos: &Chess, turn: Color) -> Option<Chess> {
        let setup = Setup {
            turn,
            ..pos.to_setup(EnPassantMode::Legal)
        };
        position_of(setup, self.record.game().castling_mode())
    }
}

/// The position `setup` describes with `turn` to move, without the castling rights its
/// pieces no longer allow, and with an en passant capture where the board allows one;
/// `None` when it is no position a game can go on from.
fn position_of(setup: Setup, mode: shakmaty::CastlingMode) -> Option<Chess> {
    let of = |setup: Setup| match Chess::from_setup(setup, mode) {
        Ok(pos) => Some(pos),
        Err(e) => e.ignore_invalid_castling_rights().ok(),
    };
    let ep_square = possible_en_passant(&setup.board, setup.turn);
    of(Setup {
        ep_square,
        ..setup.clone()
    })
    .or_else(|| {
        of(Setup {
            ep_square: None,
            ..setup
        })
    })
}

/// The square a pawn of the side not to move may just have skipped with a double step,
/// when exactly one such pawn stands beside a pawn of `turn`'s: a board taken up after a gap
/// does not tell whether it did, and a capture the rules may have allowed is not refused
/// (a player is never blamed for what nobody saw).
fn possible_en_passant(board: &Board, turn: Color) -> Option<Square> {
    let stepper = !turn;
    let (start, skipped, stop) = match stepper {
        Color::White => (Rank::Second, Rank::Third, Rank::Fourth),
        Color::Black => (Rank::Seventh, Rank::Sixth, Rank::Fifth),
    };
    let beside = |sq: Square, df: i32| {
        sq.file()
            .offset(df)
            .is_some_and(|f| board.piece_at(Square::from_coords(f, stop)) == Some(turn.pawn()))
    };
    let mut squares = (board.by_piece(stepper.pawn()) & Bitboard::from_rank(stop))
        .into_iter()
        .filter(|&sq| {
            let empty = |rank| {
                board
                    .piece_at(Square::from_coords(sq.file(), rank))
                    .is_none()
            };
            empty(skipped) && empty(start) && (beside(sq, -1) || beside(sq, 1))
        })
        .map(|sq| Square::from_coords(sq.file(), skipped));
    match (squares.next(), squares.next()) {
        (Some(sq), None) => Some(sq),
        _ => None,
    }
}

/// `seq` from `start` in SAN with move numbers: `12...Nc5 13.b3 a5`.
pub(super) fn numbered_san(start: &Chess, seq: &[Move]) -> String {
    let mut pos = start.clone();
    let mut words = Vec::new();
    for (i, &m) in seq.iter().enumerate() {
        let number = pos.fullmoves();
        let san = shakmaty::san::SanPlus::from_move(pos.clone(), m).to_string();
        match pos.turn() {
            Color::White => words.push(format!("{number}.{san}")),
            Color::Black if i == 0 => words.push(format!("{number}...{san}")),
            Color::Black => words.push(san),
        }
        if !pos.is_legal(m) {
            break;
        }
        pos.play_unchecked(m);
    }
    words.join(" ")
}

#[cfg(test)]
mod tests;
