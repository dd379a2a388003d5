//! Updates lost on the line in the middle of a session, put back from the board's move log:
//! a board dump that differs from the changes seen makes the pipeline ask for the log, and
//! the log's changes since the last verified dump are read again in their true order.

use shakmaty::uci::UciMove;
use shakmaty::{Chess, Position};
use touchmove::act::{Event, Severity};
use touchmove::board::dgt::{code_from_piece, fields_from_board};
use touchmove::board::orientation::Orientation;
use touchmove::clock::TimeControl;
use touchmove::event::EventConfig;
use touchmove::recorder::{BoardPipeline, GameTags};
use touchmove::sim::virtual_board::memory::BoardMemory;
use touchmove::wire::dgt::{EepromRecord, Message};

/// A board and its host: what the board did (its memory), and what the host read.
struct Session {
    pipeline: BoardPipeline,
    memory: BoardMemory,
    position: Chess,
    t_ms: u64,
    events: Vec<Event>,
}

/// The DGT field of `sq` with the board in normal orientation.
fn field(sq: shakmaty::Square) -> u8 {
    (7 - u8::from(sq.rank())) * 8 + u8::from(sq.file())
}

impl Session {
    fn new() -> Session {
        let config = EventConfig {
            event: "Test".into(),
            ..EventConfig::default()
        };
        let control = TimeControl::parse("300+2").unwrap();
        let mut pipeline = BoardPipeline::new(GameTags::new(&config, 1), control).with_board_log();
        let position = Chess::default();
        let fields = fields_from_board(position.board(), Orientation::Normal);
        let mut memory = BoardMemory::blank();
        memory.power_up(&fields);
        let mut events = Vec::new();
        pipeline.on_bytes(10, &Message::BoardDump(fields).encode(), &mut events);
        Session {
            pipeline,
            memory,
            position,
            t_ms: 10,
            events,
        }
    }

    /// The board changes field `f` to `piece`; the host reads the update when `reported`.
    fn change(&mut self, f: u8, piece: u8, reported: bool) {
        self.t_ms += 700;
        self.memory.field_changed(f, piece, self.t_ms);
        if reported {
            let m = Message::FieldUpdate { field: f, piece };
            self.pipeline
                .on_bytes(self.t_ms, &m.encode(), &mut self.events);
        }
    }

    /// `uci` is played by lifting and placing its piece; the updates whose index (0 = the
    /// lift, 1 = the placement) is in `lost` never reach the host.
    fn play(&mut self, uci: &str, lost: &[usize]) {
        let mv = uci
            .parse::<UciMove>()
            .unwrap()
            .to_move(&self.position)
            .unwrap();
        let (from, to) = (mv.from().unwrap(), mv.to());
        let piece = self.position.board().piece_at(from).unwrap();
        self.change(field(from), 0, !lost.contains(&0));
        self.change(field(to), code_from_piece(piece), !lost.contains(&1));
        self.position.play_unchecked(mv);
    }

    /// The host asks for the whole board (as the driver's verifier does).
    fn dump(&mut self) {
        self.t_ms += 300;
        let fields = fields_from_board(self.position.board(), Orientation::Normal);
        self.pipeline.on_bytes(
            self.t_ms,
            &Message::BoardDump(fields).encode(),
            &mut self.events,
        );
    }

    /// The board sends its move log.
    fn send_log(&mut self, bytes: &[u8]) {
        self.t_ms += 8000;
        let m = Message::EepromMoves(EepromRecord::parse_all(bytes));
        self.pipeline
            .on_bytes(self.t_ms, &m.encode(), &mut self.events);
    }

    fn recorded(&self) -> Vec<String> {
        self.pipeline
            .record()
            .to_game()
            .map(|g| g.moves().iter().map(|m| m.uci.clone()).collect())
            .unwrap()
    }
}

const BEFORE: [&str; 5] = ["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"];
/// Three moves whose updates are all lost: the position after them is also reached by
/// 3...Nf6 4.Ba4 a6, so the board alone cannot tell their order.
const LOST: [&str; 3] = ["a7a6", "b5a4", "g8f6"];

