//! The recorded history of a run: what clients were granted and released, what the protected
//! resource accepted, and what the lock libraries were told. Checkers read only this, never model
//! internals, so every model gets every check.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::{Deserialize, Serialize};

use crate::directory::NodeId;
use crate::time::Nanos;

/// Lock key index (`0..workload.locks`).
pub type LockKey = u32;

/// How a lock is asked for and held.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockMode {
    /// A write lock: one holder at a time; its critical section writes the resource.
    Exclusive,
    /// A read lock (drawn with probability `read_fraction`): may overlap other shared holders;
    /// its critical section only reads.
    Shared,
}

/// Why an acquisition gave up, or why a release call failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailReason {
    /// `acquire_timeout_ms` ran out.
    Timeout,
    /// The lock service answered with an error or was unreachable (a library's own give-up).
    Unavailable,
    /// The library's own rule refused (Redlock quorum or validity, `replica_ack` without an ack).
    Refused,
    /// The session or lease behind the request ended while waiting.
    SessionLost,
}

/// One thing that happened, as a client or the resource saw it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HistoryEvent {
    /// The workload called acquire.
    AcquireStart {
        /// The key asked for.
        key: LockKey,
        /// The mode asked for.
        mode: LockMode,
    },
    /// Acquire returned success: a holder interval begins. `grant` numbers the client's grants
    /// (1, 2, …); `nested` is true for a reentrant re-acquisition of a lock already held.
    Granted {
        /// The key granted.
        key: LockKey,
        /// The mode granted (a nested grant has its outer grant's mode).
        mode: LockMode,
        /// The grant's fencing token; `None`: the model issues none.
        token: Option<u64>,
        /// The client's grant number (a nested grant has its outer grant's number).
        grant: u64,
        /// A reentrant re-acquisition inside a grant already held.
        nested: bool,
    },
    /// Acquire gave up.
    AcquireFailed {
        /// The key asked for.
        key: LockKey,
        /// Why it gave up.
        reason: FailReason,
    },
    /// The workload called release: the holder interval ends (for a nested grant, the nesting ends).
    Released {
        /// The key released.
        key: LockKey,
        /// Whether this ends the nested grant (recorded just before the outer one's release).
        nested: bool,
    },
    /// The release call returned an error (a lost connection, a timeout) instead of `Released`:
    /// the release may never have taken effect on the server. The application treats the lock as
    /// given up and moves on (think, then acquire again); its holder interval already ended at the
    /// release call (`Released`), which this follows.
    ReleaseFailed {
        /// The key whose release failed.
        key: LockKey,
        /// What the library reported (`Timeout`: no answer in time; `Unavailable`: the
        /// connection was lost or the server answered with an error; `SessionLost`: the session
        /// behind the lock ended first; `Refused`: the server said the lock was not this
        /// client's any more, and the library throws, as Redisson's unlock does).
        reason: FailReason,
    },
    /// The library said the lock is lost and the model's policy honours it: the interval ends and
    /// the critical section is abandoned without writing.
    Abandoned {
        /// The key given up.
        key: LockKey,
    },
    /// The library told the application the lock is lost, whatever the policy does with it.
    LostNotice {
        /// The key the library reported lost.
        key: LockKey,
    },
    /// A client node crashed: every interval it held ends.
    ClientCrashed,
    /// A watch or pub/sub wake-up reached a waiting client (the herd effect is counted from these).
    Notification {
        /// The key the wake-up was for.
        key: LockKey,
    },
    /// A lock request the client library sent to a server that failed on its side (a failed
    /// INSERT on duplicate key, a SET NX that found the key taken). Counts polling load.
    RefusedAttempt {
        /// The key the request was for.
        key: LockKey,
    },
    /// Resource: a critical-section read.
    ResourceRead {
        /// The client that read.
        client: NodeId,
        /// The key read.
        key: LockKey,
        /// The counter's value the read returned.
        value: u64,
    },
    /// Resource: a write arrived from `client` under its grant number `grant` with `token`.
    /// `fenced_accepted` is what the fenced resource decided; the unfenced one accepts every write.
    ResourceWrite {
        /// The client that wrote.
        client: NodeId,
        /// The key written.
        key: LockKey,
        /// The writer's grant number.
        grant: u64,
        /// The writer's fencing token; `None`: the model issues none.
        token: Option<u64>,
        /// The value written (the value the critical section read, plus one).
        value: u64,
        /// Whether the fenced resource accepted the write.
        fenced_accepted: bool,
    },
}

