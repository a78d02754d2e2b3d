//! Resets and failed releases in the db model (issue 13): a statement outstanding on a connection
//! the server's death resets fails at once; a release that fails is `ReleaseFailed`, never
//! `Released`, and is retried `release_retry` times; a killed client's session ends on the
//! server (its `GET_LOCK`s freed) while a lost client machine's does not; with
//! `owner_scope = "process"` a client re-enters the row its failed release left behind;
//! `autoinc_persistent = false` (MySQL 5.7) hands ids out again after a restart empties the
//! table.

use crate::db_common;

use db_common::*;
use locksim_simulator::history::HistoryEvent;

/// One or two clients and a crash of `target` (`mode`) at `at_ms` for `for_ms`.
fn scenario(variant: &str, clients: usize, hold_ms: u64, think_ms: u64, crash: &str) -> String {
    format!(
        r#"
name = "resets"
duration_ms = 8000
[[variants]]
name = "v"
model = "db"
{variant}
[network]
latency_ms = 0.25
[workload]
clients = {clients}
hold_ms = {hold_ms}
think_ms = {think_ms}
[[faults]]
kind = "crash"
{crash}
"#
    )
}

fn release_failures(out: &locksim_simulator::run::SeedOutcome) -> Vec<(f64, usize)> {
    history_times(out, |e| matches!(e, HistoryEvent::ReleaseFailed { .. }))
}

fn releases(out: &locksim_simulator::run::SeedOutcome) -> Vec<(f64, usize)> {
    history_times(out, |e| matches!(e, HistoryEvent::Released { .. }))
}

#[test]
fn a_release_sent_to_a_killed_server_fails_at_once_and_is_reported_as_release_failed() {
    // The holder (granted at ~3 ms) releases at ~1003 ms; the server is down from 500 to 2500 ms:
    // the DELETE is refused (a reset), so unlock throws at once instead of after a timeout.
    let toml = scenario("expire_ms = 0", 1, 1000, 0, "target = \"server-0\"\nat_ms = 500\nduration_ms = 2000");
    for seed in 0..3 {
        let out = run(&toml, "v", seed);
        let failed = release_failures(&out);
        assert_eq!(failed.len(), 1, "seed {seed}: {failed:?}");
        assert!((1003.0..1010.0).contains(&failed[0].0), "seed {seed}: failed at {}", failed[0].0);
        // The call (`Released` marks the workload's unlock call) fails one round trip after it
        // starts (the refused DELETE's reset), not after the 30 s statement timeout.
        let called = releases(&out);
        assert!(called.iter().any(|&(t, _)| failed[0].0 > t && failed[0].0 - t < 1.0), "seed {seed}: {called:?}");
        assert!(!notes(&out, "client-0", "connection to server-0 reset").is_empty(), "seed {seed}");
    }
}

#[test]
fn a_failed_release_is_sent_again_release_retry_times_before_it_is_reported() {
    let crash = "target = \"server-0\"\nat_ms = 500\nduration_ms = 2000";
    for (retry, sends) in [(0usize, 1usize), (3, 4)] {
        let toml = scenario(&format!("expire_ms = 0\nrelease_retry = {retry}"), 1, 1000, 0, crash);
        let out = run(&toml, "v", 1);
        let sent: Vec<_> = trace_lines(&out, "client-0", "send", "RELEASE k0")
            .into_iter()
            .filter(|(t, _)| (1000.0..2500.0).contains(t))
            .collect();
        assert_eq!(sent.len(), sends, "release_retry = {retry}: {sent:?}");
        assert_eq!(release_failures(&out).len(), 1, "release_retry = {retry}: reported once, after the retries");
    }
}

