//! Holder intervals and waits, rebuilt from a history: the one view every checker reads.
//!
//! A holder interval runs from a non-nested `Granted` to the first of `Released{nested: false}`,
//! `Abandoned`, `ClientCrashed` or the end of the run. A wait runs from `AcquireStart` to the
//! `Granted` (nested or not), `AcquireFailed` or `ClientCrashed` that resolves it, or the end of
//! the run. Nested grants and releases open and close nothing: a reentrant hold is part of the
//! outer interval, so it can never overlap itself. A `ReleaseFailed` closes nothing either: the
//! workload records `Released` at the release call, which ended the interval, and the failure
//! only comes back later.
//!
//! Everything here is on true time. Events are taken in `(at_ns, record order)`; a history that
//! is out of order is stably re-sorted rather than trusted.

use std::collections::BTreeMap;

use crate::directory::NodeId;
use crate::history::{History, HistoryEvent, LockKey, LockMode, Stamped};
use crate::time::Nanos;

/// Why a holder interval ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndCause {
    /// The workload released it (`Released { nested: false }`).
    Released,
    /// The library reported it lost and the policy honoured that (`Abandoned`).
    Abandoned,
    /// The client crashed (`ClientCrashed`).
    Crashed,
    /// Still held when the run stopped: counted as held to `duration_ns`.
    RunEnd,
}

/// How a wait (an acquire call in progress) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitOutcome {
    /// A non-nested `Granted`: a holder interval starts where the wait ends.
    Granted,
    /// A reentrant acquire of a key the client already held.
    GrantedNested,
    /// `AcquireFailed`: a timeout or the library's own give-up.
    Failed,
    /// The client crashed while waiting.
    Crashed,
    /// Still waiting when the run stopped: counted as waiting to `duration_ns`.
    RunEnd,
    /// A second `AcquireStart` on the same key arrived while this one was pending; the client
    /// kept waiting, so the two waits join without a gap, but only the newer call's latency is
    /// meaningful.
    Superseded,
}

/// One client's hold of one key, `[start_ns, end_ns)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Interval {
    /// The holding client.
    pub client: NodeId,
    /// The key held.
    pub key: LockKey,
    /// The mode granted.
    pub mode: LockMode,
    /// The grant's fencing token; `None`: the model issues none.
    pub token: Option<u64>,
    /// The client's grant number (`Granted.grant`), which resource writes quote.
    pub grant: u64,
    /// True time of the grant.
    pub start_ns: Nanos,
    /// True time the hold ended (the run's `duration_ns` for `RunEnd`).
    pub end_ns: Nanos,
    /// Why it ended.
    pub end: EndCause,
}

#[cfg(test)]
impl Interval {
    /// A released exclusive hold of key 0 by `client` over `[start_ns, end_ns)`, with no token:
    /// what the checkers' unit tests build their timelines from.
    pub(crate) fn released(client: NodeId, start_ns: Nanos, end_ns: Nanos) -> Interval {
        Interval {
            client,
            key: 0,
            mode: LockMode::Exclusive,
            token: None,
            grant: 0,
            start_ns,
            end_ns,
            end: EndCause::Released,
        }
    }
}

/// One acquire call in progress, `[start_ns, end_ns)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Wait {
    /// The waiting client.
    pub client: NodeId,
    /// The key asked for.
    pub key: LockKey,
    /// True time of the `AcquireStart`.
    pub start_ns: Nanos,
    /// True time the wait ended (the run's `duration_ns` for `RunEnd`).
    pub end_ns: Nanos,
    /// How it ended.
    pub outcome: WaitOutcome,
}

/// A client's attempt at a critical section on one key: from its first acquire call after its
/// previous grant to its next grant, failed calls and the pauses between them included (as
/// [`super::wait`] counts it). It ends early when the client's next call asks for another key
/// (the attempt moves there), when the client crashes, or at the end of the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Attempt {
    /// The client.
    pub client: NodeId,
    /// True time of the attempt's first `AcquireStart` on this key.
    pub start_ns: Nanos,
    /// True time it ended.
    pub end_ns: Nanos,
}

/// Everything that happened to one key. Intervals and waits are in start order (ties in record
/// order); attempts in the order they ended.
#[derive(Clone, Debug, Default)]
pub struct KeyTimeline {
    /// The key's holder intervals.
    pub intervals: Vec<Interval>,
    /// The key's waits (one per acquire call).
    pub waits: Vec<Wait>,
    /// The key's section attempts (one per critical section asked for, however many calls).
    pub attempts: Vec<Attempt>,
}

/// The history's holder intervals and waits, per key.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// Each key's intervals and waits; a key nobody asked for has no entry.
    pub keys: BTreeMap<LockKey, KeyTimeline>,
    /// When each `(client, grant number)` was granted, nested grants included: a resource write
    /// names its grant by number, and the stale-write check needs the time.
    pub grant_at: GrantTimes,
}

