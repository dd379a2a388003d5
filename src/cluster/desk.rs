//! One arbiter desk for every board of the event: an arbiter action taken on any serve node
//! goes over the cluster to the recorder that owns the board, which checks the token,
//! journals and applies it (the single writer of its boards) and answers. Its result reaches
//! every node through the event's stream, like any journal entry.
//!
//! Transport: NATS request/reply on the recorder's own subject `touchmove-desk.EVENT.RECORDER`
//! (outside the stream's `touchmove.EVENT.>`, so requests are not stored). Not a JetStream
//! command stream, because an arbiter's action must be applied now by a recorder that is
//! there, or refused now: with nobody subscribed the serve node learns it at once ("no
//! responders") and tells the arbiter, where a stored command would wait and be applied
//! later, by surprise, when the PC comes back. Durability comes from the recorder's journal,
//! which records the action before the recorder answers.
//!
//! An action carries the key its client gave it (`key` in the web API's body), the same on a
//! retry after a timeout: the recorder journals the key with the action and applies an action
//! whose key it has journalled once only, answering the retry as applied.
//!
//! ```text
//! arbiter ─POST /api/arbiter/action─► serve (token checked) ─request─► recorder owning the board
//!                                                                   (token checked, ownership
//!                                                                    checked, journalled)
//! every serve node ◄── stream ◄── forwarder ◄── journal ◄────────────────┘
//! ```

use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

use async_nats::jetstream::kv;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::sync::oneshot;

use super::event_layout;
use super::loud;
use crate::record::arbiter::ArbiterRequest;
use crate::recorder::ArbiterSink;

/// How long a serve node waits for the recorder's answer.
pub const REPLY_TIMEOUT: Duration = Duration::from_secs(8);

/// The subject a recorder's desk listens on.
pub fn desk_subject(event: &str, recorder: &str) -> String {
    format!("touchmove-desk.{event}.{recorder}")
}

/// An arbiter action on its way to a recorder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeskRequest {
    /// The token the arbiter presented.
    pub token: String,
    /// The round of the board.
    pub round: u32,
    /// The action.
    pub request: ArbiterRequest,
    /// The node that sent it (for the recorder's log).
    pub node: String,
}

/// A recorder's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeskReply {
    /// True when applied.
    pub ok: bool,
    /// What the recorder says (why it refused, or what it did).
    pub message: String,
}

/// The boards a recorder owns: its round and board numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedBoards {
    /// The recorder id.
    pub recorder: String,
    /// Its round.
    pub round: u32,
    /// Its boards.
    pub boards: BTreeSet<u32>,
}

impl OwnedBoards {
    /// Why this recorder refuses an action on `board` of `round`; `None` when it owns it.
    pub fn refusal(&self, round: u32, board: u32) -> Option<String> {
        if round == self.round && self.boards.contains(&board) {
            return None;
        }
        let list: Vec<String> = self.boards.iter().map(u32::to_string).collect();
        Some(format!(
            "PC {:?} does not record board {board} of round {round} (it records boards {} of \
             round {}): refused; the action must go to the PC that claimed the board in the \
             event layout (`touchmove event show`)",
            self.recorder,
            list.join(", "),
            self.round
        ))
    }
}

/// Answers the desk requests arriving on `subscriber` until it ends, one at a time: checks
/// the token against the event's (read from `store` at each request, so a new token counts at
/// once) and the board against `owned`, then hands the action to the recorder through `sink`,
/// unless its key is among the keys `applied` (those of the journal's actions). Every refusal
/// is logged.
pub async fn answer_requests(
    client: async_nats::Client,
    mut subscriber: async_nats::Subscriber,
    store: kv::Store,
    owned: OwnedBoards,
    sink: ArbiterSink,
    mut applied: HashSet<String>,
) {
    while let Some(message) = subscriber.next().await {
        let Some(reply_to) = message.reply.clone() else {
            continue;
        };
        let reply = answer(&message.payload, &store, &owned, &sink, &mut applied).await;
        let payload = serde_json::to_vec(&reply).unwrap_or_default();
        // A lost answer shows as a timeout on the serve node; the journal has the truth.
        let _ = client.publish(reply_to, payload.into()).await;
    }
}

