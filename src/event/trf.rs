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
//! The format names no encoding. Files are read as UTF-8 when they are valid UTF-8; otherwise
//! they are legacy 8-bit files in the Windows code page the pairing program wrote: Windows-1252
//! in Western Europe, Windows-1250 in Central Europe. A code page that leaves one of the file's
//! bytes undefined is not the file's; between code pages that define them all, the players'
//! federations and the bytes that are letters in one code page only decide
//! ([`Trf::encoding_guessed`]). A caller that knows better names the encoding, and a file that
//! is not valid in it is refused, naming the line and the byte ([`Trf::parse`]).
//!
//! A round's boards are its games in the order of FIDE's rules for published pairings
//! (C.04.2.B), with the scores before the round, so that the order is the same whether the file
//! holds the round's results or not:
//! 1. the score of the higher-ranked player of the pair (higher first);
//! 2. the sum of the two scores;
//! 3. the rank of the higher-ranked player: score, then pairing number (starting rank).
//!
//! Forfeited games keep their place and number, as pairing programs print them; byes and
//! absences get no board.
//!
//! A team tournament (players on `013` team lines) numbers its boards by match, as team
//! pairing programs publish them: the matches in the same order, of the teams' match points
//! and team numbers, then the boards of each match in the order of the teams' lists.
//!
//! One file for one concept, the TRF format: its columns, encodings, rounds and the results
//! written back all read the same lines and columns, and are checked against each other.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::error::ConfigError;
use super::player::Player;

/// The encoding a file was read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-8 (with or without a byte-order mark).
    Utf8,
    /// Windows-1252 (Western Europe; Latin-1 is the same but for 0x80–0x9F).
    Windows1252,
    /// Windows-1250 (Central Europe).
    Windows1250,
}

impl Encoding {
    /// The code page, for an 8-bit encoding.
    fn code_page(self) -> Option<&'static encoding_rs::Encoding> {
        match self {
            Encoding::Utf8 => None,
            Encoding::Windows1252 => Some(encoding_rs::WINDOWS_1252),
            Encoding::Windows1250 => Some(encoding_rs::WINDOWS_1250),
        }
    }

    /// The offset of the first byte of `bytes` that is not text in this encoding: not valid
    /// UTF-8, or a byte the code page leaves undefined (decoded as a C1 control, as the
    /// WHATWG tables do).
    fn first_invalid(self, bytes: &[u8]) -> Option<usize> {
        match self.code_page() {
            None => std::str::from_utf8(bytes).err().map(|e| e.valid_up_to()),
            Some(page) => bytes.iter().position(|&b| {
                b >= 0x80
                    && page
                        .decode_without_bom_handling(&[b])
                        .0
                        .chars()
                        .all(|c| ('\u{80}'..='\u{9f}').contains(&c))
            }),
        }
    }

    /// The first line of `lines` that is not valid in this encoding, as a problem naming the
    /// line and the byte.
    fn check(self, lines: &[RawLine]) -> Result<(), TrfProblem> {
        for (i, line) in lines.iter().enumerate() {
            if let Some(at) = self.first_invalid(&line.bytes) {
                return Err(TrfProblem::new(
                    i + 1,
                    at + 1,
                    "encoding",
                    format!(
                        "byte {at_byte} (0x{byte:02X}) is not {self}: the file is not in {self}; \
                         give the encoding it is in (utf-8, windows-1252 or windows-1250), or \
                         none to have it guessed",
                        at_byte = at + 1,
                        byte = line.bytes[at],
                    ),
                ));
            }
        }
        Ok(())
    }
}

impl std::fmt::Display for Encoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Encoding::Utf8 => "UTF-8",
            Encoding::Windows1252 => "Windows-1252",
            Encoding::Windows1250 => "Windows-1250",
        })
    }
}

impl std::str::FromStr for Encoding {
    type Err = String;

