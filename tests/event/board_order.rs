//! Board numbers as pairing programs publish them, for every round of every TRF of the
//! fixtures, through `touchmove pairings --format json`.
//!
//! The expected order is derived here, from the file's columns and the rules, without the
//! library's reader:
//! - an individual tournament follows FIDE C.04.2.B: the score before the round of the
//!   higher-ranked player of the pair, the sum of the two scores, the rank of the
//!   higher-ranked player (score, then pairing number); forfeits keep their place;
//! - a team tournament (`013` lines) numbers its boards by match: the matches in that order
//!   applied to the teams (match points before the round, team number), then the boards of a
//!   match in the order of the higher-ranked team's list.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/trf")
        .join(name)
}

/// One player's block of a round: opponent (0 for none), colour, result.
type Block = (u32, char, char);

/// What the test reads of a file: name and blocks by starting rank, the teams' lists.
struct File {
    names: BTreeMap<u32, String>,
    blocks: BTreeMap<u32, Vec<Block>>,
    teams: Vec<Vec<u32>>,
}

fn read(path: &Path) -> File {
    let text = String::from_utf8(std::fs::read(path).unwrap()).expect("a UTF-8 fixture");
    let mut file = File {
        names: BTreeMap::new(),
        blocks: BTreeMap::new(),
        teams: Vec::new(),
    };
    for line in text.lines() {
        let chars: Vec<char> = line.chars().collect();
        let field = |from: usize, to: usize| -> String {
            chars
                .get(from - 1..to.min(chars.len()))
                .map(|c| c.iter().collect::<String>().trim().to_string())
                .unwrap_or_default()
        };
        if line.starts_with("013") {
            file.teams.push(
                field(37, chars.len())
                    .split_whitespace()
                    .map(|n| n.parse().unwrap())
                    .collect(),
            );
        }
        if !line.starts_with("001") {
            continue;
        }
        let rank: u32 = field(5, 8).parse().unwrap();
        file.names.insert(rank, field(15, 47));
        let mut blocks = Vec::new();
        let mut at = 92;
        while at <= chars.len() {
            let opponent = field(at, at + 3).parse().unwrap_or(0);
            let at_column = |c: usize| chars.get(c - 1).copied().unwrap_or(' ');
            blocks.push((opponent, at_column(at + 5), at_column(at + 7)));
            at += 10;
        }
        file.blocks.insert(rank, blocks);
    }
    file
}

fn points(result: char) -> u32 {
    match result.to_ascii_uppercase() {
        '1' | '+' | 'W' | 'F' | 'U' => 2,
        '=' | 'D' | 'H' => 1,
        _ => 0,
    }
}

/// A game of the round as the test expects it.
#[derive(Debug, Clone, PartialEq)]
struct Expected {
    white: u32,
    black: u32,
    forfeit: bool,
    team_match: Option<u32>,
}

impl File {
    fn block(&self, rank: u32, round: usize) -> Block {
        self.blocks[&rank]
            .get(round - 1)
            .copied()
            .unwrap_or((0, ' ', ' '))
    }

    fn score(&self, rank: u32, round: usize) -> u32 {
        (1..round).map(|r| points(self.block(rank, r).2)).sum()
    }

    fn games(&self, round: usize) -> Vec<Expected> {
        self.blocks
            .keys()
            .filter(|&&rank| {
                let (opponent, colour, _) = self.block(rank, round);
                opponent != 0 && colour == 'w'
            })
            .map(|&white| {
                let black = self.block(white, round).0;
                let codes = [self.block(white, round).2, self.block(black, round).2];
                Expected {
                    white,
                    black,
                    forfeit: codes.iter().any(|c| matches!(c, '+' | '-')),
                    team_match: None,
                }
            })
            .collect()
    }

    fn team_of(&self, rank: u32) -> (usize, usize) {
        self.teams
            .iter()
            .enumerate()
            .find_map(|(t, list)| Some((t + 1, list.iter().position(|&r| r == rank)?)))
            .expect("every player of a team file is on a team line")
    }

