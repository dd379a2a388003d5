//! `touchmove results`: writes the results recorded in an output folder into round N of a
//! FIDE TRF, for the pairing program to read back.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::event::trf::{Encoding, Trf, TrfGame, result_codes};
use crate::record::GameRecord;
use crate::record::pgn::read_games_bytes;

/// Arguments of `touchmove results`.
#[derive(Debug, clap::Args)]
pub struct ResultsArgs {
    /// The TRF the round was paired from.
    #[arg(long)]
    pub trf: PathBuf,
    /// The round whose results to write.
    #[arg(long)]
    pub round: u32,
    /// The recorder's output folder (its `round-N/game-K.pgn` are read), or a folder of
    /// `game-K.pgn` files.
    #[arg(long)]
    pub games: PathBuf,
    /// The TRF to write: the input with round N's results and the points of their players
    /// (columns 81–84) filled in, nothing else changed.
    #[arg(long)]
    pub out: PathBuf,
    /// Write the recorded result over one the file already has (entered by the arbiter in
    /// the pairing program); without it such results are kept, and each difference is named.
    #[arg(long)]
    pub replace: bool,
    /// The TRF's encoding when it is not UTF-8: windows-1252 (Western Europe) or windows-1250
    /// (Central Europe). Default: guessed from the file, and said.
    #[arg(long, value_name = "ENCODING")]
    pub encoding: Option<Encoding>,
}

/// What the games of a round say: result codes by starting rank, and messages.
#[derive(Debug, Default)]
pub struct RoundResults {
    /// Result code for each player whose game has a result.
    pub codes: BTreeMap<u32, char>,
    /// Games that could not be matched or read: nothing is written while there are any.
    pub problems: Vec<String>,
    /// Boards without a result yet, results that differ from the file's: said.
    pub notes: Vec<String>,
}

fn same_name(a: &str, b: &str) -> bool {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect()
    };
    norm(a) == norm(b)
}

fn tag<'a>(game: &'a GameRecord, name: &str) -> &'a str {
    game.tag(name).unwrap_or("")
}

/// The `game-K.pgn` files of `dir/round-N` (or of `dir` itself), by board number.
fn game_files(dir: &Path, round: u32) -> std::io::Result<BTreeMap<u32, PathBuf>> {
    let round_dir = dir.join(format!("round-{round}"));
    let dir = if round_dir.is_dir() {
        round_dir
    } else {
        dir.to_path_buf()
    };
    crate::recorder::layout::game_files(&dir)
}

/// Reads the games under `dir` for round `round` of `trf`. A result the file has already
/// (the arbiter entered it) is kept unless `replace`; each difference is among the notes.
pub fn collect(trf: &Trf, round: u32, dir: &Path, replace: bool) -> Result<RoundResults, String> {
    let paired = trf
        .round(round)
        .map_err(|p| p.in_file(&trf.path).to_string())?;
    let files = game_files(dir, round)
        .map_err(|e| format!("cannot read the games folder {}: {e}", dir.display()))?;
    let name = |rank: u32| {
        trf.player(rank)
            .map_or_else(|| format!("#{rank}"), |p| p.player.name.clone())
    };
    let mut out = RoundResults::default();
    let mut done: BTreeMap<u32, PathBuf> = BTreeMap::new();
    for (board, path) in &files {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                out.problems
                    .push(format!("cannot read {}: {e}", path.display()));
                continue;
            }
        };
        let game = match read_games_bytes(&bytes) {
            Ok(games) => match games.into_iter().last() {
                Some(g) => g,
                None => continue,
            },
            Err(e) => {
                out.problems.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        let (white, black) = (tag(&game, "White"), tag(&game, "Black"));
        let matches =
            |g: &&TrfGame| same_name(&name(g.white), white) && same_name(&name(g.black), black);
        let Some(g) = paired
            .boards
            .iter()
            .filter(|g| g.board == *board)
            .find(matches)
            .or_else(|| paired.boards.iter().find(matches))
        else {
            out.problems.push(format!(
                "{}: White {white:?} and Black {black:?} are not a pairing of round {round} in {}; \
                 check --round and --trf",
                path.display(),
                trf.path.display()
            ));
            continue;
        };
        if let Some(other) = done.insert(g.board, path.clone()) {
            out.problems.push(format!(
                "{} and {} are both the game {} – {}; remove the one that is not",
                other.display(),
                path.display(),
                white,
                black
            ));
            continue;
        }
        let comments: String = game
            .initial_comments
            .iter()
            .chain(game.moves.iter().flat_map(|m| m.comments.iter()))
            .map(|c| c.to_lowercase())
            .collect::<Vec<_>>()
            .join(" ");
        let forfeit =
            tag(&game, "Termination") == "rules infraction" && comments.contains("forfeit");
        let unplayed = game.moves.len() < 2;
        let Some((w, b)) = result_codes(&game.result, forfeit, unplayed) else {
            out.notes.push(format!(
                "board {} ({} – {}) has no result yet; its columns are left as they are",
                g.board,
                name(g.white),
                name(g.black)
            ));
            continue;
        };
        if g.codes.0 != ' ' && g.codes != (w, b) {
            out.notes.push(format!(
                "board {} ({} – {}): the file has {} {}, the recorded game says {w} {b}; {}",
                g.board,
                name(g.white),
                name(g.black),
                g.codes.0,
                g.codes.1,
                if replace {
                    "the recorded result is written (--replace)"
                } else {
                    "the file's result is kept (give --replace to write the recorded one)"
                }
            ));
            if !replace {
                continue;
            }
        }
        out.codes.insert(g.white, w);
        out.codes.insert(g.black, b);
    }
    for g in &paired.boards {
        if !done.contains_key(&g.board) && !g.is_forfeit() {
            out.notes.push(format!(
                "board {} ({} – {}): no game recorded; its columns are left as they are",
                g.board,
                name(g.white),
                name(g.black)
            ));
        }
    }
    Ok(out)
}

/// Runs `touchmove results`.
pub fn run(args: ResultsArgs) -> ExitCode {
    let trf = match Trf::load_as(&args.trf, args.encoding) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("touchmove results: {e}");
            return ExitCode::FAILURE;
        }
    };
    if trf.encoding_guessed {
        eprintln!(
            "touchmove results: {} is not UTF-8; read as {} (guessed from its names and \
             federations; give --encoding windows-1252 or windows-1250 if the names look wrong)",
            args.trf.display(),
            trf.encoding
        );
    }
    for problem in &trf.problems {
        eprintln!("touchmove results: {}", problem.in_file(&trf.path));
    }
    let results = match collect(&trf, args.round, &args.games, args.replace) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("touchmove results: {e}");
            return ExitCode::FAILURE;
        }
    };
    for note in &results.notes {
        eprintln!("touchmove results: {note}");
    }
    if !results.problems.is_empty() {
        for problem in &results.problems {
            eprintln!("touchmove results: {problem}");
        }
        eprintln!("touchmove results: nothing written");
        return ExitCode::FAILURE;
    }
    let bytes = trf.with_results(args.round, &results.codes);
    if let Err(e) = crate::recorder::layout::write_atomically(&args.out, &bytes) {
        eprintln!(
            "touchmove results: cannot write {}: {e}",
            args.out.display()
        );
        return ExitCode::FAILURE;
    }
    eprintln!(
        "touchmove results: {} results of round {} written into {} ({})",
        results.codes.len() / 2,
        args.round,
        args.out.display(),
        trf.encoding
    );
    ExitCode::SUCCESS
}
