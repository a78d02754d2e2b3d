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
    // A scheduled row's "at most once per period" (a loop row has none, and no line).
    ("double_executions", Judged::Rate, |m| m.double_executions.map(|d| (d > 0) as u8 as f64)),
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

/// The metric column's least width: the longest metric name (`client_messages_per_acquisition`).
const METRIC_WIDTH: usize = 31;

/// A column of a comparison table: its least width (the usual cells fit, so tables of different
/// rows line up with each other) and whether it is left-aligned (the metric names).
struct Column {
    min_width: usize,
    left: bool,
}

/// The lines of a table, each indented by two spaces: every column as wide as its widest cell
/// (and at least its least width), so that a long cell (many live runs, a wide interval) widens
/// its whole column instead of pushing the rest of its own line out of line. Each row is its
/// cells and a free tail (the verdict, or a last column of a different shape).
fn aligned(columns: &[Column], rows: &[(Vec<String>, String)]) -> String {
    let widths: Vec<usize> = columns
        .iter()
        .enumerate()
        .map(|(i, c)| rows.iter().map(|(cells, _)| cells[i].chars().count()).max().unwrap_or(0).max(c.min_width))
        .collect();
    let mut out = String::new();
    for (cells, tail) in rows {
        out.push_str("  ");
        for (i, (cell, width)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                out.push(' ');
            }
            if columns[i].left {
                out.push_str(&format!("{cell:<width$}"));
            } else {
                out.push_str(&format!("{cell:>width$}"));
            }
        }
        out.push_str(tail);
        out.push('\n');
    }
    out
}

/// A right-aligned column of at least `min_width` characters.
const fn right(min_width: usize) -> Column {
    Column { min_width, left: false }
}

/// The metric name column.
const METRIC: Column = Column { min_width: METRIC_WIDTH, left: true };

/// The live side of one metric as a cell: the share and count for a rate, each run's value for
/// a value.
fn live_cell(r: &Compared) -> String {
    match r.judged {
        Judged::Rate => format!(
            "{} ({}/{})",
            num(r.live_value(), r.judged),
            r.live.iter().filter(|v| **v > 0.0).count(),
            r.live.len()
        ),
        Judged::Value => r.live.iter().map(|v| num(*v, r.judged)).collect::<Vec<_>>().join(", "),
    }
}

fn yes_no(agrees: bool) -> &'static str {
    if agrees {
        "yes"
    } else {
        "NO"
    }
}

/// The side-by-side table of one row.
pub fn render(label: &str, sim_runs: usize, live_runs: usize, rows: &[Compared]) -> String {
    let mut out = format!(
        "{label}: simulated {}, live {}\n",
        crate::num::count(sim_runs as u64, "seed"),
        crate::num::count(live_runs as u64, "run")
    );
    let head = ["metric", "simulated", "sim 95% interval", "live (each run)"].map(String::from).to_vec();
    let mut lines = vec![(head, "  live inside?".to_string())];
    for r in rows {
        let interval = format!("[{} – {}]", num(r.sim_lo, r.judged), num(r.sim_hi, r.judged));
        let cells = vec![r.metric.to_string(), num(r.sim_mid, r.judged), interval, live_cell(r)];
        lines.push((cells, format!("  {}", yes_no(r.inside()))));
    }
    out.push_str(&aligned(&[METRIC, right(10), right(22), right(22)], &lines));
    out
}

/// Whether a metric is a verdict (a correctness rate: overlap, stale writes, token
/// regressions) rather than a value (throughput, outage, waits, messages).
pub fn is_verdict(judged: Judged) -> bool {
    judged == Judged::Rate
}

/// What a comparison found, over every live column of every row: the verdicts that differ
/// decide `sim compare`'s exit code; values outside the simulated range are reported only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Agreement {
    /// Verdict metrics whose live side does not agree with the simulated one.
    pub verdicts_differ: usize,
    /// Value metrics with a live run outside the simulated 95% range.
    pub values_outside: usize,
}

impl Agreement {
    /// Counts the disagreements of one live column (`rows`, as [`compare`] gives them).
    pub fn add(&mut self, rows: &[Compared]) {
        self.add_except(rows, &[]);
    }

    /// Counts the disagreements of a reference library's column: the metrics a harness does
    /// not measure ([`NOT_MEASURED_BY_REFERENCE`]) are not judged.
    pub fn add_reference(&mut self, rows: &[Compared]) {
        self.add_except(rows, NOT_MEASURED_BY_REFERENCE);
    }

