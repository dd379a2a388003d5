//! Captures the board cannot tell apart: on a board that senses only occupancy, a piece that
//! takes empties its own square and leaves the victim's as full as before, so when it takes
//! within one scan of the victim's removal, several captures by that piece leave the same
//! board. At the press one of them is recorded, the likeliest, and the arbiter is told the
//! others; the board's later reports correct the record if they show another one was made.

use shakmaty::uci::UciMove;
use shakmaty::{Bitboard, CastlingMode, Chess, Move, Position, Square, attacks};

use super::Machine;
use super::doubt::Doubt;
use super::exchanges::worth;
use super::open_doubts::{CHOICE_OPEN_PLIES, CaptureChoice};
use super::reading::{Reading, choose, common_prefix};
use crate::act::Event;
use crate::act::search::{Explanation, Sensed, only, touches};
use crate::board::Millis;

/// How many games a correction may weigh at once: past it, the later choices leave too many
/// ways to read the moves since, and the record stands as it is.
const MOST_REPLAYS: usize = 16;

/// How many moves past the record a held game may be read with a corrected capture choice:
/// the moves of fast play made while the record stood wrong.
const HELD_CHOICE_PLIES: usize = 4;

/// Every capture the piece on `from` can make from `pos` with its landing unseen: each plain
/// capture empties `from` and leaves its victim's square as full as before.
fn unseen_captures_from(pos: &Chess, from: Square) -> Vec<Move> {
    pos.legal_moves()
        .into_iter()
        .filter(|m| {
            matches!(
                m,
                Move::Normal {
                    capture: Some(_),
                    promotion: None,
                    ..
                }
            ) && m.from() == Some(from)
        })
        .collect()
}

/// One way of reading the game again from a choice's position.
struct Replay {
    /// The position the moves reach.
    pos: Chess,
    /// The other capture, then the moves recorded since as they were made again.
    moves: Vec<Move>,
    /// The landing squares of the moves made again differently, old and new.
    changed: Bitboard,
    /// How many later choices' captures were made again as other than the likeliest.
    unlikely: usize,
}

/// What `capture` wins at first sight: the victim, less the capturer when the opponent
/// attacks the square once it stands there.
fn first_sight_gain(pos: &Chess, capture: Move) -> i32 {
    let victim = capture.capture().map_or(0, worth);
    let mut after = pos.clone();
    after.play_unchecked(capture);
    let defended = after
        .board()
        .attacks_to(capture.to(), after.turn(), after.board().occupied())
        .any();
    victim - if defended { worth(capture.role()) } else { 0 }
}

/// Whether `capture` from `pos` checkmates, and whether it checks.
fn mates_and_checks(pos: &Chess, capture: Move) -> (bool, bool) {
    let mut after = pos.clone();
    after.play_unchecked(capture);
    (after.is_checkmate(), after.is_check())
}

/// The likeliest of several `captures` from `pos`: the one that mates, then the one that
/// wins most material at first sight, then the recapture on `last_arrival` (the square the
/// opponent's last move reached), then a check, then the most valuable victim, then the
/// first. Of the 5,656 captures in the two fixture files (master and online games) made by
/// a piece that had several, this picks the one played 86 times in 100.
pub(super) fn likeliest(
    pos: &Chess,
    captures: &[Move],
    last_arrival: Option<Square>,
) -> Option<Move> {
    let key = |m: &Move| {
        let (mates, checks) = mates_and_checks(pos, *m);
        (
            mates,
            first_sight_gain(pos, *m),
            Some(m.to()) == last_arrival,
            checks,
            m.capture().map_or(0, worth),
        )
    };
    // `max_by_key` keeps the last of equals: reversed, the first.
    captures.iter().rev().max_by_key(|m| key(m)).copied()
}

