//! `touchmove pairings`: prints the boards the recorder will use for a round, so that the
//! arbiter can check them before the round.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::json;

use crate::event::Player;
use crate::event::pairings::load_round;
use crate::event::trf::Encoding;

/// How to print the boards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PairingsFormat {
    /// One line per board, for people.
    Text,
    /// One JSON object per line: `round`, `board`, `white`, `black`, and the players'
    /// `…_fide_id`, `…_title`, `…_rating`, `…_federation` when known; `"forfeit": true` for
    /// a forfeited game (not recorded) and `match` in a team tournament.
    Json,
}

/// Arguments of `touchmove pairings`.
#[derive(Debug, clap::Args)]
pub struct PairingsArgs {
    /// The pairings: a FIDE TRF, a PGN of headers or a CSV.
    pub file: PathBuf,
    /// The round.
    #[arg(long)]
    pub round: u32,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: PairingsFormat,
    /// A TRF's encoding when it is not UTF-8: windows-1252 (Western Europe) or windows-1250
    /// (Central Europe). Default: guessed from the file, and said.
    #[arg(long, value_name = "ENCODING")]
    pub encoding: Option<Encoding>,
}

fn described(p: &Player) -> String {
    let mut s = String::new();
    if let Some(t) = &p.title {
        s.push_str(t);
        s.push(' ');
    }
    s.push_str(&p.name);
    let extra: Vec<String> = [
        p.rating.map(|r| r.to_string()),
        p.federation.clone(),
        p.fide_id.map(|id| format!("FIDE {id}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !extra.is_empty() {
        s.push_str(&format!(" ({})", extra.join(", ")));
    }
    s
}

fn player_json(prefix: &str, p: &Player, object: &mut serde_json::Map<String, serde_json::Value>) {
    object.insert(prefix.to_string(), json!(p.name));
    if let Some(id) = p.fide_id {
        object.insert(format!("{prefix}_fide_id"), json!(id));
    }
    if let Some(t) = &p.title {
        object.insert(format!("{prefix}_title"), json!(t));
    }
    if let Some(r) = p.rating {
        object.insert(format!("{prefix}_rating"), json!(r));
    }
    if let Some(f) = &p.federation {
        object.insert(format!("{prefix}_federation"), json!(f));
    }
}

/// Runs `touchmove pairings`: the boards on stdout; notes (byes, forfeits) and problems on
/// stderr. Fails when a line could not be used.
pub fn run(args: PairingsArgs) -> ExitCode {
    let loaded = match load_round(&args.file, args.round, args.encoding) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("touchmove pairings: {e}");
            return ExitCode::FAILURE;
        }
    };
    for p in &loaded.pairings {
        match args.format {
            PairingsFormat::Text => println!(
                "board {:>3}{}: {} – {}{}",
                p.board,
                p.team_match
                    .map(|m| format!(" (match {m})"))
                    .unwrap_or_default(),
                described(&p.white),
                described(&p.black),
                if p.forfeit {
                    " (forfeit, not recorded)"
                } else {
                    ""
                }
            ),
            PairingsFormat::Json => {
                let mut object = serde_json::Map::new();
                object.insert("round".into(), json!(args.round));
                object.insert("board".into(), json!(p.board));
                if let Some(m) = p.team_match {
                    object.insert("match".into(), json!(m));
                }
                if p.forfeit {
                    object.insert("forfeit".into(), json!(true));
                }
                player_json("white", &p.white, &mut object);
                player_json("black", &p.black, &mut object);
                println!("{}", serde_json::Value::Object(object));
            }
        }
    }
    for note in &loaded.notes {
        eprintln!("touchmove pairings: {note}");
    }
    for problem in &loaded.problems {
        eprintln!("touchmove pairings: {problem}");
    }
    if loaded.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
