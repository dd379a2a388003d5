//! Pairings: who plays on which board, from a FIDE Tournament Report File (see [`super::trf`]),
//! a PGN file of headers or a simple CSV.
//!
//! A PGN file gives one game per header block: `Round "3.2"` (round 3, board 2) or a `Board`
//! tag, `White`, `Black`, and optionally `WhiteFideId`, `WhiteTitle`, `WhiteElo`,
//! `WhiteFed` or `WhiteFederation` (and the same for Black). Moves after the headers are ignored.
//!
//! A CSV file has a header line naming its columns: `board`, `white`, `black` are required;
//! `round`, `white_fide_id`, `white_title`, `white_rating`, `white_federation` and the `black_`
//! ones are optional. Fields containing commas are written in double quotes.

use std::path::Path;

use super::bounds::check_board;
use super::error::ConfigError;
use super::player::Player;
use super::trf::{Encoding, Trf, TrfRound};

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
    /// The line of the pairings file stating it (for messages).
    pub line: usize,
    /// The game was forfeited (a TRF's `+`/`-`): the board keeps its number, nothing is
    /// recorded on it.
    pub forfeit: bool,
    /// In a team tournament, the match the board belongs to (1 for the top match).
    pub team_match: Option<u32>,
}

/// One round's pairings as read from a file, with what could not be used.
#[derive(Debug, Default)]
pub struct RoundPairings {
    /// The file read.
    pub source: std::path::PathBuf,
    /// The boards, in board order.
    pub pairings: Vec<Pairing>,
    /// Lines that could not be used (each names the file, line and field); the pairings they
    /// concern are left out, the others stand.
    pub problems: Vec<ConfigError>,
    /// Forfeited boards, players without a board (byes, absences) and how the file was read,
    /// for the arbiter.
    pub notes: Vec<String>,
}

/// Reads round `round`'s pairings from a TRF (in `encoding`, or guessing it when `None`), a
/// PGN file of headers or a CSV. A round the file does not have, or a file that cannot be
/// read, is an error; bad lines are [`RoundPairings::problems`].
pub fn load_round(
    path: &Path,
    round: u32,
    encoding: Option<Encoding>,
) -> Result<RoundPairings, ConfigError> {
    let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let is_trf = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("trf"))
        || super::trf::looks_like_trf(&bytes);
    let mut out = RoundPairings {
        source: path.to_path_buf(),
        ..RoundPairings::default()
    };
    if is_trf {
        let trf = Trf::parse(&bytes, path, encoding)?;
        out.problems
            .extend(trf.problems.iter().map(|p| p.in_file(path)));
        let paired = trf.round(round).map_err(|p| p.in_file(path))?;
        out.problems
            .extend(paired.problems.iter().map(|p| p.in_file(path)));
        out.pairings = of_trf_round(&trf, &paired);
        let forfeits = paired.boards.iter().filter(|g| g.is_forfeit()).count();
        out.notes.push(format!(
            "{}: read as {}{}, {} players{}, round {round}: {} boards{}",
            path.display(),
            trf.encoding,
            if trf.encoding_guessed {
                " (guessed from its names and federations)"
            } else {
                ""
            },
            trf.players.len(),
            if trf.teams.is_empty() {
                String::new()
            } else {
                format!(" in {} teams (boards numbered by match)", trf.teams.len())
            },
            paired.boards.len(),
            if forfeits > 0 {
                format!(", {forfeits} forfeited")
            } else {
                String::new()
            }
        ));
        let name = |rank: u32| {
            trf.player(rank)
                .map_or_else(|| format!("#{rank}"), |p| p.player.name.clone())
        };
        for f in paired.boards.iter().filter(|g| g.is_forfeit()) {
            out.notes.push(format!(
                "board {}: forfeit, not recorded: {} {} – {} {}",
                f.board,
                name(f.white),
                f.codes.0,
                f.codes.1,
                name(f.black)
            ));
        }
        for b in &paired.byes {
            let what = match b.code.to_ascii_uppercase() {
                'H' => "half-point bye",
                'F' => "full-point bye",
                'U' => "pairing-allocated bye",
                '+' => "forfeit win, no opponent",
                '-' => "forfeit loss, no opponent",
                _ => "not paired (absent)",
            };
            out.notes.push(format!("{what}: {}", name(b.rank)));
        }
    } else {
        // A TRF names each player once, by starting rank, and `Trf::round` checks its
        // pairings; other files can name a player or a board twice.
        let list = load(path)?
            .into_iter()
            .filter(|p| p.round.is_none_or(|r| r == round))
            .collect();
        let (kept, problems) = without_players_twice(list, path);
        out.pairings = kept;
        out.problems.extend(problems);
    }
    Ok(out)
}