/// Several sequences of moves from `start` that leave an occupancy-only board as it is and
/// differ first in which capture one piece made (its landing unseen, as such a board mostly
/// leaves it): the sequence with the likeliest of those captures ([`likeliest`];
/// `last_arrival` is where the move before `start` landed), when it is the only one, with
/// the others. Sequences that differ first in anything else are not chosen between.
pub(super) fn likeliest_capture_sequence(
    start: &Chess,
    last_arrival: Option<Square>,
    seqs: &[Vec<Move>],
) -> Option<(Vec<Move>, Vec<Vec<Move>>)> {
    let first = seqs.first()?;
    if seqs.iter().any(|seq| seq.len() != first.len()) {
        return None;
    }
    let j = common_prefix(seqs).len();
    if j == first.len() {
        return None;
    }
    let mut captures: Vec<Move> = Vec::new();
    for seq in seqs {
        if !captures.contains(&seq[j]) {
            captures.push(seq[j]);
        }
    }
    if !captures
        .iter()
        .all(|m| m.is_capture() && m.from() == first[j].from())
    {
        return None;
    }
    let mut pos = start.clone();
    for &m in &first[..j] {
        pos.play_unchecked(m);
    }
    let arrived = j.checked_sub(1).map(|i| first[i].to()).or(last_arrival);
    let chosen = likeliest(&pos, &captures, arrived)?;
    let seq = only(seqs.iter().filter(|seq| seq[j] == chosen))?;
    let others = seqs.iter().filter(|other| *other != seq).cloned().collect();
    Some((seq.clone(), others))
}

/// Two moves from `pos`, the first on a square in `d`, after which the board is as sensed.
fn fast_play_pairs<'a>(
    s: &'a Sensed<'_>,
    pos: &'a Chess,
    d: Bitboard,
) -> impl Iterator<Item = [Move; 2]> + 'a {
    pos.legal_moves()
        .into_iter()
        .filter(move |&m| touches(m, d))
        .flat_map(move |m| {
            let mut after = pos.clone();
            after.play_unchecked(m);
            s.single_moves(&after).into_iter().map(move |(r, _)| [m, r])
        })
}

/// The moves from `pos` the board shows made since, when one of them uses a square in
/// `victims` (where the undecided captures differ) or, given the `recorded` position (once
/// the hand is done), they could not be played from it: none when it shows `pos`; else one
/// move (with `pressed`, also a capture whose landing it cannot show); else two moves of
/// fast play.
fn shown_since(
    s: &Sensed<'_>,
    pos: &Chess,
    victims: Bitboard,
    pressed: bool,
    recorded: Option<(&Chess, CastlingMode)>,
) -> Option<Vec<Move>> {
    let on_victims =
        |m: Move| m.from().is_some_and(|sq| victims.contains(sq)) || victims.contains(m.to());
    let playable_from = |recorded: &Chess, mode: CastlingMode, moves: &[Move]| {
        let mut pos = recorded.clone();
        moves.iter().all(|&m| {
            UciMove::from_move(m, mode)
                .to_move(&pos)
                .map(|m| pos.play_unchecked(m))
                .is_ok()
        })
    };
    let d = s.diff(pos.board());
    if d.is_empty() {
        return Some(Vec::new());
    }
    let moves = match choose(&s.single_moves(pos))
        .map(|(m, _)| m)
        .or_else(|| pressed.then(|| s.capture_landed_unseen(pos)).flatten())
    {
        Some(m) => vec![m],
        None => only(fast_play_pairs(s, pos, d))?.to_vec(),
    };
    // A piece on its way through a square: in the game as recorded it may be going on.
    let sliding_on = |recorded: &Chess, m: Move| {
        recorded.legal_moves().iter().any(|r| {
            r.from().is_some_and(|from| {
                Some(from) == m.from() && attacks::between(from, r.to()).contains(m.to())
            })
        })
    };
    let unplayable_as_recorded = recorded.is_some_and(|(recorded, mode)| {
        !playable_from(recorded, mode, &moves)
            && !moves.first().is_some_and(|&m| sliding_on(recorded, m))
    });
    (moves.iter().any(|&m| on_victims(m)) || unplayable_as_recorded).then_some(moves)
}

