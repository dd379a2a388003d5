//! Who sees what, and when: the arbiter live, the public after the round's transmission
//! delay.
//!
//! What the recorder (or a serve node) learns of the games goes through a [`Publication`],
//! stamped with the time it happened: to the arbiter's live [`Feed`] at once — the desk, its
//! API, `touchmove arbiter` — and to what the public sees: the spectators' pages, SSE and
//! JSON, the PGN URLs, the public PGN folder and the lichess push. While no round has a delay
//! the public sees the live feed itself, exactly as without this module. From the first round
//! with a delay on, the public has a feed of its own, a copy of the live one made then
//! ([`Feed::fork`]) that the delay line ([`super::delay`]) feeds, and the public folder of a
//! delayed round is written by the line while the recorder keeps the arbiter's files apart.
//!
//! The web server's public routes hold a [`PublicView`], which reaches the public feed only
//! and tells when it is replaced, so that no public route can reach the live feed by mistake.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::Duration;

use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

use super::delay::{self, Change, Message, Schedule};
use super::feed::{Feed, GameInfo};
use super::lichess::Pusher;
use crate::act::Event;
use crate::record::arbiter::ArbiterAction;
use crate::recorder::EventConfig;
use crate::recorder::layout::{BoardSummary, OutputFolder};

/// The public's own feed and the line that feeds it.
struct Public {
    feed: Arc<Feed>,
    line: mpsc::UnboundedSender<Message>,
}

/// The delay the arbiter chose at the desk for the rounds to come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChosenDelay {
    /// The first round it applies to.
    pub from_round: u32,
    /// The delay, in milliseconds.
    pub delay_ms: u64,
}

/// The arbiter's live feed and what the public sees of it. Share it with `Arc`.
pub struct Publication {
    live: Arc<Feed>,
    public_folder: Option<OutputFolder>,
    public: RwLock<Option<Public>>,
    schedules: Mutex<BTreeMap<u32, Schedule>>,
    configs: Mutex<BTreeMap<u32, EventConfig>>,
    /// The latest stamp of each game sent to the public, so that a game rebuilt from the
    /// journal is not sent twice.
    sent: Mutex<HashMap<(u32, u32), Instant>>,
    /// Counts the public feeds replaced.
    replaced: watch::Sender<u64>,
    /// The desk's choice for the rounds to come, and the file keeping it.
    chosen: Mutex<(Option<ChosenDelay>, Option<PathBuf>)>,
}

impl std::fmt::Debug for Publication {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Publication")
            .field("delayed", &self.is_split())
            .finish_non_exhaustive()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl Publication {
    /// The public sees `live` until a round has a delay; the delayed rounds' public files
    /// are not written anywhere (see [`Publication::with_public_folder`]).
    pub fn new(live: Arc<Feed>) -> Publication {
        Publication {
            live,
            public_folder: None,
            public: RwLock::new(None),
            schedules: Mutex::new(BTreeMap::new()),
            configs: Mutex::new(BTreeMap::new()),
            sent: Mutex::new(HashMap::new()),
            replaced: watch::channel(0).0,
            chosen: Mutex::new((None, None)),
        }
    }

    /// The same, writing the public files of delayed rounds into `folder` (the PGN folder
    /// broadcasters read).
    pub fn with_public_folder(mut self, folder: OutputFolder) -> Publication {
        self.public_folder = Some(folder);
        self
    }

    /// The same, keeping the delay the arbiter chooses at the desk in `file` (and reading
    /// the one kept there).
    pub fn with_chosen_delay_file(self, file: PathBuf) -> Publication {
        let kept = std::fs::read(&file)
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok());
        *lock(&self.chosen) = (kept, Some(file));
        self
    }

    /// The arbiter's live feed.
    pub fn live(&self) -> &Arc<Feed> {
        &self.live
    }

    /// The feed the public sees now: the live one until a round has a delay.
    pub fn public_feed(&self) -> Arc<Feed> {
        self.read_public()
            .as_ref()
            .map_or_else(|| Arc::clone(&self.live), |p| Arc::clone(&p.feed))
    }

