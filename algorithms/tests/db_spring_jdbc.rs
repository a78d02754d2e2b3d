//! The `spring_jdbc` recipe of the db model and its `client` presets (issue 32 row 11, issue 34
//! family 2): Spring Integration's `JdbcLockRegistry` takes a row over when its time column is
//! older than the TTL **on the acquiring client's clock**, runs no cleanup job and has no token.
//! A waiter whose clock runs ahead, or a holder paused past the 10 s TTL, therefore ends in two
//! holders at once, where the seed's lock row (the server's `NOW()`, a 30 s cleanup job) does not.

use crate::db_common;

use db_common::*;
use locksim_simulator::history::HistoryEvent;

/// Two clients, one acquisition each, `hold_ms` held; `model` lines under `[models.db]`, `faults`
/// appended.
fn scenario(model: &str, hold_ms: u64, faults: &str) -> String {
    format!(
        r#"
name = "spring"
duration_ms = 60000
algorithms = ["db"]
[models.db]
{model}
[workload]
clients = 2
hold_ms = {hold_ms}
think_ms = 0
acquisitions_per_client = 1
{faults}
"#
    )
}

/// The waiter's wall clock stepped 15 s ahead while the holder is 2 s into an 8 s section.
const WAITER_JUMPS: &str = "[[faults]]\nkind = \"clock_jump\"\ntarget = \"waiter\"\nat_ms = 2000\nby_ms = 15000\n";

/// The holder stopped (a GC pause, SIGSTOP) for 15 s, 1 s into its 5 s section.
const HOLDER_PAUSED: &str = "[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat_ms = 1000\nduration_ms = 15000\n";

#[test]
fn a_waiter_whose_clock_steps_ahead_takes_a_held_row() {
    for seed in 0..5 {
        for client in ["spring-jdbc-6.0", "spring-jdbc-6", "spring-jdbc-7"] {
            let quiet = run(&scenario(&format!("client = \"{client}\""), 8000, ""), "db", seed);
            assert_eq!(quiet.metrics.overlap_events, 0, "{client} seed {seed}: 8 s < the 10 s TTL");
            let out = run(&scenario(&format!("client = \"{client}\""), 8000, WAITER_JUMPS), "db", seed);
            let g = grants(&out);
            assert_eq!(g.len(), 2, "{client} seed {seed}: {g:?}");
            // Its next poll (every 100 ms) after the step finds CREATED_DATE < now - 10 s.
            assert!((2000.0..2200.0).contains(&g[1].at_ms), "{client} seed {seed}: taken at {} ms", g[1].at_ms);
            assert!(!notes(&out, "server-0", "taken over").is_empty(), "{client} seed {seed}");
            assert!(out.metrics.overlap_events >= 1, "{client} seed {seed}: two holders");
            assert!(g.iter().all(|g| g.token.is_none()), "{client} seed {seed}: INT_LOCK has no token");
        }
        // The seed's row: the server's NOW() decides, a client's clock changes nothing.
        let seed_row = run(&scenario("", 8000, WAITER_JUMPS), "db", seed);
        assert_eq!(seed_row.metrics.overlap_events, 0, "locksim-1 seed {seed}");
    }
}

