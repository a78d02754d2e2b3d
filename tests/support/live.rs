//! What the live-mode test files share: one live test at a time, whether a binary is on PATH,
//! the processes a run left behind, reading a results file. Included with
//! `#[path = "support/live.rs"] mod live_support;`.

use std::path::Path;

/// One live test at a time in this file: each starts real servers (JVMs, a database, a cluster),
/// and several at once on a 2-core machine stretch their timings past what the tests assert.
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

pub fn results(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}
