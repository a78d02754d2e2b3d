//! The `db` model's live backend: one real MariaDB server (Debian's `mariadb-server` 10.11),
//! configured from the model's parameters, holding the model's lock table; the model's client
//! library through [`DbAdapter`]. A row with `database = "postgres"` (Spring JDBC and ShedLock
//! only) gets one PostgreSQL 15 server instead ([`crate::backends::postgres::postgres_server`],
//! its defaults) with the libraries' tables, and the PostgreSQL session
//! ([`crate::adapters::postgres_db`]).
//!
//! - `servers()` initialises a fresh data directory with `mariadb-install-db` (about 2 s: the
//!   system tables are written and fsynced), with a passwordless `root` reachable only on
//!   127.0.0.1, and writes the init file the server runs at every start (also after a kill):
//!   the `locksim` database, the lock table with the model's schema (`table.rs`), and the cleanup
//!   job as a MariaDB event. Grant tables stay on: the event scheduler does not run without them.
//! - `mariadbd` runs in the foreground on a free loopback port, InnoDB durable on each commit
//!   (`innodb_flush_log_at_trx_commit = 1`, the default and the model's "durable across a crash").
//!   A kill and restart is InnoDB's crash recovery on the same data directory: the table, its
//!   AUTO_INCREMENT counter and the event come back, sessions and their `GET_LOCK`s do not.
//! - Refused: `replication` other than `none` (no replica and no failover manager are started in
//!   live mode yet); `autoinc_persistent = false` (MariaDB ≥ 10.2.4 keeps the counter across a
//!   restart, MDEV-6076: the 5.7 behaviour cannot be had from this server); and timings the real
//!   server cannot take exactly (whole seconds for `innodb_lock_wait_timeout` and the event's
//!   period, microseconds for `update_time`).

use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use locksim_algorithms::db::Db;
use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;
use mysql::prelude::Queryable;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;

use crate::adapters::db::{connect_opts, DbAdapter, MariaDb, Recipe, DATABASE, FOR_UPDATE_ROWS, NAME_PREFIX};
use crate::adapters::postgres_db::{self, PgSession};
use crate::backend::Backend;
use crate::backends::postgres::{pg_binary, postgres_server, postgres_version, serve_after};
use crate::client::{self, ClientSpec};
use crate::probe::{through_a_thread, Probe, ProbeSets};
use crate::servers::{self, Server};

/// InnoDB's redo log and buffer pool, smaller than the stock 96 MiB and 128 MiB so that a run's
/// throwaway data directory stays at about 25 MiB; neither changes what a commit makes durable.
const SMALL_INNODB: [&str; 2] = ["--innodb-log-file-size=8M", "--innodb-buffer-pool-size=16M"];

/// `mariadb-install-db` may take this long before the run is failed.
const INSTALL_LIMIT: Duration = Duration::from_secs(60);

/// A MariaDB program: on `PATH`, else in `/usr/sbin` (Debian installs `mariadbd` there, and a
/// non-root `PATH` often lacks it).
fn find(binary: &str) -> Result<PathBuf, String> {
    servers::find_binary(binary, "mariadb-server").or_else(|e| {
        let sbin = Path::new("/usr/sbin").join(binary);
        if sbin.is_file() {
            Ok(sbin)
        } else {
            Err(e)
        }
    })
}

/// A duration in milliseconds as a whole number of `unit_ms`, if it is one.
fn whole(ms: f64, unit_ms: f64) -> Option<u64> {
    let n = ms / unit_ms;
    (n >= 0.0 && n.fract() == 0.0 && n < 1e15).then_some(n as u64)
}

/// Whether this process runs as root (`/proc/self` belongs to the effective user).
fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// Whether `server` is a PostgreSQL one (its command runs `postgres`, possibly via `setpriv`).
fn is_postgres(server: &Server) -> bool {
    server.command.iter().any(|a| Path::new(a).file_name().is_some_and(|f| f == "postgres"))
}

