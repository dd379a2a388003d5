//! The PGN reader. It replays every move and stops a game with the game number, ply, line and
//! token of the first thing it cannot play. It has its own tokenizer rather than
//! pgn-reader's, which skips tokens it cannot parse without telling (`e8Q+`, `Nf3++`, `e.p.`
//! vanish there); FIDE scoresheet forms (`0-0`, `e8Q`, `exd6 e.p.`) are read through
//! [`crate::record::scoresheet`].

use crate::record::{GameRecord, RecordedMove, scoresheet};
use crate::rules::Game;

/// Why a PGN text could not be read: the game (1-based), the ply the reader was at (1-based:
/// the ply the bad token would have been), the line, the token and the reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("game {game}, ply {ply}, line {line}: {reason} (token {token:?})")]
pub struct PgnError {
    /// Game number in the file, from 1.
    pub game: usize,
    /// Ply at which reading stopped, from 1.
    pub ply: usize,
    /// Line of the file, from 1.
    pub line: usize,
    /// The offending token.
    pub token: String,
    /// What is wrong.
    pub reason: String,
}

/// One game as the reader found it: its record up to the first thing it could not read
/// (tags, the moves before it, comments), and that thing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadGame {
    /// What was read.
    pub record: GameRecord,
    /// Why reading stopped short, if it did.
    pub error: Option<PgnError>,
}

/// The games of a PGN text one by one, each read as far as it can be, in file order: a game
/// with something the reader cannot play ends there with its error, and the reader goes on
/// with the next game. Nothing is read ahead, so a caller that wants one game never reads
/// the games after it.
pub struct Games<'a> {
    reader: Reader<'a>,
}

/// The games of `text` (see [`Games`]); a UTF-8 byte-order mark is skipped.
pub fn games(text: &str) -> Games<'_> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    Games {
        reader: Reader {
            text,
            pos: 0,
            line: 1,
            game_no: 0,
            in_tags: false,
        },
    }
}

impl Iterator for Games<'_> {
    type Item = ReadGame;

    fn next(&mut self) -> Option<ReadGame> {
        let mut record = GameRecord::default();
        match self.reader.next_game(&mut record) {
            Ok(false) => None,
            Ok(true) => Some(ReadGame {
                record,
                error: None,
            }),
            Err(error) => {
                self.reader.skip_to_next_game();
                Some(ReadGame {
                    record,
                    error: Some(error),
                })
            }
        }
    }
}

/// Reads every game of a PGN text, replaying every move; the first thing that cannot be
/// read is the error.
pub fn read_games(text: &str) -> Result<Vec<GameRecord>, PgnError> {
    games(text)
        .map(|game| match game.error {
            Some(error) => Err(error),
            None => Ok(game.record),
        })
        .collect()
}

/// PGN bytes as text: a UTF-8 byte-order mark is skipped, and text that is not UTF-8 is read
/// as ISO-8859-1 (the PGN standard's encoding).
pub fn text_of(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => text.into(),
        Err(_) => bytes
            .iter()
            .map(|&b| char::from(b))
            .collect::<String>()
            .into(),
    }
}

/// Reads every game of PGN bytes ([`text_of`], then [`read_games`]).
pub fn read_games_bytes(bytes: &[u8]) -> Result<Vec<GameRecord>, PgnError> {
    read_games(&text_of(bytes))
}

/// Chess960 in the spellings tools write in the Variant tag.
fn is_chess960_variant(value: &str) -> bool {
    let v: String = value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    matches!(
        v.as_str(),
        "chess960" | "fischerandom" | "fischerrandom" | "960" | "frc"
    )
}

struct Reader<'a> {
    text: &'a str,
    pos: usize,
    line: usize,
    game_no: usize,
    /// Reading a game's tags (not its movetext).
    in_tags: bool,
}

