//! The game as a board's pipeline records it: the tags that name it, its moves, notes and
//! result, taken from the machine's events, and the games finished before it on the board.

use super::BoardPipeline;
use crate::act::{Event, Severity};
use crate::event::{EventConfig, Player};
use crate::record::{GameRecord, RecordedMove};
use crate::rules::Game;

/// The comment of a game the recorder never saw begin (no start position, no move read)
/// whose result the arbiter entered, a forfeit aside: none of its moves is in the file, and
/// how long it lasted is on the scoresheets, not here.
pub const NOT_SEEN_BEGUN: &str = "the recorder did not see this game begin: none of its \
                                  moves is recorded; they are on the scoresheets";

/// The tags that identify a board's game for its lifetime (lichess matches games on them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameTags {
    tags: Vec<(String, String)>,
}

impl GameTags {
    /// The tags of board `board` of the configured round.
    pub fn new(config: &EventConfig, board: u32) -> GameTags {
        let cfg = config.board(board);
        let unknown = Player::named("?");
        let white = cfg.map_or(&unknown, |b| &b.white);
        let black = cfg.map_or(&unknown, |b| &b.black);
        let mut tags = vec![
            ("Event".to_string(), config.event.clone()),
            ("Site".to_string(), config.site.clone()),
            ("Date".to_string(), config.date.clone()),
            ("Round".to_string(), format!("{}.{board}", config.round)),
            ("White".to_string(), white.name.clone()),
            ("Black".to_string(), black.name.clone()),
            ("Board".to_string(), board.to_string()),
        ];
        if let Some(tc) = &config.time_control {
            tags.push(("TimeControl".to_string(), tc.clone()));
        }
        for (colour, p) in [("White", white), ("Black", black)] {
            if let Some(title) = &p.title {
                tags.push((format!("{colour}Title"), title.clone()));
            }
            if let Some(elo) = p.rating {
                tags.push((format!("{colour}Elo"), elo.to_string()));
            }
            if let Some(id) = p.fide_id {
                tags.push((format!("{colour}FideId"), id.to_string()));
            }
            if let Some(fed) = &p.federation {
                tags.push((format!("{colour}Fed"), fed.clone()));
            }
        }
        GameTags { tags }
    }

    /// The tags, in the order they are written.
    pub fn tags(&self) -> &[(String, String)] {
        &self.tags
    }
}

/// A result and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Ending {
    pub(super) result: String,
    pub(super) reason: String,
    pub(super) by_arbiter: bool,
}

impl BoardPipeline {
    /// Updates the record from one event.
    pub(super) fn take(&mut self, event: &Event) {
        self.clock.apply(event);
        if let (Event::Alert(alert), Some(checkpoint)) = (event, &mut self.board_log.checkpoint) {
            checkpoint.alerts.push(alert.clone());
        }
        if let Event::Alert(alert) = event {
            self.take_withdrawals(alert);
        }
        match event {
            Event::GameStart { fen, chess960, .. } => {
                self.close_game();
                self.started = true;
                self.game = Game::from_fen(fen, *chess960).unwrap_or_else(|_| Game::standard());
                self.chess960 = *chess960;
                self.start_fen = (fen != crate::record::STANDARD_START_FEN).then(|| fen.clone());
            }
            Event::Move {
                ply,
                uci,
                san,
                t_ms,
                ..
            } => {
                RecordedMove::place(&mut self.moves, *ply, san, uci, *t_ms);
                let kept = ply.saturating_sub(1) as usize;
                self.game.truncate(kept.min(self.game.plies()));
                let _ = self.game.play_uci(uci);
            }
            Event::Revision { ply, .. } => {
                let kept = ply.saturating_sub(1) as usize;
                self.moves.truncate(kept);
                self.game.truncate(kept.min(self.game.plies()));
            }
            Event::BoardState { held, .. } => self.held = *held,
            Event::Alert(alert) if alert.gap.is_some() => self.take_gap(alert),
            Event::Alert(alert) if alert.severity != Severity::Info && !alert.before_game => {
                if alert.article.starts_with("7.5")
                    && let Some(side) = alert.side
                {
                    self.penalties.push((alert.ply, side.into()));
                }
                self.notes
                    .push((alert.ply, format!("{}: {}", alert.article, alert.message)));
            }
            Event::Result { result, reason, .. }
                if self.ending.as_ref().is_none_or(|e| !e.by_arbiter) =>
            {
                self.ending = Some(Ending {
                    result: result.clone(),
                    reason: reason.clone(),
                    by_arbiter: false,
                });
            }
            _ => {}
        }
    }

