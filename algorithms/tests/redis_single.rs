//! The redis model on a single instance: the redis.io pattern's mechanisms, checked on times and
//! counts from the history and the trace.
//! - a forward step of the server's wall clock expires a key early (the second grant lands at the
//!   stepped expiry, not at the TTL);
//! - a holder paused past its TTL (Kleppmann 2016): overlap, a stale write the fenced resource
//!   rejects; with a plain `DEL` unlock the late release frees the next holder's key;
//! - persistence per crash kind: a restart with `none`, or with the stock `rdb` configuration
//!   before any snapshot, loses the lock and the token counter; a killed process with `everysec`
//!   keeps both (the writes were in the page cache); a lost machine with `everysec` loses what the
//!   last once-a-second fsync had not written; `always` keeps both;
//! - fencing tokens increase by one per grant.
//!
//! The rows pin `client = "locksim-1"` (the model before presets): these tests pin the mechanisms,
//! which the presets only configure; `redis_library.rs` tests the presets and the default.

use crate::redis_common;

use locksim_simulator::history::{FailReason, HistoryEvent};
use redis_common::*;

fn grants(out: &locksim_simulator::run::SeedOutcome) -> Vec<(f64, usize, Option<u64>)> {
    events(out, |e| matches!(e, HistoryEvent::Granted { nested: false, .. }))
        .into_iter()
        .map(|s| match s.event {
            HistoryEvent::Granted { token, .. } => (s.at_ns as f64 / 1e6, s.node, token),
            _ => unreachable!(),
        })
        .collect()
}

const NO_FAULTS: &str = r#"
name = "no-faults"
duration_ms = 5000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
[workload]
clients = 20
"#;

#[test]
fn no_faults_no_overlap_and_tokens_count_up_by_one() {
    for seed in 0..10 {
        let out = run(NO_FAULTS, "redis", seed);
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
        assert_eq!(out.metrics.stale_unfenced_events, 0, "seed {seed}");
        assert!(out.metrics.acquisitions > 100, "seed {seed}: {} acquisitions", out.metrics.acquisitions);
        assert!(out.metrics.refused_attempts > 0, "19 pollers are refused");
        let tokens: Vec<u64> = grants(&out).iter().map(|g| g.2.expect("fenced")).collect();
        let expected: Vec<u64> = (1..=tokens.len() as u64).collect();
        assert_eq!(tokens, expected, "seed {seed}: INCR gives 1, 2, 3, …");
    }
}

const CLOCK_JUMP: &str = r#"
name = "clock-jump"
duration_ms = 12000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
[network]
latency_ms = 0.25
[workload]
clients = 2
think_ms = 0
hold_ms = 10000
acquisitions_per_client = 1
[[faults]]
kind = "clock_jump"
target = "server-0"
at_ms = 1000
by_ms = 25000
"#;

/// Every `SET NX` server-0 executed, in order: (true ms it was delivered, client, acquired?),
/// each paired with the server's answer to that request id.
fn set_nx_answers(out: &locksim_simulator::run::SeedOutcome) -> Vec<(f64, String, bool)> {
    let entries = &out.trace.as_ref().expect("trace").entries;
    let mut found = Vec::new();
    for (i, t) in entries.iter().enumerate() {
        if t.node != "server-0" || t.kind != "deliver" || !t.detail.contains("cmd: SetNxPx") {
            continue;
        }
        let client = t.detail.trim_start_matches("← ").split(' ').next().unwrap().to_string();
        let id = t.detail.split("id: ").nth(1).unwrap().split(',').next().unwrap().to_string();
        let reply_to = format!("→ {client} Response {{ id: {id},");
        let answer = entries[i..]
            .iter()
            .find(|r| r.node == "server-0" && r.kind == "send" && r.detail.starts_with(&reply_to))
            .unwrap_or_else(|| panic!("no answer to {}", t.detail));
        let acquired = answer.detail.contains("Acquired");
        assert!(acquired || answer.detail.contains("Taken"), "{}", answer.detail);
        found.push((t.at_ns as f64 / 1e6, client, acquired));
    }
    found
}

