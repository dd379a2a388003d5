//! FIDE scoresheet notation (Laws, Appendix C), in and out.
//!
//! Players and arbiters write `0-0` and `0-0-0` with zeros, promotions without `=` (`e8Q`),
//! optionally `e.p.` after an en passant capture, and may use the long form `Ng1-f3`. PGN SAN
//! (`O-O`, `e8=Q`) is accepted as well. shakmaty's SAN parser refuses the FIDE forms, so they
//! are normalised here first.

use shakmaty::san::{San, SanPlus, Suffix};
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, CastlingSide, Chess, Move, Position, Role};

/// Short (`Nf3`) or long (`Ng1-f3`) algebraic notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Short algebraic, as PGN SAN but with FIDE's castling and promotion forms.
    Short,
    /// Long algebraic: the from-square, `-` or `x`, the to-square.
    Long,
}

/// Why a scoresheet move could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScoresheetError {
    /// The text is not a move in any notation we read.
    #[error("{0:?} is not a move in algebraic notation")]
    Unreadable(String),
    /// The text is a move, but not a legal one (or an ambiguous one) here.
    #[error("{0:?} is not a legal move in this position")]
    Illegal(String),
}

/// Reads a move written in FIDE scoresheet notation (short or long) or PGN SAN.
pub fn parse_move(pos: &Chess, text: &str) -> Result<Move, ScoresheetError> {
    let san = normalise(text).ok_or_else(|| ScoresheetError::Unreadable(text.to_string()))?;
    let parsed = San::from_ascii(san.as_bytes())
        .map_err(|_| ScoresheetError::Unreadable(text.to_string()))?;
    parsed
        .to_move(pos)
        .map_err(|_| ScoresheetError::Illegal(text.to_string()))
}

/// Reads a move typed by a person or sent by a program: SAN, FIDE scoresheet notation (short or
/// long) or UCI (in `mode`'s castling form, or the standard `e1g1` form).
pub fn parse_any(pos: &Chess, mode: CastlingMode, text: &str) -> Result<Move, ScoresheetError> {
    let trimmed = text.trim();
    if let Ok(uci) = trimmed.parse::<UciMove>() {
        if let Ok(mv) = uci.to_move(pos) {
            return Ok(mv);
        }
        if mode == CastlingMode::Chess960 {
            return Err(ScoresheetError::Illegal(text.to_string()));
        }
    }
    parse_move(pos, trimmed)
}

/// Rewrites scoresheet notation as plain SAN without suffix; `None` if it cannot be a move.
pub fn normalise(text: &str) -> Option<String> {
    let mut s = text.trim().to_string();
    for tail in ["e.p.", "ep", "e.p"] {
        if let Some(stripped) = s.strip_suffix(tail) {
            // A bare "ep" tail must follow a square, never be part of one.
            if stripped.ends_with(|c: char| c.is_ascii_digit() || c == ' ') {
                s = stripped.trim_end().to_string();
                break;
            }
        }
    }
    let s = s.trim_end_matches(['+', '#', '!', '?']);
    let castle = s.replace('0', "O").to_ascii_uppercase();
    if castle == "O-O" || castle == "O-O-O" {
        return Some(castle);
    }
    let mut out: String = s.chars().filter(|&c| c != '-' && c != ':').collect();
    out = out.replace(['(', ')', '/'], "");
    // Promotion without '=': a pawn move ending on the last rank followed by a piece letter.
    let bytes = out.as_bytes();
    if let [.., rank, piece] = bytes
        && matches!(rank, b'1' | b'8')
        && matches!(piece, b'Q' | b'R' | b'B' | b'N')
        && bytes.first().is_some_and(|c| c.is_ascii_lowercase())
    {
        out.insert(out.len() - 1, '=');
    }
    (!out.is_empty() && out.is_ascii()).then_some(out)
}

