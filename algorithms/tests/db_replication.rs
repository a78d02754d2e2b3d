//! Replication and failover of the db model: semisync waits for the replica's ack and falls back
//! to async after `semisync_timeout_ms`; an async primary that dies inside the replication lag
//! takes the newest row with it, so the promoted replica hands the same auto-increment id out
//! again (token regression) to a second holder (overlap); `GET_LOCK`s live in server memory and
//! are forgotten by any failover; a killed client's `GET_LOCK` session ends when the server sees
//! the reset, while its lock row outlives it.

use crate::db_common;

use db_common::*;
use locksim_algorithms::db::Replication;
use locksim_simulator::history::HistoryEvent;

/// Two clients with 60 s sections and `server-0` crashed at `crash_at_ms` (the model's
/// configuration is the test's: [`replicated`]).
fn crash_primary(crash_at_ms: f64) -> String {
    format!(
        r#"
name = "failover"
duration_ms = 15000
algorithms = ["db"]
[network]
latency_ms = 0.25
[workload]
clients = 2
hold_ms = 60000
think_ms = 0
[[faults]]
kind = "crash"
target = "server-0"
at_ms = {crash_at_ms}
"#
    )
}

/// The schema's defaults with a replica fed as `replication` says, and a failover manager.
fn replicated(replication: Replication) -> Config {
    Config { replication, ..defaults() }
}

#[test]
fn async_primary_dying_inside_the_lag_loses_the_row_and_the_id_is_handed_out_again() {
    // The first INSERT commits at 2.75 ms and would ship at 7.75 ms (lag 5 ms): crash at 4 ms.
    let toml = crash_primary(4.0);
    for seed in 0..5 {
        let out = run_config(&toml, &replicated(Replication::Async), seed);
        let g: Vec<Grant> = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: {g:?}");
        assert!((g[0].at_ms - 3.0).abs() < 1e-6, "seed {seed}: first grant at {}", g[0].at_ms);
        assert_eq!(g[0].token, Some(1));
        assert_eq!(g[1].token, Some(1), "seed {seed}: the promoted replica reissues id 1");
        // Promotion: primary silent for failover_after_ms (10 s, judged on 1 s probes), then the
        // clients are told and the waiter's next INSERT lands on server-1.
        let promoted = notes(&out, "server-1", "promoted to primary");
        assert_eq!(promoted.len(), 1);
        assert!((10_000.0..=11_500.0).contains(&promoted[0].0), "seed {seed}: promoted at {}", promoted[0].0);
        assert!(promoted[0].1.contains("applied #0"), "seed {seed}: the replica never got the row: {}", promoted[0].1);
        assert!(g[1].at_ms > promoted[0].0 && g[1].at_ms < promoted[0].0 + 10.0, "seed {seed}");
        assert_eq!(out.metrics.token_regressions, 1, "seed {seed}");
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
    }
}

#[test]
fn async_primary_dying_after_the_lag_loses_nothing() {
    let toml = crash_primary(50.0);
    for seed in 0..3 {
        let out = run_config(&toml, &replicated(Replication::Async), seed);
        let promoted = notes(&out, "server-1", "promoted to primary");
        assert_eq!(promoted.len(), 1);
        assert!(promoted[0].1.contains("applied #1"), "seed {seed}: {}", promoted[0].1);
        assert_eq!(grants(&out).len(), 1, "seed {seed}: the row survived; the waiter is refused");
        assert_eq!(out.metrics.overlap_events, 0);
        assert_eq!(out.metrics.token_regressions, 0);
        // The waiter polls the new primary and is refused there.
        let refused_on_new = trace_lines(&out, "server-1", "send", "ERROR 1062");
        assert!(!refused_on_new.is_empty(), "seed {seed}");
    }
}

#[test]
fn semisync_grant_waits_for_the_ack_so_a_crash_inside_the_lag_loses_no_granted_row() {
    let semisync = replicated(Replication::Semisync);
    let toml = crash_primary(4.0);
    for seed in 0..3 {
        let out = run_config(&toml, &semisync, seed);
        let g = grants(&out);
        // Nobody was told "granted" before the crash (the answer waited for the ack), so the one
        // grant after the failover overlaps with nothing.
        assert_eq!(g.len(), 1, "seed {seed}: {g:?}");
        assert!(g[0].at_ms > 10_000.0);
        assert_eq!(out.metrics.overlap_events, 0);
        assert_eq!(out.metrics.token_regressions, 0);
    }
    // Without a crash the grant comes after asking the manager for the primary (0.5), then the
    // INSERT (0.25), commit (2), lag (5), shipping (0.25), ack (0.25) and answer (0.25).
    let quiet = crash_primary(14_000.0);
    let g = grants(&run_config(&quiet, &semisync, 0));
    assert!((g[0].at_ms - 8.5).abs() < 1e-6, "first grant at {} ms", g[0].at_ms);
}

