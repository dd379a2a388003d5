//! The delay line: releases what the arbiter saw into the public's feed, PGN folder and
//! lichess push once the round's transmission delay has passed since it happened.
//!
//! Every change arrives stamped with the time it happened (the recorder's clock: a tokio
//! [`Instant`]) and waits in its round's queue, in order, until `stamp + delay`. The delay is
//! the round's at the change's stamp ([`Schedule`]): a round's delay may grow while it is
//! played, never shrink, and a change is never released before one queued ahead of it.
//! Released changes are applied to the public [`Feed`] as the live feed took them, with a
//! clock reading counted as read at its due time: a page shows the clock as it stood at the
//! delayed moment and counting down from there, however late the line releases it (after a
//! restart, everything already due is released at once).
//!
//! The public folder is written for the rounds with a delay only (the others' files are the
//! arbiter's own, written by the recorder): a game's file when its text is released, the
//! round's `games.pgn`, `index.json` and lichess push at most every [`ROUND_FILES_DELAY`],
//! as the recorder does with its own.
//!
//! Which round the public's pages follow changes when the round opened as the public sees
//! it, and not before the other rounds' changes made until then are out: a spectator is not
//! taken to the next round while the end of the last one is still to come.

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;

use super::feed::Feed;
use super::lichess::Pusher;
use crate::act::Event;
use crate::record::arbiter::ArbiterAction;
use crate::recorder::layout::{BoardSummary, FileJob, FolderWriter, OutputFolder, combine};
use crate::recorder::{EventConfig, ROUND_FILES_DELAY};

/// How long a finished round's lichess push may take to send its last version.
const PUSH_FINISH: Duration = Duration::from_secs(10);

/// A round's transmission delay over time: from each instant on, the delay given then.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Schedule {
    steps: Vec<(Instant, Duration)>,
}

impl Schedule {
    /// The delay of a change made at `at`: the one in force then (the first one for a change
    /// made before the round's delay was given).
    pub fn at(&self, at: Instant) -> Duration {
        self.steps
            .iter()
            .rev()
            .find(|(from, _)| *from <= at)
            .or(self.steps.first())
            .map_or(Duration::ZERO, |(_, delay)| *delay)
    }

    /// Each delay given, with the instant it applies from.
    pub fn steps(&self) -> impl Iterator<Item = (Instant, Duration)> + '_ {
        self.steps.iter().copied()
    }

    /// The latest delay given.
    pub fn latest(&self) -> Duration {
        self.steps.last().map_or(Duration::ZERO, |(_, d)| *d)
    }

    /// True once the round has had a delay: its public files are the delay line's.
    pub fn delayed(&self) -> bool {
        self.steps.iter().any(|(_, d)| !d.is_zero())
    }

    /// Makes the delay `delay` from `from` on, unless it is already that long or longer
    /// then (a delay is never shortened). True when it changed.
    pub fn lengthen(&mut self, from: Instant, delay: Duration) -> bool {
        if !self.steps.is_empty() && delay <= self.at(from) {
            return false;
        }
        let at = self.steps.partition_point(|(f, _)| *f <= from);
        self.steps.insert(at, (from, delay));
        // A later step shorter than this one would shorten it.
        for step in &mut self.steps[at..] {
            step.1 = step.1.max(delay);
        }
        true
    }
}

/// Something the public sees once its time has come.
#[derive(Debug, Clone)]
pub(crate) enum Change {
    /// An event of a game.
    Event(u32, Event),
    /// An arbiter action the recorder accepted.
    Arbiter(u32, ArbiterAction),
    /// A game's new PGN and summary.
    Text(u32, String, BoardSummary),
    /// The round as the arbiter's copy of its files has it: the files are copied to the
    /// public folder and its games shown (a round whose end was still to be released when
    /// the recorder stopped).
    CopyRound(PathBuf),
}

/// What the line is told.
#[derive(Debug)]
pub(crate) enum Message {
    /// A change of round `round` made at `at`.
    Change {
        round: u32,
        at: Instant,
        change: Change,
    },
    /// Round `round`'s delay from `from` on.
    Delay {
        round: u32,
        from: Instant,
        delay: Duration,
    },
    /// The round's event (number and players), for its `index.json`.
    Config(Box<EventConfig>),
    /// The public's pages follow round `round`, which opened at `at`.
    CurrentRound { round: u32, at: Instant },
    /// Push round `round`'s released PGN to lichess.
    Pusher { round: u32, pusher: Pusher },
}

/// A change waiting for its time.
#[derive(Debug)]
struct Queued {
    at: Instant,
    change: Change,
}

