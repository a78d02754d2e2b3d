//! Criterion benchmarks of each lock model's hot path: one seed of each model running the shared
//! workload (10 clients on one lock, hold 5–50 ms, default network), 10 simulated seconds, no
//! faults, and the same with the failover scenario's crash of the leader (or Redlock's
//! `server-0`) at 2 s for 5 s. One iteration is one whole seed: build the cluster, run the
//! engine, check the history, as `sim run` does per seed. `sim bench scenario FILE` gives the
//! same kind of figure in simulated seconds per wall-second.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use locksim_simulator::run::RunOptions;
use locksim_simulator::scenario::{parse_str, Scenario};

const MODELS: [&str; 5] = ["db", "redis", "redlock", "zookeeper", "etcd"];
const SIMULATED_S: u64 = 10;

fn scenario(faults: bool) -> Scenario {
    let mut text = format!(
        "name = \"bench\"\nduration_ms = {}\nseeds = 1\nalgorithms = {:?}\n\n[workload]\nclients = 10\nhold_ms = {{ uniform = [5, 50] }}\n",
        SIMULATED_S * 1000,
        MODELS
    );
    if faults {
        text.push_str("\n[[faults]]\nkind = \"crash\"\ntarget = \"leader\"\nat_ms = 2_000\nduration_ms = 5_000\n");
    }
    parse_str("bench.toml", &text, &locksim_algorithms::registry()).unwrap_or_else(|e| panic!("{e}"))
}

fn models(c: &mut Criterion) {
    for (group, faults) in [("model_seed_no_faults", false), ("model_seed_leader_crash", true)] {
        let sc = scenario(faults);
        let mut g = c.benchmark_group(group);
        g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
        // Throughput in simulated seconds: criterion's "elem/s" reads as simulated s per wall s.
        g.throughput(Throughput::Elements(SIMULATED_S));
        for run in &sc.runs {
            g.bench_with_input(BenchmarkId::from_parameter(&run.label), run, |b, run| {
                b.iter(|| run.model.run_seed(&sc.setup, &run.params, 1, &RunOptions::default()).events)
            });
        }
        g.finish();
    }
}

criterion_group!(benches, models);
criterion_main!(benches);
