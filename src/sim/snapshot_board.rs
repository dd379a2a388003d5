//! Virtual boards that send whole-board frames (Millennium, Certabo, Sentio, Chessnut) on a
//! pseudo-terminal, written from the protocol documents.
//!
//! Each one plays a scripted timeline of [`Observation`]s in game coordinates (as the
//! virtual DGT board does; clock presses are ignored: these boards have no clock) and sends
//! its picture every scan, at its own rate:
//! * Millennium answers `S`, `V`, `R`/`W` (the registers; 0x01 sets the scan time, 0x02 the
//!   report mode), `L`/`X` (LEDs) and ignores `T`; it sends a status on every scan once a
//!   host spoke to it (register 0x02 = 0), only on change with 3, none with 1.
//! * Chessnut streams its position after `21 01 00` (acknowledged `23 01 00`), answers the
//!   battery request and keeps the LEDs.
//! * Certabo streams tag ids from power-up, with noise: a wrong id now and then on an
//!   occupied square and a random id on some empty ones (the readers do that). Each piece
//!   has its own tag; a piece lifted keeps its tag in the hand, and a promotion takes a
//!   spare queen, shown on d3/d6 before the game so that the host can learn it.
//! * Sentio streams occupancy.
//!
//! Nothing is written while the host leaves more than a few frames unread (a host that does
//! not read loses frames, it does not get them late); the script starts when the host has
//! read the board for a moment (Certabo, Sentio) or spoke to it (Millennium, Chessnut).

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, Color, Piece, Role, Square};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::board::kind::BoardKind;
use crate::board::orientation::Orientation;
use crate::board::{Observation, ObservationKind};
use crate::sim::pty::{Pty, StablePath};
use crate::wire::certabo::{self, TagId};
use crate::wire::{chessnut, millennium};

/// Settings of a virtual snapshot board.
#[derive(Debug, Clone)]
pub struct SnapshotBoardConfig {
    /// The kind of board (not DGT: that is `sim::virtual_board`).
    pub kind: BoardKind,
    /// The stable port path (a symbolic link to the pseudo-terminal).
    pub path: PathBuf,
    /// What happens on the board, in game coordinates, `t_ms` from the start of the script.
    pub script: Vec<Observation>,
    /// Speed factor: 1.0 plays in real time.
    pub speed: f64,
    /// The pieces before the script starts.
    pub initial: Board,
    /// Time between two pictures; default the kind's scan period.
    pub scan_period: Duration,
    /// Seed of the Certabo noise and tag ids.
    pub seed: u64,
    /// Certabo: the chance that an occupied square reads a wrong id in one frame.
    pub misread: f64,
    /// Certabo: the chance that an empty square reads a random id in one frame (real
    /// frames of a start position read one on about a third of the empty squares).
    pub ghost: f64,
    /// Certabo: spare queens stand on d3 (White) and d6 (Black) until the script starts.
    pub spare_queens: bool,
    /// How long after the host began reading (or spoke) the script starts, in real time.
    pub start_delay: Duration,
}

impl SnapshotBoardConfig {
    /// A board of `kind` at `path` in the start position playing `script` in real time.
    pub fn new(kind: BoardKind, path: impl Into<PathBuf>, script: Vec<Observation>) -> Self {
        SnapshotBoardConfig {
            kind,
            path: path.into(),
            script,
            speed: 1.0,
            initial: Board::new(),
            scan_period: Duration::from_millis(kind.scan_period_ms()),
            seed: 1,
            misread: 0.02,
            ghost: 0.3,
            spare_queens: true,
            start_delay: Duration::from_millis(1500),
        }
    }
}

/// What the board shows the outside.
#[derive(Debug, Default)]
struct Seen {
    leds: Vec<u8>,
    frames: u64,
}

