//! The real-time host runs a model's client library exactly as the engine does: started, its
//! think timer fired, its request sent to the server the model addresses, the server's reply
//! turned into a grant and the critical section's read of the resource. Driven here by hand with
//! chosen clock readings, no servers involved.

use locksim_algorithms::redlock::protocol::{RedlockMsg, Reply};
use locksim_algorithms::redlock::Redlock;
use locksim_live::client::node_names;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::model::Model;
use locksim_simulator::realtime::{Output, Readings, RealtimeNode};
use locksim_simulator::rng::stream;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::wire::{ResourceMsg, Wire};

const SCENARIO: &str = r#"
name = "host"
duration_ms = 1000
algorithms = ["redlock"]
[models.redlock]
masters = 1
[workload]
clients = 1
think_ms = 0
hold_ms = 5
"#;

fn at(ms: f64) -> Readings {
    let ns = (ms * 1e6) as u64;
    Readings { mono_ns: ns, wall_ns: ns as i64 }
}

#[test]
fn a_hosted_client_acquires_through_its_model_library_and_reads_the_resource() {
    let models = locksim_algorithms::registry();
    let scenario = parse_str("host.toml", SCENARIO, &models).expect("parses");
    let run = &scenario.runs[0];
    let w = &scenario.setup.workload;
    let names = node_names(run.model.services(&run.params), w.clients);
    assert_eq!(names.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["server-0", "client-0", "resource"]);
    let lib = Redlock.build(&run.params, w).clients.remove(0);
    let mut node = RealtimeNode::client(
        lib,
        w.clone(),
        stream(0, "client-0", "workload"),
        stream(0, "client-0", "model"),
        &names,
        1,
    );
    let mut out = node.start(at(0.0));
    // think_ms = 0: the acquire is one timer away, due now.
    assert_eq!(node.next_deadline(), Some(0));
    out.extend(node.fire_due(at(0.0)));
    assert!(out.iter().any(|o| matches!(o, Output::Record(HistoryEvent::AcquireStart { key: 0, .. }))), "{out:?}");
    let id = out
        .iter()
        .find_map(|o| match o {
            Output::Send { to: 0, msg: Wire::Model(RedlockMsg::Request(r)), .. } => Some(r.id),
            _ => None,
        })
        .expect("a SET NX PX request to server-0");

    let out = node.message(at(1.0), 0, Wire::Model(RedlockMsg::Reply(Reply { id, ok: true })));
    assert!(
        out.iter().any(|o| matches!(o, Output::Record(HistoryEvent::Granted { key: 0, grant: 1, .. }))),
        "one master of one granted: {out:?}"
    );
    assert!(
        out.iter()
            .any(|o| matches!(o, Output::Send { to: 2, msg: Wire::Resource(ResourceMsg::Read { key: 0, .. }), .. })),
        "the critical section reads the resource: {out:?}"
    );
    // The hold timer (5 ms) is armed on the node's clock, after the grant.
    let due = node.next_deadline().expect("the hold timer");
    assert!(due > 1_000_000, "{due}");
    // Nothing fires before it is due.
    assert!(node.fire_due(at(1.5)).is_empty());
}