async fn answer(
    payload: &[u8],
    store: &kv::Store,
    owned: &OwnedBoards,
    sink: &ArbiterSink,
    applied: &mut HashSet<String>,
) -> DeskReply {
    let refuse = |message: String| {
        loud("record", &format!("arbiter desk: {message}"));
        DeskReply { ok: false, message }
    };
    let request: DeskRequest = match serde_json::from_slice(payload) {
        Ok(r) => r,
        Err(e) => return refuse(format!("a malformed request was refused: {e}")),
    };
    let what = format!(
        "an action on board {} of round {} from node {:?} ({})",
        request.request.board, request.round, request.node, request.request.who
    );
    match event_layout::token(store).await {
        Ok(Some(token)) if crate::server::token::matches(&request.token, &token) => {}
        Ok(Some(_)) => {
            return refuse(format!(
                "{what} was refused: wrong arbiter token (the event's token is the one the serve \
                 nodes show; `touchmove event push --new-token` makes a new one)"
            ));
        }
        Ok(None) => {
            return refuse(format!(
                "{what} was refused: the event has no arbiter token yet (`touchmove event push` \
                 makes one)"
            ));
        }
        Err(e) => return refuse(format!("{what} was refused: cannot check the token ({e})")),
    }
    if let Some(why) = owned.refusal(request.round, request.request.board) {
        return refuse(format!("{what}: {why}"));
    }
    let key = request.request.key.clone();
    if let Some(key) = key.as_deref()
        && applied.contains(key)
    {
        return DeskReply {
            ok: true,
            message: format!("already applied (action {key:?} was journalled before)"),
        };
    }
    let (tx, rx) = oneshot::channel();
    if sink.send((request.request, tx)).await.is_err() {
        return refuse(format!("{what} was refused: the recorder is stopping"));
    }
    match rx.await {
        Ok(Ok(message)) => {
            applied.extend(key);
            DeskReply { ok: true, message }
        }
        Ok(Err(message)) => refuse(format!("{what} was refused by the board: {message}")),
        Err(_) => refuse(format!("{what}: the recorder dropped it")),
    }
}

/// Why a serve node could not get an action applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeskError {
    /// The recorder (or the layout) refused it: the message says why.
    Refused(String),
    /// Nobody could be asked or nobody answered.
    Unavailable(String),
}

impl std::fmt::Display for DeskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeskError::Refused(m) | DeskError::Unavailable(m) => f.write_str(m),
        }
    }
}

/// Sends `request` to recorder `recorder`'s desk and waits for its answer.
pub async fn ask_recorder(
    client: &async_nats::Client,
    event: &str,
    recorder: &str,
    request: &DeskRequest,
) -> Result<String, DeskError> {
    let payload = serde_json::to_vec(request).map_err(|e| DeskError::Refused(e.to_string()))?;
    let asked = tokio::time::timeout(
        REPLY_TIMEOUT,
        client.request(desk_subject(event, recorder), payload.into()),
    )
    .await;
    let board = request.request.board;
    let message = match asked {
        Err(_) => {
            return Err(DeskError::Unavailable(format!(
                "PC {recorder:?}, which records board {board}, did not answer within {} s; the \
                 action may still be applied: look at the board before trying again",
                REPLY_TIMEOUT.as_secs()
            )));
        }
        Ok(Err(e)) if e.kind() == async_nats::client::RequestErrorKind::NoResponders => {
            return Err(DeskError::Unavailable(format!(
                "PC {recorder:?}, which records board {board}, is not connected to the cluster \
                 (stopped, or its network is down); the action was not applied: apply it on \
                 that PC (`touchmove arbiter`) or when it is back"
            )));
        }
        Ok(Err(e)) => {
            return Err(DeskError::Unavailable(format!(
                "cannot reach PC {recorder:?} over the cluster: {e}"
            )));
        }
        Ok(Ok(message)) => message,
    };
    let reply: DeskReply = serde_json::from_slice(&message.payload)
        .map_err(|e| DeskError::Unavailable(format!("PC {recorder:?} answered unreadably: {e}")))?;
    if reply.ok {
        Ok(reply.message)
    } else {
        Err(DeskError::Refused(reply.message))
    }
}

