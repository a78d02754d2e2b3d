//! A resolved run's setting, in the engine's own types: how long it lasts, the network, the
//! workload, the clocks and the faults, and the selectors that name nodes. The scenario parser
//! produces these; the engine and the models read them and never the parser's internals.
//!
//! - [`selector`]: the node selectors (`leader`, `client-3`, `all-servers`, …)

pub mod selector;

pub use selector::{Selector, SELECTOR_FORMS};

use crate::dist::Dist;

/// Everything a row of a scenario runs through, identical for every row.
#[derive(Clone, Debug)]
pub struct Setup {
    pub duration_ms: f64,
    pub network: NetworkSpec,
    pub workload: WorkloadSpec,
    pub clocks: ClockSpec,
    pub faults: Vec<FaultSpec>,
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

/// The `[workload]` section: what every client does. The one workload type: the parser fills
/// it, models validate and build against it, and the workload driver runs it.
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

/// The format's defaults (`[workload]` absent): ten clients looping on one lock, holding 5–50 ms,
/// thinking 0–20 ms, with the resource.
impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            clients: 10,
            locks: 1,
            hold_ms: Dist::Uniform(5.0, 50.0),
            think_ms: Dist::Uniform(0.0, 20.0),
            acquire_timeout_ms: None,
            read_fraction: 0.0,
            reentry: 0.0,
            resource: true,
            acquisitions_per_client: None,
        }
    }
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