/// A running virtual snapshot board.
#[derive(Debug)]
pub struct SnapshotBoard {
    path: PathBuf,
    seen: Arc<Mutex<Seen>>,
    finished: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl SnapshotBoard {
    /// Opens the pseudo-terminal, points `config.path` at it and starts the board. Must be
    /// called inside a tokio runtime.
    pub fn spawn(config: SnapshotBoardConfig) -> io::Result<SnapshotBoard> {
        let pty = Pty::open()?;
        let link = StablePath::new(config.path.clone());
        link.point_to(pty.slave_path())?;
        let (finished_tx, finished) = watch::channel(config.script.is_empty());
        let seen = Arc::new(Mutex::new(Seen::default()));
        let path = config.path.clone();
        let state = BoardState::new(&config);
        let task = tokio::spawn(
            Runner {
                config,
                pty,
                _link: link,
                state,
                seen: Arc::clone(&seen),
                finished: finished_tx,
            }
            .run(),
        );
        Ok(SnapshotBoard {
            path,
            seen,
            finished,
            task,
        })
    }

    /// The port path a driver opens.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Waits until the whole script has been played.
    pub async fn finished(&self) {
        let mut rx = self.finished.clone();
        let _ = rx.wait_for(|done| *done).await;
    }

    /// The DGT fields (0 = a8) whose LEDs are lit now.
    pub fn lit_fields(&self) -> Vec<u8> {
        self.seen.lock().map(|s| s.leds.clone()).unwrap_or_default()
    }

    /// Pictures sent so far.
    pub fn frames_sent(&self) -> u64 {
        self.seen.lock().map(|s| s.frames).unwrap_or(0)
    }
}

impl Drop for SnapshotBoard {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The pieces, and for Certabo the tag of each piece on the board and in the hand.
#[derive(Debug)]
struct BoardState {
    board: Board,
    tags: HashMap<Square, TagId>,
    /// Tags of pieces off the board, most recent last (a lifted piece, the spare queens).
    off_board: Vec<(Piece, TagId)>,
    spares_shown: bool,
    rng: ChaCha8Rng,
}

impl BoardState {
    fn new(config: &SnapshotBoardConfig) -> BoardState {
        let mut state = BoardState {
            board: config.initial.clone(),
            tags: HashMap::new(),
            off_board: Vec::new(),
            spares_shown: config.kind == BoardKind::Certabo && config.spare_queens,
            rng: ChaCha8Rng::seed_from_u64(config.seed),
        };
        let squares: Vec<Square> = state.board.occupied().into_iter().collect();
        for sq in squares {
            let tag = state.fresh_tag();
            state.tags.insert(sq, tag);
        }
        if state.spares_shown {
            for (field, color) in certabo::SPARE_QUEEN_FIELDS {
                let tag = state.fresh_tag();
                let sq = Orientation::Normal.field_to_square(field);
                state.board.set_piece_at(sq, Role::Queen.of(color));
                state.tags.insert(sq, tag);
            }
        }
        state
    }

    /// A tag id no piece has, shaped as real Certabo tags are (`3 0 83..85 x y`).
    fn fresh_tag(&mut self) -> TagId {
        loop {
            let tag = [
                3,
                0,
                self.rng.gen_range(83..=85),
                self.rng.gen_range(0..=255),
                self.rng.gen_range(1..=255),
            ];
            let used = self.tags.values().any(|t| *t == tag)
                || self.off_board.iter().any(|(_, t)| *t == tag);
            if !used {
                return tag;
            }
        }
    }

    /// What a reader returns now and then: five random bytes.
    fn noise_tag(&mut self) -> TagId {
        let mut tag = [0; 5];
        self.rng.fill(&mut tag[..]);
        tag
    }

    /// Takes the spare queens off (the arbiter puts them beside the board).
    fn remove_spares(&mut self) {
        if !std::mem::take(&mut self.spares_shown) {
            return;
        }
        for (field, _) in certabo::SPARE_QUEEN_FIELDS {
            let sq = Orientation::Normal.field_to_square(field);
            if let (Some(piece), Some(tag)) =
                (self.board.remove_piece_at(sq), self.tags.remove(&sq))
            {
                self.off_board.push((piece, tag));
            }
        }
    }

    fn apply(&mut self, kind: &ObservationKind) {
        match kind {
            ObservationKind::Emptied(sq) => {
                if let (Some(piece), Some(tag)) =
                    (self.board.remove_piece_at(*sq), self.tags.remove(sq))
                {
                    self.off_board.push((piece, tag));
                }
            }
            ObservationKind::Placed(sq, piece) => {
                let piece = piece.unwrap_or(Role::Pawn.of(Color::White));
                if let (Some(old), Some(tag)) =
                    (self.board.remove_piece_at(*sq), self.tags.remove(sq))
                {
                    self.off_board.push((old, tag));
                }
                let tag = match self.off_board.iter().rposition(|(p, _)| *p == piece) {
                    Some(i) => self.off_board.remove(i).1,
                    None => self.fresh_tag(),
                };
                self.board.set_piece_at(*sq, piece);
                self.tags.insert(*sq, tag);
            }
            _ => {}
        }
    }

