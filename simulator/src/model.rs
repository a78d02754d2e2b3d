//! What a lock model is: a name, a parameter schema with the real systems' defaults, validation,
//! its node names, and a builder that makes the cluster's typed processes ([`Model`]); and the
//! same model with its protocol types erased ([`DynModel`]), which is what a parsed row carries
//! and what runs a seed. The registry that maps names to models lives in `locksim-algorithms`.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use crate::directory::NodeKind;
use crate::dist::Dist;
use crate::lockclient::LockClient;
use crate::outcome::{Halt, Recorded, RunOptions, SeedOutcome};
use crate::process::{Process, Protocol};
use crate::search::SearchWorld;
use crate::setup::{Setup, WorkloadSpec};

/// The type and range of one model parameter.
#[derive(Clone, Debug)]
pub enum ParamKind {
    /// A number (no distribution), inclusive range.
    Number {
        /// The smallest value allowed.
        min: f64,
        /// The largest value allowed.
        max: f64,
    },
    /// A number or a distribution, every possible value within the inclusive range.
    Dist {
        /// The smallest value any draw may have.
        min: f64,
        /// The largest value any draw may have.
        max: f64,
    },
    /// An integer, inclusive range.
    Int {
        /// The smallest value allowed.
        min: i64,
        /// The largest value allowed.
        max: i64,
    },
    /// `true` or `false`.
    Bool,
    /// One of these strings.
    Choice(&'static [&'static str]),
}

impl ParamKind {
    /// How the expected type reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            ParamKind::Number { min, max } => format!("a number in [{min}, {max}]"),
            ParamKind::Dist { min, max } => {
                format!("a number or distribution with values in [{min}, {max}]")
            }
            ParamKind::Int { min, max } => format!("an integer in [{min}, {max}]"),
            ParamKind::Bool => "true or false".to_string(),
            ParamKind::Choice(c) => {
                let q: Vec<String> = c.iter().map(|s| format!("\"{s}\"")).collect();
                format!("one of {}", q.join(", "))
            }
        }
    }
}

/// One parameter: its key, type, default (as TOML text) and one line of meaning.
#[derive(Clone, Debug)]
pub struct ParamSpec {
    /// The key a scenario sets it by (and `Params` reads it by).
    pub name: &'static str,
    /// Its type and range.
    pub kind: ParamKind,
    /// The default as a TOML value (`"3"`, `"false"`, `"\"sequential\""`), read as a user's value is.
    pub default: &'static str,
    /// One line saying what it does, for `sim list`.
    pub meaning: &'static str,
}

/// A parameter's value after validation.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    /// A `Number`, or a `Dist` parameter given as a constant.
    Num(f64),
    /// A `Dist` parameter given as a distribution.
    Dist(Dist),
    /// An `Int`.
    Int(i64),
    /// A `Bool`.
    Bool(bool),
    /// A `Choice`: the string chosen.
    Str(String),
}

/// A model's parameters: every key of its schema, defaults filled in.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Params {
    /// Each parameter's value, by its name.
    pub values: BTreeMap<String, ParamValue>,
    /// The keys the scenario set itself (even to the default's value): a preset that fills in
    /// defaults (Redlock's `client`) must not overwrite a value the user wrote.
    #[serde(skip)]
    pub explicit: BTreeSet<String>,
}

