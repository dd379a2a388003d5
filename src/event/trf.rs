//! FIDE Tournament Report Files (TRF16/TRF26): the players and a round's pairings in, the
//! round's results out.
//!
//! The file is kept as the bytes it was read from, so that writing results back changes
//! position 99 (+10 per round) of the players of one round and nothing else: not the line
//! ends, not the encoding, not the lines touchmove does not understand.
//!
//! Positions are 1-based character columns as in the FIDE format description: player lines
//! (`001`) carry the starting rank (5–8), title (11–13), name (15–47), rating (49–52),
//! federation (54–56), FIDE id (58–68), and one block per round from column 92 on: opponent
//! (4 digits), colour (`w`/`b`), result code.
//!
//! Files are read as UTF-8 when they are valid UTF-8 and as Latin-1 otherwise (the format
//! names no encoding; pairing programs write either).
//!
//! A round's boards are the games of that round in the usual order: higher score of the pair
//! before the round first, then higher total score of the pair, then the pair's best starting
//! rank. Byes, absences and forfeits get no board.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::player::Player;

/// The encoding a file was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 (with or without a byte-order mark).
    Utf8,
    /// ISO-8859-1: every byte is one character.
    Latin1,
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Latin1 => "Latin-1",
        })
    }
}

/// A colour in a round block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    /// `w`.
    White,
    /// `b`.
    Black,
}

/// One player's block of one round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundEntry {
    /// Opponent's starting rank; `None` for `0000` or blanks (bye, absence).
    pub opponent: Option<u32>,
    /// Colour; `None` for `-` or blank.
    pub colour: Option<Colour>,
    /// Result code as written (`1 = 0 + - W D L H F U Z`), blank while not played.
    pub result: char,
}

/// A player line (`001`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfPlayer {
    /// Starting rank.
    pub rank: u32,
    /// Line of the file, from 1.
    pub line: usize,
    /// Name, title, rating, federation and FIDE id.
    pub player: Player,
    /// Round blocks, round 1 first; `None` where the block is blank or malformed.
    pub rounds: Vec<Option<RoundEntry>>,
}

/// Something wrong in a file: the line, the column and the field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfProblem {
    /// Line, from 1.
    pub line: usize,
    /// First column of the field, from 1.
    pub column: usize,
    /// The field (`rating`, `round 3 opponent`, …).
    pub field: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl TrfProblem {
    fn new(line: usize, column: usize, field: impl Into<String>, message: String) -> TrfProblem {
        TrfProblem {
            line,
            column,
            field: field.into(),
            message,
        }
    }

    /// The problem as a configuration error of `path`.
    pub fn in_file(&self, path: &Path) -> ConfigError {
        ConfigError::Invalid {
            path: path.to_path_buf(),
            line: self.line,
            field: format!("{} (column {})", self.field, self.column),
            message: self.message.clone(),
        }
    }
}

/// A game of a round: the two players' starting ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfGame {
    /// Board number (1 for the top board); 0 for forfeits, which get no board.
    pub board: u32,
    /// White's starting rank.
    pub white: u32,
    /// Black's starting rank.
    pub black: u32,
    /// The white player's line.
    pub line: usize,
    /// Results already in the file (white's code, black's code); blanks when not played.
    pub codes: (char, char),
}

/// A player without a game in a round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfBye {
    /// Starting rank.
    pub rank: u32,
    /// The code: `H` half-point bye, `F` full-point, `U` pairing-allocated, `Z`/blank
    /// absent, `+`/`-` forfeit without opponent.
    pub code: char,
}

/// A round as the file pairs it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TrfRound {
    /// The round number.
    pub round: u32,
    /// The games to be played, in board order.
    pub boards: Vec<TrfGame>,
    /// Games forfeited before they began (`+`/`-` with an opponent): no board.
    pub forfeits: Vec<TrfGame>,
    /// Byes and absences.
    pub byes: Vec<TrfBye>,
    /// Pairings the file contradicts itself about: those players get no board.
    pub problems: Vec<TrfProblem>,
}

/// One line of the file as read.
#[derive(Debug, Clone)]
struct RawLine {
    /// The line's bytes without its end.
    bytes: Vec<u8>,
    /// `\n`, `\r\n` or nothing (last line).
    end: &'static [u8],
}

