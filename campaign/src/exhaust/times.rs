//! The workload's hold and think times as choice points. A set of more than one hold (or think)
//! time makes every hold (or think) the driver starts a choice: the step that needs one is taken
//! once with each value, so client 0 may hold 100 ms the first time and 500 ms the second. A set
//! of one value is no choice (the workload holds that long every time, as `[workload] hold_ms`
//! would say), and an empty set leaves the workload's own draws.
//!
//! A step learns how many times it needs by being taken once on a copy with none given
//! ([`SearchWorld::step_timed`] counts what the driver asked for); only steps on a client, or a
//! fault's start or end (a restarted client starts thinking), can need one.

use locksim_simulator::directory::NodeKind;
use locksim_simulator::search::{ChosenTimes, Enabled, SearchWorld, StepTaken};
use locksim_simulator::time::{ms_to_ns, Nanos};

use super::bounds::Bounds;

/// A copy of a world that took one step, and what that step needed.
pub type Probe = (Box<dyn SearchWorld>, StepTaken);

/// The hold and think times a search chooses from at each acquisition: each list empty (no
/// choice) or of at least two values, the first being the workload's own in the searched setup.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeChoices {
    /// Hold times, ns.
    pub holds_ns: Vec<Nanos>,
    /// Think times, ns.
    pub thinks_ns: Vec<Nanos>,
}

impl TimeChoices {
    /// The choices `bounds` asks for: its hold and think sets of more than one value.
    pub fn of(bounds: &Bounds) -> Self {
        let choice =
            |set: &[f64]| if set.len() > 1 { set.iter().map(|&ms| ms_to_ns(ms)).collect() } else { Vec::new() };
        TimeChoices { holds_ns: choice(&bounds.holds_ms), thinks_ns: choice(&bounds.thinks_ms) }
    }

    /// Whether any hold or think time is a choice.
    pub fn any(&self) -> bool {
        !self.holds_ns.is_empty() || !self.thinks_ns.is_empty()
    }

    /// Whether taking `event` may start a hold or a think: it happens on a client, or it is a
    /// fault's start or end (no node).
    pub fn may_time(&self, world: &dyn SearchWorld, event: &Enabled) -> bool {
        self.any() && event.node.is_none_or(|n| world.nodes()[n].1 == NodeKind::Client)
    }

    /// Every assignment of times to the holds and thinks of the step `seq` of `world` (learned by
    /// taking it once on a copy with none given, every latency the first delay); one empty
    /// assignment when it needs no choice. With the copy, when one was taken, and what its step
    /// needed: where the step needs no choice, the copy took it as the move does (no times given
    /// is the workload's own draws, what the move takes too), so it can be that move's world.
    pub fn for_step(
        &self,
        world: &dyn SearchWorld,
        event: &Enabled,
        first_delay_ns: Nanos,
    ) -> (Vec<ChosenTimes>, Option<Probe>) {
        if !self.may_time(world, event) {
            return (vec![ChosenTimes::default()], None);
        }
        let mut probe = world.box_clone();
        let taken = probe.step_timed(event.seq, &[], first_delay_ns, &ChosenTimes::default());
        (self.assignments(taken), Some((probe, taken)))
    }

    /// Every assignment of times to a step that needed `taken`.
    pub fn assignments(&self, taken: StepTaken) -> Vec<ChosenTimes> {
        let holds = sequences(&self.holds_ns, taken.holds);
        let thinks = sequences(&self.thinks_ns, taken.thinks);
        holds
            .iter()
            .flat_map(|h| thinks.iter().map(move |t| ChosenTimes { holds_ns: h.clone(), thinks_ns: t.clone() }))
            .collect()
    }

    /// `times` padded to what a step needed (`taken`) with each set's first value, the workload's
    /// own in the searched setup: the times the step actually used, for a `[replay]` list (kinds
    /// that are no choice are left out: the workload gives them in the replay too).
    pub fn used(&self, times: &ChosenTimes, taken: StepTaken) -> ChosenTimes {
        let pad = |set: &[Nanos], given: &[Nanos], n: usize| match set.first() {
            Some(&first) => (0..n).map(|i| given.get(i).copied().unwrap_or(first)).collect(),
            None => Vec::new(),
        };
        ChosenTimes {
            holds_ns: pad(&self.holds_ns, &times.holds_ns, taken.holds),
            thinks_ns: pad(&self.thinks_ns, &times.thinks_ns, taken.thinks),
        }
    }
}

/// Every sequence of `n` values from `set` (one empty sequence when `set` is empty or `n` is 0:
/// no choice).
fn sequences(set: &[Nanos], n: usize) -> Vec<Vec<Nanos>> {
    if set.is_empty() {
        return vec![Vec::new()];
    }
    (0..n).fold(vec![Vec::new()], |acc, _| {
        acc.iter()
            .flat_map(|prefix| {
                set.iter().map(move |&v| {
                    let mut next = prefix.clone();
                    next.push(v);
                    next
                })
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_with_two_holds_from_two_values_has_four_assignments() {
        let c = TimeChoices { holds_ns: vec![1, 2], thinks_ns: Vec::new() };
        let all = c.assignments(StepTaken { latencies: 3, holds: 2, thinks: 1 });
        let holds: Vec<Vec<Nanos>> = all.iter().map(|t| t.holds_ns.clone()).collect();
        assert_eq!(holds, vec![vec![1, 1], vec![1, 2], vec![2, 1], vec![2, 2]]);
        assert!(all.iter().all(|t| t.thinks_ns.is_empty()), "thinks are no choice: none given");
        // A step with no hold or think is one move, with nothing given.
        assert_eq!(c.assignments(StepTaken::default()), vec![ChosenTimes::default()]);
        // What a step used: the given times, past them the set's first.
        let used = c.used(
            &ChosenTimes { holds_ns: vec![2], thinks_ns: vec![] },
            StepTaken { latencies: 0, holds: 2, thinks: 1 },
        );
        assert_eq!(used, ChosenTimes { holds_ns: vec![2, 1], thinks_ns: vec![] });
    }
}
