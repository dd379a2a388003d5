//! The arbiter's actions on a board's game: results, penalties, time adjustments, claims,
//! corrections of the moves, notes and new games. They act on the same state as the byte
//! pipeline, and replay in journal order with it.

use shakmaty::{Color, Position};

use super::{BoardPipeline, Ending};
use crate::act::{Event, Machine, MachineConfig};
use crate::board::{Millis, Observation, ObservationKind, Snapshot};
use crate::clock::ClockState;
use crate::record::arbiter::{ArbiterAction, ArbiterRequest, DrawClaim};
use crate::rules::Game;

impl BoardPipeline {
    /// Applies an arbiter action at `t_ms`. Time passes up to `t_ms` first, as a tick would:
    /// what fell due before the action (a result signal that stood, a press judged) comes
    /// before it, live and in a replay of the journal alike, however the recorder's ticks
    /// fell (a caller that tells those events apart ticks first itself). Events it causes
    /// (results, revised moves) are appended to `out`, after those of the time passed.
    /// Returns a sentence for the arbiter, or why it was refused (nothing but the time
    /// passed changed then).
    pub fn on_arbiter(
        &mut self,
        t_ms: Millis,
        request: &ArbiterRequest,
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        self.tick(t_ms, out);
        // A re-reading from the board's log starts from before this action: it is no longer
        // possible (see `log_rereading`).
        self.board_log.forget_checkpoint();
        let who = &request.who;
        let ply_now = self.moves.len() as u32;
        match &request.action {
            ArbiterAction::SetResult { result, reason } => {
                self.set_result(t_ms, request, result, reason, out)
            }
            ArbiterAction::DecidePenalty { ply, accept } => {
                self.decide_penalty(t_ms, request, *ply, *accept, out)
            }
            ArbiterAction::AdjustTime { side, delta_ms } => {
                let side = Color::from(*side);
                self.clock.adjust(side, *delta_ms);
                let sign = if *delta_ms < 0 { "-" } else { "+" };
                let text = format!(
                    "{sign}{} for {}",
                    duration_text(delta_ms.unsigned_abs()),
                    side_name(side)
                );
                self.note(ply_now, format!("Arbiter {who}: time adjusted {text}"));
                Ok(text)
            }
            ArbiterAction::ReplaceMoves { from_ply, moves } => {
                self.correct(t_ms, who, *from_ply, moves, out)
            }
            ArbiterAction::SettleOrder { ply, pick } => {
                self.settle_order(t_ms, who, *ply, *pick, out)
            }
            ArbiterAction::TakeBack { to_ply } => {
                self.correct(t_ms, who, to_ply.saturating_add(1), &[], out)
            }
            ArbiterAction::CheckClaim {
                claim,
                intended_move,
            } => self.check_claim(t_ms, who, *claim, intended_move.as_deref(), out),
            ArbiterAction::NewGame if self.after.is_some() => {
                Ok(self.new_game_after(who, request.board, out))
            }
            ArbiterAction::NewGame => {
                self.close_game();
                self.machine = Machine::new(self.machine_config());
                self.game = Game::standard();
                self.resuming = false;
                self.clock = ClockState::new(self.control.clone());
                self.started = false;
                self.start_fen = None;
                self.chess960 = false;
                Ok(format!(
                    "board {}: new game; set up the start position",
                    request.board
                ))
            }
            ArbiterAction::Annotate { ply, text } => {
                if *ply > ply_now {
                    return Err(format!(
                        "ply {ply} has not been played (the game has {ply_now})"
                    ));
                }
                self.note(*ply, format!("{who}: {text}"));
                Ok(format!("note added after ply {ply}"))
            }
        }
    }

    /// The arbiter sets the result (`*` takes a result back).
    fn set_result(
        &mut self,
        t_ms: Millis,
        request: &ArbiterRequest,
        result: &str,
        reason: &str,
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        if !["1-0", "0-1", "1/2-1/2", "*"].contains(&result) {
            return Err(format!(
                "result {result:?} is not one of 1-0, 0-1, 1/2-1/2, *"
            ));
        }
        let who = &request.who;
        self.note(
            self.moves.len() as u32,
            format!("Arbiter {who}: result {result} ({reason})"),
        );
        if result == "*" {
            self.ending = None;
        } else {
            self.end_by_arbiter(t_ms, result, reason.to_string(), out);
        }
        Ok(format!("board {}: result {result}", request.board))
    }

