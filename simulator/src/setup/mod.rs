//! A resolved run's setting, in the engine's own types: how long it lasts, the network, the
//! workload, the clocks and the faults, and the selectors that name nodes. The scenario parser
//! produces these; the engine and the models read them and never the parser's internals.
//!
//! - [`selector`]: the node selectors (`leader`, `client-3`, `server-*`, …)

pub mod selector;

pub use selector::{Selector, SelectorView, SELECTOR_FORMS};

use crate::dist::Dist;
use crate::process::CrashKind;

/// Everything a row of a scenario runs through, identical for every row.
#[derive(Clone, Debug)]
pub struct Setup {
    /// The simulated length of one run (a plain number, never drawn).
    pub duration_ms: f64,
    /// The `[network]` section.
    pub network: NetworkSpec,
    /// The `[workload]` section.
    pub workload: WorkloadSpec,
    /// The `[clocks]` section.
    pub clocks: ClockSpec,
    /// The `[[faults]]` entries, in file order.
    pub faults: Vec<FaultSpec>,
    /// The `[replay]` table: a recorded path of choices the run follows (what `sim exhaust`
    /// writes for a counterexample); `None`: a normal run.
    pub replay: Option<ReplaySpec>,
}

/// The `[replay]` table: one path of a systematic search, replayed exactly. At each step the run
/// handles the due event `events` names next (`deliver server-0 -> client-1`, `timer client-0
/// workload Hold`, `fault 0 start`, …; see `engine::choice`), and each message's latency is the
/// next of `delays_ms`, each hold time of a grant the next of `hold_ms` and each think time the
/// next of `think_ms` (over every client, in the order the run needs them); past any list the run
/// goes on as a normal run (queue order, drawn latencies and times).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ReplaySpec {
    /// The event of each step, by key.
    pub events: Vec<String>,
    /// Each latency in the order the network needs them, ms.
    pub delays_ms: Vec<f64>,
    /// Each grant's hold time in the order the workload needs them, ms.
    pub hold_ms: Vec<f64>,
    /// Each think time in the order the workload needs them, ms.
    pub think_ms: Vec<f64>,
}

/// The `[network]` section: every link's delay, loss and duplication, and the overrides.
#[derive(Clone, Debug)]
pub struct NetworkSpec {
    /// One-way delay, drawn for every message.
    pub latency_ms: Dist,
    /// Probability that a message is dropped.
    pub loss: f64,
    /// Probability that a message is delivered twice (the copy gets its own delay draw).
    pub duplicate: f64,
    /// The `[[network.links]]` overrides, in file order (where several match a pair of nodes,
    /// the last wins).
    pub links: Vec<LinkSpec>,
}

/// One `[[network.links]]` override: other link parameters between two sets of nodes.
#[derive(Clone, Debug)]
pub struct LinkSpec {
    /// One end; only a fixed selector (a name, a kind or `*`).
    pub from: Selector,
    /// The other end; only a fixed selector.
    pub to: Selector,
    /// Delay on these links; `None`: the `[network]` value.
    pub latency_ms: Option<Dist>,
    /// Loss on these links; `None`: the `[network]` value.
    pub loss: Option<f64>,
    /// Duplication on these links; `None`: the `[network]` value.
    pub duplicate: Option<f64>,
    /// Only messages from `from` to `to`; false: both directions.
    pub one_way: bool,
}

/// The `[workload]` section: what every client does. The one workload type: the parser fills
/// it, models validate and build against it, and the workload driver runs it.
#[derive(Clone, Debug)]
pub struct WorkloadSpec {
    /// Lock clients, named `client-0 … client-(n-1)`.
    pub clients: usize,
    /// Distinct lock keys (`0..locks`); each acquisition picks one uniformly.
    pub locks: u32,
    /// Length of a critical section, drawn per grant.
    pub hold_ms: Dist,
    /// Wait before the first acquisition and after each release or failed acquisition.
    pub think_ms: Dist,
    /// How long a client waits for a grant before giving up, drawn per acquisition; `None`: it
    /// waits for ever.
    pub acquire_timeout_ms: Option<Dist>,
    /// Probability that an acquisition asks for a shared (read) lock.
    pub read_fraction: f64,
    /// Probability, drawn at every grant, that the holder re-acquires the key at once (nested);
    /// a model that is not reentrant skips the nested acquisition.
    pub reentry: f64,
    /// Whether critical sections read and write the protected resource; false: they only hold
    /// and release.
    pub resource: bool,
    /// How many acquisitions each client makes before it stops (absent: loop until the end).
    /// An extension of the format for schedules such as "each acquiring once".
    pub acquisitions_per_client: Option<u64>,
    /// Time between the application's check of its lock (just before the write) and the write
    /// leaving, drawn per write: the window in which a pause defeats the check (Kleppmann's
    /// case). 0: the write leaves in the same instant.
    pub check_to_write_ms: Dist,
    /// `kind = "scheduled"`: each client runs one job on a cron-like schedule of its own wall
    /// clock instead of looping; `None`: the loop (`kind = "loop"`, the default).
    pub schedule: Option<Schedule>,
}

