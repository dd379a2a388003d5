//! A mover's piece not seen put down, as a capture on a board that senses only occupancy
//! leaves it: the capture the board cannot show, read at a press or on a quiet board.

use shakmaty::{Chess, Color, Move, Position};

use super::doubt::Doubt;
use super::exchanges::Exchange;
use super::reading::Reading;
use super::{Machine, Phase};
use crate::act::Event;
use crate::act::search::{Sensed, only};
use crate::board::Millis;

/// How a board is read when the mover's piece was not seen put down, as a capture on a board
/// that senses only occupancy leaves it ([`Machine::unseen_landing`]).
pub(super) enum UnseenLanding {
    /// The last move and another reply, every arrival shown, instead of the one capture
    /// ([`Machine::every_report_a_step`]).
    Steps {
        from: usize,
        moves: Vec<Move>,
        doubt: Option<Doubt>,
    },
    /// The one capture that leaves the board as it is, with the doubt the arbiter is told.
    Capture { capture: Move, doubt: Doubt },
    /// The likeliest of several captures that do, with the others.
    Likeliest { capture: Move, others: Vec<Move> },
    /// The opponent's reply begun: a piece offered and taken at once.
    Exchange(Exchange),
    /// The opponent's reply begun: the capture, with the reply when the board shows it
    /// made, and the other captures that fit as well.
    BeforeReply {
        capture: Move,
        reply: Option<Move>,
        others: Vec<Move>,
    },
}