/// A TRF round's boards as pairings for the recorder.
pub fn of_trf_round(trf: &Trf, round: &TrfRound) -> Vec<Pairing> {
    let player = |rank: u32| {
        trf.player(rank)
            .map_or_else(|| Player::named("?"), |p| p.player.clone())
    };
    round
        .boards
        .iter()
        .map(|g| Pairing {
            round: Some(round.round),
            board: g.board,
            white: player(g.white),
            black: player(g.black),
            line: g.line,
            forfeit: g.is_forfeit(),
            team_match: g.team_match,
        })
        .collect()
}

/// Leaves out pairings that put a player (by FIDE id, else by name) on a second board, or
/// a board number given twice, saying where.
fn without_players_twice(list: Vec<Pairing>, path: &Path) -> (Vec<Pairing>, Vec<ConfigError>) {
    let mut seen: std::collections::BTreeMap<String, (u32, usize)> = Default::default();
    let mut boards: std::collections::BTreeMap<u32, usize> = Default::default();
    let mut kept = Vec::new();
    let mut problems = Vec::new();
    for p in list {
        if let Some(first) = boards.get(&p.board) {
            problems.push(ConfigError::Invalid {
                path: path.to_path_buf(),
                line: p.line,
                field: "board".to_string(),
                message: format!(
                    "board {} is also paired on line {first}; this pairing is left out",
                    p.board
                ),
            });
            continue;
        }
        let key = |player: &Player| {
            player
                .fide_id
                .map(|id| format!("id {id}"))
                .or_else(|| (player.name != "?").then(|| player.name.to_lowercase()))
        };
        let twice = [("white", &p.white), ("black", &p.black)]
            .into_iter()
            .find_map(|(field, player)| Some((field, player, seen.get(&key(player)?)?)));
        if let Some((field, player, (board, line))) = twice {
            problems.push(ConfigError::Invalid {
                path: path.to_path_buf(),
                line: p.line,
                field: field.to_string(),
                message: format!(
                    "{} is paired twice: on board {} here and on board {board} (line {line}); \
                     this pairing is left out",
                    player.name, p.board
                ),
            });
            continue;
        }
        for player in [&p.white, &p.black] {
            if let Some(k) = key(player) {
                seen.insert(k, (p.board, p.line));
            }
        }
        boards.insert(p.board, p.line);
        kept.push(p);
    }
    (kept, problems)
}

/// Reads pairings from a `.pgn` file of headers or a `.csv` file (by extension; content
/// starting with `[` is read as PGN whatever the name). A TRF needs a round: see
/// [`load_round`].
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

/// A board number, within [`super::bounds::MAX_BOARD`].
fn board_number(value: &str, line: usize, field: &str) -> Result<u32, LineError> {
    let n: i64 = number(value, line, field)?;
    check_board(n).map_err(|message| (line, field.to_string(), message))
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
            line: first_line,
            forfeit: false,
            team_match: None,
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
            line,
            forfeit: false,
            team_match: None,
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
    fn a_player_on_two_boards_leaves_out_the_second() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.csv");
        std::fs::write(
            &path,
            "board,white,black\n1,\"A, B\",\"C, D\"\n2,\"E, F\",\"a, b\"\n3,G,H\n3,I,J\n",
        )
        .unwrap();
        let loaded = load_round(&path, 1, None).unwrap();
        assert_eq!(
            loaded.pairings.iter().map(|p| p.board).collect::<Vec<_>>(),
            vec![1, 3]
        );
        let messages: Vec<String> = loaded.problems.iter().map(|e| e.to_string()).collect();
        assert!(
            messages[0].ends_with("p.csv:3: black: a, b is paired twice: on board 2 here and on board 1 (line 2); this pairing is left out"),
            "{messages:?}"
        );
        assert!(messages[1].contains("p.csv:5: board: board 3 is also paired on line 4"));
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
