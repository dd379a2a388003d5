//! One run of the real recorder, from its start to its end or its kill, on a runtime of its
//! own whose paused clock the simulation drives.
//!
//! Killing it drops the runtime with every task on it, as `kill -9` ends a process: what was
//! in memory is gone, what was journalled stays on disk, and the next run starts from the
//! journal.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::board::Millis;
use crate::record::arbiter::ArbiterRequest;
use crate::recorder::{EventConfig, Recorder, RecorderHandle, RunOptions, WallClock};

/// The time of day at which simulated time 0 falls (2026-01-01, UTC).
pub const SIMULATED_EPOCH_UNIX_MS: u64 = 1_767_225_600_000;

/// A running recorder and its runtime.
pub struct Incarnation {
    runtime: tokio::runtime::Runtime,
    handle: Option<RecorderHandle>,
    /// The runtime's instant at simulated time `since_ms`.
    at: Instant,
    since_ms: Millis,
}

impl Incarnation {
    /// Starts the recorder at simulated time `now_ms`. `seed` orders what the runtime
    /// leaves to chance (which ready branch of a `select!` goes first) where the build allows
    /// it (`--cfg tokio_unstable`).
    pub fn start(
        now_ms: Millis,
        seed: u64,
        config: EventConfig,
        mut options: RunOptions,
    ) -> Result<Incarnation, String> {
        let mut builder = tokio::runtime::Builder::new_current_thread();
        // Time only: the recorder's links are cables in memory and it opens no socket, and an
        // I/O driver would cost a system call (`epoll_wait`) each time the runtime idles.
        builder.enable_time().start_paused(true);
        #[cfg(tokio_unstable)]
        builder.rng_seed(tokio::runtime::RngSeed::from_bytes(&seed.to_le_bytes()));
        #[cfg(not(tokio_unstable))]
        let _ = seed;
        let runtime = builder
            .build()
            .map_err(|e| format!("cannot build the simulation's runtime: {e}"))?;
        let started = runtime.block_on(async move {
            // The runtime's clock starts at the machine's; moved on by the simulated time so
            // far, the recorder's session epoch (now less the time since the journal began)
            // never falls before the machine started.
            tokio::time::advance(Duration::from_millis(now_ms)).await;
            let at = Instant::now();
            options.wall_clock = WallClock::simulated(SIMULATED_EPOCH_UNIX_MS + now_ms);
            Recorder::start(config, options)
                .await
                .map(|handle| (handle, at))
                .map_err(|e| format!("the recorder did not start: {e}"))
        });
        let (handle, at) = started?;
        Ok(Incarnation {
            runtime,
            handle: Some(handle),
            at,
            since_ms: now_ms,
        })
    }

    /// The recorder's handle.
    pub fn handle(&self) -> Option<&RecorderHandle> {
        self.handle.as_ref()
    }

    /// Runs `work` on the recorder's runtime (an arbiter's request, say) without letting
    /// simulated time pass beyond what it takes.
    pub fn block_on<F: std::future::Future>(&self, work: F) -> F::Output {
        self.runtime.block_on(work)
    }

    /// Hands the recorder an arbiter's request, as the desk does, and gives its answer.
    pub fn arbiter(&self, request: ArbiterRequest) -> Result<String, String> {
        let Some(handle) = &self.handle else {
            return Err("the recorder is not running".to_string());
        };
        let sink = handle.arbiter_sink();
        self.runtime.block_on(async move {
            let (reply, answer) = tokio::sync::oneshot::channel();
            sink.send((request, reply))
                .await
                .map_err(|_| "the recorder takes no requests".to_string())?;
            answer
                .await
                .map_err(|_| "the recorder did not answer".to_string())?
        })
    }

    /// Simulated time now, on the recorder's clock.
    pub fn now_ms(&self) -> Millis {
        let _guard = self.runtime.enter();
        self.since_ms + Instant::now().duration_since(self.at).as_millis() as Millis
    }

    /// Runs the recorder until simulated time `until_ms`, or less when it writes to a board
    /// first (`written` is told): gives the simulated time it stopped at.
    pub fn run_until(&mut self, until_ms: Millis, written: &Arc<Notify>) -> Millis {
        let deadline = self.at + Duration::from_millis(until_ms.saturating_sub(self.since_ms));
        let written = Arc::clone(written);
        self.runtime.block_on(async move {
            tokio::select! {
                biased;
                () = written.notified() => {}
                () = tokio::time::sleep_until(deadline) => {}
            }
        });
        self.now_ms()
    }

    /// Stops the recorder as `kill -9` does: every task dropped with what it held in memory.
    pub fn kill(mut self) {
        let handle = self.handle.take();
        let _guard = self.runtime.enter();
        drop(handle);
        drop(_guard);
        self.runtime.shutdown_background();
    }

    /// Stops the recorder cleanly (Ctrl-C): the files are written, the journal closed.
    pub fn shut_down(mut self) {
        if let Some(handle) = self.handle.take() {
            self.runtime.block_on(handle.shutdown());
        }
    }
}