    /// What the web server's public routes may reach.
    pub fn public_view(self: &Arc<Self>) -> PublicView {
        PublicView(Arc::clone(self))
    }

    fn read_public(&self) -> std::sync::RwLockReadGuard<'_, Option<Public>> {
        self.public.read().unwrap_or_else(|e| e.into_inner())
    }

    /// True once the public has a feed of its own.
    fn is_split(&self) -> bool {
        self.read_public().is_some()
    }

    /// Sends `message` to the delay line, if there is one; true if there is.
    fn to_line(&self, message: impl FnOnce() -> Message) -> bool {
        match self.read_public().as_ref() {
            Some(public) => {
                let _ = public.line.send(message());
                true
            }
            None => false,
        }
    }

    /// Round `round`'s delay for what happens from `from` on, unless it is that long already
    /// (a round's delay is never shortened). The first delay of the event gives the public
    /// a feed of its own, a copy of the live one. Returns the round's delay from then on.
    pub fn delay_round(&self, round: u32, from: Instant, delay: Duration) -> Duration {
        let (lengthened, latest) = {
            let mut schedules = lock(&self.schedules);
            let schedule = schedules.entry(round).or_default();
            (schedule.lengthen(from, delay), schedule.latest())
        };
        if !lengthened {
            return latest;
        }
        if !delay.is_zero() {
            self.split(round);
        }
        self.to_line(|| Message::Delay { round, from, delay });
        latest
    }

    /// Gives the public a feed of its own, a copy of the live one now, fed by a new delay
    /// line; the public streams opened on the live feed end (their clients come back to the
    /// new one). `round` is the first round with a delay: the public pages do not follow it
    /// before it opens as they see it.
    fn split(&self, round: u32) {
        let mut public = self.public.write().unwrap_or_else(|e| e.into_inner());
        if public.is_some() {
            return;
        }
        let feed = Arc::new(self.live.fork());
        if let Some(before) = self.live.rounds().into_iter().filter(|r| *r < round).max() {
            feed.follow_round(before);
        }
        let line = delay::start(Arc::clone(&feed), self.public_folder.clone());
        for (round, schedule) in lock(&self.schedules).iter() {
            for (from, delay) in schedule.steps() {
                let _ = line.send(Message::Delay {
                    round: *round,
                    from,
                    delay,
                });
            }
        }
        for config in lock(&self.configs).values() {
            let _ = line.send(Message::Config(Box::new(config.clone())));
        }
        *public = Some(Public { feed, line });
        drop(public);
        self.replaced.send_modify(|n| *n += 1);
    }

    /// Round `round`'s delay now.
    pub fn delay(&self, round: u32) -> Duration {
        lock(&self.schedules)
            .get(&round)
            .map_or(Duration::ZERO, Schedule::latest)
    }

    /// True when round `round` has (or had) a delay: its public files and lichess push are
    /// the delay line's, the arbiter's files kept apart.
    pub fn is_delayed(&self, round: u32) -> bool {
        lock(&self.schedules)
            .get(&round)
            .is_some_and(Schedule::delayed)
    }

    /// Starts run `run` of a recorder on both feeds ([`Feed::begin_run`]).
    pub fn begin_run(&self, run: u64) {
        self.live.begin_run(run);
        if let Some(public) = self.read_public().as_ref() {
            public.feed.begin_run(run);
        }
    }

    /// Says when session time 0 was, on both feeds ([`Feed::set_time_origin`]).
    pub fn set_time_origin(&self, unix_ms: u64) {
        self.live.set_time_origin(unix_ms);
        if let Some(public) = self.read_public().as_ref() {
            public.feed.set_time_origin(unix_ms);
        }
    }

    /// A game's players and tags, on both feeds at once: pairings are no secret.
    pub fn game(&self, info: GameInfo) {
        if let Some(public) = self.read_public().as_ref() {
            public.feed.upsert_game(info.clone());
        }
        self.live.upsert_game(info);
    }

    /// The event of round `round` (its players), for the public `index.json`.
    pub fn round_config(&self, config: &EventConfig) {
        lock(&self.configs).insert(config.round, config.clone());
        self.to_line(|| Message::Config(Box::new(config.clone())));
    }

    /// Notes that something of game (`round`, `board`) made at `at` goes to the public.
    fn send(&self, round: u32, board: u32, at: Instant, change: impl FnOnce() -> Change) {
        let sent = self.to_line(|| Message::Change {
            round,
            at,
            change: change(),
        });
        if sent {
            let mut stamps = lock(&self.sent);
            let stamp = stamps.entry((round, board)).or_insert(at);
            *stamp = (*stamp).max(at);
        }
    }

    /// The latest stamp of game (`round`, `board`) sent to the public, if any: a game rebuilt
    /// from the journal sends only what is later.
    pub fn sent_until(&self, round: u32, board: u32) -> Option<Instant> {
        lock(&self.sent).get(&(round, board)).copied()
    }

    /// An event of the game on `board` of `round`, which happened at `at`.
    pub fn event(&self, at: Instant, round: u32, board: u32, event: Event) {
        self.send(round, board, at, || Change::Event(board, event.clone()));
        self.live.publish(round, board, event);
    }

    /// An arbiter action the recorder accepted at `at` ([`Feed::note_arbiter_action`]).
    pub fn arbiter(&self, at: Instant, round: u32, board: u32, action: &ArbiterAction) {
        self.send(round, board, at, || Change::Arbiter(board, action.clone()));
        self.live.note_arbiter_action(round, board, action);
    }

    /// The PGN of the game on `board` of `round` as it stood at `at`, with its summary.
    pub fn text(&self, at: Instant, round: u32, board: u32, pgn: String, summary: BoardSummary) {
        self.send(round, board, at, || {
            Change::Text(board, pgn.clone(), summary)
        });
        self.live.set_pgn(round, board, pgn);
    }

    /// Like [`Publication::text`] for the public only: a text the live feed does not need
    /// (an earlier state, rebuilt from the journal).
    pub fn public_text(
        &self,
        at: Instant,
        round: u32,
        board: u32,
        pgn: String,
        summary: BoardSummary,
    ) {
        self.send(round, board, at, || Change::Text(board, pgn, summary));
    }

    /// Has the pages follow round `round`, which opened at `at`: the arbiter's at once, the
    /// public's when it opened as they see it.
    pub fn current_round(&self, at: Instant, round: u32) {
        self.live.set_current_round(round);
        self.public_current_round(at, round);
    }

    /// Like [`Publication::current_round`], for the public pages only.
    pub fn public_current_round(&self, at: Instant, round: u32) {
        self.to_line(|| Message::CurrentRound { round, at });
    }

    /// Pushes round `round` to lichess as the public sees it; gives `pusher` back when the
    /// round has no delay (the caller pushes the live round itself).
    pub fn push_delayed(&self, round: u32, pusher: Pusher) -> Option<Pusher> {
        if !self.is_delayed(round) {
            return Some(pusher);
        }
        match self.read_public().as_ref() {
            Some(public) => {
                let _ = public.line.send(Message::Pusher { round, pusher });
                None
            }
            None => Some(pusher),
        }
    }

    /// Copies the arbiter's files of round `round`, in `from`, to the public folder at
    /// `at` plus the round's delay, and shows them then: the end of a round that the
    /// recorder stopped before releasing.
    pub fn release_round_files(&self, at: Instant, round: u32, from: &Path) {
        self.to_line(|| Message::Change {
            round,
            at,
            change: Change::CopyRound(from.to_path_buf()),
        });
    }

    /// The delay the arbiter chose at the desk for round `round`, if it applies to it.
    pub fn chosen_delay(&self, round: u32) -> Option<Duration> {
        lock(&self.chosen)
            .0
            .filter(|c| c.from_round <= round)
            .map(|c| Duration::from_millis(c.delay_ms))
    }

    /// The arbiter's choice at the desk: `delay` from round `from_round` on (kept in the
    /// file given, if any).
    pub fn choose_delay(&self, from_round: u32, delay: Duration) -> std::io::Result<()> {
        let chosen = ChosenDelay {
            from_round,
            delay_ms: delay.as_millis() as u64,
        };
        let mut held = lock(&self.chosen);
        if let Some(file) = &held.1 {
            let json = serde_json::to_vec(&chosen).unwrap_or_default();
            crate::recorder::layout::write_atomically(file, &json)?;
        }
        held.0 = Some(chosen);
        Ok(())
    }

    /// The desk's choice, as kept.
    pub fn chosen(&self) -> Option<ChosenDelay> {
        lock(&self.chosen).0
    }
}

