//! A board that answers the host's requests late (a Bluetooth link, a busy adapter) is read
//! again after the link is lost: each handshake waits longer than the one that timed out.

use touchmove::board::kind::BoardKind;
use touchmove::sim::world::scenario::{Fault, Hands, Scenario, Shape};
use touchmove::sim::world::verdict::GameOutcome;
use touchmove::sim::world::{RunDir, simulate};

#[test]
fn a_board_that_answers_late_is_read_again_after_a_recorder_restart() {
    for kind in [BoardKind::Dgt, BoardKind::Pegasus] {
        let shape = Shape {
            boards: 1,
            kinds: vec![kind],
            hands: vec![Hands::Careful],
            faults: 0,
            plies: (40, 60),
            ..Shape::default()
        };
        let mut scenario = Scenario::draw(1, &shape);
        let board = &scenario.boards[0];
        let number = board.number;
        let last = board.play().physical.last().map_or(0, |o| o.t_ms);
        // Answers 2.5 s late from the start (the handshake waits 2 s for each reply), and
        // the recorder is killed halfway through the game, so the board must be read again.
        scenario.faults = vec![
            Fault::LateAnswers {
                board: number,
                at_ms: 1_000,
                delay_ms: 2_500,
            },
            Fault::RecorderKill {
                at_ms: board.starts_ms + last / 2,
                down_ms: 3_000,
            },
        ];
        let dir = RunDir::new(&touchmove::cli::simulate::default_dir(), 1, false)
            .expect("a folder for the run");
        let report = simulate(&scenario, dir.path());
        assert!(report.passed(), "{kind}: {:?}", report.verdict.problems);
        assert_eq!(
            report.verdict.games.get(&number),
            Some(&GameOutcome::Exact),
            "{kind}: the game is read whole after the restart: {:?}",
            report.verdict
        );
    }
}
