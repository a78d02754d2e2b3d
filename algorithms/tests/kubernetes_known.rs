//! The kubernetes model's known-outcome scenarios (`scenarios/known/*-kubernetes-*.toml`): each
//! file is loaded as `sim run` loads it, every row runs the file's seeds, and its `[expect]`
//! block is judged as `sim run` judges it.

mod kubernetes_common;

use std::path::Path;

use kubernetes_common::judge;

fn check(file: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/known").join(file);
    let sc = locksim_simulator::scenario::load_file(&path, &locksim_algorithms::registry())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!sc.expect.is_empty(), "{file} has no [expect] block");
    for run in &sc.runs {
        let (failures, measured) = judge(&sc, &run.label, sc.seeds);
        assert!(failures.is_empty(), "{file}: {failures:?} (measured: {measured:?})");
    }
}

#[test]
fn paused_leader_overlaps_in_every_seed() {
    check("12-kubernetes-paused-leader.toml");
}

#[test]
fn clock_drift_alone_never_overlaps() {
    check("13-kubernetes-clock-drift.toml");
}
