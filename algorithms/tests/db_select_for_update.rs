//! `mode = "select_for_update"` of the db model: the lock is an open transaction holding
//! `SELECT … FOR UPDATE` on the lock's row. A waiter's locking read blocks in the server and is
//! answered when the holder commits; a killed holder's connection reset rolls its transaction
//! back and hands the row on at once; a paused holder keeps the transaction open, so the
//! waiters' reads fail after `innodb_lock_wait_timeout` (error 1205) and are tried again, with no
//! overlap; a lost holder machine keeps it open to the end.

use crate::db_common;

use db_common::*;
use locksim_simulator::history::HistoryEvent;

fn scenario(hold_ms: u64, fault: &str) -> String {
    format!(
        r#"
name = "sfu"
duration_ms = 90000
[[variants]]
name = "v"
model = "db"
mode = "select_for_update"
[network]
latency_ms = 0.25
[workload]
clients = 2
hold_ms = {hold_ms}
think_ms = 0
{fault}
"#
    )
}

#[test]
fn a_blocked_locking_read_is_answered_when_the_holder_commits() {
    let toml = scenario(100, "");
    for seed in 0..3 {
        let out = run(&toml, "v", seed);
        let g = grants(&out);
        assert!(g.len() > 100, "seed {seed}");
        // The holder's COMMIT (sent at the end of its 100 ms) reaches the server 0.25 ms later
        // and commits after service_ms (2 ms); the waiter's blocked read is answered then (~103 ms
        // after the first grant, no poll_ms gap).
        let hand = g[1].at_ms - g[0].at_ms;
        assert!((100.0..104.0).contains(&hand), "seed {seed}: hand-off after {hand} ms");
        assert!(g.iter().all(|x| x.token.is_none()), "no fencing token");
        assert!(history_times(&out, |e| matches!(e, HistoryEvent::RefusedAttempt { .. })).is_empty(), "no polling");
        assert_eq!(out.metrics.overlap_events, 0);
    }
}

#[test]
fn a_killed_holders_transaction_is_rolled_back_and_the_row_handed_on() {
    let toml = scenario(20_000, "[[faults]]\nkind = \"crash\"\ntarget = \"holder\"\nat_ms = 1000\nduration_ms = 5000");
    for seed in 0..3 {
        let out = run(&toml, "v", seed);
        let g = grants(&out);
        assert!(g.len() >= 2, "seed {seed}: {g:?}");
        assert!((1000.0..1001.0).contains(&g[1].at_ms), "seed {seed}: second grant at {}", g[1].at_ms);
        assert_eq!(notes(&out, "server-0", "transaction rolled back").len(), 1, "seed {seed}");
        assert_eq!(out.metrics.overlap_events, 0);
    }
}

#[test]
fn a_paused_holder_keeps_its_transaction_and_the_waiter_times_out_and_retries_without_overlap() {
    let toml = scenario(100, "[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat_ms = 1050\nduration_ms = 60000");
    for seed in 0..3 {
        let out = run(&toml, "v", seed);
        // The waiter's read blocks from ~1 s; innodb_lock_wait_timeout (50 s) answers error 1205,
        // the library sleeps poll_ms and blocks again until the holder wakes at ~61 s and commits.
        let timeouts = trace_lines(&out, "server-0", "send", "ERROR 1205");
        assert_eq!(timeouts.len(), 1, "seed {seed}: {timeouts:?}");
        assert!((50_900.0..51_200.0).contains(&timeouts[0].0), "seed {seed}: 1205 at {}", timeouts[0].0);
        let g = grants(&out);
        let gap: Vec<&Grant> = g.iter().filter(|x| x.at_ms > 1200.0 && x.at_ms < 61_000.0).collect();
        assert!(gap.is_empty(), "seed {seed}: nobody else holds while the transaction is open: {gap:?}");
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
    }
}

#[test]
fn a_lost_holder_machine_keeps_its_transaction_open_to_the_end() {
    let toml = scenario(
        20_000,
        "[[faults]]\nkind = \"crash\"\ntarget = \"holder\"\nat_ms = 1000\nduration_ms = 5000\nmode = \"machine\"",
    );
    let out = run(&toml, "v", 0);
    assert_eq!(grants(&out).len(), 1, "nobody tells the server: the row stays locked");
}
