//! `touchmove sim`: a virtual DGT board on a pseudo-terminal playing a game from a PGN file.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use pgn_reader::{RawTag, Reader, SanPlus, Visitor};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, Move, Position};

use crate::sim::virtual_board::timeline::{Pace, lift_place};
use crate::sim::virtual_board::{VirtualBoard, VirtualBoardConfig};

/// Arguments of `touchmove sim`.
#[derive(Debug, clap::Args)]
pub struct SimArgs {
    /// PGN file holding the game to play.
    #[arg(long)]
    pub pgn: PathBuf,
    /// Which game of the file to play (1 = the first).
    #[arg(long, default_value_t = 1)]
    pub game: usize,
    /// Speed factor: 1 plays in real time (2 s per move), 10 ten times faster.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Present the board turned round (White at the connector end).
    #[arg(long)]
    pub rotated: bool,
    /// Port path to create (a symbolic link to the pseudo-terminal); default
    /// `$TMPDIR/touchmove-sim-<pid>/dgt0`.
    #[arg(long)]
    pub port: Option<PathBuf>,
    /// Time control of the clock, minutes+increment seconds.
    #[arg(long, default_value = "5+5")]
    pub clock: String,
    /// Exit when the game has been played instead of waiting for Ctrl-C.
    #[arg(long)]
    pub exit_when_done: bool,
}

/// Runs `touchmove sim`.
pub fn run(args: SimArgs) -> ExitCode {
    match tokio::runtime::Runtime::new() {
        Ok(rt) => match rt.block_on(simulate(args)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("touchmove sim: {message}");
                ExitCode::FAILURE
            }
        },
        Err(e) => {
            eprintln!("touchmove sim: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn simulate(args: SimArgs) -> Result<(), String> {
    if !(args.speed > 0.0 && args.speed.is_finite()) {
        return Err(format!("--speed {} must be a positive number", args.speed));
    }
    let (base_ms, increment_ms) = parse_time_control(&args.clock)?;
    let (start, moves) = read_game(&args.pgn, args.game)?;
    let script = lift_place(&start, &moves, Pace::default());
    let port = match args.port {
        Some(p) => p,
        None => {
            let dir = std::env::temp_dir().join(format!("touchmove-sim-{}", std::process::id()));
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            dir.join("dgt0")
        }
    };
    let mut config = VirtualBoardConfig::new(&port, script);
    config.speed = args.speed;
    config.rotated = args.rotated;
    config.base_time_ms = base_ms;
    config.increment_ms = increment_ms;
    config.initial = start.board().clone();
    let board = VirtualBoard::spawn(config)
        .map_err(|e| format!("cannot open a pseudo-terminal at {}: {e}", port.display()))?;
    let target = std::fs::read_link(&port)
        .map(|t| t.display().to_string())
        .unwrap_or_default();
    println!("{}", port.display());
    eprintln!(
        "virtual DGT board on {} (-> {target}): {} moves, waiting for a host to set an update \
         mode; Ctrl-C stops",
        port.display(),
        moves.len()
    );
    tokio::select! {
        () = board.finished() => eprintln!("game played"),
        _ = tokio::signal::ctrl_c() => return Ok(()),
    }
    if !args.exit_when_done {
        let _ = tokio::signal::ctrl_c().await;
    }
    Ok(())
}

/// Parses "minutes+seconds" (e.g. `5+5`, `90+30`) into base and increment milliseconds.
fn parse_time_control(text: &str) -> Result<(u64, u64), String> {
    let bad = || format!("--clock {text:?}: expected minutes+increment seconds, e.g. 5+5");
    let (minutes, increment) = text.split_once('+').ok_or_else(bad)?;
    let minutes: f64 = minutes.trim().parse().map_err(|_| bad())?;
    let increment: u64 = increment.trim().parse().map_err(|_| bad())?;
    if !(minutes > 0.0 && minutes <= 600.0) {
        return Err(bad());
    }
    Ok(((minutes * 60_000.0) as u64, increment * 1000))
}

/// Reads game number `index` (1-based) of a PGN file: its start position (the `FEN` tag, or
/// the standard position) and its moves.
pub fn read_game(path: &Path, index: usize) -> Result<(Chess, Vec<Move>), String> {
    let file =
        std::fs::File::open(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let mut reader = Reader::new(file);
    let mut visitor = GameMoves;
    let mut number = 0;
    loop {
        let game = reader
            .read_game(&mut visitor)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let Some(game) = game else {
            return Err(format!(
                "{}: game {index} asked, but the file holds {number} game(s)",
                path.display()
            ));
        };
        number += 1;
        if number == index {
            return game.map_err(|e| format!("{} game {index}: {e}", path.display()));
        }
    }
}

struct GameMoves;

struct Movetext {
    position: Chess,
    start: Chess,
    moves: Vec<Move>,
    error: Option<String>,
}

impl Visitor for GameMoves {
    type Tags = Option<String>;
    type Movetext = Movetext;
    type Output = Result<(Chess, Vec<Move>), String>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(None)
    }

    fn tag(
        &mut self,
        fen: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        if name == b"FEN" {
            *fen = Some(value.decode_utf8_lossy().into_owned());
        }
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, fen: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        let start = match fen {
            None => Chess::default(),
            Some(fen) => {
                let parsed = fen
                    .parse::<Fen>()
                    .map_err(|e| format!("FEN tag {fen:?}: {e}"))
                    .and_then(|f| {
                        f.into_position(CastlingMode::Chess960)
                            .map_err(|e| format!("FEN tag {fen:?}: {e}"))
                    });
                match parsed {
                    Ok(p) => p,
                    Err(e) => return ControlFlow::Break(Err(e)),
                }
            }
        };
        ControlFlow::Continue(Movetext {
            position: start.clone(),
            start,
            moves: Vec::new(),
            error: None,
        })
    }

    fn san(&mut self, text: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        if text.error.is_some() {
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&text.position) {
            Ok(m) => {
                text.position.play_unchecked(m);
                text.moves.push(m);
            }
            Err(e) => {
                let ply = text.moves.len();
                text.error = Some(format!(
                    "move {}{} {san_plus} is not legal ({e})",
                    ply / 2 + 1,
                    if ply % 2 == 0 { "." } else { "..." }
                ));
            }
        }
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, text: Self::Movetext) -> Self::Output {
        match text.error {
            Some(e) => Err(e),
            None => Ok((text.start, text.moves)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_control_parses_and_rejects() {
        assert_eq!(parse_time_control("5+5"), Ok((300_000, 5000)));
        assert_eq!(parse_time_control("90+30"), Ok((5_400_000, 30_000)));
        assert!(parse_time_control("5").is_err());
        assert!(parse_time_control("x+1").is_err());
        assert!(parse_time_control("0+1").is_err());
    }

    #[test]
    fn reads_the_asked_game_and_names_an_illegal_move() {
        let dir = tempfile::tempdir().expect("tempdir");
        let pgn = dir.path().join("g.pgn");
        std::fs::write(
            &pgn,
            "[Event \"a\"]\n\n1. e4 e5 2. Nf3 *\n\n[Event \"b\"]\n\n1. d4 d5 2. Ke3 *\n",
        )
        .expect("write");
        let (_, moves) = read_game(&pgn, 1).expect("game 1");
        assert_eq!(moves.len(), 3);
        let e = read_game(&pgn, 2).expect_err("illegal");
        assert!(e.contains("2. Ke3"), "{e}");
        let e = read_game(&pgn, 3).expect_err("missing");
        assert!(e.contains("holds 2 game(s)"), "{e}");
    }
}
