//! The act-of-moving machine: observations in, moves and alerts out.

mod adopting;
mod capture_choice;
mod capture_doubt_alerts;
mod clock_state;
mod config;
mod dead_position;
mod doubt;
mod doubt_alerts;
mod exchanges;
mod game_record;
mod gap_doubts;
mod gaps;
mod gone_on;
mod hands;
mod hold;
mod illegal_moves;
mod input;
mod link_gap;
mod lost_updates;
mod open_doubts;
mod pending_end;
mod press;
mod press_judgment;
mod presses;
mod read_board;
mod readers;
mod reading;
mod reconstruction;
mod recording;
mod rereading;
mod sense;
mod settling;
mod slides;
mod square_reports;
mod start_and_end;
mod touches;
mod uncertain_readings;
mod unseen_landing;

pub use config::MachineConfig;
pub use link_gap::TAKE_UP_QUIET_MS;
pub use pending_end::AnalysisRequest;

use shakmaty::{Bitboard, Board, Color, Position, Rank, Square};

use crate::act::physical::PhysicalBoard;
use crate::act::search::{Sensed, squares_of};
use crate::act::start::StartRules;
use crate::act::{Alert, Event, Severity};
use crate::board::{ColorName, Millis, Observation};
use crate::rules::Game;
use clock_state::ClockState;
use game_record::GameRecord;
use hold::Hold;
use link_gap::LinkGap;
use open_doubts::OpenDoubts;
use pending_end::Ends;
use press::Presses;
use sense::Sense;
use square_reports::SquareReports;
use touches::Touches;

/// Where the machine is in the life of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// No game yet: waiting for a start position.
    Waiting,
    /// A game is being played.
    Playing,
    /// The game ended; waiting for a new start position.
    Ended,
}

/// The act-of-moving machine (FIDE Articles 4 and 7). Deterministic: feed it observations,
/// collect events.
///
/// Most of its state is in typed parts, each changed only through its own methods (what
/// happens to it: a move recorded, a press taken to be judged, a gap read again), each
/// type's doc naming the files that call them: the record ([`GameRecord`]), the board's
/// reports ([`SquareReports`], [`Touches`]), the hold ([`Hold`]), the open doubts and
/// choices ([`OpenDoubts`]), the clock and its presses ([`ClockState`], [`Presses`]), the
/// ends waiting ([`Ends`]) and what the recorder did not see ([`LinkGap`]).
#[derive(Debug, Clone)]
pub struct Machine {
    config: MachineConfig,
    /// What the board senses, which decides how it is read.
    sense: Sense,
    /// Which set-ups start a game (standard, FEN, Chess960).
    starts: StartRules,
    /// The board as sensed, in game coordinates.
    physical: PhysicalBoard,
    /// The board was found turned round (7.2.2): squares are mapped.
    rotated: bool,
    phase: Phase,
    /// The game as recorded, and what was said of its moves.
    record: GameRecord,
    chess960: bool,
    /// When the board reported each square.
    square_reports: SquareReports,
    /// The lifts and placements the board reported.
    touches: Touches,
    /// The squares the game is held on while nothing explains the board (7.4, 7.6).
    hold: Hold,
    /// The open doubts and choices.
    doubts: OpenDoubts,
    /// What the clock showed: presses, times, the running side.
    clock: ClockState,
    /// The presses waiting on the board, and a move a press completed.
    presses: Presses,
    /// The squares of the wrong set-up last told (7.2.1): told again only when they change.
    wrong_setup: Vec<Square>,
    /// The ply a suspected 7.5.4 was raised for: once a ply.
    two_hands_ply: Option<u32>,
    /// Two close lifts whose 7.5.4 alert waits for where their pieces are put down.
    close_lifts: Option<hands::CloseLifts>,
    /// The ends waiting: an automatic end, a result signal, analyses.
    ends: Ends,
    /// A surplus piece: its square, when it was placed, when to look for its lost lift.
    surplus: Option<(Square, Millis, Millis)>,
    /// The last observation was a lift: a piece is in the air.
    lifted_last: bool,
    /// The last move whose reply the board showed legal only had it gone further along
    /// its line: told once.
    longer_last_told: Option<usize>,
    /// The time of the last report after which the board, differing from the game, was
    /// told to have stood unchanged (see `STILL_DIFFERING_MS`, `lost_updates.rs`).
    still_told: Option<Millis>,
    /// Since when the board has differed from the game without a break, and whether that
    /// was told (see `STILL_DIFFERING_MS`, `lost_updates.rs`).
    differing_since: Option<(Millis, bool)>,
    /// The latest time the machine has seen.
    now: Millis,
    /// What the recorder did not see: a gap in the link, recovered observations.
    gap: LinkGap,
}