    /// The arbiter accepts or rejects the penalty an Article 7.5 alert proposed at `ply`
    /// (7.5.5): time to the opponent the first time, the game lost the second.
    fn decide_penalty(
        &mut self,
        t_ms: Millis,
        request: &ArbiterRequest,
        ply: u32,
        accept: bool,
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        let who = &request.who;
        let side = self.penalty_side(ply).ok_or_else(|| {
            format!(
                "no penalty was proposed at ply {ply} on board {}",
                request.board
            )
        })?;
        let (offender, opponent) = (side_name(side), side_name(!side));
        if let Some(&(_, applied)) = self.decided_penalties.iter().find(|(p, _)| *p == ply) {
            return Err(format!(
                "the irregularity of {offender} at ply {ply} on board {} was already decided \
                 ({}): one irregularity gets one decision",
                request.board,
                if applied {
                    "penalty applied"
                } else {
                    "no penalty"
                }
            ));
        }
        self.decided_penalties.push((ply, accept));
        if !accept {
            self.note(
                ply,
                format!("Arbiter {who}: penalty for {offender} rejected"),
            );
            return Ok(format!("penalty for {offender} at ply {ply} rejected"));
        }
        let index = usize::from(side == Color::Black);
        self.accepted_penalties[index] += 1;
        if self.accepted_penalties[index] >= 2 {
            let result = if side == Color::White { "0-1" } else { "1-0" };
            let reason = format!("{offender} completed a second illegal move (7.5.5)");
            self.note(ply, format!("Arbiter {who}: {reason}: game lost"));
            self.end_by_arbiter(t_ms, result, reason, out);
            Ok(format!(
                "{offender} loses: second illegal move, result {result}"
            ))
        } else {
            let bonus = self.penalty_bonus_ms();
            self.clock.adjust(!side, bonus as i64);
            self.note(
                ply,
                format!(
                    "Arbiter {who}: illegal move by {offender} (7.5.5): {} added to {opponent}",
                    duration_text(bonus),
                ),
            );
            Ok(format!(
                "{} added to {opponent}'s clock",
                duration_text(bonus)
            ))
        }
    }

    /// The arbiter checks a draw claim by the side to move (9.2, 9.3), with the move it
    /// intends to make if any; a correct claim ends the game in a draw.
    fn check_claim(
        &mut self,
        t_ms: Millis,
        who: &str,
        claim: DrawClaim,
        intended_move: Option<&str>,
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        let game = &self.game;
        let intended = match intended_move {
            Some(text) => Some(parse_move(game, text)?),
            None => None,
        };
        let verdict = match claim {
            DrawClaim::Threefold => game.claim_threefold(intended),
            DrawClaim::FiftyMoves => game.claim_fifty(intended),
        };
        let name = match claim {
            DrawClaim::Threefold => "threefold repetition (9.2)",
            DrawClaim::FiftyMoves => "fifty-move rule (9.3)",
        };
        let mover = side_name(game.position().turn());
        let verdict_word = if verdict.valid {
            "correct"
        } else {
            "incorrect"
        };
        self.note(
            self.moves.len() as u32,
            format!(
                "Arbiter {who}: {mover}'s claim of {name} is {verdict_word}: {}",
                verdict.explanation
            ),
        );
        if verdict.valid {
            let reason = format!("draw claimed by {mover}: {name}");
            self.end_by_arbiter(t_ms, "1/2-1/2", reason, out);
        }
        Ok(format!("claim {verdict_word}: {}", verdict.explanation))
    }

    /// Ends the game with the arbiter's `result`: it stands over any the board signals.
    /// A board left showing moves the record lacks, or not read since its link was lost, is
    /// told first (8.5.3).
    fn end_by_arbiter(&mut self, t_ms: Millis, result: &str, reason: String, out: &mut Vec<Event>) {
        let unread = self.resumption.link_down();
        self.run_machine(out, |machine, events| {
            machine.ended_by_arbiter(t_ms, unread, events)
        });
        self.ending = Some(Ending {
            result: result.to_string(),
            reason: reason.clone(),
            by_arbiter: true,
        });
        out.push(Event::Result {
            result: result.to_string(),
            reason,
            t_ms,
        });
    }

    /// Adds `text` as a comment after `ply` (0: before the first move).
    fn note(&mut self, ply: u32, text: String) {
        self.notes.push((ply, text));
    }

    /// The side of the penalty alert (7.5.x) raised at `ply`.
    fn penalty_side(&self, ply: u32) -> Option<Color> {
        self.penalties
            .iter()
            .find(|(p, _)| *p == ply)
            .map(|(_, side)| *side)
    }

    /// 7.5.5: two minutes to the opponent in standard play, one in rapid and blitz (A.4.2,
    /// B.3 of the Laws: "one minute").
    fn penalty_bonus_ms(&self) -> u64 {
        if self.control.is_blitz() || self.control.is_rapid() {
            60_000
        } else {
            120_000
        }
    }

