//! Every scenario shipped in `scenarios/`: each parses, and each known outcome
//! (`scenarios/known/*.toml`) runs with its own seed count and must meet its `[expect]` block
//! (exit 0). The library scenarios run 20 seeds each and must meet their `[expect]` blocks too
//! (their claims are chosen to hold at 20 seeds and at their full counts).

use std::path::{Path, PathBuf};
use std::process::Command;

fn files(dir: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .map(|rd| {
            rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "toml")).collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn sim(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_sim"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .output()
        .expect("sim runs");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn every_known_outcome_holds() {
    let known = files("scenarios/known");
    assert!(!known.is_empty(), "no known-outcome scenarios found");
    let mut failures = Vec::new();
    for f in &known {
        let (code, out) = sim(&["run", f.to_str().unwrap()]);
        if code != 0 {
            failures.push(format!("{} exited {code}:\n{out}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// The fidelity scenarios (`scenarios/fidelity/`, what `sim live` and `sim compare` run) hold
/// their claims in simulation too, at their own seed counts; tests/live.rs runs them live.
#[test]
fn every_fidelity_scenario_holds_in_simulation() {
    let fidelity = files("scenarios/fidelity");
    for model in ["redis", "redlock"] {
        assert!(
            fidelity.iter().any(|p| p
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{model}-no-faults"))),
            "scenarios/fidelity/{model}-no-faults.toml is missing"
        );
    }
    let mut failures = Vec::new();
    for f in &fidelity {
        let (code, out) = sim(&["run", f.to_str().unwrap()]);
        if code != 0 {
            failures.push(format!("{} exited {code}:\n{out}", f.display()));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn every_library_scenario_parses_and_meets_its_expectations_at_20_seeds() {
    let lib = files("scenarios");
    for name in ["baseline", "failover", "gc-pause", "clock-drift", "partition", "herd"] {
        assert!(lib.iter().any(|p| p.ends_with(format!("{name}.toml"))), "scenarios/{name}.toml is missing");
    }
    for f in &lib {
        let path = f.to_str().unwrap();
        // Each says what it shows, and asserts something about it.
        let text = std::fs::read_to_string(f).unwrap();
        let doc: toml_edit::DocumentMut = text.parse().unwrap_or_else(|e| panic!("{path}: {e}"));
        let description = doc.get("description").and_then(|d| d.as_str()).unwrap_or_default();
        assert!(description.len() > 200, "{path}: the description should say what the scenario shows");
        let expects = doc.get("expect").and_then(|e| e.as_table()).map_or(0, |t| t.len());
        assert!(expects > 0, "{path}: no [expect] block");
        let (code, out) = sim(&["check", path]);
        assert_eq!(code, 0, "{out}");
        // Each library file's claims are chosen to hold at 20 seeds too (and at its full count,
        // which `sim run` uses by default).
        let (code, out) = sim(&["run", path, "--seeds", "20", "--judge-all"]);
        assert_eq!(code, 0, "{path} exited {code}: {out}");
    }
}

/// Every row of every shipped scenario (library, known outcomes, fidelity, incidents) says what it
/// expects: a row without an `[expect]` block is a claim nobody checks.
#[test]
fn every_row_of_every_shipped_scenario_has_an_expect_block() {
    let models = locksim_algorithms::registry();
    let mut missing = Vec::new();
    for dir in ["scenarios", "scenarios/known", "scenarios/fidelity", "scenarios/incidents"] {
        for path in files(dir) {
            let sc = locksim_simulator::scenario::load_file(&path, &models).unwrap_or_else(|e| panic!("{e}"));
            for run in &sc.runs {
                if !sc.expect.iter().any(|e| e.label == run.label) {
                    missing.push(format!("{}: {}", path.display(), run.label));
                }
            }
        }
    }
    assert!(missing.is_empty(), "rows without an [expect] block:\n  {}", missing.join("\n  "));
}

/// The incident corpus (`scenarios/incidents/`, issue 35): every file runs at its own seed count
/// and meets its `[expect]` blocks; an incident file has a `broken` and a `fixed` row and a header
/// naming its source, and its shrunk scenario (`*.shrunk.toml`, from `sim shrink` on the broken
/// row's first failing seed) sits beside it and holds its own expectation.
#[test]
fn every_incident_holds_and_has_its_shrunk_scenario() {
    let all = files("scenarios/incidents");
    let incidents: Vec<&PathBuf> = all.iter().filter(|p| !p.to_string_lossy().ends_with(".shrunk.toml")).collect();
    assert!(incidents.len() >= 9, "scenarios/incidents holds only {} incidents", incidents.len());
    let mut failures = Vec::new();
    for f in &all {
        let path = f.to_str().unwrap();
        let (code, out) = sim(&["run", path]);
        if code != 0 {
            failures.push(format!("{path} exited {code}:\n{out}"));
        }
    }
    for f in &incidents {
        let path = f.to_str().unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        assert!(text.starts_with("# Incident: "), "{path}: the header must start with '# Incident: ' and the source");
        assert!(text.contains("https://github.com/"), "{path}: the header must link the source thread");
        for label in ["broken", "fixed"] {
            assert!(text.contains(&format!("name = \"{label}\"")), "{path}: no `{label}` row");
            assert!(text.contains(&format!("[expect.{label}]")), "{path}: no [expect.{label}]");
        }
        // An incident whose failure is not a safety violation (an outage) cannot be shrunk: the
        // file says so in a `# Shrunk: none` header line instead.
        let shrunk = PathBuf::from(path.replace(".toml", ".shrunk.toml"));
        assert!(
            shrunk.exists() || text.contains("\n# Shrunk: none"),
            "{path}: no shrunk scenario {} and no '# Shrunk: none' line saying why",
            shrunk.display()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
