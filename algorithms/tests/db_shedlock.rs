//! The `shedlock` recipe of the db model under the scheduled-job workload (issue 34 family 3):
//! ShedLock's `UPDATE shedlock SET lock_until = ?, … WHERE name = ? AND lock_until <= ?` with the
//! node's wall clock, one try per run (a taken lock skips the run), unlock to
//! `max(now, createdAt + lockAtLeastFor)`. Every time below follows from a constant 1 ms latency
//! (2 ms for client-1, so client-0's statement always reaches the server first) and `service_ms =
//! 0`: a statement takes one round trip.

use crate::db_common;

use db_common::*;
use locksim_simulator::history::{FailReason, HistoryEvent};

/// Two clients firing every `period_ms` for `hold_ms`, one row per entry of `rows` (label,
/// `[models.db]`-style lines), `faults` appended.
fn scenario(period_ms: u64, hold_ms: u64, duration_ms: u64, rows: &[(&str, &str)], faults: &str) -> String {
    let variants: String = rows
        .iter()
        .map(|(label, lines)| {
            format!(
                "[[variants]]\nname = \"{label}\"\nmodel = \"db\"\nmode = \"shedlock\"\nservice_ms = 0\n{lines}\n\n"
            )
        })
        .collect();
    format!(
        r#"
name = "shedlock"
duration_ms = {duration_ms}

{variants}
[network]
latency_ms = 1

[[network.links]]
from = "client-1"
to = "server-0"
latency_ms = 2

[workload]
kind = "scheduled"
period_ms = {period_ms}
clients = 2
hold_ms = {hold_ms}

{faults}
"#
    )
}

/// (true ms, client index) of every non-nested grant.
fn runs(out: &locksim_simulator::run::SeedOutcome) -> Vec<(f64, usize)> {
    let c1 = out.history.clients[1];
    grants(out).iter().filter(|g| !g.nested).map(|g| (g.at_ms, usize::from(g.node == c1))).collect()
}

/// (true ms, client index) of every skipped run.
fn skips(out: &locksim_simulator::run::SeedOutcome) -> Vec<(f64, usize)> {
    let c1 = out.history.clients[1];
    history_times(out, |e| matches!(e, HistoryEvent::AcquireFailed { reason: FailReason::Refused, .. }))
        .into_iter()
        .map(|(ms, node)| (ms, usize::from(node == c1)))
        .collect()
}

#[test]
fn each_tick_runs_once_and_the_other_node_skips() {
    let out = run(&scenario(10_000, 3_000, 45_000, &[("shed", "")], ""), "shed", 0);
    // Ticks at 10, 20, 30, 40 s. client-0's INSERT (first tick) or UPDATE arrives first (1 ms),
    // is answered at +2 ms; client-1's INSERT is a duplicate (+4 ms) and its UPDATE finds
    // lock_until = tick + 10 min > now (+8 ms): skipped.
    assert_eq!(runs(&out), vec![(10_002.0, 0), (20_002.0, 0), (30_002.0, 0), (40_002.0, 0)]);
    assert_eq!(skips(&out), vec![(10_008.0, 1), (20_004.0, 1), (30_004.0, 1), (40_004.0, 1)]);
    assert_eq!(out.metrics.overlap_events, 0);
    assert_eq!(out.metrics.double_executions, Some(0));
    // A skipped tick is not a wait: the skipping node does not count as waiting with nobody
    // holding (no unavailability beyond each tick's round trips), and only the 4 runs record a
    // wait.
    assert!(out.metrics.unavailable_ns < 50_000_000, "{} ns unavailable", out.metrics.unavailable_ns);
    assert_eq!(out.metrics.wait_us.len(), 4);
    // The unlock, after the job's resource write (13.002-13.004 s), writes lock_until = now
    // (lockAtLeastFor 0) on client-0's own row, so the next tick finds it free.
    let unlocks = trace_lines(&out, "client-0", "send", "WHERE name AND locked_by=c0");
    assert_eq!(unlocks.len(), 4, "{unlocks:?}");
    assert!(unlocks[0].1.contains("lock_until=13.004s"), "{unlocks:?}");
}

