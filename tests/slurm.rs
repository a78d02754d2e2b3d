//! `examples/slurm/` on a real Slurm cluster: a single-node cluster started on this machine
//! (`munged`, `slurmctld` and `slurmd` on loopback, every file under one temp directory),
//! `examples/slurm/submit.sh` queues the shard array and the dependent merge, and the merged
//! results JSON must equal, byte for byte, what one `sim run --json` writes for the same
//! scenario and seeds (the results hold no wall-clock fields, so they are compared whole).
//!
//! Needs root and Debian's `slurm-wlm` and `munge` (`.ci/run` installs them where it can).
//! Without them it prints `SKIPPED:` and passes. Every wait is bounded; a timeout fails with
//! the tails of the daemons' logs and the jobs' output. The daemons are this test's children and
//! are stopped by pid in a `Drop` guard, so they stop also when an assertion fails.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SIM: &str = env!("CARGO_BIN_EXE_sim");
/// Seeds of the small run: the array has four tasks, so each shard gets at least one.
const SEEDS: &str = "6";
const NODE_IDLE_WAIT: Duration = Duration::from_secs(60);
const JOBS_WAIT: Duration = Duration::from_secs(120);

/// Wall-clock time: the waits are for real daemons and jobs, not inside a simulated run.
#[allow(clippy::disallowed_methods)]
fn now() -> Instant {
    Instant::now()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn skip(why: &str) {
    println!("SKIPPED: {why}");
    eprintln!("SKIPPED: {why}");
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(program).is_file()))
        .unwrap_or(false)
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0").unwrap_or(false)
}

/// A loopback port nobody listens on now (the kernel's pick, released at once).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The last lines of a file, or why it could not be read.
fn tail(p: &Path) -> String {
    match std::fs::read_to_string(p) {
        Ok(text) => {
            let lines: Vec<&str> = text.lines().collect();
            format!("--- {} ---\n{}\n", p.display(), lines[lines.len().saturating_sub(30)..].join("\n"))
        }
        Err(e) => format!("--- {}: {e} ---\n", p.display()),
    }
}

/// The single-node cluster: its directory, the daemons it started and the jobs it was given.
struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
    jobs: Vec<String>,
}

impl Cluster {
    /// A Slurm client command pointed at this cluster's configuration.
    fn client(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("SLURM_CONF", &self.conf).current_dir(&self.dir);
        c
    }