impl Machine {
    /// How the board is read when the side to move's piece was not seen put down: the one
    /// capture that leaves the board as it is, unless the last move and another reply show
    /// every arrival (were the victim a pawn's single step, a double step taken en passant
    /// leaves the same board: the step is kept unless the board showed the pawn go on, read
    /// elsewhere, and the arbiter is told when it left the square quickly enough to have gone
    /// on); else the likeliest of several; else a capture with the opponent's reply begun.
    pub(super) fn unseen_landing(
        &self,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<UnseenLanding> {
        let captures = s.captures_landed_unseen(current);
        if let [capture] = *captures
            && self.double_step_shown(capture).is_none()
        {
            return Some(match self.every_report_a_step(s, capture) {
                Some(Reading::Adopt { from, moves, doubt }) => {
                    UnseenLanding::Steps { from, moves, doubt }
                }
                _ => UnseenLanding::Capture {
                    capture,
                    doubt: self
                        .unsampled_double_step(capture)
                        .unwrap_or_else(|| Doubt::capture_unseen(capture)),
                },
            });
        }
        if let Some((capture, others)) = self.undecided_captures(captures) {
            return Some(UnseenLanding::Likeliest { capture, others });
        }
        self.landed_unseen_before_reply(t, s, current)
    }

    /// Records what [`Machine::unseen_landing`] read, completed by `by`'s press at `t` when
    /// `pressed`.
    pub(super) fn adopt_unseen_landing(
        &mut self,
        by: Color,
        reading: UnseenLanding,
        t: Millis,
        pressed: bool,
        out: &mut Vec<Event>,
    ) {
        let pressed_by = pressed.then_some(by);
        match reading {
            UnseenLanding::Steps { from, moves, doubt } => {
                self.adopt_moves(from, &moves, doubt, t, pressed_by, out);
            }
            UnseenLanding::Capture { capture, doubt } => {
                if self.adopt_one(capture, t, pressed_by, out) {
                    self.raise_doubt(doubt, t, out);
                }
            }
            UnseenLanding::Likeliest { capture, others } => {
                if self.adopt_one(capture, t, pressed_by, out) {
                    self.keep_capture_choice(capture, others, t, out);
                }
            }
            // An offer taken at once looks the same as a capture elsewhere followed by the
            // opponent's piece put on the offered square: the exchange is read when that
            // capture loses material and the offer is an even trade.
            UnseenLanding::Exchange(exchange) => {
                if self.adopt_one(exchange.offer, t, pressed_by, out) {
                    self.read_reply(by, t, Some(exchange.retake), out);
                    if self.record.game().plies() == exchange.ply + 2 {
                        self.raise_doubt(Doubt::ExchangeUnseen(exchange), t, out);
                    }
                }
            }
            // The capture is over; the reply is read as far as the board shows it.
            UnseenLanding::BeforeReply {
                capture,
                reply,
                others,
            } => {
                if self.adopt_one(capture, t, pressed_by, out) {
                    if others.is_empty() {
                        self.raise_doubt(Doubt::capture_unseen(capture), t, out);
                    } else {
                        self.keep_capture_choice(capture, others, t, out);
                    }
                    self.read_reply(by, t, reply, out);
                }
            }
        }
    }

    /// On a board that senses only occupancy, a board that has differed from the game for
    /// [`STILL_DIFFERING_MS`](super::lost_updates::STILL_DIFFERING_MS) with nothing reported
    /// and no press: read as a press of the side to move would read it, since a piece is
    /// not held in the hand that long. This records a capture whose landing the board
    /// cannot show when no press followed it (a forgotten press, the game's last move).
    /// Returns the moves recorded, for the arbiter's alert; none when the board shows no
    /// such reading.
    pub(super) fn read_quiet_board(&mut self, t: Millis, out: &mut Vec<Event>) -> Vec<String> {
        if self.phase != Phase::Playing
            || self.presses.waiting().is_some()
            || self.ends.pending().is_some()
        {
            return Vec::new();
        }
        let mut start = self.record.game().plies();
        let by = self.record.game().position().turn();
        let current = self.record.game().position().clone();
        match self.read(true) {
            Reading::Adopt { from, moves, doubt }
                if from >= self.record.settled() && !moves.is_empty() =>
            {
                start = from;
                self.adopt_moves(from, &moves, doubt, t, None, out);
            }
            _ => {
                if let Some(reading) = self.unseen_landing(t, &self.sensed(), &current) {
                    self.adopt_unseen_landing(by, reading, t, false, out);
                }
            }
        }
        let moves = self.record.game().moves();
        moves[start.min(moves.len())..]
            .iter()
            .map(|played| played.san.clone())
            .collect()
    }

    /// After the presser's move at `t` was recorded from the board, the opponent's `reply`
    /// the board shows begun since: recorded when the board shows it made, and his press
    /// since judged in its turn.
    fn read_reply(&mut self, by: Color, t: Millis, reply: Option<Move>, out: &mut Vec<Event>) {
        let Some(reply) = reply else {
            self.judge_answer_in_turn(by, t);
            return;
        };
        let n = self.record.game().plies();
        let now = self.now;
        self.adopt(n, &[reply], now, out);
        let d = self.sensed().diff(self.record.game().position().board());
        self.set_held(d.any().then_some(d), now, out);
        if self.record.game().plies() == n + 1 {
            self.judge_answer_in_turn(by, t);
        }
    }

    /// The captures by the presser whose landing the board did not show and after which
    /// every other difference was reported after the capturer's lift, or the press `t` if
    /// earlier (the opponent's reply begun since: in fast play he starts before the press),
    /// each with the reply when the board shows it made. A capture the last move and
    /// another reply may explain instead is left to the other readings.
    fn captures_before_reply(
        &self,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Vec<(Move, Option<Move>)> {
        s.captures_landed_unseen_before_reply(current)
            .into_iter()
            .filter(|&(m, d, _)| {
                let since = self.lift_reported_at(m).map_or(t, |l| l.min(t));
                self.all_reported_after(d, since) && self.step_or_double(m).is_none()
            })
            .map(|(m, _, reply)| (m, reply))
            .collect()
    }

    /// What [`Machine::captures_before_reply`] reads: the one exchange that leaves the same
    /// board as a capture and its reply, when it is the likelier ([`Exchange::likelier`]);
    /// else the capture, with the reply when the board shows it made, and the other
    /// captures that fit as well (the likeliest is chosen among them,
    /// [`Machine::undecided_captures`]).
    fn landed_unseen_before_reply(
        &self,
        t: Millis,
        s: &Sensed<'_>,
        current: &Chess,
    ) -> Option<UnseenLanding> {
        let fits = self.captures_before_reply(t, s, current);
        let ply = self.record.game().plies();
        let exchanges = fits
            .iter()
            .filter_map(|&(capture, reply)| Exchange::instead_of(current, ply, capture, reply?))
            .filter(|e| e.likelier(current));
        if let Some(exchange) = only(exchanges) {
            return Some(UnseenLanding::Exchange(exchange));
        }
        let (capture, others) = match fits[..] {
            [] => return None,
            [(m, _)] => (m, Vec::new()),
            _ => self.undecided_captures(fits.iter().map(|&(m, _)| m).collect())?,
        };
        let reply = fits.iter().find(|&&(m, _)| m == capture)?.1;
        Some(UnseenLanding::BeforeReply {
            capture,
            reply,
            others,
        })
    }
}
