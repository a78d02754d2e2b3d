//! Helpers every model's engine-driven tests share: run one labelled configuration of a scenario
//! text for one seed, and read the history (its grants) and the trace: messages, timers and
//! faults as the model's own typed values (`sent::<RedisMsg>(&out)`), notes as their text. The consul, hazelcast and
//! dynamodb tests use this module directly; the other models' `*_common` modules re-export it
//! next to their own helpers (their own `grants`, where a grant needs more, shadows this one).

#![allow(dead_code)]

use std::any::Any;

use locksim_simulator::history::{HistoryEvent, Stamped};
use locksim_simulator::model::{Cluster, DynModel, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::NodeKind;
use locksim_simulator::run::{RunOptions, SeedOutcome};
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::trace::{MessageLine, Trace};
pub use locksim_simulator::traced::{FaultPhase, TracedFault};

/// Runs `label` of the scenario `toml` for `seed`, with a trace when `trace`.
pub fn run_with(toml: &str, label: &str, seed: u64, trace: bool) -> SeedOutcome {
    let models = locksim_algorithms::registry();
    let sc = parse_str("test.toml", toml, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = sc.runs.iter().find(|r| r.label == label).unwrap_or_else(|| panic!("no run labelled {label}"));
    run.model.run_seed(&sc.setup, &run.params, seed, &RunOptions { trace })
}

/// Runs `label` of the scenario `toml` for `seed`, with a trace.
pub fn run(toml: &str, label: &str, seed: u64) -> SeedOutcome {
    run_with(toml, label, seed, true)
}

/// A model's typed configuration (`EtcdConfig`, `KubernetesConfig`, …), as a test states it:
/// what [`Configured`] needs to run a row with it.
pub trait TypedConfig: Clone + Send + Sync + 'static {
    /// The shipped model it configures: its name, parameters, topology and fencing are its.
    type Shipped: Model;
    /// The shipped model.
    fn shipped() -> &'static Self::Shipped;
    /// The client library preset it names.
    fn library_name(&self) -> String;
    /// Its nodes, by name and kind.
    fn services(&self) -> Vec<(String, NodeKind)>;
    /// Its cluster for `workload`'s clients.
    fn cluster(&self, workload: &WorkloadSpec) -> Cluster<<Self::Shipped as Model>::Protocol>;
    /// Whether its grants carry fencing tokens (the shipped model's answer by default).
    fn fenced(&self, params: &Params) -> bool {
        Model::fenced(Self::shipped(), params)
    }
    /// Whether it takes shared (read) locks (the shipped model's answer by default).
    fn shared_locks(&self, params: &Params) -> bool {
        Model::shared_locks(Self::shipped(), params)
    }
}

/// A shipped model fixed to one typed configuration: it builds its cluster from the
/// configuration, not from the scenario's parameters.
pub struct Configured<C>(pub C);

impl<C: TypedConfig> Model for Configured<C> {
    type Protocol = <C::Shipped as Model>::Protocol;
    fn name(&self) -> &'static str {
        Model::name(C::shipped())
    }
    fn summary(&self) -> &'static str {
        "a shipped model with a typed configuration"
    }
    fn params(&self) -> &'static [ParamSpec] {
        Model::params(C::shipped())
    }
    fn library(&self, _params: &Params) -> Option<String> {
        Some(self.0.library_name())
    }
    fn fenced(&self, params: &Params) -> bool {
        self.0.fenced(params)
    }
    fn shared_locks(&self, params: &Params) -> bool {
        self.0.shared_locks(params)
    }
    fn services(&self, _params: &Params) -> Vec<(String, NodeKind)> {
        self.0.services()
    }
    fn topology(&self, params: &Params) -> Topology {
        Model::topology(C::shipped(), params)
    }
    fn build(&self, _params: &Params, workload: &WorkloadSpec) -> Cluster<Self::Protocol> {
        self.0.cluster(workload)
    }
}

