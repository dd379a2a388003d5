//! What a simulated event is judged on, against what the hands played (never against another
//! run of the recorder):
//!
//! - every game is exact, or its deviation is marked where it starts: an alert for the
//!   arbiter (warning or critical) within two plies of the first ply that differs, or the
//!   PGN's own mark (the 8.5.3 order mark, a game taken up from the board's position); on a
//!   board that senses only occupancy, a promotion recorded to another piece with its 4.6
//!   alert counts as told;
//! - no proposed penalty (an alert under 7.5) that the hands did not earn;
//! - every game's result, and every game recorded once, with nothing after its end; the
//!   arbiter enters every result from the scoresheets, and no result the recorder read on the
//!   board by itself may differ from the game's;
//! - at an event of several rounds, every round's games under their paired names, and every
//!   result in the TRF that `touchmove results` writes from the files;
//! - every published file whole, and the feed showing what the files show;
//! - no board task failed.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::rounds::{TRF_NAME, paired_names, results_in_trf, round_numbers};
use super::run::{ARBITER_REASON, Finished};
use super::scenario::{PlayedGame, Scenario};
use crate::act::{Alert, Event, GapAccount, Severity};
use crate::board::kind::BoardKind;
use crate::record::GameRecord;
use crate::recorder::layout::OutputFolder;
use crate::recorder::pipeline::ORDER_NOT_OBSERVED;
use crate::store::{BoardKey, Journal};

/// Plies on either side of the first differing ply in which an alert marks the deviation.
const MARK_WINDOW: u32 = 2;

/// How a game came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameOutcome {
    /// Every move and the result as played.
    Exact,
    /// Every move as played but a promotion the board could not show, told (4.6).
    PromotionTold,
    /// The record departs from the game, and says so where it does.
    Marked,
    /// The record departs from the game without a word: the recorder's worst failure.
    SilentlyWrong,
}

/// One thing wrong with a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The board, if it concerns one.
    pub board: Option<u32>,
    /// What is wrong.
    pub what: String,
}

/// The judgement of one run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Verdict {
    /// How each board's game of the first round came out, by board number.
    pub games: BTreeMap<u32, GameOutcome>,
    /// How the games of the later rounds came out, by round and board number.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub later_rounds: BTreeMap<u32, BTreeMap<u32, GameOutcome>>,
    /// Everything wrong; a run passes when there is nothing.
    pub problems: Vec<Problem>,
}

impl Verdict {
    fn problem(&mut self, board: Option<u32>, what: String) {
        self.problems.push(Problem { board, what });
    }
}

/// What the journal holds of one board: its events in order.
fn board_events(journal: &Path, round: u32) -> Result<BTreeMap<u32, Vec<Event>>, String> {
    let journal = Journal::open_read_only(journal).map_err(|e| e.to_string())?;
    let mut events: BTreeMap<u32, Vec<Event>> = BTreeMap::new();
    for key in journal.boards().map_err(|e| e.to_string())? {
        if let BoardKey::Pairing { round: r, board } = key
            && r == round
        {
            let stamped = journal.events(&key).map_err(|e| e.to_string())?;
            events.insert(board, stamped.into_iter().map(|e| e.value).collect());
        }
    }
    Ok(events)
}