/// Writes `mv` (legal in `pos`) in FIDE scoresheet notation, with `+` for check and `#` for
/// mate, `e.p.` after an en passant capture when `mark_en_passant`.
pub fn write_move(pos: &Chess, mv: Move, style: Style, mark_en_passant: bool) -> String {
    let mut text = match (mv.castling_side(), style) {
        (Some(CastlingSide::KingSide), _) => "0-0".to_string(),
        (Some(CastlingSide::QueenSide), _) => "0-0-0".to_string(),
        (None, Style::Short) => San::from_move(pos, mv).to_string().replace('=', ""),
        (None, Style::Long) => long_form(mv),
    };
    if mark_en_passant && mv.is_en_passant() {
        text.push_str(" e.p.");
    }
    let mut after = pos.clone();
    after.play_unchecked(mv);
    match Suffix::from_position(&after) {
        Some(Suffix::Checkmate) => text.push('#'),
        Some(Suffix::Check) => text.push('+'),
        None => {}
    }
    text
}

fn long_form(mv: Move) -> String {
    let mut text = String::new();
    if mv.role() != Role::Pawn {
        text.push(mv.role().upper_char());
    }
    if let Some(from) = mv.from() {
        text.push_str(&from.to_string());
    }
    text.push(if mv.is_capture() { 'x' } else { '-' });
    text.push_str(&mv.to().to_string());
    if let Some(promotion) = mv.promotion() {
        text.push(promotion.upper_char());
    }
    text
}

/// SAN with suffix for a move in a position, as PGN writes it.
pub fn pgn_san(pos: &Chess, mv: Move) -> String {
    SanPlus::from_move(pos.clone(), mv).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::Square;
    use shakmaty::fen::Fen;

    fn pos(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn reads_fide_forms() {
        let castling = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let short = parse_move(&castling, "0-0").unwrap();
        assert_eq!(short.castling_side(), Some(CastlingSide::KingSide));
        let long = parse_move(&castling, "0-0-0+").unwrap();
        assert_eq!(long.castling_side(), Some(CastlingSide::QueenSide));
        let promo = pos("3r3k/4P3/8/8/8/8/8/K7 w - - 0 1");
        let e8q = parse_move(&promo, "e8Q").unwrap();
        assert_eq!(e8q.promotion(), Some(Role::Queen));
        let exd8n = parse_move(&promo, "exd8N").unwrap();
        assert_eq!(
            (exd8n.to(), exd8n.promotion()),
            (Square::D8, Some(Role::Knight))
        );
        let ep = pos("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1");
        assert!(parse_move(&ep, "exd6 e.p.").unwrap().is_en_passant());
        assert!(parse_move(&ep, "exd6e.p.").unwrap().is_en_passant());
        let start = Chess::default();
        assert_eq!(parse_move(&start, "Ng1-f3").unwrap().to(), Square::F3);
        assert_eq!(parse_move(&start, "e2-e4").unwrap().to(), Square::E4);
        assert!(matches!(
            parse_move(&start, "e5"),
            Err(ScoresheetError::Illegal(_))
        ));
        assert_eq!(
            parse_any(&start, CastlingMode::Standard, "g1f3").unwrap(),
            parse_move(&start, "Nf3").unwrap()
        );
        assert!(matches!(
            parse_move(&start, "hello"),
            Err(ScoresheetError::Unreadable(_))
        ));
    }

    #[test]
    fn writes_fide_forms() {
        let castling = pos("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
        let short = parse_move(&castling, "O-O").unwrap();
        assert_eq!(write_move(&castling, short, Style::Short, false), "0-0");
        let promo = pos("3r3k/4P3/8/8/8/8/8/K7 w - - 0 1");
        let mv = parse_move(&promo, "e8=Q").unwrap();
        assert_eq!(write_move(&promo, mv, Style::Short, false), "e8Q+");
        assert_eq!(write_move(&promo, mv, Style::Long, false), "e7-e8Q+");
        let ep = pos("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1");
        let mv = parse_move(&ep, "exd6").unwrap();
        assert_eq!(write_move(&ep, mv, Style::Short, true), "exd6 e.p.");
        assert_eq!(write_move(&ep, mv, Style::Long, false), "e5xd6");
        let start = Chess::default();
        let mv = parse_move(&start, "Nf3").unwrap();
        assert_eq!(write_move(&start, mv, Style::Long, false), "Ng1-f3");
    }
}
