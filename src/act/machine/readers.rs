//! The two readers of the board, one per [`Sense`]. Where a board that senses only
//! occupancy needs readings of what it cannot show (a capture's landing, a promoted piece,
//! a knocked piece that read as a move), the machine asks the reader of its sense; the
//! reader of a board that names its pieces has none of them, so that board's readings run
//! no occupancy code.

use shakmaty::{Bitboard, Chess, Color, Move, Piece, Square};

use super::Machine;
use super::capture_choice::likeliest_capture_sequence;
use super::doubt::Doubt;
use super::link_gap::UnconfirmedGap;
use super::press::Press;
use super::reading::{Reading, queen_promotions};
use super::sense::Sense;
use super::unseen_landing::UnseenLanding;
use crate::act::Event;
use crate::act::search::{Explanation, Reports, Sensed};
use crate::board::Millis;

impl Machine {
    /// The reading of a board that shows the game's position: the game as it is, unless on
    /// an occupancy board the last move's capture shows its landing only now, elsewhere
    /// ([`Machine::capture_landing_shown`]).
    pub(super) fn reading_of_the_game(&self, s: &Sensed<'_>) -> Reading {
        match self.sense {
            Sense::PieceNames => Reading::Current,
            Sense::Occupancy => self.capture_landing_shown(s).unwrap_or(Reading::Current),
        }
    }

    /// The reading of a board that shows one move `m` from the game's position `n`, with its
    /// `doubt`: that move, unless on an occupancy board a quick reply was a knocked piece set
    /// back ([`Machine::knocked_reply_set_back`]).
    pub(super) fn reading_of_one_move(
        &self,
        s: &Sensed<'_>,
        n: usize,
        m: Move,
        doubt: Option<Doubt>,
    ) -> Reading {
        match self.sense {
            Sense::PieceNames => self.one_move_from(n, m, doubt),
            Sense::Occupancy => self
                .knocked_reply_set_back(s)
                .unwrap_or_else(|| self.one_move_from(n, m, doubt)),
        }
    }

    /// On an occupancy board, the corrections of what it could not show that the board's
    /// reports now show: a promoted piece that moves as a knight, another capture than the
    /// one chosen at a press ([`Machine::capture_choice_corrected`]).
    pub(super) fn correction_shown(&self, s: &Sensed<'_>, pressed: bool) -> Option<Reading> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self
                .knight_promotion_shown(s)
                .or_else(|| self.capture_choice_corrected(s, pressed)),
        }
    }

    /// On an occupancy board, held on a board nothing else explains: another capture than
    /// the one chosen, with the moves since ([`Machine::capture_choice_reread_when_held`]).
    pub(super) fn correction_when_held(&self, s: &Sensed<'_>) -> Option<Reading> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self.capture_choice_reread_when_held(s),
        }
    }

    /// On an occupancy board, the mover's piece not seen put down: the capture the board
    /// could not show ([`Machine::unseen_landing`]).
    pub(super) fn landing_not_shown(
        &self,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<UnseenLanding> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self.unseen_landing(t, s, current),
        }
    }

    /// A pawn on the last rank at `by`'s press at `t` (`m`) is a promotion the press
    /// completed, even when it was taken back before the press is judged: unexchanged
    /// (7.5.2) on a board that names pieces. One that senses only occupancy shows the pawn
    /// as it shows the piece it became: which it is, the arbiter checks (4.6).
    pub(super) fn promotion_at_press(
        &mut self,
        by: Color,
        m: Move,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        match self.sense {
            Sense::PieceNames => self.unfinished_promotion(by, m, t, out),
            Sense::Occupancy => {
                if self.adopt_at_press(by, m, t, out) {
                    self.raise_doubt(Doubt::PromotionPiece, t, out);
                }
            }
        }
    }
}

/// What a board shows of the pieces that are put down and taken: a board that names its
/// pieces shows every landing, a capture among them; one that senses only occupancy may show
/// neither, and these readings stand in for what it cannot show.
impl Machine {
    /// True when the board names its pieces: what some alerts' severity and wording rest on.
    pub(super) fn names_pieces(&self) -> bool {
        self.sense == Sense::PieceNames
    }

