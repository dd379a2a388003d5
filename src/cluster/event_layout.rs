//! The event's layout in the cluster: a JetStream key-value bucket holding the pairings, the
//! board numbers, the PC that records each board and the event's arbiter token.
//!
//! Bucket `touchmove-EVENT` (stream `KV_touchmove-EVENT`), keys:
//!
//! - `event`: the event's name, site, date, current round and time control ([`EventInfo`]);
//! - `round.R.board.N`: board N of round R, its players and the PC given it ([`PlannedBoard`]),
//!   written by `touchmove event push`;
//! - `round.R.claim.N`: the recorder that records board N of round R ([`Claim`]), written by
//!   the recorder itself at its start, with a create that fails when the key exists: of two
//!   recorders claiming one board, the second is refused with a message naming both PCs;
//! - `arbiter-token`: the bearer token every serve node's arbiter desk and every recorder
//!   checks. It is readable by whoever holds the cluster's credentials, who can write the
//!   event's stream anyway: the cluster's credentials are the boundary.

use std::collections::BTreeMap;

use async_nats::jetstream;
use async_nats::jetstream::kv;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};

use super::wire::LayoutPlayer;
use super::{ClusterError, ClusterSettings};
use crate::recorder::EventConfig;

/// The key of the event's arbiter token.
pub const TOKEN_KEY: &str = "arbiter-token";
/// The key of the event's description.
pub const EVENT_KEY: &str = "event";
/// Revisions kept per key (earlier layouts, for a look back after an edit).
const HISTORY: i64 = 5;

/// The event's bucket.
pub fn bucket_name(event: &str) -> String {
    format!("touchmove-{event}")
}

/// The key of board `board` of round `round`.
pub fn board_key(round: u32, board: u32) -> String {
    format!("round.{round}.board.{board}")
}

/// The key of the claim on board `board` of round `round`.
pub fn claim_key(round: u32, board: u32) -> String {
    format!("round.{round}.claim.{board}")
}

/// The event as the layout describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventInfo {
    /// Event name.
    pub event: String,
    /// Site.
    pub site: String,
    /// Date.
    pub date: String,
    /// The round being played (the last one pushed).
    pub round: u32,
    /// Time control.
    pub time_control: Option<String>,
}

/// A board of a round as planned by `touchmove event push`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlannedBoard {
    /// Round.
    pub round: u32,
    /// Board number.
    pub number: u32,
    /// White.
    pub white: LayoutPlayer,
    /// Black.
    pub black: LayoutPlayer,
    /// The PC (recorder id) that records it, when the layout says.
    pub pc: Option<String>,
}

/// A recorder's claim on a board.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claim {
    /// The recorder id (the PC).
    pub recorder: String,
    /// Its host name.
    pub host: String,
}

/// Everything the bucket says about the event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EventLayout {
    /// The event, once pushed.
    pub event: Option<EventInfo>,
    /// Planned boards by (round, board).
    pub boards: BTreeMap<(u32, u32), PlannedBoard>,
    /// Claims by (round, board).
    pub claims: BTreeMap<(u32, u32), Claim>,
    /// True when the event has an arbiter token.
    pub has_token: bool,
}

/// Opens the event's bucket, creating it when it does not exist.
pub async fn open(
    js: &jetstream::Context,
    settings: &ClusterSettings,
) -> Result<kv::Store, ClusterError> {
    let name = bucket_name(&settings.event);
    if let Ok(store) = js.get_key_value(&name).await {
        return Ok(store);
    }
    // The stream `create_key_value` would make, made directly: that call first asks for the
    // account's limits, whose answer from a 2.9 server the client cannot read.
    let created = js
        .create_stream(jetstream::stream::Config {
            name: format!("KV_{name}"),
            description: Some(format!("touchmove event layout of {}", settings.event)),
            subjects: vec![format!("$KV.{name}.>")],
            max_messages_per_subject: HISTORY,
            storage: jetstream::stream::StorageType::File,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            num_replicas: settings.replicas,
            discard: jetstream::stream::DiscardPolicy::New,
            ..Default::default()
        })
        .await;
    let made = created.err().map(|e| e.to_string());
    // Made now, or by another member meanwhile.
    js.get_key_value(&name)
        .await
        .map_err(|e| ClusterError::JetStream {
            what: format!("key-value bucket {name}"),
            message: made.unwrap_or_else(|| e.to_string()),
        })
}

fn jetstream_error(what: String, e: impl std::fmt::Display) -> String {
    format!("event layout: {what}: {e}")
}

