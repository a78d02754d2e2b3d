//! `--verify`'s core, [`verify_seed`]: a deterministic model passes; a model that reads state
//! shared across runs (the classic source of nondeterminism) is caught, with the seed and the
//! first differing trace entry named.

use std::sync::atomic::{AtomicU64, Ordering};

use locksim_campaign::seed::{verify_seed, SeedResult, VerifiedSeed};
use locksim_simulator::batch::run_seed;
use locksim_simulator::model::{Cluster, DynModel, Model, ParamSpec, Params, Topology};
use locksim_simulator::process::{Ctx, NodeId, NodeKind, Process, Protocol, TimerId};
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::WorkloadSpec;

/// Counts builds across runs: a "flaky" server notes it, so two runs of one seed differ.
static BUILDS: AtomicU64 = AtomicU64::new(0);

#[derive(Clone, Debug)]
struct Server {
    note: Option<u64>,
}

impl Protocol for Toy {
    type Msg = ();
    type Timer = ();
}

locksim_simulator::durable_whole!(Server);
impl Process<Toy> for Server {
    fn on_start(&mut self, ctx: &mut Ctx<Toy>) {
        ctx.set_timer(5_000_000, ());
        ctx.note(|| "started".to_string());
    }
    fn on_message(&mut self, _: &mut Ctx<Toy>, _: NodeId, _: ()) {}
    fn on_timer(&mut self, ctx: &mut Ctx<Toy>, _: TimerId, _: ()) {
        let note = self.note;
        ctx.note(|| match note {
            Some(n) => format!("build {n}"),
            None => "steady".to_string(),
        });
    }
}

struct Toy {
    name: &'static str,
    flaky: bool,
}

impl Model for Toy {
    type Protocol = Toy;
    fn name(&self) -> &'static str {
        self.name
    }
    fn summary(&self) -> &'static str {
        "a server that notes one line after 5 ms"
    }
    fn params(&self) -> &'static [ParamSpec] {
        &[]
    }
    fn fenced(&self, _: &Params) -> bool {
        false
    }
    fn services(&self, _: &Params) -> Vec<(String, NodeKind)> {
        vec![("server-0".to_string(), NodeKind::Server)]
    }
    fn topology(&self, _: &Params) -> Topology {
        Topology { ordered_links: false, leaderless: false }
    }
    fn build(&self, _: &Params, _: &WorkloadSpec) -> Cluster<Toy> {
        let note = self.flaky.then(|| BUILDS.fetch_add(1, Ordering::SeqCst));
        Cluster { services: vec![Box::new(Server { note })], clients: Vec::new() }
    }
}

static STEADY: Toy = Toy { name: "steady", flaky: false };
static FLAKY: Toy = Toy { name: "flaky", flaky: true };

fn verify(model: &'static Toy, seed: u64) -> VerifiedSeed {
    let models: Vec<&'static dyn DynModel> = vec![&STEADY, &FLAKY];
    let text = format!("name = \"t\"\nduration_ms = 20\nalgorithms = [\"{}\"]\n", model.name);
    let scenario = parse_str("t.toml", &text, &models).expect("valid scenario");
    verify_seed(&scenario, &scenario.runs[0], seed)
}

#[test]
fn a_deterministic_model_passes() {
    let v = verify(&STEADY, 7);
    assert!(v.difference.is_none());
    assert!(matches!(v.result, SeedResult::Done { .. }));
}

#[test]
fn a_model_with_state_shared_across_runs_is_caught_at_its_first_difference() {
    let v = verify(&FLAKY, 42);
    let d = v.difference.expect("the second run notes a different build number");
    assert_eq!(d.seed, 42);
    assert_ne!(d.first_hash, d.second_hash);
    let first = d.first.expect("entry exists in run 1");
    let second = d.second.expect("entry exists in run 2");
    assert!(first.contains("build ") && second.contains("build "), "{first} / {second}");
    assert_ne!(first, second);
    assert!(first.contains("5.000000 ms"), "the difference is the timer note at 5 ms: {first}");
    // Everything before it agreed: the index is where the steady model's own timer note sits.
    let models: Vec<&'static dyn DynModel> = vec![&STEADY];
    let scenario = parse_str("t.toml", "name = \"t\"\nduration_ms = 20\nalgorithms = [\"steady\"]\n", &models).unwrap();
    let steady = run_seed(&scenario, &scenario.runs[0], 42, &RunOptions { trace: true }).expect("no panic");
    let entries = steady.trace.expect("traced").entries;
    let at = entries.iter().position(|e| e.detail == "steady").expect("the steady note");
    assert!(at > 0, "entries precede the note");
    assert_eq!(d.index, at, "{first}");
}