    /// The squares that show a capture by a move read from position `k`: on a board that
    /// names pieces every placement; on one that senses only occupancy, those its reports
    /// put in time ([`Machine::captures_reported`]).
    pub(super) fn capture_evidence(&self, k: usize) -> Bitboard {
        match self.sense {
            Sense::PieceNames => self.physical.placed(),
            Sense::Occupancy => self.captures_reported(k),
        }
    }

    /// The placements the board named, for the search to weigh: none on an occupancy board.
    pub(super) fn placements_named(&self) -> Option<&[(Square, Piece, Millis)]> {
        match self.sense {
            Sense::PieceNames => Some(self.touches.placements()),
            Sense::Occupancy => None,
        }
    }

    /// A piece the board named on `sq` at `t` is kept, to tell later which piece stood where.
    pub(super) fn note_placement(&mut self, sq: Square, piece: Piece, t: Millis) {
        match self.sense {
            Sense::PieceNames => self.touches.named(sq, piece, t),
            Sense::Occupancy => {}
        }
    }

    /// A piece put on `sq` at `t` one more of its kind than the game can have starts the
    /// wait for its lost lift ([`MachineConfig::missed_update_ms`](super::MachineConfig)): an
    /// occupancy board shows no kind.
    pub(super) fn watch_for_lost_lift(&mut self, sq: Square, t: Millis) {
        match self.sense {
            Sense::PieceNames => {
                if self.surplus.is_none() && self.surplus_at(sq) {
                    self.surplus = Some((sq, t, t.saturating_add(self.config.missed_update_ms)));
                }
            }
            Sense::Occupancy => {}
        }
    }

    /// A lift by `lifter` from `sq` at `t` while a game is played: on an occupancy board, the
    /// last move's piece may have gone on to a capture it could not show
    /// ([`Machine::gone_on_before_reply`]).
    pub(super) fn lift_after_move(
        &mut self,
        sq: Square,
        lifter: Color,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        match self.sense {
            Sense::PieceNames => {}
            Sense::Occupancy => self.gone_on_before_reply(sq, lifter, t, out),
        }
    }

