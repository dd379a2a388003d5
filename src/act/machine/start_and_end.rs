//! The start and the end of a game: set-up, automatic ends, result signals.

use shakmaty::{Bitboard, Board, Move, Position, Role};

use super::doubt::{Doubt, square_names};
use super::game_record::GameRecord;
use super::gaps::numbered_san;
use super::reading::Reading;
use super::{Machine, Phase, ply_number};
use crate::act::ending::{self, Ending};
use crate::act::search::{Explanation, Sensed};
use crate::act::start::{SetUp, Start};
use crate::act::{Event, Severity};
use crate::board::Millis;
use crate::rules::Game;

/// Longest time between the two kings' placements of one result signal: a king move to
/// the centre made longer before the signal was a move of the game.
pub(super) const SIGNAL_GAP_MS: Millis = 3_000;

/// What the game's pieces gone from the centre under a result signal may be.
const CENTRE_CLEARED: &str = "taken off to make room for the kings, or moved or \
                                  captured unseen, which the board cannot tell apart; the \
                                  arbiter should check the game";
/// What squares changed under a result signal, with every update seen, may be.
const UNREPORTED_OR_KNOCKED: &str = "a move the board did not report looks the same \
                                         as a piece knocked while the kings were moved; \
                                         the arbiter should check the board against the \
                                         scoresheets and add any move made";

/// The squares of a board under a result signal, against the game's board.
struct SignalSquares {
    /// Centre squares left empty: pieces taken off to make room for the kings.
    made_room: Bitboard,
    /// The game's pieces on the centre squares now empty or under a king.
    cleared: Bitboard,
    /// Squares changed since the last recorded move, the kings and `made_room` aside.
    behind: Bitboard,
}

impl SignalSquares {
    /// `differing` are the squares where the sensed board differs from the game's, as the
    /// board can tell them.
    fn of(sensed: &Board, game_board: &Board, differing: Bitboard) -> SignalSquares {
        let made_room = ending::CENTRE & !sensed.occupied();
        SignalSquares {
            made_room,
            cleared: ending::CENTRE
                & game_board.occupied()
                & !game_board.kings()
                & (made_room | sensed.kings()),
            behind: differing & !(sensed.kings() | game_board.kings()) & !made_room,
        }
    }
}

impl Machine {
    /// The link to the board was lost (or the host restarted) while no game had begun: the
    /// round may start while it is down, and the board, once read again, show the game's
    /// first moves with no start position seen (see [`Machine::begin_across_gap`]).
    pub fn link_lost(&mut self) {
        if self.phase == Phase::Waiting {
            self.gap.lost_before_game(self.now);
        }
    }

    /// The recorder has not read the board before (it started, or started again on a new
    /// round, 6.1): the board may show a game begun without it, read as across a gap.
    pub fn not_read_before(&mut self) {
        if self.phase == Phase::Waiting {
            self.gap.never_read_before(self.now);
        }
    }

    /// No start position stands, no game has begun, and the link was down meanwhile (or the
    /// recorder has not seen the board before): a game that began meanwhile (the round
    /// started, 6.1) shows its first moves. When a short sequence of legal moves from the
    /// start explains the board, the game begins at the start with them read across the
    /// gap, as after any gap (marked when their order is not certain); otherwise the machine
    /// goes on waiting, and once pieces have been moved on such a board for a minute, a
    /// warning tells the arbiter that a game may be in progress that nothing records.
    ///
    /// Across the recorder's first read, only the board as first read is begun so (see
    /// `LinkGap::may_begin_across`): a finished game's pieces being set back to the start
    /// pass through positions that short legal sequences explain, by occupancy alone on
    /// boards that do not tell pieces apart.
    pub(super) fn begin_across_gap(&mut self, t: Millis, out: &mut Vec<Event>) {
        if self.phase != Phase::Waiting || !self.gap.was_down() {
            return;
        }
        if self.gap.may_begin_across(self.physical.board().occupied()) {
            self.begin_if_explained(t, out);
        }
        if self.phase == Phase::Waiting {
            self.tell_game_unrecorded(t, out);
        }
    }