/// `sim compare`'s calibration on PostgreSQL: a committed single-row upsert, as each of the
/// recipes' statements is one autocommitted (or committed) single-row write.
fn probe_postgres(servers: &[Server], n: usize) -> Result<Vec<Probe>, String> {
    let addr = servers.first().ok_or("no server started")?.addr();
    let mut c = crate::adapters::postgres::connect(&addr)?;
    c.batch_execute("CREATE TABLE IF NOT EXISTS calibrate (id int PRIMARY KEY, v bigint)")
        .map_err(|e| e.to_string())?;
    let ms = through_a_thread(n, move |i| {
        c.batch_execute(&format!("INSERT INTO calibrate VALUES (1, {i}) ON CONFLICT (id) DO UPDATE SET v = excluded.v"))
            .map_err(|e| e.to_string())
    })?;
    Ok(vec![Probe { what: "a committed single-row upsert (PostgreSQL)", round_trip_ms: ms, sets: ProbeSets::Service }])
}

/// The SQL the server runs at every start (`--init-file`): idempotent, so a restart after a kill
/// finds what crash recovery kept and adds nothing.
fn init_sql(params: &Params) -> String {
    let mut sql = vec![
        format!("CREATE DATABASE IF NOT EXISTS {DATABASE}"),
        // The model's table (`algorithms/src/db/table.rs`): the auto-increment id is the fencing
        // token, the name is unique, every update refreshes update_time (microseconds, so the
        // cleanup compares as the model's nanosecond clock does, to the microsecond).
        format!(
            "CREATE TABLE IF NOT EXISTS {DATABASE}.locks (\
id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, \
name VARCHAR(64) NOT NULL, \
owner BIGINT UNSIGNED NOT NULL, \
count INT UNSIGNED NOT NULL, \
update_time TIMESTAMP(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), \
UNIQUE KEY name (name)) ENGINE=InnoDB"
        ),
        // Spring Integration's INT_LOCK (`schema-mysql.sql`: LOCK_KEY, REGION, CLIENT_ID,
        // CREATED_DATE, primary key (LOCK_KEY, REGION)), its times as the model's nanoseconds.
        format!(
            "CREATE TABLE IF NOT EXISTS {DATABASE}.int_lock (\
LOCK_KEY VARCHAR(64) NOT NULL, \
REGION VARCHAR(100) NOT NULL, \
CLIENT_ID BIGINT UNSIGNED NOT NULL, \
CREATED_DATE BIGINT NOT NULL, \
PRIMARY KEY (LOCK_KEY, REGION)) ENGINE=InnoDB"
        ),
        // ShedLock's table (README: name VARCHAR(64) primary key, lock_until, locked_at,
        // locked_by), its times as the model's nanoseconds.
        format!(
            "CREATE TABLE IF NOT EXISTS {DATABASE}.shedlock (\
name VARCHAR(64) NOT NULL PRIMARY KEY, \
lock_until BIGINT NOT NULL, \
locked_at BIGINT NOT NULL, \
locked_by BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB"
        ),
    ];
    let expire_ms = params.f64("expire_ms");
    match params.str("mode") {
        "table" if expire_ms > 0.0 => {
            // The cleanup job on the primary (`server.rs`, `DbServer::cleanup`): every
            // cleanup_every_ms, DELETE the rows whose update_time is older than expire_ms, by the
            // server's wall clock. The event scheduler runs it inside the server.
            let every_s = whole(params.f64("cleanup_every_ms"), 1000.0).expect("checked");
            let expire_us = whole(expire_ms, 0.001).expect("checked");
            sql.push(format!(
                "CREATE DEFINER = 'root'@'localhost' EVENT IF NOT EXISTS {DATABASE}.cleanup \
ON SCHEDULE EVERY {every_s} SECOND \
DO DELETE FROM {DATABASE}.locks WHERE update_time < NOW(6) - INTERVAL {expire_us} MICROSECOND"
            ));
        }
        "select_for_update" => {
            // The rows exist beforehand (the Sequence engine, built into MariaDB, numbers them).
            sql.push(format!(
                "INSERT IGNORE INTO {DATABASE}.locks (name, owner, count) \
SELECT CONCAT('{}', seq), 0, 1 FROM {DATABASE}.seq_0_to_{}",
                NAME_PREFIX,
                FOR_UPDATE_ROWS - 1
            ));
        }
        _ => {}
    }
    sql.into_iter().map(|s| s + ";\n").collect()
}

