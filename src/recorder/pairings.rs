//! Pairings: who plays on which board, from a PGN file of headers or a simple CSV.
//!
//! A PGN file gives one game per header block: `Round "3.2"` (round 3, board 2) or a `Board`
//! tag, `White`, `Black`, and optionally `WhiteFideId`, `WhiteTitle`, `WhiteElo`,
//! `WhiteFederation` (and the same for Black). Moves after the headers are ignored.
//!
//! A CSV file has a header line naming its columns: `board`, `white`, `black` are required;
//! `round`, `white_fide_id`, `white_title`, `white_rating`, `white_federation` and the `black_`
//! ones are optional. Fields containing commas are written in double quotes.

use std::path::Path;

use super::config::{ConfigError, Player};

/// One pairing: a board and its two players.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    /// The round, when the file says so.
    pub round: Option<u32>,
    /// The board number.
    pub board: u32,
    /// White.
    pub white: Player,
    /// Black.
    pub black: Player,
}

/// Reads pairings from a `.pgn` file of headers or a `.csv` file (by extension; content
/// starting with `[` is read as PGN whatever the name).
pub fn load(path: &Path) -> Result<Vec<Pairing>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let is_pgn = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pgn"))
        || text.trim_start().starts_with('[');
    let parsed = if is_pgn {
        parse_pgn_headers(&text)
    } else {
        parse_csv(&text)
    };
    parsed.map_err(|(line, field, message)| ConfigError::Invalid {
        path: path.to_path_buf(),
        line,
        field,
        message,
    })
}

type LineError = (usize, String, String);

/// A header block: its first line and its tags as (line, name, value).
type TagBlock = (usize, Vec<(usize, String, String)>);

fn number<T: std::str::FromStr>(value: &str, line: usize, field: &str) -> Result<T, LineError> {
    value.trim().parse().map_err(|_| {
        (
            line,
            field.to_string(),
            format!("expected a number, found {value:?}"),
        )
    })
}

/// A board number, within [`super::config::MAX_BOARD`].
fn board_number(value: &str, line: usize, field: &str) -> Result<u32, LineError> {
    let n: i64 = number(value, line, field)?;
    super::config::check_board(n).map_err(|message| (line, field.to_string(), message))
}

fn optional(value: &str) -> Option<String> {
    let v = value.trim();
    (!v.is_empty() && v != "-" && v != "?").then(|| v.to_string())
}

fn set_player_field(
    player: &mut Player,
    key: &str,
    value: &str,
    line: usize,
    field: &str,
) -> Result<(), LineError> {
    match key {
        "" | "name" => player.name = value.trim().to_string(),
        "fide_id" | "fideid" => {
            player.fide_id = optional(value)
                .map(|v| number(&v, line, field))
                .transpose()?
                .filter(|&id: &u64| id != 0)
        }
        "title" => player.title = optional(value),
        "rating" | "elo" => {
            player.rating = optional(value)
                .map(|v| number(&v, line, field))
                .transpose()?
        }
        "federation" => player.federation = optional(value),
        _ => {}
    }
    Ok(())
}

/// Parses PGN header blocks into pairings.
pub fn parse_pgn_headers(text: &str) -> Result<Vec<Pairing>, LineError> {
    let mut out = Vec::new();
    let mut current: Option<TagBlock> = None;
    let mut flush = |block: Option<TagBlock>| -> Result<(), LineError> {
        let Some((first_line, tags)) = block else {
            return Ok(());
        };
        let mut p = Pairing {
            round: None,
            board: 0,
            white: Player::named("?"),
            black: Player::named("?"),
        };
        for (line, name, value) in &tags {
            match name.as_str() {
                "Round" => {
                    let mut parts = value.splitn(2, '.');
                    let round = parts.next().unwrap_or("");
                    if let Ok(r) = round.trim().parse() {
                        p.round = Some(r);
                    }
                    if let Some(board) = parts.next() {
                        p.board = board_number(board, *line, "Round")?;
                    }
                }
                "Board" => p.board = board_number(value, *line, "Board")?,
                _ => {
                    let (player, rest) = if let Some(rest) = name.strip_prefix("White") {
                        (&mut p.white, rest)
                    } else if let Some(rest) = name.strip_prefix("Black") {
                        (&mut p.black, rest)
                    } else {
                        continue;
                    };
                    let key = match rest {
                        "" => "name",
                        "FideId" => "fide_id",
                        "Title" => "title",
                        "Elo" => "rating",
                        "Federation" | "Fed" => "federation",
                        _ => continue,
                    };
                    set_player_field(player, key, value, *line, name)?;
                }
            }
        }
        if p.board == 0 {
            return Err((
                first_line,
                "Round".to_string(),
                "no board number: give `Round \"N.K\"` (round N, board K) or a `Board` tag"
                    .to_string(),
            ));
        }
        out.push(p);
        Ok(())
    };
    let mut in_moves = false;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.starts_with('[') {
            if in_moves || current.is_none() {
                flush(current.take())?;
                current = Some((line, Vec::new()));
                in_moves = false;
            }
            let inner = l.trim_start_matches('[').trim_end_matches(']');
            let (name, value) = inner.split_once(' ').ok_or_else(|| {
                (
                    line,
                    "tag".to_string(),
                    format!("malformed tag {l:?}: expected [Name \"value\"]"),
                )
            })?;
            let value = value.trim();
            let value = value
                .strip_prefix('"')
                .and_then(|v| v.strip_suffix('"'))
                .ok_or_else(|| {
                    (
                        line,
                        name.to_string(),
                        format!("tag value must be in double quotes: {l}"),
                    )
                })?;
            if let Some((_, tags)) = current.as_mut() {
                tags.push((line, name.to_string(), value.replace("\\\"", "\"")));
            }
        } else if !l.is_empty() {
            in_moves = true;
        }
    }
    flush(current.take())?;
    Ok(out)
}

