//! `touchmove event`: the event's layout in the cluster (pairings, boards, the PC of each
//! board, the arbiter token).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::cluster::ClusterSettings;
use crate::cluster::event_layout::{self, EventLayout};
use crate::cluster::settings::ClusterArgs;
use crate::event::spec::EventSpec;
use crate::event::{EventConfig, EventFile};

/// The `event` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum EventCommand {
    /// Write a round's boards, players and PCs into the cluster's event layout (again between
    /// rounds to change it); makes the event's arbiter token when it has none.
    Push(PushArgs),
    /// Print the event layout: boards, players, the PC given each board and the PC that
    /// claimed it.
    Show(ShowArgs),
}

/// Arguments of `touchmove event push`.
#[derive(Debug, clap::Args)]
pub struct PushArgs {
    /// The cluster.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// The event file (TOML): event, site, round, time control, boards and players; its
    /// [cluster] table says where the cluster is.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Pairings (FIDE TRF, PGN of headers or CSV) for the round.
    #[arg(long)]
    pub pairings: Option<PathBuf>,
    /// The round, overriding the event file's.
    #[arg(long)]
    pub round: Option<u32>,
    /// Event name, overriding the event file's (also the default cluster event id).
    // Its own id: the flattened cluster arguments have an `event` (`--cluster-event`) too,
    // and clap refuses two arguments of one id (a panic in debug builds).
    #[arg(long = "event", id = "event_name", value_name = "NAME")]
    pub event: Option<String>,
    /// The PC (recorder id) that records some boards: `PC=1-8,12` (repeat for each PC).
    #[arg(long = "pc", value_name = "PC=BOARDS")]
    pub pcs: Vec<String>,
    /// Replace the event's arbiter token with a new one (serve nodes take it from the
    /// cluster as they run; the old one stops working).
    #[arg(long)]
    pub new_token: bool,
}

/// Arguments of `touchmove event show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The cluster.
    #[command(flatten)]
    pub cluster: ClusterArgs,
    /// An event file whose [cluster] table says where the cluster is.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

/// Runs a `touchmove event` subcommand.
pub fn run(command: EventCommand) -> ExitCode {
    let result = match command {
        EventCommand::Push(args) => push(args),
        EventCommand::Show(args) => show(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("touchmove event: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Parses `PC=1-8,12` into board → PC.
pub fn parse_pcs(specs: &[String]) -> Result<BTreeMap<u32, String>, String> {
    let mut boards = BTreeMap::new();
    for spec in specs {
        let (pc, list) = spec
            .split_once('=')
            .ok_or_else(|| format!("--pc {spec:?}: write PC=BOARDS, e.g. --pc hall-pc-1=1-8"))?;
        let pc = crate::cluster::settings::sanitise(pc);
        if pc.is_empty() {
            return Err(format!("--pc {spec:?}: the PC id is empty"));
        }
        for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let number = |text: &str| {
                text.trim().parse::<u32>().map_err(|_| {
                    format!("--pc {spec:?}: {text:?} is not a board number (write e.g. 1-8,12)")
                })
            };
            let (first, last) = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => (number(part)?, number(part)?),
            };
            if first > last || last - first > 10_000 {
                return Err(format!("--pc {spec:?}: {part:?} is not a range of boards"));
            }
            for board in first..=last {
                if let Some(other) = boards.insert(board, pc.clone())
                    && other != pc
                {
                    return Err(format!(
                        "board {board} is given to PC {other:?} and to PC {pc:?}: give each \
                         board to one PC"
                    ));
                }
            }
        }
    }
    Ok(boards)
}

fn settings(
    cluster: &ClusterArgs,
    file: Option<&EventFile>,
    event: Option<&str>,
) -> Result<ClusterSettings, String> {
    ClusterSettings::resolve(cluster, file, event)?.ok_or_else(|| {
        "no cluster: give --cluster nats://HOST:PORT (or urls in the event file's [cluster] \
         table)"
            .to_string()
    })
}

/// Connects to the cluster and opens the event's layout bucket.
async fn open_layout(
    settings: &ClusterSettings,
) -> Result<async_nats::jetstream::kv::Store, String> {
    let client = crate::cluster::connect(settings)
        .await
        .map_err(|e| e.to_string())?;
    let js = async_nats::jetstream::new(client);
    event_layout::open(&js, settings)
        .await
        .map_err(|e| e.to_string())
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))
}

/// The round as the event file and the pairings describe it, read as `touchmove record`
/// reads it, with the event file as read.
fn round_config(args: &PushArgs) -> Result<(EventFile, EventConfig), String> {
    let spec = EventSpec {
        file: args.config.clone(),
        event: args.event.clone(),
        round: args.round,
        pairings: args.pairings.clone(),
        ..EventSpec::default()
    };
    let event = spec.read()?;
    let boards = &event.config;
    let plan = spec.round(boards, boards.round, event.encoding)?;
    for note in &plan.notes {
        eprintln!("touchmove event: {note}");
    }
    for problem in &plan.problems {
        eprintln!("touchmove event: PAIRINGS: {problem}");
    }
    Ok((event, plan.config))
}

