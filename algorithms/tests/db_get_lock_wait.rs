//! `GET_LOCK(name, timeout)` with a timeout above 0 (issue 17): the request waits in the server
//! and is granted about a round trip after the holder's `RELEASE_LOCK` (or when the holder's
//! session ends), with no polling; when the timeout runs out it returns 0 and the library sleeps
//! `poll_ms` and asks again. `get_lock_timeout_s = 0` keeps the poll of `GET_LOCK(name, 0)`.

use crate::db_common;

use db_common::*;
use locksim_simulator::history::HistoryEvent;

fn scenario(timeout_s: f64, hold_ms: u64) -> String {
    format!(
        r#"
name = "get-lock-wait"
duration_ms = 30000
[[variants]]
name = "v"
model = "db"
mode = "get_lock"
get_lock_timeout_s = {timeout_s}
[network]
latency_ms = 0.25
[workload]
clients = 2
hold_ms = {hold_ms}
think_ms = 0
"#
    )
}

fn refusals(out: &locksim_simulator::run::SeedOutcome) -> usize {
    history_times(out, |e| matches!(e, HistoryEvent::RefusedAttempt { .. })).len()
}

#[test]
fn a_waiting_get_lock_is_granted_a_round_trip_after_the_release_without_polling() {
    for seed in 0..3 {
        let out = run(&scenario(10.0, 100), "v", seed);
        let g = grants(&out);
        assert!(g.len() > 200, "seed {seed}");
        // RELEASE_LOCK leaves at the end of the 100 ms hold, reaches the server 0.25 ms later
        // and runs for service_ms (2 ms); the waiting GET_LOCK is answered then.
        let hand = g[1].at_ms - g[0].at_ms;
        assert!((100.0..104.0).contains(&hand), "seed {seed}: hand-off after {hand} ms");
        assert_eq!(refusals(&out), 0, "seed {seed}: nobody polls");
        assert_eq!(out.metrics.overlap_events, 0);

        // GET_LOCK(name, 0) polled every 200 ms: refusals, and hand-offs wait for the next poll.
        let out = run(&scenario(0.0, 100), "v", seed);
        assert!(refusals(&out) > 50, "seed {seed}: {}", refusals(&out));
        assert!(grants(&out).len() < g.len(), "seed {seed}: polling hands off later");
    }
}

#[test]
fn a_get_lock_whose_timeout_runs_out_returns_0_and_the_library_asks_again() {
    // The holder keeps the lock 20 s; the waiter's GET_LOCK(k0, 5) returns 0 every ~5.2 s
    // (5 s in the server, then poll_ms).
    let out = run(&scenario(5.0, 20_000), "v", 0);
    // The answer 0 reads "… 0 [conn …]" in the trace.
    let zeros: Vec<f64> = trace_lines(&out, "server-0", "send", " 0 [conn")
        .into_iter()
        .map(|(t, _)| t)
        .filter(|&t| t < 20_000.0)
        .collect();
    assert_eq!(zeros.len(), 3, "{zeros:?}");
    for w in zeros.windows(2) {
        assert!((5_200.0..5_210.0).contains(&(w[1] - w[0])), "{zeros:?}");
    }
    let g = grants(&out);
    // The holder (granted at 2.5 ms) releases at 20 002.5 ms; RELEASE_LOCK runs 2 ms on the server.
    assert!((20_002.5..20_006.0).contains(&g[1].at_ms), "granted as the holder releases: {g:?}");
}