/// Sends `request` to the recorder that claimed its board in the event layout.
pub async fn route(
    client: &async_nats::Client,
    store: &kv::Store,
    event: &str,
    request: &DeskRequest,
) -> Result<String, DeskError> {
    let board = request.request.board;
    let owner = event_layout::owner(store, request.round, board)
        .await
        .map_err(DeskError::Unavailable)?
        .ok_or_else(|| {
            DeskError::Refused(format!(
                "no PC has claimed board {board} of round {} in the event layout, so no recorder \
                 can apply the action (is its recorder running with --cluster?)",
                request.round
            ))
        })?;
    ask_recorder(client, event, &owner.recorder, request).await
}

/// A serve node's side of the desk: takes the web API's arbiter actions from `actions` and
/// routes each to the recorder that owns its board, until the server stops. The connection
/// is made at the first action and kept (the client reconnects by itself); while the cluster
/// is unreachable each action is refused with the reason.
pub async fn route_actions(
    settings: super::ClusterSettings,
    mut actions: tokio::sync::mpsc::Receiver<(
        crate::server::RoutedAction,
        oneshot::Sender<Result<String, String>>,
    )>,
) {
    let mut connection: Option<(async_nats::Client, kv::Store)> = None;
    while let Some((action, reply)) = actions.recv().await {
        if connection.is_none() {
            connection = match super::connect(&settings).await {
                Ok(client) => {
                    let js = async_nats::jetstream::new(client.clone());
                    match event_layout::open(&js, &settings).await {
                        Ok(store) => Some((client, store)),
                        Err(e) => {
                            let _ = reply.send(Err(format!("the action was not applied: {e}")));
                            continue;
                        }
                    }
                }
                Err(e) => {
                    let _ = reply.send(Err(format!("the action was not applied: {e}")));
                    continue;
                }
            };
        }
        let Some((client, store)) = connection.as_ref() else {
            continue;
        };
        let request = DeskRequest {
            token: action.token,
            round: action.round,
            request: action.request,
            node: settings.member.clone(),
        };
        let client = client.clone();
        let store = store.clone();
        let event = settings.event.clone();
        // Actions on different boards need not wait for each other.
        tokio::spawn(async move {
            let answer = route(&client, &store, &event, &request)
                .await
                .map_err(|e| e.to_string());
            let _ = reply.send(answer);
        });
    }
}

/// How often a serve node looks at the event's arbiter token.
pub const TOKEN_EVERY: Duration = Duration::from_secs(1);

/// Follows the event's arbiter token in the event layout for a serve node's desk: `adopt`
/// is called with it when it is first read (made when the event has none yet) and whenever
/// it changes (`touchmove event push --new-token`), looked at every [`TOKEN_EVERY`]; while
/// the cluster is unreachable, it keeps trying.
pub async fn follow_token(settings: super::ClusterSettings, adopt: impl Fn(&str)) {
    let mut current: Option<String> = None;
    let mut store: Option<kv::Store> = None;
    loop {
        if store.is_none()
            && let Ok(client) = super::connect(&settings).await
        {
            let js = async_nats::jetstream::new(client);
            store = event_layout::open(&js, &settings).await.ok();
        }
        // A failed read is tried again; the client reconnects by itself.
        if let Some(store) = &store
            && let Ok(token) = event_layout::token_or_new(store).await
            && current.as_deref() != Some(token.as_str())
        {
            adopt(&token);
            current = Some(token);
        }
        tokio::time::sleep(TOKEN_EVERY).await;
    }
}

/// The event's arbiter token for a serve node's desk, read from the event layout (made there
/// when the event has none yet).
pub async fn event_token(settings: &super::ClusterSettings) -> Result<String, String> {
    let client = super::connect(settings).await.map_err(|e| e.to_string())?;
    let js = async_nats::jetstream::new(client);
    let store = event_layout::open(&js, settings)
        .await
        .map_err(|e| e.to_string())?;
    event_layout::token_or_new(&store).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_recorder_owns_only_its_boards_of_its_round() {
        let owned = OwnedBoards {
            recorder: "pc-a".into(),
            round: 2,
            boards: [1, 2].into_iter().collect(),
        };
        assert_eq!(owned.refusal(2, 1), None);
        let why = owned.refusal(2, 3).unwrap();
        assert!(why.contains("pc-a") && why.contains("board 3"), "{why}");
        assert!(owned.refusal(1, 1).unwrap().contains("round 1"));
    }
}
