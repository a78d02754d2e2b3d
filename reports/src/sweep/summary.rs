//! What a sweep prints on the terminal: a compact table with one line per point and algorithm,
//! the failing seeds (with replay commands) and panics of every point under it, and where the
//! files went. Rows with no finished run show `-`, never 0.

use std::path::Path;

use crate::json::AlgorithmJson;
use crate::num::{fmt_num, fmt_opt, fmt_pct};
use crate::sweep::output::{chart_names, PointResults};
use crate::sweep::values::SweepParam;

/// The compact table: one line per point and algorithm.
pub fn summary_table(params: &[SweepParam], points: &[PointResults]) -> String {
    let mut header: Vec<String> = params.iter().map(|p| p.key.clone()).collect();
    let n_params = header.len();
    header.extend(
        [
            "label",
            "runs",
            "overlap",
            "stale unfenced",
            "stale fenced",
            "lost updates",
            "thru/s",
            "p50/p99 ms",
            "msgs/acq",
        ]
        .map(String::from),
    );
    let class = |runs: u64, rate: Option<f64>, n: u64| match rate {
        _ if n == 0 => "-".to_string(),
        Some(r) if runs > 0 => format!("{runs} ({})", fmt_pct(r)),
        _ => runs.to_string(),
    };
    let mut rows: Vec<Vec<String>> = Vec::new();
    for p in points {
        for a in &p.rows {
            let mut row: Vec<String> = p.values.iter().map(|v| v.to_string()).collect();
            row.push(a.label.clone());
            row.push(a.runs.to_string());
            row.push(class(a.overlap.runs, a.overlap.rate, a.runs));
            row.push(class(a.stale_unfenced.runs, a.stale_unfenced.rate, a.runs));
            row.push(match &a.stale_fenced {
                Some(c) => class(c.runs, c.rate, a.runs),
                None => "n/a: no token".to_string(),
            });
            // Runs, like the other violation columns (and `sim run`'s), not lost increments.
            let lost_rate = (a.runs > 0).then(|| a.lost_updates_runs as f64 / a.runs as f64);
            row.push(class(a.lost_updates_runs, lost_rate, a.runs));
            row.push(fmt_opt(a.throughput_per_s));
            row.push(match a.acquire_latency_ms {
                Some(l) => format!("{}/{}", fmt_num(l.p50), fmt_num(l.p99)),
                None => "-".to_string(),
            });
            row.push(fmt_opt(a.messages_per_acquisition));
            rows.push(row);
        }
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| rows.iter().map(|r| r[c].chars().count()).chain([header[c].chars().count()]).max().unwrap_or(0))
        .collect();
    let label_col = n_params;
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (c, cell) in cells.iter().enumerate() {
            if c > 0 {
                s.push_str("  ");
            }
            // Labels left-aligned, numbers right-aligned.
            if c == label_col {
                s.push_str(&format!("{cell:<w$}", w = widths[c]));
            } else {
                s.push_str(&format!("{cell:>w$}", w = widths[c]));
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(&header);
    out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * (widths.len().saturating_sub(1))));
    out.push('\n');
    for r in &rows {
        out.push_str(&line(r));
    }
    out.push_str("violation columns count runs (seeds with at least one), as in `sim run`\n");
    out
}

/// The lines under the table: every point's failing seeds and panics.
pub struct Notes {
    /// The lines, each ending in a newline, after an empty line; empty when there is nothing to say.
    pub text: String,
    /// Some seed of some point panicked.
    pub panicked: bool,
}

/// Failing seeds (with the replay command) and panics, point by point, row by row.
pub fn notes(params: &[SweepParam], points: &[PointResults]) -> Notes {
    let mut lines = Vec::new();
    let mut panicked = false;
    for point in points {
        let at = params.iter().zip(&point.values).map(|(p, v)| format!("{}={v}", p.key)).collect::<Vec<_>>().join(" ");
        for r in &point.rows {
            add_row(&mut lines, &mut panicked, &at, r);
        }
    }
    let text = if lines.is_empty() { String::new() } else { format!("\n{}", lines.concat()) };
    Notes { text, panicked }
}

fn add_row(lines: &mut Vec<String>, panicked: &mut bool, at: &str, r: &AlgorithmJson) {
    if let Some(replay) = &r.replay {
        let seeds: Vec<String> = r.failing_seeds.iter().map(|s| s.to_string()).collect();
        lines.push(format!(
            "{at}, {}: violations in {} of {} runs; first failing seeds: {}\n  replay: {replay}\n",
            r.label,
            r.failing_runs,
            r.runs,
            seeds.join(", ")
        ));
    }
    if r.panicked_runs > 0 {
        *panicked = true;
        lines.push(format!("{at}, {}: {} seed(s) PANICKED\n", r.label, r.panicked_runs));
        for p in &r.panicked_seeds {
            lines.push(format!("  seed {}: {}\n", p.seed, p.message));
        }
    }
}

/// Where the outputs went.
pub fn written_files(dir: &Path, points: &[PointResults]) -> String {
    let rows: usize = points.iter().map(|p| p.rows.len()).sum();
    let scenarios = points.iter().filter(|p| p.scenario_file.is_some()).count();
    let mut s = format!(
        "\nwrote {} ({rows} rows), {} and {}\ncharts (.svg and .png) in {}: {}\n",
        dir.join("sweep.csv").display(),
        dir.join("sweep.json").display(),
        dir.join("sweep.parquet").display(),
        dir.display(),
        chart_names(points).join(", ")
    );
    if scenarios > 0 {
        s.push_str(&format!(
            "scenarios of the {scenarios} point(s) with failing seeds, for their replay commands: {}\n",
            dir.join("points").display()
        ));
    }
    s
}
