//! A mixed event on two PCs: one board of every kind that runs on a serial line (DGT,
//! Millennium, Certabo, Sentio, Chessnut, and a DGT Pegasus on a pseudo-terminal with the
//! developer key of its event file), each playing a whole fixture game, recorded by two
//! `touchmove record --cluster` processes and rebuilt by one `touchmove serve` node. The
//! recorders and the serve node must hold exactly the moves each board played, and the serve
//! node's `game-K.pgn` must be byte-identical to the recording PC's: a node that read every
//! board as a DGT board held the DGT board's game only. Each kind plays at the fastest pace
//! its recorder reads exactly ([`pace`]), the slow kinds a short game: about 40 s in all.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::cluster_support::{
    self, NatsServer, assert_played, event_file_of_kinds, logs, record_args, serve_node, stop,
    touchmove, wait_identical,
};
use touchmove::bench::{ScriptGame, fixture_games, plain_timeline, spawn_boards};
use touchmove::board::kind::BoardKind;
use touchmove::record::pgn::read_games_bytes;
use touchmove::sim::snapshot_board::{SnapshotBoard, SnapshotBoardConfig};
use touchmove::sim::virtual_board::timeline::Pace;
use touchmove::sim::virtual_pegasus::{VirtualPegasus, VirtualPegasusConfig};

/// Board K+1's kind, from the fastest pace to the slowest; the first half is recorded by
/// pc-a, the rest by pc-b.
const KINDS: [BoardKind; 6] = [
    BoardKind::Dgt,
    BoardKind::Chessnut,
    BoardKind::Millennium,
    BoardKind::Pegasus,
    BoardKind::Sentio,
    BoardKind::Certabo,
];
const RECORDERS: [&str; 2] = ["pc-a", "pc-b"];

/// Each kind's pace, a normal move taking `think_ms` + 3 × `step_ms` (lift, place, clock):
/// 0.65 s on DGT, Millennium and Chessnut boards; 1.05 s on the Certabo (its readers vote over
/// several frames) and the occupancy-only boards (Sentio, Pegasus).
fn pace(kind: BoardKind) -> Pace {
    let (think_ms, step_ms) = match kind {
        BoardKind::Dgt | BoardKind::Millennium | BoardKind::Chessnut => (200, 150),
        BoardKind::Sentio | BoardKind::Pegasus | BoardKind::Certabo => (300, 250),
    };
    Pace { think_ms, step_ms }
}

/// Whole real games, one per board of `KINDS`: for the boards read at 0.65 s a move the three
/// longest of the recorder's fixture, and for those read at 1.05 s a move (the run's length
/// is the slowest board's) three short ones of TWIC 1599 (35, 35 and 33 plies; the Certabo's
/// has eleven captures and castling with check).
fn games() -> Vec<ScriptGame> {
    let mut games = fixture_games();
    games.sort_by_key(|g| std::cmp::Reverse(g.moves_uci.len()));
    games.truncate(3);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pgn/twic1599_1000k.pgn");
    let bytes = std::fs::read(&path).expect("the TWIC fixture reads");
    let twic = read_games_bytes(&bytes).expect("the TWIC fixture parses");
    for (white, plies) in [("Rozum", 35), ("Perdomo", 35), ("Martinez Alcantara", 33)] {
        let record = twic
            .iter()
            .find(|r| {
                r.tags
                    .iter()
                    .any(|(k, v)| k == "White" && v.starts_with(white))
            })
            .unwrap_or_else(|| panic!("the TWIC fixture holds a game of {white}"));
        let game = record.to_game().expect("the game replays");
        assert_eq!(game.moves().len(), plies, "{white}'s game, whole");
        games.push(ScriptGame {
            moves_uci: game.moves().iter().map(|m| m.uci.clone()).collect(),
            result: record.result.clone(),
        });
    }
    assert_eq!(games.len(), KINDS.len(), "one game per board");
    games
}

/// The virtual boards of the event; dropping them stops them.
#[derive(Default)]
struct Boards {
    dgt: Vec<touchmove::sim::virtual_board::VirtualBoard>,
    snapshot: Vec<SnapshotBoard>,
    pegasus: Vec<VirtualPegasus>,
}

