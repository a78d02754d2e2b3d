//! The consensus `Replica` driven by the real engine (`run_seed`): a harness model whose servers
//! each embed a `Replica<u64>`, propose a fresh value every 10 ms while they lead, and note every
//! leadership and every committed entry in the trace. Random crashes, pauses, isolations, loss,
//! duplication and reordering; the trace must show at most one leader per term, every member
//! applying the same entry at each index, each member applying indices in order exactly once
//! (across its restarts), and steady progress.

use std::collections::BTreeMap;
use std::fmt;

use locksim_algorithms::consensus::{Config, ConsensusMsg, ConsensusTimer, Replica};
use locksim_simulator::history::{FailReason, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::model::{Cluster, DynModel, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::{Crash, Ctx, NodeId, NodeKind, Process, Protocol, TimerId};
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;

const MS: u64 = 1_000_000;

/// The harness's one message: Raft's.
#[derive(Clone)]
enum HarnessMsg {
    Consensus(ConsensusMsg<u64>),
}

impl From<ConsensusMsg<u64>> for HarnessMsg {
    fn from(m: ConsensusMsg<u64>) -> Self {
        HarnessMsg::Consensus(m)
    }
}

impl fmt::Debug for HarnessMsg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HarnessMsg::Consensus(m) => m.fmt(f),
        }
    }
}

/// The replica's timer, and the leader's next proposal.
#[derive(Clone, Debug)]
enum HarnessTimer {
    Consensus(ConsensusTimer),
    Propose,
}

impl From<ConsensusTimer> for HarnessTimer {
    fn from(t: ConsensusTimer) -> Self {
        HarnessTimer::Consensus(t)
    }
}

impl Protocol for Harness {
    type Msg = HarnessMsg;
    type Timer = HarnessTimer;
}

#[derive(Clone, Debug)]
struct RaftNode {
    index: u64,
    replica: Replica<u64>,
    next: u64,
    was_leader: bool,
}

impl RaftNode {
    fn settle(&mut self, ctx: &mut Ctx<Harness>) {
        if self.replica.is_leader() && !self.was_leader {
            let t = self.replica.term();
            ctx.note(|| format!("raft: leader t{t}"));
        }
        self.was_leader = self.replica.is_leader();
        for c in self.replica.take_committed_entries() {
            ctx.note(|| format!("raft: apply {} t{} {:?}", c.index, c.term, c.cmd));
        }
    }
}

impl locksim_simulator::durable::Durable for RaftNode {
    /// The replica's disk; it was not leading when it comes back.
    type Disk = RaftNode;
    fn into_disk(self, _crash: &Crash) -> RaftNode {
        RaftNode { replica: Replica::from_disk(self.replica.into_disk()), was_leader: false, ..self }
    }
    fn from_disk(disk: RaftNode) -> RaftNode {
        disk
    }
}

impl Process<Harness> for RaftNode {
    fn on_start(&mut self, ctx: &mut Ctx<Harness>) {
        self.replica.on_start(ctx);
        ctx.set_timer(10 * MS, HarnessTimer::Propose);
        self.settle(ctx);
    }
    fn on_message(&mut self, ctx: &mut Ctx<Harness>, from: NodeId, msg: HarnessMsg) {
        match msg {
            HarnessMsg::Consensus(m) => self.replica.on_message(ctx, from, m),
        }
        self.settle(ctx);
    }
    fn on_timer(&mut self, ctx: &mut Ctx<Harness>, _timer: TimerId, tag: HarnessTimer) {
        match tag {
            HarnessTimer::Consensus(_) => self.replica.on_timer(ctx),
            HarnessTimer::Propose => {
                if self.replica.is_leader() {
                    self.next += 1;
                    let _ = self.replica.propose(ctx, self.index * 1_000_000_000 + self.next);
                }
                ctx.set_timer(10 * MS, HarnessTimer::Propose);
            }
        }
        self.settle(ctx);
    }
    fn leadership(&self) -> Option<u64> {
        self.replica.leadership()
    }
}

/// A client library that never locks (the harness only exercises the servers).
#[derive(Clone, Debug)]
struct Idle;

locksim_simulator::durable_whole!(Idle);
impl LockClient<Harness> for Idle {
    fn on_start(&mut self, _ctx: &mut Ctx<Harness>, _out: &mut LockEvents) {}
    fn acquire(&mut self, _ctx: &mut Ctx<Harness>, out: &mut LockEvents, key: LockKey, _mode: LockMode) {
        out.push(LockEvent::Failed { key, reason: FailReason::Unavailable });
    }
    fn release(&mut self, _ctx: &mut Ctx<Harness>, out: &mut LockEvents, key: LockKey) {
        out.push(LockEvent::Released { key });
    }
    fn cancel(&mut self, _ctx: &mut Ctx<Harness>, _out: &mut LockEvents, _key: LockKey) {}
    fn on_message(&mut self, _ctx: &mut Ctx<Harness>, _out: &mut LockEvents, _from: NodeId, _msg: HarnessMsg) {}
    fn on_timer(&mut self, _ctx: &mut Ctx<Harness>, _out: &mut LockEvents, _timer: TimerId, _tag: HarnessTimer) {}
}

