//! The documented limits hold without aborting: the largest client count runs, `--threads` and
//! scenario files over their limits are refused with a message and exit code 2, and `sim check`
//! says what a run's memory would be (README, "Reliability").

use crate::support::cli::{fresh_dir, s, sim};

/// `workload.clients` at its documented maximum, 100 000: the engine's per-pair tables were
/// square in the nodes (80 GB), so even `sim check` aborted on an allocation failure. (One
/// model, redis, keeps the test short: the engine's tables are the same for every model, while
/// some models' own work grows faster than linearly with 100 000 requests pending at once.)
#[test]
fn the_largest_client_count_checks_and_runs() {
    let dir = fresh_dir("limits", "clients");
    let file = dir.join("many.toml");
    std::fs::write(
        &file,
        "name = \"many-clients\"\nduration_ms = 20\nseeds = 1\nalgorithms = [\"redis\"]\n\n\
         [workload]\nclients = 100000\n",
    )
    .unwrap();
    let (code, out, err) = sim(&["check", &s(&file)]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("estimate:"), "{out}");
    let (code, out, err) = sim(&["run", &s(&file), "--seeds", "1", "--threads", "1"]);
    assert_eq!(code, 0, "{out}{err}");
}

/// More worker threads than [`MAX_THREADS`](1024) are refused before anything starts: a hundred
/// thousand aborted the process.
#[test]
fn too_many_threads_are_refused() {
    let dir = fresh_dir("limits", "threads");
    let file = dir.join("s.toml");
    std::fs::write(&file, "name = \"t\"\nduration_ms = 100\nseeds = 1\nalgorithms = [\"redis\"]\n").unwrap();
    for threads in ["1025", "100000"] {
        let (code, _, err) = sim(&["run", &s(&file), "--threads", threads]);
        assert_eq!(code, 2, "--threads {threads}: {err}");
        assert!(err.contains(&format!("--threads {threads}: expected at most 1024 threads")), "{err}");
    }
    let (code, _, err) = sim(&["run", &s(&file), "--threads", "1024", "--seeds", "1"]);
    assert_eq!(code, 0, "{err}");
}

/// A scenario file over 16 MiB is refused by every command that reads one, and a device that
/// never ends (`/dev/zero`) is read only that far.
#[test]
fn scenario_files_over_16_mib_are_refused() {
    let dir = fresh_dir("limits", "file-size");
    let big = dir.join("big.toml");
    // A valid scenario followed by 17 MiB of comment: only its size is wrong.
    let mut text = String::from("name = \"big\"\nduration_ms = 100\nseeds = 1\nalgorithms = [\"redis\"]\n");
    let line = format!("# {}\n", "x".repeat(1021));
    while text.len() < 17 * 1024 * 1024 {
        text.push_str(&line);
    }
    std::fs::write(&big, &text).unwrap();
    let big = s(&big);
    let out_dir = s(&dir.join("out"));
    let commands: Vec<Vec<&str>> = vec![
        vec!["check", &big],
        vec!["run", &big],
        vec!["sweep", &big, "--param", "workload.clients=2..3:1", "--out", &out_dir],
        vec!["shrink", &big, "--algorithm", "redis", "--seed", "0"],
        vec!["explore", &big, "--out", &out_dir],
        vec!["explain", &big, "--algorithm", "redis", "--seed", "0"],
        vec!["compare", &big],
        vec!["live", &big],
        vec!["check", "/dev/zero"],
    ];
    for args in commands {
        let (code, out, err) = sim(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(err.contains("larger than 16 MiB (16777216 bytes)"), "{args:?}: {err}");
        assert!(err.contains(args[1]), "the message names the file: {args:?}: {err}");
    }
}

/// `sim check` says how much memory a run would hold (a seed keeps its history to its end) and
/// warns when that is more than the machine has available: one etcd seed of the longest
/// duration would hold tens of terabytes.
#[test]
fn check_estimates_memory_and_warns_beyond_what_is_available() {
    let dir = fresh_dir("limits", "memory");
    let short = dir.join("short.toml");
    std::fs::write(&short, "name = \"short\"\nduration_ms = 2000\nseeds = 2\nalgorithms = [\"etcd\"]\n").unwrap();
    let (code, out, err) = sim(&["check", &s(&short)]);
    assert_eq!(code, 0, "{out}{err}");
    let memory = out.lines().find(|l| l.starts_with("memory: up to about ")).unwrap_or_else(|| panic!("{out}"));
    assert!(memory.contains(" per seed-run at its end, ") && memory.contains("2 seed-runs at once"), "{memory}");
    assert!(!out.contains("warning:"), "{out}");

    let long = dir.join("long.toml");
    std::fs::write(&long, "name = \"long\"\nduration_ms = 1e12\nseeds = 1\nalgorithms = [\"etcd\"]\n").unwrap();
    let (code, out, err) = sim(&["check", &s(&long)]);
    assert_eq!(code, 0, "{out}{err}");
    let warning = out
        .lines()
        .find(|l| l.starts_with("warning: this run may hold up to about "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(warning.contains(" TB") || warning.contains(" GB"), "{warning}");
    assert!(warning.contains("more than the") && warning.contains("available"), "{warning}");
}
