//! A board's task watched over: restarted from the journal when it panics, and the arbiter's
//! requests routed to the task of their board.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::board_task::{self, BoardCommand, BoardTask};
use super::shared::Shared;
use super::{BoardConfig, loud, replay};

/// Most restarts of one board's task within [`RESTART_WINDOW`] before it is left stopped (a
/// bug that strikes again at once would otherwise spin).
const MAX_RESTARTS: usize = 5;

/// See [`MAX_RESTARTS`].
const RESTART_WINDOW: Duration = Duration::from_secs(60);

/// Runs a board's task and, when it panics, says so loudly, raises a critical alert on the
/// arbiter's desk and starts the board again from the journal: a bug on one board must not
/// silently stop it.
pub(super) async fn supervise(
    shared: Arc<Shared>,
    board: BoardConfig,
    control: crate::clock::TimeControl,
    first: BoardTask,
    commands: board_task::Commands,
) {
    let mut task = first;
    let mut restarts: Vec<tokio::time::Instant> = Vec::new();
    loop {
        let why = match tokio::spawn(task.run(Arc::clone(&commands))).await {
            Ok(()) => return,
            Err(e) if e.is_panic() => panic_text(e.into_panic()),
            Err(_) => return,
        };
        let now = tokio::time::Instant::now();
        restarts.retain(|t| now.duration_since(*t) < RESTART_WINDOW);
        restarts.push(now);
        let again = restarts.len() <= MAX_RESTARTS;
        let message = format!(
            "board {}: its task failed ({why}); {}",
            board.number,
            if again {
                "it is rebuilt from the journal and records again. Check its game"
            } else {
                "it failed too often and is STOPPED: restart the recorder (nothing journalled is lost)"
            }
        );
        loud(&message);
        let desk = |message: String| to_desk(&shared, board.number, message);
        if !again {
            desk(message);
            return;
        }
        let rebuilt = tokio::spawn(rebuild(shared.clone(), board.clone(), control.clone())).await;
        // On the desk after the rebuild, which replays the game from its start.
        task = match rebuilt {
            Ok(Some(task)) => {
                desk(message);
                task
            }
            _ => {
                let stopped = format!(
                    "board {}: it cannot be rebuilt from the journal and is STOPPED; restart the \
                     recorder",
                    board.number
                );
                loud(&stopped);
                desk(format!("{message}. {stopped}"));
                return;
            }
        };
    }
}

/// Raises a critical alert about board `board`'s task on the arbiter's desk.
fn to_desk(shared: &Shared, board: u32, message: String) {
    shared.publication.event(
        shared.at(shared.session.now_ms()),
        shared.config.round,
        board,
        crate::act::Event::Alert(crate::act::Alert {
            article: "recorder".to_string(),
            side: None,
            ply: 0,
            t_ms: shared.session.now_ms(),
            evidence_ms: Vec::new(),
            squares: Vec::new(),
            severity: crate::act::Severity::Critical,
            message,
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        }),
    );
}

/// Board `board`'s task rebuilt from the journal; `None` when the journal cannot be read.
async fn rebuild(
    shared: Arc<Shared>,
    board: BoardConfig,
    control: crate::clock::TimeControl,
) -> Option<BoardTask> {
    let entries = {
        let journal = shared.journal.clone();
        let round = shared.config.round;
        let before = (round > 1).then(|| replay::board_key(round - 1, board.number));
        let keys: Vec<_> = before
            .into_iter()
            .chain([replay::board_key(round, board.number)])
            .collect();
        shared
            .blocking(move || {
                let journal = journal.lock();
                let mut entries = Vec::new();
                for key in &keys {
                    entries.extend(journal.board_entries(key, 0)?);
                }
                Ok::<_, crate::store::JournalError>(entries)
            })
            .await
    };
    let history = match entries {
        Ok(Ok(entries)) => replay::split(&entries, shared.config.round)
            .remove(&board.number)
            .unwrap_or_default(),
        Ok(Err(e)) => {
            loud(&format!(
                "board {}: cannot read the journal to rebuild it: {e}",
                board.number
            ));
            return None;
        }
        Err(_) => return None,
    };
    Some(BoardTask::resume(shared, &board, control, history).await)
}

/// The message of a panic.
fn panic_text(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic".to_string())
}

/// Routes arbiter requests to their board's task.
pub(super) async fn dispatch(
    mut requests: mpsc::Receiver<(
        crate::record::arbiter::ArbiterRequest,
        tokio::sync::oneshot::Sender<Result<String, String>>,
    )>,
    boards: BTreeMap<u32, mpsc::Sender<BoardCommand>>,
) {
    while let Some((request, reply)) = requests.recv().await {
        match boards.get(&request.board) {
            Some(tx) => {
                if let Err(e) = tx.send(BoardCommand::Arbiter(request, reply)).await {
                    let BoardCommand::Arbiter(_, reply) = e.0 else {
                        continue;
                    };
                    let _ = reply.send(Err("that board's task has stopped".to_string()));
                }
            }
            None => {
                let known: Vec<String> = boards.keys().map(u32::to_string).collect();
                let _ = reply.send(Err(format!(
                    "no board {} in this event (boards: {})",
                    request.board,
                    known.join(", ")
                )));
            }
        }
    }
}
