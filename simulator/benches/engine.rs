//! Criterion benchmarks of the bare engine: the event queue alone, and the standard engine
//! workload (timers and messages only, no lock model). `sim bench engine` reports the same
//! workload as messages and events per wall-second.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use locksim_simulator::engine::queue::{EventKind, EventQueue};
use locksim_simulator::enginebench::run_engine_workload;

fn queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(100_000));
    g.bench_function("push_pop_100k", |b| {
        b.iter(|| {
            let mut q = EventQueue::default();
            let mut x: u64 = 1;
            for i in 0..100_000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                q.push(i * 1000 + (x >> 54), EventKind::Start { node: 0 });
                if i % 2 == 1 {
                    q.pop();
                }
            }
            while q.pop().is_some() {}
        })
    });
    g.finish();
}

fn engine(c: &mut Criterion) {
    let probe = run_engine_workload(1, 5);
    let mut g = c.benchmark_group("engine_workload");
    g.sample_size(10);
    g.throughput(Throughput::Elements(probe.messages));
    g.bench_function("5_servers_20_clients_5_sim_s", |b| b.iter(|| run_engine_workload(1, 5)));
    g.finish();
}

criterion_group!(benches, queue, engine);
criterion_main!(benches);
