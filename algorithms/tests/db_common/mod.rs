//! Helpers the db model's tests share: run a scenario text through the engine, or a scenario's
//! network, workload and faults with a typed [`Config`] ([`run_config`]), and read grants, notes
//! and server answers back from the history and the trace.

#![allow(dead_code)]

use crate::common;
pub use common::{run_config, TypedConfig};

pub use locksim_algorithms::db::{Config, Mode};
use locksim_algorithms::db::{Db, DB};
use locksim_simulator::history::HistoryEvent;
use locksim_simulator::model::{Cluster, DynModel, Params};
use locksim_simulator::process::NodeKind;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;

pub const MS: f64 = 1e6;

/// Runs `label` of the scenario `toml` for `seed`, with a trace.
pub fn run(toml: &str, label: &str, seed: u64) -> SeedOutcome {
    let models = locksim_algorithms::registry();
    run_with(toml, label, seed, &models)
}

/// The same with a custom model list (a test wrapper model).
pub fn run_with(toml: &str, label: &str, seed: u64, models: &[&'static dyn DynModel]) -> SeedOutcome {
    let sc = parse_str("db_test.toml", toml, models).unwrap_or_else(|e| panic!("{e}"));
    let run = sc.runs.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no run labelled {label}"));
    run.model.run_seed(&sc.setup, &run.params, seed, &RunOptions { trace: true })
}

/// The configuration a scenario without `[models.db]` runs (the schema's defaults: `locksim-1`'s
/// lock row on one MySQL server), for a test to change what it is about.
pub fn defaults() -> Config {
    let text = "name = \"defaults\"\nduration_ms = 1000\nalgorithms = [\"db\"]\n";
    let sc = parse_str("db_defaults.toml", text, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    Config::from_params(&sc.runs[0].params, 0)
}

impl TypedConfig for Config {
    type Shipped = Db;
    fn shipped() -> &'static Db {
        &DB
    }
    fn library_name(&self) -> String {
        self.library.name().to_string()
    }
    fn services(&self) -> Vec<(String, NodeKind)> {
        Config::services(self)
    }
    fn cluster(&self, workload: &WorkloadSpec) -> Cluster<Db> {
        Config { clients: workload.clients, ..self.clone() }.cluster()
    }
    fn fenced(&self, _params: &Params) -> bool {
        // As the model: only the lock row's auto-increment id is a token.
        self.mode == Mode::Table
    }
}

/// A grant: true time (ms), client node id, token.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Grant {
    pub at_ms: f64,
    pub node: usize,
    pub token: Option<u64>,
    pub nested: bool,
    /// From the client's acquire call to the grant (ms).
    pub latency_ms: f64,
}

pub fn grants(out: &SeedOutcome) -> Vec<Grant> {
    let mut starts = std::collections::BTreeMap::new();
    let mut v = Vec::new();
    for e in &out.history.events {
        match e.event {
            HistoryEvent::AcquireStart { .. } => {
                starts.insert(e.node, e.at_ns);
            }
            HistoryEvent::Granted { token, nested, .. } => {
                let start = starts.get(&e.node).copied().unwrap_or(e.at_ns);
                v.push(Grant {
                    at_ms: e.at_ns as f64 / MS,
                    node: e.node,
                    token,
                    nested,
                    latency_ms: (e.at_ns - start) as f64 / MS,
                });
            }
            _ => {}
        }
    }
    v
}

/// Times (ms) of history events matching `pred`.
pub fn history_times(out: &SeedOutcome, pred: impl Fn(&HistoryEvent) -> bool) -> Vec<(f64, usize)> {
    out.history.events.iter().filter(|e| pred(&e.event)).map(|e| (e.at_ns as f64 / MS, e.node)).collect()
}

/// Trace entries of `kind` at `node` whose detail contains `text`: (true time ms, detail).
pub fn trace_lines(out: &SeedOutcome, node: &str, kind: &str, text: &str) -> Vec<(f64, String)> {
    out.trace
        .as_ref()
        .expect("trace")
        .entries
        .iter()
        .filter(|t| t.node == node && t.kind == kind && t.detail.contains(text))
        .map(|t| (t.at_ns as f64 / MS, t.detail.clone()))
        .collect()
}

/// Notes at `node` containing `text`.
pub fn notes(out: &SeedOutcome, node: &str, text: &str) -> Vec<(f64, String)> {
    trace_lines(out, node, "note", text)
}