async fn get_json<T: serde::de::DeserializeOwned>(
    store: &kv::Store,
    key: &str,
) -> Result<Option<T>, String> {
    match store.get(key).await {
        Ok(Some(bytes)) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| jetstream_error(format!("key {key} does not decode"), e)),
        Ok(None) => Ok(None),
        Err(e) => Err(jetstream_error(format!("reading {key}"), e)),
    }
}

async fn put_json<T: Serialize>(store: &kv::Store, key: &str, value: &T) -> Result<(), String> {
    let bytes = serde_json::to_vec(value).map_err(|e| e.to_string())?;
    store
        .put(key, bytes.into())
        .await
        .map(|_| ())
        .map_err(|e| jetstream_error(format!("writing {key}"), e))
}

/// The event's arbiter token, if one was made.
pub async fn token(store: &kv::Store) -> Result<Option<String>, String> {
    match store.get(TOKEN_KEY).await {
        Ok(bytes) => Ok(bytes
            .map(|b| String::from_utf8_lossy(&b).trim().to_string())
            .filter(|t| !t.is_empty())),
        Err(e) => Err(jetstream_error("reading the arbiter token".to_string(), e)),
    }
}

/// The event's arbiter token; when the event has none yet, a fresh one is made (of two
/// members making one at once, the first wins and both use it).
pub async fn token_or_new(store: &kv::Store) -> Result<String, String> {
    if let Some(token) = token(store).await? {
        return Ok(token);
    }
    let fresh = crate::server::token::generate();
    match store.create(TOKEN_KEY, fresh.clone().into()).await {
        Ok(_) => Ok(fresh),
        Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => token(store)
            .await?
            .ok_or_else(|| "event layout: the arbiter token vanished".to_string()),
        Err(e) => Err(jetstream_error("writing the arbiter token".to_string(), e)),
    }
}

/// Replaces the event's arbiter token with a fresh one and returns it.
pub async fn new_token(store: &kv::Store) -> Result<String, String> {
    let fresh = crate::server::token::generate();
    store
        .put(TOKEN_KEY, fresh.clone().into())
        .await
        .map_err(|e| jetstream_error("writing the arbiter token".to_string(), e))?;
    Ok(fresh)
}

/// What `push` changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PushReport {
    /// Boards written.
    pub boards: usize,
    /// Boards of the round removed (no longer in the event).
    pub removed: Vec<u32>,
    /// Claims dropped because their board went to another PC or away.
    pub released: Vec<(u32, String)>,
}

/// Writes `config`'s round into the layout: the event, every board with its players and the
/// PC `pcs` gives it. Boards of that round no longer in `config` are removed, and claims on
/// boards now given to another PC (or removed) are dropped, so a layout edited between rounds
/// lets the new PC claim its boards.
pub async fn push(
    store: &kv::Store,
    config: &EventConfig,
    pcs: &BTreeMap<u32, String>,
) -> Result<PushReport, String> {
    let round = config.round;
    let info = EventInfo {
        event: config.event.clone(),
        site: config.site.clone(),
        date: config.date.clone(),
        round,
        time_control: config.time_control.clone(),
    };
    let before = read(store).await?;
    let mut report = PushReport::default();
    for board in &config.boards {
        let planned = PlannedBoard {
            round,
            number: board.number,
            white: (&board.white).into(),
            black: (&board.black).into(),
            pc: pcs.get(&board.number).cloned(),
        };
        put_json(store, &board_key(round, board.number), &planned).await?;
        report.boards += 1;
    }
    for (&(r, number), _) in before.boards.range((round, 0)..=(round, u32::MAX)) {
        if r == round && config.board(number).is_none() {
            store
                .delete(board_key(round, number))
                .await
                .map_err(|e| jetstream_error(format!("removing board {number}"), e))?;
            report.removed.push(number);
        }
    }
    for (&(r, number), claim) in before.claims.range((round, 0)..=(round, u32::MAX)) {
        let gone = config.board(number).is_none();
        let moved = pcs.get(&number).is_some_and(|pc| *pc != claim.recorder);
        if r == round && (gone || moved) {
            store
                .delete(claim_key(round, number))
                .await
                .map_err(|e| jetstream_error(format!("releasing board {number}"), e))?;
            report.released.push((number, claim.recorder.clone()));
        }
    }
    put_json(store, EVENT_KEY, &info).await?;
    Ok(report)
}

/// Claims `boards` of `round` for `recorder` on `host`. A board already claimed by this
/// recorder stays its own (a restart). A board given to another PC by the layout or claimed
/// by another recorder is refused: the error names both PCs of every such board (the other
/// boards are claimed all the same).
pub async fn claim(
    store: &kv::Store,
    round: u32,
    boards: &[u32],
    recorder: &str,
    host: &str,
) -> Result<(), String> {
    let refused = claim_boards(store, round, boards, recorder, host).await?;
    match refusal(&refused, recorder) {
        None => Ok(()),
        Some(why) => Err(why),
    }
}

