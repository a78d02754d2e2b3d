//! Helpers shared by the redis model's tests: run one labelled configuration of a scenario text
//! for one seed, and read the history and the trace.

#![allow(dead_code)]

use crate::common;
pub use common::*;

use locksim_simulator::scenario::parse_str;

// ----- a scripted world: the model's servers and Sentinels, and clients that follow a script ---

use locksim_algorithms::redis::client::{
    AcquireMode, NoSync, RenewalError, ReplicaCount, ResendWritten, RetryDelay, UnlockMode,
};
pub use locksim_algorithms::redis::keyspace::Reply;
pub use locksim_algorithms::redis::persistence::Persistence;
use locksim_algorithms::redis::protocol::RedisTimer;
pub use locksim_algorithms::redis::protocol::{Answer, Command, RedisMsg, Request, Response, SentinelEvent, WaitSpec};
pub use locksim_algorithms::redis::RedisConfig;
use locksim_algorithms::redis::{Redis, REDIS};
use locksim_simulator::clock::NodeClock;
use locksim_simulator::directory::Directory;
use locksim_simulator::dist::Dist;
use locksim_simulator::engine::network::{LinkParams, Network};
use locksim_simulator::engine::schedule::Occurrence;
use locksim_simulator::engine::{Behaviour, Node, World, WorldConfig};
use locksim_simulator::history::{LockKey, LockMode};
use locksim_simulator::lockclient::{LockClient, LockEvents};
use locksim_simulator::model::{Model, Params};
use locksim_simulator::process::{Crash, Ctx, NodeId, NodeKind, Process, TimerId};
use locksim_simulator::rng::stream;
use locksim_simulator::run::SeedOutcome;
use locksim_simulator::scenario::{FaultKind, FaultSpec, Selector};
use locksim_simulator::setup::WorkloadSpec;
use locksim_simulator::time::ms_to_ns;
use locksim_simulator::trace::MessageLine;
use locksim_simulator::trace::TraceEntry;

// ----- the trace's messages, typed -------------------------------------------------------------

/// Every request sent whose command `is`, in order.
pub fn requests_sent<'o>(out: &'o SeedOutcome, is: impl Fn(&Command) -> bool) -> Vec<MessageLine<'o, Request>> {
    sent::<RedisMsg>(out).into_iter().filter_map(|l| l.part(|m| request(m).filter(|r| is(&r.cmd)))).collect()
}

/// Every request delivered whose command `is`, in order.
pub fn requests_delivered<'o>(out: &'o SeedOutcome, is: impl Fn(&Command) -> bool) -> Vec<MessageLine<'o, Request>> {
    delivered::<RedisMsg>(out).into_iter().filter_map(|l| l.part(|m| request(m).filter(|r| is(&r.cmd)))).collect()
}

/// Every response sent whose answer `is`, in order.
pub fn responses_sent<'o>(out: &'o SeedOutcome, is: impl Fn(&Answer) -> bool) -> Vec<MessageLine<'o, Response>> {
    let response = |m: &'o RedisMsg| match m {
        RedisMsg::Response(r) if is(&r.answer) => Some(r),
        _ => None,
    };
    sent::<RedisMsg>(out).into_iter().filter_map(|l| l.part(response)).collect()
}

fn request(m: &RedisMsg) -> Option<&Request> {
    match m {
        RedisMsg::Request(r) => Some(r),
        _ => None,
    }
}

/// What a scripted client does at a given time.
#[derive(Clone, Copy, Debug)]
pub enum Step {
    Acquire(LockKey),
    Release(LockKey),
}

/// A client node that calls its lock library at scripted times and writes every event the
/// library answers into the trace as a note `lib <event>`.
#[derive(Clone, Debug)]
struct Scripted {
    lib: Box<dyn LockClient<Redis>>,
    steps: Vec<(f64, Step)>,
    events: LockEvents,
}

impl Scripted {
    fn drain(&mut self, ctx: &mut Ctx<Redis>) {
        for e in std::mem::take(&mut self.events) {
            ctx.note(|| format!("lib {e:?}"));
        }
    }
}

impl locksim_simulator::durable::Durable for Scripted {
    /// The library as its own disk rebuilds it; the script stays.
    type Disk = Scripted;
    fn into_disk(mut self, crash: &Crash) -> Scripted {
        self.lib.rebuild(crash);
        self
    }
    fn from_disk(disk: Scripted) -> Scripted {
        disk
    }
}

