//! The validated scenario: every default filled in, every value checked. Times stay in
//! milliseconds (as written) and become nanoseconds when drawn.

use std::path::PathBuf;

use serde::Serialize;

use crate::model::{ModelRef, Params};
pub use crate::setup::{ClockSpec, FaultKind, FaultSpec, LinkSpec, NetworkSpec, Setup, WorkloadSpec, FAULT_KINDS};

/// A parsed and validated scenario file.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The scenario's `name` (never empty).
    pub name: String,
    /// The scenario's `description`; empty when the file has none.
    pub description: String,
    /// The file it came from, as the user named it (for replay commands and reports).
    pub file: PathBuf,
    /// Runs per algorithm when the command line names no seeds.
    pub seeds: u64,
    /// Every algorithm and variant, in file order (algorithms first, then variants).
    pub runs: Vec<RunSpec>,
    /// What every row runs through: duration, network, workload, clocks and faults.
    pub setup: Setup,
    /// Every `[expect.LABEL]` assertion, in file order.
    pub expect: Vec<Expectation>,
    /// The `[explore]` table (`sim explore`'s bounds); `None` when the file has none.
    pub explore: Option<ExploreSpec>,
    /// The `[exhaust]` table (`sim exhaust`'s bounds); `None` when the file has none.
    pub exhaust: Option<crate::scenario::exhaust::ExhaustSpec>,
}

impl Scenario {
    /// The rows labelled in `wanted` (every row when it is empty), in file order. A label that
    /// names no row is an error listing the valid ones: how every command answers a bad
    /// `--algorithm`.
    pub fn rows_labelled(&self, wanted: &[String]) -> Result<Vec<&RunSpec>, UnknownLabel> {
        if let Some(w) = wanted.iter().find(|w| !self.runs.iter().any(|r| &r.label == *w)) {
            return Err(self.unknown_label(w));
        }
        Ok(self.runs.iter().filter(|r| wanted.is_empty() || wanted.contains(&r.label)).collect())
    }

    /// The row labelled `label`, or the error listing the valid labels.
    pub fn row_labelled(&self, label: &str) -> Result<&RunSpec, UnknownLabel> {
        self.runs.iter().find(|r| r.label == label).ok_or_else(|| self.unknown_label(label))
    }

    fn unknown_label(&self, label: &str) -> UnknownLabel {
        UnknownLabel {
            label: label.to_string(),
            file: self.file.display().to_string(),
            valid: self.runs.iter().map(|r| r.label.as_str()).collect::<Vec<_>>().join(", "),
        }
    }
}

/// An `--algorithm` label that names no row of the scenario.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--algorithm {label}: no such algorithm or variant in {file}; valid labels: {valid}")]
pub struct UnknownLabel {
    /// The label asked for.
    pub label: String,
    /// The scenario file, as the user named it (a sweep adds the point it was looking at).
    pub file: String,
    /// The scenario's labels, in file order, comma-separated.
    pub valid: String,
}

/// The `[explore]` table: the bounds within which `sim explore` draws an extra fault schedule per
/// seed (see docs/scenario-format.md). Times in milliseconds.
#[derive(Clone, Debug, PartialEq)]
pub struct ExploreSpec {
    /// The fault kinds a schedule may use (each seed enables a random non-empty subset).
    pub kinds: Vec<&'static str>,
    /// At most this many extra faults per schedule (at least 1 is drawn).
    pub max_faults: u32,
    /// The longest fault a schedule draws.
    pub max_duration_ms: f64,
    /// The selectors a fault's target is drawn from.
    pub targets: Vec<crate::setup::Selector>,
    /// The largest clock step, either way.
    pub max_jump_ms: f64,
    /// The largest clock rate error, either way.
    pub max_drift_ppm: f64,
    /// The largest added latency of a `slow` fault.
    pub max_latency_ms: f64,
    /// The largest loss rate of a `loss` fault.
    pub max_loss: f64,
}

/// One row of the results: an algorithm with its parameters, or a labelled variant, resolved
/// once: the model itself travels with the row.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The row label: the model name for `algorithms`, the variant's `name` for variants.
    pub label: String,
    /// The model the row runs.
    pub model: ModelRef,
    /// Every parameter of the model, defaults filled in.
    pub params: Params,
}

pub use crate::metric::Metric;

/// What an expectation demands.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExpectOp {
    /// No run shows it (run-counting metrics) / the value is 0.
    None,
    /// At least one run shows it / the value is above 0.
    Some,
    /// Every run shows it.
    All,
    /// A comparison on the metric's value (fractions of runs for run-counting metrics).
    Compare {
        /// The comparison.
        op: CompareOp,
        /// The number compared against.
        value: f64,
    },
    /// Two comparisons that must both hold (`"> 0.2 and < 0.6"`): a share bounded on both sides.
    Both {
        /// The first comparison, as written.
        first: (CompareOp, f64),
        /// The second comparison, as written.
        second: (CompareOp, f64),
    },
}

/// A comparison operator of an expectation, as written.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum CompareOp {
    /// `<`
    #[serde(rename = "<")]
    Lt,
    /// `<=`
    #[serde(rename = "<=")]
    Le,
    /// `>`
    #[serde(rename = ">")]
    Gt,
    /// `>=`
    #[serde(rename = ">=")]
    Ge,
    /// `==`: equal to within 1e-9 × `expected` (1e-9 when `expected` is below 1 in size).
    #[serde(rename = "==")]
    Eq,
}

impl CompareOp {
    /// Whether `actual op expected` holds.
    pub fn holds(self, actual: f64, expected: f64) -> bool {
        match self {
            CompareOp::Lt => actual < expected,
            CompareOp::Le => actual <= expected,
            CompareOp::Gt => actual > expected,
            CompareOp::Ge => actual >= expected,
            CompareOp::Eq => (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        }
    }
}

/// One `metric = "expected"` line of an `[expect.LABEL]` table.
#[derive(Clone, Debug)]
pub struct Expectation {
    /// Algorithm or variant label.
    pub label: String,
    /// The metric it is about.
    pub metric: Metric,
    /// As written (`"none"`, `"< 0.05"`).
    pub expected: String,
    /// `expected`, parsed.
    pub op: ExpectOp,
}