impl Machine {
    /// At a press, with the presser's piece off its square and not seen put down anywhere,
    /// when two or more `captures` by it leave the board as it is
    /// ([`Sensed::captures_landed_unseen`]): the likeliest, and the others. `None` when the
    /// board shows one such capture or none.
    pub(super) fn undecided_captures(&self, captures: Vec<Move>) -> Option<(Move, Vec<Move>)> {
        // A pawn taken on the square of its single step may have made a double step taken en
        // passant: when the board showed it go on, that reading is left to the board's.
        if captures.len() < 2
            || captures
                .iter()
                .any(|&m| self.double_step_shown(m).is_some())
        {
            return None;
        }
        let last_arrival = self.record.game().moves().last().map(|p| p.mv.to());
        let chosen = likeliest(self.record.game().position(), &captures, last_arrival)?;
        Some((
            chosen,
            captures.into_iter().filter(|&m| m != chosen).collect(),
        ))
    }

    /// Tells the arbiter that `chosen`, the capture just recorded at a press, is one of
    /// several with `others`, and keeps the choice open to the board's later reports.
    pub(super) fn keep_capture_choice(
        &mut self,
        chosen: Move,
        others: Vec<Move>,
        t: Millis,
        out: &mut Vec<Event>,
    ) {
        self.raise_doubt(
            Doubt::CaptureUnseen {
                capture: chosen,
                others,
            },
            t,
            out,
        );
        let ply = self.record.game().plies() - 1;
        self.doubts.capture_chosen(ply, chosen.from());
    }

    /// A game held on a board nothing else explains, for longer than a slide's longest
    /// pause: an open choice whose other capture, with the moves since made again, is
    /// followed by exactly one sequence of up to [`HELD_CHOICE_PLIES`] moves that leaves the
    /// board as it is. The record stood on the wrong capture while the players went on in
    /// fast play, further than a correction at a move or two reads.
    pub(super) fn capture_choice_reread_when_held(&self, s: &Sensed<'_>) -> Option<Reading> {
        if !self.held_past_a_pause() {
            return None;
        }
        let open: Vec<(&CaptureChoice, Move)> = self.open_capture_choices().collect();
        let open_plies: Vec<usize> = open.iter().map(|(c, _)| c.ply).collect();
        let reports = self.reports(self.record.game().plies());
        open.iter().rev().find_map(|&(choice, recorded)| {
            let pos = &self.record.game().positions()[choice.ply];
            let mut found: Vec<Vec<Move>> = Vec::new();
            for capture in unseen_captures_from(pos, choice.from) {
                if capture == recorded || choice.refuted.contains(&capture) {
                    continue;
                }
                for r in self.replays(choice.ply, capture, &open_plies) {
                    if let Explanation::Unique(more) =
                        s.sequences_within(&r.pos, 1..=HELD_CHOICE_PLIES, &reports)
                    {
                        found.push(r.moves.into_iter().chain(more).collect());
                    }
                }
            }
            let [moves] = found.as_slice() else {
                return None;
            };
            Some(self.capture_reread(choice.ply, moves.clone(), Vec::new()))
        })
    }

    /// The game read again from the choice at `ply` with `moves`, told to the arbiter with
    /// the other captures that fit (`also`).
    fn capture_reread(&self, ply: usize, moves: Vec<Move>, also: Vec<Move>) -> Reading {
        Reading::Adopt {
            from: ply,
            moves: moves.clone(),
            doubt: Some(Doubt::CaptureReread {
                from: ply,
                withdrawn: self.moves_since(ply),
                moves,
                also,
            }),
        }
    }

    /// After moves were adopted from ply `from`: each capture among them whose landing the
    /// board never showed ([`Machine::capture_not_shown`]) is kept open as a choice made at
    /// a press is, however it was read: even the one capture its piece had may be another
    /// once an earlier choice is corrected.
    pub(super) fn keep_unseen_capture_choices(&mut self, from: usize) {
        let n = self.record.game().plies();
        self.doubts.old_choices_closed(n);
        for k in from..n {
            let m = self.record.game().moves()[k].mv;
            let (Some(capturer), true) = (m.from(), m.is_capture()) else {
                continue;
            };
            if self.doubts.capture_choices().iter().any(|c| c.ply == k)
                || (self.capture_not_shown(&[m], &self.reports(k)).is_none()
                    && !self.capture_of_a_piece_just_arrived(k))
            {
                continue;
            }
            self.doubts.capture_kept_open(k, capturer);
        }
    }