/// Judges a finished run of `scenario` whose recorder wrote `out` and journalled into
/// `journal`.
pub fn judge(scenario: &Scenario, finished: &Finished, out: &Path, journal: &Path) -> Verdict {
    let mut verdict = Verdict::default();
    for failure in &finished.failures {
        verdict.problem(None, failure.clone());
    }
    let folder = OutputFolder::new(out);
    let mut results = BTreeMap::new();
    for round in round_numbers(scenario) {
        let events = match board_events(journal, round) {
            Ok(events) => events,
            Err(e) => {
                verdict.problem(None, format!("the journal cannot be read: {e}"));
                BTreeMap::new()
            }
        };
        for board in &finished.boards {
            let Some((plan, played)) = board.game_of(round) else {
                continue;
            };
            let number = plan.number;
            let path = folder.game_path(round, number);
            let Some((text, game)) = read_one_game(&mut verdict, number, &path) else {
                continue;
            };
            let no_events = Vec::new();
            let events = events.get(&number).unwrap_or(&no_events);
            let before = verdict.problems.len();
            let outcome = judge_game(&mut verdict, number, plan.kind, played, &game, events);
            if round == 1 {
                verdict.games.insert(number, outcome);
            } else {
                let games = verdict.later_rounds.entry(round).or_default();
                games.insert(number, outcome);
                for problem in &mut verdict.problems[before..] {
                    problem.what.insert_str(0, &format!("round {round}: "));
                }
            }
            if let Some((white, black)) = paired_names(scenario, round, number)
                && (game.tag("White") != Some(white.as_str())
                    || game.tag("Black") != Some(black.as_str()))
            {
                verdict.problem(
                    Some(number),
                    format!(
                        "round {round}: the game names {:?} – {:?}, paired {white} – {black}",
                        game.tag("White"),
                        game.tag("Black")
                    ),
                );
            }
            if let Some(result) = &played.expected_result {
                results.insert((round, number), result.clone());
            }
            if let Some(shown) = finished.feed.game_pgn(round, number)
                && *shown.text != *text
            {
                verdict.problem(
                    Some(number),
                    format!(
                        "round {round}: the spectators' feed shows another text than game file"
                    ),
                );
            }
        }
        for name in ["games.pgn", "index.json"] {
            let path = folder.round_dir(round).join(name);
            if let Err(e) = whole(&path) {
                verdict.problem(None, format!("{} is not whole: {e}", path.display()));
            }
        }
    }
    if scenario.shape.rounds > 1 {
        let trf = out.with_file_name(TRF_NAME);
        for (board, what) in results_in_trf(scenario, out, &trf, &results) {
            verdict.problem(board, what);
        }
    }
    for problem in &mut verdict.problems {
        if let Some(board) = finished
            .boards
            .iter()
            .find(|b| Some(b.plan.number) == problem.board)
        {
            problem.what = format!(
                "{} board, {:?} hands: {}",
                board.plan.kind, board.plan.hands, problem.what
            );
        }
    }
    verdict
}

/// The text of the game file at `path` and its one game; what is wrong with it otherwise.
fn read_one_game(verdict: &mut Verdict, number: u32, path: &Path) -> Option<(String, GameRecord)> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) => {
            verdict.problem(Some(number), format!("{}: {e}", path.display()));
            return None;
        }
    };
    let games = match crate::record::pgn::read_games(&text) {
        Ok(games) => games,
        Err(e) => {
            verdict.problem(
                Some(number),
                format!("{} is not whole: {e}", path.display()),
            );
            return None;
        }
    };
    let [game] = games.as_slice() else {
        verdict.problem(
            Some(number),
            format!(
                "{} holds {} games; one was played",
                path.display(),
                games.len()
            ),
        );
        return None;
    };
    let game = game.clone();
    Some((text, game))
}