#[test]
fn a_killed_client_process_ends_its_get_lock_session_but_a_lost_machine_does_not() {
    // Client 0 or 1 holds for 20 s; the holder dies at 1 s and comes back at 6 s.
    for seed in 0..3 {
        let process =
            scenario("mode = \"get_lock\"", 2, 20000, 0, "target = \"holder\"\nat_ms = 1000\nduration_ms = 5000");
        let out = run(&process, "v", seed);
        let g = grants(&out);
        assert!(g.len() >= 2, "seed {seed}: {g:?}");
        // The reset reaches the server at ~1000.25 ms; the waiter's next poll (every 200 ms) wins.
        assert!((1000.0..=1215.0).contains(&g[1].at_ms), "seed {seed}: second grant at {}", g[1].at_ms);
        assert_eq!(notes(&out, "server-0", "reset: GET_LOCKs [0] released").len(), 1, "seed {seed}");
        assert_eq!(out.metrics.overlap_events, 0);

        let machine = process.replace("duration_ms = 5000", "duration_ms = 5000\nmode = \"machine\"");
        let out = run(&machine, "v", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 1, "seed {seed}: the lost machine's session keeps the lock to the end: {g:?}");
    }
}

#[test]
fn with_a_process_owner_id_the_client_re_enters_the_row_its_failed_release_left() {
    // Two clients, holds of 1 s, no expiry. The server is down from 500 to 2500 ms, so the first
    // holder's DELETE fails and the row stays. Process scope: that client's next INSERT hits
    // its own row, the UPDATE … WHERE owner matches, and it is granted the same id again (and
    // again: the count never returns to 0), while the other client is refused to the end.
    // Acquire scope: the row belongs to an owner id nobody uses any more: no one gets it.
    let crash = "target = \"server-0\"\nat_ms = 500\nduration_ms = 2000";
    for seed in 0..3 {
        let toml = scenario("expire_ms = 0", 2, 1000, 0, crash);
        let out = run(&toml, "v", seed);
        let g = grants(&out);
        let first = g[0];
        let after: Vec<&Grant> = g.iter().filter(|x| x.at_ms > 2500.0).collect();
        assert!(after.len() >= 3, "seed {seed}: {g:?}");
        assert!(
            after.iter().all(|x| x.node == first.node && x.token == first.token),
            "seed {seed}: only the first holder, with its old token: {g:?}"
        );

        let toml = scenario("expire_ms = 0\nowner_scope = \"acquire\"", 2, 1000, 0, crash);
        let out = run(&toml, "v", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 1, "seed {seed}: the leaked row blocks everyone, its owner included: {g:?}");
    }
}

#[test]
fn a_57_counter_recomputed_after_a_restart_of_an_emptied_table_reissues_tokens() {
    // One client: hold 50 ms, think 200 ms, so the table is empty most of the time. The server
    // restarts at 1150 ms; ids 1..=5 were handed out before.
    let crash = "target = \"server-0\"\nat_ms = 1150\nduration_ms = 50";
    for seed in 0..3 {
        let toml = scenario("autoinc_persistent = false", 1, 50, 200, crash);
        let out = run(&toml, "v", seed);
        let g = grants(&out);
        let before: Vec<u64> = g.iter().filter(|x| x.at_ms < 1150.0).filter_map(|x| x.token).collect();
        let after = g.iter().find(|x| x.at_ms > 1200.0).and_then(|x| x.token).expect("a grant after the restart");
        assert!(!before.is_empty());
        assert_eq!(after, 1, "seed {seed}: the empty table's counter starts over: {g:?}");
        assert!(out.metrics.token_regressions >= 1, "seed {seed}");

        let toml = scenario("autoinc_persistent = true", 1, 50, 200, crash);
        let out = run(&toml, "v", seed);
        let g = grants(&out);
        let max_before = g.iter().filter(|x| x.at_ms < 1150.0).filter_map(|x| x.token).max().unwrap();
        let after = g.iter().find(|x| x.at_ms > 1200.0).and_then(|x| x.token).unwrap();
        assert_eq!(after, max_before + 1, "seed {seed}: MySQL 8.0 keeps counting");
        assert_eq!(out.metrics.token_regressions, 0, "seed {seed}");
    }
}