/// What a PC is told about the boards `refused` to it by [`claim_boards`]; `None` when there
/// are none.
pub fn refusal(refused: &[(u32, String)], recorder: &str) -> Option<String> {
    if refused.is_empty() {
        return None;
    }
    let conflicts: Vec<&str> = refused.iter().map(|(_, why)| why.as_str()).collect();
    Some(format!(
        "{}: the board is refused to PC {recorder:?}. Give each board to one PC: correct the \
         event files, then `touchmove event push` with the right --pc",
        conflicts.join("; ")
    ))
}

/// Claims `boards` of `round` for `recorder` on `host`, as [`claim`] does; returns the boards
/// refused, each with the conflict that names both PCs. The error is a bucket that cannot be
/// read or written.
pub async fn claim_boards(
    store: &kv::Store,
    round: u32,
    boards: &[u32],
    recorder: &str,
    host: &str,
) -> Result<Vec<(u32, String)>, String> {
    let mine = Claim {
        recorder: recorder.to_string(),
        host: host.to_string(),
    };
    let payload = serde_json::to_vec(&mine).map_err(|e| e.to_string())?;
    // Each claim waits for the server twice; a PC's boards are claimed a few at a time, so
    // that a PC with a hundred boards is not kept from forwarding for hundreds of round trips.
    let answers: Vec<Result<Option<String>, String>> =
        futures_util::stream::iter(boards.iter().copied())
            .map(|board| claim_one(store, round, board, recorder, host, &payload))
            .buffered(CLAIMS_AT_ONCE)
            .collect()
            .await;
    let mut refused = Vec::new();
    for (&board, answer) in boards.iter().zip(answers) {
        if let Some(conflict) = answer? {
            refused.push((board, conflict));
        }
    }
    Ok(refused)
}

/// Claims made at once by [`claim`].
const CLAIMS_AT_ONCE: usize = 32;

/// Claims one board for `recorder`; the conflict, if another PC has it.
async fn claim_one(
    store: &kv::Store,
    round: u32,
    board: u32,
    recorder: &str,
    host: &str,
    payload: &[u8],
) -> Result<Option<String>, String> {
    if let Some(planned) = get_json::<PlannedBoard>(store, &board_key(round, board)).await?
        && let Some(pc) = planned.pc.as_deref()
        && pc != recorder
    {
        return Ok(Some(format!(
            "board {board} of round {round} is given to PC {pc:?} by the event layout, and PC \
             {recorder:?} (host {host}) records it too"
        )));
    }
    let key = claim_key(round, board);
    match store.create(&key, payload.to_vec().into()).await {
        Ok(_) => Ok(None),
        Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
            match get_json::<Claim>(store, &key).await? {
                Some(other) if other.recorder != recorder => Ok(Some(format!(
                    "board {board} of round {round} is claimed by PC {:?} (host {}) and by PC \
                     {recorder:?} (host {host})",
                    other.recorder, other.host
                ))),
                Some(_) => Ok(None),
                None => Err(format!(
                    "event layout: the claim on board {board} of round {round} changed while it \
                     was made; try again"
                )),
            }
        }
        Err(e) => Err(jetstream_error(format!("claiming board {board}"), e)),
    }
}

/// The recorder that claimed board `board` of round `round`, if any.
pub async fn owner(store: &kv::Store, round: u32, board: u32) -> Result<Option<Claim>, String> {
    get_json(store, &claim_key(round, board)).await
}

/// Everything in the bucket.
pub async fn read(store: &kv::Store) -> Result<EventLayout, String> {
    let mut layout = EventLayout::default();
    let mut keys = store
        .keys()
        .await
        .map_err(|e| jetstream_error("listing keys".to_string(), e))?;
    let mut names = Vec::new();
    while let Some(key) = keys.next().await {
        names.push(key.map_err(|e| jetstream_error("listing keys".to_string(), e))?);
    }
    for key in names {
        let parts: Vec<&str> = key.split('.').collect();
        match parts.as_slice() {
            [EVENT_KEY] => layout.event = get_json(store, &key).await?,
            [TOKEN_KEY] => layout.has_token = token(store).await?.is_some(),
            ["round", r, kind, n] => {
                let (Ok(round), Ok(number)) = (r.parse::<u32>(), n.parse::<u32>()) else {
                    continue;
                };
                match *kind {
                    "board" => {
                        if let Some(b) = get_json(store, &key).await? {
                            layout.boards.insert((round, number), b);
                        }
                    }
                    "claim" => {
                        if let Some(c) = get_json(store, &key).await? {
                            layout.claims.insert((round, number), c);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    Ok(layout)
}
