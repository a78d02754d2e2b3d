//! `sim live` of the `postgres` model against a real PostgreSQL 15 server and a real PgBouncer on
//! this machine: a session-level advisory lock through PgBouncer's transaction pooling has two
//! holders, as simulated (known outcome 26a), while the xact lock through the same PgBouncer
//! and the session lock on a direct connection have none. Without PostgreSQL 15
//! (`/usr/lib/postgresql/15/bin/postgres`, Debian package postgresql-15) or `pgbouncer` the test
//! prints `SKIPPED:` and passes.

use std::path::Path;

use crate::support::cli::{fresh_dir, s, sim};
use crate::support::live::*;

const SCENARIO: &str = r#"
name = "live-postgres"
description = "PostgreSQL advisory locks through PgBouncer's transaction pooling, live"
duration_ms = 4_000
seeds = 1
algorithms = []

[[variants]]
name = "pg-session-bouncer-tx"
model = "postgres"
pgbouncer = "transaction"

[[variants]]
name = "pg-xact-bouncer-tx"
model = "postgres"
pgbouncer = "transaction"
scope = "transaction"

[[variants]]
name = "pg-session-direct"
model = "postgres"

[workload]
clients = 5
"#;

fn have_binaries() -> bool {
    Path::new("/usr/lib/postgresql/15/bin/postgres").is_file()
        && (on_path("pgbouncer") || Path::new("/usr/sbin/pgbouncer").is_file())
}

#[test]
fn session_lock_through_pgbouncer_transaction_pooling_overlaps_live() {
    let _serial = serial();
    if !have_binaries() {
        println!("SKIPPED: session_lock_through_pgbouncer_transaction_pooling_overlaps_live: PostgreSQL 15 (postgresql-15) or pgbouncer is not installed");
        return;
    }
    let dir = fresh_dir("live-postgres", "pgbouncer");
    let file = dir.join("live-postgres.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = dir.join("results.json");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("postgres"), "{stdout}");
    let json = results(&out);
    assert_eq!(json["mode"], "live");
    let session = row(&json, "pg-session-bouncer-tx");
    assert_eq!(session["overlap"]["runs"], 1, "the session lock stays on a pooled connection: {session}");
    for label in ["pg-xact-bouncer-tx", "pg-session-direct"] {
        let r = row(&json, label);
        assert_eq!(r["overlap"]["runs"], 0, "{label}: {r}");
        let acquisitions = r["acquisitions"].as_u64().unwrap();
        assert!(acquisitions > 20, "{label}: only {acquisitions} acquisitions in 4 s live: {r}");
    }
    let left = processes_mentioning(&dir);
    assert!(left.is_empty(), "processes left running after sim live: {left:?}");
}
