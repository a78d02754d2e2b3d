//! What a sweep writes into its `--out` directory: `sweep.csv` (one row per point and algorithm),
//! `sweep.json` (each point's row summaries, or with `--full` its results JSON rows),
//! `sweep.parquet` (the CSV's rows with typed columns, [`crate::sweep::table_parquet`]), one
//! chart per metric against the first swept parameter (`NAME.svg` and `NAME.png`), and, for
//! points with a failing seed, the point's scenario (`points/point-N.toml`) so its replay command
//! reproduces it. Only these files are written or replaced; nothing else in the directory is
//! touched.
//!
//! Numbers come from the results JSON rows ([`AlgorithmJson`]), already rounded by
//! [`crate::num`], and are written with Rust's shortest round-trip formatting, so the
//! files are byte-stable. A value with no data is an empty CSV cell or `null`, never 0.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use locksim_charts::{sweep_chart, SweepChart, SweepPoint, SweepSeries};
use serde::ser::SerializeMap;
use serde::{Serialize, Serializer};

use crate::json::{replay_command, ResultsJson, SeedRange};
use crate::sweep::path::Point;
use crate::sweep::rows::SummaryRow;
use crate::sweep::values::{describe_point, SweepParam, SweepValue};
use crate::{AlgorithmJson, AlgorithmTotals};

/// The results of one point.
pub struct PointResults {
    /// The parameters' values, in `--param` order.
    pub values: Vec<SweepValue>,
    /// One results row per algorithm or variant run.
    pub rows: Vec<AlgorithmJson>,
    /// Every seed of every row ran (false for the point a Ctrl-C stopped).
    pub complete: bool,
    /// The point's scenario, written for the replay commands of a point with failing seeds.
    pub scenario_file: Option<String>,
}

fn write(path: &Path, text: &str) -> Result<PathBuf, String> {
    locksim_charts::write_atomic(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path.to_path_buf())
}

/// Writes a point's scenario text as `DIR/points/point-N.toml`; returns the path.
pub fn write_point_scenario(dir: &Path, index: usize, header: &str, text: &str) -> Result<PathBuf, String> {
    let points = dir.join("points");
    std::fs::create_dir_all(&points).map_err(|e| format!("cannot create {}: {e}", points.display()))?;
    write(&points.join(format!("point-{index}.toml")), &format!("{header}{text}"))
}

/// The results of point number `index` from its rows' totals. When a row has a failing seed, the
/// point's scenario (its text, headed by a comment naming the scenario file and the point's
/// `--param`s) is written as `DIR/points/point-N.toml` and the rows' replay commands name it: the
/// original file would not reproduce them. `complete` is false for the point a Ctrl-C stopped.
pub fn point_results(
    dir: &Path,
    index: usize,
    point: &Point,
    params: &[SweepParam],
    seeds: Range<u64>,
    totals: &[AlgorithmTotals],
    complete: bool,
) -> Result<PointResults, String> {
    let mut rows = ResultsJson::from_scenario(&point.scenario, seeds, totals, Vec::new()).algorithms;
    let mut scenario_file = None;
    if rows.iter().any(|r| r.replay.is_some()) {
        let file = point.scenario.file.display();
        let header = format!("# sim sweep: {file} with {}\n", describe_point(params, &point.values));
        let path = write_point_scenario(dir, index, &header, &point.text)?;
        let shown = path.display().to_string();
        for (row, t) in rows.iter_mut().zip(totals) {
            row.replay = t.first_failing_seed().map(|s| replay_command(&shown, &row.label, s));
        }
        scenario_file = Some(shown);
    }
    Ok(PointResults { values: point.values.clone(), rows, complete, scenario_file })
}

/// A CSV cell: quoted when it holds a comma, a quote or a line break.
fn cell(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV columns after the parameters'.
pub const CSV_COLUMNS: &[&str] = &[
    "label",
    "runs",
    "overlap_runs",
    "overlap_rate",
    "overlap_ci95_lo",
    "overlap_ci95_hi",
    "stale_unfenced_rate",
    "stale_unfenced_ci95_lo",
    "stale_unfenced_ci95_hi",
    "stale_fenced_rate",
    "stale_fenced_ci95_lo",
    "stale_fenced_ci95_hi",
    "lost_updates",
    "throughput_per_s",
    "acquire_latency_ms_p50",
    "acquire_latency_ms_p99",
    "unavailable_ms",
    "messages_per_acquisition",
    "notifications_per_release",
    "failing_seeds",
    "double_executions_runs",
    "double_executions_rate",
    "double_executions_ci95_lo",
    "double_executions_ci95_hi",
];

/// `sweep.csv`: a header, then one row per point and algorithm.
pub fn csv(params: &[SweepParam], points: &[PointResults]) -> String {
    let mut header: Vec<String> = params.iter().map(|p| cell(&p.key)).collect();
    header.extend(CSV_COLUMNS.iter().map(|c| c.to_string()));
    let mut out = header.join(",");
    out.push('\n');
    for point in points {
        for a in &point.rows {
            let summary = SummaryRow::of(a);
            let mut row: Vec<String> = point.values.iter().map(|v| cell(&v.to_string())).collect();
            row.push(cell(&summary.label));
            row.extend(summary.numbers().iter().map(|(_, n)| n.cell()));
            row.push(summary.failing_seeds_text());
            row.extend(summary.appended_numbers().iter().map(|(_, n)| n.cell()));
            out.push_str(&row.join(","));
            out.push('\n');
        }
    }
    out
}

/// A point's parameter values as a JSON object in `--param` order.
struct Values<'a>(&'a [SweepParam], &'a [SweepValue]);

impl Serialize for Values<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (p, v) in self.0.iter().zip(self.1) {
            map.serialize_entry(&p.key, &v.to_json())?;
        }
        map.end()
    }
}

