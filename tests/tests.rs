//! The root crate's integration tests as one test binary (`cargo test --test integration`; one
//! binary links once, not once per file). Each file of this folder is a module named after what
//! it pins: `cargo test --test integration stops::` runs one file's tests. A new file must be
//! declared below (the root `Cargo.toml` sets `autotests = false`); `every_file_is_a_module`
//! fails until it is, and likewise for a helper of `support/` not declared in `support/mod.rs`.
//!
//! No file needs a process of its own, so none is kept separate:
//! - no test sets an environment variable or the current directory of this process: what a run
//!   needs (`LOCKSIM_TEST_PANIC_SEEDS`, `PATH`, a working directory) is set on the `sim` it spawns;
//!   `LOCKSIM_BLESS` is read by `golden::` only (`LOCKSIM_BLESS=1 cargo test --test integration
//!   golden::`);
//! - signals (`stops::`, `shards::`, `cli::`, `live::`) go to a spawned `sim` by its pid, never to a
//!   process group;
//! - each file writes under temporary directories of its own name and this process's id
//!   (`locksim-FILE-PID-TEST`, `support::cli::fresh_dir`, or a file's own prefix), checked
//!   distinct across files, so two files never share an output path; the reference clients that
//!   `live_reference::` and `compare_reference::` build into `target/reference/` are built under
//!   the live lock below;
//! - the live tests (`live*::`, `compare_reference::`) start real servers and count the processes
//!   a run left by that `sim`'s pid (`support::live::processes_of_run`), not by name; they take
//!   `support::live::serial()`, one lock for the whole binary, so one runs at a time as when each
//!   file was a binary run after the other. The test runner starts tests in name order, so while
//!   one `live*` test holds the lock the other thread mostly waits on it for the next.
//! - `build_pgo::` runs `scripts/build-pgo` only up to its argument and tool checks; no test is
//!   `#[ignore]`d.

mod support;

mod build_pgo;
mod check_estimate;
mod check_mutations;
mod cli;
mod clocks_reach_nodes;
mod compare_reference;
mod determinism;
mod docs_params;
mod examples;
mod exhaust;
mod explain;
mod explore;
mod fold_counted;
mod golden;
mod limits;
mod live;
mod live_db;
mod live_db_recipes;
mod live_etcd;
mod live_postgres;
mod live_reference;
mod live_zookeeper;
mod module_graph;
mod outputs;
mod panicking_model;
mod report;
mod report_browser;
mod scenario_mutations;
mod scenarios;
mod shards;
mod shrink;
mod slurm;
mod stops;
mod sweep;
mod sweep_double_executions;
mod sweep_outputs;
mod time_bounds;
mod time_extremes;

/// Every `.rs` file of `tests/` is a module of this binary, and every file of `tests/support/`
/// a module of `support`: an undeclared file would never be built (`autotests = false`).
#[test]
fn every_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let undeclared = |dir: &std::path::Path, root: &str, skip: &str| -> Vec<String> {
        let declarations = std::fs::read_to_string(dir.join(root)).unwrap();
        let files = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap());
        let stems: Vec<String> = files.filter_map(|n| Some(n.strip_suffix(".rs")?.to_string())).collect();
        let declared = |s: &str| declarations.lines().any(|l| l.trim_start_matches("pub ") == format!("mod {s};"));
        stems.into_iter().filter(|s| s != skip && !declared(s)).collect()
    };
    let missing = undeclared(&dir, "tests.rs", "tests");
    assert!(missing.is_empty(), "tests/ files never built (declare them in tests/tests.rs): {missing:?}");
    let dir = dir.join("support");
    let missing = undeclared(&dir, "mod.rs", "mod");
    assert!(missing.is_empty(), "tests/support/ files never built (declare them in tests/support/mod.rs): {missing:?}");
}