#[test]
fn semisync_falls_back_to_async_after_the_timeout_and_returns_when_the_replica_catches_up() {
    let toml = r#"
name = "semisync"
duration_ms = 30000
algorithms = ["db"]
[models.db]
replication = "semisync"
semisync_timeout_ms = 10000
[network]
latency_ms = 0.25
[workload]
clients = 1
hold_ms = 100
think_ms = 100
[[faults]]
kind = "partition"
groups = [["server-1"], ["server-0", "sentinel-0", "client-*", "resource"]]
at_ms = 0
duration_ms = 20000
"#;
    for seed in 0..3 {
        let out = run(toml, "db", seed);
        let g = grants(&out);
        // The first INSERT commits at 2.25 ms and waits for an ack that cannot come.
        assert!((g[0].latency_ms - 10_002.5).abs() < 1e-6, "seed {seed}: first grant took {} ms", g[0].latency_ms);
        let off = notes(&out, "server-0", "switching to async");
        assert_eq!(off.len(), 1, "seed {seed}");
        assert!((off[0].0 - (g[0].at_ms - 0.25)).abs() < 1e-6, "seed {seed}: fell back at {}", off[0].0);
        // In async mode commits return at once: grant = INSERT round trip + 2 ms.
        let during: Vec<&Grant> = g.iter().filter(|x| x.at_ms > g[0].at_ms && x.at_ms < 20_000.0).collect();
        assert!(during.len() > 20, "seed {seed}");
        assert!(during.iter().all(|x| (x.latency_ms - 2.5).abs() < 1e-6), "seed {seed}: {during:?}");
        // The partition heals at 20 s; the next binlog heartbeat shows the gap, the replica
        // resyncs and acks, and semisync is back on.
        let on = notes(&out, "server-0", "semisync on again");
        assert_eq!(on.len(), 1, "seed {seed}");
        assert!((20_000.0..=21_100.0).contains(&on[0].0), "seed {seed}: back on at {}", on[0].0);
        let after: Vec<&Grant> = g.iter().filter(|x| x.at_ms > on[0].0 + 50.0).collect();
        assert!(!after.is_empty());
        assert!(
            after.iter().all(|x| (x.latency_ms - 8.0).abs() < 1e-6),
            "seed {seed}: waits for the ack again: {after:?}"
        );
        // The manager could always reach the primary: no failover.
        assert!(notes(&out, "sentinel-0", "promoting").is_empty());
    }
}

#[test]
fn get_lock_is_forgotten_by_a_failover_while_its_holder_still_holds() {
    let toml = crash_primary(1000.0);
    let table = replicated(Replication::Async);
    let get_lock = Config { mode: Mode::GetLock, ..table.clone() };
    for seed in 0..3 {
        let out = run_config(&toml, &get_lock, seed);
        let g = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: {g:?}");
        assert_eq!(g[0].token, None, "GET_LOCK has no fencing token");
        let promoted = notes(&out, "server-1", "promoted to primary")[0].0;
        assert!(g[1].at_ms > promoted && g[1].at_ms < promoted + 10.0, "seed {seed}: the waiter gets it right away");
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
        assert_eq!(out.metrics.stale_fenced_events, None, "no token: cannot be fenced");
        // The primary's process is killed at 1 s: the holder's connection is reset one latency
        // later, so its session and lock are gone (reported, not honoured).
        let lost = history_times(&out, |e| matches!(e, HistoryEvent::LostNotice { .. }));
        assert_eq!(lost.len(), 1, "seed {seed}");
        assert_eq!(lost[0].1, g[0].node);
        assert!((1000.0..1001.0).contains(&lost[0].0), "seed {seed}: lost at {}", lost[0].0);

        // A lost machine tells nobody: the holder hears of it only from the new primary.
        let machine = toml.replace("at_ms = 1000", "at_ms = 1000\nmode = \"machine\"");
        let out = run_config(&machine, &get_lock, seed);
        let promoted = notes(&out, "server-1", "promoted to primary")[0].0;
        let lost = history_times(&out, |e| matches!(e, HistoryEvent::LostNotice { .. }));
        assert_eq!(lost.len(), 1, "seed {seed}");
        assert!(lost[0].0 > promoted && lost[0].0 < promoted + 1.0, "seed {seed}: lost at {}", lost[0].0);
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");

        // The lock row was replicated long before the crash: the same schedule is safe.
        let out = run_config(&toml, &table, seed);
        assert_eq!(grants(&out).len(), 1, "seed {seed}");
        assert_eq!(out.metrics.overlap_events, 0);
    }
}