/// Whether the published file at `path` reads whole (JSON or PGN, by its name).
fn whole(path: &Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    if path.extension().is_some_and(|e| e == "json") {
        serde_json::from_str::<serde_json::Value>(&text)
            .map(|_| ())
            .map_err(|e| e.to_string())
    } else {
        crate::record::pgn::read_games(&text)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
}

/// The alerts of `events` the arbiter saw.
fn alerts(events: &[Event]) -> impl Iterator<Item = &Alert> {
    events.iter().filter_map(|e| match e {
        Event::Alert(a) => Some(a),
        _ => None,
    })
}

fn judge_game(
    verdict: &mut Verdict,
    number: u32,
    kind: BoardKind,
    played: &PlayedGame,
    game: &GameRecord,
    events: &[Event],
) -> GameOutcome {
    for alert in alerts(events) {
        if alert.article == "recorder" {
            verdict.problem(
                Some(number),
                format!("the recorder failed: {}", alert.message),
            );
        }
        // As the pipeline reads it: a 7.5 alert for the arbiter, naming the offender,
        // proposes a penalty.
        let proposes_penalty = alert.article.starts_with("7.5")
            && alert.severity != Severity::Info
            && alert.side.is_some()
            && !alert.before_game;
        if proposes_penalty
            && !played
                .penalties_earned
                .iter()
                .any(|(ply, _)| ply.abs_diff(alert.ply) <= MARK_WINDOW)
        {
            verdict.problem(
                Some(number),
                format!(
                    "a penalty the hands did not earn, at ply {}: {}: {}",
                    alert.ply, alert.article, alert.message
                ),
            );
        }
    }
    // The arbiter enters every result from the scoresheets: one the recorder read on the
    // board by itself must still be the game's.
    for event in events {
        if let Event::Result { result, reason, .. } = event
            && reason != ARBITER_REASON
            && played.expected_result.as_ref().is_some_and(|r| r != result)
        {
            verdict.problem(
                Some(number),
                format!(
                    "the recorder recorded the result {result} ({reason}) where the hands' game \
                     ended {}",
                    played.expected_result.as_deref().unwrap_or("*")
                ),
            );
        }
    }
    let recorded: Vec<&str> = game.moves.iter().map(|m| m.uci.as_str()).collect();
    let told_promotion =
        |ply: u32| alerts(events).any(|a| a.ply == ply && a.article.starts_with("4.6"));
    let mut promotion_told = false;
    let first_difference = (0..played.moves_uci.len().max(recorded.len())).find(|&i| {
        let (Some(was), Some(is)) = (played.moves_uci.get(i), recorded.get(i)) else {
            return true;
        };
        if was == is {
            return false;
        }
        let same_squares = was.len() == 5 && is.len() == 5 && was[..4] == is[..4];
        if same_squares && !kind.identifies_pieces() && told_promotion(i as u32 + 1) {
            promotion_told = true;
            return false;
        }
        true
    });
    let Some(first) = first_difference else {
        if let Some(result) = &played.expected_result
            && game.result != *result
        {
            verdict.problem(
                Some(number),
                format!(
                    "every move recorded, but the result is {} where the hands' game ended {result}",
                    game.result
                ),
            );
        }
        return if promotion_told {
            GameOutcome::PromotionTold
        } else {
            GameOutcome::Exact
        };
    };
    let ply = first as u32 + 1;
    if marked(game, events, ply) {
        return GameOutcome::Marked;
    }
    let was = played
        .moves_uci
        .get(first)
        .map_or("nothing", String::as_str);
    let is = recorded.get(first).copied().unwrap_or("nothing");
    verdict.problem(
        Some(number),
        format!(
            "silently wrong from ply {ply}: played {was}, recorded {is} ({} of {} plies recorded), \
             and no alert or mark says so",
            recorded.len(),
            played.moves_uci.len()
        ),
    );
    GameOutcome::SilentlyWrong
}

/// True when the record says, near ply `ply`, that it may not be the game played.
fn marked(game: &GameRecord, events: &[Event], ply: u32) -> bool {
    let near = |p: u32| p + MARK_WINDOW >= ply && p <= ply + MARK_WINDOW;
    let alerted = alerts(events).any(|a| {
        (a.severity != Severity::Info && near(a.ply))
            || matches!(a.gap, Some(GapAccount::Reanchored { .. }))
    });
    let noted = game.moves.iter().enumerate().any(|(i, m)| {
        near(i as u32 + 1) && m.comments.iter().any(|c| c.starts_with(ORDER_NOT_OBSERVED))
    }) || game
        .initial_comments
        .iter()
        .any(|c| c.starts_with("moves before the gap"));
    alerted || noted
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::RecordedMove;

    fn played(moves: &[&str], result: Option<&str>) -> PlayedGame {
        PlayedGame {
            moves_uci: moves.iter().map(|m| m.to_string()).collect(),
            expected_result: result.map(str::to_string),
            physical: Vec::new(),
            penalties_earned: Vec::new(),
            ply_start_ms: Vec::new(),
            result_signal: None,
            over_ms: 0,
        }
    }

    fn recorded(moves: &[&str], result: &str) -> GameRecord {
        GameRecord {
            moves: moves
                .iter()
                .map(|m| RecordedMove {
                    uci: m.to_string(),
                    san: m.to_string(),
                    ..RecordedMove::default()
                })
                .collect(),
            result: result.to_string(),
            ..GameRecord::default()
        }
    }

    fn alert(article: &str, ply: u32, severity: Severity) -> Event {
        Event::Alert(Alert {
            article: article.to_string(),
            side: Some(crate::board::ColorName::Black),
            ply,
            t_ms: 0,
            evidence_ms: Vec::new(),
            squares: Vec::new(),
            severity,
            message: "m".to_string(),
            gap: None,
            withdraws: Vec::new(),
            before_game: false,
        })
    }

    fn outcome(
        played: &PlayedGame,
        game: &GameRecord,
        events: &[Event],
        kind: BoardKind,
    ) -> (GameOutcome, Vec<Problem>) {
        let mut verdict = Verdict::default();
        let outcome = judge_game(&mut verdict, 1, kind, played, game, events);
        (outcome, verdict.problems)
    }

    #[test]
    fn a_wrong_move_without_a_word_is_silently_wrong_and_with_an_alert_marked() {
        let game = played(&["e2e4", "e7e5", "g1f3"], None);
        let wrong = recorded(&["e2e4", "e7e6", "g1f3"], "*");
        let (o, problems) = outcome(&game, &wrong, &[], BoardKind::Dgt);
        assert_eq!(o, GameOutcome::SilentlyWrong);
        assert!(problems[0].what.contains("ply 2"), "{problems:?}");
        let events = [alert("8.5.3", 3, Severity::Warning)];
        assert_eq!(
            outcome(&game, &wrong, &events, BoardKind::Dgt).0,
            GameOutcome::Marked
        );
        let far = [alert("8.5.3", 9, Severity::Warning)];
        assert_eq!(
            outcome(&game, &wrong, &far, BoardKind::Dgt).0,
            GameOutcome::SilentlyWrong
        );
    }

    #[test]
    fn a_game_stopped_short_is_wrong_unless_told_and_a_wrong_result_is_a_problem() {
        let game = played(&["e2e4", "e7e5", "g1f3"], Some("1-0"));
        let short = recorded(&["e2e4"], "*");
        assert_eq!(
            outcome(&game, &short, &[], BoardKind::Dgt).0,
            GameOutcome::SilentlyWrong
        );
        let (o, problems) = outcome(
            &game,
            &recorded(&["e2e4", "e7e5", "g1f3"], "0-1"),
            &[],
            BoardKind::Dgt,
        );
        assert_eq!(o, GameOutcome::Exact);
        assert!(problems[0].what.contains("result"), "{problems:?}");
        let (o, problems) = outcome(
            &game,
            &recorded(&["e2e4", "e7e5", "g1f3"], "1-0"),
            &[],
            BoardKind::Dgt,
        );
        assert_eq!((o, problems.len()), (GameOutcome::Exact, 0));
    }

    #[test]
    fn a_penalty_is_a_problem_unless_the_hands_earned_it() {
        let mut game = played(&["e2e4", "e7e5"], None);
        let record = recorded(&["e2e4", "e7e5"], "*");
        let penalty = [alert("7.5.1", 2, Severity::Critical)];
        let (_, problems) = outcome(&game, &record, &penalty, BoardKind::Sentio);
        assert!(problems[0].what.contains("did not earn"), "{problems:?}");
        game.penalties_earned.push((2, "7.5.1".to_string()));
        assert!(
            outcome(&game, &record, &penalty, BoardKind::Sentio)
                .1
                .is_empty()
        );
    }

    #[test]
    fn a_promotion_an_occupancy_board_cannot_show_counts_when_told() {
        let game = played(&["a7a8n"], None);
        let record = recorded(&["a7a8q"], "*");
        let told = [alert("4.6", 1, Severity::Warning)];
        assert_eq!(
            outcome(&game, &record, &told, BoardKind::Pegasus).0,
            GameOutcome::PromotionTold
        );
        assert_eq!(
            outcome(&game, &record, &told, BoardKind::Dgt).0,
            GameOutcome::Marked
        );
        assert_eq!(
            outcome(&game, &record, &[], BoardKind::Pegasus).0,
            GameOutcome::SilentlyWrong
        );
    }
}
