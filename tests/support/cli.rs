//! What the CLI test files share: running the `sim` binary and a fresh directory per test.
//! Included with `#[path = "support/cli.rs"] mod cli;`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Runs `sim` with `args`: (exit code, standard output, standard error).
pub fn sim(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).args(args).output().expect("sim runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh, empty directory for one test of one file (`group`), unique to this process.
pub fn fresh_dir(group: &str, test: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("locksim-{group}-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> String {
    p.display().to_string()
}
