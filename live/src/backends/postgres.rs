//! The `postgres` model's live backend: one real PostgreSQL 15 server (Debian's `postgresql-15`,
//! `/usr/lib/postgresql/15/bin`), and PgBouncer (Debian's `pgbouncer`) in front of it for
//! `pgbouncer = "session" | "transaction"`; the model's client library through [`PgAdapter`].
//!
//! - `servers()` runs `initdb` on a fresh data directory (trust authentication, `--no-sync`:
//!   a throwaway cluster; about a second), then starts `postgres` in the foreground on a free
//!   loopback port with the model's `tcp_keepalives_*`, `idle_session_timeout` and
//!   `idle_in_transaction_session_timeout`; PgBouncer gets an ini file with the row's
//!   `pool_mode` and `default_pool_size` on another free port, as node `server-1`.
//! - PostgreSQL and PgBouncer refuse to run as root: when this process is root, each runs as the
//!   `postgres` user through `setpriv` (which execs, so the supervisor's pid is the server's).
//! - `ready()` creates the `lock_fence` table the generation fence bumps.
//! - Refused: `standby = true` (no standby or promotion is started in live mode yet); keepalive
//!   and idle timeouts the server cannot take exactly (whole seconds, whole milliseconds).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use locksim_algorithms::postgres::{Config, Pooler, Postgres};
use locksim_simulator::model::Params;
use locksim_simulator::scenario::RunSpec;
use locksim_simulator::setup::Setup;

use crate::adapters::postgres::{connect, PgAdapter, USER};
use crate::backend::Backend;
use crate::client::{self, ClientSpec};
use crate::probe::{through_a_thread, Probe, ProbeSets};
use crate::servers::{self, Server};

/// Where Debian installs PostgreSQL 15's server programs (not on `PATH`).
const PG_BIN: &str = "/usr/lib/postgresql/15/bin";

/// `initdb` may take this long before the run is failed.
const INITDB_LIMIT: Duration = Duration::from_secs(60);

/// A PostgreSQL server program: in Debian's directory, else on `PATH`.
pub fn pg_binary(name: &str) -> Result<PathBuf, String> {
    let debian = Path::new(PG_BIN).join(name);
    if debian.is_file() {
        return Ok(debian);
    }
    servers::find_binary(name, "postgresql-15")
}

/// PgBouncer: on `PATH`, else in `/usr/sbin` (Debian's place).
fn pgbouncer_binary() -> Result<PathBuf, String> {
    servers::find_binary("pgbouncer", "pgbouncer").or_else(|e| {
        let sbin = Path::new("/usr/sbin/pgbouncer");
        if sbin.is_file() {
            Ok(sbin.to_path_buf())
        } else {
            Err(e)
        }
    })
}

fn is_root() -> bool {
    std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
}

/// The command line that runs `program` as the `postgres` user when this process is root.
fn as_postgres(program: &Path) -> Vec<String> {
    let mut cmd = Vec::new();
    if is_root() {
        cmd.extend(["setpriv", "--reuid=postgres", "--regid=postgres", "--clear-groups"].map(String::from));
    }
    cmd.push(program.display().to_string());
    cmd
}

/// Makes `dir` (and what is in it) the `postgres` user's, when this process is root.
fn give_to_postgres(dir: &Path) -> Result<(), String> {
    if !is_root() {
        return Ok(());
    }
    let status = Command::new("chown")
        .args(["-R", "postgres:postgres"])
        .arg(dir)
        .status()
        .map_err(|e| format!("cannot run chown: {e}"))?;
    status.success().then_some(()).ok_or_else(|| format!("chown of {} failed", dir.display()))
}

/// A duration in milliseconds as a whole number of `unit_ms`, if it is one.
fn whole(ms: f64, unit_ms: f64) -> Option<u64> {
    let n = ms / unit_ms;
    (n >= 0.0 && n.fract() == 0.0 && n < 1e15).then_some(n as u64)
}

