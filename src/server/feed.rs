//! The live feed: every event of every game, numbered, with the state derived from them.
//!
//! The recorder publishes [`act::Event`](crate::act::Event)s per (round, board); the feed
//! numbers them with one increasing id per feed, keeps the derived state of every game
//! (moves, position, clocks, alerts, result) for snapshots, keeps a bounded replay log so a
//! reconnecting client receives exactly the events it missed, and fans each event out to the
//! live subscribers. Each event is serialised once, at publish time, into the SSE frame every
//! subscriber receives.
//!
//! One file for one concept, the feed: numbering, derived game state, replay log and fan-out
//! change together on every publish and are read as one.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::SystemTime;

use axum::body::Bytes;
use serde::Serialize;
use tokio::sync::broadcast;
// The recorder's clock (a simulation or a test can drive it), not the machine's.
use tokio::time::Instant;

use crate::act::{Alert, Event};
use crate::board::{ColorName, Millis};
use crate::record::arbiter::ArbiterAction;

/// Number of events kept for `Last-Event-ID` resumption by default.
pub const DEFAULT_REPLAY_CAPACITY: usize = 65_536;

/// Capacity of the live fan-out channel; a subscriber that falls further behind catches up
/// from the replay log instead.
const FANOUT_CAPACITY: usize = 4_096;

/// Ids each run of a recorder may use ([`Feed::begin_run`]).
const RUN_IDS: u64 = 1 << 32;

/// The standard start position.
const STANDARD_FEN: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// Who plays a game and its PGN tags, as the recorder knows them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GameInfo {
    /// Round number.
    pub round: u32,
    /// Board number within the round.
    pub board: u32,
    /// White player's name.
    pub white: String,
    /// Black player's name.
    pub black: String,
    /// Every PGN tag of the game (Event, Site, Round, WhiteElo, …), in the recorder's order.
    pub tags: Vec<(String, String)>,
}

/// Which events a subscriber wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every event of the feed.
    All,
    /// Every event of one round.
    Round(u32),
    /// The events of one game (round, board).
    Game(u32, u32),
}

impl Scope {
    /// True when the game on `board` of `round` is in scope.
    pub fn contains(self, round: u32, board: u32) -> bool {
        match self {
            Scope::All => true,
            Scope::Round(r) => r == round,
            Scope::Game(r, b) => r == round && b == board,
        }
    }
}

/// One published event, serialised once for every subscriber.
#[derive(Debug)]
pub struct FeedEvent {
    /// Increasing id, unique within the feed (the SSE `id:`).
    pub id: u64,
    /// Round of the game.
    pub round: u32,
    /// Board of the game.
    pub board: u32,
    /// Event kind (the SSE `event:` field): an [`Event`] kind, `game` or `arbiter`.
    pub kind: &'static str,
    /// The JSON object sent as SSE data: `{id, round, board, event, game}`.
    pub json: String,
    /// The complete SSE frame.
    pub frame: Bytes,
    /// When it was published (for latency measurements).
    pub published: Instant,
    /// The alert of an `alert` event, for readers in this process. The JSON and the frame
    /// name only the kind: alerts are the arbiter's business until decided, and the desk
    /// reads them from `/api/round/N/alerts` with its token.
    pub alert: Option<Alert>,
}

/// A PGN text served over HTTP with its validators.
#[derive(Debug, Clone)]
pub struct PgnDoc {
    /// The PGN text.
    pub text: Arc<str>,
    /// Strong entity tag (quoted).
    pub etag: String,
    /// When the text last changed.
    pub modified: SystemTime,
    /// The text also changed earlier within the same second as `modified`: `Last-Modified`
    /// (whole seconds) cannot tell the versions apart, so a request with only
    /// `If-Modified-Since` of that second must get the text again.
    pub changed_within_second: bool,
}

impl PgnDoc {
    fn new(text: String) -> PgnDoc {
        PgnDoc {
            etag: entity_tag(text.as_bytes()),
            text: text.into(),
            modified: SystemTime::now(),
            changed_within_second: false,
        }
    }

    /// The version after `self` with `text`.
    fn replaced_by(&self, text: String) -> PgnDoc {
        let mut next = PgnDoc::new(text);
        next.changed_within_second = whole_second(next.modified) == whole_second(self.modified);
        next
    }
}

/// The second (since 1970) of a time, as HTTP dates give it.
pub fn whole_second(time: SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// FNV-1a over the text plus its length: stable across runs, so pollers keep their cache
/// after a restart that wrote the same PGN.
fn entity_tag(bytes: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("\"{hash:016x}-{:x}\"", bytes.len())
}

/// A move as the pages show it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct MoveView {
    /// Ply number from 1.
    pub ply: u32,
    /// SAN with check suffix.
    pub san: String,
    /// UCI.
    pub uci: String,
    /// Who moved.
    pub side: ColorName,
    /// Session time of the move.
    pub t_ms: Millis,
    /// Position after the move.
    pub fen: String,
}

/// Where an alert stands in the arbiter's queue.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AlertState {
    /// Waits for the arbiter while the game goes on.
    Open,
    /// The game ended before the arbiter decided, and the decision still counts: a penalty
    /// for an illegal move (Article 7.5) can change the record or the result.
    OpenAfterEnd,
    /// The game ended before the arbiter decided, and its end made the alert moot (a board
    /// to restore, a touched piece, a set-up to correct).
    Overtaken,
    /// An arbiter action dealt with it ([`AlertView::decision`] says how).
    Decided,
    /// A later alert withdrew it: later evidence showed it wrong.
    Withdrawn,
}

impl AlertState {
    /// True while the arbiter still has to decide.
    pub fn is_open(self) -> bool {
        matches!(self, AlertState::Open | AlertState::OpenAfterEnd)
    }
}

/// Both clocks when an alert was raised.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct ClockReading {
    /// White's remaining time.
    pub white_ms: u64,
    /// Black's remaining time.
    pub black_ms: u64,
}