impl Process<Redis> for Scripted {
    fn on_start(&mut self, ctx: &mut Ctx<Redis>) {
        self.lib.on_start(ctx, &mut self.events);
        for (step, (at_ms, _)) in self.steps.iter().enumerate() {
            ctx.set_timer(ms_to_ns(*at_ms), RedisTimer::Script { step });
        }
        self.drain(ctx);
    }
    fn on_message(&mut self, ctx: &mut Ctx<Redis>, from: NodeId, msg: RedisMsg) {
        self.lib.on_message(ctx, &mut self.events, from, msg);
        self.drain(ctx);
    }
    fn on_timer(&mut self, ctx: &mut Ctx<Redis>, timer: TimerId, tag: RedisTimer) {
        match tag {
            RedisTimer::Script { step } => match self.steps[step].1 {
                Step::Acquire(key) => self.lib.acquire(ctx, &mut self.events, key, LockMode::Exclusive),
                Step::Release(key) => self.lib.release(ctx, &mut self.events, key),
            },
            tag => self.lib.on_timer(ctx, &mut self.events, timer, tag),
        }
        self.drain(ctx);
    }
    fn on_reset(&mut self, ctx: &mut Ctx<Redis>, peer: NodeId) {
        self.lib.on_reset(ctx, &mut self.events, peer);
        self.drain(ctx);
    }
}

/// A node that ignores everything (the resource, unused by scripted clients).
#[derive(Clone, Debug)]
struct Nothing;
locksim_simulator::durable_whole!(Nothing);
impl Process<Redis> for Nothing {
    fn on_start(&mut self, _ctx: &mut Ctx<Redis>) {}
    fn on_message(&mut self, _ctx: &mut Ctx<Redis>, _from: NodeId, _msg: RedisMsg) {}
    fn on_timer(&mut self, _ctx: &mut Ctx<Redis>, _timer: TimerId, _tag: RedisTimer) {}
}

/// A fault at a fixed time on one named node.
pub fn fault(kind: FaultKind, target: &str, at_ms: f64, duration_ms: Option<f64>) -> (FaultSpec, f64, Option<f64>) {
    let spec = FaultSpec {
        kind,
        targets: vec![Selector::Named(target.to_string())],
        at_ms: Dist::Const(at_ms),
        duration_ms: duration_ms.map(Dist::Const),
        every_ms: None,
        probability: 1.0,
    };
    (spec, at_ms, duration_ms)
}

/// The model before presets (`client = "locksim-1"`), every parameter at its schema default,
/// stated in Rust: the tests of the model's mechanisms change a field or two
/// (`RedisConfig { replicas: 1, ..locksim_1() }`) and run it with [`scripted_config`].
pub fn locksim_1() -> RedisConfig {
    RedisConfig {
        client: "locksim-1".into(),
        ttl_ms: 30_000.0,
        unlock: UnlockMode::CompareAndDelete,
        release_missing_fails: false,
        acquire: AcquireMode::SetNxPx,
        retry_ms: Dist::Uniform(50.0, 250.0),
        watchdog: false,
        replicas: 0,
        replication_lag_ms: Dist::Const(5.0),
        sentinels: 3,
        quorum: 2,
        down_after_ms: 30_000.0,
        replica_ack: true,
        fencing_counter: true,
        persistence: Persistence::Rdb,
        min_replicas_to_write: 0,
        min_replicas_max_lag_ms: 10_000.0,
        timeout_ms: 3_000.0,
        retry_attempts: 3,
        retry_interval_ms: 1_500.0,
        retry_delay: RetryDelay::Constant,
        renewal_error: RenewalError::Reschedule,
        renewal_wait: false,
        resend_written: ResendWritten::All,
        readonly_retry: false,
        replica_count: ReplicaCount::SentinelView,
        no_sync: NoSync::UnlockFail,
        service_ms: Dist::Const(0.05),
    }
}

/// Runs the redis model with the `[models.redis]` overrides in `params_toml`, one scripted client
/// per script, constant 0.25 ms one-way latency, and the faults given; returns the trace. Without
/// a `client` in `params_toml` the row runs `client = "locksim-1"` (the model before presets, the
/// default before issue 32's flip): these tests pin the model's mechanisms, which the presets only
/// configure; `redis_library.rs` tests the presets and the default itself.
pub fn scripted(
    params_toml: &str,
    scripts: Vec<Vec<(f64, Step)>>,
    faults: Vec<(FaultSpec, f64, Option<f64>)>,
    end_ms: f64,
    seed: u64,
) -> Vec<TraceEntry> {
    let pin = if params_toml.contains("client") { "" } else { "client = \"locksim-1\"\n" };
    scripted_as_given(&format!("{pin}{params_toml}"), scripts, faults, end_ms, seed)
}

