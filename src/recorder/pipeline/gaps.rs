//! The record across gaps in the link that the board's move log could not fill: a span of
//! moves whose order was not observed (marked in the PGN, settled by the arbiter in one
//! action), and a game taken up from the board's position when no legal sequence explained
//! it (the file goes on as a game from that position, the earlier moves kept in a comment,
//! until an arbiter correction restores the whole game).

use shakmaty::{Color, Position};

use super::BoardPipeline;
use crate::act::{Alert, Event, GapAccount, Severity};
use crate::board::Millis;
use crate::clock::MoveTime;
use crate::record::RecordedMove;
use crate::rules::Game;

/// The comment that marks a span of moves whose order was not observed.
pub const ORDER_NOT_OBSERVED: &str = "order not observed";

/// How the comment of a game file that goes on from the board's position after a gap
/// begins: the moves before the gap follow, the ones made during it are not in the file.
pub const MOVES_BEFORE_GAP: &str = "moves before the gap";

/// Moves made during a gap, recorded in the likeliest order, until the arbiter settles it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct OrderSpan {
    /// The span's first ply (1-based).
    pub(super) first_ply: u32,
    /// The order recorded, in UCI.
    pub(super) recorded: Vec<String>,
    /// The other orders that reach the same position, in UCI.
    pub(super) others: Vec<Vec<String>>,
}

impl OrderSpan {
    /// The ply the span's comment follows: its last.
    fn last_ply(&self) -> u32 {
        self.first_ply + self.recorded.len().saturating_sub(1) as u32
    }
}

/// The game as it stood before a gap no legal sequence explained.
#[derive(Debug, Clone)]
pub(super) struct BeforeGap {
    /// Its moves, and what the record had on them.
    pub(super) moves: Vec<RecordedMove>,
    /// Its notes by ply.
    pub(super) notes: Vec<(u32, String)>,
    /// Its start, when not the standard one.
    pub(super) start_fen: Option<String>,
    /// The game itself.
    pub(super) game: Game,
    /// The moves between later gaps, each in SAN from the position it was taken up from.
    pub(super) later: Vec<String>,
    /// The clock's times of its moves.
    pub(super) clock_times: Vec<MoveTime>,
}

impl BeforeGap {
    /// The comment that keeps the moves before the gap in a game file that goes on from
    /// the board's position.
    pub(super) fn comment(&self) -> String {
        let start = self
            .start_fen
            .as_deref()
            .map_or(String::new(), |fen| format!(" from {fen}"));
        let mut text = format!("{MOVES_BEFORE_GAP}{start}: {}", self.line());
        for line in &self.later {
            text.push_str(&format!("; then, between later gaps: {line}"));
        }
        text.push_str(
            "; the moves made while the link was down were not observed and no legal \
             sequence explains the board, so the game goes on from the board's position",
        );
        text
    }

    /// The moves in SAN with move numbers (`none` when there are none).
    fn line(&self) -> String {
        let mut words = Vec::new();
        for (i, m) in self.moves.iter().enumerate() {
            let Some(pos) = self.game.positions().get(i) else {
                break;
            };
            match pos.turn() {
                Color::White => words.push(format!("{}.{}", pos.fullmoves(), m.san)),
                Color::Black if i == 0 => words.push(format!("{}...{}", pos.fullmoves(), m.san)),
                Color::Black => words.push(m.san.clone()),
            }
        }
        if words.is_empty() {
            "none".to_string()
        } else {
            words.join(" ")
        }
    }
}

/// The PGN note of an order alert: its first clause, `order not observed: also possible …`.
fn order_note(alert: &Alert) -> String {
    alert
        .message
        .split_once("; ")
        .map_or(alert.message.as_str(), |(mark, _)| mark)
        .to_string()
}

impl BoardPipeline {
    /// Takes an alert about a gap into the record: the span whose order was not observed is
    /// marked, or the record goes on from the board's position.
    pub(super) fn take_gap(&mut self, alert: &Alert) {
        match &alert.gap {
            Some(GapAccount::Orders { recorded, others }) => {
                let span = OrderSpan {
                    first_ply: alert.ply,
                    recorded: recorded.clone(),
                    others: others.clone(),
                };
                // The same gap read again: its earlier reading and note go.
                let replaced: Vec<OrderSpan> = self
                    .order_spans
                    .iter()
                    .filter(|s| s.first_ply == span.first_ply)
                    .cloned()
                    .collect();
                for old in replaced {
                    self.drop_order_span(&old);
                }
                self.notes.push((span.last_ply(), order_note(alert)));
                self.order_spans.push(span);
            }
            Some(GapAccount::Reanchored { fen }) => self.take_up(fen, alert),
            None => {}
        }
    }

    /// Takes the withdrawals `alert` makes: the notes, order spans and penalty proposals of
    /// the alerts it withdraws go from the record. Remembers `alert` if it adds any.
    pub(super) fn take_withdrawals(&mut self, alert: &Alert) {
        for r in &alert.withdraws {
            let Some(i) = self.noted_alerts.iter().rposition(|a| a.is(r)) else {
                continue;
            };
            let old = self.noted_alerts.remove(i);
            match &old.gap {
                Some(GapAccount::Orders { .. }) => {
                    let span = self
                        .order_spans
                        .iter()
                        .find(|s| s.first_ply == old.ply)
                        .cloned();
                    if let Some(span) = span {
                        self.drop_order_span(&span);
                    }
                }
                // A game taken up from the board is undone only by the arbiter's correction.
                Some(GapAccount::Reanchored { .. }) => {}
                None => {
                    let note = (old.ply, format!("{}: {}", old.article, old.message));
                    if let Some(j) = self.notes.iter().position(|n| *n == note) {
                        self.notes.remove(j);
                    }
                    if old.article.starts_with("7.5")
                        && let Some(side) = old.side
                        && let Some(j) = self
                            .penalties
                            .iter()
                            .position(|&(ply, by)| ply == old.ply && by == Color::from(side))
                    {
                        self.penalties.remove(j);
                    }
                }
            }
        }
        if alert.gap.is_some() || alert.severity != Severity::Info {
            self.noted_alerts.push(alert.clone());
        }
    }