#[test]
fn a_forward_step_of_the_servers_clock_expires_the_key_early() {
    // The schedule's numbers, from CLOCK_JUMP and the model's defaults (docs/models.md: `ttl_ms`
    // 30 000, `service_ms` 0.05, `retry_ms` uniform [50, 250]; the cron runs every 100 ms).
    const LATENCY_MS: f64 = 0.25;
    const SERVICE_MS: f64 = 0.05;
    const TTL_MS: f64 = 30_000.0;
    const JUMP_AT_MS: f64 = 1000.0;
    const JUMP_MS: f64 = 25_000.0;
    const RETRY_MAX_MS: f64 = 250.0;
    const CRON_MS: f64 = 100.0;
    let mut lazily_at_first_poll = 0;
    for seed in 0..5 {
        let out = run(CLOCK_JUMP, "redis", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 2, "seed {seed}: both clients get the lock once");
        // First grant: one round trip.
        assert!((g[0].0 - (2.0 * LATENCY_MS + SERVICE_MS)).abs() < 1e-6, "first grant at {}", g[0].0);
        let sets = set_nx_answers(&out);
        // client-0's SET reached the server at LATENCY_MS; the server's wall clock read true time
        // then (no offset), so the key's PX deadline is wall LATENCY_MS + TTL_MS. From JUMP_AT_MS on
        // the wall clock reads true + JUMP_MS: the deadline falls at true LATENCY_MS + TTL_MS − JUMP_MS
        // (5 000.25 ms) instead of 30 000.25 ms. Redis expires a key once its deadline is strictly past.
        let (set_at, setter, ok) = sets[0].clone();
        assert_eq!((setter.as_str(), ok), ("client-0", true), "seed {seed}: {sets:?}");
        assert!((set_at - LATENCY_MS).abs() < 1e-9, "seed {seed}: SET at {set_at}");
        let expires_at = set_at + TTL_MS - JUMP_MS;
        assert!(expires_at > JUMP_AT_MS);
        // Until then the key is there: every other SET NX is refused. After it the key is gone
        // (lazily on access, or already by the cron's active cycle): the first SET NX after the
        // deadline succeeds, and it is client-1's (client-0 still holds and never released:
        // no other command of client-0 reached the server in between).
        let after: Vec<&(f64, String, bool)> = sets[1..].iter().filter(|s| s.0 > expires_at).collect();
        for (t, c, ok) in sets[1..].iter().filter(|s| s.0 <= expires_at) {
            assert!(!ok && c == "client-1", "seed {seed}: SET NX by {c} at {t} ms before the key expired: {ok}");
        }
        let (won_at, winner, ok) = after.first().map(|s| (*s).clone()).expect("a SET NX after the expiry");
        assert!(ok && winner == "client-1", "seed {seed}: first SET NX after the expiry, at {won_at} ms: {ok}");
        assert!(won_at - expires_at <= RETRY_MAX_MS + LATENCY_MS + SERVICE_MS + LATENCY_MS, "seed {seed}: {won_at}");
        let other_cmds = requests_delivered(&out, |c| !matches!(c, Command::SetNxPx { .. }))
            .into_iter()
            .filter(|r| r.node == "server-0" && r.peer == "client-0" && r.at_ms() > set_at && r.at_ms() <= won_at)
            .count();
        assert_eq!(other_cmds, 0, "seed {seed}: client-0 sent nothing that could delete the key");
        // The cron's active cycle deletes the key at its first run strictly after the deadline,
        // unless the SET NX's lazy expiry came first; either way one of them did.
        let first_cron_after = (expires_at / CRON_MS).floor() * CRON_MS + CRON_MS;
        let active: Vec<f64> =
            notes(&out, "active expiry").into_iter().filter(|(_, n, _)| n == "server-0").map(|(t, _, _)| t).collect();
        if won_at < first_cron_after {
            assert!(active.iter().all(|t| *t > won_at), "seed {seed}: {active:?}");
            lazily_at_first_poll += 1;
        } else {
            assert_eq!(active.first().copied(), Some(first_cron_after), "seed {seed}: won at {won_at} ms");
        }
        // The grant is that SET's answer: service time plus the way back.
        assert!((g[1].0 - (won_at + SERVICE_MS + LATENCY_MS)).abs() < 1e-6, "seed {seed}: second grant at {}", g[1].0);
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}: the first holder still holds until 10 000 ms");
    }
    assert!(lazily_at_first_poll > 0, "no seed exercised the lazy expiry");
    // Without the jump the key would live to 30 000.25 ms: client-1 waits for the release
    // (client-0's DEL at ~10 000 ms), and every SET NX before it is refused.
    let calm = CLOCK_JUMP.replace("by_ms = 25000", "by_ms = 0");
    let out = run(&calm, "redis", 0);
    let g = grants(&out);
    assert!(g[1].0 > 10_000.0, "second grant at {}", g[1].0);
    let released = requests_delivered(&out, |c| !matches!(c, Command::SetNxPx { .. }))
        .into_iter()
        .find(|r| r.node == "server-0" && r.peer == "client-0")
        .expect("client-0's unlock")
        .at_ms();
    let sets = set_nx_answers(&out);
    assert!(sets[1..].iter().all(|s| s.2 == (s.0 > released)), "{sets:?}");
    assert_eq!(out.metrics.overlap_events, 0);
}

