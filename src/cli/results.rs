//! `touchmove results`: writes the results recorded in an output folder into round N of a
//! FIDE TRF, for the pairing program to read back.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::event::trf::{Encoding, Trf};
use crate::recorder::round_results::collect;

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

/// Runs `touchmove results`.
pub fn run(args: ResultsArgs) -> ExitCode {
    let trf = match Trf::load(&args.trf, args.encoding) {
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