/// An alert with its state in the arbiter's queue.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AlertView {
    /// The alert as the machine raised it.
    #[serde(flatten)]
    pub alert: Alert,
    /// Where it stands.
    pub state: AlertState,
    /// What the arbiter decided, once [`AlertState::Decided`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Both clocks at the alert's time, once the game had a clock reading.
    pub clocks: Option<ClockReading>,
}

/// An alert with the board it belongs to.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct BoardAlert {
    /// Board number.
    pub board: u32,
    /// When it was raised, in milliseconds since 1970, when the recorder gave its time origin
    /// ([`Feed::set_time_origin`]).
    pub at_unix_ms: Option<u64>,
    /// The alert and its state.
    #[serde(flatten)]
    pub alert: AlertView,
}

/// Clock state with the age of the reading, so a page can keep the clocks ticking.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct ClockView {
    /// White's remaining time at the reading.
    pub white_ms: u64,
    /// Black's remaining time at the reading.
    pub black_ms: u64,
    /// Whose clock runs, if any.
    pub running: Option<ColorName>,
    /// Milliseconds since the reading arrived.
    pub age_ms: u64,
}

/// The state of one game as a board tile shows it.
#[derive(Debug, Clone, Serialize)]
pub struct GameSummary {
    /// Round number.
    pub round: u32,
    /// Board number.
    pub board: u32,
    /// White's name.
    pub white: String,
    /// Black's name.
    pub black: String,
    /// White's rating, from the `WhiteElo` tag.
    pub white_elo: Option<String>,
    /// Black's rating, from the `BlackElo` tag.
    pub black_elo: Option<String>,
    /// Current position.
    pub fen: String,
    /// Number of plies played.
    pub ply: u32,
    /// Last move in UCI.
    pub last_move: Option<String>,
    /// Last move in SAN.
    pub last_san: Option<String>,
    /// Clocks, once a reading arrived.
    pub clock: Option<ClockView>,
    /// Result token once the game ended.
    pub result: Option<String>,
    /// Why it ended.
    pub reason: Option<String>,
    /// True while the board does not match the game and play is held.
    pub held: bool,
    /// Squares that differ while held.
    pub differing: Vec<String>,
    /// Warning and critical alerts not yet dealt with. Not served: alerts are the arbiter's
    /// business until decided, and the desk counts them from `/api/round/N/alerts`.
    #[serde(skip_serializing)]
    pub open_alerts: usize,
    /// Once the board was set up again after the game: "after the game", or "board reset,
    /// result awaited" while the game has no result.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_game: Option<String>,
    /// The board was set up again after only a few moves and no result: the desk asks the
    /// arbiter whether it is a restart.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub restart_asked: bool,
}

/// Everything known about one game.
#[derive(Debug, Clone, Serialize)]
pub struct GameDetail {
    /// The tile state.
    #[serde(flatten)]
    pub summary: GameSummary,
    /// PGN tags.
    pub tags: Vec<(String, String)>,
    /// Start position.
    pub start_fen: String,
    /// Chess960 game.
    pub chess960: bool,
    /// The moves.
    pub moves: Vec<MoveView>,
    /// Every alert of the game. Not served (see [`GameSummary::open_alerts`]).
    #[serde(skip_serializing)]
    pub alerts: Vec<AlertView>,
}

/// A round and its games.
#[derive(Debug, Clone, Serialize)]
pub struct RoundView {
    /// Round number.
    pub round: u32,
    /// Id of the last event included in this view.
    pub last_id: u64,
    /// The games, by board.
    pub games: Vec<GameSummary>,
}

#[derive(Debug, Clone)]
struct GameState {
    info: GameInfo,
    start_fen: String,
    chess960: bool,
    moves: Vec<MoveView>,
    clock: Option<(u64, u64, Instant)>,
    /// The session time of the latest clock reading.
    clock_t_ms: Millis,
    completed_by: Option<ColorName>,
    result: Option<(String, String)>,
    held: bool,
    differing: Vec<String>,
    alerts: Vec<AlertView>,
    pgn: Option<PgnDoc>,
    /// The game was closed by a new set-up: its plies, and whether it may be a restart.
    closed: Option<(u32, bool)>,
}

impl GameState {
    fn new(round: u32, board: u32) -> GameState {
        GameState {
            info: GameInfo {
                round,
                board,
                ..GameInfo::default()
            },
            start_fen: STANDARD_FEN.to_string(),
            chess960: false,
            moves: Vec::new(),
            clock: None,
            clock_t_ms: 0,
            completed_by: None,
            result: None,
            held: false,
            differing: Vec::new(),
            alerts: Vec::new(),
            pgn: None,
            closed: None,
        }
    }

    fn fen(&self) -> &str {
        self.moves.last().map_or(&self.start_fen, |m| &m.fen)
    }

    fn side_to_move(&self) -> ColorName {
        if self.fen().split(' ').nth(1) == Some("b") {
            ColorName::Black
        } else {
            ColorName::White
        }
    }

    fn running(&self) -> Option<ColorName> {
        if self.result.is_some() || self.closed.is_some() {
            return None;
        }
        Some(match self.completed_by {
            Some(ColorName::White) => ColorName::Black,
            Some(ColorName::Black) => ColorName::White,
            None => self.side_to_move(),
        })
    }