/// A history event with when (true time) and where it happened.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stamped {
    /// True time of the event.
    pub at_ns: Nanos,
    /// The node it happened on: the client, or the resource for `ResourceRead` and
    /// `ResourceWrite`.
    pub node: NodeId,
    /// What happened.
    #[serde(flatten)]
    pub event: HistoryEvent,
}

/// A run's whole history plus what the engine counted.
#[derive(Clone, Debug, Default, Serialize)]
pub struct History {
    /// Every recorded event, in the order the engine handled them (true time never decreases);
    /// events only counted are left out when the engine folded them (see [`Folded`]).
    pub events: Vec<Stamped>,
    /// Events the engine counted instead of recording (none unless [`fold_counted_events`] is
    /// on); the checkers add them to what they count in `events`.
    #[serde(default, skip_serializing_if = "Folded::is_empty")]
    pub folded: Folded,
    /// Messages sent on the simulated network (every send, dropped or not).
    pub messages: u64,
    /// Of those, the ones a client sent or was sent: servers' traffic among themselves left out,
    /// which is all a live run can count (`sim compare` compares this one).
    #[serde(default)]
    pub client_messages: u64,
    /// The run's simulated length.
    pub duration_ns: Nanos,
    /// Final counter of the unfenced resource, per key.
    pub final_counter: Vec<u64>,
    /// Client node ids (for per-client views such as the timeline).
    pub clients: Vec<NodeId>,
    /// Whether the model issues fencing tokens (if not, `stale_fenced` is reported as null).
    pub fenced: bool,
    /// Node names by id, so reports say `client-1`, not a node index (empty: ids are shown).
    pub node_names: Vec<String>,
    /// Every fault that took effect, in start order (for timelines; the checkers ignore it).
    pub faults: Vec<FaultWindow>,
    /// The job's period when the workload is scheduled (`kind = "scheduled"`): each grant is one
    /// run of the job, and the "at most once per period" check reads it. `None`: the loop.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_period_ns: Option<Nanos>,
    /// Every node's wall clock as segments of true time: one per node at 0, then one at each
    /// step (`clock_jump`) or rate change (`clock_drift`), in time order. For the report page's
    /// clock plot and the wall clock it shows beside each event; the checkers ignore it. Empty in
    /// a live run (one machine clock, offsets not known).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub clocks: Vec<ClockSegment>,
    /// Every change of a server's claim to lead, in time order: the engine asks each server
    /// ([`crate::process::Process::leadership`], what the `leader` selector reads) after each of
    /// its handlers and after each fault, and records the answer when it differs from the last
    /// (a crashed server claims nothing). For the report's server lanes; the checkers and the
    /// trace ignore it (a seed's trace hash does not change with it). Empty in a live run (the
    /// real servers are not asked).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leaders: Vec<LeaderChange>,
}

/// A server began or stopped claiming to lead: a Raft or ZAB leader elected (or stepping down),
/// a replica promoted by a failover (Redis Sentinel, the db manager, Postgres), a primary
/// crashed or restarted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LeaderChange {
    /// The server.
    pub node: NodeId,
    /// True time of the change.
    pub at_ns: Nanos,
    /// `Some(term)`: it leads from now, in this term or epoch (the model's own number: a Raft
    /// term, a ZAB epoch, a Sentinel config epoch, a db epoch, a Postgres timeline); `None`: it
    /// stopped leading (stepped down, demoted or crashed).
    pub term: Option<u64>,
}