    /// The capture of `seq` nothing shows landed: none on a board that names pieces
    /// ([`Machine::capture_unreported`]).
    pub(super) fn capture_not_shown(&self, seq: &[Move], reports: &Reports<'_>) -> Option<Move> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self.capture_unreported(seq, reports),
        }
    }

    /// True when the recorded move `k` is a capture the board's reports may still correct:
    /// never on a board that names pieces ([`Machine::capture_unreported_at`]).
    pub(super) fn capture_unevidenced(&self, k: usize) -> bool {
        match self.sense {
            Sense::PieceNames => false,
            Sense::Occupancy => self.capture_unreported_at(k),
        }
    }

    /// After moves were adopted from ply `from`: on an occupancy board, each capture among
    /// them whose landing it never showed stays open ([`Machine::keep_unseen_capture_choices`]).
    pub(super) fn captures_kept_open(&mut self, from: usize) {
        match self.sense {
            Sense::PieceNames => {}
            Sense::Occupancy => self.keep_unseen_capture_choices(from),
        }
    }

    /// True when a move of `seq` may be a knocked piece, begun with the arrival of the move
    /// before it: the board shows a knocked piece as a move only when it senses occupancy
    /// ([`Machine::begun_with_an_arrival`]).
    pub(super) fn begun_before_press(
        &self,
        start: &Chess,
        seq: &[Move],
        reports: &Reports<'_>,
    ) -> bool {
        match self.sense {
            Sense::PieceNames => false,
            Sense::Occupancy => self.begun_with_an_arrival(start, seq, reports),
        }
    }

    /// Of several sequences from position `k` (`start`) that leave the board as it is, the
    /// one with the likeliest capture, with the others: only an occupancy board leaves
    /// captures it cannot tell apart ([`likeliest_capture_sequence`]).
    pub(super) fn capture_told_apart(
        &self,
        k: usize,
        start: &Chess,
        seqs: &[Vec<Move>],
    ) -> Option<(Vec<Move>, Vec<Vec<Move>>)> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => {
                let arrived = k
                    .checked_sub(1)
                    .map(|i| self.record.game().moves()[i].mv.to());
                likeliest_capture_sequence(start, arrived, seqs)
            }
        }
    }

    /// True when a queen read for a promotion is a guess: the board does not name it.
    pub(super) fn promoted_piece_guessed(&self) -> bool {
        self.sense == Sense::Occupancy
    }

    /// Sequences that differ in promotions the board did not name: on an occupancy board the
    /// one promoting to queens, when there is one ([`queen_promotions`]).
    pub(super) fn promotions_unnamed(&self, seqs: Vec<Vec<Move>>) -> Explanation {
        match self.sense {
            Sense::PieceNames => Explanation::Ambiguous(seqs),
            Sense::Occupancy => match queen_promotions(&seqs) {
                Some(seq) => Explanation::Unique(seq),
                None => Explanation::Ambiguous(seqs),
            },
        }
    }

    /// True when the board may show the double step of `pawn` to `sq` since `arrived`: a
    /// board that names pieces must have named it there.
    pub(super) fn double_step_named(&self, sq: Square, pawn: Piece, arrived: Millis) -> bool {
        match self.sense {
            Sense::PieceNames => self.named_on(sq, pawn, arrived),
            Sense::Occupancy => true,
        }
    }

    /// The latest report that came before a piece's lift at `lifted`: on a board that
    /// senses only occupancy, reported up to a scan's order later
    /// ([`Machine::scan_order_slack`]).
    pub(super) fn reported_before_lift(&self, lifted: Millis) -> Millis {
        match self.sense {
            Sense::PieceNames => lifted,
            Sense::Occupancy => lifted.saturating_add(self.scan_order_slack()),
        }
    }

    /// True when a capture shows no change on its square: the board senses only occupancy.
    pub(super) fn capture_shows_no_change(&self) -> bool {
        self.sense == Sense::Occupancy
    }

    /// The pieces whose identity rests on a gap's reading: none on a board that names them
    /// ([`Machine::guessed_pieces`]).
    pub(super) fn pieces_guessed(&self, gap: &UnconfirmedGap) -> Bitboard {
        match self.sense {
            Sense::PieceNames => Bitboard::EMPTY,
            Sense::Occupancy => self.guessed_pieces(gap),
        }
    }

    /// What a gap's reading may also have got wrong on a board that does not name pieces.
    pub(super) fn pieces_not_named(&self) -> &'static str {
        match self.sense {
            Sense::PieceNames => "",
            Sense::Occupancy => ", or a piece taken for another: the board does not name them",
        }
    }

    /// The board has differed from the game, unchanged, for a long while: on an occupancy
    /// board it is read as a press would read it ([`Machine::read_quiet_board`]). Returns the
    /// moves recorded.
    pub(super) fn quiet_board_read(&mut self, t: Millis, out: &mut Vec<Event>) -> Vec<String> {
        match self.sense {
            Sense::PieceNames => Vec::new(),
            Sense::Occupancy => self.read_quiet_board(t, out),
        }
    }

    /// The one capture by the last move's piece whose landing the board could not show,
    /// now that the piece left the square it was read on: none on a board that names pieces
    /// ([`Machine::unseen_capture_gone_on_to`]).
    pub(super) fn capture_gone_on_to(
        &self,
        press: Press,
        fits: impl Fn(Move, Bitboard) -> Option<(Move, Option<Move>)>,
    ) -> Option<(Move, Option<Move>)> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self.unseen_capture_gone_on_to(press, fits),
        }
    }

    /// At a press at `t`, a move from `current` the board shows made with the opponent's
    /// reply begun: on an occupancy board only ([`Machine::move_with_reply_begun`]).
    pub(super) fn move_shown_with_reply_begun(
        &self,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<Move> {
        match self.sense {
            Sense::PieceNames => None,
            Sense::Occupancy => self.move_with_reply_begun(t, s, current),
        }
    }

    /// The ply `press` completes: on a board that names pieces, which reports every landing
    /// within a scan, an earlier one when its move was shown only after the press
    /// ([`Machine::pressed_for_landing_shown`]).
    pub(super) fn pressed_for(&self, press: Press) -> usize {
        match self.sense {
            Sense::PieceNames => self.pressed_for_landing_shown(press),
            Sense::Occupancy => press.ply,
        }
    }
}