    /// Applies `event`; a clock reading in it counts as read at `read_at`.
    fn apply(&mut self, event: &Event, read_at: Instant) {
        match event {
            Event::GameStart { fen, chess960, .. } => {
                self.start_fen = fen.clone();
                self.chess960 = *chess960;
                self.moves.clear();
                self.clock = None;
                self.completed_by = None;
                self.result = None;
                self.held = false;
                self.differing.clear();
                self.alerts.clear();
                self.closed = None;
            }
            Event::GameClosed { plies, restart, .. } => {
                self.closed = Some((*plies, *restart));
                self.held = false;
                self.differing.clear();
            }
            Event::Move {
                ply,
                uci,
                san,
                t_ms,
                side,
                fen,
            } => {
                self.moves.truncate(ply.saturating_sub(1) as usize);
                self.moves.push(MoveView {
                    ply: *ply,
                    san: san.clone(),
                    uci: uci.clone(),
                    side: *side,
                    t_ms: *t_ms,
                    fen: fen.clone(),
                });
            }
            Event::Revision { ply, .. } => {
                self.moves.truncate(ply.saturating_sub(1) as usize);
            }
            Event::MoveCompleted { side, .. } => self.completed_by = Some(*side),
            Event::Clock {
                white_ms,
                black_ms,
                t_ms,
                ..
            } => {
                self.clock = Some((*white_ms, *black_ms, read_at));
                self.clock_t_ms = *t_ms;
            }
            Event::Alert(alert) => {
                for view in &mut self.alerts {
                    if alert.withdraws.iter().any(|r| view.alert.is(r)) {
                        view.state = AlertState::Withdrawn;
                    }
                }
                let state = match self.result {
                    Some(_) => after_end(alert),
                    None => AlertState::Open,
                };
                self.alerts.push(AlertView {
                    alert: alert.clone(),
                    state,
                    decision: None,
                    clocks: self.clocks_at(alert.t_ms),
                });
            }
            Event::BoardState {
                held, differing, ..
            } => {
                self.held = *held;
                self.differing = differing.clone();
            }
            Event::Result { result, reason, .. } => {
                self.result = if result == "*" {
                    None
                } else {
                    Some((result.clone(), reason.clone()))
                };
                for view in &mut self.alerts {
                    view.state = match (view.state, &self.result) {
                        (AlertState::Open, Some(_)) => after_end(&view.alert),
                        (AlertState::OpenAfterEnd | AlertState::Overtaken, None) => {
                            AlertState::Open
                        }
                        (state, _) => state,
                    };
                }
            }
        }
    }

    /// Both clocks at session time `t_ms`: the latest reading, less the time the running
    /// clock has run since.
    fn clocks_at(&self, t_ms: Millis) -> Option<ClockReading> {
        let (white_ms, black_ms, _) = self.clock?;
        let ran = t_ms.saturating_sub(self.clock_t_ms);
        Some(match self.running() {
            Some(ColorName::White) => ClockReading {
                white_ms: white_ms.saturating_sub(ran),
                black_ms,
            },
            Some(ColorName::Black) => ClockReading {
                white_ms,
                black_ms: black_ms.saturating_sub(ran),
            },
            None => ClockReading { white_ms, black_ms },
        })
    }

    /// Marks the alerts an arbiter action deals with as decided, saying how.
    fn resolve(&mut self, action: &ArbiterAction) {
        let decision = match action {
            ArbiterAction::DecidePenalty { accept: true, .. } => "penalty applied".to_string(),
            ArbiterAction::DecidePenalty { accept: false, .. } => "no penalty".to_string(),
            ArbiterAction::Annotate { .. } => "acknowledged".to_string(),
            ArbiterAction::SettleOrder { .. } => "order of the moves settled".to_string(),
            ArbiterAction::SetResult { result, reason } => format!("result {result} ({reason})"),
            ArbiterAction::ReplaceMoves { .. } | ArbiterAction::TakeBack { .. } => {
                "moves corrected".to_string()
            }
            ArbiterAction::NewGame => "new game".to_string(),
            // Neither deals with an alert.
            ArbiterAction::AdjustTime { .. } | ArbiterAction::CheckClaim { .. } => return,
        };
        for view in &mut self.alerts {
            if matches!(view.state, AlertState::Decided | AlertState::Withdrawn) {
                continue;
            }
            let settles = match action {
                ArbiterAction::DecidePenalty { ply, .. } | ArbiterAction::Annotate { ply, .. } => {
                    view.alert.ply == *ply
                }
                // The order alert of that span, and only it.
                ArbiterAction::SettleOrder { ply, .. } => {
                    view.alert.ply == *ply
                        && matches!(view.alert.gap, Some(crate::act::GapAccount::Orders { .. }))
                }
                // Reopening a game decides nothing.
                ArbiterAction::SetResult { result, .. } => result != "*",
                ArbiterAction::ReplaceMoves { .. }
                | ArbiterAction::TakeBack { .. }
                | ArbiterAction::NewGame => true,
                ArbiterAction::AdjustTime { .. } | ArbiterAction::CheckClaim { .. } => false,
            };
            if settles {
                view.state = AlertState::Decided;
                view.decision = Some(decision.clone());
            }
        }
    }

    fn tag(&self, name: &str) -> Option<String> {
        self.info
            .tags
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }

    fn summary(&self, now: Instant) -> GameSummary {
        let last = self.moves.last();
        GameSummary {
            round: self.info.round,
            board: self.info.board,
            white: self.info.white.clone(),
            black: self.info.black.clone(),
            white_elo: self.tag("WhiteElo"),
            black_elo: self.tag("BlackElo"),
            fen: self.fen().to_string(),
            ply: self.moves.len() as u32,
            last_move: last.map(|m| m.uci.clone()),
            last_san: last.map(|m| m.san.clone()),
            clock: self.clock.map(|(white_ms, black_ms, at)| ClockView {
                white_ms,
                black_ms,
                running: self.running(),
                age_ms: now.saturating_duration_since(at).as_millis() as u64,
            }),
            result: self.result.as_ref().map(|r| r.0.clone()),
            reason: self.result.as_ref().map(|r| r.1.clone()),
            held: self.held,
            differing: self.differing.clone(),
            open_alerts: self
                .alerts
                .iter()
                .filter(|a| a.state.is_open() && a.alert.severity != crate::act::Severity::Info)
                .count(),
            after_game: self.after_game(),
            restart_asked: self.result.is_none() && self.closed.is_some_and(|(_, r)| r),
        }
    }

    /// What the desk says of a board set up again after its game.
    fn after_game(&self) -> Option<String> {
        let (plies, restart) = self.closed?;
        Some(match (&self.result, restart) {
            (Some(_), _) => "after the game".to_string(),
            (None, false) => "board reset, result awaited".to_string(),
            (None, true) => format!(
                "board reset, result awaited; set up again after {plies} plies: if this is a \
                 restart, start a new game"
            ),
        })
    }