    /// Removes the order span `span` and its note.
    fn drop_order_span(&mut self, span: &OrderSpan) {
        let last = span.last_ply();
        self.notes
            .retain(|(p, text)| !(*p == last && text.starts_with(ORDER_NOT_OBSERVED)));
        self.order_spans.retain(|s| s != span);
    }

    /// The game goes on from `fen`, the board's position: the moves so far are kept for the
    /// comment and for a correction that restores them.
    fn take_up(&mut self, fen: &str, alert: &Alert) {
        let Ok(game) = Game::from_fen(fen, self.chess960) else {
            tracing::warn!(
                "{}: the board's position {fen} after a gap is no game position; the arbiter \
                 should enter the moves made meanwhile with `touchmove arbiter`",
                self.board_name()
            );
            return;
        };
        // Plies are counted afresh: the clock's times of the moves so far are not theirs.
        let clock_times = self.clock.restart_plies();
        if self.before_gap.is_none() || !self.moves.is_empty() {
            let moves = std::mem::take(&mut self.moves);
            let notes = std::mem::take(&mut self.notes);
            let taken = BeforeGap {
                moves,
                notes,
                start_fen: self.start_fen.clone(),
                game: self.game.clone(),
                later: Vec::new(),
                clock_times,
            };
            match &mut self.before_gap {
                // A second gap: the moves between the two are kept in the comment too.
                Some(before) => before.later.push(taken.line()),
                None => self.before_gap = Some(taken),
            }
        }
        // The position is told in the critical alert's note, before the first move; a side
        // to move corrected at once (an Info alert) keeps it.
        if alert.severity != Severity::Info {
            self.notes.retain(|(ply, _)| *ply != 0);
            self.notes
                .push((0, format!("{}: {}", alert.article, alert.message)));
        }
        self.order_spans.clear();
        self.game = game;
        self.start_fen = Some(fen.to_string());
        self.offset = 0;
    }

    /// Before an arbiter correction from `from_ply` of a game taken up from the board: the
    /// whole game before the gap stands again, the correction goes on from it. Refused when
    /// `from_ply` lies past the moves before the gap.
    pub(super) fn restore_before_gap(&mut self, from_ply: u32) -> Result<(), String> {
        let Some(before) = &self.before_gap else {
            return Ok(());
        };
        let plies = before.moves.len() as u32;
        if from_ply == 0 || from_ply > plies + 1 {
            return Err(format!(
                "the game goes on from the board's position after a gap that followed ply \
                 {plies}: replace the moves from ply {} or earlier with every move made since \
                 (the moves before the gap are numbered as before)",
                plies + 1
            ));
        }
        let Some(before) = self.before_gap.take() else {
            return Ok(());
        };
        // The machine's own game (taken up from the board) goes on until the correction
        // replaces it.
        self.moves = before.moves;
        self.clock.restore_move_times(before.clock_times);
        self.notes = before.notes;
        self.start_fen = before.start_fen;
        self.game = before.game;
        self.order_spans.clear();
        Ok(())
    }

    /// The arbiter settles the order of the span that begins at `ply`: `pick` 0 confirms the
    /// order recorded, `pick` n takes the n-th other order the alert named (the moves after
    /// the span are kept).
    pub(super) fn settle_order(
        &mut self,
        t_ms: Millis,
        who: &str,
        ply: u32,
        pick: usize,
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        let Some(index) = self.order_spans.iter().position(|s| s.first_ply == ply) else {
            let open: Vec<String> = self
                .order_spans
                .iter()
                .map(|s| s.first_ply.to_string())
                .collect();
            return Err(if open.is_empty() {
                "no move order is open to settle on this board".to_string()
            } else {
                format!(
                    "no move order is open at ply {ply}; open at ply {}",
                    open.join(", ")
                )
            });
        };
        let span = self.order_spans[index].clone();
        let chosen = match pick {
            0 => span.recorded.clone(),
            n => span.others.get(n - 1).cloned().ok_or_else(|| {
                format!(
                    "the span at ply {ply} has {} other order(s); pick 0 to {}",
                    span.others.len(),
                    span.others.len()
                )
            })?,
        };
        let last = span.last_ply();
        let after: Vec<String> = self.game.moves()[(last as usize).min(self.game.plies())..]
            .iter()
            .map(|m| m.uci.clone())
            .collect();
        let mut moves = chosen.clone();
        moves.extend(after);
        if pick > 0 {
            self.corrected_game(ply, &moves)?;
        }
        self.notes
            .retain(|(p, text)| !(*p == last && text.starts_with(ORDER_NOT_OBSERVED)));
        self.order_spans.remove(index);
        let sans = |game: &Game, from: usize, n: usize| -> Vec<String> {
            game.moves()[from..(from + n).min(game.plies())]
                .iter()
                .map(|m| m.san.clone())
                .collect()
        };
        if pick == 0 {
            let text = format!(
                "Arbiter {who}: order of the moves from ply {ply} confirmed: {}",
                sans(&self.game, ply as usize - 1, chosen.len()).join(" ")
            );
            self.notes.push((last, text.clone()));
            return Ok(text);
        }
        self.correct(t_ms, who, ply, &moves, out)
    }
}
