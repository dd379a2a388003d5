//! A round's results as the recorder's output folder holds them, matched to the pairings of
//! a FIDE TRF: what `touchmove results` writes back into the file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::pipeline::{MOVES_BEFORE_GAP, NOT_SEEN_BEGUN};
use crate::event::trf::{Trf, TrfGame, TrfRound, result_codes};
use crate::record::GameRecord;
use crate::record::pgn::read_games_bytes;

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

/// Reads the games under `dir` (its `round-N/game-K.pgn`, or `dir`'s own `game-K.pgn`) for
/// round `round` of `trf`. A result the file has already (the arbiter entered it) is kept
/// unless `replace`; each difference is among the notes.
pub fn collect(trf: &Trf, round: u32, dir: &Path, replace: bool) -> Result<RoundResults, String> {
    let paired = trf
        .round(round)
        .map_err(|p| p.in_file(&trf.path).to_string())?;
    let files = game_files(dir, round)
        .map_err(|e| format!("cannot read the games folder {}: {e}", dir.display()))?;
    let mut matching = Matching {
        trf,
        paired: &paired,
        replace,
        done: BTreeMap::new(),
        out: RoundResults::default(),
    };
    for (board, path) in &files {
        match last_game(path) {
            Ok(Some(game)) => matching.take(*board, path, &game),
            Ok(None) => {}
            Err(problem) => matching.out.problems.push(problem),
        }
    }
    for g in &paired.boards {
        if !matching.done.contains_key(&g.board) && !g.is_forfeit() {
            let note = format!(
                "board {} ({} – {}): no game recorded; its columns are left as they are",
                g.board,
                matching.name(g.white),
                matching.name(g.black)
            );
            matching.out.notes.push(note);
        }
    }
    Ok(matching.out)
}

/// The `game-K.pgn` files of `dir/round-N` (or of `dir` itself), by board number.
fn game_files(dir: &Path, round: u32) -> std::io::Result<BTreeMap<u32, PathBuf>> {
    let round_dir = dir.join(format!("round-{round}"));
    let dir = if round_dir.is_dir() {
        round_dir
    } else {
        dir.to_path_buf()
    };
    super::layout::game_files(&dir)
}

/// The last game of a PGN file (the board's latest), if it holds one.
fn last_game(path: &Path) -> Result<Option<GameRecord>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let games = read_games_bytes(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(games.into_iter().last())
}

/// The games of one round being matched to its pairings.
struct Matching<'a> {
    trf: &'a Trf,
    paired: &'a TrfRound,
    replace: bool,
    /// The file of each board already matched.
    done: BTreeMap<u32, PathBuf>,
    out: RoundResults,
}

impl Matching<'_> {
    /// A player's name by starting rank.
    fn name(&self, rank: u32) -> String {
        self.trf
            .player(rank)
            .map_or_else(|| format!("#{rank}"), |p| p.player.name.clone())
    }

    /// The pairing `game` (from board `board`'s file) is, on its board first.
    fn pairing_of(&self, board: u32, game: &GameRecord) -> Option<&TrfGame> {
        let (white, black) = (tag(game, "White"), tag(game, "Black"));
        let matches = |g: &&TrfGame| {
            same_name(&self.name(g.white), white) && same_name(&self.name(g.black), black)
        };
        let boards = &self.paired.boards;
        boards
            .iter()
            .filter(|g| g.board == board)
            .find(matches)
            .or_else(|| boards.iter().find(matches))
    }

    /// Takes the result of `game`, read from board `board`'s file at `path`.
    fn take(&mut self, board: u32, path: &Path, game: &GameRecord) {
        let (white, black) = (tag(game, "White"), tag(game, "Black"));
        let Some(g) = self.pairing_of(board, game).cloned() else {
            self.out.problems.push(format!(
                "{}: White {white:?} and Black {black:?} are not a pairing of round {} in {}; \
                 check --round and --trf",
                path.display(),
                self.paired.round,
                self.trf.path.display()
            ));
            return;
        };
        if let Some(other) = self.done.insert(g.board, path.to_path_buf()) {
            self.out.problems.push(format!(
                "{} and {} are both the game {white} – {black}; remove the one that is not",
                other.display(),
                path.display(),
            ));
            return;
        }
        let players = format!(
            "board {} ({} – {})",
            g.board,
            self.name(g.white),
            self.name(g.black)
        );
        let (short, whole, forfeit) = (
            game.moves.len() < 2,
            recorded_from_start(game),
            is_forfeit(game),
        );
        let Some((w, b)) = result_codes(&game.result, forfeit, short && whole) else {
            self.out.notes.push(format!(
                "{players} has no result yet; its columns are left as they are"
            ));
            return;
        };
        if short && !whole && !forfeit {
            self.out.notes.push(format!(
                "{players}: its file does not hold the game from its start; its result is \
                 written as a played game's (write W, D or L by hand if it lasted less than \
                 one move)"
            ));
        }
        if g.codes.0 != ' ' && g.codes != (w, b) {
            self.out.notes.push(format!(
                "{players}: the file has {} {}, the recorded game says {w} {b}; {}",
                g.codes.0,
                g.codes.1,
                if self.replace {
                    "the recorded result is written (--replace)"
                } else {
                    "the file's result is kept (give --replace to write the recorded one)"
                }
            ));
            if !self.replace {
                return;
            }
        }
        self.out.codes.insert(g.white, w);
        self.out.codes.insert(g.black, b);
    }
}