impl Boards {
    /// Starts board K+1 of kind `KINDS[K]` playing `games[K]`; returns the boards and each
    /// one's port and kind.
    fn spawn(dir: &Path, games: &[ScriptGame]) -> (Boards, Vec<(PathBuf, BoardKind)>) {
        let mut boards = Boards::default();
        let mut ports = Vec::new();
        for (i, (game, kind)) in games.iter().zip(KINDS).enumerate() {
            let script = plain_timeline(game, pace(kind));
            let path = match kind {
                BoardKind::Dgt => {
                    let board = spawn_boards(dir, vec![script], 1.0, 90 * 60 * 1000, 30_000)
                        .unwrap()
                        .remove(0);
                    let path = board.path().to_path_buf();
                    boards.dgt.push(board);
                    path
                }
                BoardKind::Pegasus => {
                    let path = dir.join(format!("pegasus-{}", i + 1));
                    let config = VirtualPegasusConfig::new(&path, script);
                    boards.pegasus.push(VirtualPegasus::spawn(config).unwrap());
                    path
                }
                _ => {
                    let path = dir.join(format!("{kind}-{}", i + 1));
                    let mut config = SnapshotBoardConfig::new(kind, &path, script);
                    config.seed = i as u64 + 1;
                    boards.snapshot.push(SnapshotBoard::spawn(config).unwrap());
                    path
                }
            };
            ports.push((path, kind));
        }
        (boards, ports)
    }

    /// Waits until every board has played its script.
    async fn finished(&self, limit: Duration) {
        let until = tokio::time::Instant::now() + limit;
        let played = async {
            for b in &self.dgt {
                b.finished().await;
            }
            for b in &self.snapshot {
                b.finished().await;
            }
            for b in &self.pegasus {
                b.finished().await;
            }
        };
        tokio::time::timeout_at(until, played)
            .await
            .expect("every board plays its game");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_serve_node_reads_each_board_with_its_own_kind() {
    let _reaper = cluster_support::Reaper;
    let dir = tempfile::tempdir().unwrap();
    let nats = NatsServer::start(dir.path());
    let url = nats.url();
    let games = games();
    let played: Vec<Vec<String>> = games.iter().map(|g| g.moves_uci.clone()).collect();
    let (boards, ports) = Boards::spawn(dir.path(), &games);
    let serve_out = dir.path().join("serve");
    let serve = serve_node(
        &url,
        "kinds",
        "node",
        None,
        &serve_out,
        &dir.path().join("serve.log"),
    );
    let half = KINDS.len() / 2;
    let mut recorders = Vec::new();
    let mut outs = Vec::new();
    for (r, name) in RECORDERS.iter().enumerate() {
        let first = r * half + 1;
        let config = event_file_of_kinds(
            dir.path(),
            &format!("{name}.toml"),
            first,
            &ports[r * half..(r + 1) * half],
        );
        let out = dir.path().join(name);
        let config_text = config.to_string_lossy().into_owned();
        let out_text = out.to_string_lossy().into_owned();
        recorders.push(touchmove(
            &record_args(&config_text, &out_text, &url, "kinds", name),
            &[],
            &dir.path().join(format!("{name}.log")),
        ));
        outs.push((out, (first..first + half).collect::<Vec<usize>>()));
    }
    boards.finished(Duration::from_secs(180)).await;
    let logs = || logs(dir.path(), &["pc-a.log", "pc-b.log", "serve.log"]);
    for (r, name) in RECORDERS.iter().enumerate() {
        assert_played(
            &[(name, outs[r].0.as_path())],
            r * half + 1,
            &played[r * half..(r + 1) * half],
            Duration::from_secs(10),
            logs,
        );
    }
    for recorder in recorders {
        stop(recorder);
    }
    assert_played(
        &[("the serve node", serve_out.as_path())],
        1,
        &played,
        Duration::from_secs(20),
        logs,
    );
    let pairs: Vec<(&Path, Vec<usize>)> =
        outs.iter().map(|(o, b)| (o.as_path(), b.clone())).collect();
    let differing = wait_identical(&serve_out, &pairs, Duration::from_secs(5));
    assert!(
        differing.is_empty(),
        "boards {differing:?} differ between the serve node and their recorder\n{}",
        logs()
    );
    stop(serve);
    let log = std::fs::read_to_string(dir.path().join("serve.log")).unwrap_or_default();
    assert!(
        !log.contains("skipped:") && log.contains(" 0 undecodable"),
        "the serve node read every message:\n{log}"
    );
    drop(boards);
}