    /// Begins the game at the start with the moves that explain the board read across the
    /// gap, when a short sequence of legal moves does.
    fn begin_if_explained(&mut self, t: Millis, out: &mut Vec<Event>) {
        let start = Start {
            game: self.starts.expected.clone().unwrap_or_else(Game::standard),
            chess960: false,
            rotated: false,
        };
        let mut begun = self.clone();
        let mut events = Vec::new();
        begun.begin(start, t, &mut events);
        begun.link_restored(t);
        begun.gap.outage_seen(t);
        begun.reconcile(t, &mut events);
        if begun.record.game().plies() > 0 {
            *self = begun;
            out.append(&mut events);
        }
    }

    /// 8.5.3 before the game: pieces have been moved for a minute on a board that no short
    /// sequence from the start explains, a game in progress that nothing records.
    fn tell_game_unrecorded(&mut self, t: Millis, out: &mut Vec<Event>) {
        let occupied = self.physical.board().occupied();
        if self.gap.moved_on_unexplained_board(occupied, t) {
            let mut a = self.alert("8.5.3", None, t, Severity::Warning);
            a.ply = 0;
            a.before_game = true;
            a.message = "no start position was seen since the recorder last read this board, and \
                 pieces have been moved for a minute on a board it could not read as a game \
                 begun from one: a game begun meanwhile is not being recorded; the arbiter \
                 should enter its moves from the scoresheets, or have the start position set up"
                .to_string();
            out.push(Event::Alert(a));
        }
    }

    /// Ends the game at an automatic end once the move that reached it stands: made final by a
    /// press and its grace period, or its landing square kept for
    /// [`MachineConfig::end_confirm_ms`](super::MachineConfig::end_confirm_ms). A move that was
    /// revised meanwhile (the piece slid on) takes its end with it.
    pub(super) fn confirm_end(&mut self, now: Millis, out: &mut Vec<Event>) {
        let Some(pending) = self.ends.pending().cloned() else {
            return;
        };
        if self.phase != Phase::Playing || self.record.game().plies() != pending.ply {
            self.ends.end_dropped();
            return;
        }
        // A press confirms once its grace period is over: the board may still report the
        // piece going on past the square that ended the game.
        let confirmed = self.record.settled() >= pending.ply
            || now >= pending.t_ms.saturating_add(self.config.end_confirm_ms);
        if confirmed && self.landing_stands(pending.ply) {
            self.ends.end_dropped();
            self.finish(pending.end, pending.t_ms, out);
        }
    }

    pub(super) fn look_for_start(&mut self, t: Millis, out: &mut Vec<Event>) {
        match self.starts.recognise(self.physical.board()) {
            SetUp::Start(start) => self.begin(*start, t, out),
            SetUp::Wrong(squares) => {
                if squares != self.wrong_setup {
                    let mut a = self.alert("7.2.1", None, t, Severity::Warning);
                    a.ply = 0;
                    a.before_game = true;
                    a.squares = squares.iter().map(ToString::to_string).collect();
                    a.message = format!(
                        "The set-up is wrong on {}; no game starts until it is corrected",
                        a.squares.join(" ")
                    );
                    out.push(Event::Alert(a));
                    self.wrong_setup = squares;
                }
            }
            SetUp::Nothing => self.begin_across_gap(t, out),
        }
    }

    pub(super) fn begin(&mut self, start: Start, t: Millis, out: &mut Vec<Event>) {
        if start.rotated {
            self.rotated = !self.rotated;
            self.physical.rotate_180();
        }
        let fresh = Machine::new(self.config.clone());
        let physical = std::mem::replace(&mut self.physical, fresh.physical.clone());
        let rotated = self.rotated;
        *self = Machine {
            physical,
            rotated,
            phase: Phase::Playing,
            record: GameRecord::new(start.game, t),
            chess960: start.chess960,
            ..fresh
        };
        self.physical.clear_placed();
        out.push(Event::GameStart {
            t_ms: t,
            fen: self.record.game().fen(),
            chess960: self.chess960,
            rotated: self.rotated,
        });
    }

