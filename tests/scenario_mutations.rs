//! The library scenarios' expectations must be tight enough to notice when the scenario stops
//! doing what its description says. Each case breaks one library file in the way its
//! description says matters (drops the fault, removes the loss, turns a host failure into a
//! killed process, shrinks the herd, …), runs the affected row at 20 seeds, and requires `sim
//! run` to report failed expectations (exit 1). A case whose mutation no longer applies (the
//! text it edits is gone) fails too, so an edit to a scenario cannot silently retire its check.
//! `tests/scenarios.rs` checks that the unbroken files meet their expectations. Known outcomes
//! (`known/…`) may have cases too: each file a new model family adds gets one.

use std::path::PathBuf;
use std::process::Command;

/// One way to break a scenario.
struct Mutation {
    /// The library file, under `scenarios/`.
    file: &'static str,
    /// What the mutation does, for failure messages.
    what: &'static str,
    /// The row whose expectations must notice.
    row: &'static str,
    /// Text replaced (must occur in the file) and its replacement.
    from: &'static str,
    to: &'static str,
}

const MUTATIONS: &[Mutation] = &[
    // Issue 34 families 2 and 3 (ShedLock, Spring JdbcLockRegistry): each known outcome without
    // the fault or the setting its description says matters.
    Mutation {
        file: "known/30-db-shedlock-clock-skew.toml",
        what: "the nodes' clocks together (no 179 s step)",
        row: "shedlock-node-time",
        from: "by_ms = 179_000",
        to: "by_ms = 0",
    },
    Mutation {
        file: "known/30-db-shedlock-paused-holder.toml",
        what: "no stop-the-world pause",
        row: "shedlock-at-most-5s",
        from: "duration_ms = 20_000",
        to: "duration_ms = 0",
    },
    Mutation {
        file: "known/30-db-shedlock-job-outlives-lock.toml",
        what: "a 30 s job, shorter than lockAtMostFor",
        row: "shedlock-at-most-1min",
        from: "hold_ms = 300_000",
        to: "hold_ms = 30_000",
    },
    Mutation {
        file: "known/30-db-shedlock-db-time-short-job.toml",
        what: "the nodes' ticks in phase (a 180 s step, three whole periods)",
        row: "shedlock-db-time",
        from: "by_ms = 200_000",
        to: "by_ms = 180_000",
    },
    Mutation {
        file: "known/31-db-spring-jdbc-clock-step.toml",
        what: "a 1 s clock step: the row looks 10 s old only after the 8 s section",
        row: "spring-jdbc-6",
        from: "by_ms = 15_000",
        to: "by_ms = 1_000",
    },
    Mutation {
        file: "known/31-db-spring-jdbc-paused-holder.toml",
        what: "a 5 s pause, over before the 10 s TTL",
        row: "spring-jdbc-6",
        from: "duration_ms = 15_000",
        to: "duration_ms = 5_000",
    },
    Mutation {
        file: "baseline.toml",
        what: "a holder frozen for 40 s in the no-fault control",
        row: "redlock",
        from: "[expect.db]",
        to: "[[faults]]\nkind = \"pause\"\ntarget = \"holder\"\nat_ms = 5_000\nduration_ms = 40_000\n\n[expect.db]",
    },
    Mutation {
        file: "clock-drift.toml",
        what: "the large server clock step removed",
        row: "redlock",
        from: "by_ms = { uniform = [20_000, 60_000] }",
        to: "by_ms = 0",
    },
    Mutation {
        file: "gc-pause.toml",
        what: "the holder's pause removed",
        row: "redis",
        from: "duration_ms = { choice = [5_000, 20_000, 45_000, 65_000, 80_000] }",
        to: "duration_ms = 0",
    },
    Mutation {
        file: "gc-pause.toml",
        what: "etcd's lease at 30 s instead of 60 s",
        row: "etcd",
        from: "[expect.db]",
        to: "[models.etcd]\nlease_ttl_ms = 30_000\n\n[expect.db]",
    },
    Mutation {
        file: "gc-pause.toml",
        what: "ZooKeeper's session at 10 s instead of 40 s",
        row: "zookeeper",
        from: "[expect.db]",
        to: "[models.zookeeper]\nsession_timeout_ms = 10_000\n\n[expect.db]",
    },
    Mutation {
        file: "gc-pause.toml",
        what: "Redlock's TTL at 30 s instead of 10 s",
        row: "redlock",
        from: "[expect.db]",
        to: "[models.redlock]\nttl_ms = 30_000\n\n[expect.db]",
    },
    Mutation {
        file: "herd.toml",
        what: "5 clients instead of 50",
        row: "zookeeper-herd",
        from: "clients = 50",
        to: "clients = 5",
    },
    Mutation {
        file: "partition.toml",
        what: "the minority partition healed before it starts",
        row: "redis-sentinel",
        from: "at_ms = { uniform = [5_000, 10_000] }\nduration_ms = 45_000",
        to: "at_ms = { uniform = [5_000, 10_000] }\nduration_ms = 0",
    },
    Mutation { file: "lossy-network.toml", what: "no loss", row: "zookeeper", from: "loss = 0.01", to: "loss = 0.0" },
    Mutation {
        file: "failover.toml",
        what: "the primary survives (crash of no length)",
        row: "redis",
        from: "duration_ms = 20_000",
        to: "duration_ms = 0",
    },
    Mutation {
        file: "failover-host.toml",
        what: "a killed process instead of a failed host",
        row: "zookeeper",
        from: "duration_ms = 20_000\nmode = \"machine\"",
        to: "duration_ms = 20_000\nmode = \"process\"",
    },
    Mutation {
        file: "known/24-consul-partitioned-holder.toml",
        what: "the cut-off holder's section ends (5 s) before serfHealth invalidates its session (~6 s)",
        row: "consul",
        from: "hold_ms = 40_000",
        to: "hold_ms = 5_000",
    },
    Mutation {
        file: "known/25-consul-pause-lock-delay.toml",
        what: "a 15 s pause, shorter than failure detection plus the 15 s lock-delay",
        row: "consul",
        from: "duration_ms = 30_000",
        to: "duration_ms = 15_000",
    },
    Mutation {
        file: "known/27-hazelcast-paused-holder-fenced.toml",
        what: "a 290 s pause, inside the 300 s session TTL",
        row: "hazelcast",
        from: "duration_ms = 330_000",
        to: "duration_ms = 290_000",
    },
    Mutation {
        file: "known/28-dynamodb-paused-holder.toml",
        what: "a 15 s pause, shorter than the 20 s lease",
        row: "dynamodb",
        from: "duration_ms = 30_000",
        to: "duration_ms = 15_000",
    },
    Mutation {
        file: "known/29-dynamodb-heartbeat-applied-but-failed.toml",
        what: "the heartbeat not slowed: it is answered in time",
        row: "dynamodb",
        from: "latency_ms = 3_000",
        to: "latency_ms = 0",
    },
    Mutation {
        file: "families.toml",
        what: "PostgreSQL's idle_session_timeout at 10 s: the paused holder's session is ended under it",
        row: "postgres",
        from: "[workload]\nclients = 10\nhold_ms",
        to: "[models.postgres]\nidle_session_timeout_ms = 10_000\n\n[workload]\nclients = 10\nhold_ms",
    },
    Mutation {
        file: "known/26-postgres-pgbouncer-session-lock.toml",
        what: "the transaction-pooled row takes an xact lock instead of a session lock",
        row: "pg-session-bouncer-tx",
        from: "name = \"pg-session-bouncer-tx\"\nmodel = \"postgres\"\npgbouncer = \"transaction\"",
        to: "name = \"pg-session-bouncer-tx\"\nmodel = \"postgres\"\npgbouncer = \"transaction\"\nscope = \"transaction\"",
    },
    Mutation {
        file: "known/26-postgres-silent-client.toml",
        what: "a killed holder process (reset at once) instead of a lost machine",
        row: "pg-keepalive-default",
        from: "mode = \"machine\"",
        to: "mode = \"process\"",
    },
    Mutation {
        file: "known/26-postgres-failover.toml",
        what: "the primary killed at 50 s, after the paused holder's section, so the promotion comes after the run",
        row: "pg-session",
        from: "target = \"server-0\"\nat_ms = 5_000",
        to: "target = \"server-0\"\nat_ms = 50_000",
    },
];