    fn from_str(text: &str) -> Result<Encoding, String> {
        let name: String = text
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .flat_map(|c| c.to_lowercase())
            .collect();
        match name.as_str() {
            "utf8" => Ok(Encoding::Utf8),
            "windows1252" | "cp1252" | "latin1" | "iso88591" => Ok(Encoding::Windows1252),
            "windows1250" | "cp1250" => Ok(Encoding::Windows1250),
            _ => Err(format!(
                "unknown encoding {text:?}: give utf-8, windows-1252 (Western Europe) or \
                 windows-1250 (Central Europe)"
            )),
        }
    }
}

/// Federations whose pairing programs write Windows-1250.
const CENTRAL_EUROPE: [&str; 12] = [
    "ALB", "BIH", "CRO", "CZE", "HUN", "KOS", "MNE", "POL", "ROU", "SLO", "SRB", "SVK",
];

/// The code page of a legacy 8-bit file: the one that defines every byte of the file when only
/// one does; else each byte from 0x80 that is a letter in one of the two code pages only is a
/// vote for it, and so is, twice, each player line with such bytes whose federation writes in
/// it (Central Europe) or not.
fn guess_code_page(lines: &[RawLine]) -> Encoding {
    let fits = |page: Encoding| page.check(lines).is_ok();
    match (fits(Encoding::Windows1250), fits(Encoding::Windows1252)) {
        (true, false) => return Encoding::Windows1250,
        (false, true) => return Encoding::Windows1252,
        _ => {}
    }
    let decoded = |page: &'static encoding_rs::Encoding, byte: u8| {
        page.decode_without_bom_handling(&[byte])
            .0
            .chars()
            .next()
            .is_some_and(char::is_alphabetic)
    };
    let mut central: i64 = 0;
    for line in lines {
        let high: Vec<u8> = line.bytes.iter().copied().filter(|&b| b >= 0x80).collect();
        if high.is_empty() {
            continue;
        }
        for &b in &high {
            match (
                decoded(encoding_rs::WINDOWS_1250, b),
                decoded(encoding_rs::WINDOWS_1252, b),
            ) {
                (true, false) => central += 1,
                (false, true) => central -= 1,
                _ => {}
            }
        }
        if line.bytes.starts_with(b"001") {
            let federation = line.bytes.get(53..56).unwrap_or_default();
            if federation.iter().all(u8::is_ascii_uppercase) && federation.len() == 3 {
                let central_european = CENTRAL_EUROPE.iter().any(|f| f.as_bytes() == federation);
                central += if central_european { 2 } else { -2 };
            }
        }
    }
    if central > 0 {
        Encoding::Windows1250
    } else {
        Encoding::Windows1252
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
    /// Board number (1 for the top board).
    pub board: u32,
    /// In a team tournament, the match the game belongs to (1 for the top match).
    pub team_match: Option<u32>,
    /// White's starting rank.
    pub white: u32,
    /// Black's starting rank.
    pub black: u32,
    /// The white player's line.
    pub line: usize,
    /// Results already in the file (white's code, black's code); blanks when not played.
    pub codes: (char, char),
}

impl TrfGame {
    /// True when the file says the game was forfeited (`+`/`-`): it keeps its board number,
    /// but there is nothing to record.
    pub fn is_forfeit(&self) -> bool {
        matches!(self.codes.0, '+' | '-') || matches!(self.codes.1, '+' | '-')
    }
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
    /// The games, in board order, forfeited ones included ([`TrfGame::is_forfeit`]).
    pub boards: Vec<TrfGame>,
    /// Byes and absences.
    pub byes: Vec<TrfBye>,
    /// Pairings the file contradicts itself about: those players get no board.
    pub problems: Vec<TrfProblem>,
}

