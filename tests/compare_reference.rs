//! `sim compare FILE --reference`: the model simulated with the library's `client` preset, the
//! model's recipe live and the real library live, per metric, with which live column agrees; the
//! header names the library that ran and the preset simulated. One short run with redis-py (the
//! fastest harness to start); it prints `SKIPPED:` and passes when redis-server or Python's venv
//! is missing. Also the refusal of a file with no row a reference client can run (exit 2).

use std::process::Command;

use crate::support::cli::{fresh_dir, s, sim};
use crate::support::live::*;

/// Whether the test must skip: redis-server missing, or redis-py's harness not buildable here
/// (its build step exits 2 naming the missing package: python3, python3-venv, or no PyPI).
fn skip(test: &str) -> bool {
    if !on_path("redis-server") {
        println!("SKIPPED: {test}: `redis-server` is missing (Debian package redis-server)");
        return true;
    }
    let out = Command::new("bash")
        .args(["reference/redis-py/build.sh", "target/reference/redis-py"])
        .output()
        .expect("bash runs");
    match out.status.code() {
        Some(0) => false,
        Some(2) => {
            println!("SKIPPED: {test}: {}", String::from_utf8_lossy(&out.stderr).trim());
            true
        }
        _ => panic!("reference/redis-py/build.sh failed: {}", String::from_utf8_lossy(&out.stderr)),
    }
}

/// The cells of a table line, split on runs of two or more spaces.
fn cells(line: &str) -> Vec<String> {
    line.split("  ").map(str::trim).filter(|c| !c.is_empty()).map(str::to_string).collect()
}

#[test]
fn compare_reference_prints_three_columns_under_a_header_naming_library_and_preset() {
    let _serial = serial();
    let test = "compare_reference_prints_three_columns_under_a_header_naming_library_and_preset";
    if skip(test) {
        return;
    }
    let dir = fresh_dir("compare-reference", "redis-py");
    // 3 s instead of 10: five clients still take the lock a few hundred times.
    let file = fidelity_copy("redis-no-faults.toml", &dir, Some(3_000), false, |t| t);
    let (code, stdout, stderr, pid) =
        sim_with_pid(&["compare", &s(&file), "--reference", "--seeds", "1", "--sim-seeds", "4"]);
    assert_eq!(code, 0, "no verdict differs without faults:\n{stdout}\n{stderr}");
    // The header names the library and version that ran and the preset simulated.
    let header =
        stdout.lines().find(|l| l.starts_with("# redis: library live: ")).unwrap_or_else(|| panic!("{stdout}"));
    assert!(header.contains("library live: redis-py 5.2.1"), "{header}");
    assert!(header.contains("simulated with client = \"redis-py-5\" (the library's preset)"), "{header}");
    assert!(
        stdout.contains("redis: redis-py 5.2.1 (PyPI redis==5.2.1) live against the model with client = \"redis-py-5\": simulated 4 seeds, recipe live 1 run, library live 1 run"),
        "{stdout}"
    );
    // Redisson's watchdog row has no reference client: named, not compared.
    assert!(stdout.contains("# no reference client: redisson (redis): redis-py: watchdog = true"), "{stdout}");
    assert!(!stdout.contains("redisson: "), "{stdout}");
    // Three columns and two verdicts per metric; the preset changed the row, so the recipe's own
    // simulation (the row as written) is printed last.
    let titles = stdout.lines().find(|l| l.trim_start().starts_with("metric")).expect(&stdout);
    assert_eq!(
        cells(titles),
        [
            "metric",
            "simulated",
            "sim 95% interval",
            "recipe live",
            "agrees",
            "library live",
            "agrees",
            "recipe judged against: sim as written"
        ],
        "{stdout}"
    );
    let line = |metric: &str| {
        stdout
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{metric} ")))
            .unwrap_or_else(|| panic!("no {metric}:\n{stdout}"))
    };
    let overlap = cells(line("overlap"));
    assert_eq!(overlap.len(), 8, "{overlap:?}");
    assert_eq!((overlap[3].as_str(), overlap[4].as_str()), ("0% (0/1)", "yes"), "{stdout}");
    assert_eq!((overlap[5].as_str(), overlap[6].as_str()), ("0% (0/1)", "yes"), "{stdout}");
    let throughput = cells(line("throughput_per_s"));
    assert_eq!(throughput.len(), 8, "{throughput:?}");
    let library_throughput: f64 = throughput[5].parse().expect("one library run's throughput");
    assert!(library_throughput > 10.0, "redis-py took the lock: {throughput:?}");
    // The harness counts no messages: its column says so instead of comparing a 0.
    let messages = cells(line("client_messages_per_acquisition"));
    assert_eq!(&messages[5..7], ["not counted", "–"], "{stdout}");
    assert!(stdout.contains("0 verdicts differ") && stdout.contains("every verdict agrees"), "{stdout}");
    // What this run started (its calibration's and its live runs' servers and harnesses) is
    // stopped; another live run on the machine is not this test's business.
    let left = processes_of_run(pid);
    assert!(left.is_empty(), "processes left running by sim (pid {pid}): {left:?}");
}

/// A comparison with no row a reference client can run (here Redisson's watchdog row, the one
/// chosen) compares nothing: exit 2 naming each row and why, before any server starts.
#[test]
fn compare_reference_with_no_runnable_row_exits_2() {
    if !on_path("redis-server") {
        println!("SKIPPED: compare_reference_with_no_runnable_row_exits_2: `redis-server` is missing (Debian package redis-server)");
        return;
    }
    let (code, stdout, stderr) = sim(&[
        "compare",
        "scenarios/fidelity/redis-no-faults.toml",
        "--reference",
        "--algorithm",
        "redisson",
        "--seeds",
        "1",
    ]);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("--reference: no row to compare"), "{stderr}");
    assert!(stderr.contains("no reference client: redisson (redis): redis-py: watchdog = true"), "{stderr}");
    assert!(!stderr.contains("measuring this machine"), "nothing started: {stderr}");
}
