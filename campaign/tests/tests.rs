//! The crate's integration tests as one test binary (`cargo test -p locksim-campaign --test integration`;
//! one binary links once, not once per file). Each file of this folder is a module named after
//! what it pins: `-- shrink_targets::` runs one file's tests. A new file must be declared below
//! (the crate sets `autotests = false`); `every_file_is_a_module` fails until it is.

/// The body the campaign, commands and searches tests share: Redlock (no token, 600 ms TTL)
/// beside the database lock, four clients, the holder paused 900 ms from 300 ms, past the TTL.
/// The text is `tests/fixtures/paused-redlock-beside-db.toml` of the root crate, which the root's
/// `tests/shards.rs` reads too. A macro, not a const, so each file's `SCENARIO` stays a
/// `&'static str` built by `concat!`.
macro_rules! paused_redlock_beside_db {
    () => {
        include_str!("../../tests/fixtures/paused-redlock-beside-db.toml")
    };
}

mod campaign;
mod commands;
mod exhaust;
mod exhaust_start_depth;
mod exhaust_tokens;
mod pct;
mod searches;
mod shrink_targets;
mod verify;

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