    /// The pieces in DGT field order.
    fn fields(&self) -> [Option<Piece>; 64] {
        let mut fields = [None; 64];
        for (sq, piece) in self.board.iter() {
            fields[usize::from(Orientation::Normal.square_to_field(sq))] = Some(piece);
        }
        fields
    }

    /// One Certabo frame with noise.
    fn tag_frame(&mut self, misread: f64, ghost: f64) -> certabo::Frame {
        let mut tags = Box::new([certabo::NO_TAG; 64]);
        for (field, slot) in (0u8..).zip(tags.iter_mut()) {
            let sq = Orientation::Normal.field_to_square(field);
            let chance = if self.tags.contains_key(&sq) {
                misread
            } else {
                ghost
            };
            *slot = if self.rng.gen_bool(chance.clamp(0.0, 1.0)) {
                self.noise_tag()
            } else {
                self.tags.get(&sq).copied().unwrap_or(certabo::NO_TAG)
            };
        }
        certabo::Frame::Tags(tags)
    }
}

struct Runner {
    config: SnapshotBoardConfig,
    pty: Pty,
    _link: StablePath,
    state: BoardState,
    seen: Arc<Mutex<Seen>>,
    finished: watch::Sender<bool>,
}

/// Unread bytes above which the board does not write (the host is not reading).
const UNREAD_LIMIT: usize = 2048;

impl Runner {
    async fn run(mut self) {
        let kind = self.config.kind;
        let mut scan = tokio::time::interval(self.config.scan_period);
        scan.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut script = std::mem::take(&mut self.config.script)
            .into_iter()
            .peekable();
        let mut started: Option<Instant> = None;
        let mut host_seen: Option<Instant> = None;
        let mut streaming = matches!(kind, BoardKind::Certabo | BoardKind::Sentio);
        let mut report_mode = 0u8;
        let mut registers = [0u8; 256];
        registers[usize::from(millennium::REG_SCAN_TIME)] = millennium::DEFAULT_SCAN_TIME;
        let mut last_sent: Option<Vec<u8>> = None;
        let mut millennium_commands = millennium::CommandDecoder::new();
        let mut chessnut_commands = chessnut::CommandDecoder::new();
        let mut certabo_leds: Vec<u8> = Vec::new();
        let mut buf = [0u8; 512];
        loop {
            tokio::select! {
                read = self.pty.read(&mut buf) => {
                    let Ok(n) = read else { return };
                    host_seen.get_or_insert_with(Instant::now);
                    let mut replies = Vec::new();
                    match kind {
                        BoardKind::Millennium => {
                            let mut commands = Vec::new();
                            millennium_commands.push(&buf[..n], &mut commands);
                            for command in commands.into_iter().flatten() {
                                streaming = true;
                                replies.extend(self.millennium_reply(&command, &mut registers, &mut scan));
                                report_mode = registers[usize::from(millennium::REG_AUTO_REPORT)];
                            }
                        }
                        BoardKind::Chessnut => {
                            let mut commands = Vec::new();
                            chessnut_commands.push(&buf[..n], &mut commands);
                            for command in commands.into_iter().flatten() {
                                match command {
                                    chessnut::Command::RealTime => {
                                        streaming = true;
                                        replies.extend(chessnut::Message::ModeAck(0).encode());
                                    }
                                    chessnut::Command::Battery => replies.extend(
                                        chessnut::Message::Battery { percent: 87, charging: false }.encode(),
                                    ),
                                    chessnut::Command::Leds(bytes) => self.show_leds(chessnut::lit_fields(&bytes)),
                                    _ => {}
                                }
                            }
                        }
                        _ => {
                            // Certabo LED commands are 8 raw bytes.
                            certabo_leds.extend_from_slice(&buf[..n]);
                            while certabo_leds.len() >= 8 {
                                let bytes: [u8; 8] = certabo_leds[..8].try_into().unwrap_or([0; 8]);
                                certabo_leds.drain(..8);
                                self.show_leds(certabo::lit_fields(&bytes));
                            }
                        }
                    }
                    if !replies.is_empty() && self.pty.write_all(&replies).await.is_err() {
                        return;
                    }
                }
                _ = scan.tick() => {
                    let now = Instant::now();
                    if started.is_none() && let Some(seen) = host_seen && now >= seen + self.config.start_delay {
                        self.state.remove_spares();
                        started = Some(now + self.config.start_delay);
                    }
                    if let Some(t0) = started {
                        let elapsed = now.saturating_duration_since(t0).as_secs_f64() * 1000.0 * self.config.speed;
                        while let Some(obs) = script.next_if(|o| (o.t_ms as f64) <= elapsed && now >= t0) {
                            self.state.apply(&obs.kind);
                        }
                        if script.peek().is_none() {
                            let _ = self.finished.send(true);
                        }
                    }
                    if !streaming || (kind == BoardKind::Millennium && report_mode == 1) {
                        continue;
                    }
                    let frame = self.frame();
                    if kind == BoardKind::Millennium && report_mode >= 3 && last_sent.as_ref() == Some(&frame) {
                        continue;
                    }
                    // Certabo and Sentio stream before any host reads: the script waits for
                    // a host that read what was sent.
                    if host_seen.is_none() && matches!(self.pty.unread(), Ok(0)) && last_sent.is_some() {
                        host_seen = Some(now);
                    }
                    if self.pty.unread().unwrap_or(0) > UNREAD_LIMIT {
                        continue;
                    }
                    if self.pty.write_all(&frame).await.is_err() {
                        return;
                    }
                    if let Ok(mut seen) = self.seen.lock() {
                        seen.frames += 1;
                    }
                    last_sent = Some(frame);
                }
            }
        }
    }

