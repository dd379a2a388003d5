//! No penalty from what the recorder did not see: after a gap in the link (an outage, a
//! recorder restart, a board read again), a press on a board the game as read does not
//! explain is an 8.5.3 doubt for the arbiter, never a completed illegal move (7.5.1) or a
//! press without a move (7.5.3) with a proposed penalty, on every kind of board; once play
//! has confirmed the position after the gap, an illegal move is one again.

use std::path::Path;

use shakmaty::{Board, Color, Move, Piece, Position};
use touchmove::act::{Event, Machine, MachineConfig, Severity};
use touchmove::bench::recognition::simulate_on_board;
use touchmove::board::kind::BoardKind;
use touchmove::board::{Millis, Observation, ObservationKind, Snapshot};
use touchmove::rules::Game;
use touchmove::sim::hands::pgn_games::read_games;
use touchmove::sim::hands::score::{self, Feed};
use touchmove::sim::hands::{ExpectedAlert, Noise, apply_physical};

/// A game played with one lift and one put per move, and the observations of it a board of
/// `kind` gives (pieces unnamed on a board that senses only occupancy).
struct Play {
    kind: BoardKind,
    game: Game,
    t: Millis,
    observations: Vec<Observation>,
}

impl Play {
    fn new(kind: BoardKind) -> Play {
        let mut play = Play {
            kind,
            game: Game::standard(),
            t: 0,
            observations: Vec::new(),
        };
        play.snapshot(false);
        play
    }

    fn machine(&self) -> Machine {
        Machine::new(MachineConfig::default().on_board(self.kind))
    }

    fn see(&mut self, kind: ObservationKind) {
        self.observations.push(Observation { t_ms: self.t, kind });
    }

    /// A whole picture of the board as the game stands.
    fn snapshot(&mut self, relinked: bool) {
        let snapshot = Snapshot {
            board: self.game.position().board().clone(),
            identifies_pieces: true,
        };
        let snapshot = if self.kind.identifies_pieces() {
            snapshot
        } else {
            snapshot.occupancy_only()
        };
        if relinked {
            self.t += 10_000;
        }
        self.see(ObservationKind::Snapshot(snapshot));
    }

    fn piece(&self, piece: Piece) -> Option<Piece> {
        self.kind.identifies_pieces().then_some(piece)
    }

    /// Plays `san` unseen (during a gap) or seen, lift then put, and presses for it when
    /// `pressed`.
    fn play(&mut self, san: &str, seen: bool, pressed: bool) {
        let mover = self.game.position().turn();
        let m = self.game.play_san(san).expect("legal move").mv;
        self.t += 1_000;
        if !seen {
            return;
        }
        let Move::Normal {
            role,
            from,
            to,
            capture,
            ..
        } = m
        else {
            panic!("plain moves only: {san}");
        };
        self.see(ObservationKind::Emptied(from));
        self.t += 200;
        if capture.is_some() {
            self.see(ObservationKind::Emptied(to));
            self.t += 100;
        }
        let piece = self.piece(role.of(mover));
        self.see(ObservationKind::Placed(to, piece));
        if pressed {
            self.press(mover);
        }
    }

    fn press(&mut self, by: Color) {
        self.t += 300;
        self.see(ObservationKind::ClockPressed { by });
    }

    /// Plays `moves` seen, each pressed for.
    fn seen(&mut self, moves: &[&str]) {
        for san in moves {
            self.play(san, true, true);
        }
    }

    /// Plays `moves` while the link is down; the board is read again after them.
    fn unseen_then_relinked(&mut self, moves: &[&str]) -> Millis {
        for san in moves {
            self.play(san, false, false);
        }
        self.snapshot(true);
        self.t
    }

    /// The events of the machine on the observations, the link restored at `relinked`.
    fn events(&self, relinked: Millis) -> Vec<Event> {
        let mut machine = self.machine();
        let mut events = Vec::new();
        for obs in &self.observations {
            machine.catch_up(obs.t_ms, &mut events);
            if obs.t_ms == relinked && matches!(obs.kind, ObservationKind::Snapshot(_)) {
                machine.link_restored(obs.t_ms);
            }
            machine.observe(obs, &mut events);
        }
        machine.advance(self.t + 10_000, &mut events);
        events
    }
}

/// The articles of the warning and critical alerts among `events`.
fn articles(events: &[Event]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) if a.severity != Severity::Info => Some(a.article.clone()),
            _ => None,
        })
        .collect()
}

