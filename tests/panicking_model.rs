//! A model that panics in some seeds (issue 18): `sim run` still finishes every other seed,
//! exits 3, and names the panicked seed with its message in the results JSON
//! (`panicked_seeds`, `panicked_runs`), under the results table (with a replay command), and on
//! stderr (the panic as it happened). The panic is injected at the panic
//! boundary by the debug-build hook `LOCKSIM_TEST_PANIC_SEEDS` (`locksim_simulator::batch`), as a
//! panicking model would raise it; release builds have no such hook, so neither has this test.
#![cfg(debug_assertions)]

use std::process::Command;

use locksim_simulator::batch::TEST_PANIC_SEEDS_VAR;

const SCENARIO: &str = "name = \"p\"\nduration_ms = 2000\nseeds = 6\nalgorithms = [\"redis\", \"etcd\"]\n";

#[test]
fn a_seed_that_panics_is_reported_and_the_others_finish() {
    let dir = std::env::temp_dir().join(format!("locksim-panic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("p.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let json = dir.join("out.json");
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .env(TEST_PANIC_SEEDS_VAR, "2,4")
        .args(["run", file.to_str().unwrap(), "--threads", "2", "--json", json.to_str().unwrap()])
        .output()
        .expect("sim runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "stdout:\n{stdout}\nstderr:\n{stderr}");
    // The panic itself is printed on stderr as it happens (Rust's panic hook)…
    for seed in ["seed 2 panics on purpose", "seed 4 panics on purpose"] {
        assert!(stderr.contains(seed), "{seed:?} not on stderr:\n{stderr}");
    }
    // …and the results name every panicked seed of each row, with a replay command.
    for label in ["redis", "etcd"] {
        assert!(stdout.contains(&format!("{label}: 2 seeds panicked")), "{label}:\n{stdout}");
        assert!(stdout.contains(&format!("--algorithm {label} --seed 2")), "{label}:\n{stdout}");
    }
    assert!(stdout.contains("  seed 4: LOCKSIM_TEST_PANIC_SEEDS: seed 4 panics on purpose"), "{stdout}");

    let results: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = results["algorithms"].as_array().expect("algorithms");
    assert_eq!(rows.len(), 2);
    for row in rows {
        let label = row["label"].as_str().unwrap();
        // Six seeds: 2 and 4 panicked, the other four ran to the end.
        assert_eq!(row["runs"], 4, "{label}: {row}");
        assert_eq!(row["panicked_runs"], 2, "{label}: {row}");
        let panicked: Vec<u64> =
            row["panicked_seeds"].as_array().unwrap().iter().map(|p| p["seed"].as_u64().unwrap()).collect();
        assert_eq!(panicked, [2, 4], "{label}: {row}");
        for p in row["panicked_seeds"].as_array().unwrap() {
            assert!(p["message"].as_str().unwrap().contains("panics on purpose"), "{label}: {p}");
        }
        assert!(row["completed_sections"].as_u64().unwrap() > 0, "{label}: the other seeds did work: {row}");
    }

    // Without the hook the same run is clean: the panics came from it, not from the models.
    let out = Command::new(env!("CARGO_BIN_EXE_sim")).args(["run", file.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
}