/// Runs `setup`, a scenario text with one row and no model parameters (its network, workload
/// and faults), with the model configured as `cfg`, for `seed`, with a trace.
pub fn run_config<C: TypedConfig>(setup: &str, cfg: &C, seed: u64) -> SeedOutcome {
    let sc = parse_str("test.toml", setup, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sc.runs.len(), 1, "one row: the configuration comes from the test");
    Configured(cfg.clone()).run_seed(&sc.setup, &sc.runs[0].params, seed, &RunOptions { trace: true })
}

/// The node id of `client-i`.
pub fn client(out: &SeedOutcome, i: usize) -> usize {
    out.history.clients[i]
}

/// Every grant: (true time ms, client node id, token).
pub fn grants(out: &SeedOutcome) -> Vec<(f64, usize, Option<u64>)> {
    events(out, |e| matches!(e, HistoryEvent::Granted { .. }))
        .into_iter()
        .map(|s| match &s.event {
            HistoryEvent::Granted { token, .. } => (s.at_ns as f64 / 1e6, s.node, *token),
            _ => unreachable!(),
        })
        .collect()
}

/// History events matching a predicate.
pub fn events<'a>(out: &'a SeedOutcome, f: impl Fn(&HistoryEvent) -> bool + 'a) -> Vec<&'a Stamped> {
    out.history.events.iter().filter(|e| f(&e.event)).collect()
}

/// The run's trace (it must have been run with one).
pub fn traced(out: &SeedOutcome) -> &Trace {
    out.trace.as_ref().expect("a traced run")
}

/// Every message of type `M` (the model's message enum, or `ResourceMsg`) sent and not dropped
/// at once, in order: its true time, sender (`node`), receiver (`peer`) and value (`msg`).
pub fn sent<M: Any>(out: &SeedOutcome) -> Vec<MessageLine<'_, M>> {
    traced(out).sent().collect()
}

/// Every message of type `M` handed to its receiver (`node`; `peer` is the sender), in order.
pub fn delivered<M: Any>(out: &SeedOutcome) -> Vec<MessageLine<'_, M>> {
    traced(out).delivered().collect()
}

/// Every message of type `M` dropped, at its sender (`peer` is the receiver) or at its
/// receiver (`peer` is the sender), in order.
pub fn dropped<M: Any>(out: &SeedOutcome) -> Vec<MessageLine<'_, M>> {
    traced(out).dropped().collect()
}

/// Every fault line (a start, an end, a wait for a role), with its true time in ms.
pub fn faults(out: &SeedOutcome) -> Vec<(f64, &TracedFault)> {
    traced(out).faults().map(|(e, f)| (e.at_ns as f64 / 1e6, f)).collect()
}

/// The first start of a fault of `kind` (its scenario name, `crash`, `pause`, …): (true ms,
/// the fault as traced).
pub fn fault_start<'o>(out: &'o SeedOutcome, kind: &str) -> (f64, &'o TracedFault) {
    faults(out)
        .into_iter()
        .find(|(_, f)| f.phase == FaultPhase::Starts && f.kind.name() == kind)
        .unwrap_or_else(|| panic!("no {kind} fault started"))
}

/// The model's notes (its own words: a note is text by design, not a value) whose text
/// contains `needle`: (true time in ms, node, text).
pub fn notes(out: &SeedOutcome, needle: &str) -> Vec<(f64, String, String)> {
    lines(out, "note").into_iter().filter(|(_, _, d)| d.contains(needle)).collect()
}

/// Every trace line of a kind that carries no value (`resume`, `start`, `reset`, `note`):
/// (true time in ms, node, text).
pub fn lines(out: &SeedOutcome, kind: &str) -> Vec<(f64, String, String)> {
    traced(out)
        .entries
        .iter()
        .filter(|t| t.kind == kind)
        .map(|t| (t.at_ns as f64 / 1e6, t.node.clone(), t.detail.clone()))
        .collect()
}

/// Prints the trace between two true times (for debugging a failing test with `--nocapture`).
pub fn dump(out: &SeedOutcome, from_ms: f64, to_ms: f64) {
    for t in &out.trace.as_ref().expect("trace").entries {
        let ms = t.at_ns as f64 / 1e6;
        if ms >= from_ms && ms <= to_ms {
            println!("{ms:>12.3} {:<12} {:<8} {}", t.node, t.kind, t.detail);
        }
    }
}