/// [`BEFORE`] played and verified by a dump.
fn played_before() -> Session {
    let mut s = Session::new();
    for m in BEFORE {
        s.play(m, &[]);
    }
    s.dump();
    assert!(!s.pipeline.take_log_request(), "nothing lost yet");
    s
}

/// [`BEFORE`], then 3...a6 whose lift never reaches the host, and the dump that shows it.
fn lose_the_lift_of_a6() -> Session {
    let mut s = played_before();
    s.play("a7a6", &[0]);
    s.dump();
    assert!(s.pipeline.take_log_request(), "the dump shows the loss");
    s
}

/// The moves before, a verified dump, then [`LOST`] with no update reaching the host, then
/// the dump that shows the loss.
fn lose_three_moves() -> Session {
    let mut s = played_before();
    for m in LOST {
        s.play(m, &[0, 1]);
    }
    s.dump();
    s
}

#[test]
fn moves_whose_updates_were_lost_are_read_again_from_the_log_in_their_true_order() {
    let mut s = lose_three_moves();
    assert!(
        s.pipeline.take_log_request(),
        "a dump that differs from the changes seen asks for the log"
    );
    assert!(!s.pipeline.take_log_request(), "asked once");
    let before_log = s.events.len();
    assert_eq!(
        s.recorded(),
        BEFORE,
        "the board alone cannot tell the order"
    );
    let log = s.memory.download();
    s.send_log(&log);
    let all: Vec<&str> = BEFORE.iter().chain(&LOST).copied().collect();
    assert_eq!(s.recorded(), all, "{}", s.pipeline.pgn());
    let pgn = s.pipeline.pgn();
    assert!(!pgn.contains("order not observed"), "{pgn}");
    let told: Vec<&Event> = s.events[before_log..].iter().collect();
    assert!(
        told.iter().any(|e| matches!(e, Event::Alert(a)
            if a.article == "8.5.3" && a.severity == Severity::Info
                && a.message.contains("move log"))),
        "the arbiter is told: {told:?}"
    );
    // What the live reading raised for the loss is withdrawn, and nothing stands against a
    // player.
    let raised: Vec<_> = s.events[..before_log]
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) if a.severity != Severity::Info => Some(a.clone()),
            _ => None,
        })
        .collect();
    for alert in &raised {
        assert!(
            told.iter().any(|e| matches!(e, Event::Alert(a)
                if a.withdraws.iter().any(|r| alert.is(r)))),
            "{alert:?} withdrawn: {told:?}"
        );
    }
    // The game goes on as usual.
    s.play("d2d3", &[]);
    s.dump();
    assert_eq!(s.recorded().last().map(String::as_str), Some("d2d3"));
}

#[test]
fn a_lost_lift_the_dump_already_explains_reads_the_same_from_the_log() {
    let mut s = lose_the_lift_of_a6();
    let log = s.memory.download();
    s.send_log(&log);
    s.play("b5c6", &[]);
    s.play("d7c6", &[]);
    s.dump();
    let mut all: Vec<&str> = BEFORE.to_vec();
    all.extend(["a7a6", "b5c6", "d7c6"]);
    assert_eq!(s.recorded(), all, "{}", s.pipeline.pgn());
}

#[test]
fn a_log_of_another_board_changes_nothing_and_says_why() {
    let mut s = lose_three_moves();
    assert!(s.pipeline.take_log_request());
    let live = s.recorded();
    let live_pgn = s.pipeline.pgn();
    let mut other = BoardMemory::blank();
    other.power_up(&fields_from_board(
        Chess::default().board(),
        Orientation::Normal,
    ));
    other.field_changed(field(shakmaty::Square::D2), 0, 100);
    other.field_changed(
        field(shakmaty::Square::D4),
        code_from_piece(shakmaty::Color::White.pawn()),
        900,
    );
    let log = other.download();
    s.send_log(&log);
    assert_eq!(s.recorded(), live);
    assert_eq!(s.pipeline.pgn(), live_pgn);
    let reports = s.pipeline.take_log_reports();
    assert!(
        reports.iter().any(|r| r.refused.is_some()),
        "the refusal is journalled: {reports:?}"
    );
}