    fn add_except(&mut self, rows: &[Compared], not_judged: &[&str]) {
        for r in rows.iter().filter(|r| !r.inside() && !not_judged.contains(&r.metric)) {
            if is_verdict(r.judged) {
                self.verdicts_differ += 1;
            } else {
                self.values_outside += 1;
            }
        }
    }

    /// Every verdict agrees (values may still fall outside: a live run's timings are this
    /// machine's, and each is explained in docs/fidelity.md rather than failed).
    pub fn verdicts_agree(&self) -> bool {
        self.verdicts_differ == 0
    }
}

/// Metrics a reference harness does not measure: it counts no wire messages
/// (`reference/PROTOCOL.md`), so its messages per acquisition read 0 and are not judged.
pub const NOT_MEASURED_BY_REFERENCE: &[&str] = &["client_messages_per_acquisition"];

/// One row of `sim compare --reference`: the simulation with the library's preset, the model's
/// recipe live and the real library live.
pub struct ReferenceRow<'a> {
    /// The row's label.
    pub label: &'a str,
    /// The library and version that ran (`redis-py 5.2.1 (PyPI redis==5.2.1)`).
    pub library: &'a str,
    /// The `client` preset the simulation used.
    pub preset: &'a str,
    /// Simulated seeds.
    pub sim_runs: usize,
    /// The recipe's live runs (the model's client code).
    pub recipe_runs: usize,
    /// The library's live runs (the harness).
    pub library_runs: usize,
    /// The simulation with the preset against the library live ([`compare`]).
    pub library_side: &'a [Compared],
    /// The recipe live against the simulation of the row as the recipe ran it: the row as
    /// written ([`compare`]).
    pub recipe: &'a [Compared],
    /// Whether the recipe's simulation differs from the preset's (the preset changed the row):
    /// then its interval is printed in a last column, the one the recipe is judged against.
    pub recipe_sim_differs: bool,
}