/// A Tournament Report File.
#[derive(Debug, Clone)]
pub struct Trf {
    /// Where it was read from (for messages).
    pub path: PathBuf,
    /// How it was decoded.
    pub encoding: Encoding,
    bom: bool,
    lines: Vec<RawLine>,
    /// The players by starting rank.
    pub players: BTreeMap<u32, TrfPlayer>,
    /// The number of rounds declared (`XXR` or `142`) and its line.
    pub declared_rounds: Option<(u32, usize)>,
    /// Lines that could not be read fully (the rest of the file is still used).
    pub problems: Vec<TrfProblem>,
}

/// The result codes of the format (letters in either case).
const RESULT_CODES: &str = "10=+-WDLHFUZ";

/// First column of round `round`'s block.
pub fn round_column(round: u32) -> usize {
    92 + 10 * (round as usize - 1)
}

/// True when `bytes` look like a TRF: a line starting with `001 ` or `012 `.
pub fn looks_like_trf(bytes: &[u8]) -> bool {
    bytes
        .split(|&b| b == b'\n')
        .any(|l| l.starts_with(b"001 ") || l.starts_with(b"012 "))
}

/// The characters of a line's columns `from..=to` (1-based), trimmed.
fn columns(chars: &[char], from: usize, to: usize) -> String {
    if from > chars.len() {
        return String::new();
    }
    chars[from - 1..to.min(chars.len())]
        .iter()
        .collect::<String>()
        .trim()
        .to_string()
}

fn column(chars: &[char], at: usize) -> char {
    chars.get(at - 1).copied().unwrap_or(' ')
}

/// Half points a code gives (`1 + W F U`: 2, `= D H`: 1, others 0).
fn half_points(code: char) -> u32 {
    match code.to_ascii_uppercase() {
        '1' | '+' | 'W' | 'F' | 'U' => 2,
        '=' | 'D' | 'H' => 1,
        _ => 0,
    }
}