/// The penalty proposals (7.5.5) not withdrawn.
fn standing_penalties(events: &[Event]) -> i32 {
    events
        .iter()
        .map(|e| match e {
            Event::Alert(a) if a.article == "7.5.5" && a.severity == Severity::Info => -1,
            Event::Alert(a) if a.article == "7.5.5" => 1,
            _ => 0,
        })
        .sum()
}

/// 1.e4 e5 2.Nf3 are seen; 2...Nc6 3.Bc4 Nf6 4.Bb5 are made while the link is down. The
/// board's position is read in the fewest moves (2...Nc6 3.Bb5 Nf6: the bishop's stop on c4
/// is not in any picture), which leave White to move. White then presses the clock for 4.Bb5:
/// a press the reading takes for one without a move by the side to move, a 7.5.3 penalty
/// on the old machine. It is the gap read wrongly: the gap is read again with Black to move,
/// or the arbiter told (8.5.3), and no penalty is proposed, on every kind of board.
#[test]
fn a_press_for_a_move_made_while_the_link_was_down_is_no_press_without_a_move() {
    for kind in BoardKind::ALL {
        let mut play = Play::new(kind);
        play.seen(&["e4", "e5", "Nf3"]);
        let relinked = play.unseen_then_relinked(&["Nc6", "Bc4", "Nf6", "Bb5"]);
        play.press(Color::White);
        play.t += 1_000;
        play.see(ObservationKind::ClockTimes(
            touchmove::board::ClockReading {
                white_ms: 290_000,
                black_ms: 295_000,
                running: None,
                flag: false,
            },
        ));
        let events = play.events(relinked);
        let raised = articles(&events);
        assert!(
            !raised.iter().any(|a| a.starts_with("7.5")),
            "{kind}: a penalty for what the recorder did not see: {raised:?}"
        );
        assert_eq!(standing_penalties(&events), 0, "{kind}: {raised:?}");
        assert!(raised.iter().any(|a| a == "8.5.3"), "{kind}: {raised:?}");
    }
}

/// 1.e4 e5 2.Nf3 Nc6 3.d4 are seen; 3...a6 4.Bc4 Nf6 5.Bb5 are made while the link is down
/// and read in the fewest moves (3...a6 4.Bb5 Nf6, or another order), which leave White to
/// move; Black is. Black takes 5...exd4 and White takes back 6.Nxd4, each pressing: no
/// reading from the game as read explains the board (the recapture needs the capture
/// before it), and the old machine judged White's press a completed illegal move (7.5.1)
/// with a penalty. It is the gap read wrongly: the arbiter is told (8.5.3), no penalty.
#[test]
fn a_move_the_gap_read_wrongly_leaves_unexplained_is_no_illegal_move() {
    for kind in BoardKind::ALL {
        let mut play = Play::new(kind);
        play.seen(&["e4", "e5", "Nf3", "Nc6", "d4"]);
        let relinked = play.unseen_then_relinked(&["a6", "Bc4", "Nf6", "Bb5"]);
        play.seen(&["exd4", "Nxd4"]);
        let events = play.events(relinked);
        let raised = articles(&events);
        assert!(
            !raised.iter().any(|a| a.starts_with("7.5")),
            "{kind}: a penalty for what the recorder did not see: {raised:?}"
        );
        assert_eq!(standing_penalties(&events), 0, "{kind}: {raised:?}");
        assert!(raised.iter().any(|a| a == "8.5.3"), "{kind}: {raised:?}");
    }
}

/// 1.e4 e5 are seen; 2.Nf3 Nc6 3.Bc4 are made while the link is down, more moves than the
/// machine reads across a gap (two, here), so that no sequence it tries explains the board.
/// White presses: on a board that names pieces the game is taken up from the board's
/// position; on one that senses only occupancy it cannot be, and the old machine judged the
/// press a completed illegal move (7.5.1) with a penalty. The arbiter is told (8.5.3) instead.
#[test]
fn a_press_on_a_board_no_reading_of_the_gap_explains_is_no_illegal_move() {
    for kind in BoardKind::ALL {
        let mut play = Play::new(kind);
        play.seen(&["e4", "e5"]);
        let relinked = play.unseen_then_relinked(&["Nf3", "Nc6", "Bc4"]);
        play.press(Color::White);
        play.t += 1_000;
        play.see(ObservationKind::ClockPressed { by: Color::White });
        let mut machine = Machine::new(MachineConfig {
            max_gap_plies: 2,
            max_reconstruction_plies: 2,
            ..MachineConfig::default().on_board(kind)
        });
        let mut events = Vec::new();
        for obs in &play.observations {
            if obs.t_ms == relinked {
                machine.link_restored(obs.t_ms);
            }
            machine.observe(obs, &mut events);
        }
        machine.advance(play.t + 10_000, &mut events);
        let raised = articles(&events);
        assert!(
            !raised.iter().any(|a| a.starts_with("7.5")),
            "{kind}: a penalty for what the recorder did not see: {raised:?}"
        );
        assert_eq!(standing_penalties(&events), 0, "{kind}: {raised:?}");
        assert!(raised.iter().any(|a| a == "8.5.3"), "{kind}: {raised:?}");
    }
}

