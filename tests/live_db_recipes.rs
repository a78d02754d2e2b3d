//! `sim live` of the db model's library recipes against a real database (issue 34 families 2 and
//! 3): Spring Integration's `JdbcLockRegistry` (`client = "spring-jdbc-6"`, the `INT_LOCK`
//! UPDATE-then-INSERT with the acquirer's clock) and ShedLock (`mode = "shedlock"` under the
//! scheduled-job workload, the node's and the database's time), each on MariaDB (the default
//! `database`) and on PostgreSQL (`database = "postgres"`: the libraries' PostgreSQL SQL,
//! live/src/adapters/postgres_db.rs). Without the database's server (`mariadbd`, Debian package
//! mariadb-server; `/usr/lib/postgresql/15/bin/postgres`, postgresql-15) a test prints
//! `SKIPPED:` and passes.

use std::path::Path;

use crate::support::cli::{fresh_dir, s, sim};
use crate::support::live::*;

/// The server a test's rows run on.
#[derive(Clone, Copy)]
enum Database {
    MariaDb,
    Postgres,
}

impl Database {
    /// The row key that selects it (`database = …`).
    fn key(self) -> &'static str {
        match self {
            Database::MariaDb => "mariadb",
            Database::Postgres => "postgres",
        }
    }

    /// Why it cannot run here, if its server program is missing.
    fn missing(self) -> Option<&'static str> {
        match self {
            Database::MariaDb if on_path("mariadbd") || Path::new("/usr/sbin/mariadbd").is_file() => None,
            Database::MariaDb => Some("`mariadbd` is not on PATH nor in /usr/sbin (Debian package mariadb-server)"),
            Database::Postgres if Path::new("/usr/lib/postgresql/15/bin/postgres").is_file() => None,
            Database::Postgres => {
                Some("PostgreSQL 15 is not in /usr/lib/postgresql/15/bin (Debian package postgresql-15)")
            }
        }
    }
}