impl Trf {
    /// Reads a file.
    pub fn load(path: &Path) -> Result<Trf, ConfigError> {
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Trf::parse(&bytes, path))
    }

    /// Reads a file's bytes; `path` is used in messages.
    pub fn parse(bytes: &[u8], path: &Path) -> Trf {
        let bom = bytes.starts_with(b"\xef\xbb\xbf");
        let body = if bom { &bytes[3..] } else { bytes };
        let encoding = if std::str::from_utf8(body).is_ok() {
            Encoding::Utf8
        } else {
            Encoding::Latin1
        };
        let mut lines = Vec::new();
        let mut rest = body;
        while !rest.is_empty() {
            let (line, end, next): (&[u8], &'static [u8], &[u8]) =
                match rest.iter().position(|&b| b == b'\n') {
                    Some(i) if i > 0 && rest[i - 1] == b'\r' => {
                        (&rest[..i - 1], b"\r\n", &rest[i + 1..])
                    }
                    Some(i) => (&rest[..i], b"\n", &rest[i + 1..]),
                    None => (rest, b"", &[]),
                };
            lines.push(RawLine {
                bytes: line.to_vec(),
                end,
            });
            rest = next;
        }
        let mut trf = Trf {
            path: path.to_path_buf(),
            encoding,
            bom,
            lines,
            players: BTreeMap::new(),
            declared_rounds: None,
            problems: Vec::new(),
        };
        for i in 0..trf.lines.len() {
            let chars = trf.chars(i);
            let line = i + 1;
            let tag: String = chars.iter().take(3).collect();
            match tag.as_str() {
                "001" => trf.read_player(&chars, line),
                "XXR" | "142" => {
                    let value: String = chars.iter().skip(3).collect();
                    match value.trim().parse::<u32>() {
                        Ok(n) => trf.declared_rounds = Some((n, line)),
                        Err(_) => trf.problems.push(TrfProblem::new(
                            line,
                            5,
                            "number of rounds",
                            format!("expected a number, found {:?}", value.trim()),
                        )),
                    }
                }
                _ => {}
            }
        }
        trf
    }

    /// Line `i` (0-based) as characters.
    fn chars(&self, i: usize) -> Vec<char> {
        let bytes = &self.lines[i].bytes;
        match self.encoding {
            Encoding::Utf8 => String::from_utf8_lossy(bytes).chars().collect(),
            Encoding::Latin1 => bytes.iter().map(|&b| char::from(b)).collect(),
        }
    }

    fn read_player(&mut self, chars: &[char], line: usize) {
        let mut problem = |column: usize, field: &str, message: String| {
            self.problems
                .push(TrfProblem::new(line, column, field, message))
        };
        let rank_text = columns(chars, 5, 8);
        let Some(rank) = rank_text.parse::<u32>().ok().filter(|&r| r > 0) else {
            problem(
                5,
                "starting rank",
                format!(
                    "expected the player's starting rank (a number from 1) in columns 5–8, found \
                     {rank_text:?}; this player gets no board"
                ),
            );
            return;
        };
        let name = columns(chars, 15, 47);
        if name.is_empty() {
            problem(
                15,
                "name",
                format!("player {rank} has no name in columns 15–47"),
            );
        }
        let mut player = Player::named(if name.is_empty() { "?" } else { &name });
        let title = columns(chars, 11, 13);
        player.title = (!title.is_empty()).then(|| title.to_ascii_uppercase());
        let rating = columns(chars, 49, 52);
        if !rating.is_empty() {
            match rating.parse::<u32>() {
                Ok(0) => {}
                Ok(r) => player.rating = Some(r),
                Err(_) => problem(
                    49,
                    "rating",
                    format!("player {rank}: expected a rating in columns 49–52, found {rating:?}"),
                ),
            }
        }
        let federation = columns(chars, 54, 56);
        player.federation = (!federation.is_empty()).then_some(federation);
        let fide_id = columns(chars, 58, 68);
        if !fide_id.is_empty() {
            match fide_id.parse::<u64>() {
                Ok(0) => {}
                Ok(id) => player.fide_id = Some(id),
                Err(_) => problem(
                    58,
                    "FIDE id",
                    format!(
                        "player {rank}: expected a FIDE id in columns 58–68, found {fide_id:?}"
                    ),
                ),
            }
        }
        let mut rounds = Vec::new();
        let mut round = 1;
        while round_column(round) <= chars.len() {
            let at = round_column(round);
            rounds.push(
                read_block(chars, at, round).unwrap_or_else(|(column, field, m)| {
                    problem(column, &field, format!("player {rank}: {m}"));
                    None
                }),
            );
            round += 1;
        }
        if let Some(first) = self.players.get(&rank) {
            let first_line = first.line;
            self.problems.push(TrfProblem::new(
                line,
                5,
                "starting rank",
                format!(
                    "starting rank {rank} is also on line {first_line}; each player needs a \
                     rank of his own (this line is left out)"
                ),
            ));
            return;
        }
        self.players.insert(
            rank,
            TrfPlayer {
                rank,
                line,
                player,
                rounds,
            },
        );
    }

    /// The player with this starting rank.
    pub fn player(&self, rank: u32) -> Option<&TrfPlayer> {
        self.players.get(&rank)
    }

    /// The highest round any player has a block for.
    pub fn rounds_in_file(&self) -> u32 {
        self.players
            .values()
            .map(|p| {
                p.rounds
                    .iter()
                    .rposition(Option::is_some)
                    .map_or(0, |i| i + 1)
            })
            .max()
            .unwrap_or(0) as u32
    }

    /// Round `round`'s games, forfeits and byes, or why the file has no such round.
    pub fn round(&self, round: u32) -> Result<TrfRound, TrfProblem> {
        let in_file = self.rounds_in_file();
        let (declared, declared_line) = self.declared_rounds.unwrap_or((in_file, 1));
        let column = if round > 0 { round_column(round) } else { 92 };
        if round == 0 || round > declared.max(in_file) {
            return Err(TrfProblem::new(
                declared_line,
                column,
                "round",
                format!(
                    "round {round} does not exist: the file has {} round(s){}",
                    declared.max(in_file),
                    if in_file > 0 {
                        format!(", with pairings for rounds 1–{in_file}")
                    } else {
                        String::new()
                    }
                ),
            ));
        }
        let entry = |p: &TrfPlayer| p.rounds.get(round as usize - 1).cloned().flatten();
        if !self.players.values().any(|p| entry(p).is_some()) {
            return Err(TrfProblem::new(
                declared_line,
                column,
                "round",
                format!(
                    "round {round} is not paired in this file yet (no player has anything in \
                     columns {column}–{}); export the file from the pairing program after \
                     pairing round {round}",
                    column + 7
                ),
            ));
        }
        let field = format!("round {round} opponent");
        let mut out = TrfRound {
            round,
            ..TrfRound::default()
        };
        let mut games = Vec::new();
        for p in self.players.values() {
            let Some(mine) = entry(p) else {
                out.byes.push(TrfBye {
                    rank: p.rank,
                    code: ' ',
                });
                continue;
            };
            let Some(o) = mine.opponent else {
                out.byes.push(TrfBye {
                    rank: p.rank,
                    code: mine.result,
                });
                continue;
            };
            let problem = |message: String| TrfProblem::new(p.line, column, &field, message);
            let Some(opponent) = self.players.get(&o).filter(|_| o != p.rank) else {
                out.problems.push(problem(format!(
                    "player {} is paired with {o}, who is {}; this pairing gets no board",
                    p.rank,
                    if o == p.rank {
                        "the player himself"
                    } else {
                        "not in the file"
                    }
                )));
                continue;
            };
            let theirs = entry(opponent);
            if theirs.as_ref().and_then(|t| t.opponent) != Some(p.rank) {
                out.problems.push(problem(format!(
                    "player {} is paired with {o}, but {o}'s line (line {}) {}; a player can be \
                     paired only once a round, so this pairing gets no board",
                    p.rank,
                    opponent.line,
                    match theirs.as_ref().and_then(|t| t.opponent) {
                        Some(x) => format!("pairs {o} with {x}"),
                        None => format!("has no opponent for {o} in round {round}"),
                    }
                )));
                continue;
            }
            if o < p.rank {
                continue;
            }
            let theirs = theirs.unwrap_or_else(|| mine.clone());
            let (white, black, codes, line) = match (mine.colour, theirs.colour) {
                (Some(Colour::White), Some(Colour::Black)) => {
                    (p.rank, o, (mine.result, theirs.result), p.line)
                }
                (Some(Colour::Black), Some(Colour::White)) => {
                    (o, p.rank, (theirs.result, mine.result), opponent.line)
                }
                _ => {
                    out.problems.push(TrfProblem::new(
                        p.line,
                        column + 5,
                        format!("round {round} colour"),
                        format!(
                            "players {} and {o} (line {}) do not have opposite colours `w` and \
                             `b`; this pairing gets no board",
                            p.rank, opponent.line
                        ),
                    ));
                    continue;
                }
            };
            let game = TrfGame {
                board: 0,
                white,
                black,
                line,
                codes,
            };
            if matches!(codes.0, '+' | '-') || matches!(codes.1, '+' | '-') {
                out.forfeits.push(game);
            } else {
                games.push(game);
            }
        }
        let score = |rank: u32| -> u32 {
            self.players.get(&rank).map_or(0, |p| {
                p.rounds
                    .iter()
                    .take(round as usize - 1)
                    .flatten()
                    .map(|e| half_points(e.result))
                    .sum()
            })
        };
        games.sort_by_key(|g| {
            let (w, b) = (score(g.white), score(g.black));
            (
                std::cmp::Reverse(w.max(b)),
                std::cmp::Reverse(w + b),
                g.white.min(g.black),
            )
        });
        for (i, g) in games.iter_mut().enumerate() {
            g.board = i as u32 + 1;
        }
        out.boards = games;
        Ok(out)
    }

    /// The file with round `round`'s result codes set from `codes` (starting rank → code):
    /// the same bytes but for those columns.
    pub fn with_results(&self, round: u32, codes: &BTreeMap<u32, char>) -> Vec<u8> {
        let at = round_column(round) + 7;
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice(b"\xef\xbb\xbf");
        }
        let line_of_rank: BTreeMap<usize, u32> = self
            .players
            .values()
            .map(|p| (p.line - 1, p.rank))
            .collect();
        for (i, raw) in self.lines.iter().enumerate() {
            match line_of_rank.get(&i).and_then(|rank| codes.get(rank)) {
                Some(&code) => out.extend(self.set_column(i, at, code)),
                None => out.extend_from_slice(&raw.bytes),
            }
            out.extend_from_slice(raw.end);
        }
        out
    }

    /// Line `i`'s bytes with character column `at` replaced by the ASCII `code` (spaces added
    /// if the line is shorter).
    fn set_column(&self, i: usize, at: usize, code: char) -> Vec<u8> {
        let mut bytes = self.lines[i].bytes.clone();
        let offset = match self.encoding {
            Encoding::Latin1 => Some(at - 1).filter(|&o| o < bytes.len()),
            Encoding::Utf8 => String::from_utf8_lossy(&bytes)
                .char_indices()
                .nth(at - 1)
                .map(|(o, _)| o),
        };
        let mut code_bytes = [0u8; 4];
        let code_bytes = code.encode_utf8(&mut code_bytes).as_bytes();
        match offset {
            Some(o) => {
                let width = match self.encoding {
                    Encoding::Latin1 => 1,
                    Encoding::Utf8 => std::str::from_utf8(&bytes[o..])
                        .ok()
                        .and_then(|s| s.chars().next())
                        .map_or(1, char::len_utf8),
                };
                bytes.splice(o..o + width, code_bytes.iter().copied());
            }
            None => {
                let have = self.chars(i).len();
                bytes.extend(std::iter::repeat_n(b' ', at - 1 - have));
                bytes.extend_from_slice(code_bytes);
            }
        }
        bytes
    }
}

