//! Choice points (`simulator/src/engine/choice.rs`): a world run step by step is the same world.
//! Stepping through the events in the queue's order, with the network's one constant latency fed
//! to every message, gives exactly the history of the normal run; a path of other choices (the
//! last of each tie, delays alternating between two values) recorded as keys and latencies and
//! followed by a fresh world (`[replay]`) gives exactly that path's history again; and the
//! choices matter (that path's history is not the normal run's).

use locksim_simulator::engine::World;
use locksim_simulator::model::{Model, Params};
use locksim_simulator::run::build_world;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::Setup;
use locksim_simulator::time::Nanos;

const MS: Nanos = 1_000_000;

/// Constant latency and constant times, so the instants tie; a pause and a crash, so scheduled
/// faults are stepped too.
const SCENARIO: &str = r#"
name = "choices"
duration_ms = 3_000
seeds = 1
algorithms = ["redis", "redlock", "zookeeper", "etcd"]

[network]
latency_ms = 1

[workload]
clients = 2
hold_ms = 20
think_ms = 5
acquisitions_per_client = 3

[[faults]]
kind = "pause"
target = "client-0"
at_ms = 40
duration_ms = 300

[[faults]]
kind = "crash"
target = "leader"
at_ms = 800
duration_ms = 400
mode = "process"
"#;

fn history<P: locksim_simulator::process::Protocol>(world: World<P>) -> String {
    format!("{:?}", world.finish().history)
}

fn check<M: Model>(model: &M, setup: &Setup, params: &Params) {
    let name = model.name();
    let (mut normal, _) = build_world(model, setup, params, 3, false);
    normal.run();
    let normal = history(normal);

    // In queue order, with the network's constant latency: the normal run.
    let (mut stepped, _) = build_world(model, setup, params, 3, false);
    let mut steps = 0;
    loop {
        let enabled = stepped.enabled();
        let Some(first) = enabled.first() else { break };
        stepped.step(first.seq, &[], MS);
        steps += 1;
    }
    assert!(steps > 100, "{name}: {steps} steps");
    assert_eq!(history(stepped), normal, "{name}: stepped in queue order");

    // Other choices, recorded as keys and latencies.
    let (mut chosen, _) = build_world(model, setup, params, 3, false);
    let (mut keys, mut delays) = (Vec::new(), Vec::new());
    let mut ties = 0;
    loop {
        let enabled = chosen.enabled();
        let Some(last) = enabled.last() else { break };
        ties += usize::from(enabled.len() > 1);
        keys.push(chosen.event_key(last.seq).expect("queued"));
        let want: Vec<Nanos> = (0..4).map(|i| if (delays.len() + i) % 2 == 0 { MS } else { 3 * MS }).collect();
        let taken = chosen.step(last.seq, &want, MS);
        delays.extend((0..taken).map(|i| want.get(i).copied().unwrap_or(MS)));
    }
    assert!(ties > 0, "{name}: the scenario has tied events");
    let chosen = history(chosen);
    assert_ne!(chosen, normal, "{name}: the choices change the run");

    // Followed by a fresh world, as a scenario's [replay] makes it.
    let (mut replayed, _) = build_world(model, setup, params, 3, false);
    replayed.follow_replay(keys, delays);
    replayed.run();
    assert_eq!(replayed.replay_diverged_at(), None, "{name}: every key named a due event");
    assert_eq!(history(replayed), chosen, "{name}: the replay");
}

#[test]
fn stepping_is_the_normal_run_and_a_recorded_path_replays_exactly() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("choices.toml", SCENARIO, &models).unwrap_or_else(|e| panic!("{e}"));
    for run in &sc.runs {
        let p = &run.params;
        match run.model.name() {
            "redis" => check(&locksim_algorithms::redis::REDIS, &sc.setup, p),
            "redlock" => check(&locksim_algorithms::redlock::REDLOCK, &sc.setup, p),
            "zookeeper" => check(&locksim_algorithms::zookeeper::ZOOKEEPER, &sc.setup, p),
            "etcd" => check(&locksim_algorithms::etcd::ETCD, &sc.setup, p),
            other => panic!("unexpected model {other}"),
        }
    }
}

#[test]
fn a_replay_key_that_is_not_due_ends_the_following_there() {
    let models = locksim_algorithms::registry();
    let sc = parse_str("choices.toml", SCENARIO, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = &sc.runs[0];
    let (mut world, _) = build_world(&locksim_algorithms::redis::REDIS, &sc.setup, &run.params, 3, true);
    world.follow_replay(vec!["fault 0 start".into(), "deliver nowhere -> nobody".into()], vec![]);
    world.run();
    // Step 0 is a node's start at 0 ms, not the pause at 40 ms.
    assert_eq!(world.replay_diverged_at(), Some(0));
    let trace = world.finish().trace.expect("traced");
    assert!(trace.entries.iter().any(|e| e.kind == "replay" && e.detail.contains("fault 0 start")));
}