fn push(args: PushArgs) -> Result<(), String> {
    let (event, config) = round_config(&args)?;
    let settings = settings(&args.cluster, Some(&event), Some(&config.event))?;
    let pcs = parse_pcs(&args.pcs)?;
    let unknown: Vec<String> = pcs
        .keys()
        .filter(|b| config.board(**b).is_none())
        .map(u32::to_string)
        .collect();
    if !unknown.is_empty() {
        return Err(format!(
            "--pc names boards {} that round {} does not have",
            unknown.join(", "),
            config.round
        ));
    }
    runtime()?.block_on(async move {
        let store = open_layout(&settings).await?;
        let report = event_layout::push(&store, &config, &pcs).await?;
        let token = if args.new_token {
            event_layout::new_token(&store).await?
        } else {
            event_layout::token_or_new(&store).await?
        };
        println!(
            "event {:?}: round {} with {} boards written to the layout in bucket {}",
            settings.event,
            config.round,
            report.boards,
            event_layout::bucket_name(&settings.event)
        );
        if !report.removed.is_empty() {
            println!(
                "boards removed from round {}: {:?}",
                config.round, report.removed
            );
        }
        for (board, pc) in &report.released {
            println!("board {board}: the claim of PC {pc:?} is dropped (the board moved)");
        }
        let unassigned = config.boards.len() - pcs.len();
        if unassigned > 0 {
            println!("{unassigned} boards have no PC: the first recorder to claim one records it");
        }
        println!("arbiter token of the event (the same on every serve node): {token}");
        Ok(())
    })
}

fn show(args: ShowArgs) -> Result<(), String> {
    let event = args.config.as_deref().map(EventFile::load).transpose();
    let event = event.map_err(|e| e.to_string())?;
    let settings = settings(&args.cluster, event.as_ref(), None)?;
    runtime()?.block_on(async move {
        let store = open_layout(&settings).await?;
        let layout = event_layout::read(&store).await?;
        print!("{}", describe(&settings.event, &layout));
        Ok(())
    })
}

/// The layout as `touchmove event show` prints it.
pub fn describe(event: &str, layout: &EventLayout) -> String {
    let mut text = match &layout.event {
        Some(info) => format!(
            "event {event:?}: {} ({}, {}), round {}{}\n",
            info.event,
            info.site,
            info.date,
            info.round,
            info.time_control
                .as_deref()
                .map(|tc| format!(", time control {tc}"))
                .unwrap_or_default()
        ),
        None => format!("event {event:?}: no layout pushed yet (`touchmove event push`)\n"),
    };
    let mut keys: Vec<(u32, u32)> = layout.boards.keys().copied().collect();
    keys.extend(layout.claims.keys().copied());
    keys.sort_unstable();
    keys.dedup();
    for (round, board) in keys {
        let planned = layout.boards.get(&(round, board));
        let claim = layout.claims.get(&(round, board));
        text.push_str(&format!(
            "round {round} board {board}: {} – {}; PC {}; claimed by {}\n",
            planned.map_or("?", |p| p.white.name.as_str()),
            planned.map_or("?", |p| p.black.name.as_str()),
            planned.and_then(|p| p.pc.as_deref()).unwrap_or("(any)"),
            claim.map_or("nobody yet".to_string(), |c| format!(
                "{} (host {})",
                c.recorder, c.host
            )),
        ));
    }
    text.push_str(if layout.has_token {
        "arbiter token: set\n"
    } else {
        "arbiter token: none yet\n"
    });
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcs_take_ranges_and_refuse_a_board_given_twice() {
        let pcs = parse_pcs(&["pc-a=1-3,7".into(), "pc-b=4".into()]).unwrap();
        let pairs: Vec<(u32, &str)> = pcs.iter().map(|(b, p)| (*b, p.as_str())).collect();
        assert_eq!(
            pairs,
            [
                (1, "pc-a"),
                (2, "pc-a"),
                (3, "pc-a"),
                (4, "pc-b"),
                (7, "pc-a")
            ]
        );
        let e = parse_pcs(&["pc-a=1-3".into(), "pc-b=3".into()]).unwrap_err();
        assert!(
            e.contains("pc-a") && e.contains("pc-b") && e.contains("board 3"),
            "{e}"
        );
        assert!(
            parse_pcs(&["pc-a".into()])
                .unwrap_err()
                .contains("PC=BOARDS")
        );
        assert!(parse_pcs(&["pc-a=x".into()]).unwrap_err().contains("\"x\""));
        assert!(parse_pcs(&["pc-a=5-2".into()]).is_err());
    }
}
