//! Timer storage: a slab of slots reused through a free list, so arming and firing timers
//! allocates nothing in steady state. A timer id carries its slot's generation; a stale event
//! (cancelled, or re-armed after a drift change) finds a different generation or due time and is
//! ignored.

use std::cell::RefCell;
use std::fmt;

use crate::directory::NodeId;
use crate::time::Nanos;

/// A timer handle, valid until the timer fires or is cancelled.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TimerId {
    pub(crate) slot: u32,
    pub(crate) generation: u32,
}

/// As a derive would print it, except while a world's fingerprint is taken
/// ([`CanonicalTimerNames`]): then it prints the timer it names, not its slot.
impl fmt::Debug for TimerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let canonical = CANONICAL_NAMES.with(|c| c.borrow().as_ref().map(|m| m.get(self).copied()));
        match canonical {
            None => f.debug_struct("TimerId").field("slot", &self.slot).field("generation", &self.generation).finish(),
            Some(Some(h)) => write!(f, "Timer({h:016x})"),
            Some(None) => f.write_str("Timer(dead)"),
        }
    }
}

thread_local! {
    /// While a fingerprint is taken on this thread: each live timer's canonical hash.
    static CANONICAL_NAMES: RefCell<Option<TimerNames>> = const { RefCell::new(None) };
}

/// Each live timer's canonical hash, by id: what a fingerprint names a timer id by. A sorted
/// list, not a map: built for every fingerprint (a search takes one at every branch), where a
/// tree's allocation per node and its copy cost more than the lookups save.
#[derive(Clone, Debug, Default)]
pub struct TimerNames(Vec<(TimerId, u64)>);

impl TimerNames {
    /// The names of these timers (each id once, in any order).
    pub fn new(mut names: Vec<(TimerId, u64)>) -> Self {
        // Already in id order when read from the slab (slot order): then this is one pass.
        names.sort_unstable_by_key(|&(id, _)| id);
        TimerNames(names)
    }

    /// The hash naming timer `id`; `None`: no live timer has that id.
    pub fn get(&self, id: &TimerId) -> Option<&u64> {
        self.0.binary_search_by_key(id, |&(t, _)| t).ok().map(|i| &self.0[i].1)
    }
}

/// While alive, every [`TimerId`] printed on this thread prints as the canonical hash of the
/// timer it names (models keep ids whose slots depend on reuse order, which a world's fingerprint
/// must not see); dropping it, panic or not, restores the plain form. Set by
/// `engine::fingerprint`; kept here so timers do not depend on the engine.
pub(crate) struct CanonicalTimerNames;

impl CanonicalTimerNames {
    /// Names each live timer by its hash until the guard is dropped.
    pub(crate) fn set(names: TimerNames) -> Self {
        CANONICAL_NAMES.with(|c| *c.borrow_mut() = Some(names));
        CanonicalTimerNames
    }
}

impl Drop for CanonicalTimerNames {
    fn drop(&mut self) {
        CANONICAL_NAMES.with(|c| *c.borrow_mut() = None);
    }
}

#[derive(Clone, Debug)]
struct Slot<T> {
    generation: u32,
    node: NodeId,
    live: bool,
    deadline_mono_ns: Nanos,
    due_true_ns: Nanos,
    /// The timer's typed tag (None while the slot is free or only reserved).
    tag: Option<T>,
}

/// Every timer of a run, whatever node set it; `T` is the run's timer tag type.
#[derive(Clone)]
pub struct TimerSlab<T> {
    slots: Vec<Slot<T>>,
    free: Vec<u32>,
}

impl<T> Default for TimerSlab<T> {
    fn default() -> Self {
        TimerSlab { slots: Vec::new(), free: Vec::new() }
    }
}

