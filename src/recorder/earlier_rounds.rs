//! Rounds that follow one another in one output folder.
//!
//! Each round has its folder (`round-N/`) and its games in the journal under their own keys
//! (`N.K`), so starting round N+1 — by `touchmove record --round N+1` or by the arbiter's
//! "next round" — leaves the earlier rounds as they are. A recorder that starts shows the
//! earlier rounds' games from their PGN files, so that they stay browsable, and tells the pages
//! which round is current, so that the pages showing the round that ended move on by
//! themselves.

use std::path::Path;

use crate::record::pgn::read_games_bytes;
use crate::server::feed::Feed;

/// The rounds of `out` with a `round-N` folder, ascending.
pub fn rounds_in(out: &Path) -> Vec<u32> {
    let mut rounds: Vec<u32> = std::fs::read_dir(out)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .filter(|e| e.path().is_dir())
                .filter_map(|e| e.file_name().to_str()?.strip_prefix("round-")?.parse().ok())
                .collect()
        })
        .unwrap_or_default();
    rounds.sort_unstable();
    rounds
}

/// Puts the games of every round of `out` other than `current` into `feed`, from their
/// `game-K.pgn` files. Returns what could not be shown (file and why); nothing stops for it.
pub fn show_earlier_rounds(feed: &Feed, out: &Path, current: u32) -> Vec<String> {
    rounds_in(out)
        .into_iter()
        .filter(|&r| r != current)
        .flat_map(|round| show_round(feed, out, round))
        .collect()
}

/// Puts the games of round `round` of `out` into `feed`, from their `game-K.pgn` files.
/// Returns what could not be shown (file and why).
pub fn show_round(feed: &Feed, out: &Path, round: u32) -> Vec<String> {
    let mut problems = Vec::new();
    let dir = out.join(format!("round-{round}"));
    let Ok(files) = super::layout::game_files(&dir) else {
        return problems;
    };
    for (board, path) in files {
        let shown = std::fs::read(&path)
            .map_err(|e| e.to_string())
            .and_then(|bytes| read_games_bytes(&bytes).map_err(|e| e.to_string()))
            .and_then(|games| {
                let Some(game) = games.last() else {
                    return Ok(());
                };
                feed.show_recorded_game(round, board, game)
                    .map_err(|e| e.to_string())
            });
        if let Err(why) = shown {
            problems.push(format!("{}: {why}", path.display()));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn earlier_rounds_are_shown_and_the_current_one_is_left_to_the_recorder() {
        let dir = tempfile::tempdir().unwrap();
        for round in [1, 2, 3] {
            std::fs::create_dir_all(dir.path().join(format!("round-{round}"))).unwrap();
        }
        std::fs::write(
            dir.path().join("round-1/game-2.pgn"),
            "[White \"A\"]\n[Black \"B\"]\n[Result \"0-1\"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n",
        )
        .unwrap();
        std::fs::write(dir.path().join("round-1/game-3.pgn"), "1. e4 Ke7 Kxe7 *\n").unwrap();
        std::fs::write(
            dir.path().join("round-3/game-1.pgn"),
            "[White \"C\"]\n[Black \"D\"]\n\n1. d4 *\n",
        )
        .unwrap();
        assert_eq!(rounds_in(dir.path()), vec![1, 2, 3]);
        let feed = Feed::new();
        let problems = show_earlier_rounds(&feed, dir.path(), 3);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("game-3.pgn"), "{problems:?}");
        let game = feed.game(1, 2).expect("round 1 board 2 shown");
        assert_eq!(game.summary.white, "A");
        assert_eq!(game.summary.ply, 4);
        assert_eq!(game.summary.result.as_deref(), Some("0-1"));
        assert_eq!(game.moves[3].san, "Qh4#");
        assert!(
            feed.game(3, 1).is_none(),
            "the current round is the recorder's"
        );
        assert_eq!(feed.current_round(), Some(1));
        feed.set_current_round(3);
        assert_eq!(feed.current_round(), Some(3));
    }
}