    /// True when the capture recorded at ply `k` took the piece the move before it had just
    /// put on that square, and a board that samples its squares one by one reported the
    /// square once since that move began: it folds the arrival and the capture that
    /// replaced it into one change, so it never showed the capture's own landing. A board
    /// sending whole frames ten times a second is left out: so quick a capture is rare
    /// there, and keeping its one report open let later corrections replace right readings
    /// (Sentio, lichess 232 of seed 5).
    fn capture_of_a_piece_just_arrived(&self, k: usize) -> bool {
        let Some(before) = k.checked_sub(1).filter(|_| !self.config.whole_frames) else {
            return false;
        };
        let moves = self.record.game().moves();
        let to = moves[k].mv.to();
        if moves[before].mv.to() != to {
            return false;
        }
        let since = self.reports(before).since;
        self.square_reports.last(to).is_some_and(|t| t >= since)
            && self.square_reports.before(to).is_none_or(|t| t < since)
    }

    /// Before `moves` are adopted from position `from`: a choice whose capture they replace
    /// by another capture of the same piece counts the replaced one refuted; one whose
    /// capture they replace by anything else is closed.
    pub(super) fn reread_capture_choices(&mut self, from: usize, moves: &[Move]) {
        self.doubts
            .choices_read_again(from, moves, self.record.game().moves());
    }

    /// The open choices, each with the capture recorded for it now.
    fn open_capture_choices(&self) -> impl Iterator<Item = (&CaptureChoice, Move)> {
        let n = self.record.game().plies();
        self.doubts.capture_choices().iter().filter_map(move |c| {
            let recorded = self.record.game().moves().get(c.ply)?.mv;
            (c.ply + CHOICE_OPEN_PLIES >= n
                && recorded.is_capture()
                && recorded.from() == Some(c.from))
            .then_some((c, recorded))
        })
    }

    /// The games that follow `capture` played in place of the one recorded at `ply`: the
    /// moves recorded since, each as recorded, except that the capture of a later open
    /// choice may be any capture its piece can make with its landing unseen. Empty when
    /// more than [`MOST_REPLAYS`] games follow.
    fn replays(&self, ply: usize, capture: Move, open_plies: &[usize]) -> Vec<Replay> {
        let mode = self.record.game().castling_mode();
        let mut pos = self.record.game().positions()[ply].clone();
        pos.play_unchecked(capture);
        let mut replays = vec![Replay {
            pos,
            moves: vec![capture],
            changed: Bitboard::EMPTY,
            unlikely: 0,
        }];
        for (k, played) in self.record.game().moves().iter().enumerate().skip(ply + 1) {
            let m = played.mv;
            let mut next = Vec::new();
            for r in replays {
                let options = match m.from() {
                    Some(from) if open_plies.contains(&k) => unseen_captures_from(&r.pos, from),
                    _ => UciMove::from_move(m, mode)
                        .to_move(&r.pos)
                        .ok()
                        .into_iter()
                        .collect(),
                };
                // Weighed only where there is a choice: most plies are made again as recorded.
                let likeliest = (options.len() > 1)
                    .then(|| likeliest(&r.pos, &options, r.moves.last().map(|m| m.to())))
                    .flatten();
                for o in options {
                    let mut pos = r.pos.clone();
                    pos.play_unchecked(o);
                    let mut moves = r.moves.clone();
                    moves.push(o);
                    let changed = if o.to() == m.to() {
                        r.changed
                    } else {
                        r.changed | o.to() | m.to()
                    };
                    next.push(Replay {
                        pos,
                        moves,
                        changed,
                        unlikely: r.unlikely + usize::from(likeliest.is_some_and(|l| l != o)),
                    });
                }
            }
            if next.len() > MOST_REPLAYS {
                return Vec::new();
            }
            replays = next;
        }
        replays
    }