/// What the web server's public routes may reach of a [`Publication`]: its public feed and
/// the process's links (never its live feed).
#[derive(Clone)]
pub struct PublicView(Arc<Publication>);

impl std::fmt::Debug for PublicView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PublicView").finish_non_exhaustive()
    }
}

impl PublicView {
    /// The public feed now.
    pub fn feed(&self) -> Arc<Feed> {
        self.0.public_feed()
    }

    /// Changes when the public feed is replaced: a stream opened on the old one ends.
    pub fn replaced(&self) -> watch::Receiver<u64> {
        self.0.replaced.subscribe()
    }

    /// The process's links to the outside (lichess push, cluster, web connections).
    pub fn status(&self) -> super::status::StatusReport {
        self.0.live.status().report()
    }

    /// The transmission delay of round `round`.
    pub fn delay(&self, round: u32) -> Duration {
        self.0.delay(round)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::ColorName;
    use crate::server::feed::tests::{AFTER_E4, mv};

    const AFTER_E5: &str = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";

    fn plies(feed: &Feed, round: u32, board: u32) -> u32 {
        feed.game(round, board).map_or(0, |g| g.summary.ply)
    }

    /// Lets the delay line run up to `at` (the clock is paused: time moves only here).
    async fn run_until(at: Instant) {
        tokio::time::sleep_until(at).await;
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    /// The arbiter sees each move at once; the public sees nothing before the move's time
    /// plus the delay, then the move, in order.
    #[tokio::test(start_paused = true)]
    async fn the_public_sees_each_change_when_the_delay_has_passed_and_not_before() {
        let live = Arc::new(Feed::new());
        let publication = Publication::new(Arc::clone(&live));
        let t0 = Instant::now();
        let delay = Duration::from_secs(10);
        assert!(Arc::ptr_eq(&publication.public_feed(), &live));
        publication.delay_round(1, t0, delay);
        let public = publication.public_feed();
        assert!(!Arc::ptr_eq(&public, &live), "a delayed round splits");
        run_until(t0 + Duration::from_secs(1)).await;
        publication.event(Instant::now(), 1, 1, mv(1, "e2e4", "e4", AFTER_E4));
        run_until(t0 + Duration::from_secs(3)).await;
        publication.event(Instant::now(), 1, 1, mv(2, "e7e5", "e5", AFTER_E5));
        assert_eq!(plies(&live, 1, 1), 2, "the arbiter is live");
        let seen = [(10_999, 0), (11_000, 1), (12_999, 1), (13_000, 2)];
        for (ms, expected) in seen {
            run_until(t0 + Duration::from_millis(ms)).await;
            assert_eq!(plies(&public, 1, 1), expected, "at {ms} ms");
        }
        let moves: Vec<String> = public
            .events_after(0, crate::server::feed::Scope::All)
            .expect("logged")
            .iter()
            .map(|e| e.kind.to_string())
            .collect();
        assert_eq!(moves, ["move", "move"]);
    }

    /// A clock reading released late (the line catching up after a restart) runs from when
    /// it was due, not from its release: the public clock stands where it stood then.
    #[tokio::test(start_paused = true)]
    async fn a_clock_released_late_counts_down_from_its_delayed_moment() {
        let live = Arc::new(Feed::new());
        let publication = Publication::new(Arc::clone(&live));
        tokio::time::advance(Duration::from_secs(60)).await;
        let now = Instant::now();
        let read = now - Duration::from_secs(20);
        publication.delay_round(1, read, Duration::from_secs(10));
        publication.event(read, 1, 1, mv(1, "e2e4", "e4", AFTER_E4));
        let clock = Event::Clock {
            white_ms: 300_000,
            black_ms: 300_000,
            ply: 1,
            t_ms: 0,
        };
        publication.event(read, 1, 1, clock);
        run_until(now).await;
        let shown = publication
            .public_feed()
            .game(1, 1)
            .and_then(|g| g.summary.clock)
            .expect("a clock");
        assert_eq!(shown.running, Some(ColorName::Black));
        let age = Duration::from_millis(shown.age_ms);
        assert!(
            age >= Duration::from_secs(10) && age < Duration::from_millis(10_100),
            "the reading was due 10 s ago: {age:?}"
        );
    }

    /// A round's delay grows for what happens after, never shrinks; the public does not
    /// follow the next round while changes made before it opened are still to come.
    #[tokio::test(start_paused = true)]
    async fn delays_never_shrink_and_the_next_round_waits_for_the_end_of_the_last() {
        let live = Arc::new(Feed::new());
        let publication = Publication::new(Arc::clone(&live));
        let t0 = Instant::now();
        let secs = Duration::from_secs;
        let (short, long) = (secs(10), secs(30));
        publication.delay_round(1, t0, short);
        assert_eq!(publication.delay_round(1, t0, secs(5)), short);
        publication.current_round(t0, 1);
        let public = publication.public_feed();
        run_until(t0 + short).await;
        assert_eq!(public.current_round(), Some(1));
        publication.event(t0 + secs(11), 1, 1, mv(1, "e2e4", "e4", AFTER_E4));
        // Round 2 opens at 13 s with no delay; round 1 gets a longer one for what follows.
        let opened = t0 + secs(13);
        assert_eq!(publication.delay_round(1, opened, long), long);
        publication.current_round(opened, 2);
        publication.event(opened, 2, 1, mv(1, "d2d4", "d4", AFTER_E4));
        publication.event(opened, 1, 1, mv(2, "e7e5", "e5", AFTER_E5));
        run_until(opened + Duration::from_millis(1)).await;
        assert_eq!(plies(&public, 2, 1), 1, "round 2 has no delay");
        assert_eq!(live.current_round(), Some(2));
        assert_eq!(
            public.current_round(),
            Some(1),
            "round 1's moves are to come"
        );
        run_until(t0 + secs(21)).await;
        assert_eq!(plies(&public, 1, 1), 1);
        assert_eq!(
            public.current_round(),
            Some(1),
            "round 1's second move is to come"
        );
        run_until(opened + long - Duration::from_millis(1)).await;
        assert_eq!(plies(&public, 1, 1), 1, "made after the delay grew");
        run_until(opened + long).await;
        assert_eq!(plies(&public, 1, 1), 2);
        assert_eq!(public.current_round(), Some(2));
    }

    #[test]
    fn a_schedule_gives_each_change_the_delay_in_force_when_it_was_made() {
        let t0 = Instant::now();
        let s = |secs| Duration::from_secs(secs);
        let mut schedule = Schedule::default();
        assert!(!schedule.delayed());
        assert!(schedule.lengthen(t0 + s(10), s(60)));
        assert!(!schedule.lengthen(t0 + s(20), s(30)), "never shortened");
        assert!(schedule.lengthen(t0 + s(30), s(90)));
        assert_eq!(schedule.at(t0), s(60), "before the first: the first");
        assert_eq!(schedule.at(t0 + s(25)), s(60));
        assert_eq!(schedule.at(t0 + s(30)), s(90));
        assert!(schedule.lengthen(t0 + s(5), s(120)));
        assert_eq!(
            schedule.at(t0 + s(40)),
            s(120),
            "a longer earlier delay holds on"
        );
        assert_eq!(schedule.latest(), s(120));
    }
}