struct Harness;
static HARNESS: Harness = Harness;

impl Model for Harness {
    type Protocol = Harness;

    fn name(&self) -> &'static str {
        "raft-harness"
    }
    fn summary(&self) -> &'static str {
        "test harness: five Raft replicas proposing counters"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn fenced(&self, _params: &Params) -> bool {
        false
    }
    fn services(&self, _params: &Params) -> Vec<(String, NodeKind)> {
        (0..5).map(|i| (format!("server-{i}"), NodeKind::Server)).collect()
    }
    fn topology(&self, _params: &Params) -> Topology {
        Topology { ordered_links: false, leaderless: false }
    }
    fn build(&self, _params: &Params, spec: &WorkloadSpec) -> Cluster<Harness> {
        let names: Vec<String> = (0..5).map(|i| format!("server-{i}")).collect();
        let services = (0..5)
            .map(|i| {
                let replica = Replica::new(i, names.clone(), Config::new(100 * MS, 1000 * MS));
                let node = RaftNode { index: i as u64, replica, next: 0, was_leader: false };
                Box::new(node) as Box<dyn Process<Harness>>
            })
            .collect();
        let clients = (0..spec.clients).map(|_| Box::new(Idle) as Box<dyn LockClient<Harness>>).collect();
        Cluster { services, clients }
    }
}

const FAULTY: &str = r#"
name = "raft-faults"
duration_ms = 20_000
algorithms = ["raft-harness"]

[network]
latency_ms = { lognormal = { median = 0.25, p99 = 5.0 } }
loss = 0.02
duplicate = 0.02

[workload]
clients = 1
think_ms = 1_000

[[faults]]
kind = "crash"
target = "random-server"
at_ms = { uniform = [0, 3_000] }
duration_ms = { uniform = [100, 4_000] }
every_ms = { uniform = [1_000, 5_000] }

[[faults]]
kind = "pause"
target = "random-server"
at_ms = { uniform = [0, 3_000] }
duration_ms = { uniform = [100, 4_000] }
every_ms = { uniform = [1_000, 5_000] }

[[faults]]
kind = "isolate"
target = "random-server"
at_ms = { uniform = [0, 3_000] }
duration_ms = { uniform = [100, 4_000] }
every_ms = { uniform = [2_000, 6_000] }
"#;

#[test]
fn raft_invariants_hold_under_engine_faults() {
    let models: Vec<&'static dyn DynModel> = vec![&HARNESS];
    let sc = parse_str("raft.toml", FAULTY, &models).unwrap_or_else(|e| panic!("{e}"));
    let run = &sc.runs[0];
    let mut total_applied = 0usize;
    let mut terms = 0usize;
    for seed in 0..150 {
        let out = run.model.run_seed(&sc.setup, &run.params, seed, &RunOptions { trace: true });
        let trace = out.trace.expect("trace");
        let mut leader_of: BTreeMap<u64, String> = BTreeMap::new();
        let mut entry_at: BTreeMap<u64, String> = BTreeMap::new();
        let mut next_index: BTreeMap<String, u64> = BTreeMap::new();
        for t in trace.entries.iter().filter(|t| t.kind == "note") {
            if let Some(term) = t.detail.strip_prefix("raft: leader t") {
                let term: u64 = term.parse().unwrap();
                let prev = leader_of.entry(term).or_insert_with(|| t.node.clone());
                assert_eq!(*prev, t.node, "seed {seed}: two leaders in term {term}");
            } else if let Some(rest) = t.detail.strip_prefix("raft: apply ") {
                let (index, entry) = rest.split_once(' ').unwrap();
                let index: u64 = index.parse().unwrap();
                let e = entry_at.entry(index).or_insert_with(|| entry.to_string());
                assert_eq!(e, entry, "seed {seed}: index {index} applied differently on {}", t.node);
                let expect = next_index.entry(t.node.clone()).or_insert(1);
                assert_eq!(index, *expect, "seed {seed}: {} applied out of order", t.node);
                *expect += 1;
            }
        }
        // Progress despite the faults.
        assert!(entry_at.len() > 20, "seed {seed}: only {} entries committed", entry_at.len());
        total_applied += entry_at.len();
        terms += leader_of.len();
    }
    assert!(terms > 150 * 3, "too few elections to mean anything: {terms}");
    assert!(total_applied > 150 * 500, "{total_applied}");
}
