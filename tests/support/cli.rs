//! What the CLI test files share: running the `sim` binary and a fresh directory per test
//! (`crate::support::cli`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `sim` with `args`: (exit code, standard output, standard error).
pub fn sim(args: &[&str]) -> (i32, String, String) {
    sim_with_env(&[], args)
}

/// Runs `sim` with `args` and the environment variables `env` set on it (the debug-build test
/// hooks): (exit code, standard output, standard error).
pub fn sim_with_env(env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).envs(env.iter().copied()).args(args).output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh, empty directory for one test of one file (`group`), unique to this process, removed
/// when the test ends (passed or failed: the guard drops while a panic unwinds). Live tests keep
/// real servers' data there (an etcd member's is about 100 MB), so directories left behind filled
/// the disk run after run. `LOCKSIM_KEEP_TEST_DIRS=1` keeps them, to look at after a failure.
pub fn fresh_dir(group: &str, test: &str) -> TestDir {
    let d = std::env::temp_dir().join(format!("locksim-{group}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TestDir(d)
}

/// A test's directory, removed when dropped (see [`fresh_dir`]).
pub struct TestDir(PathBuf);

impl std::ops::Deref for TestDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TestDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<std::ffi::OsStr> for TestDir {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_os_str()
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        if std::env::var_os("LOCKSIM_KEEP_TEST_DIRS").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> String {
    p.display().to_string()
}