/// The table of one row: per metric the simulated value with its 95% interval under the
/// library's preset, the recipe live and whether it agrees, the library live and whether it
/// agrees (with the preset's simulation); when the preset changed the row, a last column with
/// the simulation of the row as written, which the recipe live is judged against. A metric one
/// side did not measure reads `–`.
pub fn render_reference(row: &ReferenceRow) -> String {
    let mut out = format!(
        "{}: {} live against the model with client = \"{}\": simulated {}, recipe live {}, library live {}\n",
        row.label,
        row.library,
        row.preset,
        crate::num::count(row.sim_runs as u64, "seed"),
        crate::num::count(row.recipe_runs as u64, "run"),
        crate::num::count(row.library_runs as u64, "run")
    );
    let last_title = if row.recipe_sim_differs { "  recipe judged against: sim as written" } else { "" };
    let head = ["metric", "simulated", "sim 95% interval", "recipe live", "agrees", "library live", "agrees"];
    let mut lines = vec![(head.map(String::from).to_vec(), last_title.to_string())];
    for (metric, judged, _) in COMPARED {
        let recipe = row.recipe.iter().find(|r| r.metric == *metric);
        let library = row.library_side.iter().find(|r| r.metric == *metric);
        let cell = |side: Option<&Compared>| match side {
            Some(r) => (live_cell(r), yes_no(r.inside()).to_string()),
            None => ("–".to_string(), "–".to_string()),
        };
        let (recipe_cell, recipe_agrees) = cell(recipe);
        let (library_cell, library_agrees) = if NOT_MEASURED_BY_REFERENCE.contains(metric) {
            ("not counted".to_string(), "–".to_string())
        } else {
            cell(library)
        };
        let interval = |r: &Compared| format!("[{} – {}]", num(r.sim_lo, *judged), num(r.sim_hi, *judged));
        let (sim_mid, sim_interval) = match library {
            Some(r) => (num(r.sim_mid, *judged), interval(r)),
            None if recipe.is_none() => continue,
            None => ("–".to_string(), "–".to_string()),
        };
        let last = match recipe {
            Some(r) if row.recipe_sim_differs => format!("  {} {}", num(r.sim_mid, *judged), interval(r)),
            _ => String::new(),
        };
        let cells =
            vec![metric.to_string(), sim_mid, sim_interval, recipe_cell, recipe_agrees, library_cell, library_agrees];
        lines.push((cells, last));
    }
    out.push_str(&aligned(&[METRIC, right(10), right(22), right(22), right(7), right(22), right(7)], &lines));
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

/// How `sim compare` calibrated one row, as its header line says it.
pub struct RowCalibration<'a> {
    /// The row's label.
    pub label: &'a str,
    /// With `--reference`: the library's version, the `client` simulated, and whether the
    /// scenario set that `client` itself.
    pub library: Option<(&'a str, &'a str, bool)>,
    /// The loopback round trip: median, p10, p90 (ms).
    pub rtt_ms: [f64; 3],
    /// The simulated latency's bounds each way (ms).
    pub latency_ms: (f64, f64),
    /// Each request kind probed on a live client's connection and its round trip (ms).
    pub probes: Vec<(&'a str, f64)>,
    /// The parameters the simulation was given from the probes, and their values (ms).
    pub applied: Vec<(&'a str, f64)>,
}

/// A row's header line: `# LABEL: [library …; ]loopback round trip …; simulated latency …`.
pub fn row_header(c: &RowCalibration) -> String {
    let library_text = match c.library {
        None => String::new(),
        Some((version, client, scenario_client)) => format!(
            "library live: {version}; simulated with client = \"{client}\" ({}); recipe live: the model's client code, the row as written{}; ",
            if scenario_client { "the scenario's own client, kept" } else { "the library's preset" },
            if scenario_client { "" } else { ", judged against the row as written simulated" }
        ),
    };
    let [rtt, p10, p90] = c.rtt_ms;
    let (lo_ms, hi_ms) = c.latency_ms;
    format!(
        "# {}: {library_text}loopback round trip {rtt:.3} ms median, {p10:.3}-{p90:.3} ms p10-p90; simulated latency uniform {lo_ms:.3}-{hi_ms:.3} ms each way{}",
        c.label,
        calibration_text(&c.probes, &c.applied)
    )
}

/// What the calibration measured per request kind, and the parameters the simulation was given
/// from it (`applied`).
fn calibration_text(probes: &[(&str, f64)], applied: &[(&str, f64)]) -> String {
    if probes.is_empty() {
        return "; service time not measured for this model (its service_ms default kept)".to_string();
    }
    let kinds: Vec<String> = probes.iter().map(|(what, ms)| format!("{what} {ms:.3} ms")).collect();
    let set: Vec<String> = applied
        .iter()
        .map(|(param, ms)| match *param {
            "fsync_ms" => format!("{param} {ms:.3} (the write less the read and one round trip)"),
            _ => format!("{param} {ms:.3}"),
        })
        .collect();
    format!(
        "; round trips through a live client's connection thread: {}; simulated with {}",
        kinds.join(", "),
        set.join(", ")
    )
}

/// The comparison's closing line: what disagreed, and either the rule (a finished comparison)
/// or, when interrupted, that no agreement is claimed (`compared` of `rows` rows compared; `cut`
/// names the live runs a stop cut short).
pub fn closing_line(agreement: &Agreement, interrupted: Option<(usize, usize, &[String])>) -> String {
    let outside = format!(
        "{} {}, {} outside the simulated interval",
        crate::num::count(agreement.verdicts_differ as u64, "verdict"),
        if agreement.verdicts_differ == 1 { "differs" } else { "differ" },
        crate::num::count(agreement.values_outside as u64, "value")
    );
    match interrupted {
        // A cut comparison claims no agreement: what did not run could disagree.
        Some((compared, rows, cut)) => format!(
            "# interrupted: the comparison is incomplete ({compared} of {rows} rows compared{}); no agreement is claimed. \
In the finished runs: {outside}.\n",
            if cut.is_empty() { String::new() } else { format!("; cut short, not compared: {}", cut.join("; ")) }
        ),
        None => format!(
            "{outside}{}. Rates (the verdicts): the live share's Wilson 95% interval must meet the simulated one; values: every \
live run must fall in the middle 95% of the simulated runs. Exit 1 when a verdict differs.\n",
            if agreement.verdicts_agree() { "; every verdict agrees" } else { "" }
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `double_executions` is a verdict for a scheduled row and absent for a loop row.
    #[test]
    fn double_executions_are_compared_only_for_a_scheduled_row() {
        let run = |d: Option<u64>| {
            let mut m = SeedMetrics::empty(0, 1_000_000_000, false);
            m.double_executions = d;
            m
        };
        let metrics = |c: &[Compared]| c.iter().map(|c| c.metric).collect::<Vec<_>>();
        assert!(!metrics(&compare(&[run(None), run(None)], &[run(None)])).contains(&"double_executions"));
        let c = compare(&[run(Some(0)), run(Some(1))], &[run(Some(2))]);
        let d = c.iter().find(|c| c.metric == "double_executions").expect("compared");
        assert_eq!((d.judged, d.sim_mid, d.live.clone()), (Judged::Rate, 0.5, vec![1.0]));
    }

    fn rate(metric: &'static str, sim_share: f64, sim_runs: u64, live: &[f64]) -> Compared {
        let k = (sim_share * sim_runs as f64).round() as u64;
        let (lo, hi) = wilson95(k, sim_runs).expect("runs");
        Compared { metric, judged: Judged::Rate, sim_mid: sim_share, sim_lo: lo, sim_hi: hi, live: live.to_vec() }
    }

    fn value(metric: &'static str, lo: f64, hi: f64, live: &[f64]) -> Compared {
        Compared {
            metric,
            judged: Judged::Value,
            sim_mid: (lo + hi) / 2.0,
            sim_lo: lo,
            sim_hi: hi,
            live: live.to_vec(),
        }
    }

    #[test]
    fn a_verdict_that_differs_is_counted_apart_from_a_value_outside() {
        // Every simulated seed overlaps; four live runs, none does: the Wilson intervals
        // ([0.84, 1] and [0, 0.49]) do not meet.
        let overlap_differs = rate("overlap", 1.0, 20, &[0.0, 0.0, 0.0, 0.0]);
        assert!(!overlap_differs.inside());
        // One live run of two overlapping when no simulated seed does still meets the interval.
        let overlap_meets = rate("overlap", 0.0, 20, &[1.0, 0.0]);
        assert!(overlap_meets.inside());
        let wait_outside = value("wait_ms_p99", 10.0, 20.0, &[15.0, 25.0]);
        let wait_inside = value("wait_ms_p50", 1.0, 2.0, &[1.0, 2.0]);

        let mut values_only = Agreement::default();
        values_only.add(&[overlap_meets.clone(), wait_outside.clone(), wait_inside.clone()]);
        assert_eq!(values_only, Agreement { verdicts_differ: 0, values_outside: 1 });
        assert!(values_only.verdicts_agree(), "a value outside the range does not fail the comparison");

        let mut with_verdict = Agreement::default();
        with_verdict.add(&[overlap_meets, wait_inside]);
        // A second live column (the reference library) with the differing verdict.
        with_verdict.add(&[overlap_differs, wait_outside]);
        assert_eq!(with_verdict, Agreement { verdicts_differ: 1, values_outside: 1 });
        assert!(!with_verdict.verdicts_agree());
    }

    #[test]
    fn the_reference_table_has_three_columns_and_names_library_and_preset() {
        let recipe = vec![
            rate("overlap", 1.0, 20, &[1.0, 1.0]),
            value("wait_ms_p99", 10.0, 20.0, &[12.0, 13.0]),
            value("client_messages_per_acquisition", 4.0, 5.0, &[4.5, 4.6]),
        ];
        let library = vec![
            rate("overlap", 1.0, 20, &[0.0, 0.0]),
            value("wait_ms_p99", 10.0, 20.0, &[30.0, 13.0]),
            // A harness counts no messages: 0 per acquisition, not judged.
            value("client_messages_per_acquisition", 4.0, 5.0, &[0.0, 0.0]),
        ];
        let text = render_reference(&ReferenceRow {
            label: "redis",
            library: "redis-py 5.2.1",
            preset: "redis-py-5",
            sim_runs: 20,
            recipe_runs: 2,
            library_runs: 2,
            recipe: &recipe,
            library_side: &library,
            recipe_sim_differs: false,
        });
        assert!(
            text.starts_with("redis: redis-py 5.2.1 live against the model with client = \"redis-py-5\""),
            "{text}"
        );
        let line = |metric: &str| text.lines().find(|l| l.trim_start().starts_with(metric)).expect(metric).to_string();
        let overlap: Vec<String> = line("overlap").split_whitespace().map(str::to_string).collect();
        // metric, simulated, interval (3 words), recipe (2), agrees, library (2), agrees
        assert_eq!(overlap[1], "100%");
        assert_eq!(&overlap[5..], ["100%", "(2/2)", "yes", "0%", "(0/2)", "NO"], "{text}");
        let wait = line("wait_ms_p99");
        let wait: Vec<&str> = wait.split_whitespace().collect();
        assert_eq!(&wait[wait.len() - 4..], ["yes", "30.0,", "13.0", "NO"], "{text}");
        let messages = line("client_messages_per_acquisition");
        assert!(messages.contains("not counted"), "{text}");
        // Every row is as wide as the header: the columns line up.
        let widths: Vec<usize> = text.lines().skip(1).map(|l| l.chars().count()).collect();
        assert!(widths.iter().all(|w| *w == widths[0]), "{widths:?}\n{text}");
        // The harness's uncounted messages do not count as a disagreement; its overlap does.
        let mut agreement = Agreement::default();
        agreement.add_reference(&library);
        assert_eq!(agreement, Agreement { verdicts_differ: 1, values_outside: 1 });
    }

    /// When the preset changed the row, the recipe live is judged against the simulation of
    /// the row as written, printed last; the simulated column stays the preset's.
    #[test]
    fn the_recipe_is_judged_against_the_row_as_written() {
        let recipe = vec![rate("token_regressions", 1.0, 20, &[1.0, 1.0])];
        let library = vec![rate("token_regressions", 0.0, 20, &[0.0, 0.0])];
        let text = render_reference(&ReferenceRow {
            label: "redis",
            library: "redis-py 5.2.1",
            preset: "redis-py-5",
            sim_runs: 20,
            recipe_runs: 2,
            library_runs: 2,
            recipe: &recipe,
            library_side: &library,
            recipe_sim_differs: true,
        });
        assert!(text.lines().nth(1).unwrap().ends_with("recipe judged against: sim as written"), "{text}");
        let line = text.lines().find(|l| l.trim_start().starts_with("token_regressions")).unwrap();
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[1], "0%", "the simulated column is the preset's: {text}");
        assert_eq!(&words[5..], ["100%", "(2/2)", "yes", "0%", "(0/2)", "yes", "100%", "[84%", "–", "100%]"], "{text}");
    }

    #[test]
    fn the_plain_table_aligns_the_longest_metric_name() {
        let rows = vec![
            value("client_messages_per_acquisition", 4.0, 5.0, &[4.5, 4.6]),
            value("wait_ms_p99", 10.0, 20.0, &[12.0, 13.0]),
        ];
        let text = render("etcd", 20, 2, &rows);
        // The verdict column ("live inside?", "yes") starts at the same character in every line.
        let starts: Vec<usize> = text
            .lines()
            .skip(1)
            .map(|l| l[..l.rfind("  ").expect("two spaces before the verdict")].chars().count())
            .collect();
        assert!(starts.len() == 3 && starts.iter().all(|s| *s == starts[0]), "{starts:?}\n{text}");
    }

    /// Many live runs make a cell wider than its column's usual width: the whole column widens,
    /// so `client_messages_per_acquisition`'s verdict still lines up with the others.
    #[test]
    fn a_long_live_cell_widens_its_column_not_its_line() {
        let runs = [4.51, 4.62, 4.73, 4.84, 4.95, 4.66];
        let rows = vec![
            rate("overlap", 0.0, 20, &[0.0; 6]),
            value("wait_ms_p99", 10.0, 20.0, &[12.0; 6]),
            value("client_messages_per_acquisition", 4.0, 5.0, &runs),
        ];
        let text = render("etcd", 20, 6, &rows);
        assert!(text.contains("4.510, 4.620, 4.730, 4.840, 4.950, 4.660"), "{text}");
        let ends: Vec<usize> = text
            .lines()
            .skip(1)
            .map(|l| l[..l.rfind("  ").expect("two spaces before the verdict")].chars().count())
            .collect();
        assert!(ends.len() == 4 && ends.iter().all(|e| *e == ends[0]), "{ends:?}\n{text}");
        let text = render_reference(&ReferenceRow {
            label: "etcd",
            library: "clientv3 3.4.23",
            preset: "clientv3-3.4",
            sim_runs: 20,
            recipe_runs: 6,
            library_runs: 6,
            recipe: &rows,
            library_side: &rows,
            recipe_sim_differs: false,
        });
        let widths: Vec<usize> = text.lines().skip(1).map(|l| l.chars().count()).collect();
        assert!(widths.len() == 4 && widths.iter().all(|w| *w == widths[0]), "{widths:?}\n{text}");
    }

    #[test]
    fn a_reference_column_leaves_out_what_a_harness_does_not_count() {
        assert!(NOT_MEASURED_BY_REFERENCE.iter().all(|m| COMPARED.iter().any(|(c, _, _)| c == m)));
    }
}