/// As [`scripted`], with `params_toml` as given: without a `client` the row runs the model's
/// default preset (the tests of the default itself).
pub fn scripted_as_given(
    params_toml: &str,
    scripts: Vec<Vec<(f64, Step)>>,
    faults: Vec<(FaultSpec, f64, Option<f64>)>,
    end_ms: f64,
    seed: u64,
) -> Vec<TraceEntry> {
    let text =
        format!("name = \"scripted\"\nduration_ms = 1000\nalgorithms = [\"redis\"]\n[models.redis]\n{params_toml}\n");
    let models = locksim_algorithms::registry();
    let sc = parse_str("scripted.toml", &text, &models).unwrap_or_else(|e| panic!("{e}"));
    scripted_config(&RedisConfig::from_params(&sc.runs[0].params), scripts, faults, end_ms, seed)
}

/// As [`scripted`], with the model configured as `cfg` (see [`locksim_1`]).
pub fn scripted_config(
    cfg: &RedisConfig,
    scripts: Vec<Vec<(f64, Step)>>,
    faults: Vec<(FaultSpec, f64, Option<f64>)>,
    end_ms: f64,
    seed: u64,
) -> Vec<TraceEntry> {
    let cluster = cfg.cluster(&WorkloadSpec { clients: scripts.len(), locks: 1, ..WorkloadSpec::default() });
    let topology = REDIS.topology(&Params::default());
    let mut names: Vec<(String, NodeKind)> = cfg.services();
    let mut procs: Vec<Box<dyn Process<Redis>>> = cluster.services;
    for (i, (lib, steps)) in cluster.clients.into_iter().zip(scripts).enumerate() {
        names.push((format!("client-{i}"), NodeKind::Client));
        procs.push(Box::new(Scripted { lib, steps, events: Vec::new() }));
    }
    names.push(("resource".into(), NodeKind::Resource));
    procs.push(Box::new(Nothing));
    let nodes: Vec<Node<Redis>> = procs
        .into_iter()
        .zip(names.iter())
        .map(|(p, (name, _))| Node::new(Behaviour::Service(p), NodeClock::new(0.0, 0), stream(seed, name, "model")))
        .collect();
    let base = LinkParams { latency_ms: Dist::Const(0.25), loss: 0.0, duplicate: 0.0 };
    let network = Network::new(names.len(), base, vec![], topology.ordered_links);
    let occurrences = faults
        .iter()
        .enumerate()
        .map(|(i, (spec, at, dur))| {
            let value = match &spec.kind {
                FaultKind::ClockJump { by_ms } => by_ms.mean(),
                FaultKind::ClockDrift { ppm } => ppm.mean(),
                _ => 0.0,
            };
            Occurrence { fault: i, start_ns: ms_to_ns(*at), duration_ns: dur.map(ms_to_ns), value }
        })
        .collect();
    let mut world = World::new(
        Directory::new(&names),
        nodes,
        WorldConfig {
            end_ns: ms_to_ns(end_ms),
            network,
            net_rng: stream(seed, "network", "latency"),
            fault_rng: stream(seed, "faults", "selection"),
            faults: faults.into_iter().map(|(s, _, _)| s).collect(),
            occurrences,
            leaderless: topology.leaderless,
            tracing: true,
        },
    );
    world.run();
    world.finish().trace.expect("tracing").entries
}

/// Entries of a trace from `node` whose kind is `kind` and whose detail contains `needle`, as
/// (true time in ms, detail).
pub fn find(trace: &[TraceEntry], node: &str, kind: &str, needle: &str) -> Vec<(f64, String)> {
    trace
        .iter()
        .filter(|t| t.node == node && t.kind == kind && t.detail.contains(needle))
        .map(|t| (t.at_ns as f64 / 1e6, t.detail.clone()))
        .collect()
}

/// Prints a scripted trace between two times.
pub fn dump_entries(trace: &[TraceEntry], from_ms: f64, to_ms: f64) {
    for t in trace {
        let ms = t.at_ns as f64 / 1e6;
        if ms >= from_ms && ms <= to_ms {
            println!("{ms:>12.3} {:<12} {:<8} {}", t.node, t.kind, t.detail);
        }
    }
}

/// The text of a known-outcome scenario file (`scenarios/known/NAME`).
pub fn known(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../scenarios/known").join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// [`locksim_1`] is the row the parser gives for `client = "locksim-1"` with nothing else set:
/// the tests that start from it run the schema's defaults.
#[test]
fn locksim_1_is_the_schema_defaults_without_a_preset() {
    let text = "name = \"d\"\nduration_ms = 1000\nalgorithms = [\"redis\"]\n[models.redis]\nclient = \"locksim-1\"\n";
    let sc = parse_str("d.toml", text, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    let parsed = RedisConfig::from_params(&sc.runs[0].params);
    assert_eq!(format!("{:?}", locksim_1()), format!("{parsed:?}"));
}
