//! Polling load and hand-off of the lock row (known outcome 10, first part): waiters learn
//! nothing from the server, so each one spends an INSERT (and, reentrant, an UPDATE) every
//! `poll_ms`: 19 waiters at 200 ms make about 95 refusals a second; a lone waiter finds the lock
//! free half a poll period after its release on average.

use crate::db_common;

use std::collections::BTreeMap;

use db_common::*;
use locksim_simulator::history::HistoryEvent;

const TWENTY: &str = r#"
name = "poll"
duration_ms = 20000
algorithms = ["db"]
[models.db]
poll_ms = 200
[workload]
clients = 20
hold_ms = 50
"#;

#[test]
fn nineteen_pollers_at_200_ms_make_about_95_refusals_a_second() {
    for seed in 0..3 {
        let out = run(TWENTY, "db", seed);
        let m = &out.metrics;
        let per_s = m.refused_attempts as f64 / 20.0;
        assert!((85.0..=100.0).contains(&per_s), "seed {seed}: {per_s} refusals/s");
        assert_eq!(m.overlap_events, 0, "seed {seed}");
        assert_eq!(m.token_regressions, 0, "seed {seed}");
        assert!(m.acquisitions > 250, "seed {seed}: {} acquisitions", m.acquisitions);

        // Each waiter's refusals are one poll period plus two statements (INSERT, then the
        // reentrant UPDATE, 2 ms of commit each plus round trips) apart.
        let mut last: BTreeMap<usize, f64> = BTreeMap::new();
        let mut gaps = Vec::new();
        for e in &out.history.events {
            let t = e.at_ns as f64 / MS;
            match e.event {
                HistoryEvent::RefusedAttempt { .. } => {
                    if let Some(prev) = last.insert(e.node, t) {
                        gaps.push(t - prev);
                    }
                }
                HistoryEvent::Granted { .. } | HistoryEvent::AcquireStart { .. } => {
                    last.remove(&e.node);
                }
                _ => {}
            }
        }
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        assert!((204.0..=208.0).contains(&mean), "seed {seed}: mean gap between one waiter's refusals {mean} ms");
        assert!(gaps.iter().all(|g| *g >= 204.0), "seed {seed}: never sooner than poll + 2 commits");
    }
}

#[test]
fn with_many_pollers_the_next_poll_after_a_release_comes_soon() {
    // 19 pollers spread over a 205 ms cycle: the first poll after a release is ~205/20 ms away.
    let out = run(TWENTY, "db", 7);
    let p50_ms = out.metrics.handoff_us.value_at_quantile(0.5) as f64 / 1000.0;
    assert!((5.0..=20.0).contains(&p50_ms), "hand-off p50 {p50_ms} ms");
}

#[test]
fn a_lone_waiter_gets_the_lock_half_a_poll_period_after_release_on_average() {
    let toml = r#"
name = "handoff"
duration_ms = 60000
algorithms = ["db"]
[models.db]
poll_ms = 200
[workload]
clients = 2
hold_ms = { uniform = [250, 550] }
think_ms = 200
"#;
    // The releaser thinks 200 ms, less than the other's shortest hold: every release has exactly
    // one waiter, polling at a phase the random holds make uniform over the cycle.
    let mut sum = 0.0;
    let mut n = 0.0;
    let mut max: f64 = 0.0;
    for seed in 0..3 {
        let out = run(toml, "db", seed);
        let h = &out.metrics.handoff_us;
        sum += h.mean() * h.len() as f64;
        n += h.len() as f64;
        max = max.max(h.max() as f64 / 1000.0);
        assert_eq!(out.metrics.overlap_events, 0);
    }
    let mean_ms = sum / n / 1000.0;
    assert!(n > 100.0, "{n} hand-offs");
    // Uniform over one poll cycle (200 ms + the refused attempt's 2 statements) plus one INSERT.
    assert!((90.0..=120.0).contains(&mean_ms), "mean hand-off {mean_ms} ms");
    assert!(max <= 220.0, "a hand-off never exceeds one cycle + an INSERT: {max} ms");
}
