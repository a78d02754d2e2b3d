//! The kubernetes row of the shared scenarios (`scenarios/{baseline,clock-drift,failover,
//! gc-pause,partition}.toml`) meets its `[expect.kubernetes]` block over the file's own seeds.
//!
//! Each file is read as written, then reduced to its kubernetes row (the `algorithms` list
//! becomes `["kubernetes"]`; other models' `[models.*]`, `[[variants]]` and `[expect.*]` blocks
//! are left out), so the test needs only this model in the registry. Everything the row runs
//! through (duration, network, workload, clocks, faults, seeds) is the file's.

mod kubernetes_common;

use kubernetes_common::judge;

/// The file's text with only its kubernetes row.
fn kubernetes_only(text: &str) -> String {
    let mut out = String::new();
    let mut keep = true;
    for line in text.lines() {
        if line.starts_with('[') {
            let header = line.trim();
            keep = !(header == "[[variants]]"
                || (header.starts_with("[expect.") && header != "[expect.kubernetes]")
                || (header.starts_with("[models.") && header != "[models.kubernetes]"));
        }
        if !keep {
            continue;
        }
        if line.starts_with("algorithms = ") {
            assert!(line.contains("\"kubernetes\""), "kubernetes is not among the algorithms: {line}");
            out.push_str("algorithms = [\"kubernetes\"]\n");
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

fn check(name: &str) {
    let path = format!("{}/../scenarios/{name}.toml", env!("CARGO_MANIFEST_DIR"));
    let text = kubernetes_only(&std::fs::read_to_string(&path).expect("scenario file"));
    let sc = locksim_simulator::scenario::parse_str(&path, &text, &locksim_algorithms::registry())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(sc.expect.iter().any(|e| e.label == "kubernetes"), "{name}: no [expect.kubernetes]");
    let (failures, measured) = judge(&sc, "kubernetes", sc.seeds);
    assert!(failures.is_empty(), "{name}: {failures:?} (measured: {measured:?})");
}

#[test]
fn baseline() {
    check("baseline");
}

#[test]
fn clock_drift() {
    check("clock-drift");
}

#[test]
fn failover() {
    check("failover");
}

#[test]
fn gc_pause() {
    check("gc-pause");
}

#[test]
fn partition() {
    check("partition");
}
