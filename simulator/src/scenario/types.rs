//! The validated scenario: every default filled in, every value checked. Times stay in
//! milliseconds (as written) and become nanoseconds when drawn.

use std::path::PathBuf;

use serde::Serialize;

use crate::dist::Dist;
use crate::model::Params;
use crate::scenario::selector::Selector;

#[derive(Clone, Debug)]
pub struct Scenario {
    pub name: String,
    pub description: String,
    /// The file it came from, as the user named it (for replay commands and reports).
    pub file: PathBuf,
    pub duration_ms: f64,
    /// Runs per algorithm when the command line names no seeds.
    pub seeds: u64,
    /// Every algorithm and variant, in file order (algorithms first, then variants).
    pub runs: Vec<RunSpec>,
    pub network: NetworkSpec,
    pub workload: WorkloadSpec,
    pub clocks: ClockSpec,
    pub faults: Vec<FaultSpec>,
    pub expect: Vec<Expectation>,
}

/// One row of the results: an algorithm with its parameters, or a labelled variant.
#[derive(Clone, Debug)]
pub struct RunSpec {
    /// The row label: the model name for `algorithms`, the variant's `name` for variants.
    pub label: String,
    pub model: String,
    /// Every parameter of the model, defaults filled in.
    pub params: Params,
}

#[derive(Clone, Debug)]
pub struct NetworkSpec {
    pub latency_ms: Dist,
    pub loss: f64,
    pub duplicate: f64,
    pub links: Vec<LinkSpec>,
}

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub from: Selector,
    pub to: Selector,
    pub latency_ms: Option<Dist>,
    pub loss: Option<f64>,
    pub duplicate: Option<f64>,
    pub one_way: bool,
}

#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    pub clients: usize,
    pub locks: u32,
    pub hold_ms: Dist,
    pub think_ms: Dist,
    pub acquire_timeout_ms: Option<Dist>,
    pub read_fraction: f64,
    pub reentry: f64,
    pub resource: bool,
    /// How many acquisitions each client makes before it stops (absent: loop until the end).
    /// An extension of the format for schedules such as "each acquiring once".
    pub acquisitions_per_client: Option<u64>,
}

#[derive(Clone, Debug)]
pub struct ClockSpec {
    pub drift_ppm: Dist,
    pub offset_ms: Dist,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    Crash,
    Pause,
    /// Links between different groups are cut; `one_way` cuts only from the first group to the others.
    Partition {
        groups: Vec<Vec<Selector>>,
        one_way: bool,
    },
    Isolate,
    ClockJump {
        by_ms: Dist,
    },
    ClockDrift {
        ppm: Dist,
    },
    Slow {
        latency_ms: Dist,
    },
    Loss {
        rate: f64,
    },
}

impl FaultKind {
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Crash => "crash",
            FaultKind::Pause => "pause",
            FaultKind::Partition { .. } => "partition",
            FaultKind::Isolate => "isolate",
            FaultKind::ClockJump { .. } => "clock_jump",
            FaultKind::ClockDrift { .. } => "clock_drift",
            FaultKind::Slow { .. } => "slow",
            FaultKind::Loss { .. } => "loss",
        }
    }
}

pub const FAULT_KINDS: &[&str] =
    &["crash", "pause", "partition", "isolate", "clock_jump", "clock_drift", "slow", "loss"];

#[derive(Clone, Debug)]
pub struct FaultSpec {
    pub kind: FaultKind,
    /// Empty for `partition` (its groups say who).
    pub targets: Vec<Selector>,
    pub at_ms: Dist,
    pub duration_ms: Option<Dist>,
    pub every_ms: Option<Dist>,
    pub probability: f64,
}

/// The metrics an `[expect]` block may name.
pub const EXPECT_METRICS: &[&str] = &[
    "overlap",
    "stale_unfenced",
    "stale_fenced",
    "lost_updates",
    "token_regressions",
    "acquisitions",
    "failed_acquisitions",
    "throughput_per_s",
    "acquire_latency_ms_p50",
    "acquire_latency_ms_p99",
    "acquire_latency_ms_max",
    "handoff_ms_p50",
    "handoff_ms_p99",
    "unavailable_ms",
    "messages_per_acquisition",
    "notifications_per_release",
    "refused_attempts_per_s",
];

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
    Compare { op: CompareOp, value: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum CompareOp {
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = "==")]
    Eq,
}

impl CompareOp {
    pub fn holds(self, actual: f64, expected: f64) -> bool {
        match self {
            CompareOp::Lt => actual < expected,
            CompareOp::Le => actual <= expected,
            CompareOp::Gt => actual > expected,
            CompareOp::Ge => actual >= expected,
            CompareOp::Eq => (actual - expected).abs() <= 1e-9 * expected.abs().max(1.0),
        }
    }
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Lt => "<",
            CompareOp::Le => "<=",
            CompareOp::Gt => ">",
            CompareOp::Ge => ">=",
            CompareOp::Eq => "==",
        }
    }
}

#[derive(Clone, Debug)]
pub struct Expectation {
    /// Algorithm or variant label.
    pub label: String,
    /// One of [`EXPECT_METRICS`].
    pub metric: String,
    /// As written (`"none"`, `"< 0.05"`).
    pub expected: String,
    pub op: ExpectOp,
}
