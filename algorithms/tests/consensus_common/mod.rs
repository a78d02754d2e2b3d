//! A small hand-rolled network for driving `consensus::Core` replicas without the engine: an event
//! heap in true time, random delays, loss, duplication, crashes (volatile state dropped),
//! pauses (events pile up and are handled at resume, in order) and partitions; plus the Raft
//! invariant checks the consensus tests share.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use locksim_algorithms::consensus::{Config, ConsensusMsg, Core, LogIndex, Term};
use locksim_simulator::rng::{stream, ChaCha8Rng};
use rand::Rng;

pub const MS: u64 = 1_000_000;

#[derive(Debug)]
pub enum Ev {
    Deliver { from: usize, to: usize, msg: ConsensusMsg<u64> },
    Tick { node: usize, gen: u64 },
    Restart { node: usize },
}

pub struct Node {
    pub core: Core<u64>,
    pub rng: ChaCha8Rng,
    pub down: bool,
    pub paused_until: u64,
    pub tick_gen: u64,
    pub tick_at: u64,
    /// Committed indices already compared with the global record.
    pub checked_upto: u64,
}

/// The shared network and the invariant bookkeeping.
pub struct World {
    pub now: u64,
    pub nodes: Vec<Node>,
    heap: BinaryHeap<Reverse<(u64, u64, usize)>>,
    events: Vec<Option<Ev>>,
    seq: u64,
    pub net_rng: ChaCha8Rng,
    pub loss: f64,
    pub duplicate: f64,
    pub delay_ms: (f64, f64),
    /// Partition group of each node (messages cross only within a group).
    pub group: Vec<u32>,
    // Invariant state.
    pub leaders_by_term: BTreeMap<Term, usize>,
    /// Every entry any replica has handed out as committed: index → (term, value).
    pub committed: BTreeMap<LogIndex, (Term, Option<u64>)>,
    pub next_value: u64,
    pub messages: u64,
    /// Finished reads: (replica, id, result).
    pub reads: Vec<(usize, u64, Result<LogIndex, locksim_algorithms::consensus::NotLeader>)>,
}

impl World {
    pub fn new(seed: u64, n: usize, cfg: Config) -> World {
        let ids: Vec<usize> = (0..n).collect();
        let mut nodes: Vec<Node> = (0..n)
            .map(|i| Node {
                core: Core::new(i, ids.clone(), cfg.clone()),
                rng: stream(seed, &format!("server-{i}"), "node"),
                down: false,
                paused_until: 0,
                tick_gen: 0,
                tick_at: u64::MAX,
                checked_upto: 0,
            })
            .collect();
        for n in nodes.iter_mut() {
            let Node { core, rng, .. } = n;
            core.start(0, rng);
        }
        let mut w = World {
            now: 0,
            nodes,
            heap: BinaryHeap::new(),
            events: Vec::new(),
            seq: 0,
            net_rng: stream(seed, "net", "network"),
            loss: 0.0,
            duplicate: 0.0,
            delay_ms: (0.1, 1.0),
            group: vec![0; n],
            leaders_by_term: BTreeMap::new(),
            committed: BTreeMap::new(),
            next_value: 1,
            messages: 0,
            reads: Vec::new(),
        };
        for i in 0..n {
            w.rearm(i);
        }
        w
    }