/// The waiter's clock running at twice the true rate (+999 999 ppm) from 0.5 s: its wall clock
/// reads 0.5 + 2 (t − 0.5) s at true time t, so the row written at about 0 looks 10 s old to it
/// at t ≈ 5.25 s, 5.25 s into an 8 s section.
#[test]
fn a_waiter_whose_clock_drifts_fast_takes_a_held_row() {
    let drift = "[[faults]]\nkind = \"clock_drift\"\ntarget = \"waiter\"\nat_ms = 500\nppm = 999999\n";
    for seed in 0..5 {
        let out = run(&scenario("client = \"spring-jdbc-6\"", 8000, drift), "db", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: {g:?}");
        assert!((5_200.0..5_400.0).contains(&g[1].at_ms), "seed {seed}: taken at {} ms", g[1].at_ms);
        assert!(out.metrics.overlap_events >= 1, "seed {seed}");
        let seed_row = run(&scenario("", 8000, drift), "db", seed);
        assert_eq!(seed_row.metrics.overlap_events, 0, "locksim-1 seed {seed}");
    }
}

#[test]
fn a_holder_paused_past_the_ttl_loses_its_row_and_6_4_reports_the_failed_release() {
    for seed in 0..5 {
        let released = |out: &locksim_simulator::run::SeedOutcome| {
            history_times(out, |e| matches!(e, HistoryEvent::Released { .. })).len()
        };
        let failed = |out: &locksim_simulator::run::SeedOutcome| {
            history_times(out, |e| matches!(e, HistoryEvent::ReleaseFailed { .. })).len()
        };
        for client in ["spring-jdbc-6.0", "spring-jdbc-6", "spring-jdbc-7"] {
            let out = run(&scenario(&format!("client = \"{client}\""), 5000, HOLDER_PAUSED), "db", seed);
            let g = grants(&out);
            assert_eq!(g.len(), 2, "{client} seed {seed}: {g:?}");
            // The row was written at the first grant; the waiter's first poll 10 s later takes it.
            let after = g[1].at_ms - g[0].at_ms;
            assert!((10_000.0..10_200.0).contains(&after), "{client} seed {seed}: taken {after} ms after");
            assert!(out.metrics.overlap_events >= 1, "{client} seed {seed}: the paused holder resumes holding");
            assert!(out.metrics.stale_unfenced_events >= 1, "{client} seed {seed}: and writes, unfenced");
            // The resumed holder's DELETE … WHERE CLIENT_ID = ? finds nothing: an error from 6.4
            // (the history's ReleaseFailed follows the Released of the release call).
            let want_failed = usize::from(client != "spring-jdbc-6.0");
            assert_eq!(failed(&out), want_failed, "{client} seed {seed}");
            assert_eq!(released(&out), 2, "{client} seed {seed}: both sections end at the release call");
        }
        // The seed's row: 30 s expiry by the server's cleanup job, longer than the pause.
        let seed_row = run(&scenario("", 5000, HOLDER_PAUSED), "db", seed);
        assert_eq!(seed_row.metrics.overlap_events, 0, "locksim-1 seed {seed}");
        assert_eq!(failed(&seed_row), 0, "locksim-1 seed {seed}");
    }
}

/// 7.0's `EXPIRED_AFTER` is the holder's now + ttl, compared with the acquirer's now; 6.x's
/// `CREATED_DATE` is the holder's now, compared with the acquirer's now − ttl. With one TTL for
/// every client the two conditions are the same inequality, so a holder whose clock is behind
/// is taken over exactly as early under both: the runs are identical, grant for grant.
#[test]
fn a_holder_clock_behind_is_taken_over_early_the_same_under_created_date_and_expired_after() {
    // client-0's clock is 6 s behind from the start; whoever holds first, the row's time is
    // then 6 s old for the other one, which takes it 4 s (not 10 s) into a 9 s section.
    let behind = "[[faults]]\nkind = \"clock_jump\"\ntarget = \"client-0\"\nat_ms = 0\nby_ms = -6000\n";
    let mut early = 0;
    for seed in 0..6 {
        let v6 = run(&scenario("client = \"spring-jdbc-6\"", 9000, behind), "db", seed);
        let v7 = run(&scenario("client = \"spring-jdbc-7\"", 9000, behind), "db", seed);
        assert_eq!(grants(&v6), grants(&v7), "seed {seed}: the same takeover");
        assert_eq!(v6.metrics.overlap_events, v7.metrics.overlap_events, "seed {seed}");
        let g = grants(&v6);
        if g[0].node == v6.history.clients[0] {
            let after = g[1].at_ms - g[0].at_ms;
            assert!((4_000.0..4_200.0).contains(&after), "seed {seed}: taken {after} ms after");
            assert!(v6.metrics.overlap_events >= 1, "seed {seed}");
            early += 1;
        } else {
            // The holder's clock is right and the waiter's behind: the waiter waits 16 s, past the
            // 9 s section.
            assert_eq!(v6.metrics.overlap_events, 0, "seed {seed}");
        }
    }
    assert!(early > 0, "some seed has client-0 holding first");
}

#[test]
fn nested_acquisitions_are_counted_in_the_client_and_send_the_acquire_again() {
    let toml = r#"
name = "nested"
duration_ms = 20000
algorithms = ["db"]
[models.db]
client = "spring-jdbc-6"
[workload]
clients = 1
hold_ms = 1000
think_ms = 100
reentry = 1.0
acquisitions_per_client = 2
"#;
    let out = run(toml, "db", 0);
    let g = grants(&out);
    assert!(g.iter().any(|g| g.nested), "{g:?}");
    let acquires = trace_lines(&out, "server-0", "deliver", "else INSERT").len();
    assert_eq!(acquires, g.len(), "one acquire statement per grant, nested ones too");
    let deletes = trace_lines(&out, "server-0", "deliver", "RELEASE k0").len();
    assert_eq!(deletes, g.iter().filter(|g| !g.nested).count(), "one DELETE per outermost release");
}