/// One round's part of the line.
#[derive(Default)]
struct RoundLine {
    schedule: Schedule,
    queue: VecDeque<Queued>,
    /// When the last change released was due: the next one is not due before.
    last_due: Option<Instant>,
    /// Each board's released summary, for `index.json`.
    summaries: BTreeMap<u32, BoardSummary>,
    config: Option<EventConfig>,
    /// When the round's files (games.pgn, index.json, the push) are rewritten next.
    files_due: Option<Instant>,
    index_changed: bool,
    folder_ready: bool,
    pusher: Option<Pusher>,
}

impl RoundLine {
    /// When the change at the front of the queue is due.
    fn front_due(&self) -> Option<Instant> {
        let front = self.queue.front()?;
        let due = front.at + self.schedule.at(front.at);
        Some(self.last_due.map_or(due, |last| last.max(due)))
    }
}

/// The task's state.
struct Line {
    public: Arc<Feed>,
    folder: Option<(OutputFolder, FolderWriter)>,
    rounds: BTreeMap<u32, RoundLine>,
    /// Rounds the public's pages are to follow, with when they opened.
    openings: BTreeMap<u32, Instant>,
}

/// Starts the line releasing into `public` and, for rounds with a delay, the public folder
/// `folder`; it ends when the sender is dropped.
pub(crate) fn start(
    public: Arc<Feed>,
    folder: Option<OutputFolder>,
) -> mpsc::UnboundedSender<Message> {
    let (sender, receiver) = mpsc::unbounded_channel();
    let folder = folder.map(|out| {
        let writer = FolderWriter::spawn(out.clone(), ROUND_FILES_DELAY, "public-files", say);
        (out, writer)
    });
    let line = Line {
        public,
        folder,
        rounds: BTreeMap::new(),
        openings: BTreeMap::new(),
    };
    tokio::spawn(line.run(receiver));
    sender
}

impl Line {
    async fn run(mut self, mut messages: mpsc::UnboundedReceiver<Message>) {
        loop {
            let wake = self.next_wake();
            tokio::select! {
                message = messages.recv() => match message {
                    Some(message) => {
                        self.take(message);
                        while let Ok(more) = messages.try_recv() {
                            self.take(more);
                        }
                    }
                    None => break,
                },
                () = until(wake) => {}
            }
            self.release(Instant::now());
        }
        for round in self.rounds.values_mut() {
            if let Some(pusher) = round.pusher.take() {
                pusher.finish(PUSH_FINISH).await;
            }
        }
    }

    fn take(&mut self, message: Message) {
        match message {
            Message::Change { round, at, change } => {
                self.rounds
                    .entry(round)
                    .or_default()
                    .queue
                    .push_back(Queued { at, change });
            }
            Message::Delay { round, from, delay } => {
                self.rounds
                    .entry(round)
                    .or_default()
                    .schedule
                    .lengthen(from, delay);
            }
            Message::Config(config) => {
                let line = self.rounds.entry(config.round).or_default();
                line.config = Some(*config);
                line.index_changed = true;
            }
            Message::CurrentRound { round, at } => {
                self.openings.insert(round, at);
            }
            Message::Pusher { round, pusher } => {
                self.rounds.entry(round).or_default().pusher = Some(pusher);
            }
        }
    }

    /// When something is due next: a change, a round's files, or a round to follow (one
    /// waiting for earlier changes comes after them).
    fn next_wake(&self) -> Option<Instant> {
        let changes = self.rounds.values().filter_map(RoundLine::front_due);
        let files = self.rounds.values().filter_map(|r| r.files_due);
        let openings = self
            .openings
            .iter()
            .filter(|(_, at)| !self.changes_before(**at))
            .map(|(round, at)| self.opening_due(*round, *at));
        changes.chain(files).chain(openings).min()
    }

    fn opening_due(&self, round: u32, at: Instant) -> Instant {
        at + self
            .rounds
            .get(&round)
            .map_or(Duration::ZERO, |r| r.schedule.at(at))
    }

    /// True while a change made at or before `at` waits.
    fn changes_before(&self, at: Instant) -> bool {
        self.rounds
            .values()
            .any(|line| line.queue.front().is_some_and(|q| q.at <= at))
    }

    /// Releases everything due at `now`, in the order it is due.
    fn release(&mut self, now: Instant) {
        loop {
            let next = self
                .rounds
                .iter()
                .filter_map(|(round, line)| Some((line.front_due()?, *round)))
                .min();
            let Some((due, round)) = next.filter(|(due, _)| *due <= now) else {
                break;
            };
            let Some(line) = self.rounds.get_mut(&round) else {
                break;
            };
            line.last_due = Some(due);
            if let Some(queued) = line.queue.pop_front() {
                self.apply(round, due, queued.change, now);
            }
        }
        self.follow_rounds(now);
        self.write_round_files(now);
    }