#[derive(Serialize)]
struct ParamJson<'a> {
    key: &'a str,
    values: Vec<serde_json::Value>,
}

#[derive(Serialize)]
struct PointJson<'a> {
    values: Values<'a>,
    /// `--full`: the point's results JSON rows.
    #[serde(skip_serializing_if = "Option::is_none")]
    results: Option<&'a [AlgorithmJson]>,
    /// The default: each row's [`SummaryRow`].
    #[serde(skip_serializing_if = "Option::is_none")]
    rows: Option<Vec<SummaryRow>>,
    complete: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    scenario_file: Option<&'a str>,
}

#[derive(Serialize)]
struct SweepJson<'a> {
    scenario: &'a str,
    file: &'a str,
    seeds: SeedRange,
    params: Vec<ParamJson<'a>>,
    points: Vec<PointJson<'a>>,
    interrupted: bool,
}

/// `sweep.json`, compact (one line) with a trailing newline: it grows with the points, and pretty
/// printing made it 60% larger (`jq .` prints it indented). Each point holds its rows' summaries
/// (`rows`: the CSV's fields), or with `full` its whole results JSON rows (`results`).
pub fn json(
    scenario: &str,
    file: &str,
    seeds: SeedRange,
    params: &[SweepParam],
    points: &[PointResults],
    interrupted: bool,
    full: bool,
) -> String {
    let doc = SweepJson {
        scenario,
        file,
        seeds,
        params: params
            .iter()
            .map(|p| ParamJson { key: &p.key, values: p.values.iter().map(SweepValue::to_json).collect() })
            .collect(),
        points: points
            .iter()
            .map(|p| PointJson {
                values: Values(params, &p.values),
                results: full.then_some(p.rows.as_slice()),
                rows: (!full).then(|| p.rows.iter().map(SummaryRow::of).collect()),
                complete: p.complete,
                scenario_file: p.scenario_file.as_deref(),
            })
            .collect(),
        interrupted,
    };
    let mut s = serde_json::to_string(&doc).expect("the sweep serialises");
    s.push('\n');
    s
}

/// A metric's value in a results row, with its 95% interval where it has one.
type Reading = (Option<f64>, Option<(f64, f64)>);

/// A charted metric: its file name, title, axis label, and how to read it from a results row.
struct Metric {
    name: &'static str,
    title: &'static str,
    y_label: &'static str,
    value: fn(&AlgorithmJson) -> Reading,
}

fn band(c: Option<[f64; 2]>) -> Option<(f64, f64)> {
    c.map(|[lo, hi]| (lo, hi))
}

const METRICS: &[Metric] = &[
    Metric {
        name: "overlap_rate",
        title: "runs with overlapping holders",
        y_label: "fraction of runs with overlap (95% interval)",
        value: |a| (a.overlap.rate, band(a.overlap.ci95)),
    },
    Metric {
        name: "stale_unfenced_rate",
        title: "runs with a stale write accepted by the unfenced resource",
        y_label: "fraction of runs (95% interval)",
        value: |a| (a.stale_unfenced.rate, band(a.stale_unfenced.ci95)),
    },
    Metric {
        name: "stale_fenced_rate",
        title: "runs with a stale write accepted by the fenced resource",
        y_label: "fraction of runs (95% interval)",
        value: |a| match &a.stale_fenced {
            Some(c) => (c.rate, band(c.ci95)),
            None => (None, None),
        },
    },
    Metric {
        name: "throughput_per_s",
        title: "throughput",
        y_label: "critical sections per simulated second",
        value: |a| (a.throughput_per_s, None),
    },
    Metric {
        name: "acquire_latency_ms_p99",
        title: "acquire latency, 99th percentile",
        y_label: "acquire latency p99 (ms)",
        value: |a| (a.acquire_latency_ms.map(|l| l.p99), None),
    },
    Metric {
        name: "messages_per_acquisition",
        title: "messages per acquisition",
        y_label: "messages per successful acquisition",
        value: |a| (a.messages_per_acquisition, None),
    },
    Metric {
        name: "notifications_per_release",
        title: "wake-ups per release (herd effect)",
        y_label: "notifications per release",
        value: |a| (a.notifications_per_release, None),
    },
];

