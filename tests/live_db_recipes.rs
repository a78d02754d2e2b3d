//! `sim live` of the db model's library recipes against a real MariaDB server (issue 34 families
//! 2 and 3): Spring Integration's `JdbcLockRegistry` (`client = "spring-jdbc-6"`, the `INT_LOCK`
//! UPDATE-then-INSERT with the acquirer's clock) and ShedLock (`mode = "shedlock"` under the
//! scheduled-job workload, the node's and the database's time). Each runs the library's SQL
//! through the live db adapter; without `mariadbd` (Debian package mariadb-server) the tests print
//! `SKIPPED:` and pass.

#[path = "support/cli.rs"]
#[allow(dead_code)]
mod cli;
#[path = "support/live.rs"]
#[allow(dead_code)]
mod live_support;

use std::path::Path;

use cli::{fresh_dir, s, sim};
use live_support::*;

fn skip(test: &str) -> bool {
    if on_path("mariadbd") || Path::new("/usr/sbin/mariadbd").is_file() {
        return false;
    }
    println!("SKIPPED: {test}: `mariadbd` is not on PATH nor in /usr/sbin (Debian package mariadb-server)");
    true
}

/// A holder paused past Spring's TTL (1 s here, to keep the run short) has its row taken over by
/// the waiter's UPDATE … WHERE CREATED_DATE < now − ttl: overlap and a stale write, live as
/// simulated (known outcome 31b). Without the takeover the waiter would wait for the DELETE,
/// after the holder's section, and nothing would overlap.
#[test]
fn spring_jdbc_holder_paused_past_the_ttl_is_taken_over_live() {
    let _serial = serial();
    if skip("spring_jdbc_holder_paused_past_the_ttl_is_taken_over_live") {
        return;
    }
    let dir = fresh_dir("live-db-recipes", "spring");
    let file = dir.join("spring.toml");
    std::fs::write(
        &file,
        r#"name = "spring-live"
duration_ms = 5_000
seeds = 1

[[variants]]
name = "spring-jdbc-6"
model = "db"
client = "spring-jdbc-6"
ttl_ms = 1_000

[workload]
clients = 2
hold_ms = 2_500
think_ms = 0
acquisitions_per_client = 1

[[faults]]
kind = "pause"
target = "holder"
at_ms = 300
duration_ms = 2_500
"#,
    )
    .unwrap();
    let out = dir.join("results.json");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let json = results(&out);
    let r = row(&json, "spring-jdbc-6");
    assert_eq!(r["acquisitions"], 2, "both clients granted: {r}");
    assert_eq!(r["overlap"]["runs"], 1, "the waiter took the paused holder's row: {r}");
    assert_eq!(r["stale_unfenced"]["runs"], 1, "{r}");
    // 6.4 and later: the resumed holder's DELETE … WHERE CLIENT_ID = ? found nothing.
    assert_eq!(r["failed_releases"], 1, "{r}");
    assert!(!stderr.contains("db adapter:"), "every statement ran: {stderr}");
    assert!(processes_mentioning(&dir).is_empty());
}

/// ShedLock under the scheduled workload: two nodes fire every second; at each tick one runs
/// and the other's UPDATE … WHERE lock_until <= now finds the lock taken and skips. With the
/// nodes' clocks and with the database's (`usingDbTime()`): no overlap, no double execution, one
/// run per tick. A lock statement that always matched would run both nodes every tick (double
/// executions); an unlock that never matched would leave one run in the whole test.
#[test]
fn shedlock_runs_each_tick_once_live() {
    let _serial = serial();
    if skip("shedlock_runs_each_tick_once_live") {
        return;
    }
    let dir = fresh_dir("live-db-recipes", "shedlock");
    let file = dir.join("shedlock.toml");
    std::fs::write(
        &file,
        r#"name = "shedlock-live"
duration_ms = 4_500
seeds = 1

[[variants]]
name = "shedlock-node-time"
model = "db"
mode = "shedlock"
lock_at_most_for_ms = 10_000

[[variants]]
name = "shedlock-db-time"
model = "db"
mode = "shedlock"
lock_at_most_for_ms = 10_000
time_source = "db"

[workload]
kind = "scheduled"
period_ms = 1_000
clients = 2
hold_ms = 200
"#,
    )
    .unwrap();
    let out = dir.join("results.json");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let json = results(&out);
    for label in ["shedlock-node-time", "shedlock-db-time"] {
        let r = row(&json, label);
        let runs = r["acquisitions"].as_u64().unwrap();
        let skipped = r["failed_acquisitions"].as_u64().unwrap();
        // 4.5 s: four or five ticks, depending on where the run starts in the second.
        assert!((3..=5).contains(&runs), "{label}: {runs} runs: {r}");
        assert!(skipped + 1 >= runs, "{label}: the other node skips each tick: {skipped} skipped, {runs} runs: {r}");
        assert_eq!(r["overlap"]["runs"], 0, "{label}: {r}");
        assert_eq!(r["double_executions"]["runs"], 0, "{label}: {r}");
    }
    assert!(!stderr.contains("db adapter:"), "every statement ran: {stderr}");
    assert!(processes_mentioning(&dir).is_empty());
}
