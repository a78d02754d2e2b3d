//! Starting the real servers on this machine: each in its own directory under the run's
//! temporary directory, on a free loopback port, configured from the model's parameters; waiting
//! until it answers; restarting it on the same port and data directory after a kill; and the
//! version it reports. Binaries are found on `PATH`; a missing one names its Debian package.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::supervisor::{ProcId, Supervisor};

/// A free TCP port on 127.0.0.1 (the OS picks it; it is free when this returns).
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free loopback port: {e}"))?;
    l.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

/// The path of `binary` on `PATH`, or an error naming the Debian package that has it.
pub fn find_binary(binary: &str, package: &str) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join(binary)).find(|p| p.is_file()).ok_or_else(|| {
        format!("`{binary}` is not on PATH: live mode needs the Debian package `{package}` (apt-get install {package})")
    })
}

/// One running (or killed) server process.
pub struct Server {
    /// Its node name in the model (`server-0`, …).
    pub node: String,
    /// The loopback port it serves clients on.
    pub port: u16,
    /// Its data directory (kept across a restart).
    pub dir: PathBuf,
    /// The command that starts it (again, after a kill).
    pub command: Vec<String>,
    /// The supervisor's handle on its current process.
    pub proc: Option<ProcId>,
}

impl Server {
    /// `127.0.0.1:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Starts (or restarts) the process and waits until its port accepts connections.
    pub fn start(&mut self, sup: &mut Supervisor) -> Result<(), String> {
        let log = std::fs::File::create(self.dir.join("stdout.log")).map_err(|e| e.to_string())?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let mut cmd = crate::supervisor::command_for(&self.command[0]);
        cmd.args(&self.command[1..]).current_dir(&self.dir).stdout(Stdio::from(log)).stderr(Stdio::from(err));
        let id = sup.spawn(&self.node, &mut cmd)?;
        self.proc = Some(id);
        wait_for_port(self.port, Duration::from_secs(20)).map_err(|e| {
            let tail = std::fs::read_to_string(self.dir.join("stdout.log")).unwrap_or_default();
            let tail: Vec<&str> = tail.lines().rev().take(5).collect();
            format!("{} ({}) did not come up: {e}; its log ends: {}", self.node, self.command[0], tail.join(" / "))
        })
    }
}

/// Waits until something accepts connections on the loopback port.
pub fn wait_for_port(port: u16, limit: Duration) -> Result<(), String> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if TcpStream::connect_timeout(&([127, 0, 0, 1], port).into(), Duration::from_millis(200)).is_ok() {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Err(format!("nothing accepted connections on 127.0.0.1:{port} within {} s", limit.as_secs()))
}

/// The first line `binary --version` prints.
pub fn version_of(binary: &Path, flag: &str) -> String {
    Command::new(binary)
        .arg(flag)
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.lines().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

/// `redis-server` settings for a model's `persistence` choice (Redis 7.0 `redis.conf`).
pub fn redis_persistence_args(persistence: &str) -> Vec<String> {
    let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    match persistence {
        // The stock redis.conf: RDB snapshots on these rules, no AOF.
        "rdb" => v(&["--save", "3600 1 300 100 60 10000", "--appendonly", "no"]),
        "everysec" => v(&["--save", "", "--appendonly", "yes", "--appendfsync", "everysec"]),
        "always" => v(&["--save", "", "--appendonly", "yes", "--appendfsync", "always"]),
        _ => v(&["--save", "", "--appendonly", "no"]),
    }
}

/// A `redis-server` for node `node`, in `root/node`, not yet started.
pub fn redis_server(root: &Path, node: &str, persistence: &str) -> Result<Server, String> {
    let binary = find_binary("redis-server", "redis-server")?;
    let port = free_port()?;
    let dir = root.join(node);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut command = vec![
        binary.display().to_string(),
        "--bind".into(),
        "127.0.0.1".into(),
        "--port".into(),
        port.to_string(),
        "--dir".into(),
        dir.display().to_string(),
        "--daemonize".into(),
        "no".into(),
        "--protected-mode".into(),
        "no".into(),
        "--logfile".into(),
        dir.join("redis.log").display().to_string(),
    ];
    command.extend(redis_persistence_args(persistence));
    Ok(Server { node: node.to_string(), port, dir, command, proc: None })
}

/// A `redis-sentinel` for node `node`, in `root/node`, not yet started, watching the primary on
/// `primary_port` as `mymaster` with the model's `quorum` and `down-after-milliseconds`
/// (`parallel-syncs 1` and `failover-timeout` 180 s are Sentinel's defaults, as the model's).
/// Sentinel rewrites its configuration file as it learns, so the file lives in its directory.
pub fn redis_sentinel(
    root: &Path,
    node: &str,
    primary_port: u16,
    quorum: u32,
    down_after_ms: u64,
) -> Result<Server, String> {
    let binary = find_binary("redis-sentinel", "redis-sentinel")?;
    let port = free_port()?;
    let dir = root.join(node);
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let conf = dir.join("sentinel.conf");
    let text = format!(
        "port {port}\nbind 127.0.0.1\nprotected-mode no\ndaemonize no\ndir {dir}\nlogfile {log}\n\
sentinel monitor mymaster 127.0.0.1 {primary_port} {quorum}\n\
sentinel down-after-milliseconds mymaster {down_after_ms}\n\
sentinel failover-timeout mymaster 180000\nsentinel parallel-syncs mymaster 1\n",
        dir = dir.display(),
        log = dir.join("sentinel.log").display(),
    );
    std::fs::write(&conf, text).map_err(|e| format!("cannot write {}: {e}", conf.display()))?;
    let command = vec![binary.display().to_string(), conf.display().to_string()];
    Ok(Server { node: node.to_string(), port, dir, command, proc: None })
}