    /// Match points before `round`, in half points (won 2, drawn 1, lost 0). A team whose
    /// players scored without opponents in a round it met no team had the pairing-allocated
    /// bye, which scores a won match (C.04.1: the points of a win, applied to teams by C.04.6).
    fn match_points(&self, team: usize, round: usize) -> u32 {
        let mut total = 0;
        for r in 1..round {
            let mut ours = 0;
            let mut theirs = 0;
            let mut met = false;
            let mut without_opponent = 0;
            for &rank in &self.teams[team - 1] {
                let (opponent, _, result) = self.block(rank, r);
                if opponent == 0 {
                    without_opponent += points(result);
                    continue;
                }
                met = true;
                ours += points(result);
                theirs += points(self.block(opponent, r).2);
            }
            if met {
                total += match ours.cmp(&theirs) {
                    Ordering::Greater => 4,
                    Ordering::Equal => 2,
                    Ordering::Less => 0,
                };
            } else if without_opponent > 0 {
                total += 4;
            }
        }
        total
    }
}

/// C.04.2.B on two pairs of sides given as (score, number): `Less` when `x` comes first.
fn comes_first(x: [(u32, u32); 2], y: [(u32, u32); 2]) -> Ordering {
    let higher = |[a, b]: [(u32, u32); 2]| {
        if b.0 > a.0 || (b.0 == a.0 && b.1 < a.1) {
            b
        } else {
            a
        }
    };
    let (hx, hy) = (higher(x), higher(y));
    hy.0.cmp(&hx.0)
        .then((y[0].0 + y[1].0).cmp(&(x[0].0 + x[1].0)))
        .then(hx.1.cmp(&hy.1))
}

fn expected_individual(file: &File, round: usize) -> Vec<Expected> {
    let mut games = file.games(round);
    let sides = |g: &Expected| [g.white, g.black].map(|rank| (file.score(rank, round), rank));
    games.sort_by(|x, y| comes_first(sides(x), sides(y)));
    games
}

fn expected_by_match(file: &File, round: usize) -> Vec<Expected> {
    let mut matches: BTreeMap<(usize, usize), Vec<Expected>> = BTreeMap::new();
    for g in file.games(round) {
        let (a, b) = (file.team_of(g.white).0, file.team_of(g.black).0);
        matches.entry((a.min(b), a.max(b))).or_default().push(g);
    }
    let sides = |(a, b): (usize, usize)| [a, b].map(|t| (file.match_points(t, round), t as u32));
    let mut order: Vec<_> = matches.into_iter().collect();
    order.sort_by(|x, y| comes_first(sides(x.0), sides(y.0)));
    let mut boards = Vec::new();
    for (number, ((a, b), mut games)) in order.into_iter().enumerate() {
        let [sa, sb] = sides((a, b));
        let higher = if sb.0 > sa.0 { b } else { a };
        games.sort_by_key(|g| {
            [g.white, g.black]
                .iter()
                .map(|&r| file.team_of(r))
                .find(|(t, _)| *t == higher)
                .unwrap()
                .1
        });
        for mut g in games {
            g.team_match = Some(number as u32 + 1);
            boards.push(g);
        }
    }
    boards
}

/// What `touchmove pairings --format json` prints for a round, as the test's games (players
/// found by name).
fn printed(file: &File, path: &Path, round: usize) -> Vec<Expected> {
    let o = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("pairings")
        .arg(path)
        .args(["--round", &round.to_string(), "--format", "json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        o.status.success(),
        "{} round {round}: {err}",
        path.display()
    );
    let rank = |name: &serde_json::Value| {
        *file
            .names
            .iter()
            .find(|(_, n)| n.as_str() == name.as_str().unwrap())
            .unwrap()
            .0
    };
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(
                v["board"],
                i + 1,
                "boards numbered from 1 without a gap: {line}"
            );
            assert_eq!(v["round"], round);
            Expected {
                white: rank(&v["white"]),
                black: rank(&v["black"]),
                forfeit: v["forfeit"] == true,
                team_match: v["match"].as_u64().map(|m| m as u32),
            }
        })
        .collect()
}

fn rounds_paired(file: &File) -> usize {
    let longest = file.blocks.values().map(Vec::len).max().unwrap_or(0);
    (1..=longest).filter(|&r| !file.games(r).is_empty()).count()
}