type BlockError = (usize, String, String);

/// Reads the round block at column `at`: `None` when blank.
fn read_block(chars: &[char], at: usize, round: u32) -> Result<Option<RoundEntry>, BlockError> {
    let opponent_text = columns(chars, at, at + 3);
    let colour = column(chars, at + 5);
    let result = column(chars, at + 7);
    if opponent_text.is_empty() && colour == ' ' && result == ' ' {
        return Ok(None);
    }
    let opponent = match opponent_text.parse::<u32>() {
        Ok(0) => None,
        Ok(n) => Some(n),
        Err(_) if opponent_text.is_empty() => None,
        Err(_) => {
            return Err((
                at,
                format!("round {round} opponent"),
                format!(
                    "expected the opponent's starting rank (or 0000) in columns {at}–{}, found \
                     {opponent_text:?}",
                    at + 3
                ),
            ));
        }
    };
    let colour = match colour {
        'w' | 'W' => Some(Colour::White),
        'b' | 'B' => Some(Colour::Black),
        '-' | ' ' => None,
        other => {
            return Err((
                at + 5,
                format!("round {round} colour"),
                format!(
                    "expected `w`, `b` or `-` in column {}, found {other:?}",
                    at + 5
                ),
            ));
        }
    };
    if result != ' ' && !RESULT_CODES.contains(result.to_ascii_uppercase()) {
        return Err((
            at + 7,
            format!("round {round} result"),
            format!(
                "expected a result code (1 = 0 + - W D L H F U Z) in column {}, found {result:?}",
                at + 7
            ),
        ));
    }
    Ok(Some(RoundEntry {
        opponent,
        colour,
        result,
    }))
}