    pub(super) fn finish(&mut self, end: Ending, t: Millis, out: &mut Vec<Event>) {
        self.tell_quick_reply(out);
        out.push(Event::Result {
            result: end.result.to_string(),
            reason: end.reason,
            t_ms: t,
        });
        self.phase = Phase::Ended;
        self.presses.game_ended();
        self.hold.end();
    }

    /// After a result signal, a piece other than a king stands off the game's final
    /// position (pieces taken off the centre squares to make room for the kings aside): the
    /// board is being cleared, and the signal can no longer be corrected.
    pub(super) fn left_final_position(&self) -> bool {
        let final_board = self.record.game().position().board();
        let sensed = self.physical.board();
        let kings_and_room = final_board.kings() | sensed.kings() | ending::CENTRE;
        !(self.sensed().diff(final_board) & !kings_and_room).is_empty()
    }

    pub(super) fn result_signal(&mut self, signal: Ending, t: Millis, out: &mut Vec<Event>) {
        let n = self.record.game().plies();
        let mut keep = n;
        // A king move to the centre that no press confirmed and that came just before the
        // other king completed the signal was the first half of the signal, not a move.
        while keep > self.record.settled().max(self.record.completed()) {
            let m = self.record.game().moves()[keep - 1].mv;
            let king_to_centre = matches!(m, Move::Normal { role: Role::King, to, .. } if ending::CENTRE.contains(to));
            let made = self.record.reached_at().get(keep).copied().unwrap_or(0);
            if !king_to_centre || t.saturating_sub(made) > SIGNAL_GAP_MS {
                break;
            }
            keep -= 1;
        }
        if keep < n {
            // A move whose press was forgotten looks the same: the arbiter decides.
            let mut a = self.alert("8.1", None, t, Severity::Warning);
            a.ply = ply_number(keep + 1);
            a.squares = self.record.game().moves()[keep..]
                .iter()
                .map(|p| p.mv.to().to_string())
                .collect();
            a.message = format!(
                "the king move{} {} just before the result signal {} taken as part of the \
                 signal, not as a move; if it was played, the arbiter adds it to the record",
                if n - keep == 1 { "" } else { "s" },
                self.record.game().moves()[keep..]
                    .iter()
                    .map(|p| p.san.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                if n - keep == 1 { "was" } else { "were" },
            );
            out.push(Event::Alert(a));
            self.adopt(keep, &[], t, out);
        }
        self.moves_behind_signal(t, out);
        self.ends.ended_by_signal(signal.result);
        self.finish(signal, t, out);
    }

    /// Under a result signal the board still shows other pieces moved since the last
    /// recorded move. After a gap in the link, or with updates lost, moves were made that
    /// nobody saw: read with the kings back where the game had them, they are recorded when
    /// legal moves explain them, with an 8.5.3 alert; otherwise a critical alert names the
    /// squares for the arbiter to add the moves. A result is never recorded silently short:
    /// with every update seen, the squares are a warning (a move the board did not report
    /// looks like a piece knocked while the kings were moved), and after a gap, so are the
    /// game's pieces gone from the centre squares the kings took (taken off to make room, or
    /// moved or captured unseen: the board cannot tell).
    fn moves_behind_signal(&mut self, t: Millis, out: &mut Vec<Event>) {
        let n = self.record.game().plies();
        let game_board = self.record.game().position().board().clone();
        let sensed = self.physical.board().clone();
        let on = SignalSquares::of(&sensed, &game_board, self.sensed().diff(&game_board));
        let across_gap = self.across_gap(n);
        let since = self.record.reached_at().get(n).copied().unwrap_or(0);
        let unseen = across_gap || self.gap.outage_since(since);
        let mut a = self.alert("8.5.3", None, t, Severity::Warning);
        a.ply = ply_number(n + 1);
        if on.behind.is_empty() {
            if unseen && on.cleared.any() {
                a.squares = square_names(on.cleared);
                a.message = format!(
                    "the result signal stands on a board read again after its updates were \
                     lost, with the game's pieces gone from {}: {CENTRE_CLEARED} after ply {n} \
                     against the scoresheets",
                    a.squares.join(" ")
                );
                out.push(Event::Alert(a));
            }
            return;
        }
        a.squares = square_names(on.behind);
        if !unseen {
            a.message = format!(
                "the result signal stands, but the board also shows {} changed since the last \
                 recorded move: {UNREPORTED_OR_KNOCKED} after ply {n}",
                a.squares.join(" ")
            );
            out.push(Event::Alert(a));
            return;
        }
        let explanation = self.moves_without_signal(&sensed, &game_board, on.made_room, on.cleared);
        const KINGS_ASSUMED: &str = "read with each king, and each piece the kings displaced \
                                     from the centre, where it stood before the result signal \
                                     (had one moved meanwhile, they differ)";
        match explanation {
            Explanation::Unique(moves) => {
                a.severity = Severity::Warning;
                a.message = format!(
                    "the result signal came with moves the record lacked: {}, {KINGS_ASSUMED}; \
                     the arbiter should check them",
                    numbered_san(self.record.game().position(), &moves)
                );
                self.adopt(n, &moves, t, out);
            }
            Explanation::Ambiguous(seqs) if across_gap => {
                let Reading::Adopt {
                    moves,
                    doubt: Some(Doubt::Order { others, .. }),
                    ..
                } = self.order_across_gap(n, seqs, &self.reports(n))
                else {
                    return;
                };
                let order = self.order_alert(n, &moves, &others, t);
                a.severity = order.severity;
                a.gap = order.gap;
                a.message = format!("{}; {KINGS_ASSUMED}", order.message);
                self.adopt(n, &moves, t, out);
            }
            _ => {
                a.severity = Severity::Critical;
                a.message = format!(
                    "the result signal stands, but the board also shows {} changed since ply \
                     {n}: moves were made that {} and no legal sequence of moves explains; the \
                     arbiter should add them to the record (replace moves from ply {})",
                    a.squares.join(" "),
                    if across_gap {
                        "nobody saw while the link was down"
                    } else {
                        "the board did not report"
                    },
                    n + 1,
                );
            }
        }
        out.push(Event::Alert(a));
    }

    /// What explains the `sensed` board with the kings of the result signal, and the game's
    /// pieces gone from the centre squares they took (`cleared`; `made_room` are the centre
    /// squares left empty), put back where the game's board (`game_board`) has them: the moves
    /// made before the signal.
    fn moves_without_signal(
        &self,
        sensed: &Board,
        game_board: &Board,
        made_room: Bitboard,
        cleared: Bitboard,
    ) -> Explanation {
        let n = self.record.game().plies();
        let mut unsignalled = sensed.clone();
        for sq in sensed.kings() | made_room {
            unsignalled.discard_piece_at(sq);
        }
        for sq in game_board.kings() | cleared {
            if let Some(piece) = game_board.piece_at(sq)
                && unsignalled.piece_at(sq).is_none()
            {
                unsignalled.set_piece_at(sq, piece);
            }
        }
        let reading = Sensed {
            board: &unsignalled,
            identifies: self.config.identifies_pieces,
            placed: Bitboard::EMPTY,
        };
        let start = self.record.game().position();
        match reading.single_moves(start)[..] {
            [(m, _)] => Explanation::Unique(vec![m]),
            _ => reading.sequences(start, self.reconstruction_depth(n), &self.reports(n)),
        }
    }
}
