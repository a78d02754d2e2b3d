//! The event queue: a binary heap ordered by (true time, sequence number). The sequence number
//! makes the order total and independent of heap internals, so a seed always replays the same.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::process::{Msg, NodeId, TimerId};
use crate::time::Nanos;

pub enum EventKind {
    Start { node: NodeId },
    Deliver { from: NodeId, to: NodeId, msg: Msg },
    Timer { id: TimerId },
    FaultStart { occurrence: usize },
    FaultEnd { occurrence: usize },
}

pub struct Event {
    pub at_ns: Nanos,
    pub seq: u64,
    pub kind: EventKind,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.at_ns == other.at_ns && self.seq == other.seq
    }
}
impl Eq for Event {}
impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Event {
    // Reversed: BinaryHeap is a max-heap and we want the earliest event first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.at_ns.cmp(&self.at_ns).then_with(|| other.seq.cmp(&self.seq))
    }
}

#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    next_seq: u64,
}

impl EventQueue {
    pub fn push(&mut self, at_ns: Nanos, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Event { at_ns, seq, kind });
    }
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }
    pub fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|e| e.at_ns)
    }
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q = EventQueue::default();
        q.push(5, EventKind::Start { node: 1 });
        q.push(3, EventKind::Start { node: 2 });
        q.push(5, EventKind::Start { node: 3 });
        let order: Vec<NodeId> = std::iter::from_fn(|| q.pop())
            .map(|e| match e.kind {
                EventKind::Start { node } => node,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 1, 3]);
    }
}