#[test]
fn a_node_whose_clock_is_ahead_by_more_than_lock_at_most_for_takes_a_running_lock() {
    // client-1's clock steps 179 s ahead at 1 s: its first tick (set at 0) still fires at 10 s
    // true, now reading 189 s; later ticks come at true 11, 21, … (its 190, 200, … s).
    let jump = "[[faults]]\nkind = \"clock_jump\"\ntarget = \"client-1\"\nat_ms = 1000\nby_ms = 179000\n";
    let rows = [
        ("node-60s", "lock_at_most_for_ms = 60000"),
        ("node-10min", "lock_at_most_for_ms = 600000"),
        ("db-60s", "lock_at_most_for_ms = 60000\ntime_source = \"db\""),
    ];
    let toml = scenario(10_000, 3_000, 45_000, &rows, jump);
    let node = run(&toml, "node-60s", 0);
    // 10 s: client-0 INSERTs lock_until = 70 s on its clock; client-1's UPDATE at its 189.004 s
    // finds 70 <= 189: both run the 10 s tick.
    assert_eq!(runs(&node)[..2], [(10_002.0, 0), (10_008.0, 1)]);
    assert!(!notes(&node, "server-0", "taken by").is_empty());
    assert_eq!(node.metrics.overlap_events, 1, "10.008-13.002 s");
    assert_eq!(node.metrics.double_executions, Some(1), "the 10 s tick ran twice");
    // client-1's unlock wrote its 192 s: client-0 (20, 30, 40 s) is shut out from then on.
    assert!(runs(&node)[2..].iter().all(|&(_, c)| c == 1), "{:?}", runs(&node));
    assert!(skips(&node).iter().all(|&(_, c)| c == 0), "{:?}", skips(&node));
    // A lockAtMostFor beyond the skew (10 min > 179 s) keeps client-1 out of the first tick.
    let long = run(&toml, "node-10min", 0);
    assert_eq!(long.metrics.overlap_events, 0);
    assert_eq!(long.metrics.double_executions, Some(0));
    // usingDbTime(): the database compares its own clock: client-1 is skipped at 10.008 s.
    let db = run(&toml, "db-60s", 0);
    assert_eq!(runs(&db)[0], (10_002.0, 0));
    assert_eq!(skips(&db)[0], (10_008.0, 1));
    assert_eq!(db.metrics.overlap_events, 0);
    assert_eq!(db.metrics.double_executions, Some(0));
}

#[test]
fn a_holder_paused_past_lock_at_most_for_runs_alongside_the_next_tick() {
    // client-0 holds the 10 s tick (10.002-13.002 s) and is paused 11-31 s.
    let pause = "[[faults]]\nkind = \"pause\"\ntarget = \"client-0\"\nat_ms = 11000\nduration_ms = 20000\n";
    let rows = [("short", "lock_at_most_for_ms = 5000"), ("long", "lock_at_most_for_ms = 30000")];
    let toml = scenario(10_000, 3_000, 45_000, &rows, pause);
    let short = run(&toml, "short", 0);
    // lock_until = 15 s: client-1's 20 s and 30 s ticks take it while client-0 is still paused
    // inside its run (it ends at 31 s).
    let r = runs(&short);
    assert_eq!(r[..3], [(10_002.0, 0), (20_004.0, 1), (30_004.0, 1)]);
    assert_eq!(short.metrics.overlap_events, 2);
    assert_eq!(short.metrics.double_executions, Some(0), "one run per tick, two at once");
    let long = run(&toml, "long", 0);
    assert_eq!(long.metrics.overlap_events, 0, "lock_until 40 s outlasts the pause");
    assert_eq!(skips(&long)[1..3], [(20_004.0, 1), (30_004.0, 1)]);
}

#[test]
fn a_job_longer_than_lock_at_most_for_overlaps_and_unlock_by_owner_decides_whose_lock_ends() {
    // A 25 s job every 10 s with lockAtMostFor 10 s: client-1 takes each tick client-0 is busy
    // for (#1502).
    let toml = scenario(10_000, 25_000, 60_000, &[("v7", "lock_at_most_for_ms = 10000")], "");
    let v7 = run(&toml, "v7", 0);
    let r = runs(&v7);
    // 10 s: client-0 (to 35 s, lock_until 20 s); 20 s: client-1 (lock_until 20 <= 20, equality
    // takes it; to 45 s); 40 s: client-0 again (its 35 s completion, next tick 40 s).
    assert_eq!(r[..3], [(10_002.0, 0), (20_004.0, 1), (40_002.0, 0)]);
    assert!(v7.metrics.overlap_events >= 2);
    // 7.x: client-0's unlock at 35 s matches nothing (locked_by is client-1): 0 rows.
    assert!(!trace_lines(&v7, "client-0", "deliver", "0 rows").is_empty());

    // lockAtMostFor 15 s: client-1 takes the 30 s tick (lock_until 25 s) and holds to 55 s with
    // lock_until 45 s. client-0's unlock at 35 s: from 7.0 it touches only its own row, so
    // client-0 skips 40 s and runs 50 s; in 6.x it sets client-1's lock_until to 35 s, and
    // client-0 runs 40 s while client-1 is still running.
    let rows = [("v7", "lock_at_most_for_ms = 15000"), ("v6", "lock_at_most_for_ms = 15000\nunlock_by_owner = false")];
    let toml = scenario(10_000, 25_000, 60_000, &rows, "");
    let v7 = runs(&run(&toml, "v7", 0));
    assert_eq!(v7[..3], [(10_002.0, 0), (30_004.0, 1), (50_002.0, 0)]);
    let v6 = runs(&run(&toml, "v6", 0));
    assert_eq!(v6[..3], [(10_002.0, 0), (30_004.0, 1), (40_002.0, 0)]);
}

#[test]
fn shedlock_with_a_replica_is_refused() {
    let toml = scenario(10_000, 3_000, 45_000, &[("x", "replication = \"async\"")], "");
    let models = locksim_algorithms::registry();
    let err = locksim_simulator::scenario::parse_str("t.toml", &toml, &models).expect_err("refused");
    assert!(err.to_string().contains("replication"), "{err}");
}