impl<T: Clone> TimerSlab<T> {
    /// Reserves an id for a timer that `node` is about to arm.
    #[inline]
    pub fn allocate(&mut self, node: NodeId) -> TimerId {
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Slot {
                    generation: 0,
                    node,
                    live: false,
                    deadline_mono_ns: 0,
                    due_true_ns: 0,
                    tag: None,
                });
                (self.slots.len() - 1) as u32
            }
        };
        let s = &mut self.slots[slot as usize];
        s.node = node;
        s.live = false;
        TimerId { slot, generation: s.generation }
    }

    fn slot_mut(&mut self, id: TimerId) -> Option<&mut Slot<T>> {
        self.slots.get_mut(id.slot as usize).filter(|s| s.generation == id.generation)
    }

    /// Arms the timer reserved as `id`: it is due when the node's monotonic clock reads
    /// `deadline_mono_ns`, which is true time `due_true_ns`. An id no longer current does nothing.
    #[inline]
    pub fn arm(&mut self, id: TimerId, deadline_mono_ns: Nanos, due_true_ns: Nanos, tag: T) {
        if let Some(s) = self.slot_mut(id) {
            s.live = true;
            s.deadline_mono_ns = deadline_mono_ns;
            s.due_true_ns = due_true_ns;
            s.tag = Some(tag);
        }
    }

    fn release(&mut self, id: TimerId) {
        let s = &mut self.slots[id.slot as usize];
        s.live = false;
        s.tag = None;
        s.generation = s.generation.wrapping_add(1);
        self.free.push(id.slot);
    }

    /// Cancels a live timer; a fired or cancelled one is left alone. Returns whether it was live
    /// (its queued event, if any, is now dead).
    pub fn cancel(&mut self, id: TimerId) -> bool {
        if self.slot_mut(id).is_some_and(|s| s.live) {
            self.release(id);
            true
        } else {
            false
        }
    }

    /// Whether every event queued for this id is dead for good: the timer fired or was cancelled
    /// (its slot has moved to a later generation). A live timer whose due time moved (a drift
    /// change) is not: its old event is judged when it pops, by its due time.
    pub fn is_released(&self, id: TimerId) -> bool {
        self.slots.get(id.slot as usize).is_none_or(|s| s.generation != id.generation)
    }

    /// Whether the timer is armed and not yet fired or cancelled.
    pub fn is_live(&self, id: TimerId) -> bool {
        self.slots.get(id.slot as usize).is_some_and(|s| s.generation == id.generation && s.live)
    }

    /// The owner and due time of a live timer.
    pub fn peek(&self, id: TimerId) -> Option<(NodeId, Nanos)> {
        let s = self.slots.get(id.slot as usize)?;
        (s.generation == id.generation && s.live).then_some((s.node, s.due_true_ns))
    }

    /// Consumes a live timer, giving its owner and tag.
    pub fn take(&mut self, id: TimerId) -> Option<(NodeId, T)> {
        let s = self.slots.get_mut(id.slot as usize)?;
        if s.generation != id.generation || !s.live {
            return None;
        }
        let node = s.node;
        let tag = s.tag.take()?;
        self.release(id);
        Some((node, tag))
    }

    /// Drops every timer of a node (it crashed); returns how many were live.
    pub fn clear_node(&mut self, node: NodeId) -> usize {
        let mut cleared = 0;
        for i in 0..self.slots.len() {
            if self.slots[i].live && self.slots[i].node == node {
                let id = TimerId { slot: i as u32, generation: self.slots[i].generation };
                self.release(id);
                cleared += 1;
            }
        }
        cleared
    }

    /// Every live timer of a node with its monotonic deadline (to re-arm after a rate change).
    pub fn live_of(&self, node: NodeId) -> Vec<(TimerId, Nanos)> {
        self.slots
            .iter()
            .enumerate()
            .filter(|(_, s)| s.live && s.node == node)
            .map(|(i, s)| (TimerId { slot: i as u32, generation: s.generation }, s.deadline_mono_ns))
            .collect()
    }

    /// Every live timer: its id, owner, due time (true time) and tag, in slot order.
    pub fn live(&self) -> impl Iterator<Item = (TimerId, NodeId, Nanos, &T)> + '_ {
        self.slots.iter().enumerate().filter(|(_, s)| s.live).filter_map(|(i, s)| {
            let id = TimerId { slot: i as u32, generation: s.generation };
            s.tag.as_ref().map(|t| (id, s.node, s.due_true_ns, t))
        })
    }

    /// Moves a live timer's due time (after a rate change).
    pub fn set_due(&mut self, id: TimerId, due_true_ns: Nanos) {
        if let Some(s) = self.slot_mut(id) {
            s.due_true_ns = due_true_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timer_names_find_each_id_in_any_order_given() {
        let id = |slot, generation| TimerId { slot, generation };
        let names = TimerNames::new(vec![(id(3, 0), 30), (id(0, 2), 2), (id(1, 0), 10)]);
        assert_eq!(names.get(&id(0, 2)), Some(&2));
        assert_eq!(names.get(&id(1, 0)), Some(&10));
        assert_eq!(names.get(&id(3, 0)), Some(&30));
        // Another generation of a named slot, or a slot not named: dead.
        assert_eq!(names.get(&id(0, 1)), None);
        assert_eq!(names.get(&id(2, 0)), None);
    }

    #[test]
    fn cancelled_and_fired_timers_are_gone_and_slots_reused() {
        let mut slab: TimerSlab<u64> = TimerSlab::default();
        let a = slab.allocate(1);
        slab.arm(a, 10, 10, 7);
        assert_eq!(slab.take(a), Some((1, 7)));
        assert_eq!(slab.take(a), None);
        let b = slab.allocate(2);
        assert_eq!(b.slot, a.slot, "slot reused");
        assert_ne!(b.generation, a.generation);
        slab.arm(b, 5, 5, 1);
        slab.cancel(b);
        assert!(!slab.is_live(b));
        let c = slab.allocate(3);
        slab.arm(c, 1, 1, 2);
        slab.clear_node(3);
        assert!(!slab.is_live(c));
    }
}