/// When each `(client, grant number)` was last granted: per node, grant numbers in increasing
/// order with their time. A client numbers its grants 1, 2, 3, … so recording is an append and a
/// lookup a binary search (any order is accepted). A nested grant repeats its outer grant's
/// number; as with a map, the later record wins.
#[derive(Clone, Debug, Default)]
pub struct GrantTimes {
    by_node: Vec<Vec<(u64, Nanos)>>,
}

impl GrantTimes {
    /// Records that `node`'s grant number `grant` was granted at `at` (replacing an earlier time
    /// for the same grant).
    pub fn insert(&mut self, node: NodeId, grant: u64, at: Nanos) {
        if self.by_node.len() <= node {
            self.by_node.resize_with(node + 1, Vec::new);
        }
        let grants = &mut self.by_node[node];
        if grants.last().is_none_or(|&(g, _)| g < grant) {
            grants.push((grant, at));
            return;
        }
        let i = grants.partition_point(|&(g, _)| g < grant);
        match grants.get_mut(i) {
            Some(e) if e.0 == grant => e.1 = at,
            _ => grants.insert(i, (grant, at)),
        }
    }

    /// When `node`'s grant number `grant` was last granted; `None`: no such grant was recorded.
    pub fn get(&self, node: NodeId, grant: u64) -> Option<Nanos> {
        let grants = self.by_node.get(node)?;
        let i = grants.partition_point(|&(g, _)| g < grant);
        grants.get(i).filter(|e| e.0 == grant).map(|e| e.1)
    }
}

/// The history's events in true-time order (stable, so record order breaks ties). A history
/// from the engine is already in order: it is then walked as it is, with no copy and no sort
/// (three checks walk it, and each used to copy and sort it).
pub fn ordered(history: &History) -> impl Iterator<Item = &Stamped> {
    let in_order = history.events.is_sorted_by_key(|e| e.at_ns);
    let sorted = (!in_order).then(|| {
        let mut events: Vec<&Stamped> = history.events.iter().collect();
        events.sort_by_key(|e| e.at_ns);
        events
    });
    let as_recorded = in_order.then(|| history.events.iter());
    as_recorded.into_iter().flatten().chain(sorted.into_iter().flatten())
}

impl Timeline {
    /// Rebuilds the intervals and waits from `history`'s events; whatever is still open at the end
    /// closes at `history.duration_ns` with `RunEnd`.
    pub fn from_history(history: &History) -> Timeline {
        let mut b = Builder { scheduled: history.schedule_period_ns.is_some(), ..Builder::default() };
        for e in ordered(history) {
            b.apply(e);
        }
        b.finish(history.duration_ns)
    }

    /// All holder intervals of every key, key by key.
    pub fn intervals(&self) -> impl Iterator<Item = &Interval> {
        self.keys.values().flat_map(|k| k.intervals.iter())
    }

    /// All waits of every key, key by key.
    pub fn waits(&self) -> impl Iterator<Item = &Wait> {
        self.keys.values().flat_map(|k| k.waits.iter())
    }
}

/// The open intervals and pending waits while the events are replayed, per node (a client holds
/// and waits for a few keys at most, so its lists are short). Indices point into the key's
/// lists, so closing one is a lookup, not a search.
#[derive(Default)]
struct Builder {
    timeline: Timeline,
    /// Open intervals per node as (key, interval index), oldest first. Normally at most one per
    /// key; a duplicate non-nested grant (a model bug) is kept rather than dropped, and a release
    /// closes the oldest, so no hold disappears from the overlap check.
    open: Vec<Vec<(LockKey, usize)>>,
    /// The pending wait per node as (key, wait index), at most one per key.
    pending: Vec<Vec<(LockKey, usize)>>,
    /// The section attempt in progress per node: its key and start.
    attempt: Vec<Option<(LockKey, Nanos)>>,
    /// A scheduled workload: a refused try skips that tick's run, so it ends the attempt (the
    /// node does not wait for the lock; its next tick is a new attempt).
    scheduled: bool,
}

/// The list of `node` in `lists`, grown to reach it.
fn of_node(lists: &mut Vec<Vec<(LockKey, usize)>>, node: NodeId) -> &mut Vec<(LockKey, usize)> {
    if lists.len() <= node {
        lists.resize_with(node + 1, Vec::new);
    }
    &mut lists[node]
}

/// Removes and returns the first entry for `key` in `node`'s list.
fn take_first(lists: &mut [Vec<(LockKey, usize)>], node: NodeId, key: LockKey) -> Option<usize> {
    let list = lists.get_mut(node)?;
    let pos = list.iter().position(|&(k, _)| k == key)?;
    Some(list.remove(pos).1)
}

impl Builder {
    fn key(&mut self, key: LockKey) -> &mut KeyTimeline {
        self.timeline.keys.entry(key).or_default()
    }

    fn close_wait(&mut self, client: NodeId, key: LockKey, at: Nanos, outcome: WaitOutcome) {
        if let Some(i) = take_first(&mut self.pending, client, key) {
            let w = &mut self.key(key).waits[i];
            w.end_ns = at;
            w.outcome = outcome;
        }
    }

