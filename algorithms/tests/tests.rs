//! The crate's integration tests as one test binary (`cargo test -p locksim-algorithms --test integration`;
//! one binary links once, not once per file). Each file of this folder is a module named after
//! what it pins: `-- redis_failover::` runs one file's tests. A new file must be declared below
//! (the crate sets `autotests = false`); `every_file_is_a_module` fails until it is.

mod common;
mod consensus_common;
mod db_common;
mod etcd_common;
mod kubernetes_common;
mod postgres_common;
mod redis_common;
mod redlock_common;
mod single;
mod walk_common;
mod zookeeper_common;

mod app_check;
mod consensus_engine;
mod consensus_fsync;
mod consensus_probe;
mod consensus_raft;
mod consul_fingerprint;
mod consul_sessions;
mod db_expiry;
mod db_get_lock_wait;
mod db_polling;
mod db_reentrancy;
mod db_replication;
mod db_resets;
mod db_select_for_update;
mod db_shedlock;
mod db_spring_jdbc;
mod dynamodb_fingerprint;
mod dynamodb_lock_client;
mod etcd_failover;
mod etcd_leases;
mod etcd_library;
mod etcd_mutex;
mod etcd_rwmutex;
mod guide_model;
mod hazelcast_fenced_lock;
mod hazelcast_fingerprint;
mod hazelcast_ilock;
mod kubernetes_clocks;
mod kubernetes_library;
mod kubernetes_renew;
mod kubernetes_servers;
mod kubernetes_takeover;
mod postgres_failover;
mod postgres_pgbouncer;
mod postgres_sessions;
mod redis_failover;
mod redis_library;
mod redis_min_replicas;
mod redis_replica_ack_default;
mod redis_resets;
mod redis_single;
mod redis_two_step;
mod redis_watchdog;
mod redlock_chaos;
mod redlock_clock_jump;
mod redlock_crash;
mod redlock_expiry;
mod redlock_extend;
mod redlock_library;
mod redlock_minority;
mod redlock_retries;
mod redlock_validity;
mod server_symmetry;
mod symmetric_fingerprints;
mod workload_client_clock_jump;
mod workload_resource_timeout;
mod world_choices;
mod world_copy;
mod zookeeper_library;
mod zookeeper_partitions;
mod zookeeper_recipes;
mod zookeeper_resets;
mod zookeeper_sessions;
mod zookeeper_zab;

#[test]
fn every_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let root = std::fs::read_to_string(dir.join("tests.rs")).unwrap();
    let files = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap());
    let stems: Vec<String> = files.filter_map(|n| Some(n.strip_suffix(".rs")?.to_string())).collect();
    let missing: Vec<&String> =
        stems.iter().filter(|s| *s != "tests" && !root.contains(&format!("\nmod {s};\n"))).collect();
    assert!(missing.is_empty(), "tests/ files never built (declare them in tests/tests.rs): {missing:?}");
}
