//! Reentrancy of the lock row: the `count` column goes 1 → 2 → 3 as the same owner locks again
//! (duplicate key, then `UPDATE … count + 1 WHERE owner`), and 3 → 2 → 1 → deleted as it unlocks;
//! another owner is refused throughout and gets the lock only after the row is gone.
//!
//! The workload nests at most one level, so the 3-deep case uses a wrapper library (the real db
//! client underneath) that locks three times per acquisition and unlocks three times per release.

use crate::db_common;

use db_common::*;
use locksim_algorithms::db::client::DbClient;
use locksim_algorithms::db::protocol::{DbMsg, DbTimer};
use locksim_algorithms::db::{Config, Db, DB};
use locksim_simulator::history::{HistoryEvent, LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvent, LockEvents};
use locksim_simulator::model::{Cluster, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::{Crash, Ctx, NodeId, NodeKind, TimerId};
use locksim_simulator::setup::WorkloadSpec;

/// The real db client, driven three levels deep.
#[derive(Clone, Debug)]
struct ThreeDeep {
    inner: DbClient,
    depth: u32,
    releases_left: u32,
}

impl ThreeDeep {
    fn forward(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, events: LockEvents) {
        for e in events {
            match e {
                LockEvent::Granted { key, token } => {
                    self.depth += 1;
                    if self.depth < 3 {
                        let mut more = Vec::new();
                        self.inner.acquire(ctx, &mut more, key, LockMode::Exclusive);
                        self.forward(ctx, out, more);
                    } else {
                        out.push(LockEvent::Granted { key, token });
                    }
                }
                LockEvent::Released { key } => {
                    self.releases_left -= 1;
                    if self.releases_left == 0 {
                        self.depth = 0;
                        out.push(LockEvent::Released { key });
                    }
                }
                other => out.push(other),
            }
        }
    }
}

impl locksim_simulator::durable::Durable for ThreeDeep {
    /// The wrapped library as its own disk rebuilds it; the wrapper's counters stay.
    type Disk = ThreeDeep;
    fn into_disk(self, crash: &Crash) -> ThreeDeep {
        ThreeDeep { inner: DbClient::from_disk(self.inner.into_disk(crash)), ..self }
    }
    fn from_disk(disk: ThreeDeep) -> ThreeDeep {
        disk
    }
}

impl LockClient<Db> for ThreeDeep {
    fn on_start(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents) {
        let mut ev = Vec::new();
        self.inner.on_start(ctx, &mut ev);
        self.forward(ctx, out, ev);
    }
    fn acquire(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, key: LockKey, mode: LockMode) {
        self.depth = 0;
        let mut ev = Vec::new();
        self.inner.acquire(ctx, &mut ev, key, mode);
        self.forward(ctx, out, ev);
    }
    fn release(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, key: LockKey) {
        self.releases_left = 3;
        let mut ev = Vec::new();
        for _ in 0..3 {
            self.inner.release(ctx, &mut ev, key);
        }
        self.forward(ctx, out, ev);
    }
    fn cancel(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, key: LockKey) {
        self.inner.cancel(ctx, out, key);
    }
    fn on_message(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, from: NodeId, msg: DbMsg) {
        let mut ev = Vec::new();
        self.inner.on_message(ctx, &mut ev, from, msg);
        self.forward(ctx, out, ev);
    }
    fn on_timer(&mut self, ctx: &mut Ctx<Db>, out: &mut LockEvents, timer: TimerId, tag: DbTimer) {
        let mut ev = Vec::new();
        self.inner.on_timer(ctx, &mut ev, timer, tag);
        self.forward(ctx, out, ev);
    }
}

/// `db` with every client library wrapped in [`ThreeDeep`].
struct ThreeDeepDb;

impl Model for ThreeDeepDb {
    type Protocol = Db;
    fn name(&self) -> &'static str {
        "db"
    }
    fn summary(&self) -> &'static str {
        "db, locking three levels deep"
    }
    fn params(&self) -> &'static [ParamSpec] {
        DB.params()
    }
    fn fenced(&self, params: &Params) -> bool {
        DB.fenced(params)
    }
    fn services(&self, params: &Params) -> Vec<(String, NodeKind)> {
        DB.services(params)
    }
    fn topology(&self, params: &Params) -> Topology {
        DB.topology(params)
    }
    fn build(&self, params: &Params, spec: &WorkloadSpec) -> Cluster<Db> {
        let mut cluster = DB.build(params, spec);
        cluster.clients = (0..spec.clients)
            .map(|i| {
                let inner = DbClient::new(Config::from_params(params, spec.clients), i);
                Box::new(ThreeDeep { inner, depth: 0, releases_left: 0 }) as Box<dyn LockClient<Db>>
            })
            .collect();
        cluster
    }
}

