//! The model of docs/adding-a-model.md's section 11, built as the guide says: its own folder
//! (`tests/single/`, standing for `algorithms/src/single/`) and one registry line, and nothing
//! else. The guide prints those files; the first test holds it to them, so it cannot drift from
//! the code compiled here. The others run the model through the same parser, engine and
//! checkers as every registered model.

use crate::single;

use locksim_simulator::batch::run_seed;
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::model::DynModel;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;

const GUIDE: &str = include_str!("../../docs/adding-a-model.md");

/// The model's files, as the guide prints them (each under a `// algorithms/src/single/…` line).
const FILES: [(&str, &str); 4] = [
    ("mod.rs", include_str!("single/mod.rs")),
    ("protocol.rs", include_str!("single/protocol.rs")),
    ("server.rs", include_str!("single/server.rs")),
    ("client.rs", include_str!("single/client.rs")),
];

/// The registry with the model's line added: `registry()` in `algorithms/src/lib.rs` is a list,
/// and the guide's one line is this push.
fn registry_with_single() -> Vec<&'static dyn DynModel> {
    let mut models = locksim_algorithms::registry();
    models.push(&single::SINGLE);
    models
}

/// Runs the only row of a scenario of the single model, checked, for `seed`.
fn run(scenario: &str, seed: u64) -> SeedOutcome {
    let sc = parse_str("single.toml", scenario, &registry_with_single()).unwrap_or_else(|e| panic!("{e}"));
    run_seed(&sc, &sc.runs[0], seed, &RunOptions::default()).expect("no panic")
}

/// Three clients holding 50 ms at a time over a 1 ms network, for 2 s.
fn scenario(faults: &str) -> String {
    format!(
        "name = \"single\"\nduration_ms = 2000\nalgorithms = [\"single\"]\n[network]\nlatency_ms = 1\n\
         [workload]\nclients = 3\nhold_ms = 50\nthink_ms = 1\n[models.single]\nretry_ms = 5\n{faults}"
    )
}

fn tokens(out: &SeedOutcome) -> Vec<u64> {
    out.history
        .events
        .iter()
        .filter_map(|s| match s.event {
            HistoryEvent::Granted { token, .. } => token,
            _ => None,
        })
        .collect()
}

#[test]
fn the_guide_prints_the_example_files_as_compiled_here() {
    for (name, text) in FILES {
        let block = format!("```rust\n// algorithms/src/single/{name}\n{text}```\n");
        assert!(
            GUIDE.contains(&block),
            "docs/adding-a-model.md section 11 does not print tests/single/{name} as it is"
        );
    }
    assert!(
        GUIDE.contains("        Entry { model: &single::SINGLE, live: None },\n"),
        "the guide shows the registry line"
    );
}

#[test]
fn one_registry_line_makes_the_model_a_scenario_row() {
    let models = registry_with_single();
    assert_eq!(models.len(), locksim_algorithms::registry().len() + 1);
    let sc = parse_str("single.toml", &scenario(""), &models).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.runs.len(), 1);
    assert_eq!(sc.runs[0].model.name(), "single");
    // The parser fills the schema's defaults and reads the scenario's value.
    assert_eq!(sc.runs[0].params.f64("service_ms"), 0.05);
    assert_eq!(sc.runs[0].params.f64("retry_ms"), 5.0);
    // A value outside the schema's range is refused with the key and the range.
    let bad = scenario("").replace("retry_ms = 5", "retry_ms = 0");
    let Err(err) = parse_str("single.toml", &bad, &models) else { panic!("retry_ms = 0 accepted") };
    let err = err.to_string();
    assert!(err.contains("retry_ms") && err.contains("0.001"), "{err}");
}

#[test]
fn one_server_grants_one_holder_at_a_time_with_rising_tokens() {
    for seed in 0..5 {
        let out = run(&scenario(""), seed);
        assert_eq!(out.metrics.overlap_events, 0, "seed {seed}");
        let tokens = tokens(&out);
        // 2 s of 50 ms sections (each grant takes about a 2 ms round trip and a 1 ms think).
        assert!(tokens.len() >= 30, "seed {seed}: {} grants", tokens.len());
        assert!(tokens.windows(2).all(|w| w[0] < w[1]), "seed {seed}: tokens rise: {tokens:?}");
    }
}

#[test]
fn a_server_crash_forgets_the_holder_but_not_the_token() {
    // The holder keeps holding through the crash; the restarted server grants the lock again.
    let crash = "[[faults]]\nkind = \"crash\"\ntarget = \"server-0\"\nat_ms = 500\nduration_ms = 10\n";
    let out = run(&scenario(crash), 0);
    assert!(out.metrics.overlap_events > 0, "a second holder after the restart");
    assert_eq!(out.metrics.token_regressions, 0);
    let tokens = tokens(&out);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "the durable token keeps rising: {tokens:?}");
}