    pub fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.events.push(Some(ev));
        self.heap.push(Reverse((at, self.seq, self.events.len() - 1)));
    }

    fn rearm(&mut self, i: usize) {
        let due = self.nodes[i].core.next_deadline();
        if due != self.nodes[i].tick_at {
            self.nodes[i].tick_gen += 1;
            self.nodes[i].tick_at = due;
            if due != u64::MAX {
                let gen = self.nodes[i].tick_gen;
                self.push(due.max(self.now), Ev::Tick { node: i, gen });
            }
        }
    }

    fn send_all(&mut self, from: usize, out: Vec<(usize, ConsensusMsg<u64>)>) {
        for (to, msg) in out {
            self.messages += 1;
            if self.group[from] != self.group[to] {
                continue;
            }
            if self.net_rng.gen_bool(self.loss) {
                continue;
            }
            let copies = if self.net_rng.gen_bool(self.duplicate) { 2 } else { 1 };
            for _ in 0..copies {
                let d = self.net_rng.gen_range(self.delay_ms.0..=self.delay_ms.1);
                let at = self.now + (d * MS as f64) as u64;
                self.push(at, Ev::Deliver { from, to, msg: msg.clone() });
            }
        }
    }

    /// Runs until true time `until`; returns early never.
    pub fn run_until(&mut self, until: u64) {
        while let Some(Reverse((at, _, idx))) = self.heap.peek().copied() {
            if at > until {
                break;
            }
            self.heap.pop();
            self.now = at;
            let ev = self.events[idx].take().expect("event once");
            self.handle(ev);
        }
        self.now = until;
        if self.events.len() > 100_000 && self.heap.is_empty() {
            self.events.clear();
        }
    }

    fn handle(&mut self, ev: Ev) {
        let node = match &ev {
            Ev::Deliver { to, .. } => *to,
            Ev::Tick { node, .. } => *node,
            Ev::Restart { node } => *node,
        };
        if let Ev::Restart { node } = ev {
            let now = self.now;
            let n = &mut self.nodes[node];
            n.down = false;
            n.paused_until = 0;
            let Node { core, rng, .. } = n;
            core.start(now, rng);
            self.nodes[node].tick_at = u64::MAX;
            self.rearm(node);
            return;
        }
        if self.nodes[node].down {
            return;
        }
        if self.now < self.nodes[node].paused_until {
            let at = self.nodes[node].paused_until;
            self.push(at, ev);
            return;
        }
        let now = self.now;
        let mut out = Vec::new();
        {
            let Node { core, rng, tick_gen, .. } = &mut self.nodes[node];
            match ev {
                Ev::Deliver { from, msg, .. } => core.step(now, rng, from, msg, &mut out),
                Ev::Tick { gen, .. } => {
                    if gen != *tick_gen {
                        return;
                    }
                    self.nodes[node].tick_at = u64::MAX;
                    let Node { core, rng, .. } = &mut self.nodes[node];
                    core.tick(now, rng, &mut out);
                }
                Ev::Restart { .. } => unreachable!(),
            }
        }
        self.send_all(node, out);
        self.rearm(node);
        self.check(node);
    }

    /// Proposes a fresh value at whichever replica leads (the highest term if several think so).
    pub fn propose(&mut self) -> Option<(usize, LogIndex, u64)> {
        let leader = self.leader()?;
        let v = self.next_value;
        self.next_value += 1;
        let mut out = Vec::new();
        let ix = self.nodes[leader].core.propose(v, &mut out).ok()?;
        self.send_all(leader, out);
        self.rearm(leader);
        self.check(leader);
        Some((leader, ix, v))
    }

    /// Asks replica `i` for a read index; the answer lands in `reads`.
    pub fn read(&mut self, i: usize, id: u64) -> bool {
        let mut out = Vec::new();
        let ok = self.nodes[i].core.read_index(id, &mut out).is_ok();
        self.send_all(i, out);
        self.rearm(i);
        self.check(i);
        ok
    }

    /// A live, unpaused replica that believes it leads, highest term first.
    pub fn leader(&self) -> Option<usize> {
        (0..self.nodes.len())
            .filter(|&i| !self.nodes[i].down && self.now >= self.nodes[i].paused_until)
            .filter(|&i| self.nodes[i].core.is_leader())
            .max_by_key(|&i| self.nodes[i].core.term())
    }

    pub fn crash(&mut self, i: usize, restart_at: u64) {
        self.nodes[i].down = true;
        self.nodes[i].core.crash();
        self.nodes[i].tick_gen += 1;
        self.nodes[i].tick_at = u64::MAX;
        self.push(restart_at, Ev::Restart { node: i });
    }

    pub fn pause(&mut self, i: usize, until: u64) {
        self.nodes[i].paused_until = self.nodes[i].paused_until.max(until);
    }

    pub fn partition(&mut self, groups: &[u32]) {
        self.group = groups.to_vec();
    }

    pub fn heal(&mut self) {
        self.group = vec![0; self.nodes.len()];
    }

    /// Raft's safety invariants, checked after every step of `node`:
    /// election safety (one leader per term), state-machine safety (a committed index never holds
    /// two different entries), and log matching up to each replica's commit index.
    fn check(&mut self, node: usize) {
        let core = &mut self.nodes[node].core;
        if core.is_leader() {
            let t = core.term();
            let prev = *self.leaders_by_term.entry(t).or_insert(node);
            assert_eq!(prev, node, "two leaders in term {t}");
        }
        for c in core.take_committed_entries() {
            let e = self.committed.entry(c.index).or_insert((c.term, c.cmd));
            assert_eq!(*e, (c.term, c.cmd), "index {} committed twice differently", c.index);
        }
        let mut finished = Vec::new();
        core.take_reads_into(&mut finished);
        for (id, r) in finished {
            self.reads.push((node, id, r));
        }
        // Entries at or below a commit index never change (the core asserts it never truncates
        // them), so each committed index needs comparing once per replica.
        let commit = core.commit_index();
        let from = self.nodes[node].checked_upto;
        if commit > from {
            self.check_range(node, from + 1, commit);
            self.nodes[node].checked_upto = commit;
        }
    }

    fn check_range(&self, node: usize, from: LogIndex, to: LogIndex) {
        let core = &self.nodes[node].core;
        for ix in from..=to {
            let (t, v) = self.committed.get(&ix).expect("a replica's committed entry was handed out");
            let e = &core.log()[ix as usize - 1];
            assert_eq!((e.term, e.cmd), (*t, *v), "replica {node} disagrees at committed index {ix}");
        }
    }

    /// Log matching over every replica's whole committed prefix.
    /// The fault schedule both logs' safety tests run, drawn from the seed's `faults` stream:
    /// 2% loss and duplication, 0.05-3 ms links; until `fault_end`, every 0.3-3 s a random node is
    /// crashed (back 0.1-4 s later), paused (0.1-4 s) or the group split in two (healed 0.2-5 s
    /// later), while a proposal goes in every 5-40 ms. Ends healed, with loss and duplication
    /// off.
    pub fn run_random_faults(&mut self, seed: u64, fault_end: u64) {
        let n = self.nodes.len();
        self.loss = 0.02;
        self.duplicate = 0.02;
        self.delay_ms = (0.05, 3.0);
        let mut frng = stream(seed, "faults", "test");
        let mut next_fault = frng.gen_range(500..3000) * MS;
        let mut heal_at = u64::MAX;
        while self.now < fault_end {
            if self.now >= next_fault {
                let victim = frng.gen_range(0..n);
                match frng.gen_range(0..3) {
                    0 => {
                        if !self.nodes[victim].down {
                            let back = self.now + frng.gen_range(100..4000) * MS;
                            self.crash(victim, back);
                        }
                    }
                    1 => {
                        let until = self.now + frng.gen_range(100..4000) * MS;
                        self.pause(victim, until);
                    }
                    _ => {
                        let groups: Vec<u32> = (0..n).map(|_| frng.gen_range(0..2)).collect();
                        self.partition(&groups);
                        heal_at = self.now + frng.gen_range(200..5000) * MS;
                    }
                }
                next_fault = self.now + frng.gen_range(300..3000) * MS;
            }
            if self.now >= heal_at {
                self.heal();
                heal_at = u64::MAX;
            }
            self.propose();
            let t = self.now + frng.gen_range(5..40) * MS;
            self.run_until(t);
        }
        self.heal();
        self.loss = 0.0;
        self.duplicate = 0.0;
    }

    pub fn check_all(&self) {
        for i in 0..self.nodes.len() {
            let commit = self.nodes[i].core.commit_index();
            if commit > 0 {
                self.check_range(i, 1, commit);
            }
        }
    }

    /// The highest index any replica has handed out as committed.
    pub fn max_committed(&self) -> LogIndex {
        self.committed.keys().next_back().copied().unwrap_or(0)
    }
}