/// Known outcome 2 as a schedule: TTL 10 s, the first holder paused for 15 s right after
/// acquiring, short critical sections (5–50 ms), each client acquiring once.
const KLEPPMANN: &str = r#"
name = "kleppmann"
duration_ms = 30000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
ttl_ms = 10000
[[variants]]
name = "redis-del"
model = "redis"
client = "locksim-1"
ttl_ms = 10000
unlock = "del"
[network]
latency_ms = 0.25
[workload]
clients = 3
hold_ms = { uniform = [5, 50] }
think_ms = 0
acquisitions_per_client = 1
[[faults]]
kind = "pause"
target = "holder"
at_ms = 0
duration_ms = 15000
"#;

#[test]
fn a_holder_paused_past_its_ttl_overlaps_and_its_stale_write_is_fenced() {
    for label in ["redis", "redis-del"] {
        for seed in 0..5 {
            let out = run(KLEPPMANN, label, seed);
            let g = grants(&out);
            assert_eq!(g.len(), 3, "seed {seed}");
            let (first_at, first, t1) = g[0];
            // The paused holder's key expires 10 s after the server set it; the next poller gets it.
            let (second_at, second, t2) = g[1];
            assert!(second_at > 10_000.25 && second_at < 10_000.25 + 251.0, "seed {seed}: second grant at {second_at}");
            assert!(first != second);
            assert_eq!((t1, t2), (Some(1), Some(2)));
            assert!(first_at < 1.0);
            // The other two hold one after the other (from ~10 s, 5–50 ms each) inside the
            // paused holder's interval (0.55 ms – 15 s): two overlapping pairs, and the late
            // release (DEL or not) finds no one else's key.
            assert_eq!(out.metrics.overlap_events, 2, "{label} seed {seed}");
            // The paused holder writes after it resumes at 15 s, under token 1 < 2 (and 3): stale,
            // and the fenced resource rejects it.
            assert_eq!(out.metrics.stale_unfenced_events, 1, "seed {seed}");
            assert_eq!(out.metrics.stale_fenced_events, Some(0), "seed {seed}");
            let writes = events(&out, |e| {
                matches!(e, HistoryEvent::ResourceWrite { token: Some(1), fenced_accepted: false, .. })
            });
            assert_eq!(writes.len(), 1, "seed {seed}: the token-1 write is rejected by the fenced resource");
            assert!(writes[0].at_ns as f64 / 1e6 >= 15_000.0);
        }
    }
}

#[test]
fn with_a_plain_del_the_paused_holders_release_frees_the_next_holders_key() {
    // The same pause with 10 s critical sections, each client acquiring once: the second holder
    // still holds when the paused one resumes and releases.
    let text = known("02-redis-paused-holder-del.toml");
    for seed in 0..5 {
        let out = run(&text, "redis-del", seed);
        let g = grants(&out);
        assert_eq!(g.len(), 3, "seed {seed}");
        // Second holder from ~10 s (expiry); at ~15 s the paused first holder resumes, writes and
        // DELs the second holder's key; the third client gets in while the second still holds.
        assert!(g[1].0 > 10_000.0 && g[1].0 < 10_300.0);
        assert!(g[2].0 > 15_000.0 && g[2].0 < 15_300.0, "seed {seed}: third grant at {}", g[2].0);
        assert_eq!(out.metrics.overlap_events, 2, "seed {seed}: first with second, second with third");
        // compare-and-delete: the late release deletes nothing, the third client waits for the
        // second's release at ~20 s.
        let out = run(&text, "redis", seed);
        let g = grants(&out);
        assert!(g[2].0 > 20_000.0, "seed {seed}: third grant at {}", g[2].0);
        assert_eq!(out.metrics.overlap_events, 1, "seed {seed}");
    }
}

/// client-0 takes the lock at ~0.5 ms and holds it 10 s; server-0 crashes (`mode`: "process" or
/// "machine") at `crash_ms` for 100 ms; client-1 polls all along.
fn restart_mode(persistence: &str, crash_ms: f64, mode: &str) -> locksim_simulator::run::SeedOutcome {
    let text = format!(
        r#"
name = "restart"
duration_ms = 16000
algorithms = ["redis"]
[models.redis]
client = "locksim-1"
persistence = "{persistence}"
[network]
latency_ms = 0.25
[workload]
clients = 2
think_ms = 0
hold_ms = 10000
acquisitions_per_client = 1
[[faults]]
kind = "crash"
target = "server-0"
at_ms = {crash_ms}
duration_ms = 100
mode = "{mode}"
"#
    );
    run(&text, "redis", 3)
}

fn restart(persistence: &str, crash_ms: f64) -> locksim_simulator::run::SeedOutcome {
    restart_mode(persistence, crash_ms, "process")
}

