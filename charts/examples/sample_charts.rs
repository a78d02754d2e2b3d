//! Renders every chart from made-up but realistic data, to look at them:
//! `cargo run -p locksim-charts --example sample_charts -- /tmp/charts-sample`.

use std::path::PathBuf;

use locksim_charts::{
    cost_chart, latency_cdf_chart, sweep_chart, throughput_chart, timeline_chart, violations_chart, AlgorithmChartData,
    ChartError, FaultWindow, FencedRate, Hold, Interval95, Lane, Span, SweepChart, SweepPoint, SweepSeries,
    TimelineChart, TimelinePanel,
};

/// A small deterministic generator (no global randomness in this project).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A log-normal-ish CDF with median `p50` ms and spread `s`, and a tail up to `max`.
fn cdf(p50: f64, s: f64, max: f64) -> Vec<(f64, f64)> {
    let mut points: Vec<(f64, f64)> = (1..200)
        .map(|i| {
            let q = f64::from(i) / 200.0;
            let z = libm::log(q / (1.0 - q)) * 0.6;
            ((p50 * libm::exp(s * z)).min(max), q)
        })
        .collect();
    points.push((max, 1.0));
    points
}

fn iv(rate: f64, lo: f64, hi: f64) -> Option<Interval95> {
    Some(Interval95 { rate, lo, hi })
}

fn algorithms() -> Vec<AlgorithmChartData> {
    let zero = iv(0.0, 0.0, 0.015);
    vec![
        AlgorithmChartData {
            label: "db".into(),
            runs: 200,
            throughput_per_s: Some(13.7),
            latency_cdf_ms: cdf(4.75, 1.6, 3494.0),
            overlap: zero,
            stale_unfenced: zero,
            stale_fenced: FencedRate::Rate(zero),
            messages_per_acquisition: Some(16.1),
            notifications_per_release: Some(0.0),
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        },
        AlgorithmChartData {
            label: "redis".into(),
            runs: 200,
            throughput_per_s: Some(14.9),
            latency_cdf_ms: cdf(0.971, 2.0, 3951.0),
            overlap: iv(0.037, 0.027, 0.051),
            stale_unfenced: iv(0.03, 0.02, 0.045),
            stale_fenced: FencedRate::Rate(iv(0.004, 0.001, 0.012)),
            messages_per_acquisition: Some(13.4),
            notifications_per_release: Some(0.0),
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        },
        AlgorithmChartData {
            label: "redlock".into(),
            runs: 200,
            throughput_per_s: Some(20.8),
            latency_cdf_ms: cdf(94.7, 0.5, 716.0),
            overlap: iv(0.12, 0.08, 0.17),
            stale_unfenced: iv(0.1, 0.065, 0.15),
            stale_fenced: FencedRate::CannotBeFenced,
            messages_per_acquisition: Some(99.2),
            notifications_per_release: None,
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        },
        AlgorithmChartData {
            label: "zookeeper".into(),
            runs: 200,
            throughput_per_s: Some(18.0),
            latency_cdf_ms: cdf(263.0, 0.8, 2224.0),
            overlap: zero,
            stale_unfenced: zero,
            stale_fenced: FencedRate::Rate(zero),
            messages_per_acquisition: Some(36.7),
            notifications_per_release: Some(0.996),
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        },
        AlgorithmChartData {
            label: "etcd".into(),
            runs: 200,
            throughput_per_s: Some(17.7),
            latency_cdf_ms: cdf(286.0, 0.15, 390.0),
            overlap: zero,
            stale_unfenced: zero,
            stale_fenced: FencedRate::Rate(zero),
            messages_per_acquisition: Some(51.4),
            notifications_per_release: Some(1.0),
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        },
        AlgorithmChartData {
            label: "suspended".into(),
            runs: 10,
            throughput_per_s: None,
            latency_cdf_ms: Vec::new(),
            overlap: iv(1.0, 0.72, 1.0),
            stale_unfenced: iv(1.0, 0.72, 1.0),
            stale_fenced: FencedRate::Rate(iv(0.0, 0.0, 0.28)),
            messages_per_acquisition: Some(37.1),
            notifications_per_release: Some(1.0),
            outage_ms_mean: None,
            outage_ms_max: None,
            fairness: None,
        },
    ]
}