/// Drawn only when some row ran a scheduled workload, so other sweeps' files stay as they were.
const DOUBLE_EXECUTIONS: Metric = Metric {
    name: "double_executions_rate",
    title: "runs in which the scheduled job ran twice in one period",
    y_label: "fraction of runs with a double execution (95% interval)",
    value: |a| match &a.double_executions {
        Some(c) => (c.rate, band(c.ci95)),
        None => (None, None),
    },
};

/// The x axis: the first parameter's value, or its position in the list when it is not a number.
fn x_of(params: &[SweepParam], v: &SweepValue) -> f64 {
    v.as_f64().unwrap_or_else(|| params[0].values.iter().position(|w| w == v).unwrap_or(0) as f64)
}

fn x_label(p: &SweepParam) -> String {
    if p.values.iter().all(|v| v.as_f64().is_some()) {
        return p.key.clone();
    }
    let legend: Vec<String> = p.values.iter().enumerate().map(|(i, v)| format!("{i} = {v}")).collect();
    format!("{} ({})", p.key, legend.join(", "))
}

/// Draws every chart into `dir`; returns the files written.
pub fn charts(
    dir: &Path,
    scenario: &str,
    params: &[SweepParam],
    points: &[PointResults],
) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    let extra: &[Metric] = if scheduled(points) { std::slice::from_ref(&DOUBLE_EXECUTIONS) } else { &[] };
    for m in METRICS.iter().chain(extra) {
        // One line per algorithm × combination of the other parameters, in order of appearance.
        let mut series: Vec<SweepSeries> = Vec::new();
        let mut index: BTreeMap<String, usize> = BTreeMap::new();
        for point in points {
            let others: Vec<String> =
                params.iter().zip(&point.values).skip(1).map(|(p, v)| format!("{}={v}", p.key)).collect();
            for a in &point.rows {
                let (y, band) = (m.value)(a);
                let mut label = a.label.clone();
                if m.name == "stale_fenced_rate" && a.stale_fenced.is_none() {
                    label.push_str(" (cannot be fenced)");
                }
                if !others.is_empty() {
                    label = format!("{label}, {}", others.join(", "));
                }
                let i = *index.entry(label.clone()).or_insert_with(|| {
                    series.push(SweepSeries { label, points: Vec::new() });
                    series.len() - 1
                });
                series[i].points.push(SweepPoint { x: x_of(params, &point.values[0]), y, band });
            }
        }
        let chart = SweepChart {
            title: format!("{}: {scenario}", m.title),
            x_label: x_label(&params[0]),
            y_label: m.y_label.to_string(),
            log_y: false,
            series,
        };
        let written = sweep_chart(dir, m.name, &chart).map_err(|e| format!("cannot draw the {} chart: {e}", m.name))?;
        files.push(written.svg);
        files.push(written.png);
    }
    Ok(files)
}

/// Writes `sweep.csv`, `sweep.json` and `sweep.parquet` into `dir`; returns their paths.
pub fn write_tables(dir: &Path, csv_text: &str, json_text: &str, parquet: &[u8]) -> Result<Vec<PathBuf>, String> {
    let mut written = vec![write(&dir.join("sweep.csv"), csv_text)?, write(&dir.join("sweep.json"), json_text)?];
    let parquet_path = dir.join("sweep.parquet");
    locksim_charts::write_atomic(&parquet_path, parquet)
        .map_err(|e| format!("cannot write {}: {e}", parquet_path.display()))?;
    written.push(parquet_path);
    Ok(written)
}

/// Everything a sweep writes at its end into `dir`: `sweep.csv`, `sweep.json` (`json_text`, from
/// [`json`]: summaries, or the full rows with `--full`), `sweep.parquet` and the charts.
/// `scenario` is the scenario's name.
pub fn write_all(
    dir: &Path,
    scenario: &str,
    params: &[SweepParam],
    points: &[PointResults],
    json_text: &str,
) -> Result<(), String> {
    let csv_text = csv(params, points);
    let parquet = crate::sweep::table_parquet::parquet(params, points)?;
    write_tables(dir, &csv_text, json_text, &parquet)?;
    charts(dir, scenario, params, points)?;
    Ok(())
}

/// The charts' file names (without extension), in the order drawn; `double_executions_rate`
/// only when some row ran a scheduled workload.
pub fn chart_names(points: &[PointResults]) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = METRICS.iter().map(|m| m.name).collect();
    if scheduled(points) {
        names.push(DOUBLE_EXECUTIONS.name);
    }
    names
}

/// Whether some row of the sweep ran a scheduled workload (`double_executions` applies).
fn scheduled(points: &[PointResults]) -> bool {
    points.iter().any(|p| p.rows.iter().any(|a| a.double_executions.is_some()))
}
