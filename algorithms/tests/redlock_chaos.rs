//! Redlock under everything at once (loss, duplicates, drift, master crashes, pauses and clock
//! jumps, client crashes) in all three request modes: every acquire call still ends in a grant or
//! a failure within its bounded retry loop (no stalled client), and each seed replays exactly.

use crate::redlock_common;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::time::Nanos;
use redlock_common::*;

const CHAOS: &str = r#"
name = "chaos"
duration_ms = 20000
algorithms = ["redlock"]
[network]
loss = 0.02
duplicate = 0.02
[clocks]
drift_ppm = { uniform = [-200, 200] }
[workload]
clients = 6
locks = 2
[[faults]]
kind = "crash"
target = "random-server"
at_ms = { uniform = [0, 3000] }
duration_ms = { uniform = [100, 3000] }
every_ms = 3000
[[faults]]
kind = "pause"
target = "follower"
at_ms = { uniform = [0, 5000] }
duration_ms = { uniform = [10, 2000] }
every_ms = 4000
[[faults]]
kind = "clock_jump"
target = "random-server"
by_ms = { uniform = [-3000, 3000] }
at_ms = { uniform = [0, 10000] }
[[faults]]
kind = "crash"
target = "random-client"
at_ms = { uniform = [0, 15000] }
duration_ms = 500
"#;

/// The longest an acquire call can take with redlock-rb's counts and a 50 ms node timeout: at
/// most 4 attempts (redlock-rb makes 3) of a SET round and an unlock round (5 × 50 ms each at
/// worst, sequentially) and 3 waits of at most 200 ms, plus slack for drift.
const CALL_MAX_NS: Nanos = (4 * 2 * 5 * 50 + 3 * 200 + 100) * 1_000_000;

#[test]
fn every_acquire_call_ends_and_seeds_replay() {
    // redlock-rb's defaults with a 50 ms node timeout, in each request mode (parallel_quorum's
    // masters without persistence).
    let timed = RedlockConfig { node_timeout_ms: 50.0, ..redlock_rb() };
    let rows = [
        ("sequential", RedlockConfig { requests: RequestMode::Sequential, ..timed.clone() }),
        ("parallel", RedlockConfig { requests: RequestMode::Parallel, ..timed.clone() }),
        (
            "parallel_quorum",
            RedlockConfig { requests: RequestMode::ParallelQuorum, persistence: Persistence::None, ..timed },
        ),
    ];
    for (label, cfg) in &rows {
        let mut grants = 0;
        for seed in 0..4 {
            let out = run_config(CHAOS, cfg, seed);
            let again = run_config(CHAOS, cfg, seed);
            assert_eq!(out.trace_hash, again.trace_hash, "{label} seed {seed} replays");
            grants += out.metrics.acquisitions;
            // Open calls per client: each must close within CALL_MAX_NS unless the client crashed.
            let mut open: std::collections::BTreeMap<usize, Nanos> = Default::default();
            for e in &out.history.events {
                match e.event {
                    HistoryEvent::AcquireStart { .. } => {
                        open.insert(e.node, e.at_ns);
                    }
                    HistoryEvent::Granted { nested: false, .. }
                    | HistoryEvent::AcquireFailed { .. }
                    | HistoryEvent::ClientCrashed => {
                        if let Some(start) = open.remove(&e.node) {
                            assert!(
                                e.at_ns - start <= CALL_MAX_NS,
                                "{label} seed {seed}: a call took {} ms",
                                (e.at_ns - start) / 1_000_000
                            );
                        }
                    }
                    _ => {}
                }
            }
            for (node, start) in open {
                assert!(
                    out.history.duration_ns - start <= CALL_MAX_NS,
                    "{label} seed {seed}: client {node}'s call from {} ms never ended",
                    start / 1_000_000
                );
            }
        }
        assert!(grants > 100, "{label}: the lock stays usable ({grants} grants)");
    }
}