fn scenario_text(file: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios").join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn every_library_scenario_has_a_mutation_case() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".toml") {
            assert!(MUTATIONS.iter().any(|m| m.file == name), "scenarios/{name} has no case in {}", file!());
        }
    }
}

#[test]
fn breaking_a_library_scenario_fails_its_expectations() {
    let tmp = std::env::temp_dir().join(format!("locksim-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut survivors = Vec::new();
    for m in MUTATIONS {
        let text = scenario_text(m.file);
        assert!(
            text.contains(m.from),
            "{}: the mutation '{}' no longer applies: {:?} is not in the file",
            m.file,
            m.what,
            m.from
        );
        let mutated = text.replacen(m.from, m.to, 1);
        let path = tmp.join(m.file);
        // Known-outcome cases name their subfolder (`known/…`).
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, mutated).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(["run", path.to_str().unwrap(), "--algorithm", m.row, "--seeds", "20", "--judge-all"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        match out.status.code() {
            Some(1) => {}
            code => survivors.push(format!(
                "{} ({}, row {}): exit {code:?}, expected 1 (expectations failed)\n{}{}",
                m.file,
                m.what,
                m.row,
                stdout.lines().filter(|l| l.contains("expect")).collect::<Vec<_>>().join("\n"),
                stderr.lines().take(3).collect::<Vec<_>>().join("\n"),
            )),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(survivors.is_empty(), "mutations the expectations did not notice:\n{}", survivors.join("\n\n"));
}

/// The incident corpus (`scenarios/incidents/`, issue 35): each incident's `broken` row must stop
/// failing when its fault is removed or its fix applied, so that its expectations are shown to
/// depend on the mechanism the file's header describes (the mutated `broken` row's `[expect]`
/// must then fail, exit 1).
const INCIDENT_MUTATIONS: &[Mutation] = &[
    Mutation {
        file: "redisson-5698-watchdog-stops-after-failed-renewal.toml",
        what: "the fix: Redisson 3.44, which reschedules a failed renewal",
        row: "broken",
        from: "client = \"redisson-3.27\"",
        to: "client = \"redisson-3.44\"",
    },
    Mutation {
        file: "redisson-2669-lock-lost-in-failover.toml",
        what: "the fix: WAIT after the lock script (checkLockSyncedSlaves)",
        row: "broken",
        from: "replica_ack = false   # checkLockSyncedSlaves = false: no WAIT",
        to: "replica_ack = true    # checkLockSyncedSlaves = true: WAIT",
    },
    Mutation {
        file: "redisson-3636-holder-cut-off-from-redis.toml",
        what: "the holder's link to Redis never cut",
        row: "broken",
        from: "duration_ms = 60_000",
        to: "duration_ms = 0",
    },
    Mutation {
        file: "redisson-2665-frozen-jvm-unlock-throws.toml",
        what: "no freeze",
        row: "broken",
        from: "duration_ms = 40_000",
        to: "duration_ms = 0",
    },
    Mutation {
        file: "etcd-11456-waiter-lease-expired.toml",
        what: "the fix: clientv3 3.5's re-check after waiting",
        row: "broken",
        from: "client = \"clientv3-3.4\"",
        to: "client = \"clientv3-3.5\"",
    },
    Mutation {
        file: "etcd-10811-holder-cut-off-keeps-writing.toml",
        what: "the fix: the application stops at Session.Done()",
        row: "broken",
        from: "on_session_lost = \"proceed\"",
        to: "on_session_lost = \"stop\"",
    },
    Mutation {
        file: "curator-206-holder-session-expired-unaware.toml",
        what: "the fix: SUSPENDED treated as the lock's loss",
        row: "broken",
        from: "on_connection_loss = \"lost\"",
        to: "on_connection_loss = \"suspended\"",
    },
    Mutation {
        file: "openshift-leader-election-apiserver-downtime.toml",
        what: "no API-server outage",
        row: "broken",
        from: "duration_ms = 60_000",
        to: "duration_ms = 0",
    },
    Mutation {
        file: "redis-py-commcare-lock-timed-out.toml",
        what: "the fix: a timeout above the longest section",
        row: "broken",
        from: "ttl_ms = 10_000",
        to: "ttl_ms = 60_000",
    },
    Mutation {
        file: "node-redlock-65-release-after-expiry.toml",
        what: "the fix: a TTL above the longest task",
        row: "broken",
        from: "ttl_ms = 10_000",
        to: "ttl_ms = 60_000",
    },
    Mutation {
        file: "shedlock-231-node-clocks-apart.toml",
        what: "no clock step between the nodes",
        row: "broken",
        from: "by_ms = 179_000",
        to: "by_ms = 0",
    },
    Mutation {
        file: "shedlock-132-gc-pause.toml",
        what: "no stop-the-world pause",
        row: "broken",
        from: "duration_ms = 20_000",
        to: "duration_ms = 0",
    },
    Mutation {
        file: "shedlock-1502-job-outlives-lock.toml",
        what: "the fix: lockAtMostFor longer than the job",
        row: "broken",
        from: "lock_at_most_for_ms = 60_000",
        to: "lock_at_most_for_ms = 600_000",
    },
    Mutation {
        file: "redis-py-818-crash-between-setnx-and-pexpire.toml",
        what: "the fix: redis-py 3.0's one SET NX PX",
        row: "broken",
        from: "acquire = \"setnx_then_expire\"   # redis-py 2.10.5 Lock.do_acquire",
        to: "",
    },
    Mutation {
        file: "golang-migrate-992-advisory-lock-through-pgbouncer.toml",
        what: "the fix: a transaction-scoped advisory lock",
        row: "broken",
        from: "pgbouncer = \"transaction\"\n\n[[variants]]",
        to: "pgbouncer = \"transaction\"\nscope = \"transaction\"\n\n[[variants]]",
    },
    Mutation {
        file: "redsync-149-extend-after-restarts.toml",
        what: "the fix: WithSetNXOnExtend's extend script (SET where the key is missing)",
        row: "broken",
        from: "extend = \"pexpire_if_value\"   # touchScript",
        to: "extend = \"pexpire_or_set\"   # touchScript",
    },
    Mutation {
        file: "redsync-149-extend-after-restarts.toml",
        what: "no second restart",
        row: "broken",
        from: "at_ms = { uniform = [30_000, 32_000] }",
        to: "at_ms = 70_000",
    },
];

#[test]
fn every_incident_has_a_mutation_case() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/incidents");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().to_string();
        if name.ends_with(".toml") && !name.ends_with(".shrunk.toml") {
            assert!(
                INCIDENT_MUTATIONS.iter().any(|m| m.file == name),
                "scenarios/incidents/{name} has no case in {}",
                file!()
            );
        }
    }
}

#[test]
fn removing_an_incidents_fault_or_applying_its_fix_fails_its_broken_row() {
    let tmp = std::env::temp_dir().join(format!("locksim-incident-mutations-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut survivors = Vec::new();
    for m in INCIDENT_MUTATIONS {
        let text = scenario_text(&format!("incidents/{}", m.file));
        assert!(
            text.contains(m.from),
            "incidents/{}: the mutation '{}' no longer applies: {:?} is not in the file",
            m.file,
            m.what,
            m.from
        );
        let path = tmp.join(m.file);
        std::fs::write(&path, text.replacen(m.from, m.to, 1)).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_sim"))
            .args(["run", path.to_str().unwrap(), "--algorithm", m.row, "--seeds", "20", "--judge-all"])
            .output()
            .unwrap();
        if out.status.code() != Some(1) {
            survivors.push(format!(
                "incidents/{} ({}, row {}): exit {:?}, expected 1 (expectations failed)\n{}",
                m.file,
                m.what,
                m.row,
                out.status.code(),
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .filter(|l| l.contains("expect"))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(survivors.is_empty(), "mutations the incident expectations did not notice:\n{}", survivors.join("\n\n"));
}
