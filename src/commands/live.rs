//! `sim live FILE`: the scenario's rows run against real servers started on this machine, in real
//! time, judged by the same checkers and printed as the same table (the work is
//! [`locksim_live::command`]'s); and the hidden `sim live-client SPEC` and `sim live-exec`, a
//! client process and a server of a live run (started by `sim live` only).

use std::path::PathBuf;

use clap::Args;
use locksim_live::command::LiveOptions;

use crate::exit::{code, CliError, MODEL_FAILED, OK};
use crate::interrupt;

#[derive(Args, Debug)]
pub struct LiveArgs {
    /// The scenario file (TOML). Its faults must be ones live mode can inject: pause (SIGSTOP /
    /// SIGCONT) of a client or server, and crash mode = "process" (SIGKILL, then a restart on the
    /// same data) of a server.
    pub file: PathBuf,
    /// Live runs per row: N (seeds 0..N) or A..B. Each lasts the scenario's duration_ms in real
    /// time. A seed fixes the workload's draws and the fault schedule, not the servers' timing.
    #[arg(long, value_name = "N|A..B", default_value = "1")]
    pub seeds: String,
    /// Run only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Write the results JSON (with "mode": "live" and the servers' versions) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write a report into DIR (results.json, charts, index.html).
    #[arg(long, value_name = "DIR")]
    pub report: Option<PathBuf>,
    /// Write each live run's recorded history to FILE, one JSON line per run ({"label", "seed",
    /// "history"}), events stamped with the machine's monotonic clock from the run's start.
    #[arg(long, value_name = "FILE")]
    pub history: Option<PathBuf>,
    /// Keep the servers' data directories and logs in DIR (default: a temporary directory,
    /// removed at the end).
    #[arg(long, value_name = "DIR")]
    pub keep_dir: Option<PathBuf>,
    /// Run the real lock library (a reference client, reference/PROTOCOL.md) in place of each
    /// row's model client code: redis (plain SET NX PX) -> redis-py, redlock -> node-redlock,
    /// zookeeper -> curator (or kazoo), etcd -> clientv3. LIBS (optional): `default` or a
    /// comma-separated list of library names replacing their model's default (`--reference
    /// kazoo`). Rows with no reference client are listed as such and not run. Each harness is
    /// built on first use into target/reference/; a missing toolchain exits 2 naming its package.
    #[arg(long, value_name = "LIBS", num_args = 0..=1, default_missing_value = "default")]
    pub reference: Option<String>,
}

pub fn live(args: LiveArgs) -> Result<i32, CliError> {
    let LiveArgs { file, seeds, algorithms, json, report, history, keep_dir, reference } = args;
    let opts = LiveOptions { file, seeds, algorithms, json, report, history, keep_dir, reference };
    Ok(code(locksim_live::command::live(&opts, &locksim_algorithms::registry(), interrupt::stop_flag)?))
}

/// `sim live-exec -- PROGRAM ARGS…`: becomes PROGRAM, set to die with the `sim` that started it.
/// Returns only when that fails.
pub fn live_exec(command: &[std::ffi::OsString]) -> Result<i32, CliError> {
    let why = locksim_live::supervisor::exec_dying_with_parent(command);
    Err(CliError { code: MODEL_FAILED, message: why })
}

/// `sim live-client SPEC`: one client process of a live run.
pub fn live_client(spec: &str) -> Result<i32, CliError> {
    locksim_live::client_main(spec).map_err(|m| CliError { code: MODEL_FAILED, message: m })?;
    Ok(OK)
}