    /// Ends `node`'s section attempt, if any, at `at`.
    fn close_attempt(&mut self, node: NodeId, at: Nanos) {
        if let Some((key, start_ns)) = self.attempt.get_mut(node).and_then(Option::take) {
            self.key(key).attempts.push(Attempt { client: node, start_ns, end_ns: at.max(start_ns) });
        }
    }

    fn close_interval(&mut self, client: NodeId, key: LockKey, at: Nanos, end: EndCause) {
        let Some(i) = take_first(&mut self.open, client, key) else {
            return;
        };
        let iv = &mut self.key(key).intervals[i];
        iv.end_ns = at;
        iv.end = end;
    }

    fn apply(&mut self, e: &Stamped) {
        let (at, node) = (e.at_ns, e.node);
        match e.event {
            HistoryEvent::AcquireStart { key, .. } => {
                if self.attempt.len() <= node {
                    self.attempt.resize(node + 1, None);
                }
                match self.attempt[node] {
                    Some((k, _)) if k == key => {}
                    _ => {
                        self.close_attempt(node, at);
                        self.attempt[node] = Some((key, at));
                    }
                }
                self.close_wait(node, key, at, WaitOutcome::Superseded);
                let waits = &mut self.key(key).waits;
                waits.push(Wait { client: node, key, start_ns: at, end_ns: at, outcome: WaitOutcome::RunEnd });
                let i = waits.len() - 1;
                of_node(&mut self.pending, node).push((key, i));
            }
            HistoryEvent::Granted { key, mode, token, grant, nested } => {
                self.timeline.grant_at.insert(node, grant, at);
                if nested {
                    self.close_wait(node, key, at, WaitOutcome::GrantedNested);
                    return;
                }
                self.close_wait(node, key, at, WaitOutcome::Granted);
                self.close_attempt(node, at);
                let intervals = &mut self.key(key).intervals;
                intervals.push(Interval {
                    client: node,
                    key,
                    mode,
                    token,
                    grant,
                    start_ns: at,
                    end_ns: at,
                    end: EndCause::RunEnd,
                });
                let i = intervals.len() - 1;
                of_node(&mut self.open, node).push((key, i));
            }
            HistoryEvent::AcquireFailed { key, .. } => {
                self.close_wait(node, key, at, WaitOutcome::Failed);
                if self.scheduled {
                    self.close_attempt(node, at);
                }
            }
            HistoryEvent::Released { key, nested: false } => self.close_interval(node, key, at, EndCause::Released),
            HistoryEvent::Abandoned { key } => self.close_interval(node, key, at, EndCause::Abandoned),
            HistoryEvent::ClientCrashed => {
                // A crash ends every hold and every pending acquire of the node.
                self.close_attempt(node, at);
                for (key, i) in self.open.get_mut(node).map(std::mem::take).unwrap_or_default() {
                    let iv = &mut self.key(key).intervals[i];
                    iv.end_ns = at;
                    iv.end = EndCause::Crashed;
                }
                for (key, i) in self.pending.get_mut(node).map(std::mem::take).unwrap_or_default() {
                    let w = &mut self.key(key).waits[i];
                    w.end_ns = at;
                    w.outcome = WaitOutcome::Crashed;
                }
            }
            _ => {}
        }
    }

    /// Closes what is still open at the end of the run. `max` keeps an interval that (wrongly)
    /// began after `duration_ns` from getting a negative length.
    fn finish(mut self, duration_ns: Nanos) -> Timeline {
        for (key, i) in std::mem::take(&mut self.open).into_iter().flatten() {
            let kt = self.timeline.keys.get_mut(&key).expect("open key has a timeline");
            let iv = &mut kt.intervals[i];
            iv.end_ns = duration_ns.max(iv.start_ns);
            iv.end = EndCause::RunEnd;
        }
        for (key, i) in std::mem::take(&mut self.pending).into_iter().flatten() {
            let kt = self.timeline.keys.get_mut(&key).expect("pending key has a timeline");
            let w = &mut kt.waits[i];
            w.end_ns = duration_ns.max(w.start_ns);
            w.outcome = WaitOutcome::RunEnd;
        }
        for node in 0..self.attempt.len() {
            self.close_attempt(node, duration_ns);
        }
        self.timeline
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn history_at(times_ns: &[Nanos]) -> History {
        let events = times_ns
            .iter()
            .enumerate()
            .map(|(node, &at_ns)| Stamped { at_ns, node, event: HistoryEvent::ClientCrashed })
            .collect();
        History { events, ..History::default() }
    }

    fn order_of(history: &History) -> Vec<NodeId> {
        ordered(history).map(|e| e.node).collect()
    }

    #[test]
    fn ordered_walks_a_history_in_order_as_recorded() {
        assert_eq!(order_of(&history_at(&[1, 2, 2, 5])), vec![0, 1, 2, 3]);
        assert_eq!(order_of(&history_at(&[])), Vec::<NodeId>::new());
    }

    #[test]
    fn ordered_sorts_a_history_out_of_order_keeping_ties_in_record_order() {
        // Nodes 1 and 3 share a time: 1 was recorded first and stays first.
        assert_eq!(order_of(&history_at(&[9, 4, 2, 4, 0])), vec![4, 2, 1, 3, 0]);
    }
}
