//! Scenarios: a readable text format of timed observations, each followed by the events it
//! must cause. The format is described in `fixtures/scenarios/README.md`.
//!
//! ```text
//! # Castling with the rook first (4.4.2)
//! 0 snapshot 4k3/8/8/8/8/8/8/4K2R
//! > start
//! 100 lift h1
//! 300 put f1 R
//! > move h1f1
//! ```

use shakmaty::{Board, Color, Piece, Square};

use super::{Event, Machine, MachineConfig};
use crate::board::{ClockReading, MagicPiece, Millis, Observation, ObservationKind, Snapshot};

/// One observation and the events it must cause.
#[derive(Debug, Clone)]
pub struct Step {
    /// Line number in the scenario file (1-based).
    pub line: usize,
    /// The observation.
    pub observation: Observation,
    /// The events it must cause, in order (kinds listed in [`Scenario::ignored`] excluded).
    pub expect: Vec<Expect>,
    /// The link to the board came back just before this observation (a snapshot marked
    /// `relinked`): [`Machine::link_restored`] is called first.
    pub relinked: bool,
}

/// An expected event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// `start [960] [rotated]`: a game starts.
    Start {
        /// A Chess960 start.
        chess960: bool,
        /// The board was found turned round.
        rotated: bool,
    },
    /// `move UCI [SAN]`.
    Move {
        /// UCI of the move.
        uci: String,
        /// SAN, when given.
        san: Option<String>,
    },
    /// `revision PLY`: moves from this ply on are withdrawn.
    Revision(u32),
    /// `alert ARTICLE [white|black] [withdraws ARTICLE@T …]`.
    Alert {
        /// The article.
        article: String,
        /// The side, when given.
        side: Option<Color>,
        /// The earlier alerts it withdraws (article and time raised): none unless given.
        withdraws: Vec<(String, Millis)>,
    },
    /// `completed PLY`: a clock press completed that ply.
    Completed(u32),
    /// `held SQUARES…`: play held, these squares differ.
    Held(Vec<String>),
    /// `resumed`: the board matches the game again.
    Resumed,
    /// `result TOKEN`.
    Result(String),
}

/// A parsed scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    /// The first comment line, used as the scenario's title.
    pub title: String,
    /// The machine configuration (`config` lines).
    pub config: MachineConfig,
    /// Event kinds not checked (`ignore` lines): `completed`, `held`, `alert ARTICLE`.
    pub ignored: Vec<String>,
    /// The observations.
    pub steps: Vec<Step>,
}

/// A line of a scenario file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ScenarioError {
    /// Line number (1-based).
    pub line: usize,
    /// What is wrong with it.
    pub message: String,
}

impl Scenario {
    /// Parses a scenario text.
    pub fn parse(text: &str) -> Result<Scenario, ScenarioError> {
        let mut scenario = Scenario {
            title: String::new(),
            config: MachineConfig::default(),
            ignored: Vec::new(),
            steps: Vec::new(),
        };
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let err = |message: String| ScenarioError { line, message };
            let text = raw.trim();
            if let Some(comment) = text.strip_prefix('#') {
                if scenario.title.is_empty() {
                    scenario.title = comment.trim().to_string();
                }
                continue;
            }
            if text.is_empty() {
                continue;
            }
            let words: Vec<&str> = text.split_whitespace().collect();
            if let Some(rest) = text.strip_prefix('>') {
                let expect = parse_expect(rest).map_err(err)?;
                let Some(step) = scenario.steps.last_mut() else {
                    return Err(err("an expectation must follow an observation".into()));
                };
                step.expect.push(expect);
                continue;
            }
            match words[0] {
                "config" => {
                    for setting in &words[1..] {
                        apply_setting(&mut scenario.config, setting).map_err(err)?;
                    }
                }
                "ignore" => scenario.ignored.push(words[1..].join(" ")),
                _ => {
                    let relinked =
                        words.len() > 2 && words[1] == "snapshot" && words.contains(&"relinked");
                    let words: Vec<&str> = words.into_iter().filter(|w| *w != "relinked").collect();
                    let observation = parse_observation(&words, &scenario.config).map_err(err)?;
                    scenario.steps.push(Step {
                        line,
                        observation,
                        expect: Vec::new(),
                        relinked,
                    });
                }
            }
        }
        Ok(scenario)
    }

    /// Runs the scenario through a new machine; returns every event, or a description of
    /// the first observation whose events differ from the expected ones.
    pub fn check(&self) -> Result<Vec<Event>, String> {
        let mut machine = Machine::new(self.config.clone());
        let mut all = Vec::new();
        for step in &self.steps {
            let mut events = Vec::new();
            if step.relinked {
                machine.link_restored(step.observation.t_ms);
            }
            machine.observe(&step.observation, &mut events);
            let checked: Vec<&Event> = events.iter().filter(|e| self.checks(e)).collect();
            let matches = checked.len() == step.expect.len()
                && checked.iter().zip(&step.expect).all(|(e, x)| x.matches(e));
            if !matches {
                return Err(format!(
                    "{}: line {}: expected {:?}\n  got {:#?}",
                    self.title, step.line, step.expect, checked
                ));
            }
            all.extend(events);
        }
        Ok(all)
    }

    fn checks(&self, event: &Event) -> bool {
        let ignored = |k: &str| self.ignored.iter().any(|i| i == k);
        match event {
            Event::Clock { .. } => false,
            Event::MoveCompleted { .. } => !ignored("completed"),
            Event::BoardState { .. } => !ignored("held"),
            Event::Alert(a) => !ignored(&format!("alert {}", a.article)),
            Event::GameStart { .. }
            | Event::Move { .. }
            | Event::Revision { .. }
            | Event::Result { .. }
            | Event::GameClosed { .. } => true,
        }
    }
}

