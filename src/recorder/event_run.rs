//! An event recorded round after round: the one path by which `touchmove record`, the
//! demo and the arbiter's "Start round N+1" open a round.
//!
//! [`EventRun::open`] takes the event's description ([`EventSpec`]) and its event file as
//! read once ([`EventFile`]), finds the boards to
//! probe for, opens the first round and shows the earlier rounds of the folder;
//! [`EventRun::open_next_round`] closes the round and opens the next on the same boards,
//! with the players the pairings file gives it. The arbiter's token belongs to the event's
//! state directory, so it stays the same from round to round and across restarts.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;

use super::{Recorder, RecorderHandle, RunOptions, earlier_rounds, say};
use crate::driver::probe::{Candidates, probe};
use crate::event::spec::{EventSpec, RoundPlan, next_board_number, unpaired_board};
use crate::event::trf::Encoding;
use crate::event::{BoardOrigins, BoardSource, EventConfig, EventFile};
use crate::server::{NextRoundAsk, Publication};

/// An event being recorded: the round open now and how to open the next.
pub struct EventRun {
    spec: EventSpec,
    /// The transmission delay of the command line, else of the event file.
    given_delay: Option<Duration>,
    /// The event's boards before any pairings.
    boards: EventConfig,
    /// The encoding of a TRF of pairings (`None`: guessed).
    encoding: Option<Encoding>,
    options: RunOptions,
    handle: RecorderHandle,
    /// The round open now.
    config: EventConfig,
    next_round: mpsc::Receiver<NextRoundAsk>,
}

impl EventRun {
    /// Opens the round `spec` describes. Every message for the arbiter (notes on the
    /// pairings, pairings left out, earlier rounds that cannot be shown) is said on stderr;
    /// an error says why nothing was opened.
    pub async fn open(
        spec: EventSpec,
        event: EventFile,
        mut options: RunOptions,
    ) -> Result<EventRun, String> {
        let EventFile {
            config: mut boards,
            mut origins,
            encoding,
            ..
        } = event;
        if event.pegasus_key.is_some() {
            options.pegasus_key = event.pegasus_key;
        }
        if spec.detect_boards {
            add_detected_boards(
                &mut boards,
                &mut origins,
                &options.candidates,
                &mut options.probed_bytes,
            )
            .await?;
        }
        let plan = spec.round(&boards, boards.round, encoding)?;
        tell(&plan);
        let given_delay = options.broadcast_delay.or(event.broadcast_delay);
        let publication = options
            .publication
            .clone()
            .unwrap_or_else(|| options.new_publication());
        options.publication = Some(publication.clone());
        options.broadcast_delay = publication.chosen_delay(boards.round).or(given_delay);
        options.board_origins = origins;
        let (next_tx, next_round) = mpsc::channel(4);
        options.next_round = Some(next_tx);
        let handle = start(&plan.config, &options).await?;
        show_earlier_rounds(&options, &publication, boards.round);
        Ok(EventRun {
            spec,
            given_delay,
            boards,
            encoding,
            options,
            handle,
            config: plan.config,
            next_round,
        })
    }

    /// The recorder of the round open now.
    pub fn handle(&self) -> &RecorderHandle {
        &self.handle
    }

    /// The round open now.
    pub fn config(&self) -> &EventConfig {
        &self.config
    }

    /// Waits for the arbiter's "Start round N+1" (from the desk).
    pub async fn next_round_asked(&mut self) -> Option<NextRoundAsk> {
        self.next_round.recv().await
    }

    /// Closes the round open now and opens the next one on the same boards, answering
    /// `asked` (the desk) with what started or why it cannot. A round that cannot be prepared
    /// (its pairings missing), or a request for a round no longer open, leaves the current one
    /// open. An error means that the next round could not start after the current one
    /// closed: nothing is recorded any more.
    pub async fn open_next_round(
        mut self,
        asked: Option<NextRoundAsk>,
    ) -> Result<EventRun, String> {
        let reply = match asked.map(|a| a.accept(self.config.round)).transpose() {
            Ok(reply) => reply,
            Err(why) => {
                say(&format!("next round refused: {why}"));
                return Ok(self);
            }
        };
        let next = self.config.round + 1;
        let plan = match self.spec.round(&self.boards, next, self.encoding) {
            Ok(plan) => plan,
            Err(e) => {
                say(&format!("round {next} cannot start: {e}"));
                if let Some(reply) = reply {
                    let _ = reply.send(Err(e));
                }
                return Ok(self);
            }
        };
        if let Some(reply) = reply {
            let _ = reply.send(Ok(format!(
                "round {next} starts on {} boards; round {} is kept in {}",
                plan.config.boards.len(),
                self.config.round,
                self.options.out_dir.display()
            )));
        }
        tell(&plan);
        if self.options.lichess.take().is_some() {
            say(&format!(
                "the lichess push of round {} stops{}; restart with the next round's \
                 --lichess-round to push round {next}",
                self.config.round,
                if self.handle.live_dir() == self.handle.out_dir() {
                    ""
                } else {
                    " once the public has seen its end"
                }
            ));
        }
        self.options.broadcast_delay = self
            .options
            .publication
            .as_ref()
            .and_then(|p| p.chosen_delay(next))
            .or(self.given_delay);
        // The round that ended lets go of the journal and the folder when its shutdown
        // returns, so the next one starts at once.
        self.handle.shutdown().await;
        self.handle = start(&plan.config, &self.options).await?;
        self.config = plan.config;
        Ok(self)
    }