/// A node's wall clock from `at_ns` until the node's next segment: `offset_ns` ahead of true
/// time at `at_ns` (negative: behind), running `drift_ppm` fast, so at a later true time `t` it
/// reads about `t + offset_ns + (t - at_ns) * drift_ppm / 1e6`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClockSegment {
    /// The node.
    pub node: NodeId,
    /// True time the segment starts (0, a step or a rate change).
    pub at_ns: Nanos,
    /// Wall clock minus true time at `at_ns`.
    pub offset_ns: i64,
    /// The rate error from `at_ns` on, in parts per million (positive: fast).
    pub drift_ppm: f64,
}

/// A fault as it happened: when, on whom, and for how long.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FaultWindow {
    /// The fault kind's name in the scenario format (`pause`, `crash`, `partition`, …).
    pub kind: &'static str,
    /// Who it hit, by node name (`server-0, client-3`); partitions list their sides (`[a] | [b]`).
    pub targets: String,
    /// When it took effect (true time).
    pub start_ns: Nanos,
    /// When it ended; `None`: it lasted to the end of the run (a clock step ends when it starts).
    pub end_ns: Option<Nanos>,
}

/// Events of the kinds the checkers only count (`Notification`, `RefusedAttempt`), counted
/// instead of recorded. A polling or herd row records more of them than of everything else
/// together (redisson: 2.3 million of 2.9 million events in a simulated hour; zookeeper-herd 2.1
/// of 2.7 million), and each recorded event holds 64 bytes to the end of the seed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Folded {
    /// `Notification` events.
    pub notifications: u64,
    /// `RefusedAttempt` events.
    pub refused_attempts: u64,
}

impl Folded {
    /// Counts `event` if it is of a kind only counted, and says whether it was.
    #[inline]
    pub fn count(&mut self, event: &HistoryEvent) -> bool {
        match event {
            HistoryEvent::Notification { .. } => self.notifications += 1,
            HistoryEvent::RefusedAttempt { .. } => self.refused_attempts += 1,
            _ => return false,
        }
        true
    }

    /// Nothing was folded.
    pub fn is_empty(&self) -> bool {
        *self == Folded::default()
    }
}

/// Whether worlds created from now on fold the events only counted ([`Folded`]) instead of
/// recording them. Off by default: a library caller (a test asking when a client was woken)
/// gets every event; a campaign folds its seeds' (its run option, on by default: their
/// histories only feed the checkers and reports, which never look at these events one by one;
/// see [`folding_counted`]). Either way the checkers' results and the trace are the same.
static FOLD_COUNTED_EVENTS: AtomicBool = AtomicBool::new(false);

/// Turns folding of the events only counted on or off for worlds created from now on.
pub fn fold_counted_events(on: bool) {
    FOLD_COUNTED_EVENTS.store(on, Ordering::Relaxed);
}

thread_local! {
    /// The choice of [`folding_counted`] for worlds created on this thread while it runs; `None`
    /// outside it (the process-wide switch decides).
    static FOLD_HERE: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Runs `f` with worlds created on this thread folding the events only counted (`on`) or
/// recording them, whatever the process-wide switch says: a campaign's run option
/// (`locksim-campaign`), scoped to its seeds, so two callers in one process cannot change each
/// other's histories. Restored when `f` returns or panics.
pub fn folding_counted<T>(on: bool, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<bool>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FOLD_HERE.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(FOLD_HERE.with(|c| c.replace(Some(on))));
    f()
}

/// Whether worlds created now (on this thread) fold the events only counted.
pub fn folds_counted_events() -> bool {
    FOLD_HERE.with(|c| c.get()).unwrap_or_else(|| FOLD_COUNTED_EVENTS.load(Ordering::Relaxed))
}

impl History {
    /// A node's name for messages (`client-1`), or `client <id>` when names were not recorded.
    pub fn client_name(&self, id: NodeId) -> String {
        self.node_names.get(id).cloned().unwrap_or_else(|| format!("client {id}"))
    }
}