#[test]
fn a_crashed_clients_get_lock_ends_with_its_session_but_its_row_does_not() {
    let toml = r#"
name = "client-crash"
duration_ms = 30000
[[variants]]
name = "get_lock"
model = "db"
mode = "get_lock"
[[variants]]
name = "row"
model = "db"
expire_ms = 0
[workload]
clients = 2
hold_ms = 20000
think_ms = 0
[[faults]]
kind = "crash"
target = "holder"
at_ms = 1000
duration_ms = 5000
"#;
    for seed in 0..3 {
        let out = run(toml, "get_lock", seed);
        let g = grants(&out);
        assert!(g.len() >= 2, "seed {seed}: {g:?}");
        // The killed process's connection is reset at 1 s; the waiter's next poll wins.
        assert!((1_000.0..=1_215.0).contains(&g[1].at_ms), "seed {seed}: second grant at {}", g[1].at_ms);
        assert_eq!(notes(&out, "server-0", "GET_LOCKs [0] released").len(), 1);
        assert_eq!(out.metrics.overlap_events, 0);

        let out = run(toml, "row", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 1, "seed {seed}: the row outlives its owner (a new owner id after restart): {g:?}");
    }
}

#[test]
fn a_seed_replays_exactly_through_loss_duplication_pauses_and_failover() {
    let toml = r#"
name = "replay"
duration_ms = 40000
[[variants]]
name = "semisync"
model = "db"
replication = "semisync"
heartbeat_ms = 5000
[[variants]]
name = "get_lock"
model = "db"
mode = "get_lock"
replication = "async"
[network]
loss = 0.05
duplicate = 0.05
[workload]
clients = 6
locks = 2
reentry = 0.3
acquire_timeout_ms = 3000
[clocks]
drift_ppm = { uniform = [-100, 100] }
[[faults]]
kind = "pause"
target = "leader"
at_ms = { uniform = [1000, 10000] }
duration_ms = 12000
[[faults]]
kind = "crash"
target = "random-client"
at_ms = { uniform = [1000, 30000] }
duration_ms = 2000
"#;
    for label in ["semisync", "get_lock"] {
        for seed in 0..3 {
            let a = run(toml, label, seed);
            let b = run(toml, label, seed);
            assert_eq!(a.trace_hash, b.trace_hash, "{label} seed {seed}");
            assert_eq!(a.events, b.events);
            assert!(a.metrics.acquisitions > 20, "{label} seed {seed}: the run makes progress");
            // The pause outlasts failover_after_ms: a failover happens.
            assert_eq!(notes(&a, "sentinel-0", "failover done").len(), 1, "{label} seed {seed}");
        }
    }
}

#[test]
fn a_get_lock_session_cut_off_by_a_partition_ends_when_its_retransmitted_close_gets_through() {
    let toml = r#"
name = "fin"
duration_ms = 60000
algorithms = ["db"]
[models.db]
mode = "get_lock"
[network]
latency_ms = 0.25
[workload]
clients = 2
hold_ms = 5000
think_ms = 0
acquisitions_per_client = 1
[[faults]]
kind = "partition"
groups = [["holder"], ["server-0"]]
at_ms = 3000
duration_ms = 40000
"#;
    for seed in 0..3 {
        let out = run(toml, "db", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: {g:?}");
        // The holder's RELEASE_LOCK (at ~5 s) is retransmitted until its 30 s statement timeout;
        // then it closes the connection, and that FIN is retransmitted (0.2, 0.4, … s) until
        // the partition heals at 43 s: the 6th retry, ~47.6 s, ends the session.
        assert_ne!(g[0].node, g[1].node, "seed {seed}");
        let freed = notes(&out, "server-0", "GET_LOCKs [0] released");
        assert_eq!(freed.len(), 1, "seed {seed}");
        assert!((43_000.0..=48_000.0).contains(&freed[0].0), "seed {seed}: session ended at {}", freed[0].0);
        assert!(g[1].at_ms > freed[0].0 && g[1].at_ms < freed[0].0 + 215.0, "seed {seed}: next poll wins");
        assert_eq!(out.metrics.overlap_events, 0);
    }
}
