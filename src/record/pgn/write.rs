//! The PGN writer, after the PGN standard's export format: the seven-tag roster in order, then
//! the other tags, escaped strings, movetext lines under 80 columns, `{[%clk h:mm:ss]}` after
//! each move with a known clock, and a result token equal to the Result tag.

use std::fmt::Write as _;

use crate::record::GameRecord;

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