/// A movetext token and what it is.
enum Token<'a> {
    Comment(&'a str),
    Result(&'a str),
    Word(&'a str),
    NextGame,
    End,
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<char> {
        self.text[self.pos..].chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn at_line_start(&self) -> bool {
        self.pos == 0 || self.text[..self.pos].ends_with('\n')
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.bump() {
            if c == '\n' {
                break;
            }
        }
    }

    /// Skips whitespace and `%` escape lines.
    fn skip_space(&mut self) {
        while let Some(c) = self.peek() {
            if c == '%' && self.at_line_start() {
                self.skip_line();
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn error(&self, ply: usize, token: &str, reason: impl Into<String>) -> PgnError {
        PgnError {
            game: self.game_no,
            ply,
            line: self.line,
            token: token.chars().take(40).collect(),
            reason: reason.into(),
        }
    }

    /// Reads the next game into `record`; false when the text has no more. On an error,
    /// `record` holds what was read before it.
    fn next_game(&mut self, record: &mut GameRecord) -> Result<bool, PgnError> {
        self.skip_space();
        if self.peek().is_none() {
            return Ok(false);
        }
        self.game_no += 1;
        self.in_tags = true;
        let mut tags: Vec<(String, String)> = Vec::new();
        while self.peek() == Some('[') {
            let (name, value) = self.tag()?;
            if tags.iter().any(|(n, _)| *n == name) {
                return Err(self.error(0, &name, "tag given twice"));
            }
            tags.push((name, value));
            self.skip_space();
        }
        self.in_tags = false;
        let mut result_tag = None;
        for (name, value) in tags {
            match name.as_str() {
                "Result" => result_tag = Some(value),
                "FEN" => record.start_fen = Some(value),
                "SetUp" => {}
                "Variant" if is_chess960_variant(&value) => record.chess960 = true,
                "Variant" if value.eq_ignore_ascii_case("standard") => {}
                "Variant" => {
                    return Err(self.error(
                        0,
                        &value,
                        "only standard chess and Chess960 are supported",
                    ));
                }
                _ => record.tags.push((name, value)),
            }
        }
        record.result = result_tag.clone().unwrap_or_else(|| "*".to_string());
        let mut game = match &record.start_fen {
            Some(fen) => Game::from_fen(fen, record.chess960)
                .map_err(|e| self.error(0, fen, format!("bad FEN tag: {e}")))?,
            None if record.chess960 => Game::from_fen(
                "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
                true,
            )
            .map_err(|e| self.error(0, "", e.to_string()))?,
            None => Game::standard(),
        };
        let result = loop {
            let ply = game.plies() + 1;
            match self.token(ply)? {
                Token::End | Token::NextGame => break None,
                Token::Result(r) => break Some(r.to_string()),
                Token::Comment(text) => {
                    let target = match record.moves.last_mut() {
                        Some(mv) => mv,
                        None => {
                            let (_, _, rest) = clock_commands(text);
                            record.initial_comments.extend(rest);
                            continue;
                        }
                    };
                    let (clock, elapsed, rest) = clock_commands(text);
                    target.clock_ms = clock.or(target.clock_ms);
                    target.elapsed_ms = elapsed.or(target.elapsed_ms);
                    target.comments.extend(rest);
                }
                Token::Word(word) => {
                    if let Some(mv) = self.word(&mut game, word, ply)? {
                        record.moves.push(mv);
                    }
                }
            }
        };
        record.result = match (result, result_tag) {
            (Some(movetext), Some(tag)) if movetext != tag && tag != "*" && movetext != "*" => {
                return Err(self.error(
                    game.plies(),
                    &movetext,
                    format!("the movetext ends with {movetext} but the Result tag says {tag}"),
                ));
            }
            (Some(movetext), Some(tag)) if movetext == "*" => tag,
            (Some(movetext), _) => movetext,
            (None, Some(tag)) => tag,
            (None, None) => "*".to_string(),
        };
        Ok(true)
    }

    /// After an error, moves on to the start of the next game: past the rest of the tags
    /// when it was in them, then to the next line that opens a tag.
    fn skip_to_next_game(&mut self) {
        self.skip_line();
        if self.in_tags {
            while self.peek() == Some('[') {
                self.skip_line();
            }
            self.in_tags = false;
        }
        while self.peek().is_some_and(|c| c != '[') {
            self.skip_line();
        }
    }

    /// Plays one movetext word (a move, perhaps with its number), or skips a move number.
    fn word(
        &mut self,
        game: &mut Game,
        word: &str,
        ply: usize,
    ) -> Result<Option<RecordedMove>, PgnError> {
        let move_text = word.trim_start_matches(|c: char| c.is_ascii_digit());
        // Castling written with zeros starts with a digit but is no move number.
        let move_text = if word.starts_with("0-0") {
            word
        } else if move_text.len() < word.len() {
            let rest = move_text.trim_start_matches('.');
            if rest.len() == move_text.len() && !rest.is_empty() {
                return Err(self.error(ply, word, "not a move"));
            }
            rest
        } else {
            move_text
        };
        if move_text.is_empty() {
            return Ok(None);
        }
        if matches!(move_text, "e.p." | "ep" | "e.p") {
            let after_ep = game.moves().last().is_some_and(|m| m.mv.is_en_passant());
            return if after_ep {
                Ok(None)
            } else {
                Err(self.error(
                    ply,
                    word,
                    "\"e.p.\" after a move that is not an en passant capture",
                ))
            };
        }
        if move_text.starts_with("--") || move_text == "Z0" {
            return Err(self.error(ply, word, "a null move cannot be replayed"));
        }
        let mv = scoresheet::parse_move(game.position(), move_text)
            .map_err(|e| self.error(ply, word, format!("{e} (position {})", game.fen())))?;
        let played = game
            .play(mv)
            .map_err(|e| self.error(ply, word, e.to_string()))?;
        Ok(Some(RecordedMove {
            san: played.san.clone(),
            uci: played.uci.clone(),
            ..RecordedMove::default()
        }))
    }

    fn tag(&mut self) -> Result<(String, String), PgnError> {
        let start_line = self.line;
        let line_end = self.text[self.pos..]
            .find('\n')
            .map_or(self.text.len(), |i| self.pos + i);
        let line_text = self.text[self.pos..line_end].trim_end();
        let bad = |reader: &Self, why: &str| PgnError {
            line: start_line,
            ..reader.error(0, line_text, format!("malformed tag: {why}"))
        };
        self.bump(); // '['
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        let name_start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            self.bump();
        }
        let name = self.text[name_start..self.pos].to_string();
        if name.is_empty() {
            return Err(bad(self, "no tag name"));
        }
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        if self.bump() != Some('"') {
            return Err(bad(self, "the value must be in double quotes"));
        }
        let mut value = String::new();
        loop {
            match self.bump() {
                Some('\\') => match self.bump() {
                    Some(c @ ('\\' | '"')) => value.push(c),
                    Some(c) => {
                        value.push('\\');
                        value.push(c);
                    }
                    None => return Err(bad(self, "unterminated value")),
                },
                Some('"') => break,
                Some('\n') | None => return Err(bad(self, "unterminated value")),
                Some(c) => value.push(c),
            }
        }
        while self.peek().is_some_and(|c| c == ' ' || c == '\t') {
            self.bump();
        }
        if self.bump() != Some(']') {
            return Err(bad(self, "missing ]"));
        }
        Ok((name, value))
    }

    fn token(&mut self, ply: usize) -> Result<Token<'a>, PgnError> {
        loop {
            self.skip_space();
            let Some(c) = self.peek() else {
                return Ok(Token::End);
            };
            match c {
                '[' => return Ok(Token::NextGame),
                '{' => {
                    self.bump();
                    let start = self.pos;
                    let Some(len) = self.text[start..].find('}') else {
                        return Err(self.error(ply, "{", "comment not closed with }"));
                    };
                    while self.pos < start + len {
                        self.bump();
                    }
                    self.bump();
                    return Ok(Token::Comment(&self.text[start..start + len]));
                }
                ';' => {
                    self.bump();
                    let start = self.pos;
                    let end = self.text[start..]
                        .find('\n')
                        .map_or(self.text.len(), |i| start + i);
                    self.pos = end;
                    return Ok(Token::Comment(self.text[start..end].trim_end_matches('\r')));
                }
                '(' => self.skip_variation(ply)?,
                ')' => return Err(self.error(ply, ")", "unmatched )")),
                '$' => {
                    self.bump();
                    let word = self.word_text();
                    if word.is_empty() || !word.bytes().all(|b| b.is_ascii_digit()) {
                        return Err(self.error(ply, word, "bad NAG"));
                    }
                }
                _ => {
                    let word = self.word_text();
                    return Ok(match word {
                        "1-0" | "0-1" | "1/2-1/2" | "*" => Token::Result(word),
                        "½-½" => Token::Result("1/2-1/2"),
                        "" => {
                            let bad: String = self.peek().into_iter().collect();
                            return Err(self.error(ply, &bad, "unexpected character"));
                        }
                        w => Token::Word(w.trim_end_matches(['!', '?'])),
                    });
                }
            }
        }
    }

    /// The text up to the next whitespace or PGN delimiter.
    fn word_text(&mut self) -> &'a str {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && !"{}()[];$".contains(c))
        {
            self.bump();
        }
        &self.text[start..self.pos]
    }

    fn skip_variation(&mut self, ply: usize) -> Result<(), PgnError> {
        let line = self.line;
        let mut depth = 0usize;
        while let Some(c) = self.bump() {
            match c {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                '{' => while self.bump().is_some_and(|c| c != '}') {},
                ';' => self.skip_line(),
                _ => {}
            }
        }
        Err(PgnError {
            line,
            ..self.error(ply, "(", "variation not closed with )")
        })
    }
}

/// Splits a comment into its `[%clk]` and `[%emt]` times and the rest of its text (if any).
fn clock_commands(text: &str) -> (Option<u64>, Option<u64>, Option<String>) {
    let mut clock = None;
    let mut elapsed = None;
    let mut rest = String::new();
    let mut remaining = text;
    while let Some(start) = remaining.find("[%") {
        rest.push_str(&remaining[..start]);
        let after = &remaining[start..];
        let Some(end) = after.find(']') else {
            rest.push_str(after);
            remaining = "";
            break;
        };
        let command = &after[2..end];
        let (name, arg) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        match (name, parse_clock(arg)) {
            ("clk", Some(ms)) => clock = Some(ms),
            ("emt", Some(ms)) => elapsed = Some(ms),
            _ => rest.push_str(&after[..=end]),
        }
        remaining = &after[end + 1..];
    }
    rest.push_str(remaining);
    let rest = rest.split_whitespace().collect::<Vec<_>>().join(" ");
    (clock, elapsed, (!rest.is_empty()).then_some(rest))
}

/// Reads `h:mm:ss`, `hh:mm:ss` or `mm:ss`, with optional fractional seconds, as milliseconds.
/// `None` for anything else, including a time too large to count in milliseconds (the
/// comment is then kept as text, not read as a clock).
pub fn parse_clock(text: &str) -> Option<u64> {
    let mut parts = text.trim().rsplit(':');
    let seconds = parts.next()?;
    let (whole, frac) = seconds.split_once('.').unwrap_or((seconds, ""));
    if frac.len() > 3 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut ms = digits(whole)?
        .checked_mul(1000)?
        .checked_add(format!("{frac:0<3}").parse::<u64>().ok()?)?;
    for unit in [60_000u64, 3_600_000] {
        match parts.next() {
            Some(part) => ms = ms.checked_add(digits(part)?.checked_mul(unit)?)?,
            None => return Some(ms),
        }
    }
    parts.next().is_none().then_some(ms)
}

fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}
