//! The dynamodb model's mechanism: a takeover after a lease of an unchanged RVN on the waiter's
//! clock, and the heartbeat that failed on the client but was applied (dynamolock#280).

use crate::common;
use common::*;

fn known(file: &str) -> String {
    std::fs::read_to_string(format!("{}/../scenarios/known/{file}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The holder frozen 30 s after its grant: the waiters' first look is right after the grant, and
/// the first to look again more than a lease (20 s) later takes the lock over, 20-21.5 s in
/// (1 s refresh); the resumed holder writes stale unless it checks isExpired().
#[test]
fn paused_holder_is_taken_over_after_a_lease_of_the_same_rvn() {
    let text = known("28-dynamodb-paused-holder.toml");
    let out = run(&text, "dynamodb", 0);
    let g = grants(&out);
    assert!(g[1].0 > g[0].0 + 20_000.0 && g[1].0 < g[0].0 + 21_500.0, "{g:?}");
    assert!(g.iter().all(|x| x.2.is_none()), "no token");
    assert_eq!(out.metrics.stale_unfenced_events, 1);
    let out = run(&text, "dynamodb-check-expired", 0);
    assert_eq!(out.metrics.stale_unfenced_events, 0);
}

/// #280: the heartbeat sent 5 s after the grant times out on the client at 7 s but is applied at
/// 8 s; the next one (10 s) fails its condition and the lock is dropped; the waiters take it
/// over a lease after they first saw the applied RVN (28-29.5 s), during the holder's 40 s
/// section.
#[test]
fn heartbeat_applied_but_failed_drops_the_lock() {
    let out = run(&known("29-dynamodb-heartbeat-applied-but-failed.toml"), "dynamodb", 0);
    let kept = notes(&out, "heartbeat failed (no answer in time)");
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert!(kept[0].0 > 7_000.0 && kept[0].0 < 7_100.0, "{kept:?}");
    let dropped = notes(&out, "heartbeat's condition failed");
    assert_eq!(dropped.len(), 1);
    assert!(dropped[0].0 > 10_000.0 && dropped[0].0 < 10_100.0, "{dropped:?}");
    let g = grants(&out);
    assert!(g[1].0 > 28_000.0 && g[1].0 < 29_600.0, "{g:?}");
    assert_eq!(out.metrics.overlap_events, 1);
    assert_eq!(out.metrics.stale_unfenced_events, 1);
}

/// The heartbeat thread ends 7 s after the start: the holder's 5 s heartbeat is its last. The
/// waiters' first acquireLock calls saw the RVN change at 5 s and give up at their budget (a
/// lease + 1 s, ~21 s in); the next calls watch the unchanged RVN from ~21 s and one takes over a
/// lease later (41-43.5 s, with the 1 s refresh) while the holder's 60 s section runs on; it
/// writes stale unless it checks isExpired(). Without the thread's end (the default) the
/// heartbeats keep the lock: no takeover, no overlap.
#[test]
fn heartbeat_thread_that_ended_lets_a_waiter_take_over() {
    let text = known("29-dynamodb-heartbeat-thread-died.toml");
    let out = run(&text, "dynamodb", 0);
    let ended = notes(&out, "the heartbeat thread has ended");
    assert!(!ended.is_empty() && ended[0].0 >= 7_000.0 && ended[0].0 < 10_100.0, "{ended:?}");
    let g = grants(&out);
    assert!(g[1].0 > 41_000.0 && g[1].0 < 43_500.0, "{g:?}");
    assert!(out.metrics.overlap_events > 0);
    assert!(out.metrics.stale_unfenced_events > 0);
    let out = run(&text, "dynamodb-check-expired", 0);
    assert!(out.metrics.overlap_events > 0, "it believed it held");
    assert_eq!(out.metrics.stale_unfenced_events, 0);
    let out = run(&text.replace("heartbeat_thread_stops_ms = 7_000", "heartbeat_thread_stops_ms = 0"), "dynamodb", 0);
    assert!(notes(&out, "the heartbeat thread has ended").is_empty());
    assert_eq!(out.metrics.overlap_events, 0);
    let g = grants(&out);
    assert!(g.windows(2).all(|w| w[1].0 > w[0].0 + 60_000.0), "handed over by release only: {g:?}");
}