impl Expect {
    /// True when `event` is this expected event.
    pub fn matches(&self, event: &Event) -> bool {
        match (self, event) {
            (
                Expect::Start { chess960, rotated },
                Event::GameStart {
                    chess960: c,
                    rotated: r,
                    ..
                },
            ) => chess960 == c && rotated == r,
            (Expect::Move { uci, san }, Event::Move { uci: u, san: s, .. }) => {
                uci == u && san.as_ref().is_none_or(|san| san == s)
            }
            (Expect::Revision(ply), Event::Revision { ply: p, .. }) => ply == p,
            (
                Expect::Alert {
                    article,
                    side,
                    withdraws,
                },
                Event::Alert(a),
            ) => {
                *article == a.article
                    && side.is_none_or(|s| a.side == Some(s.into()))
                    && withdraws.len() == a.withdraws.len()
                    && withdraws
                        .iter()
                        .zip(&a.withdraws)
                        .all(|((article, t), r)| *article == r.article && *t == r.t_ms)
            }
            (Expect::Completed(ply), Event::MoveCompleted { ply: p, .. }) => ply == p,
            (
                Expect::Held(squares),
                Event::BoardState {
                    held, differing, ..
                },
            ) => {
                *held
                    && squares.len() == differing.len()
                    && squares.iter().all(|s| differing.contains(s))
            }
            (Expect::Resumed, Event::BoardState { held, .. }) => !*held,
            (Expect::Result(token), Event::Result { result, .. }) => token == result,
            _ => false,
        }
    }
}

fn apply_setting(config: &mut MachineConfig, setting: &str) -> Result<(), String> {
    let (key, value) = setting
        .split_once('=')
        .ok_or_else(|| format!("config setting {setting:?} is not key=value"))?;
    let flag = || match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(format!("{key} must be true or false, not {value:?}")),
    };
    let number = || {
        value
            .parse::<u64>()
            .map_err(|_| format!("{key} must be a number, not {value:?}"))
    };
    match key {
        "identifies" => config.identifies_pieces = flag()?,
        "whole_frames" => config.whole_frames = flag()?,
        "scan_ms" => config.scan_period_ms = number()?,
        "chess960" => config.chess960 = flag()?,
        "one_minute_penalty" => config.one_minute_penalty = flag()?,
        "two_hands_ms" => config.two_hands_threshold_ms = number()?,
        "grace_ms" => config.press_grace_ms = number()?,
        "reconstruct" => config.max_reconstruction_plies = number()? as usize,
        "gap_plies" => config.max_gap_plies = number()? as usize,
        "fen" => config.start_fen = Some(value.replace('_', " ")),
        _ => return Err(format!("unknown config setting {key:?}")),
    }
    Ok(())
}

fn parse_observation(words: &[&str], config: &MachineConfig) -> Result<Observation, String> {
    let t_ms = words[0].parse().map_err(|_| {
        format!(
            "{:?} is neither a time in milliseconds nor a keyword",
            words[0]
        )
    })?;
    let arg = |i: usize| {
        words
            .get(i)
            .copied()
            .ok_or_else(|| format!("{} needs more words", words.get(1).unwrap_or(&"")))
    };
    let square = |i: usize| -> Result<Square, String> {
        let w = arg(i)?;
        w.parse().map_err(|_| format!("{w:?} is not a square"))
    };
    let kind = match arg(1)? {
        "lift" => ObservationKind::Emptied(square(2)?),
        "put" => {
            let piece = match words.get(3) {
                None => None,
                Some(w) => Some(parse_piece(w)?),
            };
            ObservationKind::Placed(square(2)?, piece)
        }
        "magic" => ObservationKind::MagicPiece(
            square(2)?,
            match arg(3)? {
                "draw" => MagicPiece::Draw,
                "white" => MagicPiece::WhiteWins,
                "black" => MagicPiece::BlackWins,
                w => return Err(format!("{w:?} is not a magic piece (draw, white, black)")),
            },
        ),
        "press" => ObservationKind::ClockPressed {
            by: parse_color(arg(2)?)?,
        },
        "clock" => {
            let ms = |i: usize| -> Result<u64, String> {
                let w = arg(i)?;
                w.parse().map_err(|_| format!("{w:?} is not milliseconds"))
            };
            ObservationKind::ClockTimes(ClockReading {
                white_ms: ms(2)?,
                black_ms: ms(3)?,
                running: None,
                flag: false,
            })
        }
        "snapshot" => ObservationKind::Snapshot(parse_snapshot(arg(2)?, &words[3..], config)?),
        other => return Err(format!("unknown observation {other:?}")),
    };
    Ok(Observation { t_ms, kind })
}