/// A game the arbiter ended as a forfeit (a rules infraction whose comments say so).
fn is_forfeit(game: &GameRecord) -> bool {
    let comments: String = game
        .initial_comments
        .iter()
        .chain(game.moves.iter().flat_map(|m| m.comments.iter()))
        .map(|c| c.to_lowercase())
        .collect::<Vec<_>>()
        .join(" ");
    tag(game, "Termination") == "rules infraction" && comments.contains("forfeit")
}

/// The file holds the game from its start: how many moves it has is how long the game
/// lasted. A game the recorder never saw begin, or one that goes on from the board's
/// position after a gap, lasted longer than its moves in the file say: the letters of a
/// game of less than one move (not rated) are not for it, its result is a played one.
fn recorded_from_start(game: &GameRecord) -> bool {
    !game.initial_comments.iter().any(|c| {
        let text = c.split_whitespace().collect::<Vec<_>>().join(" ");
        text.starts_with(NOT_SEEN_BEGUN) || text.starts_with(MOVES_BEFORE_GAP)
    })
}

/// Names that differ only in spaces and case are one name.
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::TimeControl;
    use crate::event::EventConfig;
    use crate::record::arbiter::{ArbiterAction, ArbiterRequest};
    use crate::record::pgn::write_game;
    use crate::recorder::pipeline::{BoardPipeline, GameTags};

    /// Board 3 of round 3 of the fixture: players 9 (White) and 8 (Black).
    const WHITE: &str = "Björk, Ingrid";
    const BLACK: &str = "Núñez, Iñaki";

    /// The codes `touchmove results` gives players 9 and 8 for `game` as board 3's file.
    fn codes_of(game: &GameRecord) -> (Option<char>, Option<char>) {
        let trf_path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/trf/accents-utf8.trf");
        let trf = Trf::load(&trf_path, None).expect("fixture readable");
        let dir = tempfile::tempdir().expect("temporary folder");
        let round_dir = dir.path().join("round-3");
        std::fs::create_dir_all(&round_dir).expect("round folder");
        std::fs::write(round_dir.join("game-3.pgn"), write_game(game)).expect("game file");
        let results = collect(&trf, 3, dir.path(), false).expect("round read");
        assert!(results.problems.is_empty(), "{:?}", results.problems);
        (
            results.codes.get(&9).copied(),
            results.codes.get(&8).copied(),
        )
    }

    fn with_players(mut game: GameRecord) -> GameRecord {
        for (name, value) in &mut game.tags {
            match name.as_str() {
                "White" => *value = WHITE.to_string(),
                "Black" => *value = BLACK.to_string(),
                "Round" => *value = "3.3".to_string(),
                _ => {}
            }
        }
        game
    }

    /// The recorder never saw the game begin (it came up too late, and told the arbiter), and
    /// the arbiter entered the draw from the scoresheets: a played draw (`=`), not the `D` of
    /// a game that lasted less than one move (simulation seed 500).
    #[test]
    fn a_result_the_arbiter_entered_for_a_game_never_seen_begun_is_a_played_result() {
        let control = TimeControl::parse("5400+30").expect("time control");
        let mut p = BoardPipeline::new(GameTags::new(&EventConfig::default(), 3), control);
        let request = ArbiterRequest {
            who: "Anna".into(),
            board: 3,
            action: ArbiterAction::SetResult {
                result: "1/2-1/2".into(),
                reason: "from the scoresheets".into(),
            },
            key: None,
        };
        p.on_arbiter(3_600_000, &request, &mut Vec::new())
            .expect("result entered");
        assert_eq!(codes_of(&with_players(p.record())), (Some('='), Some('=')));
    }

    /// A game that goes on from the board's position after a gap, with no move since and the
    /// arbiter's draw: played (`=`), as the moves before the gap show (simulation seed 409).
    #[test]
    fn a_game_taken_up_from_the_board_with_no_move_since_is_a_played_result() {
        let pgn = format!(
            "[Event \"Test\"]\n[Round \"3.3\"]\n[White \"{WHITE}\"]\n[Black \"{BLACK}\"]\n\
             [Result \"1/2-1/2\"]\n[SetUp \"1\"]\n\
             [FEN \"rnbqkbnr/pppp1ppp/4p3/8/3PP3/8/PPP2PPP/RN1QKBNR b KQkq - 0 1\"]\n\n\
             {{moves before the gap: 1.e4; the moves made while the link was down were not \
             observed and no legal sequence explains the board, so the game goes on from the \
             board's position}} {{1/2-1/2 from the scoresheets}} 1/2-1/2\n"
        );
        let game = crate::record::pgn::read_games(&pgn)
            .expect("game file")
            .remove(0);
        assert_eq!(codes_of(&game), (Some('='), Some('=')));
    }

    /// A game recorded from its start that ended before a move each still gets the letters of
    /// a game of less than one move.
    #[test]
    fn a_game_recorded_from_its_start_with_one_move_gets_the_unplayed_letters() {
        let pgn = format!(
            "[Event \"Test\"]\n[Round \"3.3\"]\n[White \"{WHITE}\"]\n[Black \"{BLACK}\"]\n\
             [Result \"1-0\"]\n\n1. e4 {{1-0 Black lost on time}} 1-0\n"
        );
        let game = crate::record::pgn::read_games(&pgn)
            .expect("game file")
            .remove(0);
        assert_eq!(codes_of(&game), (Some('W'), Some('L')));
    }
}