    fn detail(&self, now: Instant) -> GameDetail {
        GameDetail {
            summary: self.summary(now),
            tags: self.info.tags.clone(),
            start_fen: self.start_fen.clone(),
            chess960: self.chess960,
            moves: self.moves.clone(),
            alerts: self.alerts.clone(),
        }
    }
}

#[derive(Debug)]
struct FeedState {
    next_id: u64,
    /// The first id of this run ([`Feed::begin_run`]).
    first_id: u64,
    games: BTreeMap<(u32, u32), GameState>,
    round_pgn: BTreeMap<u32, PgnDoc>,
    log: VecDeque<Arc<FeedEvent>>,
    log_capacity: usize,
    /// The round being recorded, when the recorder said so.
    current_round: Option<u32>,
    /// The wall-clock time (ms since 1970) of session time 0, when the recorder said so.
    time_origin_unix_ms: Option<u64>,
}

impl FeedState {
    fn game(&mut self, round: u32, board: u32) -> &mut GameState {
        self.games
            .entry((round, board))
            .or_insert_with(|| GameState::new(round, board))
    }

    fn round_view(&self, round: u32, now: Instant) -> RoundView {
        RoundView {
            round,
            last_id: self.next_id - 1,
            games: self
                .games
                .range((round, 0)..=(round, u32::MAX))
                .map(|(_, g)| g.summary(now))
                .collect(),
        }
    }

    /// The logged events after `after` within `scope`, or `None` when the log no longer
    /// holds all of them (or `after` is from another run of the feed).
    fn replay(&self, after: u64, scope: Scope) -> Option<Vec<Arc<FeedEvent>>> {
        let last = self.next_id - 1;
        if after > last {
            return None;
        }
        // 0 is "from the start"; any other id before this run's first is an earlier run's.
        let after = match after {
            0 => self.first_id - 1,
            a if a < self.first_id - 1 => return None,
            a => a,
        };
        let first = self.log.front().map_or(self.next_id, |e| e.id);
        if after + 1 < first {
            return None;
        }
        let skip = (after + 1 - first) as usize;
        Some(
            self.log
                .iter()
                .skip(skip)
                .filter(|e| scope.contains(e.round, e.board))
                .cloned()
                .collect(),
        )
    }

    fn snapshot_frame(&self, scope: Scope, now: Instant) -> Bytes {
        let id = self.next_id - 1;
        let data = match scope {
            Scope::All => serde_json::to_string(&self.all_rounds(now)),
            Scope::Round(r) => serde_json::to_string(&self.round_view(r, now)),
            Scope::Game(r, b) => {
                let detail = self.games.get(&(r, b)).map(|g| g.detail(now));
                serde_json::to_string(&detail)
            }
        }
        .unwrap_or_else(|_| "null".to_string());
        Bytes::from(format!("id: {id}\nevent: snapshot\ndata: {data}\n\n"))
    }

    fn all_rounds(&self, now: Instant) -> Vec<RoundView> {
        let rounds: Vec<u32> = self.rounds();
        rounds.iter().map(|r| self.round_view(*r, now)).collect()
    }

    fn rounds(&self) -> Vec<u32> {
        let mut rounds: Vec<u32> = self.games.keys().map(|(r, _)| *r).collect();
        rounds.dedup();
        rounds
    }
}

/// What a new subscriber receives first, then the live events after it.
#[derive(Debug)]
pub struct Subscription {
    /// Frames to send first: a snapshot, or the replayed events.
    pub initial: Vec<Bytes>,
    /// Id of the last event covered by `initial`.
    pub last_id: u64,
    /// The live events (filter by scope and skip ids ≤ `last_id`).
    pub live: broadcast::Receiver<Arc<FeedEvent>>,
    /// True when `initial` is a replay of missed events rather than a snapshot.
    pub resumed: bool,
}

/// The live feed of one recorder. Share it with `Arc`.
#[derive(Debug)]
pub struct Feed {
    state: Mutex<FeedState>,
    fanout: broadcast::Sender<Arc<FeedEvent>>,
    status: super::status::Status,
}

impl Default for Feed {
    fn default() -> Self {
        Feed::new()
    }
}

#[derive(Serialize)]
struct Envelope<'a, E: Serialize> {
    id: u64,
    round: u32,
    board: u32,
    event: Option<&'a E>,
    game: GameSummary,
}

impl Feed {
    /// An empty feed with the default replay capacity.
    pub fn new() -> Feed {
        Feed::with_replay_capacity(DEFAULT_REPLAY_CAPACITY)
    }

    /// An empty feed keeping the last `capacity` events for resumption.
    pub fn with_replay_capacity(capacity: usize) -> Feed {
        let (fanout, _) = broadcast::channel(FANOUT_CAPACITY);
        Feed {
            state: Mutex::new(FeedState {
                next_id: 1,
                first_id: 1,
                games: BTreeMap::new(),
                round_pgn: BTreeMap::new(),
                log: VecDeque::new(),
                log_capacity: capacity.max(1),
                current_round: None,
                time_origin_unix_ms: None,
            }),
            fanout,
            status: super::status::Status::default(),
        }
    }

    /// The process's links to the outside (lichess, cluster, web connections), for the
    /// status page and line.
    pub fn status(&self) -> &super::status::Status {
        &self.status
    }

    fn lock(&self) -> MutexGuard<'_, FeedState> {
        // A panic while holding the lock cannot leave the state half-updated in a way that
        // matters more than losing the whole feed, so keep serving.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A feed that starts as a copy of this one (its games, PGN, current round and event
    /// ids, not its log of events) and goes its own way: the public's copy of a live feed
    /// when the broadcast starts to be delayed. A client resuming with the last id it had
    /// gets nothing again; with an older one, a snapshot.
    pub fn fork(&self) -> Feed {
        let state = self.lock();
        let fork = Feed::with_replay_capacity(state.log_capacity);
        {
            let mut copy = fork.lock();
            copy.next_id = state.next_id;
            copy.first_id = state.next_id;
            copy.games = state.games.clone();
            copy.round_pgn = state.round_pgn.clone();
            copy.current_round = state.current_round;
            copy.time_origin_unix_ms = state.time_origin_unix_ms;
        }
        fork
    }

