//! How the machine reads the board and the Laws it applies: [`MachineConfig`].
//!
//! The time thresholds follow from how a sensor board reports and how fast hands are. A
//! DGT board samples its squares one by one: a full scan takes about 200–250 ms, and boards
//! on Bluetooth scan at about half that speed. Within a scan, a placement may be reported
//! before the lift that preceded it, a capture may skip the "emptied" report of the taken
//! piece, and a sliding piece leaves a trail of squares behind it
//! (`../shared/protocols/eboard-protocols.md`). A hand, for its part, does not answer a
//! move in less than about 150 ms (the quickest human reaction to a seen event).

use crate::board::Millis;
use crate::board::kind::BoardKind;
use crate::rules::Budget;

/// How the machine reads the board and the Laws it applies. All times are in
/// milliseconds ([`Millis`]) of the observations' receive times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineConfig {
    /// The board tells pieces apart (DGT). False for occupancy-only boards: promotions are
    /// then assumed to a queen and raised for the arbiter (4.6).
    ///
    /// Default `true`: the DGT boards this recorder is built for name every piece.
    pub identifies_pieces: bool,
    /// Two lifts or placements closer than this, on squares two or more files or ranks
    /// apart, raise a suspected 7.5.4 (two hands). Also the quickest a reply can be made by
    /// the other player's hand: a move complete sooner after the one before it may be a
    /// piece knocked over (7.4), and reconstructions whose moves overlap by more than this
    /// are doubted.
    ///
    /// Milliseconds; default 150: one hand cannot serve two far-apart squares faster, nor
    /// can a player see a move and answer it.
    pub two_hands_threshold_ms: Millis,
    /// 7.5.5 time penalties are 1 minute instead of 2, as in rapid (A.4.2) and blitz
    /// (Appendix B).
    ///
    /// Default `false`: standard play.
    pub one_minute_penalty: bool,
    /// A set-up for a FEN game: the game starts when this position stands, instead of the
    /// standard start.
    ///
    /// Default `None`: the standard start (or a Chess960 one, with [`Self::chess960`]).
    pub start_fen: Option<String>,
    /// Any of the 960 Chess960 starts begins a game (off by default: a standard set-up with
    /// king and queen swapped is then a wrong set-up, not a Chess960 game).
    pub chess960: bool,
    /// Longest sequence of moves reconstructed when board updates were missed.
    ///
    /// Plies; default 4: two moves of each player cover a burst of lost updates (a dropped
    /// link, fast play); the search grows with the number of legal moves to this power,
    /// and a board that more moves would be needed for is held for the arbiter instead.
    pub max_reconstruction_plies: usize,
    /// Longest sequence of moves read across a gap in the link (the board unplugged, its
    /// Bluetooth stalled) when the board's move log cannot tell them: several orders are
    /// then recorded in the likeliest with an alert naming the others, and a board no
    /// sequence this long explains is taken as the game's position (a critical alert).
    ///
    /// Plies; default 8: four moves of each player, about half a minute of quick play.
    pub max_gap_plies: usize,
    /// A clock press that arrives while a move is still being made is judged this long
    /// after the press (the board may report the last placement after the press); a move a
    /// press completed is made final this long after it. A press judged on a board still in
    /// motion waits up to three times as long.
    ///
    /// Milliseconds; default 400: more than one full scan (200–250 ms) and its transmission,
    /// so the last placement of a move has been reported; less than a hand takes to make
    /// the next move, so a reply is not waited for.
    pub press_grace_ms: Millis,
    /// Moves that may still be revised when no clock press confirmed them.
    ///
    /// Plies; default 2: a move stays open through the opponent's reply (a slide that went
    /// on, a rook-first castling, a knocked piece read as the reply show only then) and is
    /// final once its player has moved again.
    pub revisable_plies: usize,
    /// A piece placed while the board shows one more of its kind than the game can have is
    /// taken as a lost "emptied" update of another of its kind after this long (the board
    /// may report a placement before the lift that preceded it, by up to a scan).
    ///
    /// Milliseconds; default 1000: well past a scan, on Bluetooth too (about 500 ms), so a
    /// lift reported late is not taken for a lost one; soon enough that the correction
    /// comes before the next move in fast play.
    pub missed_update_ms: Millis,
    /// How much earlier than the lift before it the board may report a placement (a scan
    /// of the squares takes time): reconstructions of missed moves must agree with the
    /// report times within this. Also how late the board may show a move's end and still
    /// be read as the same move.
    ///
    /// Milliseconds; default 600: a Bluetooth scan (about 500 ms, twice a USB scan) with a
    /// margin for transmission.
    pub report_reorder_ms: Millis,
    /// A move that mates, stalemates or otherwise ends the game ends it once confirmed by a
    /// press or once its landing square has stood this long (a sliding piece passing a
    /// mating square has not moved there).
    ///
    /// Milliseconds; default 1000: a slide passing the square is reported leaving it within
    /// a scan or two; the result still shows within a second when no press comes.
    pub end_confirm_ms: Millis,
    /// How long after a piece was seen arriving it may still be read as sliding on (a slide
    /// paused mid-way and reported late): its move is revised to the longer one, past the
    /// opponent's reply or a hold, with a 4.7 warning when it stood longer than a scan.
    ///
    /// Milliseconds; default 1500: a paused slide reported late spans a few scans and a
    /// hand's hesitation; a piece that stood longer was released there, and moving it on is
    /// a new move.
    pub moved_on_ms: Millis,
    /// How much unwinnability analysis may be spent after a move to find a dead position
    /// (5.2.2).
    ///
    /// Default [`Budget::deterministic`]: no wall clock in the core, so a replay of the same
    /// observations always finds the same ends.
    pub dead_position_budget: Budget,
    /// Leave the dead-position analysis to the shell
    /// ([`Machine::take_analysis_requests`](super::Machine::take_analysis_requests)), so
    /// that no observation waits on it.
    ///
    /// Default false: the analysis runs while the move is read, as a batch replay wants.
    pub defer_dead_position_analysis: bool,
    /// How long the board takes to sample all its squares once.
    ///
    /// Milliseconds; default 250 (DGT: a scan takes about 200–250 ms). Reports closer than
    /// this may show only the order the squares were sampled in, not the order or pace of
    /// the hands: they are no evidence of two hands (7.5.4), and a hold that ends within
    /// two scans is not told (a piece adjusted, a move still being made).
    pub scan_period_ms: Millis,
    /// The board samples all its squares at once and sends whole frames (Millennium,
    /// Certabo, Sentio, Chessnut): a placement is then never reported before a lift made
    /// earlier, and on an occupancy-only board a placement more than a frame before a
    /// move's first lift is no evidence that the move captured there.
    ///
    /// Default false (DGT: squares are sampled one by one, so reports may come out of order
    /// by up to [`MachineConfig::report_reorder_ms`]).
    pub whole_frames: bool,
    /// How much later than the clock's presses the board's square reports reach the host.
    /// A press proves a move complete only when it came this long before the report that
    /// followed it: on a board that votes over whole frames, a press seen between a lift and
    /// a capture may have come after both.
    ///
    /// Milliseconds; default 0 (DGT: each square is reported as it is sampled, on the line
    /// the clock's messages share).
    pub report_lag_ms: Millis,
}

impl MachineConfig {
    /// This configuration for a board of `kind`: whether it names pieces, its scan, whether
    /// it sends whole frames and how late its reports reach the host.
    pub fn on_board(self, kind: BoardKind) -> MachineConfig {
        MachineConfig {
            identifies_pieces: kind.identifies_pieces(),
            scan_period_ms: kind.scan_period_ms(),
            whole_frames: kind.sends_snapshots(),
            report_lag_ms: kind.report_lag_ms(),
            ..self
        }
    }
}

impl Default for MachineConfig {
    fn default() -> Self {
        MachineConfig {
            identifies_pieces: true,
            two_hands_threshold_ms: 150,
            one_minute_penalty: false,
            start_fen: None,
            chess960: false,
            max_reconstruction_plies: 4,
            max_gap_plies: 8,
            press_grace_ms: 400,
            revisable_plies: 2,
            missed_update_ms: 1_000,
            report_reorder_ms: 600,
            end_confirm_ms: 1_000,
            moved_on_ms: 1_500,
            dead_position_budget: Budget::deterministic(),
            defer_dead_position_analysis: false,
            scan_period_ms: 250,
            whole_frames: false,
            report_lag_ms: 0,
        }
    }
}
