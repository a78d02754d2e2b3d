//! Known outcome 15 (Kleppmann's clock jump): runs scenarios/known/15-redlock-clock-jump.toml and
//! checks the mechanism seed by seed: server-2 holds the first holder's key until its wall clock steps
//! 15 s forward at 1 s, then finds it expired at its next command (Redis `keyIsExpired` compares
//! with the wall clock), and the other client wins a majority after the step while the first still holds.

use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::{load_file, Scenario};
use locksim_simulator::time::Nanos;

const MS: Nanos = 1_000_000;
const JUMP_AT: Nanos = 1_000 * MS;

fn scenario() -> Scenario {
    let models = locksim_algorithms::registry();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../scenarios/known/15-redlock-clock-jump.toml");
    load_file(std::path::Path::new(path), &models).unwrap_or_else(|e| panic!("{e}"))
}

fn run(sc: &Scenario, label: &str, seed: u64) -> SeedOutcome {
    let run = sc.runs.iter().find(|r| r.label == label).expect("variant");
    run.model.run_seed(&sc.setup, &run.params, seed, &RunOptions { trace: true })
}

/// (first holder's grant, its release, the second client's grant) in true time. With redsync
/// both clients' SETs reach server-2 at about the same time, so either may be first.
fn schedule(out: &SeedOutcome) -> (Nanos, Nanos, Nanos) {
    let first = out.history.events.iter().find(|e| matches!(e.event, HistoryEvent::Granted { .. })).unwrap().node;
    let [c0, c1] = if first == out.history.clients[0] {
        [out.history.clients[0], out.history.clients[1]]
    } else {
        [out.history.clients[1], out.history.clients[0]]
    };
    let at = |node, f: &dyn Fn(&HistoryEvent) -> bool| {
        out.history.events.iter().find(|e| e.node == node && f(&e.event)).map(|e| e.at_ns)
    };
    let granted = |e: &HistoryEvent| matches!(e, HistoryEvent::Granted { .. });
    let released = |e: &HistoryEvent| matches!(e, HistoryEvent::Released { .. });
    (at(c0, &granted).unwrap(), at(c0, &released).unwrap(), at(c1, &granted).expect("client-1 granted"))
}

#[test]
fn the_step_expires_the_key_on_one_master_and_a_second_client_wins_a_majority() {
    let sc = scenario();
    for label in ["redlock", "redsync"] {
        for seed in 0..5 {
            let out = run(&sc, label, seed);
            let (g0, r0, g1) = schedule(&out);
            assert!(g0 < JUMP_AT && g1 > JUMP_AT && g1 < r0, "{label} seed {seed}: {g0} {g1} {r0}");
            // server-2's first command after the step finds client-0's key gone.
            let t = out.trace.as_ref().unwrap();
            let notes: Vec<_> = t.entries.iter().filter(|e| e.node == "server-2" && e.kind == "note").collect();
            let before = notes.iter().rev().find(|e| e.at_ns < JUMP_AT).unwrap();
            let after = notes.iter().find(|e| e.at_ns > JUMP_AT).unwrap();
            assert!(before.detail.starts_with("lock0 = "), "{label} seed {seed}: {}", before.detail);
            // Gone (an unlock round of client-1 found nothing) or already client-1's (its SET).
            assert_ne!(after.detail, before.detail, "{label} seed {seed}: the first holder's key outlived the step");
            assert_eq!(out.metrics.overlap_events, 1, "{label} seed {seed}");
        }
    }
}

#[test]
fn a_ttl_that_outlasts_the_step_and_the_section_keeps_the_key() {
    let sc = scenario();
    for seed in 0..5 {
        let out = run(&sc, "ttl-above-jump", seed);
        let (_, r0, g1) = schedule(&out);
        assert!(g1 > r0, "seed {seed}: client-1 only after client-0's release");
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
}
