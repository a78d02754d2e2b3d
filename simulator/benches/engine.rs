//! Criterion benchmarks of the bare engine: the event queue alone (a run's steady state, and a
//! queue grown to 50 000 events), and the standard engine workload (timers and messages only, no
//! lock model). `sim bench engine` reports the same workload as messages and events per
//! wall-second. The draws: a link's log-normal latency as the network takes it, and `exp` alone,
//! ours against libm's. The models' benchmarks are in `algorithms/benches/models.rs`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use locksim_simulator::dist::{Dist, Sampler};
use locksim_simulator::engine::queue::{EventKind, EventQueue};
use locksim_simulator::enginebench::run_engine_workload;
use locksim_simulator::portable;
use locksim_simulator::rng::stream;

fn queue(c: &mut Criterion) {
    let mut g = c.benchmark_group("event_queue");
    g.throughput(Throughput::Elements(100_000));
    g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    // What a run does: a queue of about 50 events (a timer per node, messages in flight); each
    // step pops the next event and schedules one, mostly a message 0.1-2 ms ahead, sometimes a
    // timer up to 1 s ahead.
    g.bench_function("steady_50_100k", |b| {
        b.iter(|| {
            let mut q: EventQueue<()> = EventQueue::default();
            let mut x: u64 = 1;
            for i in 0..50u64 {
                q.push(i * 20_000_000, EventKind::Start { node: 0 });
            }
            for _ in 0..100_000u64 {
                let now = q.pop().expect("never empty").at_ns;
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let delay = if x >> 61 == 0 { x >> 34 } else { 100_000 + (x >> 43) };
                q.push(now + delay, EventKind::Start { node: 0 });
            }
            q.len()
        })
    });
    // A queue that grows to 50 000 events (the heap order) and drains.
    g.bench_function("push_pop_100k", |b| {
        b.iter(|| {
            let mut q: EventQueue<()> = EventQueue::default();
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
    g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    g.throughput(Throughput::Elements(probe.messages));
    g.bench_function("5_servers_20_clients_5_sim_s", |b| b.iter(|| run_engine_workload(1, 5)));
    g.finish();
}

fn draws(c: &mut Criterion) {
    let mut g = c.benchmark_group("draws");
    g.throughput(Throughput::Elements(10_000));
    g.warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    // The default link latency, drawn as `Network::route` draws it.
    let latency = Sampler::new(&Dist::LogNormal { median: 0.25, p99: 1.0 });
    g.bench_function("lognormal_latency_ns_10k", |b| {
        let mut rng = stream(1, "bench", "draws");
        b.iter(|| (0..10_000).map(|_| latency.sample_ns(&mut rng)).fold(0u64, u64::wrapping_add))
    });
    // Arguments as a latency draw's: ln(0.25 ms) plus a few standard deviations. Each call waits
    // for the one before (as a draw's rounding and the queue push wait for its exp), so this is
    // latency, not throughput.
    let args: Vec<f64> = (0..10_000).map(|i| -1.386 + (i % 200) as f64 * 0.02 - 2.0).collect();
    g.bench_function("portable_exp_10k", |b| {
        b.iter(|| args.iter().fold(0.0, |acc, x| acc * 1e-300 + portable::exp(*x + acc * 1e-300)))
    });
    g.bench_function("libm_exp_10k", |b| {
        b.iter(|| args.iter().fold(0.0, |acc, x| acc * 1e-300 + libm::exp(*x + acc * 1e-300)))
    });
    g.finish();
}

criterion_group!(benches, queue, engine, draws);
criterion_main!(benches);