    /// Stops recording.
    pub async fn close(self) {
        self.handle.shutdown().await;
    }
}

/// Shows the earlier rounds of the folder: the arbiter's copy of a delayed round to the
/// arbiter, the output folder's to the public. Shown once the round is started, so that the
/// public's own feed, if there is one, is made before.
fn show_earlier_rounds(options: &RunOptions, publication: &Publication, round: u32) {
    let live = options.state_dir.join(super::LIVE_DIR_NAME);
    let public = publication.public_feed();
    let mut problems = earlier_rounds::show_earlier_rounds(&options.feed, &options.out_dir, round);
    if !Arc::ptr_eq(&public, &options.feed) {
        problems.extend(earlier_rounds::show_earlier_rounds(
            &options.feed,
            &live,
            round,
        ));
        earlier_rounds::show_earlier_rounds(&public, &options.out_dir, round);
    }
    for problem in problems {
        say(&format!(
            "an earlier round's game cannot be shown: {problem}"
        ));
    }
}

/// Says what the arbiter should read about a round.
fn tell(plan: &RoundPlan) {
    for note in &plan.notes {
        say(note);
    }
    for problem in &plan.problems {
        say(&format!("PAIRINGS: {problem}"));
    }
}

/// Starts the recorder on `config` and says where it records.
async fn start(config: &EventConfig, options: &RunOptions) -> Result<RecorderHandle, String> {
    let handle = Recorder::start(config.clone(), options.clone())
        .await
        .map_err(|e| e.to_string())?;
    let boards: Vec<String> = config
        .boards
        .iter()
        .map(|b| format!("board {} on {}", b.number, b.source))
        .collect();
    say(&format!(
        "round {}: recording {} into {}{}; arbiter: `touchmove arbiter --out {} …`; Ctrl-C stops",
        config.round,
        boards.join(", "),
        handle.out_dir().display(),
        handle
            .server_addr()
            .map(|a| format!(", live at http://{a}/"))
            .unwrap_or_default(),
        handle.out_dir().display(),
    ));
    Ok(handle)
}

/// `--port auto`: one "auto" board for every detected board that no entry names by serial
/// number and no "auto" entry will take.
async fn add_detected_boards(
    config: &mut EventConfig,
    origins: &mut BoardOrigins,
    candidates: &Candidates,
    probed_bytes: &mut BTreeMap<PathBuf, Vec<(tokio::time::Instant, Vec<u8>)>>,
) -> Result<(), String> {
    let mut found = 0;
    let mut report = Vec::new();
    for port in candidates.list() {
        // A bus chain's port is never probed: single-board commands would take its boards
        // out of bus mode.
        if config.boards.iter().any(|b| match &b.source {
            BoardSource::Port(p) | BoardSource::Bus { port: p, .. } => *p == port,
            _ => false,
        }) {
            continue;
        }
        match probe(&port, Duration::from_millis(800)).await {
            Ok(mut id) => {
                probed_bytes.insert(port.clone(), std::mem::take(&mut id.received));
                let named = id.serial.as_ref().is_some_and(|s| {
                    config
                        .boards
                        .iter()
                        .any(|b| b.source == BoardSource::Serial(s.clone()))
                });
                if !named {
                    found += 1;
                }
                report.push(format!(
                    "{} ({} serial {})",
                    port.display(),
                    id.model(),
                    id.serial.as_deref().unwrap_or("unknown")
                ));
            }
            Err(why) => report.push(format!("{} ({why})", port.display())),
        }
    }
    if found == 0 {
        let probed = if report.is_empty() {
            format!("no candidate port is present ({})", candidates.describe())
        } else {
            format!("probed {}", report.join(", "))
        };
        return Err(format!(
            "--port auto: no DGT board found to record ({probed}); plug the board in and switch \
             it on, check `touchmove ports`, or give --port PATH"
        ));
    }
    let taken = config
        .boards
        .iter()
        .filter(|b| b.source == BoardSource::Auto)
        .count();
    for _ in taken..found {
        let number = next_board_number(config).map_err(|e| format!("--port auto: {e}"))?;
        config
            .boards
            .push(unpaired_board(number, BoardSource::Auto));
        origins.insert(number, "--port auto".to_string());
    }
    Ok(())
}