/// A panel of `clients` lanes, each cycling wait → hold → think for `duration_ms`.
fn panel(label: &str, seed: u64, clients: usize, duration_ms: f64, hold_ms: f64, rng: &mut Lcg) -> TimelinePanel {
    let lanes = (0..clients)
        .map(|c| {
            let mut lane = Lane { name: format!("client-{c}"), ..Lane::default() };
            let mut t = rng.next() * hold_ms * 4.0;
            while t < duration_ms {
                let wait = rng.next() * hold_ms * 3.0;
                let hold = hold_ms * (0.5 + rng.next());
                lane.waiting.push(Span::new(t, t + wait));
                lane.holding.push(Hold { span: Span::new(t + wait, t + wait + hold), shared: c % 4 == 3 });
                t += wait + hold + rng.next() * hold_ms * 6.0;
            }
            lane
        })
        .collect();
    TimelinePanel { label: label.into(), seed, lanes, ..TimelinePanel::default() }
}

fn fault(kind: &str, targets: &str, start_ms: f64, end_ms: f64) -> FaultWindow {
    FaultWindow { kind: kind.into(), targets: targets.into(), span: Span::new(start_ms, end_ms) }
}

fn timeline() -> TimelineChart {
    let mut rng = Lcg(7);
    let mut db = panel("db", 3, 6, 60_000.0, 400.0, &mut rng);
    db.faults = vec![fault("crash", "primary", 12_000.0, 32_000.0)];
    let mut redlock = panel("redlock", 3, 6, 60_000.0, 300.0, &mut rng);
    redlock.faults = vec![
        fault("crash", "server-0", 12_000.0, 32_000.0),
        fault("pause", "client-1", 20_000.0, 27_000.0),
        fault("clock_jump", "server-2 +10 s", 40_000.0, 40_000.0),
        fault("partition", "client-4 | rest", 45_000.0, 50_000.0),
    ];
    redlock.overlaps = vec![Span::new(27_000.0, 27_400.0), Span::new(40_050.0, 40_060.0)];
    let mut zk = panel("zookeeper", 3, 6, 60_000.0, 500.0, &mut rng);
    zk.faults = vec![fault("crash", "leader", 12_000.0, 32_000.0), fault("slow", "all links", 50_000.0, 58_000.0)];
    TimelineChart {
        title: "failover, seed 3: who held the lock when".into(),
        duration_ms: 60_000.0,
        panels: vec![db, redlock, zk],
    }
}

fn sweep(log_y: bool) -> SweepChart {
    let ttls = [1000.0, 2000.0, 5000.0, 10_000.0, 20_000.0, 30_000.0];
    let series = [("redis", 0.2, 1.0), ("redlock", 0.35, 1.3), ("zookeeper", 0.0, 1.0)]
        .into_iter()
        .map(|(label, base, k)| SweepSeries {
            label: label.into(),
            points: ttls
                .iter()
                .enumerate()
                .map(|(i, &x)| {
                    let y = base / (1.0 + i as f64 * k);
                    SweepPoint {
                        x,
                        y: if label == "redlock" && i == 3 { None } else { Some(y) },
                        band: Some(((y * 0.6 - 0.01).max(0.0), (y * 1.5 + 0.015).min(1.0))),
                    }
                })
                .collect(),
        })
        .collect();
    SweepChart {
        title: format!("overlap rate against lease TTL{}", if log_y { " (log scale)" } else { "" }),
        x_label: "lease TTL (ms)".into(),
        y_label: "runs with overlap (fraction)".into(),
        log_y,
        series,
    }
}

fn main() -> Result<(), ChartError> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "/tmp/charts-sample".into()));
    let algs = algorithms();
    let title = "failover: 200 seeds of 60 s";
    for files in [
        throughput_chart(&dir, "throughput", title, &algs)?,
        latency_cdf_chart(&dir, "latency-cdf", title, &algs)?,
        violations_chart(&dir, "violations", title, &algs)?,
        cost_chart(&dir, "cost", title, &algs)?,
        timeline_chart(&dir, "timeline", &timeline())?,
        sweep_chart(&dir, "sweep", &sweep(false))?,
        sweep_chart(&dir, "sweep-log", &sweep(true))?,
    ] {
        println!("{}  {}", files.svg.display(), files.png.display());
    }
    Ok(())
}