#[test]
fn garbage_for_a_log_changes_nothing() {
    let mut s = lose_three_moves();
    assert!(s.pipeline.take_log_request());
    let live = s.recorded();
    let mut log = s.memory.download();
    log.truncate(log.len() / 3);
    for (i, b) in log.iter_mut().enumerate().skip(7) {
        *b = b.wrapping_mul(31).wrapping_add(i as u8);
    }
    s.send_log(&log);
    assert_eq!(s.recorded(), live);
    let reports = s.pipeline.take_log_reports();
    assert!(reports.iter().any(|r| r.refused.is_some()), "{reports:?}");
}

#[test]
fn a_board_that_never_sends_its_log_is_asked_again_at_the_next_loss() {
    let mut s = lose_the_lift_of_a6();
    // No log comes; play goes on.
    s.t_ms += 31_000;
    s.play("b5c6", &[]);
    s.dump();
    s.play("d7c6", &[]);
    s.dump();
    assert!(!s.pipeline.take_log_request(), "nothing lost since");
    s.play("d2d3", &[1]);
    s.dump();
    assert!(s.pipeline.take_log_request(), "a new loss asks again");
    let mut all: Vec<&str> = BEFORE.to_vec();
    all.extend(["a7a6", "b5c6", "d7c6", "d2d3"]);
    assert_eq!(s.recorded(), all, "{}", s.pipeline.pgn());
}

/// A game of plain moves (no castling, en passant or promotion, which `Session::play` does
/// not move on the board) chosen by `choices`.
fn plain_game(choices: &[u8]) -> Vec<String> {
    let mut pos = Chess::default();
    let mut moves = Vec::new();
    for &c in choices {
        let legal: Vec<_> = pos
            .legal_moves()
            .into_iter()
            .filter(|m| !m.is_castle() && !m.is_en_passant() && !m.is_promotion())
            .collect();
        if legal.is_empty() || pos.is_game_over() {
            break;
        }
        let mv = legal[usize::from(c) % legal.len()];
        moves.push(UciMove::from_standard(mv).to_string());
        pos.play_unchecked(mv);
    }
    moves
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Random games with random updates lost over a few plies, the board dumped after every
    /// ply as the driver does after a press: when the log is used, every move is recorded as
    /// played; when it is not, nothing recorded before the loss changes.
    #[test]
    fn a_reading_from_the_log_is_exact(
        choices in proptest::collection::vec(proptest::prelude::any::<u8>(), 12..40),
        from in 4usize..10,
        lost in proptest::collection::vec((0usize..4, 0usize..2), 1..5),
    ) {
        let game = plain_game(&choices);
        proptest::prop_assume!(game.len() > from + 4);
        let mut s = Session::new();
        for (i, m) in game.iter().enumerate() {
            let lose: Vec<usize> = lost
                .iter()
                .filter(|(ply, _)| from + ply == i)
                .map(|&(_, update)| update)
                .collect();
            s.play(m, &lose);
            s.dump();
            if s.pipeline.take_log_request() {
                let kept = s.recorded()[..from.min(s.recorded().len())].to_vec();
                let before = s.events.len();
                let log = s.memory.download();
                s.send_log(&log);
                let reread = s.events[before..].iter().any(|e| matches!(e,
                    Event::Alert(a) if a.message.contains("move log gave")));
                if reread {
                    proptest::prop_assert_eq!(s.recorded(), game[..=i].to_vec());
                } else {
                    proptest::prop_assert_eq!(&s.recorded()[..kept.len()], &kept[..]);
                }
            }
        }
        proptest::prop_assert_eq!(s.recorded(), game);
    }
}