fn initdb(datadir: &Path, log: &Path) -> Result<(), String> {
    let mut argv = as_postgres(&pg_binary("initdb")?);
    argv.extend(
        ["-D", &datadir.display().to_string(), "-U", USER, "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"]
            .map(String::from),
    );
    let out = std::fs::File::create(log).map_err(|e| e.to_string())?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .spawn()
        .map_err(|e| format!("cannot start initdb: {e}"))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => {
                let text = std::fs::read_to_string(log).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(5).collect();
                return Err(format!("initdb failed ({status}): {}", tail.join(" / ")));
            }
            Ok(None) if start.elapsed() < INITDB_LIMIT => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("initdb did not finish within {} s", INITDB_LIMIT.as_secs()));
            }
        }
    }
}

/// A PostgreSQL 15 server as `server-0` in `root/server-0` (not started): a fresh `initdb`
/// directory, listening on a free loopback port, with `settings` (`name=value`) as `-c` options
/// besides the address, socket and log ones. The `postgres` model's backend and the `db` model's
/// `database = "postgres"` rows both start it.
pub fn postgres_server(root: &Path, settings: &[String]) -> Result<Server, String> {
    let postgres = pg_binary("postgres")?;
    let port = servers::free_port()?;
    let dir = root.join("server-0");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    give_to_postgres(&dir)?;
    let datadir = dir.join("data");
    initdb(&datadir, &dir.join("initdb.log"))?;
    let mut command = as_postgres(&postgres);
    command.extend(["-D".to_string(), datadir.display().to_string(), "-p".into(), port.to_string()]);
    let fixed = [
        "listen_addresses=127.0.0.1".to_string(),
        format!("unix_socket_directories={}", dir.display()),
        format!("log_directory={}", dir.display()),
    ];
    for setting in fixed.iter().chain(settings) {
        command.extend(["-c".to_string(), setting.clone()]);
    }
    Ok(Server { node: "server-0".to_string(), port, dir, command, proc: None })
}

/// Waits (up to 20 s) until the started `server` runs `sql` (the tables a backend needs), which
/// it does only once it accepts connections.
pub fn serve_after(server: &Server, sql: &str) -> Result<(), String> {
    let start = Instant::now();
    loop {
        let tried = connect(&server.addr()).and_then(|mut c| c.batch_execute(sql).map_err(|e| e.to_string()));
        match tried {
            Ok(()) => return Ok(()),
            Err(_) if start.elapsed() < Duration::from_secs(20) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(format!("{} did not answer within 20 s: {e}", server.node)),
        }
    }
}

/// PostgreSQL's version, as `postgres --version` reports it.
pub fn postgres_version() -> (String, String) {
    ("postgres".to_string(), pg_binary("postgres").map(|b| servers::version_of(&b, "--version")).unwrap_or_else(|e| e))
}

/// `postgres`: one PostgreSQL server, and PgBouncer when the row asks for it.
pub struct PostgresBackend;

impl Backend for PostgresBackend {
    fn check(&self, params: &Params) -> Result<(), String> {
        if params.bool("standby") {
            return Err("standby = true: live mode starts one PostgreSQL server; a streaming standby and its \
promotion are not started in live mode yet (set standby = false)"
                .to_string());
        }
        for key in ["tcp_keepalives_idle_s", "tcp_keepalives_interval_s"] {
            let v = params.f64(key);
            if whole(v, 1.0).is_none() {
                return Err(format!("{key} = {v}: PostgreSQL takes whole seconds"));
            }
        }
        for key in ["idle_session_timeout_ms", "idle_in_transaction_session_timeout_ms"] {
            let v = params.f64(key);
            if whole(v, 1.0).is_none() {
                return Err(format!("{key} = {v}: PostgreSQL takes whole milliseconds"));
            }
        }
        if params.str("pgbouncer") != "none" {
            pgbouncer_binary()?;
        }
        Ok(())
    }

