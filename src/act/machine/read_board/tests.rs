//! Readings that change moves already recorded: exact, or told where they may be wrong.

use shakmaty::uci::UciMove;

use super::super::Machine;
use crate::act::scenario::Scenario;
use crate::act::{Alert, Event, MachineConfig, Severity};
use crate::board::kind::BoardKind;

/// The events of `text`'s observations read by a machine on a board of `kind`, with what
/// it recorded, in UCI.
fn read(kind: BoardKind, text: &str) -> (Vec<String>, Vec<Event>) {
    let scenario = Scenario::parse(text).unwrap();
    let config = MachineConfig {
        start_fen: scenario.config.start_fen.clone(),
        ..MachineConfig::default()
    }
    .on_board(kind);
    let mut machine = Machine::new(config);
    let mut events = Vec::new();
    for step in &scenario.steps {
        if step.relinked {
            machine.link_restored(step.observation.t_ms);
        }
        machine.observe(&step.observation, &mut events);
    }
    let recorded = machine
        .game()
        .moves()
        .iter()
        .map(|p| UciMove::from_standard(p.mv).to_string())
        .collect();
    (recorded, events)
}

/// True when `recorded` is the game `played`, or an 8.5.3 warning names the ply where it
/// first differs, or one before it: the arbiter is told where to look.
fn exact_or_told(played: &[&str], recorded: &[String], events: &[Event]) -> bool {
    let Some(first) = (0..played.len().max(recorded.len()))
        .find(|&i| played.get(i).copied() != recorded.get(i).map(String::as_str))
    else {
        return true;
    };
    let ply = u32::try_from(first + 1).unwrap();
    events.iter().any(|e| {
        matches!(e, Event::Alert(Alert { article, severity: Severity::Warning, ply: p, .. })
            if article == "8.5.3" && (*p == ply || *p + 1 == ply))
    })
}

/// Seed 12008 of `touchmove simulate` (board 3): on a Certabo board, 12...Qa6 stood four
/// seconds; as White took on a5 the queen was knocked to b5, and set back on a6. The board
/// then fits 12...Qb5 13.bxa5 in fewer moves than 12...Qa6 13.bxa5 and the queen's move:
/// read so, the released queen's move is withdrawn, which the arbiter must be told of.
#[test]
fn a_released_move_read_again_on_a_board_that_names_pieces_is_told() {
    let played = ["b6a6", "b4a5"];
    let (recorded, events) = read(
        BoardKind::Certabo,
        "\
config fen=r1b2rk1/pp1p1ppp/1qp5/n3p3/PP2P3/2PPBN2/B4KPP/RN1Q4_b_-_-_2_12
0 snapshot setup
8000 lift b6
8300 put a6 q
12500 lift a5
12800 lift a6
12800 lift b4
12800 put b5 q
13100 put a5 P
13700 lift b5
14000 put a6 q
",
    );
    assert!(
        exact_or_told(&played, &recorded, &events),
        "{recorded:?} {events:?}"
    );
}

/// Seed 10973 of `touchmove simulate` (board 1): on a Pegasus, 16...Bh5 17.Qe3 each stood
/// many seconds, then 17...Bxf3 18.Qxf3 Qb6. An occupancy board shows the same squares
/// after 16...Bxf3 17.Qxf3 Qb6, three moves against five: read so, two released moves are
/// withdrawn, which the arbiter must be told of.
#[test]
fn released_moves_read_again_on_an_occupancy_board_are_told() {
    let played = ["g4h5", "e2e3", "h5f3", "e3f3", "d8b6"];
    let (recorded, events) = read(
        BoardKind::Pegasus,
        "\
config identifies=false fen=r2q1rk1/pp2nppp/8/3pP3/6b1/1B3N1P/PP2QPP1/R4RK1_b_-_-_0_16
0 snapshot setup occupancy
1000 lift g4
1400 put h5
14000 lift e2
14400 put e3
24000 lift f3
24400 lift h5
24500 lift e3
24510 put f3
28000 lift d8
28600 put b6
",
    );
    assert!(
        exact_or_told(&played, &recorded, &events),
        "{recorded:?} {events:?}"
    );
}

/// Seed 12316 of `touchmove simulate` (board 1): a Millennium board read again after a
/// recorder restart showed 7...Qb6 8.Qd2 in its dump; then 8...Qxb2, the pawn taken off
/// first and the queen slid down the b-file. With the queen on b4, three moves from before
/// 8.Qd2 fit the board (8.b4 Qxb4 9.Qd2), but the dump showed the queen on d2 seven seconds
/// before b2 was lifted: 8.Qd2 came first, and stands.
#[test]
fn a_move_a_dump_showed_stays_before_the_moves_seen_after_it() {
    let played = ["d8b6", "d1d2", "b6b2"];
    let (recorded, events) = read(
        BoardKind::Millennium,
        "\
config fen=rnbqkb1r/1p3ppp/p2ppn2/6B1/3NPP2/2N5/PPP3PP/R2QKB1R_b_KQkq_-_0_7
0 snapshot setup
20000 snapshot rnb1kb1r/1p3ppp/pq1ppn2/6B1/3NPP2/2N5/PPPQ2PP/R3KB1R relinked
27000 lift b2
27500 lift b6
27500 put b5 q
27640 lift b5
27640 put b4 q
27680 lift b4
27720 put b3 q
27760 lift b3
27800 put b2 q
",
    );
    assert_eq!(recorded, played, "{events:?}");
    assert!(
        !events.iter().any(|e| matches!(e, Event::Revision { .. })),
        "{events:?}"
    );
}