    /// Starts run `run` of a recorder (its journal session, from 1): the events published
    /// from now on have ids from `run × 2³²`, above every id of the earlier runs of the same
    /// journal. A client that resumes with a `Last-Event-ID` of an earlier run — the events
    /// a restarted recorder rebuilt are not the ones it sent before, nor in the same order —
    /// therefore gets a snapshot of the rebuilt state rather than events it did not miss.
    pub fn begin_run(&self, run: u64) {
        let first = run.saturating_mul(RUN_IDS).saturating_add(1);
        let mut state = self.lock();
        if first > state.next_id {
            state.next_id = first;
            state.first_id = first;
        }
    }

    /// Adds a game or updates its players and tags (published as a `game` event).
    pub fn upsert_game(&self, info: GameInfo) -> u64 {
        let (round, board) = (info.round, info.board);
        let mut state = self.lock();
        state.game(round, board).info = info;
        self.emit::<Event>(&mut state, round, board, "game", None, None)
    }

    /// Publishes an event of the game on `board` of `round` and returns its id. An alert is
    /// published by its kind only ([`FeedEvent::alert`]).
    pub fn publish(&self, round: u32, board: u32, event: Event) -> u64 {
        self.publish_as_of(round, board, event, Instant::now())
    }

    /// Like [`Feed::publish`], for an event that this feed shows as of `at`, which may be
    /// past (a delayed feed catching up): a clock reading in it has been running since `at`.
    pub fn publish_as_of(&self, round: u32, board: u32, event: Event, at: Instant) -> u64 {
        let mut state = self.lock();
        state.game(round, board).apply(&event, at);
        match event {
            Event::Alert(alert) => {
                let notice = serde_json::json!({ "kind": "alert" });
                self.emit(
                    &mut state,
                    round,
                    board,
                    "alert",
                    Some(&notice),
                    Some(alert),
                )
            }
            event => self.emit(
                &mut state,
                round,
                board,
                event_kind(&event),
                Some(&event),
                None,
            ),
        }
    }

    /// Says when session time 0 was (ms since 1970), so that alerts show the time of day.
    pub fn set_time_origin(&self, unix_ms: u64) {
        self.lock().time_origin_unix_ms = Some(unix_ms);
    }

    /// Records an arbiter action that the recorder accepted: settles the alerts it deals with
    /// and publishes it as an `arbiter` event.
    pub fn note_arbiter_action(&self, round: u32, board: u32, action: &ArbiterAction) -> u64 {
        let mut state = self.lock();
        state.game(round, board).resolve(action);
        self.emit(&mut state, round, board, "arbiter", Some(action), None)
    }

    fn emit<E: Serialize>(
        &self,
        state: &mut FeedState,
        round: u32,
        board: u32,
        kind: &'static str,
        event: Option<&E>,
        alert: Option<Alert>,
    ) -> u64 {
        let id = state.next_id;
        state.next_id += 1;
        let now = Instant::now();
        let game = state.game(round, board).summary(now);
        let json = serde_json::to_string(&Envelope {
            id,
            round,
            board,
            event,
            game,
        })
        .unwrap_or_else(|_| "null".to_string());
        let frame = Bytes::from(format!("id: {id}\nevent: {kind}\ndata: {json}\n\n"));
        let event = Arc::new(FeedEvent {
            id,
            round,
            board,
            kind,
            json,
            frame,
            published: now,
            alert,
        });
        if state.log.len() >= state.log_capacity {
            state.log.pop_front();
        }
        state.log.push_back(Arc::clone(&event));
        // No receivers is normal (nobody watching).
        let _ = self.fanout.send(event);
        id
    }

    /// Stores the PGN of one game (served at `/round/N/game/K.pgn`).
    pub fn set_pgn(&self, round: u32, board: u32, pgn: String) {
        let mut state = self.lock();
        let game = state.game(round, board);
        match &game.pgn {
            Some(doc) if *doc.text == *pgn => {}
            Some(doc) => game.pgn = Some(doc.replaced_by(pgn)),
            None => game.pgn = Some(PgnDoc::new(pgn)),
        }
    }

    /// Stores the PGN of a whole round (served at `/round/N/games.pgn`).
    pub fn set_round_pgn(&self, round: u32, pgn: String) {
        let mut state = self.lock();
        let next = match state.round_pgn.get(&round) {
            Some(doc) if *doc.text == *pgn => return,
            Some(doc) => doc.replaced_by(pgn),
            None => PgnDoc::new(pgn),
        };
        state.round_pgn.insert(round, next);
    }

    /// The PGN of one game, if the recorder stored one.
    pub fn game_pgn(&self, round: u32, board: u32) -> Option<PgnDoc> {
        self.lock().games.get(&(round, board))?.pgn.clone()
    }

    /// The PGN texts of round `round`'s games that have one, by board.
    pub fn game_texts(&self, round: u32) -> Vec<Arc<str>> {
        self.lock()
            .games
            .range((round, 0)..=(round, u32::MAX))
            .filter_map(|(_, g)| Some(Arc::clone(&g.pgn.as_ref()?.text)))
            .collect()
    }

    /// The PGN of a round: the stored one, or the stored games of the round joined.
    pub fn round_pgn(&self, round: u32) -> Option<PgnDoc> {
        let state = self.lock();
        if let Some(doc) = state.round_pgn.get(&round) {
            return Some(doc.clone());
        }
        let games: Vec<&PgnDoc> = state
            .games
            .range((round, 0)..=(round, u32::MAX))
            .filter_map(|(_, g)| g.pgn.as_ref())
            .collect();
        let modified = games.iter().map(|d| d.modified).max()?;
        let text = games
            .iter()
            .map(|d| d.text.trim_end())
            .collect::<Vec<_>>()
            .join("\n\n")
            + "\n";
        let mut doc = PgnDoc::new(text);
        doc.modified = modified;
        // Several games changed in the latest second: a date alone cannot tell their states
        // apart.
        let latest = whole_second(modified);
        doc.changed_within_second = games
            .iter()
            .filter(|d| whole_second(d.modified) == latest)
            .map(|d| usize::from(d.changed_within_second) + 1)
            .sum::<usize>()
            > 1;
        Some(doc)
    }