/// The link to the board is lost before the round, while the arbiter sets the pieces up;
/// the round starts while it is down, and 1.d4 d5 are made unseen. Once read again, the board
/// shows no start position, only the game's first moves, and 2.c4 is made and pressed for.
/// The old recorder went on waiting for a start position and recorded nothing of the game
/// without a word (simulation seed 5148, a Certabo board). The game begins at the start with
/// the moves read across the gap, on every kind of board.
#[test]
fn a_game_begun_while_the_link_was_down_before_it_is_recorded() {
    use touchmove::clock::TimeControl;
    use touchmove::recorder::{BoardPipeline, EventConfig, GameTags};
    for kind in BoardKind::ALL {
        let mut play = Play {
            kind,
            game: Game::standard(),
            t: 0,
            observations: Vec::new(),
        };
        let mut half_set = Board::new();
        for square in shakmaty::Bitboard::from_rank(shakmaty::Rank::Seventh) {
            half_set.discard_piece_at(square);
        }
        let snapshot = Snapshot {
            board: half_set,
            identifies_pieces: true,
        };
        play.see(ObservationKind::Snapshot(if kind.identifies_pieces() {
            snapshot
        } else {
            snapshot.occupancy_only()
        }));
        let relinked = play.unseen_then_relinked(&["d4", "d5"]);
        play.seen(&["c4"]);
        let mut pipeline = BoardPipeline::new(
            GameTags::new(&EventConfig::default(), 1),
            TimeControl::parse("300+2").expect("a time control"),
        )
        .with_kind(kind);
        let mut events = Vec::new();
        for obs in &play.observations {
            if obs.t_ms == relinked {
                pipeline.link_lost();
            }
            pipeline.on_observation(obs, &mut events);
        }
        pipeline.tick(play.t + 10_000, &mut events);
        let recorded: Vec<String> = pipeline
            .record()
            .moves
            .iter()
            .map(|m| m.uci.clone())
            .collect();
        assert_eq!(recorded, ["d2d4", "d7d5", "c2c4"], "{kind}: {events:?}");
        let raised = articles(&events);
        assert!(
            !raised.iter().any(|a| a.starts_with("7.5")),
            "{kind}: a penalty for what the recorder did not see: {raised:?}"
        );
    }
}

/// After the gap is read (2...Nc6 3.Bc4, in one picture), a move is made and read alone
/// (3...Nf6): play has confirmed who is to move. White then moves his knight f3-f5 and
/// presses. On a board that names pieces that is a completed illegal move again: 7.5.1 with
/// its 7.5.5 proposal. On one that senses only occupancy the pieces the gap moved (to c6 and
/// c4) stand unnamed, so the position before the move is not known, and the arbiter is told
/// (8.5.3) instead, as long as they stand.
#[test]
fn once_a_move_after_the_gap_is_read_alone_an_illegal_move_is_one_again() {
    use shakmaty::Square;
    for kind in BoardKind::ALL {
        let mut play = Play::new(kind);
        play.seen(&["e4", "e5", "Nf3"]);
        let relinked = play.unseen_then_relinked(&["Nc6", "Bc4"]);
        play.seen(&["Nf6"]);
        play.t += 1_000;
        play.see(ObservationKind::Emptied(Square::F3));
        play.t += 200;
        let knight = play.piece(Color::White.knight());
        play.see(ObservationKind::Placed(Square::F5, knight));
        play.press(Color::White);
        let events = play.events(relinked);
        let raised = articles(&events);
        if kind.identifies_pieces() {
            assert!(raised.iter().any(|a| a == "7.5.1"), "{kind}: {raised:?}");
            assert_eq!(standing_penalties(&events), 1, "{kind}: {raised:?}");
        } else {
            assert!(
                !raised.iter().any(|a| a.starts_with("7.5")),
                "{kind}: {raised:?}"
            );
            assert!(raised.iter().any(|a| a == "8.5.3"), "{kind}: {raised:?}");
        }
    }
}