#[test]
fn a_restart_without_persistence_loses_the_lock_and_the_token_counter() {
    let out = restart("none", 2000.0);
    let g = grants(&out);
    assert_eq!(g.len(), 2);
    // The restarted server is empty: the poller gets the lock at its first attempt after the
    // restart (a poll sent while the server was down gets no answer and fails after the 3 s
    // command timeout), and INCR starts again from 1.
    assert!(g[1].0 > 2100.0 && g[1].0 < 2000.0 + 3000.0 + 251.0, "second grant at {}", g[1].0);
    assert_eq!((g[0].2, g[1].2), (Some(1), Some(1)));
    assert_eq!(out.metrics.overlap_events, 1);
    assert_eq!(out.metrics.token_regressions, 1, "token 1 again after token 1");
}

#[test]
fn a_killed_process_with_everysec_keeps_the_lock_and_the_counter() {
    // Crash at 500 ms, before the first fsync (at 1 s): the writes were in the page cache.
    let out = restart("everysec", 500.0);
    let g = grants(&out);
    assert_eq!(out.metrics.overlap_events, 0);
    assert!(g[1].0 > 10_000.0, "second grant at {}", g[1].0);
    assert_eq!(g[1].2, Some(2), "the counter survived");
}

#[test]
fn the_stock_rdb_configuration_loses_the_lock_and_the_counter() {
    // save 3600 1 300 100 60 10000: two seconds and a handful of changes meet no rule, so there
    // is no dump.rdb and the restarted server is empty, whichever way it went down.
    for mode in ["process", "machine"] {
        let out = restart_mode("rdb", 2000.0, mode);
        let g = grants(&out);
        assert_eq!(out.metrics.overlap_events, 1, "{mode}");
        assert_eq!((g[0].2, g[1].2), (Some(1), Some(1)), "{mode}");
        assert!(!notes(&out, "restart: loaded 0 keys from the last RDB snapshot").is_empty(), "{mode}");
        assert!(notes(&out, "BGSAVE").is_empty(), "{mode}: no save rule met");
    }
}

#[test]
fn everysec_loses_what_was_not_fsynced_and_always_keeps_everything() {
    // A lost machine at 500 ms: the first fsync (at 1 s) has not run yet.
    let out = restart_mode("everysec", 500.0, "machine");
    assert_eq!(out.metrics.overlap_events, 1, "the lock was not fsynced");
    assert_eq!(out.metrics.token_regressions, 1, "nor the counter");
    // Crash at 2 s: the fsync at 1 s had the lock and the counter.
    let out = restart_mode("everysec", 2000.0, "machine");
    let g = grants(&out);
    assert_eq!(out.metrics.overlap_events, 0);
    // client-0's unlock at 10 s is refused once (its connection predates the restart) and
    // Redisson sends it again 1.5 s later (retryInterval): the poller gets token 2 after that.
    assert!(g[1].0 > 11_500.0 && g[1].0 < 12_000.0, "second grant at {}", g[1].0);
    assert_eq!(g[1].2, Some(2));
    let out = restart_mode("always", 500.0, "machine");
    assert_eq!(out.metrics.overlap_events, 0);
    assert_eq!(grants(&out)[1].2, Some(2));
    // Client requests that reach the crashed server get no answer and the acquisition fails
    // after Redisson's 3 s command timeout — or the poller simply got refused before; either
    // way no acquisition fails for another reason.
    assert!(events(
        &out,
        |e| matches!(e, HistoryEvent::AcquireFailed { reason, .. } if *reason != FailReason::Unavailable)
    )
    .is_empty());
}

#[test]
fn parameters_out_of_range_name_their_key() {
    let models = locksim_algorithms::registry();
    let bad = |extra: &str, workload: &str| {
        let text = format!(
            "name = \"p\"\nduration_ms = 1000\nalgorithms = [\"redis\"]\n[models.redis]\n{extra}\n[workload]\n{workload}\n"
        );
        locksim_simulator::scenario::parse_str("p.toml", &text, &models).err().map(|e| e.to_string())
    };
    let e = bad("replicas = 1\nsentinels = 3\nquorum = 4", "").expect("quorum above the sentinels");
    assert!(e.contains("quorum"), "{e}");
    let e = bad("replication_lag_ms = -1", "").expect("negative lag");
    assert!(e.contains("replication_lag_ms"), "{e}");
    let e = bad("", "read_fraction = 0.5").expect("no shared locks");
    assert!(e.contains("read_fraction"), "{e}");
    assert!(bad("replicas = 2\nquorum = 3", "").is_none());
    // Times may be normal distributions (draws are clamped at 0): the schema's range admits them.
    assert!(bad("service_ms = { normal = { mean = 0.05, sd = 0.01 } }", "").is_none());
}