    fn show_leds(&self, fields: Vec<u8>) {
        if let Ok(mut seen) = self.seen.lock() {
            seen.leds = fields;
        }
    }

    /// The picture of this scan, encoded for the kind.
    fn frame(&mut self) -> Vec<u8> {
        match self.config.kind {
            BoardKind::Millennium => millennium::Message::Status(self.state.fields()).encode(),
            BoardKind::Chessnut => {
                let fields = self.state.fields();
                let mut squares = [None; 64];
                for (i, slot) in squares.iter_mut().enumerate() {
                    *slot = fields[usize::from(chessnut::field_of(i))];
                }
                chessnut::Message::Position {
                    squares,
                    tail: [0xFF; 4],
                }
                .encode()
            }
            BoardKind::Sentio => {
                let mut ranks = [0u8; 8];
                for (f, piece) in self.state.fields().iter().enumerate() {
                    if piece.is_some() {
                        ranks[f / 8] |= 0x80 >> (f % 8);
                    }
                }
                certabo::Frame::Occupancy(ranks).encode()
            }
            _ => self
                .state
                .tag_frame(self.config.misread, self.config.ghost)
                .encode(),
        }
    }

    fn millennium_reply(
        &mut self,
        command: &millennium::Command,
        registers: &mut [u8; 256],
        scan: &mut tokio::time::Interval,
    ) -> Vec<u8> {
        use millennium::{Command as C, Message as M};
        let reply = match command {
            C::Status => M::Status(self.state.fields()),
            C::Version => M::Version { major: 2, minor: 1 },
            C::Read { address } => M::Register {
                address: *address,
                value: registers[usize::from(*address)],
            },
            C::Write { address, value } => {
                registers[usize::from(*address)] = *value;
                if *address == millennium::REG_SCAN_TIME {
                    let units = u64::from((*value).max(15));
                    *scan = tokio::time::interval(Duration::from_micros(
                        units * millennium::SCAN_TIME_UNIT_US,
                    ));
                }
                M::Written {
                    address: *address,
                    value: *value,
                }
            }
            C::Leds { patterns, .. } => {
                let lit = (0u8..64)
                    .filter(|&f| {
                        millennium::square_leds([f], 0xFF)
                            .iter()
                            .zip(patterns.iter())
                            .all(|(&want, &have)| want == 0 || have != 0)
                    })
                    .collect();
                self.show_leds(lit);
                M::LedsSet
            }
            C::LedsOff => {
                self.show_leds(Vec::new());
                M::LedsOff
            }
            C::Reset => return Vec::new(),
        };
        reply.encode()
    }
}