/// Runs `mariadb-install-db` for a fresh data directory, in its own process group so that a
/// hung one is killed whole (it is a script that starts `mariadbd --bootstrap`).
fn install(datadir: &Path, log: &Path) -> Result<(), String> {
    let binary = find("mariadb-install-db")?;
    let out = std::fs::File::create(log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut cmd = Command::new(&binary);
    cmd.arg("--no-defaults")
        .arg(format!("--datadir={}", datadir.display()))
        // root@localhost, root@127.0.0.1 with no password: the throwaway instance listens on
        // 127.0.0.1 only.
        .arg("--auth-root-authentication-method=normal")
        .arg("--skip-test-db")
        .arg("--skip-name-resolve")
        .args(SMALL_INNODB)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .process_group(0);
    if is_root() {
        cmd.arg("--user=root");
    }
    let mut child = cmd.spawn().map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(5).collect();
                return Err(format!("mariadb-install-db failed ({status}): {}", tail.join(" / ")));
            }
            Ok(None) if start.elapsed() < INSTALL_LIMIT => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = killpg(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
                let _ = child.wait();
                return Err(format!("mariadb-install-db did not finish within {} s", INSTALL_LIMIT.as_secs()));
            }
        }
    }
}

/// `db`: one MariaDB server (replication and failover are not started yet).
pub struct DbBackend;

/// Which server a row runs on (`database`, after the client preset).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Database {
    MariaDb,
    Postgres,
}

impl Database {
    /// The row's `database`; anything but `"postgres"` (the parser allows only the two) is MariaDB.
    fn of(params: &Params) -> Database {
        if params.str("database") == "postgres" {
            Database::Postgres
        } else {
            Database::MariaDb
        }
    }
}

/// Refuses what a PostgreSQL row cannot run live (the model already refuses other modes and a
/// replica in any run), and a missing server.
fn check_postgres(params: &Params) -> Result<(), String> {
    let params = locksim_algorithms::db::library::resolve(params);
    let mode = params.str("mode");
    if !matches!(mode, "spring_jdbc" | "shedlock") {
        return Err(format!(
            "database = \"postgres\": mode = \"{mode}\" is MySQL's; live mode runs spring_jdbc and shedlock on PostgreSQL"
        ));
    }
    if params.str("replication") != "none" {
        return Err(
            "database = \"postgres\": live mode starts one PostgreSQL server (set replication = \"none\")".into()
        );
    }
    pg_binary("postgres").map(|_| ())
}

