//! PCT, probabilistic concurrency testing (Burckhardt, Kothari, Musuvathi, Nagarakatte, ASPLOS
//! 2010), as `sim explore --scheduler pct --depth d` runs a seed: every node gets a random
//! priority from d, d+1, …, d+n−1; d−1 change points are drawn uniformly over the run's step
//! count bound k; at each step the enabled event of the highest-priority node runs, and at the
//! i-th change point the node that just ran drops to priority i (below every initial one).
//!
//! How it maps onto a timed engine: "enabled" is what `sim exhaust` branches on, every event due
//! at the earliest instant (time only moves forward). With latencies drawn from a continuous
//! range such ties are rare, so a priority alone would change little; a node's priority also
//! sets how fast what it sends travels: the highest-priority node's messages take the network's
//! smallest latency, the lowest's its largest, the others evenly between. A low-priority node is
//! thus starved as far as the network's bounds allow, which is what a low-priority thread is in
//! PCT. Fault starts and ends (no node) run first. Everything is drawn from the seed's stream
//! ("explore", "pct"), so a seed gives one schedule; the run can be written down as a `[replay]`
//! table (each step's event key and every latency) that `sim run` follows exactly.

use std::sync::atomic::{AtomicBool, Ordering};

use locksim_simulator::checker::SeedMetrics;
use locksim_simulator::rng::stream;
use locksim_simulator::search::SearchWorld;
use locksim_simulator::setup::NetworkSpec;
use locksim_simulator::time::{ms_to_ns, Nanos};
use rand::seq::SliceRandom;
use rand::Rng;

use crate::exhaust::search::judge;

/// How often (in steps) a run looks at the stop flag and whether the clients have finished.
const POLL_STEPS: u64 = 64;

/// The latencies a priority maps to: the network's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatencyRange {
    /// The highest-priority node's messages, ns.
    pub fast_ns: Nanos,
    /// The lowest-priority node's messages, ns.
    pub slow_ns: Nanos,
}

impl LatencyRange {
    /// The base network's latency bounds; for a distribution without a largest value
    /// (exponential, lognormal) the slow end is its mean mirrored past the smallest value.
    /// Per-link latency overrides are not used (a node's priority, not a link, sets latency).
    pub fn of(network: &NetworkSpec) -> LatencyRange {
        let lo = network.latency_ms.min_value().max(0.0);
        let hi = network.latency_ms.max_value();
        let hi = if hi.is_finite() { hi } else { lo + 2.0 * (network.latency_ms.mean() - lo).max(0.0) };
        LatencyRange { fast_ns: ms_to_ns(lo), slow_ns: ms_to_ns(hi.max(lo)) }
    }
}

/// A PCT run's path, for a `[replay]` table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Path {
    /// Each step's event key.
    pub events: Vec<String>,
    /// Every latency, in the order the network needed them, ns.
    pub delays_ns: Vec<Nanos>,
}

/// How one PCT run ended.
#[derive(Clone, Debug)]
pub struct PctRun {
    /// The checkers' measure of the whole run.
    pub metrics: SeedMetrics,
    /// Steps taken.
    pub steps: u64,
    /// The path, when asked for.
    pub path: Option<Path>,
}

/// The scheduler's state: a priority per node and the change points still to come.
#[derive(Clone, Debug, PartialEq)]
pub struct Priorities {
    /// By node id; higher runs first.
    pub of_node: Vec<u64>,
    /// (step, priority given at that step to the node that ran it), in draw order.
    pub changes: Vec<(u64, u64)>,
}

impl Priorities {
    /// The seed's priorities for `nodes` nodes and `depth` (d ≥ 1), with change points drawn
    /// uniformly from 1..=`steps_bound`.
    pub fn draw(seed: u64, nodes: usize, depth: u32, steps_bound: u64) -> Priorities {
        let mut rng = stream(seed, "explore", "pct");
        let d = u64::from(depth.max(1));
        let mut of_node: Vec<u64> = (0..nodes as u64).map(|i| d + i).collect();
        of_node.shuffle(&mut rng);
        let changes = (1..d).map(|i| (rng.gen_range(1..=steps_bound.max(1)), d - i)).collect();
        Priorities { of_node, changes }
    }

    /// The rank of `node`'s priority, 0 for the highest.
    fn rank(&self, node: usize) -> usize {
        let mine = self.of_node[node];
        self.of_node.iter().filter(|&&p| p > mine).count()
    }

