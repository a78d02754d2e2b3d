//! The hazelcast model's mechanism: fences are commit indices handed out in order, a waiting
//! LockOp is granted when the lock is released, reentry keeps the fence, and a holder paused
//! past its session TTL loses the lock to a waiter with a higher fence.

use crate::common;
use common::*;

fn scenario(faults: &str, extra: &str, workload: &str) -> String {
    format!(
        r#"
name = "hazelcast-test"
duration_ms = 420_000
seeds = 1
algorithms = ["hazelcast"]

[network]
latency_ms = 1

[models.hazelcast]
service_ms = 0
{extra}

[workload]
clients = 3
hold_ms = 20
{workload}

{faults}
"#
    )
}

const PAUSE: &str = "[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat_ms = 0\nduration_ms = 330_000\n";

/// No faults, a fifth of the sections re-entering: fences only go up from one holder to the
/// next (a nested grant repeats its holder's fence), and nothing overlaps.
#[test]
fn fences_rise_and_reentry_keeps_the_fence() {
    let out = run(&scenario("", "", "reentry = 0.2"), "hazelcast", 0);
    let g = grants(&out);
    assert!(g.len() > 100, "{}", g.len());
    for w in g.windows(2) {
        assert!(w[1].2 >= w[0].2, "{w:?}");
    }
    assert!(g.windows(2).any(|w| w[1].2 == w[0].2), "a nested grant keeps the fence");
    assert_eq!(out.metrics.overlap_events, 0);
    assert_eq!(out.metrics.token_regressions, 0);
}

/// The holder frozen 330 s: its session (created just before the grant, never heartbeaten
/// after) expires on the leader's first check at least 300 s after its creation; the waiter
/// whose LockOp was queued gets the lock in the same apply, with that commit index as its
/// fence; the resumed holder's write is rejected by the fenced resource and its unlock fails.
#[test]
fn paused_holder_loses_its_session_and_is_fenced() {
    let out = run(&scenario(PAUSE, "", ""), "hazelcast", 0);
    let expired = notes(&out, "expired: their locks are released");
    assert_eq!(expired.len(), 3, "every member applies the expiry: {expired:?}");
    assert!(expired[0].0 >= 300_000.0 && expired[0].0 < 301_100.0, "{expired:?}");
    let g = grants(&out);
    assert!(g[1].0 >= expired[0].0 && g[1].0 < expired[0].0 + 5.0, "{g:?}");
    assert!(g[1].2 > g[0].2);
    assert!(out.metrics.overlap_events > 0);
    assert_eq!(out.metrics.stale_unfenced_events, 1);
    assert_eq!(out.metrics.stale_fenced_events, Some(0));
    assert_eq!(out.metrics.failed_releases, 1, "the unlock after the session expired");
    // With a 10 min TTL the same pause is harmless.
    let out = run(&scenario(PAUSE, "session_ttl_ms = 600_000", ""), "hazelcast", 0);
    assert!(notes(&out, "expired: their locks are released").is_empty());
    assert_eq!(out.metrics.overlap_events, 0);
}