/// The codes of a game's result for (white, black): `1-0` → (`1`, `0`); a forfeit (no move
/// by one of the players) → (`+`, `-`); a game of less than one move each → `W D L`.
pub fn result_codes(result: &str, forfeit: bool, unplayed: bool) -> Option<(char, char)> {
    let (w, b) = match result {
        "1-0" => ('1', '0'),
        "0-1" => ('0', '1'),
        "1/2-1/2" => ('=', '='),
        _ => return None,
    };
    let letter = |c: char| match c {
        '1' => 'W',
        '0' => 'L',
        _ => 'D',
    };
    let forfeit_code = |c: char| if c == '1' { '+' } else { '-' };
    Some(if forfeit && w != '=' {
        (forfeit_code(w), forfeit_code(b))
    } else if unplayed {
        (letter(w), letter(b))
    } else {
        (w, b)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(rank: u32, name: &str, rating: &str, blocks: &[&str]) -> String {
        let mut l = format!(
            "001 {rank:>4}      {name:<33} {rating:>4} NOR 12345678901 1990/00/00  0.0 {rank:>4}"
        );
        for b in blocks {
            l.push_str("  ");
            l.push_str(b);
        }
        l
    }

    fn parse(lines: &[String]) -> Trf {
        Trf::parse(lines.join("\n").as_bytes(), Path::new("t.trf"))
    }

    #[test]
    fn columns_are_where_the_format_says() {
        let l = line(1, "Ab, Cd", "2100", &["   2 w 1"]);
        assert_eq!(l.find("   2 w 1"), Some(91));
        let t = parse(&[l]);
        let p = &t.players[&1];
        assert_eq!(p.player.name, "Ab, Cd");
        assert_eq!(p.player.rating, Some(2100));
        assert_eq!(p.player.fide_id, Some(12345678901));
        assert_eq!(p.rounds[0].as_ref().unwrap().opponent, Some(2));
    }

    #[test]
    fn boards_follow_scores_then_rank() {
        let t = parse(&[
            line(1, "A", "2400", &["   2 w 0", "   4 b  "]),
            line(2, "B", "2300", &["   1 b 1", "   3 w  "]),
            line(3, "C", "2200", &["   4 w 1", "   2 b  "]),
            line(4, "D", "2100", &["   3 b 0", "   1 w  "]),
        ]);
        let r = t.round(2).unwrap();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        assert_eq!(
            r.boards
                .iter()
                .map(|g| (g.board, g.white, g.black))
                .collect::<Vec<_>>(),
            vec![(1, 2, 3), (2, 4, 1)]
        );
    }

    #[test]
    fn a_player_paired_twice_costs_only_the_bad_claim() {
        let t = parse(&[
            line(1, "A", "2400", &["   2 w  "]),
            line(2, "B", "2300", &["   1 b  "]),
            line(3, "C", "2200", &["   2 w  "]),
            line(4, "D", "2100", &["   5 w  "]),
            line(5, "E", "2000", &["   4 b  "]),
        ]);
        let r = t.round(1).unwrap();
        assert_eq!(r.boards.len(), 2);
        assert_eq!(r.problems.len(), 1);
        assert_eq!(r.problems[0].line, 3);
        assert_eq!(r.problems[0].column, 92);
        assert!(
            r.problems[0]
                .message
                .contains("2's line (line 2) pairs 2 with 1"),
            "{}",
            r.problems[0].message
        );
    }

    #[test]
    fn missing_round_is_named() {
        let t = parse(&[line(1, "A", "2400", &["   2 w 1"]), "XXR 3".to_string()]);
        let e = t.round(4).unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (2, "round"));
        let e = t.round(2).unwrap_err();
        assert!(e.message.contains("not paired"), "{}", e.message);
    }

    #[test]
    fn results_change_one_column_per_player() {
        let text = [
            line(1, "A", "2400", &["   2 w 1", "   2 b"]),
            line(2, "B", "2300", &["   1 b 0", "   1 w  "]),
        ]
        .join("\r\n")
            + "\r\n";
        let t = Trf::parse(text.as_bytes(), Path::new("t.trf"));
        let codes = BTreeMap::from([(1, '='), (2, '=')]);
        let out = String::from_utf8(t.with_results(2, &codes)).unwrap();
        let expected = text.replacen("   2 b\r\n", "   2 b =\r\n", 1).replacen(
            "   1 w  \r\n",
            "   1 w =\r\n",
            1,
        );
        assert_eq!(out, expected);
    }

    #[test]
    fn result_codes_for_forfeits_and_short_games() {
        assert_eq!(result_codes("1-0", false, false), Some(('1', '0')));
        assert_eq!(result_codes("0-1", true, true), Some(('-', '+')));
        assert_eq!(result_codes("1/2-1/2", false, true), Some(('D', 'D')));
        assert_eq!(result_codes("*", false, false), None);
    }
}