    fn servers(&self, params: &Params, root: &Path) -> Result<Vec<Server>, String> {
        let cfg = Config::from_params(params);
        let secs = |ns: u64| (ns / 1_000_000_000).to_string();
        let millis = |ns: u64| (ns / 1_000_000).to_string();
        let server = postgres_server(
            root,
            &[
                format!("tcp_keepalives_idle={}", secs(cfg.keepalive_idle_ns)),
                format!("tcp_keepalives_interval={}", secs(cfg.keepalive_interval_ns)),
                format!("tcp_keepalives_count={}", cfg.keepalive_count),
                format!("idle_session_timeout={}", millis(cfg.idle_session_timeout_ns)),
                format!("idle_in_transaction_session_timeout={}", millis(cfg.idle_in_transaction_timeout_ns)),
            ],
        )?;
        let port = server.port;
        let mut all = vec![server];
        if let Some(node) = cfg.bouncer_name() {
            let bport = servers::free_port()?;
            let bdir = root.join(node);
            std::fs::create_dir_all(&bdir).map_err(|e| format!("cannot create {}: {e}", bdir.display()))?;
            let mode = if cfg.pooler == Pooler::Session { "session" } else { "transaction" };
            let users = bdir.join("userlist.txt");
            std::fs::write(&users, format!("\"{USER}\" \"\"\n")).map_err(|e| e.to_string())?;
            let ini = bdir.join("pgbouncer.ini");
            let text = format!(
                "[databases]\n{USER} = host=127.0.0.1 port={port} dbname={USER} user={USER}\n\n[pgbouncer]\n\
listen_addr = 127.0.0.1\nlisten_port = {bport}\nunix_socket_dir =\nauth_type = trust\nauth_file = {}\n\
pool_mode = {mode}\ndefault_pool_size = {}\nmax_client_conn = 1000\nlogfile = {}\n",
                users.display(),
                cfg.pool_size,
                bdir.join("pgbouncer.log").display()
            );
            std::fs::write(&ini, text).map_err(|e| format!("cannot write {}: {e}", ini.display()))?;
            give_to_postgres(&bdir)?;
            let mut command = as_postgres(&pgbouncer_binary()?);
            command.push(ini.display().to_string());
            all.push(Server { node: node.to_string(), port: bport, dir: bdir, command, proc: None });
        }
        Ok(all)
    }

    fn ready(&self, servers: &[Server]) -> Result<(), String> {
        let server = servers.first().ok_or("no server started")?;
        serve_after(
            server,
            "CREATE TABLE IF NOT EXISTS lock_fence (key bigint PRIMARY KEY, generation bigint NOT NULL)",
        )
    }

    fn versions(&self) -> Vec<(String, String)> {
        let mut v = vec![postgres_version()];
        if let Ok(b) = pgbouncer_binary() {
            v.push(("pgbouncer".to_string(), servers::version_of(&b, "--version")));
        }
        v
    }

    fn versions_for(&self, params: &Params) -> Vec<(String, String)> {
        // PgBouncer only for the rows that run through it.
        let mut v = self.versions();
        if params.str("pgbouncer") == "none" {
            v.retain(|(program, _)| program != "pgbouncer");
        }
        v
    }

    fn client(&self, setup: &Setup, run: &RunSpec, spec: &ClientSpec) -> Result<(), String> {
        client::run_typed(&Postgres, setup, run, spec, |servers, tx| Box::new(PgAdapter::new(servers, tx)))
    }

    fn probe_requests_ms(&self, _params: &Params, servers: &[Server], n: usize) -> Option<Result<Vec<Probe>, String>> {
        // The advisory-lock calls on the server itself (in shared memory, nothing committed),
        // as a direct client sends them: PgBouncer's hop, where a row has one, is the network's.
        let probe = || {
            let server = servers.first().ok_or("no server started")?;
            let mut c = connect(&server.addr())?;
            let ms = through_a_thread(n, move |i| {
                let sql = if i % 2 == 0 {
                    "SELECT pg_advisory_lock(987654321)"
                } else {
                    "SELECT pg_advisory_unlock(987654321)"
                };
                c.simple_query(sql).map(|_| ()).map_err(|e| e.to_string())
            })?;
            Ok(vec![Probe {
                what: "a pg_advisory_lock or pg_advisory_unlock",
                round_trip_ms: ms,
                sets: ProbeSets::Service,
            }])
        };
        Some(probe())
    }

    fn boundary(&self) -> &'static str {
        "the model's client library (its lock calls, connection handling and generation bump) runs unchanged; each \
statement is the real SQL on a real PostgreSQL 15 server (through a real PgBouncer for the pgbouncer rows) via the \
`postgres` crate's simple-query protocol, one connection per model connection; keepalive is the kernels'; statement \
times are the real server's, not service_ms"
    }
}