/// Splits one CSV line into fields (double quotes protect commas; `""` is a quote).
fn csv_fields(line: &str) -> Vec<String> {
    let mut fields = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => fields.push(std::mem::take(&mut field)),
            _ => field.push(c),
        }
    }
    fields.push(field);
    fields
}

/// Parses a CSV of pairings with a header line.
pub fn parse_csv(text: &str) -> Result<Vec<Pairing>, LineError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((header_index, header)) = lines.next() else {
        return Ok(Vec::new());
    };
    let columns: Vec<String> = csv_fields(header)
        .into_iter()
        .map(|c| c.trim().to_ascii_lowercase())
        .collect();
    for required in ["board", "white", "black"] {
        if !columns.iter().any(|c| c == required) {
            return Err((
                header_index + 1,
                required.to_string(),
                format!(
                    "the header line must name a `{required}` column (found: {})",
                    columns.join(",")
                ),
            ));
        }
    }
    let mut out = Vec::new();
    for (i, l) in lines {
        let line = i + 1;
        let fields = csv_fields(l);
        if fields.len() != columns.len() {
            return Err((
                line,
                "line".to_string(),
                format!(
                    "{} fields, but the header names {} columns",
                    fields.len(),
                    columns.len()
                ),
            ));
        }
        let mut p = Pairing {
            round: None,
            board: 0,
            white: Player::named("?"),
            black: Player::named("?"),
        };
        for (column, value) in columns.iter().zip(&fields) {
            match column.as_str() {
                "board" => p.board = board_number(value, line, column)?,
                "round" => {
                    p.round = optional(value)
                        .map(|v| number(&v, line, column))
                        .transpose()?
                }
                _ => {
                    if let Some(key) = column.strip_prefix("white") {
                        set_player_field(
                            &mut p.white,
                            key.trim_start_matches('_'),
                            value,
                            line,
                            column,
                        )?;
                    } else if let Some(key) = column.strip_prefix("black") {
                        set_player_field(
                            &mut p.black,
                            key.trim_start_matches('_'),
                            value,
                            line,
                            column,
                        )?;
                    }
                }
            }
        }
        if p.board == 0 {
            return Err((
                line,
                "board".to_string(),
                "board numbers start at 1".to_string(),
            ));
        }
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pgn_headers_give_board_and_players() {
        let text = "[Event \"x\"]\n[Round \"3.2\"]\n[White \"A, B\"]\n[Black \"C, D\"]\n[WhiteFideId \"1503014\"]\n[BlackElo \"2700\"]\n\n*\n\n[Round \"3.1\"]\n[White \"E\"]\n[Black \"F\"]\n[WhiteTitle \"GM\"]\n";
        let p = parse_pgn_headers(text).unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!((p[0].round, p[0].board), (Some(3), 2));
        assert_eq!(p[0].white.fide_id, Some(1503014));
        assert_eq!(p[0].black.rating, Some(2700));
        assert_eq!(p[1].white.title.as_deref(), Some("GM"));
    }

    #[test]
    fn pgn_errors_name_the_line() {
        let e = parse_pgn_headers("[Round \"1.1\"]\n[WhiteElo \"strong\"]\n").unwrap_err();
        assert_eq!((e.0, e.1.as_str()), (2, "WhiteElo"));
        let e = parse_pgn_headers("[White \"x\"]\n").unwrap_err();
        assert_eq!((e.0, e.1.as_str()), (1, "Round"));
    }

    #[test]
    fn csv_with_quotes_and_optional_columns() {
        let text = "board,white,black,white_fide_id,black_rating\n1,\"Carlsen, Magnus\",\"Caruana, Fabiano\",1503014,2800\n2,X,Y,,\n";
        let p = parse_csv(text).unwrap();
        assert_eq!(p[0].white.name, "Carlsen, Magnus");
        assert_eq!(p[0].black.rating, Some(2800));
        assert_eq!(p[1].white.fide_id, None);
    }

    #[test]
    fn csv_errors_name_line_and_column() {
        let e = parse_csv("board,white,black\n1,a,b\nx,c,d\n").unwrap_err();
        assert_eq!((e.0, e.1.as_str()), (3, "board"));
        let e = parse_csv("board,white\n").unwrap_err();
        assert_eq!(e.1, "black");
        let e = parse_csv("board,white,black\n1,a\n").unwrap_err();
        assert_eq!(e.0, 2);
    }
}
