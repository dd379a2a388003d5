//! The kind-by-fault table of issue 57: every kind of board, one whole game at a move every
//! 0.67 s and every 2 s, through no fault, a recorder restart, an unplug and a power cycle.

use touchmove::sim::world::table::{Cell, run_cell};

#[test]
fn every_kind_is_read_whole_through_restarts_unplugs_and_power_cycles_at_both_paces() {
    let temp = touchmove::cli::simulate::default_dir();
    let open = crate::open_cases();
    let mut wrong = Vec::new();
    for cell in Cell::all() {
        let result = run_cell(cell, &temp, false).expect("a folder for the run");
        assert!(
            result.played >= 40,
            "{}: a whole game is played",
            cell.name()
        );
        let passed = result.holds();
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
