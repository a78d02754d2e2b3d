//! The consul model's mechanism: a plain handoff, a holder cut off from the servers (its
//! session invalidated through serfHealth while it runs on), the lock-delay that follows, and a
//! pause measured against failure detection plus lock-delay.

use crate::common;
use common::*;

fn scenario(faults: &str, hold_ms: u64, extra: &str) -> String {
    format!(
        r#"
name = "consul-test"
duration_ms = 150_000
seeds = 1
algorithms = ["consul"]

[network]
latency_ms = 1

[models.consul]
service_ms = 0
{extra}

[workload]
clients = 3
hold_ms = {hold_ms}

{faults}
"#
    )
}

const PARTITION: &str =
    "[[faults]]\nkind = \"partition\"\ngroups = [[\"holder\"], [\"server-*\"]]\nat_ms = 0\nduration_ms = 90_000\n";
const PAUSE: &str = "[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat_ms = 0\nduration_ms = 30_000\n";

/// With 1 ms links and no service time: session create (redirected from a follower or not),
/// GET, acquire; the next client waits on a blocking GET and is granted right after the
/// holder's release, which sets no lock-delay (only an invalidation does), with LockIndex + 1.
#[test]
fn release_hands_over_at_once_with_the_next_lock_index() {
    let out = run(&scenario("", 1_000, ""), "consul", 0);
    let g = grants(&out);
    assert!(g.len() >= 10, "{g:?}");
    for (k, w) in g.windows(2).enumerate().take(8) {
        assert_eq!(w[1].2, Some(k as u64 + 2), "LockIndex counts acquisitions: {g:?}");
        // 1 s hold, write (2 ms), release (2 ms) and the waiter's wake-up and acquire (4 ms),
        // unless the next grant went to a client that came late to the queue.
        assert!(w[1].0 - w[0].0 >= 1_000.0, "{g:?}");
    }
    assert_eq!(out.metrics.overlap_events, 0);
    assert!(notes(&out, "lock-delay").is_empty(), "an explicit release sets no lock-delay");
}

/// The holder cut off from the servers: serfHealth critical at the 6 s probe round (probe at
/// 1 s unanswered, suspect at 1.5 s, 4 s suspicion), the key released with a 15 s lock-delay,
/// the waiters refused at 6, 11 and 16 s and granted at their retry just after 21 s with
/// LockIndex 2, while the cut-off holder writes at 40 s: overlap.
#[test]
fn partitioned_holder_loses_its_session_while_it_runs_on() {
    let out = run(&scenario(PARTITION, 40_000, ""), "consul", 0);
    let critical = notes(&out, "serfHealth critical");
    assert_eq!(critical.len(), 1, "{critical:?}");
    assert_eq!(critical[0].0, 6_000.0);
    let released = notes(&out, "released by invalidation: lock-delay 15000 ms");
    assert_eq!(released.len(), 3, "every server starts the delay when it applies the invalidation");
    let refusals = notes(&out, "rejecting lock of lock-0 due to lock-delay");
    assert!(refusals.iter().all(|r| r.0 < 21_002.0 + 1.0), "{refusals:?}");
    let g = grants(&out);
    assert_eq!(g[1].2, Some(2));
    assert!(g[1].0 > 21_002.0 && g[1].0 < 21_020.0, "{g:?}");
    assert_eq!(out.metrics.overlap_events, 1);
    assert_eq!(out.metrics.stale_unfenced_events, 1);
}

/// The same partition with the session bound to its TTL only (Patroni's `checks: []`): the
/// leader invalidates it 2 × 15 s after the last renewal it got (at the grant, ~0 s), so the
/// waiters get the key after 30 + 15 s, past the holder's 40 s write: no overlap.
#[test]
fn ttl_only_session_waits_twice_the_ttl() {
    let out = run(&scenario(PARTITION, 40_000, "session_checks = \"none\""), "consul", 0);
    // The node's check still goes critical at 6 s, but the session is not bound to it.
    assert_eq!(notes(&out, "serfHealth critical").len(), 1);
    let released = notes(&out, "released by invalidation");
    assert!(released[0].0 >= 30_000.0, "{released:?}");
    let expired = notes(&out, "TTL expired");
    assert_eq!(expired.len(), 1, "{expired:?}");
    assert!(expired[0].0 >= 30_000.0 && expired[0].0 < 30_020.0, "{expired:?}");
    let g = grants(&out);
    assert!(g[1].0 > 45_000.0, "{g:?}");
    assert_eq!(out.metrics.overlap_events, 0);
}

/// A 30 s pause: taken over just after 21 s with the default 15 s lock-delay (overlap, the new
/// holder's token reaches the resource first), not before 36 s with a 30 s one (no overlap).
#[test]
fn pause_against_lock_delay() {
    let out = run(&scenario(PAUSE, 20, ""), "consul", 0);
    let g = grants(&out);
    assert!(g[1].0 > 21_002.0 && g[1].0 < 21_020.0, "{g:?}");
    assert!(out.metrics.overlap_events > 0);
    assert_eq!(out.metrics.stale_unfenced_events, 1);
    assert_eq!(out.metrics.stale_fenced_events, Some(0));
    let out = run(&scenario(PAUSE, 20, "lock_delay_ms = 30_000"), "consul", 0);
    let g = grants(&out);
    assert!(g[1].0 > 36_002.0, "{g:?}");
    assert_eq!(out.metrics.overlap_events, 0);
}
