//! The crate's integration tests as one test binary (`cargo test -p locksim-simulator --test integration`;
//! one binary links once, not once per file). Each file of this folder is a module named after
//! what it pins: `-- engine::` runs one file's tests. A new file must be declared below
//! (the crate sets `autotests = false`); `every_file_is_a_module` fails until it is.

mod common;
#[path = "common/parse_fake.rs"]
mod parse_fake;

mod app_check;
mod checker_boundaries;
mod checkers;
mod engine;
mod engine_halt;
mod exhaust_parse;
mod explore_parse;
mod fault_schedule;
mod fingerprint_macros;
mod histogram_reuse;
mod parser_boundaries;
mod release_failed;
mod scenario_parse;
mod workload_driver;
mod world_fingerprint;

#[test]
fn every_file_is_a_module() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let root = std::fs::read_to_string(dir.join("tests.rs")).unwrap();
    let files = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap());
    let stems: Vec<String> = files.filter_map(|n| Some(n.strip_suffix(".rs")?.to_string())).collect();
    let missing: Vec<&String> =
        stems.iter().filter(|s| *s != "tests" && !root.contains(&format!("\nmod {s};\n"))).collect();
    assert!(missing.is_empty(), "tests/ files never built (declare them in tests/tests.rs): {missing:?}");
}