    /// Keeps the game so far among the earlier games, if anything was played or decided,
    /// and clears the record for the next game on this board.
    pub(super) fn close_game(&mut self) {
        if !self.moves.is_empty() || self.ending.is_some() {
            let finished = self.record();
            self.earlier_games.push(finished);
        }
        self.moves.clear();
        self.notes.clear();
        self.ending = None;
        self.accepted_penalties = [0, 0];
        self.penalties.clear();
        self.decided_penalties.clear();
        self.offset = 0;
        self.order_spans.clear();
        self.before_gap = None;
        self.noted_alerts.clear();
    }

    /// The game as PGN record: tags, moves with `[%clk]`/`[%emt]`, notes, result.
    pub fn record(&self) -> GameRecord {
        let mut tags = self.tags.tags.clone();
        let result = self
            .ending
            .as_ref()
            .map_or("*".to_string(), |e| e.result.clone());
        if let Some(e) = &self.ending {
            tags.push(("Termination".to_string(), termination(e).to_string()));
        }
        let mut moves = self.moves.clone();
        for (i, m) in moves.iter_mut().enumerate() {
            if let Some(time) = self.clock.move_time(i as u32 + 1) {
                m.clock_ms = time.corrected_ms.or(time.clock_ms);
                m.elapsed_ms = time.elapsed_ms;
            }
        }
        let mut initial_comments = Vec::new();
        if !self.started
            && self
                .ending
                .as_ref()
                .is_some_and(|e| !e.reason.to_ascii_lowercase().contains("forfeit"))
        {
            initial_comments.push(NOT_SEEN_BEGUN.to_string());
        }
        if let Some(before) = &self.before_gap {
            initial_comments.push(before.comment());
        }
        for (ply, text) in &self.notes {
            let at = (*ply as usize).min(moves.len());
            match at.checked_sub(1) {
                Some(i) => moves[i].comments.push(text.clone()),
                None => initial_comments.push(text.clone()),
            }
        }
        if let Some(e) = &self.ending {
            let text = format!("{} {}", e.result, e.reason);
            match moves.last_mut() {
                Some(m) => m.comments.push(text),
                None => initial_comments.push(text),
            }
        }
        GameRecord {
            tags,
            start_fen: self.start_fen.clone(),
            chess960: self.chess960,
            initial_comments,
            moves,
            result,
        }
    }

    /// The game as PGN text.
    pub fn pgn(&self) -> String {
        crate::record::pgn::write_game(&self.record())
    }

    /// Games finished earlier on this board (before a new game started on it).
    pub fn earlier_games(&self) -> &[GameRecord] {
        &self.earlier_games
    }

    /// Plies recorded.
    pub fn plies(&self) -> usize {
        self.moves.len()
    }

    /// The PGN result token.
    pub fn result(&self) -> &str {
        self.ending.as_ref().map_or("*", |e| e.result.as_str())
    }

    /// True while the game runs: started, no result, not closed.
    pub fn live(&self) -> bool {
        self.started && self.ending.is_none() && self.after.is_none()
    }
}

/// The PGN Termination value for an ending.
fn termination(e: &Ending) -> &'static str {
    let reason = e.reason.to_ascii_lowercase();
    if reason.contains("on time") || reason.contains("flag") {
        "time forfeit"
    } else if reason.contains("forfeit") || reason.contains("illegal") {
        "rules infraction"
    } else if e.by_arbiter && !reason.contains("claim") {
        "adjudication"
    } else {
        "normal"
    }
}