impl Params {
    fn get(&self, key: &str) -> &ParamValue {
        self.values.get(key).unwrap_or_else(|| panic!("model parameter `{key}` missing from its schema"))
    }
    /// A plain number (a `Number`, or an `Int` widened).
    pub fn f64(&self, key: &str) -> f64 {
        match self.get(key) {
            ParamValue::Num(v) => *v,
            ParamValue::Int(v) => *v as f64,
            ParamValue::Dist(Dist::Const(v)) => *v,
            other => panic!("parameter `{key}` is not a number: {other:?}"),
        }
    }
    /// A distribution parameter (a constant as `Dist::Const`). Panics on a key outside the
    /// schema or a value of another type, as the other readers do.
    pub fn dist(&self, key: &str) -> Dist {
        match self.get(key) {
            ParamValue::Dist(d) => d.clone(),
            ParamValue::Num(v) => Dist::Const(*v),
            ParamValue::Int(v) => Dist::Const(*v as f64),
            other => panic!("parameter `{key}` is not a distribution: {other:?}"),
        }
    }
    /// An integer parameter.
    pub fn int(&self, key: &str) -> i64 {
        match self.get(key) {
            ParamValue::Int(v) => *v,
            other => panic!("parameter `{key}` is not an integer: {other:?}"),
        }
    }
    /// A boolean parameter.
    pub fn bool(&self, key: &str) -> bool {
        match self.get(key) {
            ParamValue::Bool(v) => *v,
            other => panic!("parameter `{key}` is not a boolean: {other:?}"),
        }
    }
    /// A choice parameter: the string chosen.
    pub fn str(&self, key: &str) -> &str {
        match self.get(key) {
            ParamValue::Str(v) => v,
            other => panic!("parameter `{key}` is not a string: {other:?}"),
        }
    }
    /// Whether the scenario set `key` itself, rather than leaving it at the schema default.
    pub fn is_explicit(&self, key: &str) -> bool {
        self.explicit.contains(key)
    }
    /// Sets `key` as the scenario would: the value, marked explicit.
    pub fn set_explicit(&mut self, key: &str, value: ParamValue) {
        self.values.insert(key.to_string(), value);
        self.explicit.insert(key.to_string());
    }
    /// A library preset's value for `key`, kept only where the scenario did not set `key` itself
    /// ([`Params::is_explicit`]): an explicit value, even one equal to the schema default, wins.
    /// Returns whether the preset's value went in. Every model's `client` preset fills through
    /// this, so "the preset fills unless explicit" means the same in every model.
    pub fn fill_unset(&mut self, key: &str, value: ParamValue) -> bool {
        if self.is_explicit(key) {
            return false;
        }
        self.values.insert(key.to_string(), value);
        true
    }
    /// The parameters whose values differ from the schema defaults (for the results JSON `params`).
    pub fn overrides(&self, defaults: &Params) -> BTreeMap<String, ParamValue> {
        self.values
            .iter()
            .filter(|(k, v)| defaults.values.get(*k) != Some(*v))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// A model's nodes, before the engine adds the clients' workload drivers and the resource.
pub struct Cluster<P: Protocol> {
    /// The service nodes' processes, in the order (and number) of [`Model::services`].
    pub services: Vec<Box<dyn Process<P>>>,
    /// One client library per client, `client-0 …`.
    pub clients: Vec<Box<dyn LockClient<P>>>,
}

/// How a model's links and leadership behave.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Topology {
    /// Message links that behave as TCP connections (FIFO: a later message never overtakes an
    /// earlier one on the same directed pair). `true` makes every link ordered.
    pub ordered_links: bool,
    /// True for a model with no leader or primary (Redlock's independent masters): the `leader`
    /// selector then means `server-0` and `follower` any other server, and the engine does not
    /// ask the servers' [`crate::process::Process::leadership`] after each handler (they claim
    /// none, so no leader change is recorded).
    pub leaderless: bool,
}

/// A semantic problem with a model's parameters (the scenario parser adds file, line and key).
#[derive(Clone, Debug, PartialEq)]
pub struct ParamProblem {
    /// The parameter at fault.
    pub key: String,
    /// What is wrong and what would be right.
    pub message: String,
}

/// A lock model, typed by its protocol. A model author implements this; the registry erases it
/// to a [`DynModel`] (every `Model` is one).
pub trait Model: Send + Sync + 'static {
    /// The model's message and timer types.
    type Protocol: Protocol;
    /// The name scenarios use (`db`, `etcd`, …; `sim list` prints every registered one).
    fn name(&self) -> &'static str;
    /// One line for `sim list`.
    fn summary(&self) -> &'static str;
    /// Every parameter, with the real system's default.
    fn params(&self) -> &'static [ParamSpec];
    /// Checks that go beyond each parameter's own range (quorum above the sentinel count, …).
    fn validate(&self, params: &Params, workload: &WorkloadSpec) -> Vec<ParamProblem> {
        let _ = (params, workload);
        Vec::new()
    }
    /// Notes shown with the results about what this configuration does not model (honesty about
    /// limits), e.g. "not reentrant: nested acquisitions skipped".
    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String> {
        let _ = (params, workload);
        Vec::new()
    }
    /// Whether grants carry a fencing token.
    fn fenced(&self, params: &Params) -> bool;
    /// The lock library preset this configuration runs, for the results table and JSON: by
    /// default the `client` parameter's value, `None` for a model without one. A model whose
    /// default preset depends on other parameters (redis: Redisson with the watchdog) names the
    /// one that runs.
    fn library(&self, params: &Params) -> Option<String> {
        match params.values.get("client") {
            Some(ParamValue::Str(s)) => Some(s.clone()),
            _ => None,
        }
    }
    /// Whether this configuration grants shared (read) locks. The scenario parser rejects
    /// `read_fraction > 0` at `workload.read_fraction` for every configuration that does not,
    /// so models need not check it themselves.
    fn shared_locks(&self, params: &Params) -> bool {
        let _ = params;
        false
    }
    /// The service nodes (`server-i`, `sentinel-i`, …) with their kinds, in the order `build`
    /// returns their processes. Builds nothing: the parser asks it to check the names a scenario
    /// uses. Names must be unique.
    fn services(&self, params: &Params) -> Vec<(String, NodeKind)>;
    /// Whether links are ordered and whether the model has a leader.
    fn topology(&self, params: &Params) -> Topology;
    /// Builds the cluster.
    fn build(&self, params: &Params, workload: &WorkloadSpec) -> Cluster<Self::Protocol>;
}