impl Backend for DbBackend {
    fn check(&self, params: &Params) -> Result<(), String> {
        if Database::of(params) == Database::Postgres {
            return check_postgres(params);
        }
        let replication = params.str("replication");
        if replication != "none" {
            return Err(format!(
                "replication = \"{replication}\": live mode starts one MariaDB server; a replica, its binlog shipping and \
the failover manager are not started in live mode yet (set replication = \"none\")"
            ));
        }
        if !params.bool("autoinc_persistent") {
            return Err(
                "autoinc_persistent = false (MySQL 5.7's counter, recomputed as MAX(id) + 1 at restart) cannot \
be run live: MariaDB 10.11 writes the AUTO_INCREMENT counter to the redo log and keeps it across a restart \
(persistent since 10.2.4, MDEV-6076); set autoinc_persistent = true"
                    .to_string(),
            );
        }
        let lock_wait_ms = params.f64("lock_wait_timeout_ms");
        if whole(lock_wait_ms, 1000.0).is_none() {
            return Err(format!(
                "lock_wait_timeout_ms = {lock_wait_ms}: innodb_lock_wait_timeout takes whole seconds; use a multiple of 1000"
            ));
        }
        let expire_ms = params.f64("expire_ms");
        if params.str("mode") == "table" && expire_ms > 0.0 {
            let every_ms = params.f64("cleanup_every_ms");
            if whole(every_ms, 1000.0).is_none_or(|s| s == 0) {
                return Err(format!(
                    "cleanup_every_ms = {every_ms}: the cleanup job is a MariaDB event, scheduled in whole seconds \
(EVERY n SECOND); use a multiple of 1000"
                ));
            }
            if whole(expire_ms, 0.001).is_none() {
                return Err(format!(
                    "expire_ms = {expire_ms}: update_time is kept to the microsecond (TIMESTAMP(6)); use a whole number of microseconds"
                ));
            }
        }
        Ok(())
    }

    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        if Database::of(params) == Database::Postgres {
            // PostgreSQL 15 with its defaults: the libraries' statements wait on no setting of it.
            return Ok(vec![postgres_server(root, &[])?]);
        }
        let binary = find("mariadbd")?;
        let port = servers::free_port()?;
        let dir = root.join("server-0");
        let datadir = dir.join("data");
        std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        install(&datadir, &dir.join("install.log"))?;
        let init = dir.join("init.sql");
        std::fs::write(&init, init_sql(params)).map_err(|e| format!("cannot write {}: {e}", init.display()))?;
        let lock_wait_s = whole(params.f64("lock_wait_timeout_ms"), 1000.0).expect("checked");
        let mut command = vec![
            binary.display().to_string(),
            "--no-defaults".into(),
            format!("--datadir={}", datadir.display()),
            format!("--port={port}"),
            "--bind-address=127.0.0.1".into(),
            "--skip-networking=0".into(),
            format!("--socket={}", datadir.join("mariadbd.sock").display()),
            format!("--pid-file={}", datadir.join("mariadbd.pid").display()),
            format!("--log-error={}", dir.join("mariadb.log").display()),
            "--skip-name-resolve".into(),
            format!("--init-file={}", init.display()),
            // The cleanup job's scheduler (MariaDB's default is OFF).
            "--event-scheduler=ON".into(),
            // Durable at each commit (the default, stated: the model's server is).
            "--innodb-flush-log-at-trx-commit=1".into(),
            // A locking read waits this long for a row lock before error 1205 (MariaDB 10.11
            // default 50 s, the model's default). `lock_wait_timeout` (metadata locks, 1 day)
            // is left as it is: no statement here waits on a metadata lock held by another.
            format!("--innodb-lock-wait-timeout={lock_wait_s}"),
        ];
        command.extend(SMALL_INNODB.iter().map(|s| s.to_string()));
        if is_root() {
            // mariadbd refuses to run as root unless told to.
            command.push("--user=root".into());
        }
        Ok(vec![Server { node: "server-0".to_string(), port, dir, command, proc: None }])
    }

    fn ready(&self, servers: &[Server]) -> Result<(), String> {
        if let Some(s) = servers.first().filter(|s| is_postgres(s)) {
            return serve_after(s, postgres_db::SCHEMA);
        }
        // The port opens before the init file has run: wait until the table answers.
        let start = Instant::now();
        let mut last = String::new();
        for s in servers {
            loop {
                let tried = connect_opts(&s.addr()).and_then(|o| {
                    let mut c = mysql::Conn::new(o).map_err(|e| e.to_string())?;
                    c.query_drop("SELECT COUNT(*) FROM locks").map_err(|e| e.to_string())
                });
                match tried {
                    Ok(()) => {
                        // A failed statement of the init file is logged, not fatal: fail here.
                        let log = std::fs::read_to_string(s.dir.join("mariadb.log")).unwrap_or_default();
                        if let Some(line) = log.lines().find(|l| l.starts_with("ERROR")) {
                            return Err(format!("{}: the init file failed: {line}", s.node));
                        }
                        break;
                    }
                    Err(e) if start.elapsed() < Duration::from_secs(20) => {
                        last = e;
                        std::thread::sleep(Duration::from_millis(50));
                    }
                    Err(e) => {
                        return Err(format!("{}: the lock table did not answer within 20 s: {e} ({last})", s.node))
                    }
                }
            }
        }
        Ok(())
    }

    fn versions(&self) -> Vec<(String, String)> {
        let v = find("mariadbd").map(|b| servers::version_of(&b, "--version")).unwrap_or_else(|e| e);
        vec![("mariadbd".to_string(), v)]
    }

    fn versions_for(&self, params: &Params) -> Vec<(String, String)> {
        match Database::of(params) {
            Database::Postgres => vec![postgres_version()],
            Database::MariaDb => self.versions(),
        }
    }

    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        // The row's recipe after its preset (a spring-jdbc-* client sets mode = spring_jdbc).
        let params = locksim_algorithms::db::library::resolve(&run.params);
        let reentrant = params.bool("reentrant");
        let recipe = if params.str("mode") == "spring_jdbc" { Recipe::SpringJdbc } else { Recipe::Locks };
        match Database::of(&params) {
            Database::Postgres => client::run_typed(&Db, setup, run, spec, |servers, tx| {
                Box::new(DbAdapter::<PgSession>::new(servers, tx, reentrant, recipe))
            }),
            Database::MariaDb => client::run_typed(&Db, setup, run, spec, |servers, tx| {
                Box::new(DbAdapter::<MariaDb>::new(servers, tx, reentrant, recipe))
            }),
        }
    }

    fn probe_requests_ms(&self, params: &Params, servers: &[Server], n: usize) -> Option<Result<Vec<Probe>, String>> {
        // The statement kind the row's recipe sends: with `mode = "get_lock"` the named-lock
        // calls (in memory, nothing committed), else a committed single-row write, as the lock
        // row's INSERT, UPDATE and DELETE (and select_for_update's transaction) are.
        let get_lock = params.str("mode") == "get_lock";
        if Database::of(params) == Database::Postgres {
            return Some(probe_postgres(servers, n));
        }
        let probe = || {
            let addr = servers.first().ok_or("no server started")?.addr();
            let mut c = mysql::Conn::new(connect_opts(&addr)?).map_err(|e| e.to_string())?;
            if get_lock {
                let ms = through_a_thread(n, move |i| {
                    let stmt =
                        if i % 2 == 0 { "SELECT GET_LOCK('calibrate', 0)" } else { "SELECT RELEASE_LOCK('calibrate')" };
                    c.query_drop(stmt).map_err(|e| e.to_string())
                })?;
                return Ok(vec![Probe {
                    what: "a GET_LOCK or RELEASE_LOCK",
                    round_trip_ms: ms,
                    sets: ProbeSets::Service,
                }]);
            }
            c.query_drop("CREATE TABLE IF NOT EXISTS calibrate (id INT PRIMARY KEY, v BIGINT) ENGINE=InnoDB")
                .map_err(|e| e.to_string())?;
            let ms = through_a_thread(n, move |i| {
                c.exec_drop("REPLACE INTO calibrate VALUES (1, ?)", (i as u64,)).map_err(|e| e.to_string())
            })?;
            Ok(vec![Probe { what: "a committed single-row REPLACE", round_trip_ms: ms, sets: ProbeSets::Service }])
        };
        Some(probe())
    }
    fn boundary(&self) -> &'static str {
        "the model's client library (INSERT and poll, reentry, release, heartbeat, its connections, statement ids and \
timeouts) runs unchanged; each statement is the real SQL on a real MariaDB table through the `mysql` crate, or, for \
database = \"postgres\", Spring's and ShedLock's PostgreSQL SQL on a real PostgreSQL 15 through the `postgres` crate \
(one connection per model connection; retransmissions are the kernel's TCP); the cleanup job is a MariaDB event (whole \
seconds); statement times are the real server's, not service_ms; GET_LOCK's nesting count is not reported by MariaDB"
    }
}
