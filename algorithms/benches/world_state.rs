//! Criterion benchmarks of copying and fingerprinting a world (what a systematic search does at
//! every state it explores): for each model, a world of the shared workload (10 clients on one
//! lock, hold 5–50 ms, default network) with the leader (or Redlock's `server-0`) crashed at
//! 2 s for 5 s, stopped mid-run at 4 s (the crash in force, clients failing over), then one
//! `World::clone`, one `World::fingerprint` and one `World::fingerprint_symmetric`. The figures
//! are in docs/world-state.md.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use locksim_simulator::model::{Model, Params};
use locksim_simulator::run::build_world;
use locksim_simulator::scenario::parse_str;
use locksim_simulator::setup::Setup;

const MODELS: [&str; 7] = ["db", "redis", "redlock", "zookeeper", "etcd", "kubernetes", "postgres"];
const MID_RUN_NS: u64 = 4_000_000_000;

fn bench<M: Model>(c: &mut Criterion, model: &M, setup: &Setup, params: &Params) {
    let (mut world, _) = build_world(model, setup, params, 1, false);
    world.run_through(MID_RUN_NS, None).expect("runs");
    let mut g = c.benchmark_group("world_state");
    g.sample_size(20).warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1));
    g.bench_with_input(BenchmarkId::new("clone", model.name()), &world, |b, w| b.iter(|| w.clone()));
    g.bench_with_input(BenchmarkId::new("fingerprint", model.name()), &world, |b, w| b.iter(|| w.fingerprint()));
    // With clients renamed canonically where the model has typed fingerprints (else the same
    // as `fingerprint` plus the check that finds it has none).
    let name = format!("{} (symmetry {})", model.name(), if world.symmetry_applies() { "on" } else { "off" });
    g.bench_with_input(BenchmarkId::new("fingerprint_symmetric", name), &world, |b, w| {
        b.iter(|| w.fingerprint_symmetric())
    });
    g.finish();
}

fn world_state(c: &mut Criterion) {
    let text = format!(
        "name = \"bench\"\nduration_ms = 10_000\nseeds = 1\nalgorithms = {MODELS:?}\n\n[workload]\nclients = 10\nhold_ms = {{ uniform = [5, 50] }}\n\n[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 2_000\nduration_ms = 5_000\n"
    );
    let sc = parse_str("bench.toml", &text, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"));
    for run in &sc.runs {
        let (s, p) = (&sc.setup, &run.params);
        match run.model.name() {
            "db" => bench(c, &locksim_algorithms::db::DB, s, p),
            "redis" => bench(c, &locksim_algorithms::redis::REDIS, s, p),
            "redlock" => bench(c, &locksim_algorithms::redlock::REDLOCK, s, p),
            "zookeeper" => bench(c, &locksim_algorithms::zookeeper::ZOOKEEPER, s, p),
            "etcd" => bench(c, &locksim_algorithms::etcd::ETCD, s, p),
            "kubernetes" => bench(c, &locksim_algorithms::kubernetes::KUBERNETES, s, p),
            "postgres" => bench(c, &locksim_algorithms::postgres::POSTGRES, s, p),
            other => panic!("model {other} is not benchmarked: add it here"),
        }
    }
}

criterion_group!(benches, world_state);
criterion_main!(benches);
