//! The event queue: events ordered by (true time, sequence number). The sequence number makes
//! the order total and independent of the queue's internals, so a seed always replays the same.
//!
//! Built for the engine's hot loop. Events wait in a slab reused through a free list; the order
//! is kept over small copyable nodes (time, sequence, slot), so nothing is allocated per event
//! in steady state and only 24-byte nodes move. A run's queue is short (tens of events: every
//! node's next timer and the messages in flight), and for a short queue a vector sorted earliest
//! first, read from a moving head, is the fastest order: the next event is taken at the head (the
//! head moves up, nothing shifts), and a new event is placed by comparing its time alone (its
//! sequence number is the highest yet, so it goes after every queued event of the same time).
//! Both common cases are cheap: a far-off timeout (a request timeout, a lease) is usually the
//! latest event yet and is appended at the back, and a message due soon goes near the head,
//! where the few events due before it step down one place into the room the pops left; further
//! in, a binary search finds the place and the shorter side shifts. (A vector sorted latest
//! first, popped at its end, had to shift nearly the whole queue for each timeout.)
//! Should a queue grow long (thousands of nodes), shifting would cost more than it saves: past
//! [`SORTED_MAX`] events the vector is turned into a 4-ary min-heap (ascending order already is
//! one), and back into a sorted vector once it is short again.
//! Either way events come out in exactly the same (time, sequence) order.
//!
//! [`EventQueue::purge`] drops events the engine knows are dead (cancelled timers) in one linear
//! pass instead of one pop each; removing entries never changes the order of the others.

use crate::directory::NodeId;
use crate::time::Nanos;
use crate::timers::TimerId;

/// What happens at an event; `M` is the message type on the wire.
#[derive(Clone, Debug)]
pub enum EventKind<M> {
    /// A node starts (its `on_start`).
    Start {
        /// The node.
        node: NodeId,
    },
    /// A message arrives.
    Deliver {
        /// The sender.
        from: NodeId,
        /// The receiver.
        to: NodeId,
        /// The message.
        msg: M,
    },
    /// A TCP connection's closing (FIN or RST) from `from` reaches `to`.
    Reset {
        /// The end that closed or refused.
        from: NodeId,
        /// The end told.
        to: NodeId,
    },
    /// A timer is due; ignored unless the timer is still live and due at this time (it was not
    /// cancelled, dropped by a crash, or moved by a clock-rate change).
    Timer {
        /// The timer.
        id: TimerId,
    },
    /// A fault occurrence starts (or tries again, if its target role has no member yet).
    FaultStart {
        /// Index into the world's fault occurrences.
        occurrence: usize,
    },
    /// A fault occurrence ends.
    FaultEnd {
        /// Index into the world's fault occurrences.
        occurrence: usize,
    },
}

/// A queued event as it leaves the queue.
pub struct Event<M> {
    /// True time at which it happens.
    pub at_ns: Nanos,
    /// Its sequence number: events of the same time come out in push order.
    pub seq: u64,
    /// What happens.
    pub kind: EventKind<M>,
}

/// An ordering node: the key and where the event waits.
#[derive(Clone, Copy, Debug)]
struct Node {
    at_ns: Nanos,
    seq: u64,
    slot: u32,
}

impl Node {
    /// (time, sequence) as one number.
    #[inline(always)]
    fn key(&self) -> u128 {
        ((self.at_ns as u128) << 64) | self.seq as u128
    }
}

/// Past this many events the sorted vector becomes a heap.
pub const SORTED_MAX: usize = 256;
/// A heap this short becomes a sorted vector again (well below [`SORTED_MAX`], so a queue hovering
/// around the limit does not switch back and forth).
const SORTED_AGAIN: usize = SORTED_MAX / 4;
/// How far from either end a new event is placed by stepping before a binary search takes over.
const SHORT_WALK: usize = 8;
/// Popped places before the head are reclaimed once there are at least this many and they are
/// at least half the vector (so each node is moved by reclaiming about once).
const RECLAIM_MIN: usize = 64;
/// Children per heap node: a shallower heap than a binary one.
const ARITY: usize = 4;

