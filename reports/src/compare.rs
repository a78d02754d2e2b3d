//! `sim compare`: the same row simulated over many seeds and run live a few times, metric by
//! metric. For a rate (runs with a violation) the simulated side is the Wilson 95% interval of
//! its rate; for a value (throughput, unavailability, wait and latency percentiles, messages per
//! acquisition) it is the range that holds the middle 95% of the simulated runs. Each live run's
//! value is then inside or outside it.

use locksim_simulator::checker::SeedMetrics;

use crate::wilson::wilson95;

/// How a metric is judged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Judged {
    /// A share of runs (0 or 1 per run).
    Rate,
    /// A number per run.
    Value,
}

/// One metric of one row, both sides.
#[derive(Clone, Debug, PartialEq)]
pub struct Compared {
    /// The metric's name (as in `[expect]`).
    pub metric: &'static str,
    /// Rate or value.
    pub judged: Judged,
    /// The simulated median (a rate: the simulated share).
    pub sim_mid: f64,
    /// The simulated interval's low end.
    pub sim_lo: f64,
    /// The simulated interval's high end.
    pub sim_hi: f64,
    /// Each live run's value (a rate: 0 or 1), in seed order.
    pub live: Vec<f64>,
}

impl Compared {
    /// The live side's summary: the share for a rate, the median run for a value.
    pub fn live_value(&self) -> f64 {
        match self.judged {
            Judged::Rate => self.live.iter().sum::<f64>() / self.live.len().max(1) as f64,
            Judged::Value => median(&self.live),
        }
    }

    /// Whether the live side agrees with the simulated interval: for a rate, the live share's
    /// own Wilson interval meets the simulated one; for a value, every live run is inside the
    /// simulated range.
    pub fn inside(&self) -> bool {
        match self.judged {
            Judged::Rate => {
                let k = self.live.iter().filter(|v| **v > 0.0).count() as u64;
                match wilson95(k, self.live.len() as u64) {
                    Some((lo, hi)) => hi >= self.sim_lo && lo <= self.sim_hi,
                    None => true,
                }
            }
            Judged::Value => self.live.iter().all(|v| *v >= self.sim_lo - 1e-9 && *v <= self.sim_hi + 1e-9),
        }
    }
}

fn median(v: &[f64]) -> f64 {
    quantile(v, 0.5)
}

/// The `q` quantile of `v` (nearest rank on the sorted values); NaN when empty.
fn quantile(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let i = ((s.len() - 1) as f64 * q).round() as usize;
    s[i]
}

fn hist_ms(h: &hdrhistogram::Histogram<u64>, q: f64) -> Option<f64> {
    (!h.is_empty()).then(|| h.value_at_quantile(q) as f64 / 1000.0)
}

type PerRun = fn(&SeedMetrics) -> Option<f64>;

/// The metrics compared, with how to read each from one run.
pub const COMPARED: &[(&str, Judged, PerRun)] = &[
    ("overlap", Judged::Rate, |m| Some((m.overlap_events > 0) as u8 as f64)),
    ("stale_unfenced", Judged::Rate, |m| Some((m.stale_unfenced_events > 0) as u8 as f64)),
    ("token_regressions", Judged::Rate, |m| Some((m.token_regressions > 0) as u8 as f64)),
    ("throughput_per_s", Judged::Value, |m| Some(m.completed_sections as f64 / (m.duration_ns as f64 / 1e9).max(1e-9))),
    ("unavailable_ms", Judged::Value, |m| Some(m.unavailable_ns as f64 / 1e6)),
    ("wait_ms_p50", Judged::Value, |m| hist_ms(&m.wait_us, 0.5)),
    ("wait_ms_p99", Judged::Value, |m| hist_ms(&m.wait_us, 0.99)),
    ("acquire_latency_ms_p50", Judged::Value, |m| hist_ms(&m.acquire_latency_us, 0.5)),
    ("acquire_latency_ms_p99", Judged::Value, |m| hist_ms(&m.acquire_latency_us, 0.99)),
    // A client's messages only: a live run sees what its clients send and receive, not the
    // servers' traffic among themselves (Raft, ZAB, replication), which the simulation also counts.
    ("client_messages_per_acquisition", Judged::Value, |m| {
        (m.acquisitions > 0).then(|| m.client_messages as f64 / m.acquisitions as f64)
    }),
];

