//! What the live-mode test files share: one live test at a time, whether a binary is on PATH,
//! the processes a run left behind, reading a results file (`crate::support::live`).

use std::path::Path;

/// One live test at a time in the whole test binary (every `live*.rs` file and
/// `compare_reference.rs`): each starts real servers (JVMs, a database, a cluster), and several
/// at once on a 2-core machine stretch their timings past what the tests assert.
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `binary` is on PATH.
pub fn on_path(binary: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(binary).is_file()))
}

/// Every process whose command line mentions `dir` (the members' data directories and the
/// clients' specifications name it): none may be left running.
pub fn processes_mentioning(dir: &Path) -> Vec<String> {
    let needle = dir.display().to_string();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == std::process::id().to_string() {
            continue;
        }
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // A zombie has exited; its parent (not this test) reaps it.
        if state.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) {
            continue;
        }
        if let Ok(cmd) = std::fs::read(entry.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(&needle) && !cmd.contains("cargo") {
                found.push(format!("{name}: {cmd}"));
            }
        }
    }
    found
}

/// Runs `sim ARGS` as `cli::sim` does, and also returns the `sim` process's pid, which
/// names the run's own temporary directories (`locksim-live-PID-…`, `locksim-calibrate-PID-…`):
/// [`processes_of_run`] looks at those only, so another live run on the machine (another
/// developer's, CI's) is not taken for this one's leftovers.
pub fn sim_with_pid(args: &[&str]) -> (i32, String, String, u32) {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_sim"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sim runs");
    let pid = child.id();
    let out = child.wait_with_output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        pid,
    )
}

/// Every live (not zombie) process the `sim` with pid `sim_pid` started in its temporary
/// directories and left running: its command line names a `locksim-live-PID-…` or
/// `locksim-calibrate-PID-…` directory (the harnesses' and members' arguments), or its working
/// directory is under one (the servers run in their data directories, and redis-server rewrites
/// its command line). Other runs' directories carry their own `sim`'s pid and are not looked at.
pub fn processes_of_run(sim_pid: u32) -> Vec<String> {
    let prefixes: Vec<String> = ["locksim-live-", "locksim-calibrate-"]
        .iter()
        .map(|p| std::env::temp_dir().join(format!("{p}{sim_pid}-")).display().to_string())
        .collect();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) || name == std::process::id().to_string() {
            continue;
        }
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if state.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) {
            continue;
        }
        let cmd = std::fs::read(entry.path().join("cmdline")).map(|c| String::from_utf8_lossy(&c).replace('\0', " "));
        let cwd = std::fs::read_link(entry.path().join("cwd")).map(|d| d.display().to_string());
        let named = cmd.as_ref().is_ok_and(|c| prefixes.iter().any(|p| c.contains(p.as_str())) && !c.contains("cargo"));
        let inside = cwd.as_ref().is_ok_and(|d| prefixes.iter().any(|p| d.starts_with(p.as_str())));
        if named || inside {
            found.push(format!("{name}: {}", cmd.unwrap_or_default()));
        }
    }
    found
}

/// Every live (not zombie) process whose working directory is under `dir`: the servers run in
/// their data directories, and some (redis-server) rewrite their command line, so
/// [`processes_mentioning`] does not see them.
pub fn processes_working_in(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if state.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) {
            continue;
        }
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(dir)) {
            found.push(format!("{name}: {}", state.split(')').next().unwrap_or_default()));
        }
    }
    found
}

/// A copy of `scenarios/fidelity/NAME` in `dir`, its text edited by `edit`, with `duration_ms`
/// set when given. The run is judged by the test, not by the file's `[expect]` (sized for the
/// full duration), unless `keep_expect`.
pub fn fidelity_copy(
    name: &str,
    dir: &Path,
    duration_ms: Option<i64>,
    keep_expect: bool,
    edit: impl Fn(String) -> String,
) -> std::path::PathBuf {
    let text = edit(std::fs::read_to_string(Path::new("scenarios/fidelity").join(name)).unwrap());
    let mut doc: toml_edit::DocumentMut = text.parse().unwrap();
    if let Some(ms) = duration_ms {
        doc["duration_ms"] = toml_edit::value(ms);
    }
    if !keep_expect {
        doc.remove("expect");
    }
    let path = dir.join(name);
    std::fs::write(&path, doc.to_string()).unwrap();
    path
}

/// A row of a results JSON, by label.
pub fn row<'a>(json: &'a serde_json::Value, label: &str) -> &'a serde_json::Value {
    json["algorithms"].as_array().unwrap().iter().find(|a| a["label"] == label).unwrap()
}

/// The history lines `--history` wrote: (label, history).
pub fn histories(path: &Path) -> Vec<(String, serde_json::Value)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (v["label"].as_str().unwrap().to_string(), v["history"].clone())
        })
        .collect()
}

/// The first history `--history` wrote.
pub fn first_history(path: &Path) -> serde_json::Value {
    histories(path).into_iter().next().expect("one history").1
}

/// Grant times, in ns from the run's start.
pub fn grant_times(history: &serde_json::Value) -> Vec<u64> {
    history["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "granted")
        .map(|e| e["at_ns"].as_u64().unwrap())
        .collect()
}

/// Grants recorded after `after_ns`.
pub fn grants_after(history: &serde_json::Value, after_ns: u64) -> usize {
    grant_times(history).into_iter().filter(|&t| t > after_ns).count()
}

/// Grants recorded in `[from_ns, to_ns)`.
pub fn grants_between(history: &serde_json::Value, from_ns: u64, to_ns: u64) -> usize {
    grant_times(history).into_iter().filter(|t| (from_ns..to_ns).contains(t)).count()
}

pub fn results(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
