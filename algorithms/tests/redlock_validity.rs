//! Redlock's timing arithmetic, checked on the engine: the validity the client computes from the
//! round it really took, and the acquisition latency each request mode produces from per-master
//! round trips (sum for sequential, max for parallel, quorum-th smallest for parallel_quorum).

use crate::redlock_common;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::run::SeedOutcome;
use locksim_simulator::scenario::parse_str;
use redlock_common::*;

/// (acquire latency, validity) of every grant, in ms, from the history and the client's notes.
fn grants(out: &SeedOutcome) -> Vec<(f64, f64)> {
    let mut starts = std::collections::BTreeMap::new();
    let mut latencies = Vec::new();
    for e in &out.history.events {
        match e.event {
            HistoryEvent::AcquireStart { .. } => {
                starts.insert(e.node, e.at_ns);
            }
            HistoryEvent::Granted { nested: false, .. } => {
                latencies.push((e.at_ns - starts[&e.node]) as f64 / 1e6);
            }
            _ => {}
        }
    }
    let validities: Vec<f64> = out
        .trace
        .as_ref()
        .expect("trace")
        .entries
        .iter()
        .filter(|t| t.kind == "note" && t.detail.starts_with("redlock granted"))
        .map(|t| t.detail.split("validity_ms=").nth(1).expect("validity note").parse::<f64>().expect("number"))
        .collect();
    assert_eq!(latencies.len(), validities.len(), "one validity note per grant");
    latencies.into_iter().zip(validities).collect()
}

/// One client, five masters at 0.5 ms each way.
const ONE_CLIENT: &str = r#"
name = "validity"
duration_ms = 200
seeds = 1
algorithms = ["redlock"]
[network]
latency_ms = 0.5
[workload]
clients = 1
hold_ms = 50
think_ms = 0
acquisitions_per_client = 1
"#;

/// redlock-rb's defaults, with masters that take no time per command.
fn instant_masters() -> RedlockConfig {
    RedlockConfig { service_ms: Dist::Const(0.0), ..redlock_rb() }
}

#[test]
fn five_sequential_masters_at_one_ms_leave_9893_ms_of_validity() {
    for seed in 0..3 {
        let out = run_config(ONE_CLIENT, &instant_masters(), seed);
        let g = grants(&out);
        assert_eq!(g.len(), 1, "one acquisition");
        let (latency_ms, validity_ms) = g[0];
        // Five round trips of 0.5 + 0.5 ms, one after another.
        assert!((latency_ms - 5.0).abs() < 1e-9, "latency {latency_ms}");
        // 10000 − 5 − (0.01 × 10000 + 2).
        assert!((validity_ms - 9893.0).abs() < 1e-9, "validity {validity_ms}");
    }
}

/// Round trips client-0 ↔ server-i: 1, 3, 0.5, 4, 2 ms (sum 10.5, max 4, 3rd smallest 2).
const SKEWED_LINKS: &str = r#"
name = "modes"
duration_ms = 200
seeds = 1
algorithms = ["redlock"]
[network]
latency_ms = 0.5
[[network.links]]
from = "client-0"
to = "server-1"
latency_ms = 1.5
[[network.links]]
from = "client-0"
to = "server-2"
latency_ms = 0.25
[[network.links]]
from = "client-0"
to = "server-3"
latency_ms = 2.0
[[network.links]]
from = "client-0"
to = "server-4"
latency_ms = 1.0
[workload]
clients = 1
hold_ms = 50
think_ms = 0
acquisitions_per_client = 1
"#;

#[test]
fn acquisition_latency_is_the_sum_the_max_or_the_quorum_th_round_trip() {
    for (requests, expected_ms) in
        [(RequestMode::Sequential, 10.5), (RequestMode::Parallel, 4.0), (RequestMode::ParallelQuorum, 2.0)]
    {
        let label = format!("{requests:?}");
        let out = run_config(SKEWED_LINKS, &RedlockConfig { requests, ..instant_masters() }, 1);
        let g = grants(&out);
        assert_eq!(g.len(), 1, "{label}: one acquisition");
        let (latency_ms, validity_ms) = g[0];
        assert!((latency_ms - expected_ms).abs() < 1e-9, "{label}: latency {latency_ms}, want {expected_ms}");
        let want_validity = 10_000.0 - expected_ms - 102.0;
        assert!((validity_ms - want_validity).abs() < 1e-9, "{label}: validity {validity_ms}, want {want_validity}");
    }
}

#[test]
fn service_time_adds_to_every_round_trip() {
    // The default service_ms (0.05) on each of the five sequential commands: 5.25 ms.
    let out = run_config(ONE_CLIENT, &redlock_rb(), 0);
    let (latency_ms, validity_ms) = grants(&out)[0];
    assert!((latency_ms - 5.25).abs() < 1e-9, "latency {latency_ms}");
    assert!((validity_ms - 9892.75).abs() < 1e-9, "validity {validity_ms}");
}

#[test]
fn a_fractional_ttl_is_refused_at_its_key_as_no_library_sends_one() {
    // PX is an integer to Redis; node-redlock throws on a fractional duration.
    let toml = format!("{ONE_CLIENT}[models.redlock]\nttl_ms = 10000.5\n");
    let Err(e) = parse_str("validity.toml", &toml, &locksim_algorithms::registry()) else {
        panic!("a fractional ttl_ms was accepted")
    };
    let e = e.to_string();
    assert!(e.contains("ttl_ms") && e.contains("whole number of milliseconds"), "{e}");
    let whole = format!("{ONE_CLIENT}[models.redlock]\nttl_ms = 10001\n");
    assert!(parse_str("validity.toml", &whole, &locksim_algorithms::registry()).is_ok());
}