/// A model with its protocol types erased: what the registry lists, a parsed row carries, and
/// what runs one seed (monomorphised for the model's own message and timer types).
pub trait DynModel: Send + Sync {
    /// As [`Model::name`].
    fn name(&self) -> &'static str;
    /// As [`Model::summary`].
    fn summary(&self) -> &'static str;
    /// As [`Model::params`].
    fn params(&self) -> &'static [ParamSpec];
    /// As [`Model::validate`].
    fn validate(&self, params: &Params, workload: &WorkloadSpec) -> Vec<ParamProblem>;
    /// As [`Model::limitations`].
    fn limitations(&self, params: &Params, workload: &WorkloadSpec) -> Vec<String>;
    /// As [`Model::fenced`].
    fn fenced(&self, params: &Params) -> bool;
    /// As [`Model::library`].
    fn library(&self, params: &Params) -> Option<String>;
    /// As [`Model::shared_locks`].
    fn shared_locks(&self, params: &Params) -> bool;
    /// As [`Model::services`].
    fn services(&self, params: &Params) -> Vec<(String, NodeKind)>;
    /// As [`Model::topology`].
    fn topology(&self, params: &Params) -> Topology;
    /// Runs one seed of this model with `params` through `setup` and returns what the engine
    /// recorded (the history, and the trace when `opts` asks), unchecked: a seed that `stop`
    /// cuts short or whose simulated time stops advancing ends with its [`Halt`] instead. The
    /// engine's one entry point; the campaign calls the checkers on what it returns. Panics
    /// inside the model propagate: [`crate::batch::record_seed`] is the one place that catches
    /// them.
    fn record_seed(
        &self,
        setup: &Setup,
        params: &Params,
        seed: u64,
        opts: &RunOptions,
        stop: Option<&AtomicBool>,
    ) -> Result<Recorded, Halt>;
    /// One seed recorded and checked ([`SeedOutcome::checked`]), for tests and tools that want
    /// a seed's metrics without a campaign; a zero-time loop panics with its message.
    fn run_seed(&self, setup: &Setup, params: &Params, seed: u64, opts: &RunOptions) -> SeedOutcome {
        let recorded = self.record_seed(setup, params, seed, opts, None).unwrap_or_else(|halt| panic!("{halt}"));
        SeedOutcome::checked(recorded)
    }
    /// As [`DynModel::run_seed`], but a seed that `stop` cuts short or whose simulated time
    /// stops advancing ends with its [`Halt`] instead of a result.
    fn run_seed_until(
        &self,
        setup: &Setup,
        params: &Params,
        seed: u64,
        opts: &RunOptions,
        stop: Option<&AtomicBool>,
    ) -> Result<SeedOutcome, Halt> {
        self.record_seed(setup, params, seed, opts, stop).map(SeedOutcome::checked)
    }
    /// The world of one seed at true time 0, to be run step by step by a systematic search
    /// (`sim exhaust`): the caller picks each next event and each latency.
    fn search_world(&self, setup: &Setup, params: &Params, seed: u64) -> Box<dyn SearchWorld>;
}

/// A registered model, as a parsed row holds it.
#[derive(Clone, Copy)]
pub struct ModelRef(pub &'static dyn DynModel);

impl std::ops::Deref for ModelRef {
    type Target = dyn DynModel;
    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl fmt::Debug for ModelRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_unset_fills_a_default_and_keeps_an_explicit_value() {
        let mut p = Params::default();
        p.values.insert("ttl_ms".into(), ParamValue::Num(30_000.0));
        p.set_explicit("retries", ParamValue::Int(3));
        assert!(p.fill_unset("ttl_ms", ParamValue::Num(10_000.0)), "a schema default takes the preset's value");
        assert_eq!(p.f64("ttl_ms"), 10_000.0);
        // Explicit even though 3 may equal the schema default: the scenario's value is kept.
        assert!(!p.fill_unset("retries", ParamValue::Int(32)));
        assert_eq!(p.int("retries"), 3);
        assert!(!p.is_explicit("ttl_ms"), "a filled value is not the scenario's");
    }
}