    /// Says which round is being recorded: pages that follow the event move to it.
    pub fn set_current_round(&self, round: u32) {
        self.lock().current_round = Some(round);
    }

    /// Has the pages follow round `round`, unless they already follow a later one.
    pub fn follow_round(&self, round: u32) {
        let mut state = self.lock();
        if state.current_round.is_none_or(|r| r <= round) {
            state.current_round = Some(round);
        }
    }

    /// The round being recorded: the one the recorder set, else the highest with games.
    pub fn current_round(&self) -> Option<u32> {
        let state = self.lock();
        state
            .current_round
            .or_else(|| state.rounds().last().copied())
    }

    /// Shows a game of an earlier round as its PGN file has it (players, moves, result), for
    /// browsing after the recorder moved on. Fails when a move cannot be replayed.
    pub fn show_recorded_game(
        &self,
        round: u32,
        board: u32,
        record: &crate::record::GameRecord,
    ) -> Result<(), crate::record::ReplayError> {
        let game = record.to_game()?;
        let tag = |name: &str| record.tag(name).unwrap_or("?").to_string();
        let fen = |position: &shakmaty::Chess| {
            shakmaty::fen::Fen::from_position(position, shakmaty::EnPassantMode::Legal).to_string()
        };
        let moves: Vec<MoveView> = game
            .moves()
            .iter()
            .zip(game.positions().windows(2))
            .zip(&record.moves)
            .enumerate()
            .map(|(i, ((played, around), recorded))| MoveView {
                ply: i as u32 + 1,
                san: played.san.clone(),
                uci: played.uci.clone(),
                side: shakmaty::Position::turn(&around[0]).into(),
                t_ms: recorded.t_ms.unwrap_or_default(),
                fen: fen(&around[1]),
            })
            .collect();
        let mut state = self.lock();
        let shown = state.game(round, board);
        shown.info = GameInfo {
            round,
            board,
            white: tag("White"),
            black: tag("Black"),
            tags: record.tags.clone(),
        };
        shown.start_fen = fen(game.start());
        shown.chess960 = record.chess960;
        shown.moves = moves;
        shown.result = (record.result != "*").then(|| (record.result.clone(), tag("Termination")));
        shown.pgn = Some(PgnDoc::new(crate::record::pgn::write_game(record)));
        self.emit::<Event>(&mut state, round, board, "game", None, None);
        Ok(())
    }

    /// Id of the last published event (0 before the first).
    pub fn last_id(&self) -> u64 {
        self.lock().next_id - 1
    }

    /// The rounds that have games, ascending.
    pub fn rounds(&self) -> Vec<u32> {
        self.lock().rounds()
    }

    /// Every round with its games.
    pub fn all_rounds(&self) -> Vec<RoundView> {
        self.lock().all_rounds(Instant::now())
    }

    /// One round with its games, if it has any.
    pub fn round(&self, round: u32) -> Option<RoundView> {
        let state = self.lock();
        let view = state.round_view(round, Instant::now());
        (!view.games.is_empty()).then_some(view)
    }

    /// Everything known about one game.
    pub fn game(&self, round: u32, board: u32) -> Option<GameDetail> {
        let state = self.lock();
        Some(state.games.get(&(round, board))?.detail(Instant::now()))
    }

    /// Every alert of a round's games, by board then time.
    pub fn alerts(&self, round: u32) -> Vec<BoardAlert> {
        let state = self.lock();
        let origin = state.time_origin_unix_ms;
        state
            .games
            .range((round, 0)..=(round, u32::MAX))
            .flat_map(|((_, board), g)| {
                g.alerts.iter().map(move |a| BoardAlert {
                    board: *board,
                    at_unix_ms: origin.map(|o| o.saturating_add(a.alert.t_ms)),
                    alert: a.clone(),
                })
            })
            .collect()
    }

    /// The logged events after id `after` within `scope` (`None` if the log no longer
    /// reaches back that far).
    pub fn events_after(&self, after: u64, scope: Scope) -> Option<Vec<Arc<FeedEvent>>> {
        self.lock().replay(after, scope)
    }

    /// Subscribes to `scope`. With `last_event_id` covered by the replay log the subscriber
    /// first receives exactly the events it missed; otherwise a snapshot. Either way the
    /// live receiver is taken under the same lock, so nothing is lost or sent twice.
    pub fn subscribe(&self, scope: Scope, last_event_id: Option<u64>) -> Subscription {
        let state = self.lock();
        let live = self.fanout.subscribe();
        let last_id = state.next_id - 1;
        let replay = last_event_id.and_then(|after| state.replay(after, scope));
        let resumed = replay.is_some();
        let initial = match replay {
            Some(events) => events.iter().map(|e| e.frame.clone()).collect(),
            None => vec![state.snapshot_frame(scope, Instant::now())],
        };
        Subscription {
            initial,
            last_id,
            live,
            resumed,
        }
    }

    /// Frames to catch a lagging subscriber up after `after`: the missed events, or a new
    /// snapshot if the log has moved on. Returns the frames and the id they reach.
    pub fn catch_up(&self, scope: Scope, after: u64) -> (Vec<Bytes>, u64) {
        let state = self.lock();
        let last = state.next_id - 1;
        match state.replay(after, scope) {
            Some(events) => (events.iter().map(|e| e.frame.clone()).collect(), last),
            None => (vec![state.snapshot_frame(scope, Instant::now())], last),
        }
    }

    /// Number of live subscribers.
    pub fn subscribers(&self) -> usize {
        self.fanout.receiver_count()
    }
}

/// The state an alert still open takes when its game ends: a penalty for an illegal move
/// (Article 7.5) is still to decide, as it can change the record or the result; the rest is
/// overtaken by the end.
fn after_end(alert: &Alert) -> AlertState {
    if alert.article.starts_with("7.5") && alert.severity != crate::act::Severity::Info {
        AlertState::OpenAfterEnd
    } else {
        AlertState::Overtaken
    }
}