#[test]
fn every_round_of_every_file_is_in_the_published_order() {
    let mut checked = 0;
    for name in [
        "dutch_2025_C5.trf",
        "dutch_2025_C9.trf",
        "accents-utf8.trf",
        "grandmommyscup.trf",
    ] {
        let path = fixture(name);
        let file = read(&path);
        let rounds = rounds_paired(&file);
        assert!(rounds > 0, "{name}");
        for round in 1..=rounds {
            let expected = if file.teams.is_empty() {
                expected_individual(&file, round)
            } else {
                expected_by_match(&file, round)
            };
            assert_eq!(
                printed(&file, &path, round),
                expected,
                "{name} round {round}"
            );
            checked += expected.len();
        }
    }
    assert!(checked > 900, "{checked} boards checked");
}

#[test]
fn boards_read_by_hand_from_the_team_swiss() {
    let path = fixture("grandmommyscup.trf");
    let file = read(&path);
    let pairs = |round: usize| -> Vec<(u32, u32, Option<u32>)> {
        printed(&file, &path, round)
            .into_iter()
            .map(|g| (g.white, g.black, g.team_match))
            .collect()
    };
    // Round 1: India (team 1: 1 5 15 28 44) – Cuba first, India's boards in its list's order,
    // 44 sitting out; then Ukraine (2 4 20 27 22) – Bulgaria.
    let round_1 = pairs(1);
    assert_eq!(
        round_1[..6],
        [
            (51, 1, Some(1)),
            (5, 60, Some(1)),
            (120, 15, Some(1)),
            (28, 63, Some(1)),
            (2, 24, Some(2)),
            (88, 4, Some(2))
        ]
    );
    // Round 2: the winners of round 1 first, the best-numbered team's match on top: Germany
    // (team 8: 8 75 54 66 64, 66 sitting out) – Israel.
    let round_2 = pairs(2);
    assert_eq!(
        round_2[..4],
        [
            (12, 8, Some(1)),
            (75, 115, Some(1)),
            (118, 54, Some(1)),
            (64, 144, Some(1))
        ]
    );
    assert_eq!(round_2.len(), 91);
    assert_eq!(
        round_2[40],
        (65, 127, Some(11)),
        "Italy – Colombia, board 41"
    );
}

#[test]
fn a_forfeit_keeps_its_board_and_is_shown_as_one() {
    let path = fixture("accents-utf8.trf");
    let o = Command::new(env!("CARGO_BIN_EXE_touchmove"))
        .arg("pairings")
        .arg(&path)
        .args(["--round", "2"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    let forfeit: Vec<&str> = out.lines().filter(|l| l.contains("forfeit")).collect();
    assert_eq!(forfeit.len(), 1, "{out}");
    assert!(
        forfeit[0].contains("Novák, Zoë")
            && forfeit[0].contains("Björk, Ingrid")
            && forfeit[0].ends_with("(forfeit, not recorded)"),
        "{out}"
    );
    assert!(
        err.contains("forfeit, not recorded: Novák, Zoë + – - Björk, Ingrid"),
        "{err}"
    );
    assert_eq!(out.lines().count(), 4, "{out}");
}

#[test]
fn the_order_is_the_same_before_the_rounds_results_are_in() {
    let dir = tempfile::tempdir().unwrap();
    for (name, round) in [("grandmommyscup.trf", 2), ("accents-utf8.trf", 2)] {
        let path = fixture(name);
        let file = read(&path);
        let column = 92 + 10 * (round - 1) + 7;
        let text = String::from_utf8(std::fs::read(&path).unwrap()).unwrap();
        let blank: String = text
            .split_inclusive('\n')
            .map(|line| {
                if !line.starts_with("001") {
                    return line.to_string();
                }
                line.chars()
                    .enumerate()
                    .map(|(i, c)| {
                        if i + 1 == column && c != '\r' && c != '\n' {
                            ' '
                        } else {
                            c
                        }
                    })
                    .collect()
            })
            .collect();
        assert_ne!(blank, text, "{name}: round {round} had results");
        let unplayed = dir.path().join(name);
        std::fs::write(&unplayed, blank).unwrap();
        let pairs = |games: Vec<Expected>| -> Vec<(u32, u32)> {
            games.into_iter().map(|g| (g.white, g.black)).collect()
        };
        assert_eq!(
            pairs(printed(&file, &unplayed, round)),
            pairs(printed(&file, &path, round)),
            "{name} round {round}"
        );
    }
}