    fn output(&self, program: &str, args: &[&str]) -> String {
        let out = self.client(program).args(args).output().unwrap_or_else(|e| panic!("{program}: {e}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts `program args` as a child, its output to `DIR/name.out`.
    fn spawn(&mut self, name: &'static str, program: &str, args: &[&str]) {
        let out = std::fs::File::create(self.dir.join(format!("{name}.out"))).unwrap();
        let child = self
            .client(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .unwrap_or_else(|e| panic!("{program}: {e}"));
        self.daemons.push((name, child));
    }

    /// Everything that says why a wait ran out: daemon logs and every job's output.
    fn logs(&self) -> String {
        let mut text = String::new();
        for name in ["munged.out", "slurmctld.out", "slurmd.out", "slurmctld.log", "slurmd.log"] {
            text += &tail(&self.dir.join(name));
        }
        let mut outs: Vec<PathBuf> = std::fs::read_dir(&self.dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.extension().is_some_and(|x| x == "out")
                    && p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("slurm-"))
            })
            .collect();
        outs.sort();
        for p in outs {
            text += &tail(&p);
        }
        text + &self.output("squeue", &["-a"])
    }

    /// Polls `done` every 500 ms until it says yes, failing with the logs after `limit`.
    fn wait(&self, what: &str, limit: Duration, mut done: impl FnMut(&Self) -> bool) -> Duration {
        let start = now();
        while !done(self) {
            if start.elapsed() > limit {
                panic!("timed out after {limit:?} waiting for {what}\n{}", self.logs());
            }
            std::thread::sleep(Duration::from_millis(500));
        }
        start.elapsed()
    }

    /// `scontrol show job` fields of one job (`JobState`, `Reason`, `ExitCode`, …).
    fn job(&self, id: &str) -> Vec<(String, String)> {
        self.output("scontrol", &["show", "job", "-o", id])
            .split_whitespace()
            .filter_map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
            .collect()
    }
}

impl Drop for Cluster {
    /// Cancels this cluster's jobs, then stops each daemon by its pid: SIGTERM, up to 10 s to
    /// exit, then SIGKILL. Slurm daemons last, munged (which they use) first in the list.
    fn drop(&mut self) {
        for id in &self.jobs {
            let _ = self.client("scancel").arg(id).output();
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
            let start = now();
            while matches!(child.try_wait(), Ok(None)) && start.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

fn slurm_conf(dir: &Path, host: &str, socket: &Path) -> String {
    let d = s(dir);
    format!(
        "# Written by tests/slurm.rs: one node on loopback, every file under {d}.
ClusterName=locksimtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={socket}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
SwitchType=switch/none
NodeName={host} NodeAddr=127.0.0.1 CPUs=2 RealMemory=2048 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
",
        ctld = free_port(),
        slurmd = free_port(),
        socket = s(socket),
    )
}

/// Starts munged, slurmctld and slurmd under `dir` and waits until the node is idle.
fn start_cluster(dir: &Path) -> Cluster {
    let host = Command::new("hostname").arg("-s").output().expect("hostname runs");
    let host = String::from_utf8_lossy(&host.stdout).trim().to_string();
    assert!(!host.is_empty(), "hostname -s printed nothing");
    let munge = dir.join("munge");
    for sub in ["state", "spool", "munge"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let key = munge.join("munge.key");
    let made = Command::new("mungekey").args(["--create", "--keyfile", &s(&key)]).output().expect("mungekey runs");
    assert!(made.status.success(), "mungekey: {}", String::from_utf8_lossy(&made.stderr));
    // munged refuses a key that others can read.
    let chmod = Command::new("chmod").args(["0400", &s(&key)]).status().unwrap();
    assert!(chmod.success());
    let socket = munge.join("munge.socket");
    let conf = dir.join("slurm.conf");
    std::fs::write(&conf, slurm_conf(dir, &host, &socket)).unwrap();

    let mut cluster = Cluster { dir: dir.to_path_buf(), conf: conf.clone(), daemons: Vec::new(), jobs: Vec::new() };
    cluster.spawn(
        "munged",
        "munged",
        &[
            "--foreground",
            "--force",
            &format!("--key-file={}", s(&key)),
            &format!("--socket={}", s(&socket)),
            &format!("--pid-file={}", s(&munge.join("munged.pid"))),
            &format!("--log-file={}", s(&munge.join("munged.log"))),
            &format!("--seed-file={}", s(&munge.join("munged.seed"))),
        ],
    );
    cluster.wait("munged's socket", Duration::from_secs(10), |_| socket.exists());
    cluster.spawn("slurmctld", "slurmctld", &["-D", "-f", &s(&conf)]);
    cluster.spawn("slurmd", "slurmd", &["-D", "-f", &s(&conf)]);
    let took = cluster
        .wait("the node to be idle", NODE_IDLE_WAIT, |c| c.output("sinfo", &["-h", "-N", "-o", "%T"]).trim() == "idle");
    println!("slurm: node {host} idle after {:.1} s", took.as_secs_f64());
    cluster
}

fn one_machine(scenario: &str, out: &Path) -> (i32, Vec<u8>) {
    let run = Command::new(SIM).args(["run", scenario, "--seeds", SEEDS, "--json", &s(out)]).output().unwrap();
    let code = run.status.code().unwrap_or(-1);
    assert!(matches!(code, 0 | 1), "{}", String::from_utf8_lossy(&run.stderr));
    (code, std::fs::read(out).unwrap())
}

#[test]
fn shard_array_and_merge_on_a_single_node_slurm_cluster_equal_one_machine() {
    if !is_root() {
        return skip("the Slurm test starts slurmd and munged, which need root");
    }
    let missing: Vec<&str> =
        ["munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel"]
            .into_iter()
            .filter(|p| !on_path(p))
            .collect();
    if !missing.is_empty() {
        return skip(&format!("not on PATH: {} (Debian: apt-get install slurm-wlm munge)", missing.join(", ")));
    }

    let dir = std::env::temp_dir().join(format!("locksim-slurm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let started = now();
    let mut cluster = start_cluster(&dir);

    let results = dir.join("results");
    let scenario = s(&root().join("scenarios/failover.toml"));
    let submit = cluster
        .client("bash")
        .arg(root().join("examples/slurm/submit.sh"))
        .envs([("SIM", SIM), ("SCENARIO", &scenario), ("RESULTS", &s(&results)), ("SEEDS", SEEDS)])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&submit.stdout).into_owned();
    assert!(
        submit.status.success(),
        "submit.sh: {said}{}\n{}",
        String::from_utf8_lossy(&submit.stderr),
        cluster.logs()
    );
    // sbatch without --parsable says "Submitted batch job N" for the merge.
    let merge = said.split_whitespace().last().expect("submit.sh names the merge job").to_string();
    assert!(merge.parse::<u64>().is_ok(), "not a job id: {said}");
    cluster.jobs.push(merge.clone());
    let dependency = cluster.job(&merge).into_iter().find(|(k, _)| k == "Dependency").map(|(_, v)| v);
    let shards = dependency
        .as_deref()
        .and_then(|d| d.strip_prefix("afterok:"))
        .map(|d| d.split('_').next().unwrap().to_string());
    let shards = shards.unwrap_or_else(|| panic!("the merge does not wait on the array: Dependency={dependency:?}"));
    cluster.jobs.push(shards.clone());

    // The merge leaves PENDING/RUNNING once it ran, or never runs if a shard failed.
    let mut last = Vec::new();
    let took = cluster.wait("the shards and the merge", JOBS_WAIT, |c| {
        last = c.job(&merge);
        let field = |k: &str| last.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str()).unwrap_or("");
        assert!(field("Reason") != "DependencyNeverSatisfied", "a shard failed, so the merge never runs\n{}", c.logs());
        !matches!(field("JobState"), "PENDING" | "RUNNING" | "CONFIGURING" | "COMPLETING" | "")
    });
    let field = |k: &str| last.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_default();
    println!(
        "slurm: array job {shards} (4 shards) and merge job {merge} done in {:.1} s ({:.1} s with the cluster's start)",
        took.as_secs_f64(),
        started.elapsed().as_secs_f64()
    );

    // Every shard ran as a task of the array: Slurm wrote its slurm-ARRAY_K.out.
    for k in 0..4 {
        let out = dir.join(format!("slurm-{shards}_{k}.out"));
        assert!(out.exists(), "no {} from array task {k}\n{}", out.display(), cluster.logs());
        assert!(results.join(format!("part-{k}.json")).exists(), "array task {k} wrote no part\n{}", cluster.logs());
    }
    let (code, one) = one_machine(&scenario, &dir.join("one.json"));
    // `sim merge` exits as `sim run` does (1 when an expectation fails), and Slurm records it.
    let state = if code == 0 { "COMPLETED" } else { "FAILED" };
    assert_eq!(
        (field("JobState"), field("ExitCode")),
        (state.to_string(), format!("{code}:0")),
        "merge job {merge}\n{}",
        cluster.logs()
    );
    let merged =
        std::fs::read(results.join("results.json")).unwrap_or_else(|e| panic!("results.json: {e}\n{}", cluster.logs()));
    assert!(merged == one, "the merged results differ from one machine's run of the same seeds");
    assert!(results.join("report/index.html").exists(), "the merge wrote no report");
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