    /// The latency of what `node` sends: evenly from fast (rank 0) to slow (last rank).
    fn latency_ns(&self, node: Option<usize>, range: LatencyRange) -> Nanos {
        let (Some(n), true) = (node, self.of_node.len() > 1) else { return range.fast_ns };
        let span = range.slow_ns.saturating_sub(range.fast_ns) as u128;
        let step = span * self.rank(n) as u128 / (self.of_node.len() - 1) as u128;
        range.fast_ns + step as Nanos
    }

    /// After step `step` (1-based) ran an event of `node`: the change points at that step.
    fn after_step(&mut self, step: u64, node: Option<usize>) {
        let Some(n) = node else { return };
        for &(at, priority) in &self.changes {
            if at == step {
                self.of_node[n] = priority;
            }
        }
    }
}

/// Runs `world` to its end under PCT with `priorities`; `record` keeps the path. `None`: `stop`
/// was raised first.
pub fn run(
    mut world: Box<dyn SearchWorld>,
    mut priorities: Priorities,
    range: LatencyRange,
    stop: &AtomicBool,
    record: bool,
) -> Option<PctRun> {
    let mut path = record.then(Path::default);
    let mut steps = 0u64;
    loop {
        if steps.is_multiple_of(POLL_STEPS) {
            if stop.load(Ordering::Relaxed) {
                return None;
            }
            // Nothing a client does can change any more: the rest is heartbeats.
            if steps > 0 && world.clients_finished() {
                break;
            }
        }
        let enabled = world.enabled();
        // The first of the highest priority (a fault's start or end before any node's event).
        let Some(pick) = enabled.iter().fold(None, |best: Option<&locksim_simulator::search::Enabled>, e| {
            let p = |e: &locksim_simulator::search::Enabled| e.node.map_or(u64::MAX, |n| priorities.of_node[n]);
            match best {
                Some(b) if p(b) >= p(e) => Some(b),
                _ => Some(e),
            }
        }) else {
            break;
        };
        let (seq, node) = (pick.seq, pick.node);
        let latency_ns = priorities.latency_ns(node, range);
        if let Some(p) = path.as_mut() {
            p.events.push(world.event_key(seq).expect("an enabled event is queued"));
        }
        let taken = world.step(seq, &[], latency_ns);
        if let Some(p) = path.as_mut() {
            p.delays_ns.extend(std::iter::repeat_n(latency_ns, taken));
        }
        steps += 1;
        priorities.after_step(steps, node);
    }
    Some(PctRun { metrics: judge(world.as_ref(), true), steps, path })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_repeat_per_seed_and_change_points_lie_within_the_bound() {
        let a = Priorities::draw(7, 6, 3, 500);
        assert_eq!(a, Priorities::draw(7, 6, 3, 500), "same seed, same priorities");
        let mut sorted = a.of_node.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![3, 4, 5, 6, 7, 8], "d..d+n-1, each once");
        assert_eq!(a.changes.iter().map(|c| c.1).collect::<Vec<_>>(), vec![2, 1], "d-1 change points to d-1..1");
        assert!(a.changes.iter().all(|c| (1..=500).contains(&c.0)), "{:?}", a.changes);
        let differs = (0..20).any(|s| Priorities::draw(s, 6, 3, 500).of_node != a.of_node);
        assert!(differs, "seeds draw different priorities");
        assert!(Priorities::draw(1, 4, 1, 500).changes.is_empty(), "depth 1: no change point");
    }

    #[test]
    fn the_highest_priority_sends_fastest_and_a_change_point_demotes_the_node_that_ran() {
        let range = LatencyRange { fast_ns: 1_000_000, slow_ns: 3_000_000 };
        let mut p = Priorities { of_node: vec![5, 3, 4], changes: vec![(2, 1)] };
        assert_eq!(p.latency_ns(Some(0), range), 1_000_000);
        assert_eq!(p.latency_ns(Some(2), range), 2_000_000);
        assert_eq!(p.latency_ns(Some(1), range), 3_000_000);
        assert_eq!(p.latency_ns(None, range), 1_000_000);
        p.after_step(1, Some(0));
        assert_eq!(p.of_node, vec![5, 3, 4], "no change point at step 1");
        p.after_step(2, Some(0));
        assert_eq!(p.of_node, vec![1, 3, 4], "node 0 ran step 2: demoted below all");
        assert_eq!(p.latency_ns(Some(0), range), 3_000_000);
    }
}