/// A board dump: `what` is `standard`, `setup` (the configured FEN) or a board FEN; the
/// `options` may say it is `rotated` or from an `occupancy` board.
fn parse_snapshot(
    what: &str,
    options: &[&str],
    config: &MachineConfig,
) -> Result<Snapshot, String> {
    let mut board = match what {
        "standard" => Board::new(),
        "setup" => {
            let fen = config
                .start_fen
                .as_deref()
                .ok_or("`snapshot setup` needs a `config fen=` line before it")?;
            let board_part = fen.split_whitespace().next().unwrap_or_default();
            board_part
                .parse::<Board>()
                .map_err(|_| format!("{fen:?} is not a FEN"))?
        }
        fen => fen
            .parse::<Board>()
            .map_err(|_| format!("{fen:?} is not a board FEN"))?,
    };
    let mut identifies = true;
    for w in options {
        match *w {
            "rotated" => board.rotate_180(),
            "occupancy" => identifies = false,
            other => return Err(format!("unknown snapshot option {other:?}")),
        }
    }
    Ok(Snapshot {
        board,
        identifies_pieces: identifies,
    })
}

fn parse_expect(text: &str) -> Result<Expect, String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let Some(&kind) = words.first() else {
        return Err("empty expectation".into());
    };
    let number = |i: usize| -> Result<u32, String> {
        let w = words.get(i).ok_or("a ply number is missing")?;
        w.parse().map_err(|_| format!("{w:?} is not a ply number"))
    };
    Ok(match kind {
        "start" => Expect::Start {
            chess960: words.contains(&"960"),
            rotated: words.contains(&"rotated"),
        },
        "move" => Expect::Move {
            uci: words.get(1).ok_or("move needs a UCI move")?.to_string(),
            san: words.get(2).map(|s| s.to_string()),
        },
        "revision" => Expect::Revision(number(1)?),
        "alert" => {
            let article = words.get(1).ok_or("alert needs an article")?.to_string();
            let rest = &words[2..];
            let (side, rest) = match rest.split_first() {
                Some((w, rest)) if *w != "withdraws" => (Some(parse_color(w)?), rest),
                _ => (None, rest),
            };
            let withdraws = match rest.split_first() {
                None => Vec::new(),
                Some((&"withdraws", refs)) if !refs.is_empty() => refs
                    .iter()
                    .map(|r| parse_alert_ref(r))
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err("after the article and side: `withdraws ARTICLE@T …`".into()),
            };
            Expect::Alert {
                article,
                side,
                withdraws,
            }
        }
        "completed" => Expect::Completed(number(1)?),
        "held" => Expect::Held(words[1..].iter().map(|s| s.to_string()).collect()),
        "resumed" => Expect::Resumed,
        "result" => Expect::Result(words.get(1).ok_or("result needs a token")?.to_string()),
        other => return Err(format!("unknown expectation {other:?}")),
    })
}

/// `ARTICLE@T`: the alert citing ARTICLE raised at T milliseconds.
fn parse_alert_ref(w: &str) -> Result<(String, Millis), String> {
    let (article, t) = w
        .split_once('@')
        .ok_or_else(|| format!("{w:?} is not ARTICLE@T"))?;
    let t = t
        .parse()
        .map_err(|_| format!("{t:?} in {w:?} is not milliseconds"))?;
    Ok((article.to_string(), t))
}

fn parse_piece(w: &str) -> Result<Piece, String> {
    let mut chars = w.chars();
    match (chars.next(), chars.next()) {
        (Some(c), None) => {
            Piece::from_char(c).ok_or_else(|| format!("{w:?} is not a piece letter"))
        }
        _ => Err(format!("{w:?} is not a piece letter")),
    }
}

fn parse_color(w: &str) -> Result<Color, String> {
    match w {
        "white" => Ok(Color::White),
        "black" => Ok(Color::Black),
        _ => Err(format!("{w:?} is not white or black")),
    }
}