const TWO_CLIENTS_ONCE: &str = r#"
name = "reentry"
duration_ms = 2000
algorithms = ["db"]
[network]
latency_ms = 0.25
[workload]
clients = 2
hold_ms = 300
think_ms = 0
acquisitions_per_client = 1
"#;

/// The row's count as the server reports it, in order, for one owner's statements.
fn counts_reported(out: &locksim_simulator::run::SeedOutcome, client: &str) -> Vec<u32> {
    trace_lines(out, "server-0", "send", &format!("→ {client} "))
        .into_iter()
        .filter_map(|(_, d)| {
            if d.contains("OK id=") {
                Some(1)
            } else if let Some(rest) = d.split("count=").nth(1) {
                rest.split_whitespace().next().and_then(|n| n.parse().ok())
            } else if d.contains("deleted") {
                Some(0)
            } else {
                None
            }
        })
        .collect()
}

#[test]
fn count_goes_one_two_three_then_back_to_zero_and_the_other_owner_waits() {
    for seed in 0..4 {
        let out = run_with(TWO_CLIENTS_ONCE, "db", seed, &[&ThreeDeepDb]);
        let g: Vec<Grant> = grants(&out).into_iter().filter(|g| !g.nested).collect();
        assert_eq!(g.len(), 2, "seed {seed}: both clients acquire once: {g:?}");
        let first = out
            .trace
            .as_ref()
            .unwrap()
            .entries
            .iter()
            .find(|t| t.node.starts_with("client-") && t.kind == "history" && t.detail.starts_with("Granted"))
            .unwrap()
            .node
            .clone();
        let second = if first == "client-0" { "client-1" } else { "client-0" };
        assert_eq!(counts_reported(&out, &first), vec![1, 2, 3, 2, 1, 0], "seed {seed}: the first holder's row count");
        // The second owner was refused while the row existed, then made a fresh row (new id).
        let refused = history_times(&out, |e| matches!(e, HistoryEvent::RefusedAttempt { .. }));
        assert!(!refused.is_empty(), "seed {seed}: the other owner was refused");
        assert_eq!(counts_reported(&out, second).first(), Some(&1), "seed {seed}: second owner inserts its own row");
        assert!(g[1].at_ms > g[0].at_ms + 300.0, "seed {seed}: second grant after the first release");
        assert!(g[1].token > g[0].token, "seed {seed}: a new auto-increment id");
        assert_eq!(out.metrics.overlap_events, 0);
    }
}

#[test]
fn workload_nesting_reuses_the_row_and_its_token() {
    let toml = r#"
name = "nest"
duration_ms = 5000
algorithms = ["db"]
[workload]
clients = 3
hold_ms = 20
reentry = 1.0
"#;
    let out = run(toml, "db", 1);
    let g = grants(&out);
    let nested: Vec<&Grant> = g.iter().filter(|x| x.nested).collect();
    assert!(nested.len() > 20, "nested grants happen: {}", nested.len());
    for n in nested {
        let outer = g.iter().rev().find(|x| !x.nested && x.node == n.node && x.at_ms <= n.at_ms).expect("outer grant");
        assert_eq!(outer.token, n.token, "a nested grant carries the row's id");
    }
    assert_eq!(out.metrics.overlap_events, 0);
    assert_eq!(out.metrics.token_regressions, 0);
}