/// A team line (`013`): the team's name and its players in the order of its list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrfTeam {
    /// Team number: the order of the team lines, from 1.
    pub number: u32,
    /// Name (columns 5–36).
    pub name: String,
    /// Line of the file, from 1.
    pub line: usize,
    /// The players' starting ranks, board 1 first (from column 37 on).
    pub members: Vec<u32>,
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
    /// The encoding was guessed (a legacy 8-bit file read without one named).
    pub encoding_guessed: bool,
    bom: bool,
    lines: Vec<RawLine>,
    /// The players by starting rank.
    pub players: BTreeMap<u32, TrfPlayer>,
    /// The number of rounds declared (`XXR` or `142`) and its line.
    pub declared_rounds: Option<(u32, usize)>,
    /// The teams of a team tournament (`013` lines); empty for an individual one.
    pub teams: Vec<TrfTeam>,
    /// Match points of a team's won, drawn and lost match, in half points (`362`; default
    /// 2, 1, 0).
    pub match_points: [u32; 3],
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
    /// Reads a file in `encoding`, or guessing it when `None` ([`Trf::parse`]): how every
    /// command reads a TRF.
    pub fn load(path: &Path, encoding: Option<Encoding>) -> Result<Trf, ConfigError> {
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Trf::parse(&bytes, path, encoding)
    }

    /// Reads a file's bytes in `encoding`, or guessing it when `None`: UTF-8 when they are
    /// valid UTF-8, else the Windows code page [`guess_code_page`] finds. A file that is not
    /// valid in the encoding named is refused, naming the line and the byte; `path` is used
    /// in messages.
    pub fn parse(
        bytes: &[u8],
        path: &Path,
        encoding: Option<Encoding>,
    ) -> Result<Trf, ConfigError> {
        let bom = bytes.starts_with(b"\xef\xbb\xbf");
        let body = if bom { &bytes[3..] } else { bytes };
        let utf8 = std::str::from_utf8(body).is_ok();
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
        let encoding_guessed = encoding.is_none() && !utf8;
        if let Some(named) = encoding {
            named.check(&lines).map_err(|p| p.in_file(path))?;
        }
        let encoding = encoding.unwrap_or_else(|| {
            if utf8 {
                Encoding::Utf8
            } else {
                guess_code_page(&lines)
            }
        });
        let mut trf = Trf {
            path: path.to_path_buf(),
            encoding,
            encoding_guessed,
            bom,
            lines,
            players: BTreeMap::new(),
            declared_rounds: None,
            teams: Vec::new(),
            match_points: [4, 2, 0],
            problems: Vec::new(),
        };
        for i in 0..trf.lines.len() {
            let chars = trf.chars(i);
            let line = i + 1;
            let tag: String = chars.iter().take(3).collect();
            match tag.as_str() {
                "001" => trf.read_player(&chars, line),
                "013" => trf.read_team(&chars, line),
                "362" => trf.read_team_scoring(&chars, line),
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
        Ok(trf)
    }

    /// Line `i` (0-based) as characters.
    fn chars(&self, i: usize) -> Vec<char> {
        let bytes = &self.lines[i].bytes;
        match self.encoding {
            Encoding::Utf8 => String::from_utf8_lossy(bytes).chars().collect(),
            Encoding::Windows1252 | Encoding::Windows1250 => {
                let page = self
                    .encoding
                    .code_page()
                    .unwrap_or(encoding_rs::WINDOWS_1252);
                page.decode_without_bom_handling(bytes).0.chars().collect()
            }
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

    fn read_team(&mut self, chars: &[char], line: usize) {
        let number = self.teams.len() as u32 + 1;
        let mut members = Vec::new();
        for (i, word) in columns(chars, 37, chars.len())
            .split_whitespace()
            .enumerate()
        {
            match word.parse::<u32>() {
                Ok(rank) if rank > 0 => members.push(rank),
                _ => self.problems.push(TrfProblem::new(
                    line,
                    37 + 5 * i,
                    "team member",
                    format!(
                        "team line {number}: expected the starting rank of its player {} \
                         (columns {}–{}), found {word:?}",
                        i + 1,
                        37 + 5 * i,
                        40 + 5 * i
                    ),
                )),
            }
        }
        self.teams.push(TrfTeam {
            number,
            name: columns(chars, 5, 36),
            line,
            members,
        });
    }

    /// `362 TW 2  TD 1  TL 0`: points of a won, drawn and lost match (halves are kept).
    fn read_team_scoring(&mut self, chars: &[char], line: usize) {
        let text: String = chars.iter().skip(3).collect();
        let words: Vec<&str> = text.split_whitespace().collect();
        for pair in words.chunks(2) {
            let [code, value] = pair else { continue };
            let slot = match code.to_ascii_uppercase().as_str() {
                "TW" => 0,
                "TD" => 1,
                "TL" => 2,
                _ => continue,
            };
            match value.parse::<f64>() {
                Ok(v) if (0.0..=100.0).contains(&v) => {
                    self.match_points[slot] = (v * 2.0).round() as u32
                }
                _ => self.problems.push(TrfProblem::new(
                    line,
                    5,
                    "team scoring",
                    format!("expected match points after {code}, found {value:?}"),
                )),
            }
        }
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
            games.push(TrfGame {
                board: 0,
                team_match: None,
                white,
                black,
                line,
                codes,
            });
        }
        out.boards = if self.teams.is_empty() {
            self.in_board_order(games, round)
        } else {
            let (ordered, problems) = self.in_match_order(games, round);
            out.problems.extend(problems);
            ordered
        };
        Ok(out)
    }

    /// A player's score before round `round`, in half points.
    fn score_before(&self, rank: u32, round: u32) -> u32 {
        self.players.get(&rank).map_or(0, |p| {
            p.rounds
                .iter()
                .take(round as usize - 1)
                .flatten()
                .map(|e| half_points(e.result))
                .sum()
        })
    }

    /// `games` numbered in FIDE's order of published pairings (C.04.2.B).
    fn in_board_order(&self, mut games: Vec<TrfGame>, round: u32) -> Vec<TrfGame> {
        games.sort_by_cached_key(|g| {
            let entries = [g.white, g.black].map(|rank| (self.score_before(rank, round), rank));
            pair_order(entries)
        });
        for (i, g) in games.iter_mut().enumerate() {
            g.board = i as u32 + 1;
        }
        games
    }

    /// `games` numbered by match: the matches in FIDE's order applied to the teams (match
    /// points before the round, team numbers), then each match's boards in the order of the
    /// higher-ranked team's list. Games of a player on no team line, or between players of
    /// one team, get no board and are named among the problems.
    fn in_match_order(&self, games: Vec<TrfGame>, round: u32) -> (Vec<TrfGame>, Vec<TrfProblem>) {
        let seat = self.team_seats();
        let mut problems = Vec::new();
        let mut matches: BTreeMap<(u32, u32), Vec<TrfGame>> = BTreeMap::new();
        for g in games {
            match (seat.get(&g.white), seat.get(&g.black)) {
                (Some(&(a, _)), Some(&(b, _))) if a != b => {
                    matches.entry((a.min(b), a.max(b))).or_default().push(g)
                }
                (w, b) => {
                    let (rank, why) = match (w, b) {
                        (None, _) => (g.white, "is on no team line (013)".to_string()),
                        (_, None) => (g.black, "is on no team line (013)".to_string()),
                        _ => (
                            g.black,
                            format!("plays a player of his own team ({})", g.white),
                        ),
                    };
                    problems.push(TrfProblem::new(
                        self.players.get(&rank).map_or(g.line, |p| p.line),
                        round_column(round),
                        format!("round {round} team"),
                        format!(
                            "in this team tournament player {rank} {why}; the game {} – {} \
                             gets no board: add the player to his team's line",
                            g.white, g.black
                        ),
                    ));
                }
            }
        }
        let points = self.match_points_before(round);
        let team_points = |team: u32| points.get(&team).copied().unwrap_or(0);
        let mut order: Vec<((u32, u32), Vec<TrfGame>)> = matches.into_iter().collect();
        order.sort_by_key(|((a, b), _)| pair_order([(team_points(*a), *a), (team_points(*b), *b)]));
        let mut boards = Vec::new();
        for (number, ((a, b), mut games)) in order.into_iter().enumerate() {
            let (_, higher) = higher_ranked((team_points(a), a), (team_points(b), b));
            games.sort_by_key(|g| {
                [g.white, g.black]
                    .iter()
                    .filter_map(|rank| seat.get(rank))
                    .find(|(team, _)| *team == higher)
                    .map_or(usize::MAX, |(_, place)| *place)
            });
            for mut g in games {
                g.team_match = Some(number as u32 + 1);
                g.board = boards.len() as u32 + 1;
                boards.push(g);
            }
        }
        (boards, problems)
    }

    /// Each player's team number and place in its list.
    fn team_seats(&self) -> BTreeMap<u32, (u32, usize)> {
        let mut seats = BTreeMap::new();
        for team in &self.teams {
            for (place, rank) in team.members.iter().enumerate() {
                seats.entry(*rank).or_insert((team.number, place));
            }
        }
        seats
    }

    /// Each team's match points before round `round`, in half points: for each earlier round,
    /// the game points of its players against those of the team they met decide the match;
    /// a team that met none scores a won match when its players scored (a bye).
    fn match_points_before(&self, round: u32) -> BTreeMap<u32, u32> {
        let seat = self.team_seats();
        let [win, draw, loss] = self.match_points;
        let mut totals: BTreeMap<u32, u32> = BTreeMap::new();
        for r in 1..round {
            // (team, opponent team or none) → game points in half points.
            let mut scored: BTreeMap<(u32, Option<u32>), u32> = BTreeMap::new();
            for p in self.players.values() {
                let Some(Some(entry)) = p.rounds.get(r as usize - 1) else {
                    continue;
                };
                let Some(&(team, _)) = seat.get(&p.rank) else {
                    continue;
                };
                let against = entry.opponent.and_then(|o| seat.get(&o)).map(|(t, _)| *t);
                *scored.entry((team, against)).or_default() += half_points(entry.result);
            }
            let met: std::collections::BTreeSet<u32> = scored
                .keys()
                .filter(|(_, against)| against.is_some())
                .map(|(team, _)| *team)
                .collect();
            for (&(team, against), &points) in &scored {
                let earned = match against {
                    Some(other) => {
                        let theirs = scored.get(&(other, Some(team))).copied().unwrap_or(0);
                        match points.cmp(&theirs) {
                            std::cmp::Ordering::Greater => win,
                            std::cmp::Ordering::Equal => draw,
                            std::cmp::Ordering::Less => loss,
                        }
                    }
                    None if !met.contains(&team) && points > 0 => win,
                    None => continue,
                };
                *totals.entry(team).or_default() += earned;
            }
        }
        totals
    }

    /// The file with round `round`'s result codes set from `codes` (starting rank → code),
    /// and the points (columns 81–84) of those players changed by what the new code gives
    /// instead of the old one, so that pairing engines that read the column agree: the same
    /// bytes but for those columns.
    pub fn with_results(&self, round: u32, codes: &BTreeMap<u32, char>) -> Vec<u8> {
        let at = round_column(round) + 7;
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice(b"\xef\xbb\xbf");
        }
        let line_of_rank: BTreeMap<usize, &TrfPlayer> =
            self.players.values().map(|p| (p.line - 1, p)).collect();
        for (i, raw) in self.lines.iter().enumerate() {
            let changed = line_of_rank
                .get(&i)
                .and_then(|p| Some((*p, *codes.get(&p.rank)?)));
            match changed {
                Some((player, code)) => {
                    let chars = self.chars(i);
                    let before = player
                        .rounds
                        .get(round as usize - 1)
                        .cloned()
                        .flatten()
                        .map_or(' ', |e| e.result);
                    let half = |points: &str| {
                        points
                            .parse::<f64>()
                            .ok()
                            .filter(|p| (0.0..=999.0).contains(p))
                            .map(|p| (p * 2.0).round() as i64)
                    };
                    let old = half(&columns(&chars, 81, 84)).unwrap_or_else(|| {
                        player
                            .rounds
                            .iter()
                            .flatten()
                            .map(|e| i64::from(half_points(e.result)))
                            .sum()
                    });
                    let new = old - i64::from(half_points(before)) + i64::from(half_points(code));
                    let mut bytes = self.set_text(raw.bytes.clone(), at, &code.to_string());
                    if new != old {
                        let points = format!("{:>4.1}", new.max(0) as f64 / 2.0);
                        bytes = self.set_text(bytes, 81, &points);
                    }
                    out.extend(bytes);
                }
                None => out.extend_from_slice(&raw.bytes),
            }
            out.extend_from_slice(raw.end);
        }
        out
    }

    /// A line's `bytes` with the characters from column `at` on replaced by the ASCII
    /// `text` (spaces added if the line is shorter).
    fn set_text(&self, mut bytes: Vec<u8>, at: usize, text: &str) -> Vec<u8> {
        let starts: Vec<usize> = match self.encoding {
            Encoding::Windows1252 | Encoding::Windows1250 => (0..bytes.len()).collect(),
            Encoding::Utf8 => String::from_utf8_lossy(&bytes)
                .char_indices()
                .map(|(o, _)| o)
                .collect(),
        };
        match starts.get(at - 1) {
            Some(&start) => {
                let end = starts
                    .get(at - 1 + text.len())
                    .copied()
                    .unwrap_or(bytes.len());
                bytes.splice(start..end, text.bytes());
            }
            None => {
                bytes.extend(std::iter::repeat_n(b' ', at - 1 - starts.len()));
                bytes.extend(text.bytes());
            }
        }
        bytes
    }
}

/// The place of a pair in FIDE's order of published pairings (C.04.2.B), given each side's
/// (score, pairing number): the higher-ranked side's score (higher first), the sum of the
/// scores, then the higher-ranked side's pairing number. Sorts ascending.
fn pair_order(sides: [(u32, u32); 2]) -> (std::cmp::Reverse<u32>, std::cmp::Reverse<u32>, u32) {
    let [a, b] = sides;
    let higher = higher_ranked(a, b);
    (
        std::cmp::Reverse(higher.0),
        std::cmp::Reverse(a.0 + b.0),
        higher.1,
    )
}

/// Of two sides given as (score, pairing number), the higher-ranked: the higher score, then
/// the smaller pairing number.
fn higher_ranked(a: (u32, u32), b: (u32, u32)) -> (u32, u32) {
    if (b.0, std::cmp::Reverse(b.1)) > (a.0, std::cmp::Reverse(a.1)) {
        b
    } else {
        a
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
        Trf::parse(lines.join("\n").as_bytes(), Path::new("t.trf"), None).unwrap()
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
    fn the_higher_ranked_players_number_breaks_ties_and_forfeits_keep_their_board() {
        // Before round 2: 1 and 3 have ½ (byes), 2 and 5 have 1; 6 and 7 were absent.
        let t = parse(&[
            line(1, "A", "2400", &["0000 - H", "   5 w  "]),
            line(2, "B", "2300", &["0000 - F", "   3 w  "]),
            line(3, "C", "2200", &["0000 - H", "   2 b  "]),
            line(5, "E", "2000", &["0000 - F", "   1 b  "]),
            line(6, "F", "1900", &["0000 - Z", "   7 b -"]),
            line(7, "G", "1800", &["0000 - Z", "   6 w +"]),
        ]);
        let r = t.round(2).unwrap();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        // Both pairs: higher-ranked player on 1 point, 1½ together; the higher-ranked player
        // is 2 in one pair and 5 in the other, so 2–3 comes first although 1 is in the other.
        assert_eq!(
            r.boards
                .iter()
                .map(|g| (g.board, g.white, g.black, g.is_forfeit()))
                .collect::<Vec<_>>(),
            vec![(1, 2, 3, false), (2, 1, 5, false), (3, 7, 6, true)]
        );
    }

    fn team(name: &str, members: &[u32]) -> String {
        let list: Vec<String> = members.iter().map(|m| format!("{m:>4}")).collect();
        format!("013 {name:<32}{}", list.join(" "))
    }

    #[test]
    fn a_team_tournament_numbers_its_boards_by_match() {
        // Round 1: team 1 draws team 2 (1–1), team 3 beats team 4 (2–0).
        let t = parse(&[
            line(1, "A1", "2400", &["   3 w =", "   5 w  "]),
            line(2, "A2", "2300", &["   4 b =", "   6 b  "]),
            line(3, "B1", "2390", &["   1 b =", "   7 w  "]),
            line(4, "B2", "2290", &["   2 w =", "   8 b  "]),
            line(5, "C1", "2100", &["   7 w 1", "   1 b  "]),
            line(6, "C2", "2000", &["   8 b 1", "   2 w  "]),
            line(7, "D1", "2080", &["   5 b 0", "   3 b  "]),
            line(8, "D2", "1990", &["   6 w 0", "   4 w  "]),
            team("One", &[1, 2]),
            team("Two", &[3, 4]),
            team("Three", &[5, 6]),
            team("Four", &[7, 8]),
        ]);
        assert_eq!(t.teams.len(), 4);
        assert_eq!(t.teams[2].members, vec![5, 6]);
        let r = t.round(2).unwrap();
        assert!(r.problems.is_empty(), "{:?}", r.problems);
        // Three (2 match points) – One first, then Two – Four; each match by its list.
        assert_eq!(
            r.boards
                .iter()
                .map(|g| (g.board, g.team_match, g.white, g.black))
                .collect::<Vec<_>>(),
            vec![
                (1, Some(1), 1, 5),
                (2, Some(1), 6, 2),
                (3, Some(2), 3, 7),
                (4, Some(2), 8, 4)
            ]
        );
        let r = t.round(1).unwrap();
        assert_eq!(
            r.boards
                .iter()
                .map(|g| (g.white, g.black))
                .collect::<Vec<_>>(),
            vec![(1, 3), (4, 2), (5, 7), (8, 6)]
        );
    }

    #[test]
    fn a_team_game_of_a_player_on_no_team_line_is_named() {
        let t = parse(&[
            line(1, "A1", "2400", &["   2 w  "]),
            line(2, "B1", "2300", &["   1 b  "]),
            team("One", &[1]),
        ]);
        let r = t.round(1).unwrap();
        assert!(r.boards.is_empty());
        assert!(
            r.problems[0]
                .message
                .contains("player 2 is on no team line (013)"),
            "{:?}",
            r.problems
        );
    }

    #[test]
    fn legacy_code_pages_are_guessed_from_names_and_federations() {
        let read = |name: &[u8], federation: &str| {
            let mut line = b"001    1      ".to_vec();
            line.extend(name);
            line.extend(std::iter::repeat_n(b' ', 33 - name.len()));
            line.extend(format!(" 2400 {federation} 12345678901").bytes());
            Trf::parse(&line, Path::new("t.trf"), None).unwrap()
        };
        let central = read(b"\x8aimek, \x8cwi\xeatos\xb3aw", "POL");
        let west = read(b"M\xfcller, Fran\xe7oise", "FRA");
        assert_eq!(
            (central.encoding, central.encoding_guessed),
            (Encoding::Windows1250, true)
        );
        assert_eq!(central.players[&1].player.name, "Šimek, Świętosław");
        assert_eq!(west.encoding, Encoding::Windows1252);
        assert_eq!(west.players[&1].player.name, "Müller, Françoise");
        assert_eq!("cp1250".parse::<Encoding>(), Ok(Encoding::Windows1250));
        assert!(
            "koi8"
                .parse::<Encoding>()
                .unwrap_err()
                .contains("windows-1250")
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
        let t = Trf::parse(text.as_bytes(), Path::new("t.trf"), None).unwrap();
        let codes = BTreeMap::from([(1, '='), (2, '=')]);
        let out = String::from_utf8(t.with_results(2, &codes)).unwrap();
        // The points (columns 81–84) gain the draw's half point.
        let expected = text
            .replacen(
                "  0.0    1     2 w 1     2 b\r\n",
                "  0.5    1     2 w 1     2 b =\r\n",
                1,
            )
            .replacen(
                "  0.0    2     1 b 0     1 w  \r\n",
                "  0.5    2     1 b 0     1 w =\r\n",
                1,
            );
        assert_eq!(out, expected);
        let again = Trf::parse(out.as_bytes(), Path::new("t.trf"), None).unwrap();
        assert_eq!(
            again.with_results(2, &codes),
            out.as_bytes(),
            "the same results again change nothing"
        );
    }

    #[test]
    fn result_codes_for_forfeits_and_short_games() {
        assert_eq!(result_codes("1-0", false, false), Some(('1', '0')));
        assert_eq!(result_codes("0-1", true, true), Some(('-', '+')));
        assert_eq!(result_codes("1/2-1/2", false, true), Some(('D', 'D')));
        assert_eq!(result_codes("*", false, false), None);
    }
}