/// One simulated game's events with the link down for `gap_ms` of play from 1.2 s after
/// the press `1/fraction` of the way into the game (none with `fraction` 0): the board's
/// reports meanwhile are lost, and the board is read again (a dump) when the link is back.
fn with_gap(kind: BoardKind, game: usize, fraction: usize, gap_ms: Millis) -> Vec<Event> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pgn/twic1599_1000k.pgn");
    let pgn = std::fs::read(path).expect("PGN fixture");
    let games = read_games(&pgn).expect("PGN fixture parses");
    let g = games.iter().find(|g| g.index == game).expect("the game");
    let sim = simulate_on_board(g, Noise::Realistic, score::game_seed(1, game), kind.into());
    assert!(
        !sim.injected
            .iter()
            .any(|i| matches!(&i.expected, ExpectedAlert::Required(a) if a.starts_with("7.5"))),
        "the hands earn no penalty"
    );
    let presses: Vec<Millis> = sim
        .observations
        .iter()
        .filter(|o| matches!(o.kind, ObservationKind::ClockPressed { .. }))
        .map(|o| o.t_ms)
        .collect();
    let (from, to) = match fraction {
        0 => (Millis::MAX, Millis::MAX),
        f => {
            let from = presses[presses.len() / f] + 1_200;
            (from, from + gap_ms)
        }
    };
    let mut board = Board::empty();
    let mut observations = Vec::new();
    let mut read_again = false;
    for obs in &sim.observations {
        if obs.t_ms >= to && !read_again {
            read_again = true;
            let snapshot = Snapshot {
                board: board.clone(),
                identifies_pieces: true,
            };
            let snapshot = if kind.identifies_pieces() {
                snapshot
            } else {
                snapshot.occupancy_only()
            };
            observations.push(Observation {
                t_ms: to,
                kind: ObservationKind::Snapshot(snapshot),
            });
        }
        apply_physical(&mut board, obs);
        if obs.t_ms < from || obs.t_ms >= to {
            observations.push(obs.clone());
        }
    }
    let mut config = MachineConfig {
        one_minute_penalty: sim.model.blitz,
        ..MachineConfig::default()
    }
    .on_board(kind);
    config.scan_period_ms = kind.scan_period_ms();
    let mut machine = Machine::new(config);
    let mut relinked = false;
    let mut run = score::run(
        &touchmove::sim::hands::SimulatedGame {
            observations,
            ..sim
        },
        |feed, out| match feed {
            Feed::Until(t) => machine.catch_up(t, out),
            Feed::Observation(obs) => {
                if obs.t_ms == to && !relinked {
                    relinked = true;
                    machine.link_restored(to);
                }
                machine.observe(obs, out)
            }
            Feed::End => machine.advance(Millis::MAX, out),
            Feed::Idle => {}
        },
    );
    run.events.drain(..).map(|(_, e)| e).collect()
}

/// Realistic hands on real games (fixture twic file, seed 1), the link down for 20 s of
/// play: the games, and where the gap falls, in which the old machine proposed a penalty the
/// hands did not earn after reading the gap wrongly (a bishop's or queen's stop missed, so
/// that the other side was to move; on boards that sense only occupancy, no reading or a
/// piece taken for another). No proposal stands that the same game without the gap does not
/// have.
#[test]
fn no_penalty_from_a_gap_in_simulated_games_on_every_kind() {
    let cases = [
        (BoardKind::Dgt, 35, 3),
        (BoardKind::Millennium, 30, 2),
        (BoardKind::Millennium, 35, 3),
        (BoardKind::Chessnut, 30, 2),
        (BoardKind::Chessnut, 35, 3),
        (BoardKind::Certabo, 32, 3),
        (BoardKind::Certabo, 59, 3),
    ];
    for (kind, game, fraction) in cases {
        let without = standing_penalties(&with_gap(kind, game, 0, 0));
        let events = with_gap(kind, game, fraction, 20_000);
        assert!(
            standing_penalties(&events) <= without,
            "{kind} game {game}, gap 1/{fraction}: {:?}",
            articles(&events)
        );
    }
}