/// The engine's pending events, earliest first, ties in push order.
#[derive(Clone)]
pub struct EventQueue<M> {
    /// `nodes[head..]` sorted earliest first (`heap == false`), or a 4-ary min-heap on the key
    /// (`heap == true`, `head == 0`). Places before `head` were popped and hold nothing live.
    nodes: Vec<Node>,
    /// Where the sorted events start: the next to pop.
    head: usize,
    heap: bool,
    kinds: Vec<Option<EventKind<M>>>,
    free: Vec<u32>,
    next_seq: u64,
}

impl<M> Default for EventQueue<M> {
    fn default() -> Self {
        EventQueue { nodes: Vec::new(), head: 0, heap: false, kinds: Vec::new(), free: Vec::new(), next_seq: 0 }
    }
}

impl<M> EventQueue<M> {
    /// Every queued event with its due time, in no particular order (for a fingerprint, which
    /// orders them itself).
    pub fn events(&self) -> impl Iterator<Item = (Nanos, &EventKind<M>)> + '_ {
        let live = if self.heap { &self.nodes[..] } else { &self.nodes[self.head..] };
        live.iter().filter_map(|n| self.kinds[n.slot as usize].as_ref().map(|k| (n.at_ns, k)))
    }

    /// Every queued event with its sequence number, in no particular order.
    pub fn events_with_seq(&self) -> impl Iterator<Item = (u64, &EventKind<M>)> + '_ {
        let live = if self.heap { &self.nodes[..] } else { &self.nodes[self.head..] };
        live.iter().filter_map(|n| self.kinds[n.slot as usize].as_ref().map(|k| (n.seq, k)))
    }

    /// The sequence number of the last event pushed (0 before any).
    pub fn last_seq(&self) -> u64 {
        self.next_seq.saturating_sub(1)
    }

    /// Queues an event at true time `at_ns`, after every event already queued for that time.
    ///
    /// Inlined: out of line, the event was handed over on the stack and read back in wider
    /// loads than the caller had just stored it with, which stalls (store-to-load forwarding
    /// fails; the costliest instruction of the call in a profile). The ordering is one
    /// out-of-line call on plain numbers.
    #[inline(always)]
    pub fn push(&mut self, at_ns: Nanos, kind: EventKind<M>) {
        let slot = match self.free.pop() {
            Some(s) => {
                // A free slot holds nothing: nothing to drop.
                let empty = self.kinds[s as usize].replace(kind);
                debug_assert!(empty.is_none(), "a free slot holds no event");
                std::mem::forget(empty);
                s
            }
            None => {
                self.kinds.push(Some(kind));
                u32::try_from(self.kinds.len() - 1).expect("fewer than 2^32 queued events")
            }
        };
        self.place(at_ns, slot);
    }

    /// Orders the event waiting in `slot`, due at `at_ns`, after every event queued before it.
    fn place(&mut self, at_ns: Nanos, slot: u32) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let node = Node { at_ns, seq, slot };
        if self.heap {
            self.nodes.push(node);
            self.sift_up(self.nodes.len() - 1);
            return;
        }
        if self.head >= RECLAIM_MIN && self.head * 2 >= self.nodes.len() {
            self.nodes.drain(..self.head);
            self.head = 0;
        }
        // The new node goes before every node due later and after every other (those due
        // earlier, and those due at the same time, which all have a lower sequence number).
        let head = self.head;
        let nodes = &mut self.nodes;
        let len = nodes.len();
        let live = len - head;
        if live == 0 || nodes[len - 1].at_ns <= at_ns {
            // The latest event yet (a timeout, usually): no search, nothing moves.
            nodes.push(node);
        } else if head > 0 && (live <= SHORT_WALK || nodes[head + SHORT_WALK].at_ns > at_ns) {
            // Its place is among the first few: step the events due before it down one place
            // into the room the pops left (cheaper than a search and a call to memmove). The
            // last event is due later, so the walk stops.
            let mut i = head;
            while nodes[i].at_ns <= at_ns {
                nodes[i - 1] = nodes[i];
                i += 1;
            }
            nodes[i - 1] = node;
            self.head -= 1;
        } else if live <= SHORT_WALK || nodes[len - 1 - SHORT_WALK].at_ns <= at_ns {
            // Its place is among the last few: step the events due after it up one place.
            nodes.push(node);
            let mut i = len;
            while i > head && nodes[i - 1].at_ns > at_ns {
                nodes[i] = nodes[i - 1];
                i -= 1;
            }
            nodes[i] = node;
        } else {
            // Further in: search, and shift the shorter side in bulk.
            let pos = head + nodes[head..].partition_point(|n| n.at_ns <= at_ns);
            if head > 0 && pos - head <= len - pos {
                nodes.copy_within(head..pos, head - 1);
                nodes[pos - 1] = node;
                self.head -= 1;
            } else {
                nodes.push(node);
                nodes.copy_within(pos..len, pos + 1);
                nodes[pos] = node;
            }
        }
        if self.nodes.len() - self.head > SORTED_MAX {
            // Ascending order is a valid heap.
            self.nodes.drain(..self.head);
            self.head = 0;
            self.heap = true;
        }
    }

    /// Takes the earliest event (ties: the first pushed); `None`: the queue is empty.
    pub fn pop(&mut self) -> Option<Event<M>> {
        let top = if self.heap { self.heap_pop()? } else { self.sorted_pop()? };
        let kind = self.kinds[top.slot as usize].take().expect("a queued node has its event");
        self.free.push(top.slot);
        Some(Event { at_ns: top.at_ns, seq: top.seq, kind })
    }

    /// The time of the event `pop` would return; `None`: the queue is empty.
    pub fn peek_time(&self) -> Option<Nanos> {
        // The heap's top is at 0, which is `head` in heap mode.
        self.nodes.get(self.head).map(|n| n.at_ns)
    }

    /// How many events are queued (dead timer events not yet purged included).
    pub fn len(&self) -> usize {
        self.nodes.len() - self.head
    }

    /// Whether no event is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The events due at the earliest time, as (sequence number, event), in sequence order: the
    /// events a search chooses among ([`super::World::enabled`]). Turns a heap back into a sorted
    /// vector first (the order of events is the same either way).
    pub fn earliest_tied(&mut self) -> Vec<(u64, Nanos, &EventKind<M>)> {
        if self.heap {
            self.make_sorted();
        }
        let Some(first) = self.nodes.get(self.head).map(|n| n.at_ns) else { return Vec::new() };
        self.nodes[self.head..]
            .iter()
            .take_while(|n| n.at_ns == first)
            .map(|n| (n.seq, n.at_ns, self.kinds[n.slot as usize].as_ref().expect("a queued node has its event")))
            .collect()
    }

    /// Takes the queued event with sequence number `seq` out of the queue, wherever it is (a search
    /// handles a tied event other than the first); `None`: no such event is queued.
    pub fn take_seq(&mut self, seq: u64) -> Option<Event<M>> {
        if self.heap {
            self.make_sorted();
        }
        let pos = self.head + self.nodes[self.head..].iter().position(|n| n.seq == seq)?;
        // Removing one entry keeps the others sorted.
        let node = self.nodes.remove(pos);
        if self.head == self.nodes.len() {
            self.nodes.clear();
            self.head = 0;
        }
        let kind = self.kinds[node.slot as usize].take().expect("a queued node has its event");
        self.free.push(node.slot);
        Some(Event { at_ns: node.at_ns, seq: node.seq, kind })
    }

    /// Removes every event for which `dead` says true, and returns how many of them were due at
    /// or before `until_ns` (those the run would otherwise have popped and ignored).
    pub fn purge(&mut self, until_ns: Nanos, mut dead: impl FnMut(&EventKind<M>) -> bool) -> u64 {
        let mut due = 0;
        // The popped places hold slots since reused: drop them first.
        self.nodes.drain(..self.head);
        self.head = 0;
        let kinds = &mut self.kinds;
        let free = &mut self.free;
        // `retain` keeps the survivors in their order: a sorted vector stays sorted.
        self.nodes.retain(|n| {
            let k = kinds[n.slot as usize].as_ref().expect("a queued node has its event");
            if dead(k) {
                kinds[n.slot as usize] = None;
                free.push(n.slot);
                due += (n.at_ns <= until_ns) as u64;
                false
            } else {
                true
            }
        });
        if self.heap {
            if self.nodes.len() <= SORTED_AGAIN {
                self.make_sorted();
            } else {
                // Restore the heap property bottom-up (Floyd): linear in the queue's length.
                let len = self.nodes.len();
                for i in (0..=(len.max(2) - 2) / ARITY).rev() {
                    if i < len {
                        let node = self.nodes[i];
                        self.sift_down(i, node);
                    }
                }
            }
        }
        due
    }

    fn make_sorted(&mut self) {
        self.nodes.sort_unstable_by_key(|n| n.key());
        self.heap = false;
    }

    fn sorted_pop(&mut self) -> Option<Node> {
        let top = *self.nodes.get(self.head)?;
        self.head += 1;
        if self.head == self.nodes.len() {
            self.nodes.clear();
            self.head = 0;
        }
        Some(top)
    }

    fn heap_pop(&mut self) -> Option<Node> {
        let last = self.nodes.pop()?;
        let top = if self.nodes.is_empty() {
            last
        } else {
            let top = self.nodes[0];
            self.sift_down(0, last);
            top
        };
        if self.nodes.len() <= SORTED_AGAIN {
            self.make_sorted();
        }
        Some(top)
    }

    /// Moves the node at `i` up to its place.
    fn sift_up(&mut self, mut i: usize) {
        let node = self.nodes[i];
        let key = node.key();
        while i > 0 {
            let parent = (i - 1) / ARITY;
            if key >= self.nodes[parent].key() {
                break;
            }
            self.nodes[i] = self.nodes[parent];
            i = parent;
        }
        self.nodes[i] = node;
    }

    /// Places `node` into the hole at `i`, moving smaller children up.
    fn sift_down(&mut self, mut i: usize, node: Node) {
        let len = self.nodes.len();
        let key = node.key();
        loop {
            let first = i * ARITY + 1;
            if first >= len {
                break;
            }
            let end = (first + ARITY).min(len);
            let mut best = first;
            let mut best_key = self.nodes[first].key();
            for c in first + 1..end {
                let k = self.nodes[c].key();
                if k < best_key {
                    best = c;
                    best_key = k;
                }
            }
            if best_key >= key {
                break;
            }
            self.nodes[i] = self.nodes[best];
            i = best;
        }
        self.nodes[i] = node;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_of(e: &Event<()>) -> NodeId {
        match e.kind {
            EventKind::Start { node } => node,
            _ => unreachable!(),
        }
    }

    #[test]
    fn earliest_first_then_insertion_order() {
        let mut q: EventQueue<()> = EventQueue::default();
        q.push(5, EventKind::Start { node: 1 });
        q.push(3, EventKind::Start { node: 2 });
        q.push(5, EventKind::Start { node: 3 });
        let order: Vec<NodeId> = std::iter::from_fn(|| q.pop()).map(|e| node_of(&e)).collect();
        assert_eq!(order, vec![2, 1, 3]);
    }

    /// The same pushes and pops as a sorted reference list, with ties, interleaving, and a queue
    /// that grows past the sorted limit (heap) and shrinks again (sorted) several times.
    #[test]
    fn matches_a_sorted_reference_in_both_orders() {
        let mut q: EventQueue<()> = EventQueue::default();
        let mut reference: Vec<(Nanos, u64, NodeId)> = Vec::new();
        let mut seq = 0;
        let mut x: u64 = 7;
        let mut now = 0;
        let (mut saw_heap, mut saw_sorted_again) = (false, false);
        for round in 0..6 {
            // Grow to a few times the limit, then drain to a few events.
            let target = if round % 2 == 0 { 3 * SORTED_MAX } else { 5 };
            let mut steps = 0;
            while (round % 2 == 0 && reference.len() < target) || (round % 2 == 1 && reference.len() > target) {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let push = if round % 2 == 0 { x & 3 != 0 } else { x & 3 == 0 };
                if push || reference.is_empty() {
                    let at = now + (x >> 58) * ((x >> 40) & 7);
                    q.push(at, EventKind::Start { node: seq as usize });
                    reference.push((at, seq, seq as usize));
                    seq += 1;
                } else {
                    reference.sort();
                    let want = reference.remove(0);
                    let got = q.pop().expect("non-empty");
                    assert_eq!((got.at_ns, got.seq, node_of(&got)), want);
                    now = got.at_ns;
                }
                saw_heap |= q.heap;
                saw_sorted_again |= saw_heap && !q.heap;
                assert_eq!(q.len(), reference.len());
                steps += 1;
                assert!(steps < 100_000);
            }
        }
        assert!(saw_heap && saw_sorted_again, "both orders exercised");
        reference.sort();
        for want in reference {
            let got = q.pop().expect("non-empty");
            assert_eq!((got.at_ns, got.seq, node_of(&got)), want);
        }
        assert!(q.pop().is_none() && q.is_empty());
    }

    /// A new event lands in each place `push` treats apart (after everything, among the first
    /// few, among the last few, in the middle, each also tying with a queued event), with room
    /// before the head and without: the queue pops in (time, sequence) order every time.
    #[test]
    fn each_placement_keeps_the_order() {
        for popped_first in [0usize, 10] {
            for at in [0, 5, 10, 50, 55, 100, 105, 150, 200, 305, 390, 395, 1000] {
                let mut q: EventQueue<()> = EventQueue::default();
                let mut reference: Vec<(Nanos, u64)> = Vec::new();
                for i in 0..40u64 {
                    q.push(i * 10, EventKind::Start { node: 0 });
                    reference.push((i * 10, i));
                }
                for want in reference.drain(..popped_first) {
                    let got = q.pop().expect("queued");
                    assert_eq!((got.at_ns, got.seq), want);
                }
                q.push(at, EventKind::Start { node: 0 });
                reference.push((at, 40));
                reference.sort();
                let got: Vec<(Nanos, u64)> = std::iter::from_fn(|| q.pop()).map(|e| (e.at_ns, e.seq)).collect();
                assert_eq!(got, reference, "new event at {at}, {popped_first} popped before");
            }
        }
    }

    #[test]
    fn purge_removes_only_dead_events_and_keeps_the_order() {
        // 200 events stay sorted; 1000 make a heap.
        for n in [200usize, 1000] {
            let mut q: EventQueue<()> = EventQueue::default();
            for i in 0..n {
                q.push((i as u64 * 37) % 101, EventKind::Start { node: i });
            }
            assert_eq!(q.heap, n > SORTED_MAX);
            let due = q.purge(50, |k| matches!(k, EventKind::Start { node } if node % 3 == 0));
            let removed: Vec<usize> = (0..n).filter(|i| i % 3 == 0).collect();
            assert_eq!(due as usize, removed.iter().filter(|&&i| (i as u64 * 37) % 101 <= 50).count());
            let mut left: Vec<(Nanos, usize)> =
                (0..n).filter(|i| i % 3 != 0).map(|i| ((i as u64 * 37) % 101, i)).collect();
            left.sort();
            // Slots freed by the purge are reused without disturbing the order.
            q.push(1_000, EventKind::Start { node: 5000 });
            left.push((1_000, 5000));
            let got: Vec<(Nanos, usize)> = std::iter::from_fn(|| q.pop()).map(|e| (e.at_ns, node_of(&e))).collect();
            assert_eq!(got, left);
        }
    }
}