/// The SSE event name of an [`Event`].
pub fn event_kind(event: &Event) -> &'static str {
    match event {
        Event::GameStart { .. } => "game_start",
        Event::Move { .. } => "move",
        Event::Revision { .. } => "revision",
        Event::MoveCompleted { .. } => "move_completed",
        Event::Clock { .. } => "clock",
        Event::Alert(_) => "alert",
        Event::BoardState { .. } => "board_state",
        Event::Result { .. } => "result",
        Event::GameClosed { .. } => "game_closed",
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Move `ply`, made at `ply` seconds.
    pub(crate) fn mv(ply: u32, uci: &str, san: &str, fen: &str) -> Event {
        Event::Move {
            ply,
            uci: uci.into(),
            san: san.into(),
            t_ms: u64::from(ply) * 1000,
            side: if ply % 2 == 1 {
                ColorName::White
            } else {
                ColorName::Black
            },
            fen: fen.into(),
        }
    }

    pub(crate) const AFTER_E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1";

    /// A board set up again after its game: the desk says the result is awaited (and asks
    /// about a restart after few moves) until the arbiter gives it, then "after the game";
    /// the game's moves stay.
    #[test]
    fn a_closed_game_is_after_the_game_or_awaits_its_result() {
        let feed = Feed::new();
        feed.publish(1, 3, mv(1, "e2e4", "e4", AFTER_E4));
        let closed = Event::GameClosed {
            t_ms: 5_000,
            plies: 1,
            result: "*".into(),
            restart: true,
        };
        feed.publish(1, 3, closed);
        let summary = feed.game(1, 3).unwrap().summary;
        assert_eq!(summary.ply, 1);
        assert!(summary.restart_asked);
        assert!(
            summary
                .after_game
                .as_deref()
                .is_some_and(|s| s.starts_with("board reset, result awaited")),
            "{summary:?}"
        );
        feed.publish(
            1,
            3,
            Event::Result {
                result: "1-0".into(),
                reason: "arbiter".into(),
                t_ms: 9_000,
            },
        );
        let summary = feed.game(1, 3).unwrap().summary;
        assert_eq!(summary.after_game.as_deref(), Some("after the game"));
        assert!(!summary.restart_asked);
        assert_eq!(summary.ply, 1);
        assert_eq!(summary.result.as_deref(), Some("1-0"));
    }

    #[test]
    fn ids_increase_and_state_follows_events() {
        let feed = Feed::new();
        let a = feed.publish(1, 1, mv(1, "e2e4", "e4", AFTER_E4));
        let b = feed.publish(1, 2, mv(1, "d2d4", "d4", "x b - - 0 1"));
        assert_eq!((a, b), (1, 2));
        let game = feed.game(1, 1).expect("game exists");
        assert_eq!(game.summary.last_move.as_deref(), Some("e2e4"));
        assert_eq!(game.summary.fen, AFTER_E4);
        feed.publish(
            1,
            1,
            Event::Revision {
                ply: 1,
                withdrawn: vec!["e2e4".into()],
                t_ms: 5,
            },
        );
        let game = feed.game(1, 1).expect("game exists");
        assert_eq!(game.summary.ply, 0);
        assert_eq!(game.summary.fen, STANDARD_FEN);
    }

    #[test]
    fn resume_replays_exactly_the_missed_events_of_the_scope() {
        let feed = Feed::new();
        for ply in 1..=3 {
            feed.publish(1, 1, mv(ply, "e2e4", "e4", AFTER_E4));
            feed.publish(2, 1, mv(ply, "e2e4", "e4", AFTER_E4));
        }
        let sub = feed.subscribe(Scope::Round(1), Some(2));
        assert!(sub.resumed);
        let ids: Vec<String> = sub
            .initial
            .iter()
            .map(|f| {
                String::from_utf8_lossy(f)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string()
            })
            .collect();
        assert_eq!(ids, ["id: 3", "id: 5"]);
    }

    #[test]
    fn resume_beyond_the_log_gets_a_snapshot() {
        let feed = Feed::with_replay_capacity(2);
        for ply in 1..=5 {
            feed.publish(1, 1, mv(ply, "e2e4", "e4", AFTER_E4));
        }
        let sub = feed.subscribe(Scope::Round(1), Some(1));
        assert!(!sub.resumed);
        assert!(String::from_utf8_lossy(&sub.initial[0]).starts_with("id: 5\nevent: snapshot\n"));
        let sub = feed.subscribe(Scope::Round(1), Some(99));
        assert!(!sub.resumed, "an id from another run is not resumable");
    }

    #[test]
    fn a_later_run_numbers_above_every_earlier_id_and_old_ids_get_a_snapshot() {
        let first = Feed::new();
        first.begin_run(1);
        let before = first.publish(1, 1, mv(1, "e2e4", "e4", AFTER_E4));
        let restarted = Feed::new();
        restarted.begin_run(2);
        for _ in 0..3 {
            let id = restarted.publish(1, 1, mv(1, "e2e4", "e4", AFTER_E4));
            assert!(id > before, "id {id} repeats an id of the first run");
        }
        let sub = restarted.subscribe(Scope::Round(1), Some(before));
        assert!(!sub.resumed, "an id of the first run gets a snapshot");
        let all = restarted
            .events_after(0, Scope::All)
            .expect("from the start");
        assert_eq!(all.len(), 3);
    }

    #[test]
    fn arbiter_actions_settle_alerts() {
        let feed = Feed::new();
        let alert = Alert {
            article: "7.5.1".into(),
            side: Some(ColorName::White),
            ply: 3,
            t_ms: 10,
            evidence_ms: vec![9],
            squares: vec!["e4".into()],
            severity: crate::act::Severity::Critical,
            message: "illegal move".into(),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        };
        feed.publish(1, 4, Event::Alert(alert));
        assert_eq!(feed.game(1, 4).map(|g| g.summary.open_alerts), Some(1));
        feed.note_arbiter_action(
            1,
            4,
            &ArbiterAction::DecidePenalty {
                ply: 2,
                accept: true,
            },
        );
        assert_eq!(feed.game(1, 4).map(|g| g.summary.open_alerts), Some(1));
        feed.note_arbiter_action(
            1,
            4,
            &ArbiterAction::DecidePenalty {
                ply: 3,
                accept: true,
            },
        );
        assert_eq!(feed.game(1, 4).map(|g| g.summary.open_alerts), Some(0));
    }

    fn alert(article: &str, severity: crate::act::Severity, ply: u32, t_ms: u64) -> Alert {
        Alert {
            article: article.into(),
            side: Some(ColorName::Black),
            ply,
            t_ms,
            evidence_ms: vec![t_ms],
            squares: vec!["e5".into()],
            severity,
            message: format!("what {article} says"),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        }
    }

    fn states(feed: &Feed) -> Vec<(String, AlertState, Option<String>)> {
        feed.alerts(1)
            .into_iter()
            .map(|a| (a.alert.alert.article, a.alert.state, a.alert.decision))
            .collect()
    }

    /// When a game ends before the arbiter decided, a penalty for an illegal move stays to
    /// decide and the rest is overtaken; a decision after the end says what it was, and a
    /// game reopened opens the overtaken alerts again.
    #[test]
    fn a_game_end_leaves_penalties_to_decide_and_overtakes_the_rest() {
        use crate::act::Severity::{Critical, Warning};
        let feed = Feed::new();
        feed.publish(1, 1, Event::Alert(alert("7.5.1", Critical, 6, 4000)));
        feed.publish(1, 1, Event::Alert(alert("7.5.5", Critical, 6, 4000)));
        feed.publish(1, 1, Event::Alert(alert("4.3.1", Warning, 9, 7000)));
        let result = |result: &str| Event::Result {
            result: result.into(),
            reason: "draw agreed".into(),
            t_ms: 9000,
        };
        feed.publish(1, 1, result("1/2-1/2"));
        let after_end: Vec<AlertState> = states(&feed).into_iter().map(|s| s.1).collect();
        assert_eq!(
            after_end,
            [
                AlertState::OpenAfterEnd,
                AlertState::OpenAfterEnd,
                AlertState::Overtaken
            ]
        );
        assert_eq!(feed.game(1, 1).map(|g| g.summary.open_alerts), Some(2));
        feed.note_arbiter_action(
            1,
            1,
            &ArbiterAction::DecidePenalty {
                ply: 6,
                accept: false,
            },
        );
        let decided = states(&feed);
        assert_eq!(decided[0].1, AlertState::Decided);
        assert_eq!(decided[1].2.as_deref(), Some("no penalty"));
        assert_eq!(decided[2].1, AlertState::Overtaken);
        feed.publish(1, 1, result("*"));
        assert_eq!(states(&feed)[2].1, AlertState::Open, "the game goes on");
        // An alert raised after the end is judged the same way at once.
        feed.publish(1, 1, result("0-1"));
        feed.publish(1, 1, Event::Alert(alert("7.2.1", Warning, 10, 9500)));
        assert_eq!(states(&feed)[3].1, AlertState::Overtaken);
    }

    /// Spectators read the feed's JSON and frames: an alert there names its kind only, and
    /// the game's JSON carries neither alerts nor their count. The arbiter's queue has it
    /// all, with the clocks and the time of day of the alert.
    #[test]
    fn spectators_see_no_alert_and_the_queue_has_clocks_and_time_of_day() {
        let feed = Feed::new();
        feed.set_time_origin(1_700_000_000_000);
        feed.publish(1, 1, mv(1, "e2e4", "e4", AFTER_E4));
        feed.publish(
            1,
            1,
            Event::Clock {
                white_ms: 890_000,
                black_ms: 900_000,
                ply: 1,
                t_ms: 1500,
            },
        );
        let id = feed.publish(
            1,
            1,
            Event::Alert(alert("7.5.1", crate::act::Severity::Critical, 2, 2500)),
        );
        let logged = feed.events_after(id - 1, Scope::All).expect("logged");
        let public = String::from_utf8_lossy(&logged[0].frame).to_string();
        assert!(public.contains("\"kind\":\"alert\""), "{public}");
        assert!(!public.contains("what 7.5.1 says"), "{public}");
        assert!(!public.contains("open_alerts"), "{public}");
        assert!(!logged[0].json.contains("7.5.1"), "{}", logged[0].json);
        assert_eq!(logged[0].alert.as_ref().map(|a| a.ply), Some(2));
        let detail = serde_json::to_string(&feed.game(1, 1).expect("game")).expect("json");
        assert!(
            !detail.contains("7.5.1") && !detail.contains("alerts"),
            "{detail}"
        );
        let queue = feed.alerts(1);
        assert_eq!(queue[0].at_unix_ms, Some(1_700_000_002_500));
        assert_eq!(
            queue[0].alert.clocks,
            Some(ClockReading {
                white_ms: 890_000,
                black_ms: 899_000,
            }),
            "Black's clock ran for the second between the reading and the alert"
        );
    }

    #[test]
    fn round_pgn_joins_game_pgns_and_keeps_etag_for_same_text() {
        let feed = Feed::new();
        feed.set_pgn(1, 2, "[White \"B\"]\n\n*\n".into());
        feed.set_pgn(1, 1, "[White \"A\"]\n\n*\n".into());
        let doc = feed.round_pgn(1).expect("joined");
        assert!(doc.text.find("\"A\"") < doc.text.find("\"B\""));
        let tag = feed.game_pgn(1, 1).expect("stored").etag;
        feed.set_pgn(1, 1, "[White \"A\"]\n\n*\n".into());
        assert_eq!(feed.game_pgn(1, 1).expect("stored").etag, tag);
        feed.set_pgn(1, 1, "[White \"A\"]\n\n1. e4 *\n".into());
        assert_ne!(feed.game_pgn(1, 1).expect("stored").etag, tag);
    }
}