/// A scheduled-job workload (`[workload] kind = "scheduled"`): every client fires the same job
/// at each multiple of `period_ms` on its own wall clock (a cron expression such as
/// `0 * * * * *`), tries the lock once and skips that run when it is taken; a run that is still
/// going when the next multiple passes makes the client skip that one too (Spring's
/// `CronTrigger` computes the next time after the last completion).
#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    /// The job's period on the clients' wall clocks, ms (a plain number, never drawn).
    pub period_ms: f64,
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
            check_to_write_ms: Dist::Const(0.0),
            schedule: None,
        }
    }
}

/// The `[clocks]` section: how every node's clocks start.
#[derive(Clone, Debug)]
pub struct ClockSpec {
    /// Each node's clock rate error in parts per million (positive: fast), drawn per node.
    pub drift_ppm: Dist,
    /// Each node's initial wall-clock offset from true time (may be negative), drawn per node.
    pub offset_ms: Dist,
}

/// What a fault does, with the keys of its own kind.
#[derive(Clone, Debug, PartialEq)]
pub enum FaultKind {
    /// The targets go down, losing volatile state and timers; they restart at the fault's end.
    Crash {
        /// A killed process (its connections are reset) or a lost host (silence).
        mode: CrashKind,
    },
    /// The targets stop handling anything; messages and due timers pile up and are handled in
    /// order when the pause ends.
    Pause,
    /// Links between different groups are cut; `one_way` cuts only from the first group to the others.
    Partition {
        /// At least two groups, each a list of selectors; nodes in no group keep their links.
        groups: Vec<Vec<Selector>>,
        /// Cut only the links from the first group to the others.
        one_way: bool,
    },
    /// The targets are cut off from every other node (they keep their links among themselves).
    Isolate,
    /// Steps the targets' wall clocks; monotonic clocks and timers do not move, and the step is
    /// not undone.
    ClockJump {
        /// The step (negative: backwards), drawn once per occurrence.
        by_ms: Dist,
    },
    /// Sets the targets' clock rate error; the previous rate comes back at the fault's end.
    ClockDrift {
        /// The new rate error in parts per million, drawn once per occurrence.
        ppm: Dist,
    },
    /// Messages to or from a target take longer.
    Slow {
        /// The added delay, drawn per message.
        latency_ms: Dist,
    },
    /// Messages to or from a target are dropped at random.
    Loss {
        /// Probability that each such message is dropped.
        rate: f64,
    },
}

impl FaultKind {
    /// The kind's name in the scenario format (`crash`, `clock_jump`, …).
    pub fn name(&self) -> &'static str {
        match self {
            FaultKind::Crash { .. } => "crash",
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

impl FaultKind {
    /// What the trace and the report's timeline call it: the name, with a crash's mode.
    pub fn label(&self) -> &'static str {
        match self {
            FaultKind::Crash { mode: CrashKind::Process } => "crash (process)",
            FaultKind::Crash { mode: CrashKind::Machine } => "crash (machine)",
            other => other.name(),
        }
    }
}

/// Every fault kind's name, as [`FaultKind::name`] gives them.
pub const FAULT_KINDS: &[&str] =
    &["crash", "pause", "partition", "isolate", "clock_jump", "clock_drift", "slow", "loss"];

/// One `[[faults]]` entry.
#[derive(Clone, Debug)]
pub struct FaultSpec {
    /// What it does.
    pub kind: FaultKind,
    /// Empty for `partition` (its groups say who).
    pub targets: Vec<Selector>,
    /// When its first occurrence starts (true time), drawn per seed.
    pub at_ms: Dist,
    /// How long each occurrence lasts, drawn per occurrence; `None`: until the end of the run.
    pub duration_ms: Option<Dist>,
    /// Time from one occurrence's start to the next, drawn per gap; `None`: it happens once.
    pub every_ms: Option<Dist>,
    /// Probability that the fault happens in a seed (all its occurrences or none).
    pub probability: f64,
}