    /// The public's pages follow a round once it opened as they see it, and every change
    /// made before it opened is out.
    fn follow_rounds(&mut self, now: Instant) {
        let due: Vec<(u32, Instant)> = self
            .openings
            .iter()
            .map(|(round, at)| (*round, *at))
            .filter(|(round, at)| self.opening_due(*round, *at) <= now && !self.changes_before(*at))
            .collect();
        for (round, _) in due {
            self.openings.remove(&round);
            self.public.follow_round(round);
        }
    }

    fn apply(&mut self, round: u32, due: Instant, change: Change, now: Instant) {
        match change {
            Change::Event(board, event) => {
                self.public.publish_as_of(round, board, event, due);
            }
            Change::Arbiter(board, action) => {
                self.public.note_arbiter_action(round, board, &action);
            }
            Change::Text(board, pgn, summary) => {
                self.public.set_pgn(round, board, pgn.clone());
                let line = self.rounds.entry(round).or_default();
                if line.summaries.insert(board, summary.clone()) != Some(summary) {
                    line.index_changed = true;
                }
                if line.schedule.delayed()
                    && let Some((out, writer)) = &self.folder
                {
                    if !std::mem::replace(&mut line.folder_ready, true)
                        && let Err(e) = out.prepare(round)
                    {
                        say(&format!(
                            "cannot create {}: {e}",
                            out.round_dir(round).display()
                        ));
                    }
                    writer.send(FileJob::Game { round, board, pgn });
                }
                line.files_due.get_or_insert(now + ROUND_FILES_DELAY);
            }
            Change::CopyRound(from) => self.copy_round(round, &from),
        }
    }

    /// Rewrites the rounds' combined PGN, index and push whose time has come.
    fn write_round_files(&mut self, now: Instant) {
        let newest = self.rounds.keys().next_back().copied();
        for (round, line) in &mut self.rounds {
            if line.files_due.is_some_and(|due| due <= now) {
                line.files_due = None;
                // Every game the public has, released here or before the public's feed was
                // its own.
                let texts = self.public.game_texts(*round);
                let combined = combine(&texts.iter().map(|t| &**t).collect::<Vec<_>>());
                self.public.set_round_pgn(*round, combined.clone());
                if line.schedule.delayed()
                    && let Some((_, writer)) = &self.folder
                {
                    writer.send(FileJob::Round {
                        round: *round,
                        pgn: combined.clone(),
                    });
                    if std::mem::take(&mut line.index_changed)
                        && let Some(config) = &line.config
                    {
                        writer.send(FileJob::Index {
                            config: config.clone(),
                            summaries: line.summaries.values().cloned().collect(),
                        });
                    }
                }
                if let Some(pusher) = &line.pusher {
                    pusher.push(combined);
                }
            }
            // A round left for a later one pushes until its last change is out.
            let done = line.queue.is_empty() && line.files_due.is_none();
            if done
                && newest.is_some_and(|n| n > *round)
                && let Some(pusher) = line.pusher.take()
            {
                tokio::spawn(pusher.finish(PUSH_FINISH));
            }
        }
    }

    /// Copies the arbiter's files of `round` (the folder `from`) to the public folder and
    /// shows its games.
    fn copy_round(&mut self, round: u32, from: &std::path::Path) {
        let Some((out, _)) = &self.folder else {
            return;
        };
        let copied = out.prepare(round).and_then(|()| {
            for entry in std::fs::read_dir(from)? {
                let path = entry?.path();
                let Some(name) = path.file_name() else {
                    continue;
                };
                let bytes = std::fs::read(&path)?;
                out.replace(&out.round_dir(round).join(name), &bytes)?;
            }
            Ok(())
        });
        if let Err(e) = copied {
            say(&format!(
                "cannot copy round {round}'s files from {} to {}: {e}",
                from.display(),
                out.round_dir(round).display()
            ));
        }
        for problem in crate::recorder::earlier_rounds::show_round(&self.public, out.root(), round)
        {
            say(&format!("round {round} cannot be shown: {problem}"));
        }
    }
}

/// Says what the operator must know about the public side, on stderr.
fn say(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "touchmove: public broadcast: {message}");
}

/// Waits until `at`, or forever when there is no `at`.
async fn until(at: Option<Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}
