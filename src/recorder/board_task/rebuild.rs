//! A board's game rebuilt from the journal: what the replay gave, with the times the journal
//! gives, for the publication.

use std::collections::HashSet;

use super::super::layout::BoardSummary;
use super::super::pipeline::BoardPipeline;
use super::super::replay::{History, Replayed, Step, replay_step};
use crate::act::Event;
use crate::board::Millis;
use crate::record::arbiter::ArbiterAction;

/// What a replay hands the publication, in order, with the session time it happened.
pub(super) enum Rebuilt {
    /// An event of the pipeline.
    Event(Millis, Event),
    /// An arbiter action the pipeline applied.
    Applied(Millis, ArbiterAction),
    /// The game's text and summary as they stood (for the public side of a delayed round).
    Text(Millis, String, BoardSummary),
}

impl Rebuilt {
    /// The game's text as `pipeline` has it, at `t_ms`.
    pub(super) fn text(pipeline: &BoardPipeline, board: u32, t_ms: Millis) -> Rebuilt {
        Rebuilt::Text(t_ms, pipeline.board_pgn(), summary(pipeline, board))
    }

    pub(super) fn t_ms(&self) -> Millis {
        match self {
            Rebuilt::Event(t, _) | Rebuilt::Applied(t, _) | Rebuilt::Text(t, ..) => *t,
        }
    }
}

/// What `index.json` says of board `board`'s game.
pub(super) fn summary(pipeline: &BoardPipeline, board: u32) -> BoardSummary {
    BoardSummary {
        board,
        result: pipeline.result().to_string(),
        live: pipeline.live(),
    }
}

/// Replays a board's journalled history into `pipeline`: what it gave, in order, with the
/// times the journal gives its events, the chunks of bytes it read and the keys of the
/// arbiter actions it applied (a retry of one is answered as applied and not applied again).
/// From `unseen_from` on (a delayed round's part the public has not seen), the game's text
/// after each step that changed it, for the public side.
pub(super) fn replay_history(
    pipeline: &mut BoardPipeline,
    history: &History,
    board: u32,
    unseen_from: Option<Millis>,
) -> (Vec<Rebuilt>, usize, HashSet<String>) {
    let mut rebuilt = Vec::new();
    let mut applied_keys = HashSet::new();
    let mut event_times = history.event_times.iter().copied();
    let seen = |t: Millis| unseen_from.is_some_and(|from| t < from);
    // The time of the last step whose events no text shows yet.
    let mut text_due: Option<Millis> = None;
    for step in &history.steps {
        let (Step::Bytes(t_ms, _) | Step::Arbiter(t_ms, _) | Step::LinkLost(t_ms)) = step;
        let t_ms = *t_ms;
        if let Some(at) = text_due.filter(|_| !seen(t_ms)) {
            rebuilt.push(Rebuilt::text(pipeline, board, at));
            text_due = None;
        }
        let before = rebuilt.len();
        replay_step(pipeline, step, &mut |r| match r {
            Replayed::Event(e) => {
                rebuilt.push(Rebuilt::Event(event_times.next().unwrap_or(t_ms), e))
            }
            Replayed::Applied(request) => {
                applied_keys.extend(request.key.clone());
                rebuilt.push(Rebuilt::Applied(t_ms, request.action.clone()));
            }
        });
        if unseen_from.is_some() && rebuilt.len() > before {
            text_due = Some(t_ms);
            if !seen(t_ms) {
                rebuilt.push(Rebuilt::text(pipeline, board, t_ms));
                text_due = None;
            }
        }
    }
    if let Some(at) = text_due {
        rebuilt.push(Rebuilt::text(pipeline, board, at));
    }
    let chunks = history
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Bytes(..)))
        .count();
    (rebuilt, chunks, applied_keys)
}
