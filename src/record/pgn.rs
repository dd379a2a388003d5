//! PGN out and in.
//!
//! The writer follows the PGN standard's export format: the seven-tag roster in order, then the
//! other tags, escaped strings, movetext lines under 80 columns, `{[%clk h:mm:ss]}` after each
//! move with a known clock, and a result token equal to the Result tag.
//!
//! The reader replays every move and stops with the game number, ply, line and token of the
//! first thing it cannot play. It has its own tokenizer rather than pgn-reader's, which skips
//! tokens it cannot parse without telling (`e8Q+`, `Nf3++`, `e.p.` vanish there); FIDE
//! scoresheet forms (`0-0`, `e8Q`, `exd6 e.p.`) are read through [`super::scoresheet`].

use std::fmt::Write as _;

use super::{GameRecord, RecordedMove, scoresheet};
use crate::rules::Game;

/// The seven-tag roster, in export order, with the value written when a tag is unknown.
const SEVEN_TAG_ROSTER: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Tags the writer derives from [`GameRecord`] fields, never copied from its tag list.
const DERIVED_TAGS: [&str; 4] = ["Result", "SetUp", "FEN", "Variant"];

/// Movetext lines hold fewer than 80 characters.
const MAX_LINE: usize = 79;

/// Writes one game as PGN, ending with a blank line.
pub fn write_game(record: &GameRecord) -> String {
    let mut out = String::new();
    let result = result_token(&record.result);
    for (name, unknown) in SEVEN_TAG_ROSTER {
        let value = if name == "Result" {
            result
        } else {
            record.tag(name).unwrap_or(unknown)
        };
        write_tag(&mut out, name, value);
    }
    if record.chess960 {
        write_tag(&mut out, "Variant", "Chess960");
    }
    if let Some(fen) = &record.start_fen {
        write_tag(&mut out, "SetUp", "1");
        write_tag(&mut out, "FEN", fen);
    }
    for (name, value) in &record.tags {
        let roster = SEVEN_TAG_ROSTER.iter().any(|(n, _)| n == name);
        if !roster && !DERIVED_TAGS.contains(&name.as_str()) && is_tag_name(name) {
            write_tag(&mut out, name, value);
        }
    }
    out.push('\n');
    let mut lines = LineWriter::default();
    for comment in &record.initial_comments {
        lines.push(&comment_token(comment));
    }
    let black_first = record
        .start_fen
        .as_deref()
        .is_some_and(|fen| fen.split_whitespace().nth(1) == Some("b"));
    let first_move_number = record
        .start_fen
        .as_deref()
        .and_then(|fen| fen.split_whitespace().nth(5))
        .and_then(|n| n.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1);
    let mut need_number = true;
    for (i, mv) in record.moves.iter().enumerate() {
        let ply = i + usize::from(black_first);
        let number = first_move_number as usize + ply / 2;
        if ply % 2 == 0 {
            lines.push(&format!("{number}. {}", mv.san));
        } else if need_number {
            lines.push(&format!("{number}... {}", mv.san));
        } else {
            lines.push(&mv.san);
        }
        need_number = false;
        let mut commands = String::new();
        if let Some(ms) = mv.clock_ms {
            let _ = write!(commands, "[%clk {}]", clock_text(ms));
        }
        if let Some(ms) = mv.elapsed_ms {
            if !commands.is_empty() {
                commands.push(' ');
            }
            let _ = write!(commands, "[%emt {}]", clock_text(ms));
        }
        if !commands.is_empty() {
            lines.push(&comment_token(&commands));
            need_number = true;
        }
        for comment in &mv.comments {
            lines.push(&comment_token(comment));
            need_number = true;
        }
    }
    lines.push(result);
    out.push_str(&lines.finish());
    out.push_str("\n\n");
    out
}

/// Writes several games, each followed by a blank line.
pub fn write_games(records: &[GameRecord]) -> String {
    records.iter().map(write_game).collect()
}

fn result_token(result: &str) -> &str {
    match result {
        "1-0" | "0-1" | "1/2-1/2" => result,
        _ => "*",
    }
}

fn is_tag_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn write_tag(out: &mut String, name: &str, value: &str) {
    let mut escaped = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '"' => escaped.push_str("\\\""),
            c if c.is_control() => escaped.push(' '),
            c => escaped.push(c),
        }
    }
    let _ = writeln!(out, "[{name} \"{escaped}\"]");
}

/// A comment as one movetext token; `}` cannot appear inside a PGN comment.
fn comment_token(text: &str) -> String {
    let clean: String = text
        .chars()
        .map(|c| match c {
            '}' => ')',
            '{' => '(',
            c if c.is_whitespace() => ' ',
            c => c,
        })
        .collect();
    format!(
        "{{{}}}",
        clean.split_whitespace().collect::<Vec<_>>().join(" ")
    )
}

/// `h:mm:ss`, with tenths, hundredths or thousandths only when the time has them.
pub fn clock_text(ms: u64) -> String {
    let secs = ms / 1000;
    let mut text = format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    let frac = ms % 1000;
    if frac != 0 {
        let digits = format!("{frac:03}");
        text.push('.');
        text.push_str(digits.trim_end_matches('0'));
    }
    text
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

/// Fills lines of movetext, breaking between tokens (and inside over-long comments).
#[derive(Default)]
struct LineWriter {
    done: String,
    line: String,
}

impl LineWriter {
    fn push(&mut self, token: &str) {
        if token.len() > MAX_LINE {
            for word in token.split(' ') {
                self.push(word);
            }
            return;
        }
        if !self.line.is_empty() && self.line.len() + 1 + token.len() > MAX_LINE {
            self.done.push_str(&self.line);
            self.done.push('\n');
            self.line.clear();
        }
        if !self.line.is_empty() {
            self.line.push(' ');
        }
        self.line.push_str(token);
    }

    fn finish(mut self) -> String {
        self.done.push_str(&self.line);
        self.done
    }
}

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

/// Reads every game of a PGN text, replaying every move.
pub fn read_games(text: &str) -> Result<Vec<GameRecord>, PgnError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = Reader {
        text,
        pos: 0,
        line: 1,
        game_no: 0,
    };
    let mut games = Vec::new();
    while let Some(game) = reader.next_game()? {
        games.push(game);
    }
    Ok(games)
}

/// Reads every game of PGN bytes: a UTF-8 byte-order mark is skipped, and text that is not
/// UTF-8 is read as ISO-8859-1 (the PGN standard's encoding).
pub fn read_games_bytes(bytes: &[u8]) -> Result<Vec<GameRecord>, PgnError> {
    let bytes = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(text) => read_games(text),
        Err(_) => read_games(&bytes.iter().map(|&b| char::from(b)).collect::<String>()),
    }
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

    fn next_game(&mut self) -> Result<Option<GameRecord>, PgnError> {
        self.skip_space();
        if self.peek().is_none() {
            return Ok(None);
        }
        self.game_no += 1;
        let mut tags: Vec<(String, String)> = Vec::new();
        while self.peek() == Some('[') {
            let (name, value) = self.tag()?;
            if tags.iter().any(|(n, _)| *n == name) {
                return Err(self.error(0, &name, "tag given twice"));
            }
            tags.push((name, value));
            self.skip_space();
        }
        let mut record = GameRecord::default();
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
        Ok(Some(record))
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
