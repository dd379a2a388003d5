use shakmaty::uci::UciMove;
use shakmaty::{Move, Position};

use super::super::Machine;
use crate::act::scenario::Scenario;
use crate::act::{Alert, Event, GapAccount, Severity};

/// 1.e4 e5 2.Nf3, then a gap in which 2...a6 3.Bb5 Nc6 were played: read in one order,
/// with an 8.5.3 alert naming the other.
fn after_transposed_gap() -> (Machine, Alert) {
    let text = "\
0 snapshot standard
1000 lift e2
1200 put e4 P
3000 lift e7
3200 put e5 p
5000 lift g1
5200 put f3 N
20000 snapshot r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R relinked
";
    let scenario = Scenario::parse(text).unwrap();
    let mut machine = Machine::new(scenario.config.clone());
    let mut events = Vec::new();
    for step in &scenario.steps {
        if step.relinked {
            machine.link_restored(step.observation.t_ms);
        }
        machine.observe(&step.observation, &mut events);
    }
    let orders: Vec<Alert> = gap_alerts(&events);
    assert_eq!(orders.len(), 1, "{events:?}");
    (machine, orders[0].clone())
}

fn gap_alerts(events: &[Event]) -> Vec<Alert> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Alert(a) if a.article == "8.5.3" => Some(a.clone()),
            _ => None,
        })
        .collect()
}

fn legal(machine: &Machine, from: usize, uci: &[String]) -> Vec<Move> {
    let mut pos = machine.game().positions()[from].clone();
    uci.iter()
        .map(|u| {
            let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            m
        })
        .collect()
}

/// The gap read again in the other order, and only in that one: the order alert no
/// longer stands, and an Info 8.5.3 alert withdraws it.
#[test]
fn a_gap_read_again_in_one_order_withdraws_its_order_alert() {
    let (mut machine, alert) = after_transposed_gap();
    let Some(GapAccount::Orders { others, .. }) = &alert.gap else {
        panic!("an order alert: {alert:?}");
    };
    let other = legal(&machine, 3, &others[0]);
    let mut events = Vec::new();
    machine.adopt(3, &other, 21_000, &mut events);
    machine.advance(21_000, &mut events);
    let alerts = gap_alerts(&events);
    assert_eq!(alerts.len(), 1, "{events:?}");
    assert_eq!(alerts[0].severity, Severity::Info);
    assert_eq!(alerts[0].withdraws, [alert.reference()]);
    assert!(alerts[0].message.contains("read again as"), "{alerts:?}");
    // Withdrawn once: nothing more to withdraw later.
    let mut later = Vec::new();
    machine.advance(22_000, &mut later);
    assert!(gap_alerts(&later).is_empty(), "{later:?}");
}

/// Moves recorded after the gap's span leave its alert standing.
#[test]
fn moves_after_the_gap_leave_its_order_alert_standing() {
    let (mut machine, _) = after_transposed_gap();
    let n = machine.game().plies();
    let next = legal(&machine, n, &["b5a4".to_string()]);
    let mut events = Vec::new();
    machine.adopt(n, &next, 21_000, &mut events);
    machine.advance(21_000, &mut events);
    assert!(gap_alerts(&events).is_empty(), "{events:?}");
}