impl Machine {
    /// A machine waiting for a start position.
    pub fn new(config: MachineConfig) -> Machine {
        let expected = config
            .start_fen
            .as_deref()
            .and_then(|fen| Game::from_fen(fen, config.chess960).ok());
        let starts = StartRules {
            expected,
            chess960: config.chess960,
            identifies: config.identifies_pieces,
        };
        Machine {
            physical: PhysicalBoard::new(config.identifies_pieces),
            sense: Sense::of(config.identifies_pieces),
            starts,
            config,
            rotated: false,
            phase: Phase::Waiting,
            record: GameRecord::new(Game::standard(), 0),
            chess960: false,
            square_reports: SquareReports::new(),
            touches: Touches::new(),
            hold: Hold::new(),
            doubts: OpenDoubts::new(),
            clock: ClockState::new(),
            presses: Presses::new(),
            wrong_setup: Vec::new(),
            two_hands_ply: None,
            close_lifts: None,
            ends: Ends::new(),
            surplus: None,
            lifted_last: false,
            still_told: None,
            differing_since: None,
            longer_last_told: None,
            now: 0,
            gap: LinkGap::new(),
        }
    }

    /// Runs a whole observation stream through a new machine and returns every event.
    pub fn run(config: MachineConfig, observations: &[Observation]) -> Vec<Event> {
        let mut machine = Machine::new(config);
        let mut events = Vec::new();
        for obs in observations {
            machine.observe(obs, &mut events);
        }
        events
    }

    /// The configuration.
    pub fn config(&self) -> &MachineConfig {
        &self.config
    }

    /// The recorded game so far (the standard start before any game began).
    pub fn game(&self) -> &Game {
        self.record.game()
    }

    /// Plies recorded in the current game.
    pub fn ply(&self) -> u32 {
        ply_number(self.record.game().plies())
    }

    /// The board as sensed, in game coordinates.
    pub fn physical_board(&self) -> &Board {
        self.physical.board()
    }

    /// Where the machine is in the life of a game.
    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// True while play is held because the board matches no legal continuation (7.4/7.6).
    pub fn is_held(&self) -> bool {
        self.hold.is_held()
    }

    /// True when the board was found turned round and squares are being mapped (7.2.2).
    pub fn is_rotated(&self) -> bool {
        self.rotated
    }

    /// True for a Chess960 game.
    pub fn is_chess960(&self) -> bool {
        self.chess960
    }

    /// Completed illegal moves of a player in this game (7.5.5).
    pub fn illegal_moves(&self, color: Color) -> u32 {
        let count = self
            .record
            .penalties()
            .iter()
            .filter(|&&(by, _)| by == color)
            .count();
        u32::try_from(count).unwrap_or(u32::MAX)
    }

    /// True when something at `t` rests on estimated times: the observation being read, or
    /// one the last gap's recovery gave that time.
    fn untimed_at(&self, t: Millis) -> bool {
        self.gap.untimed_at(t)
    }

    /// The board reported `sq` at `t`.
    fn seen(&mut self, sq: Square, t: Millis) {
        self.square_reports.seen(sq, t);
    }

    fn map(&self, sq: Square) -> Square {
        if self.rotated { sq.rotate_180() } else { sq }
    }