    /// Replaces the moves from `from_ply` on by `moves` (SAN or UCI): the record is revised
    /// at once, and a new machine reads the board from the corrected position on.
    pub(super) fn correct(
        &mut self,
        t_ms: Millis,
        who: &str,
        from_ply: u32,
        moves: &[String],
        out: &mut Vec<Event>,
    ) -> Result<String, String> {
        let kept = from_ply.saturating_sub(1) as usize;
        let game = self.corrected_game(from_ply, moves)?;
        // A game taken up from the board after a gap: the whole game stands again.
        self.restore_before_gap(from_ply)?;
        let current = &self.game;
        let withdrawn: Vec<String> = current.moves()[kept..]
            .iter()
            .map(|m| m.uci.clone())
            .collect();
        let was: Vec<String> = current.moves()[kept..]
            .iter()
            .map(|m| m.san.clone())
            .collect();
        // After the game, the board shows what follows it: only the record is corrected.
        let resume = self.after.is_none();
        let physical = self.machine.physical_board().clone();
        if resume {
            self.machine = Machine::new(MachineConfig {
                start_fen: Some(game.fen()),
                chess960: self.chess960,
                ..self.machine_config()
            });
            self.offset = game.plies() as u32;
            self.resuming = true;
        }
        let revision = Event::Revision {
            ply: from_ply,
            withdrawn,
            t_ms,
        };
        self.take(&revision);
        out.push(revision);
        self.record_corrected_moves(&game, kept, t_ms, out);
        if resume {
            // The new machine starts from the corrected position as soon as the board shows
            // it; it may already.
            let snapshot = Observation {
                t_ms,
                kind: ObservationKind::Snapshot(Snapshot {
                    board: physical,
                    identifies_pieces: true,
                }),
            };
            self.observe(&snapshot, out);
        }
        let now: Vec<&str> = game.moves()[kept..]
            .iter()
            .map(|m| m.san.as_str())
            .collect();
        let text = correction_text(who, from_ply, &now, &was);
        self.note(kept as u32 + now.len() as u32, text.clone());
        Ok(text)
    }

    /// The game with the moves from `from_ply` on replaced by `moves`, or why that cannot be.
    pub(super) fn corrected_game(&self, from_ply: u32, moves: &[String]) -> Result<Game, String> {
        let kept = from_ply.saturating_sub(1) as usize;
        // After a gap no sequence explained, ply numbers count the game before it.
        let current = self.before_gap.as_ref().map_or(&self.game, |b| &b.game);
        if from_ply == 0 || kept > current.plies() {
            return Err(format!(
                "ply {from_ply} is out of range: the game has {} plies",
                current.plies()
            ));
        }
        let mut game = current.clone();
        game.truncate(kept);
        for (i, text) in moves.iter().enumerate() {
            let mv =
                parse_move(&game, text).map_err(|e| format!("move {} ({text}): {e}", i + 1))?;
            game.play(mv).map_err(|e| e.to_string())?;
        }
        Ok(game)
    }

    /// Records the moves of the corrected `game` after its first `kept` plies, as if the
    /// machine had made them at `t_ms`.
    fn record_corrected_moves(
        &mut self,
        game: &Game,
        kept: usize,
        t_ms: Millis,
        out: &mut Vec<Event>,
    ) {
        for (i, played) in game.moves()[kept..].iter().enumerate() {
            let ply = (kept + i + 1) as u32;
            let side = if game.positions()[kept + i].turn() == Color::White {
                crate::board::ColorName::White
            } else {
                crate::board::ColorName::Black
            };
            let event = Event::Move {
                ply,
                uci: played.uci.clone(),
                san: played.san.clone(),
                t_ms,
                side,
                fen: shakmaty::fen::Fen::from_position(
                    &game.positions()[kept + i + 1],
                    shakmaty::EnPassantMode::Legal,
                )
                .to_string(),
            };
            self.take(&event);
            out.push(event);
        }
    }
}

/// The note for a correction by `who` from `from_ply`: the moves `now` recorded instead
/// of the moves that `were`.
fn correction_text(who: &str, from_ply: u32, now: &[&str], were: &[String]) -> String {
    let was = if were.is_empty() {
        String::new()
    } else {
        format!(" (were {})", were.join(" "))
    };
    if now.is_empty() {
        format!("Arbiter {who}: moves from ply {from_ply} taken back{was}")
    } else {
        format!(
            "Arbiter {who}: moves from ply {from_ply} corrected to {}{was}",
            now.join(" ")
        )
    }
}

/// A move given by the arbiter in SAN or UCI.
fn parse_move(game: &Game, text: &str) -> Result<shakmaty::Move, String> {
    if let Ok(mv) = game.parse_san(text) {
        return Ok(mv);
    }
    let uci: shakmaty::uci::UciMove = text
        .parse()
        .map_err(|_| format!("{text:?} is neither SAN nor UCI"))?;
    uci.to_move(game.position())
        .map_err(|_| format!("{text} is illegal in {}", game.fen()))
}

/// "White" or "Black".
fn side_name(side: Color) -> &'static str {
    match side {
        Color::White => "White",
        Color::Black => "Black",
    }
}

/// `m:ss` or `h:mm:ss`.
fn duration_text(ms: u64) -> String {
    let s = ms / 1000;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}