    /// The game read again with another capture at one of the open choices, when the board
    /// shows what the record, read on the same terms, cannot explain and that capture,
    /// followed by the moves recorded since (a later choice's capture made again as the
    /// piece could in that game), does: the board as it is, or one more move on a square
    /// where the captures differ or that the record leaves illegal, or two in fast play
    /// ([`shown_since`]). The latest choice that explains the board is corrected, as it
    /// changes the fewest moves; when several of its captures do, the likeliest is read,
    /// unless fast play was needed.
    pub(super) fn capture_choice_corrected(
        &self,
        s: &Sensed<'_>,
        pressed: bool,
    ) -> Option<Reading> {
        let open: Vec<(&CaptureChoice, Move)> = self.open_capture_choices().collect();
        let open_plies: Vec<usize> = open.iter().map(|(c, _)| c.ply).collect();
        let recorded_now = self.record.game().position();
        let mode = self.record.game().castling_mode();
        // A move the record leaves illegal says as much as one on the captures' squares,
        // once the hand is done with it.
        let illegal_in_record = (pressed || !self.lifted_last).then_some((recorded_now, mode));
        let reports = self.reports(self.record.game().plies());
        let (corrected, landing_unseen) = open.iter().rev().find_map(|&(choice, recorded)| {
            let pos = &self.record.game().positions()[choice.ply];
            let captures = unseen_captures_from(pos, choice.from);
            let victims = captures.iter().fold(Bitboard::EMPTY, |b, m| b | m.to());
            let mut found: Vec<(Move, Vec<Move>, usize)> = Vec::new();
            let mut fast_play = false;
            let mut landing_unseen = false;
            for &capture in &captures {
                if capture == recorded || choice.refuted.contains(&capture) {
                    continue;
                }
                for r in self.replays(choice.ply, capture, &open_plies) {
                    if let Some(more) =
                        shown_since(s, &r.pos, victims | r.changed, pressed, illegal_in_record)
                    {
                        fast_play |= more.len() > 1;
                        landing_unseen |= self.capture_not_shown(&more, &reports).is_some();
                        let moves = r.moves.into_iter().chain(more).collect();
                        found.push((capture, moves, r.unlikely));
                    }
                }
            }
            // Two moves read from the board alone are weaker evidence than the record's own
            // moves: then only a single explanation is read.
            if fast_play && found.len() > 1 {
                return None;
            }
            let explaining: Vec<Move> = found.iter().map(|&(c, ..)| c).collect();
            let last_arrival = choice
                .ply
                .checked_sub(1)
                .map(|k| self.record.game().moves()[k].mv.to());
            let chosen = likeliest(pos, &explaining, last_arrival)?;
            // Of the ways that capture explains the board, the one whose later captures are
            // the likeliest, when only one is.
            let fewest = found
                .iter()
                .filter(|&&(c, ..)| c == chosen)
                .map(|&(.., unlikely)| unlikely)
                .min()?;
            let mut readings = found
                .into_iter()
                .filter(|&(c, _, unlikely)| c == chosen && unlikely == fewest);
            let moves = match (readings.next(), readings.next()) {
                (Some((_, moves, _)), None) => moves,
                _ => return None,
            };
            let mut also: Vec<Move> = explaining.into_iter().filter(|&c| c != chosen).collect();
            also.dedup();
            Some((self.capture_reread(choice.ply, moves, also), landing_unseen))
        })?;
        // A correction is for a board the record, read on the same terms, cannot explain:
        // checked last, once there is a correction to make, as most readings have none.
        // At a press, any capture that leaves the board as it is explains it, one or several.
        // Two moves of fast play do whether or not other pairs fit too, unless they need a
        // capture the board never showed land and the correction does not.
        let record_explains = (pressed && !s.captures_landed_unseen(recorded_now).is_empty())
            || shown_since(s, recorded_now, Bitboard::FULL, false, None).is_some()
            || fast_play_pairs(s, recorded_now, s.diff(recorded_now.board()))
                .any(|pair| landing_unseen || self.capture_not_shown(&pair, &reports).is_none());
        (!record_explains).then_some(corrected)
    }
}

#[cfg(test)]
mod tests;