    fn sensed(&self) -> Sensed<'_> {
        Sensed {
            board: self.physical.board(),
            identifies: self.config.identifies_pieces,
            placed: self.capture_evidence(self.record.game().plies()),
        }
    }

    /// The squares that show a capture by a move read from position `k`. A board that names
    /// pieces shows every capture; on a board that senses only occupancy it is a square
    /// placed on since `k` was reached, and no earlier than a scan before the first lift of
    /// a piece still off its square (the capturing piece left its square before it
    /// arrived): a piece put back where it stood before the move began captured nothing.
    fn captures_reported(&self, k: usize) -> Bitboard {
        let placed = self.physical.placed();
        let since = self.reports_since(k);
        let empty = !self.physical.board().occupied();
        let reported = |sq: Square| self.square_reports.last(sq).filter(|&t| t >= since);
        // Before the last move the placements were cleared; a square reported after `k` was
        // reached (not the arrival that reached it) and occupied now was last placed on.
        // So was one reported after the press that ended the move reaching `k`, if the board
        // showed that move only later, but for the move's own squares: their report may be
        // the move itself.
        let reported_since = || self.squares_reported_after(since);
        let placed = if k < self.record.game().plies() {
            placed | (reported_since() & !empty)
        } else if self
            .record
            .reached_at()
            .get(k)
            .is_some_and(|&reached| since < reached)
        {
            let last_move = self.record.game().moves()[k - 1].mv;
            placed | (reported_since() & !empty & !squares_of(last_move))
        } else {
            placed
        };
        let Some(first_lift) = empty.into_iter().filter_map(reported).min() else {
            return placed;
        };
        let lead = if self.config.whole_frames {
            self.config.scan_period_ms
        } else {
            self.config.report_reorder_ms
        };
        let earliest = first_lift.saturating_sub(lead);
        let in_time: Bitboard = placed
            .into_iter()
            .filter(|&sq| reported(sq).is_none_or(|t| t >= earliest))
            .collect();
        if in_time == placed {
            return placed;
        }
        // 4.6: the new piece may be put on the promotion square before the pawn leaves.
        in_time | (placed & self.promotion_squares(k, empty))
    }

    /// Since when the board's reports belong to moves made from position `k`: since `k` was
    /// read, or, for the current position, since its mover's press if that came first: a scan
    /// that reports a move late lets it be read only after the press, and what the board
    /// reported after the press (the reply's capture begun) belongs to the reply.
    fn reports_since(&self, k: usize) -> Millis {
        let reached = self.record.reached_at().get(k).copied().unwrap_or(0);
        if k == 0 || k != self.record.game().plies() || self.record.completed() < k {
            return reached;
        }
        let mover = !self.record.game().position().turn();
        let before = self.record.reached_at().get(k - 1).copied().unwrap_or(0);
        self.clock
            .pressed_at(mover)
            .filter(|&p| p > before && p < reached)
            .unwrap_or(reached)
    }

    /// The squares on which pawns that stood on their seventh rank in position `k` and whose
    /// squares are `empty` now could promote.
    fn promotion_squares(&self, k: usize, empty: Bitboard) -> Bitboard {
        let Some(position) = self.record.game().positions().get(k) else {
            return Bitboard::EMPTY;
        };
        let board = position.board();
        let mut squares = Bitboard::EMPTY;
        for color in [Color::White, Color::Black] {
            let seventh = Bitboard::from_rank(color.relative_rank(Rank::Seventh));
            for pawn in board.pawns() & board.by_color(color) & seventh & empty {
                squares |= shakmaty::attacks::pawn_attacks(color, pawn);
                if let Some(ahead) = pawn.offset(if color.is_white() { 8 } else { -8 }) {
                    squares.add(ahead);
                }
            }
        }
        squares
    }

    fn alert(&self, article: &str, side: Option<Color>, t: Millis, severity: Severity) -> Alert {
        Alert {
            article: article.to_string(),
            side: side.map(ColorName::from),
            ply: ply_number(self.record.game().plies() + 1),
            t_ms: t,
            evidence_ms: Vec::new(),
            squares: Vec::new(),
            severity,
            message: String::new(),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        }
    }
}

/// How many moves before those still open a reading of the board may reach back to,
/// correcting moves a press made final.
const REREAD_PLIES: usize = 2;

fn ply_number(plies: usize) -> u32 {
    u32::try_from(plies).unwrap_or(u32::MAX)
}

fn color_word(c: Color) -> &'static str {
    match c {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// A machine on a board that names its pieces or senses only occupancy, shown the start
/// position at 0 ms, with what that caused: where the machine's unit tests begin.
#[cfg(test)]
fn at_start(identifies_pieces: bool) -> (Machine, Vec<Event>) {
    let mut machine = Machine::new(crate::act::MachineConfig {
        identifies_pieces,
        ..crate::act::MachineConfig::default()
    });
    let mut events = Vec::new();
    let snapshot = crate::board::Snapshot {
        board: shakmaty::Board::new(),
        identifies_pieces,
    };
    machine.observe(
        &Observation {
            t_ms: 0,
            kind: crate::board::ObservationKind::Snapshot(snapshot),
        },
        &mut events,
    );
    (machine, events)
}

/// The articles of the alerts among `events`, in order: what the machine's unit tests check.
#[cfg(test)]
fn alert_articles(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) => Some(a.article.clone()),
            _ => None,
        })
        .collect()
}