/// Runs `scenario` (its `{database}` replaced by the database's key) with `sim live`, one run,
/// and returns the results JSON; `None` (after printing `SKIPPED:`) without the server. Asserts
/// what every run must give: exit 0, every statement run (no adapter error), nothing left running.
fn live_results(test: &str, database: Database, scenario: &str) -> Option<serde_json::Value> {
    if let Some(why) = database.missing() {
        println!("SKIPPED: {test}: {why}");
        return None;
    }
    let dir = fresh_dir("live-db-recipes", test);
    let file = dir.join("scenario.toml");
    std::fs::write(&file, scenario.replace("{database}", database.key())).unwrap();
    let out = dir.join("results.json");
    let (code, stdout, stderr) = sim(&["live", &s(&file), "--json", &s(&out)]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(!stderr.contains("db adapter:"), "every statement ran: {stderr}");
    let left = processes_mentioning(&dir);
    assert!(left.is_empty(), "processes left running after sim live: {left:?}");
    let json = results(&out);
    let program = match database {
        Database::MariaDb => "mariadbd",
        Database::Postgres => "postgres",
    };
    assert!(json["servers"].to_string().contains(program), "the run names its server: {}", json["servers"]);
    Some(json)
}

const SPRING_PAUSED: &str = r#"name = "spring-live"
duration_ms = 5_000
seeds = 1

[[variants]]
name = "spring-jdbc-6"
model = "db"
client = "spring-jdbc-6"
ttl_ms = 1_000
database = "{database}"

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
"#;

/// A holder paused past Spring's TTL (1 s here, to keep the run short) has its row taken over by
/// the waiter's UPDATE … WHERE CREATED_DATE < now − ttl: overlap and a stale write, live as
/// simulated (known outcome 31b). Without the takeover the waiter would wait for the DELETE,
/// after the holder's section, and nothing would overlap.
fn spring_jdbc_paused_holder(test: &str, database: Database) {
    let _serial = serial();
    let Some(json) = live_results(test, database, SPRING_PAUSED) else { return };
    let r = row(&json, "spring-jdbc-6");
    assert_eq!(r["acquisitions"], 2, "both clients granted: {r}");
    assert_eq!(r["overlap"]["runs"], 1, "the waiter took the paused holder's row: {r}");
    assert_eq!(r["stale_unfenced"]["runs"], 1, "{r}");
    // 6.4 and later: the resumed holder's DELETE … WHERE CLIENT_ID = ? found nothing.
    assert_eq!(r["failed_releases"], 1, "{r}");
}

#[test]
fn spring_jdbc_holder_paused_past_the_ttl_is_taken_over_live() {
    spring_jdbc_paused_holder("spring_jdbc_holder_paused_past_the_ttl_is_taken_over_live", Database::MariaDb);
}

#[test]
fn spring_jdbc_on_postgres_holder_paused_past_the_ttl_is_taken_over_live() {
    spring_jdbc_paused_holder(
        "spring_jdbc_on_postgres_holder_paused_past_the_ttl_is_taken_over_live",
        Database::Postgres,
    );
}

const SHEDLOCK_TICKS: &str = r#"name = "shedlock-live"
duration_ms = 4_500
seeds = 1

[[variants]]
name = "shedlock-node-time"
model = "db"
mode = "shedlock"
lock_at_most_for_ms = 10_000
database = "{database}"

[[variants]]
name = "shedlock-db-time"
model = "db"
mode = "shedlock"
lock_at_most_for_ms = 10_000
time_source = "db"
database = "{database}"

[workload]
kind = "scheduled"
period_ms = 1_000
clients = 2
hold_ms = 200
"#;

/// ShedLock under the scheduled workload: two nodes fire every second; at each tick one runs
/// and the other's UPDATE … WHERE lock_until <= now finds the lock taken and skips. With the
/// nodes' clocks and with the database's (`usingDbTime()`): no overlap, no double execution, one
/// run per tick. A lock statement that always matched would run both nodes every tick (double
/// executions); an unlock that never matched would leave one run in the whole test.
fn shedlock_ticks(test: &str, database: Database) {
    let _serial = serial();
    let Some(json) = live_results(test, database, SHEDLOCK_TICKS) else { return };
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
}

#[test]
fn shedlock_runs_each_tick_once_live() {
    shedlock_ticks("shedlock_runs_each_tick_once_live", Database::MariaDb);
}

#[test]
fn shedlock_on_postgres_runs_each_tick_once_live() {
    shedlock_ticks("shedlock_on_postgres_runs_each_tick_once_live", Database::Postgres);
}

/// The row's `database` takes `"mariadb"` or `"postgres"` and says so; PostgreSQL runs only the
/// libraries' recipes, and a MySQL recipe there is refused naming the key (exit 2, no server
/// needed).
#[test]
fn database_names_its_choices_and_postgres_refuses_the_mysql_recipes() {
    let dir = fresh_dir("live-db-recipes", "database-key");
    for (value, mode, expected) in [
        ("oracle", "table", "expected one of \"mariadb\", \"postgres\", found \"oracle\""),
        ("postgres", "get_lock", "mode = \"get_lock\" is MySQL's"),
        ("postgres", "table", "mode = \"table\" is MySQL's"),
    ] {
        let file = dir.join(format!("{value}-{mode}.toml"));
        std::fs::write(
            &file,
            format!(
                "name = \"x\"\nduration_ms = 1_000\n\n[[variants]]\nname = \"a\"\nmodel = \"db\"\nmode = \"{mode}\"\ndatabase = \"{value}\"\n"
            ),
        )
        .unwrap();
        let (code, stdout, stderr) = sim(&["check", &s(&file)]);
        assert_eq!(code, 2, "{value}, {mode}: {stdout}{stderr}");
        assert!(
            stderr.contains(":8:") && stderr.contains("database"),
            "{value}, {mode}: names the line and key: {stderr}"
        );
        assert!(stderr.contains(expected), "{value}, {mode}: {stderr}");
    }
}
