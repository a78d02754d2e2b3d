//! `scripts/build-pgo`, the profile-guided build, as a user meets it before it builds anything:
//! a usage line for arguments it does not take, and a missing `llvm-profdata` named with the
//! command that installs it. (The build itself takes two fat-LTO compilations, about 7 minutes on
//! 2 cores, too long for this suite; the script checks its own result: the new binary's results
//! must equal the instrumented build's, byte for byte.)

use std::path::Path;
use std::process::Command;

fn script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-pgo")
}

fn run(args: &[&str], envs: &[(&str, &str)]) -> (i32, String) {
    let out = Command::new("bash").arg(script()).args(args).envs(envs.iter().copied()).output().expect("bash runs");
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn the_script_parses_and_is_executable() {
    let status = Command::new("bash").arg("-n").arg(script()).status().expect("bash runs");
    assert!(status.success(), "bash -n scripts/build-pgo failed");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(script()).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "scripts/build-pgo is not executable (mode {mode:o})");
    }
}

#[test]
fn arguments_get_the_usage_and_exit_2() {
    let (code, err) = run(&["--fast"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("usage: scripts/build-pgo"), "{err}");
}

#[test]
fn a_missing_llvm_profdata_names_the_component_to_install() {
    let (code, err) = run(&[], &[("LLVM_PROFDATA", "/nonexistent/llvm-profdata")]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("/nonexistent/llvm-profdata"), "{err}");
    assert!(err.contains("rustup component add llvm-tools"), "{err}");
    // It stopped before building anything.
    assert!(!err.contains("[1/5]"), "{err}");
}
