//! The kind-by-fault table of issue 57: every kind of board, one whole game at a move every
//! 0.67 s and every 2 s, through no fault, a recorder restart, an unplug and a power cycle.

use touchmove::sim::world::table::{Cell, run_cell};

#[test]
fn every_kind_is_read_whole_through_restarts_unplugs_and_power_cycles_at_both_paces() {
    let temp = std::env::temp_dir();
    let open = crate::open_cases();
    let mut wrong = Vec::new();
    for cell in Cell::all() {
        let result = run_cell(cell, &temp, false).expect("a folder for the run");
        assert!(
            result.played >= 40,
            "{}: a whole game is played",
            cell.name()
        );
        // A board that senses only occupancy may lose moves it cannot tell, as long as it says
        // so; a board that names its pieces must give the whole game.
        let whole = result.recorded == result.played || !cell.kind.identifies_pieces();
        let passed = result.report.passed() && whole;
        let listed = open.contains(&result.report.command);
        if passed == listed {
            wrong.push(format!(
                "{}: {} of {} plies recorded; {:?}{}",
                result.report.command,
                result.recorded,
                result.played,
                result.report.verdict.problems,
                if listed {
                    " (passes: take it off fixtures/simulation/open.txt)"
                } else {
                    ""
                }
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
