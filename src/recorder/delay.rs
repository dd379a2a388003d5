//! A round's transmission delay as the recorder keeps it: given when the round opens,
//! journalled, lengthened at most by a restart, and handed to the
//! [`Publication`](crate::server::Publication) with the times the journal gives.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use super::replay::{RoundBroadcast, RoundDelay};
use super::session::Session;
use super::{LIVE_DIR_NAME, RunOptions, say};
use crate::board::Millis;
use crate::event::EventConfig;
use crate::event::config::describe_delay as describe;
use crate::server::Publication;
use crate::store::Journal;

/// Gives `publication` the delays the journal holds (`broadcasts`), journals the delay of
/// the round `config` opens when it has one or a restart lengthens it, and has the public
/// folder catch up with the arbiter's files of an earlier round whose end the recorder
/// stopped before releasing. Returns when the round opened (session time).
pub(crate) fn delay_round(
    config: &EventConfig,
    options: &RunOptions,
    publication: &Publication,
    journal: &mut Journal,
    session: &Session,
    broadcasts: &BTreeMap<u32, RoundBroadcast>,
) -> Result<Millis, String> {
    let now = session.now_ms();
    let at = |t_ms: Millis| session.epoch() + Duration::from_millis(t_ms);
    let round = config.round;
    for (&earlier, broadcast) in broadcasts {
        let known = publication.is_delayed(earlier);
        for &(t_ms, delay) in &broadcast.delays {
            publication.delay_round(earlier, at(t_ms), delay);
        }
        let live = options
            .state_dir
            .join(LIVE_DIR_NAME)
            .join(format!("round-{earlier}"));
        let public = options.out_dir.join(format!("round-{earlier}"));
        if earlier != round && !known && differ(&live, &public) {
            publication.release_round_files(at(broadcast.last_ms), earlier, &live);
        }
    }
    let given = options.broadcast_delay.unwrap_or_default();
    let kept = publication.delay(round);
    let opened = broadcasts.get(&round).and_then(|b| b.delays.first());
    if given > kept {
        let entry = RoundDelay {
            round,
            delay_ms: given.as_millis() as u64,
        };
        journal
            .append(None, now, &entry.record())
            .map_err(|e| e.to_string())?;
        publication.delay_round(round, at(now), given);
        if opened.is_some() {
            say(&format!(
                "round {round}: broadcast delay lengthened from {} to {} for what happens from \
                 now on",
                describe(kept),
                describe(given)
            ));
        }
    } else if given < kept {
        say(&format!(
            "round {round} keeps the broadcast delay it opened with, {} (a round's delay is \
             never shortened: the public would see moves before their time); {} applies from \
             the next round",
            describe(kept),
            describe(given)
        ));
    }
    Ok(opened.map_or(now, |(t_ms, _)| *t_ms))
}

/// True when a file of the folder `live` is missing from the folder `public` or differs.
fn differ(live: &Path, public: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(live) else {
        return false;
    };
    entries.filter_map(Result::ok).any(|entry| {
        let theirs = std::fs::read(public.join(entry.file_name())).ok();
        theirs.is_none() || theirs != std::fs::read(entry.path()).ok()
    })
}