/// Every compared metric of one row: `sim` over many seeds, `live` over a few runs.
pub fn compare(sim: &[SeedMetrics], live: &[SeedMetrics]) -> Vec<Compared> {
    COMPARED
        .iter()
        .filter_map(|(metric, judged, read)| {
            let s: Vec<f64> = sim.iter().filter_map(read).collect();
            let l: Vec<f64> = live.iter().filter_map(read).collect();
            if s.is_empty() || l.is_empty() {
                return None;
            }
            let (mid, lo, hi) = match judged {
                Judged::Rate => {
                    let k = s.iter().filter(|v| **v > 0.0).count() as u64;
                    let (lo, hi) = wilson95(k, s.len() as u64)?;
                    (k as f64 / s.len() as f64, lo, hi)
                }
                Judged::Value => (median(&s), quantile(&s, 0.025), quantile(&s, 0.975)),
            };
            Some(Compared { metric, judged: *judged, sim_mid: mid, sim_lo: lo, sim_hi: hi, live: l })
        })
        .collect()
}

fn num(v: f64, judged: Judged) -> String {
    match judged {
        Judged::Rate => format!("{:.0}%", v * 100.0),
        Judged::Value if v.abs() >= 100.0 => format!("{v:.0}"),
        Judged::Value if v.abs() >= 10.0 => format!("{v:.1}"),
        Judged::Value => format!("{v:.3}"),
    }
}

/// The side-by-side table of one row.
pub fn render(label: &str, sim_runs: usize, live_runs: usize, rows: &[Compared]) -> String {
    let mut out = format!("{label}: simulated {sim_runs} seeds, live {live_runs} run(s)\n");
    out.push_str(&format!(
        "  {:<26} {:>10} {:>22} {:>22}  {}\n",
        "metric", "simulated", "sim 95% interval", "live (each run)", "live inside?"
    ));
    for r in rows {
        let interval = format!("[{} – {}]", num(r.sim_lo, r.judged), num(r.sim_hi, r.judged));
        let live = match r.judged {
            Judged::Rate => format!(
                "{} ({}/{})",
                num(r.live_value(), r.judged),
                r.live.iter().filter(|v| **v > 0.0).count(),
                r.live.len()
            ),
            Judged::Value => r.live.iter().map(|v| num(*v, r.judged)).collect::<Vec<_>>().join(", "),
        };
        out.push_str(&format!(
            "  {:<26} {:>10} {:>22} {:>22}  {}\n",
            r.metric,
            num(r.sim_mid, r.judged),
            interval,
            live,
            if r.inside() { "yes" } else { "NO" }
        ));
    }
    out
}

/// One row of a comparison, for the report.
pub struct ComparedRow {
    /// The row's label.
    pub label: String,
    /// The calibration line printed above its table.
    pub header: String,
    /// Simulated seeds run.
    pub sim_runs: usize,
    /// Live runs.
    pub live_runs: usize,
    /// The metrics compared.
    pub metrics: Vec<Compared>,
}

/// Writes `DIR/index.html` (each row's calibration, table and chart) and one chart per row
/// (`compare-LABEL.svg` and `.png`); returns the page's path.
pub fn write_compare_report(
    dir: &std::path::Path,
    file: &str,
    rows: &[ComparedRow],
) -> Result<std::path::PathBuf, String> {
    use crate::report::html::escape;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut body = String::new();
    for row in rows {
        let chart = locksim_charts::CompareChart {
            title: format!("{}: live against simulated ({} seeds)", row.label, row.sim_runs),
            metrics: row
                .metrics
                .iter()
                .filter(|m| m.judged == Judged::Value)
                .map(|m| locksim_charts::CompareMetric {
                    metric: m.metric.to_string(),
                    sim_mid: m.sim_mid,
                    sim_lo: m.sim_lo,
                    sim_hi: m.sim_hi,
                    live: m.live.clone(),
                    inside: m.inside(),
                })
                .collect(),
        };
        let name = format!("compare-{}", locksim_simulator::scenario::file_names::label_file_part(&row.label));
        let files = locksim_charts::compare_chart(dir, &name, &chart).map_err(|e| e.to_string())?;
        let svg = files.svg.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        body.push_str(&format!(
            "<h2>{}</h2>\n<p>{}</p>\n<pre>{}</pre>\n<img src=\"{}\" alt=\"{} compared\" width=\"1000\">\n",
            escape(&row.label),
            escape(&row.header),
            escape(&render(&row.label, row.sim_runs, row.live_runs, &row.metrics)),
            escape(&svg),
            escape(&row.label)
        ));
    }
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>sim compare: {f}</title>\
<style>body{{font-family:sans-serif;max-width:1040px;margin:2em auto;color:#222}}pre{{background:#f6f6f6;padding:.6em;overflow-x:auto}}</style></head>\n\
<body><h1>Simulated and live: {f}</h1>\n<p>Rates: the live share's Wilson 95% interval must meet the simulated one. Values: every live run must fall in the middle 95% of the simulated runs.</p>\n{body}</body></html>\n",
        f = escape(file)
    );
    let index = dir.join("index.html");
    crate::write_atomic(&index, page).map_err(|e| format!("cannot write {}: {e}", index.display()))?;
    Ok(index)
}
