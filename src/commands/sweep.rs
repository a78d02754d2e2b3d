//! `sim sweep FILE --param KEY=FROM..TO:STEP … --out DIR`: the scenario run at every value of one
//! or more parameters (every combination, the first parameter varying slowest), every algorithm
//! over the same seeds at each point; a summary table on the terminal and `sweep.csv`,
//! `sweep.json` and one chart per metric in DIR. Everything is checked (every point's scenario
//! through the parser, the seeds, the labels, the output directory) before anything runs.

use std::path::PathBuf;

use clap::Args;
use locksim_reports::json::SeedRange;
use locksim_reports::num::{fmt_num, fmt_opt, fmt_pct};
use locksim_reports::{replay_command, AlgorithmJson, ResultsJson};
use locksim_simulator::scenario::{load_file, RunSpec, Scenario};
use toml_edit::DocumentMut;

use crate::exit::{CliError, MODEL_FAILED, OK};
use crate::interrupt::INTERRUPTED;
use crate::runner::{print_out, progress_bar, run_rows, thread_pool};
use crate::seeds::parse_seeds;
use crate::sweep::output::{self, PointResults};
use crate::sweep::path::{point_scenario, refused};
use crate::sweep::values::{self, parse_param, SweepParam, SweepValue};

const AFTER_HELP: &str = "\
KEY is a dotted path into the scenario file, as written: table keys by name, [[faults]],
[[variants]] and [[network.links]] blocks and array elements by index from 0:
  duration_ms                 the top-level key
  workload.clients            a key of [workload]; likewise network.latency_ms, clocks.drift_ppm
  models.redlock.ttl_ms       a model parameter ([models.redlock] and the key are added if absent)
  variants.1.ttl_ms           a parameter of the second [[variants]] block
  faults.0.duration_ms        the first [[faults]] block (added to it if absent)
  workload.hold_ms.uniform.1  the upper end of hold_ms = { uniform = [a, b] }
The edited file is checked by the scenario parser like any file: an unknown key, a value out of
range, or a block that does not exist (faults.7 with 2 faults) is refused with the parser's
explanation and exit code 2, before anything runs. `seeds` and [expect] cannot be swept.

Values:
  KEY=FROM..TO:STEP  FROM, FROM+STEP, ... up to TO (included when a step lands on it); integers
                     when all three are integers, else numbers: 0.5..2.0:0.5 is 0.5, 1, 1.5, 2
  KEY=a,b,c          a list: numbers, true/false, or strings (models.redis.persistence=none,always)
At most 10000 points in all.

Outputs in DIR (created if absent; only these files are replaced, nothing else is removed):
  sweep.csv          one row per point and algorithm: the parameter values (columns named by
                     their keys), label, runs, overlap and stale-write rates with 95% intervals,
                     lost updates, throughput, acquire latency p50/p99, unavailability,
                     messages per acquisition, wake-ups per release, first failing seeds; an
                     empty cell means no data (never 0)
  sweep.json         scenario, file, seeds, params [{key, values}], and per point its values and
                     `results`: the rows of the results JSON (`sim run --json`) for that point
  NAME.svg, NAME.png charts against the first parameter, one line per algorithm (and combination
                     of the other parameters), with the 95% band where the metric has one:
                     overlap_rate, stale_unfenced_rate, stale_fenced_rate, throughput_per_s,
                     acquire_latency_ms_p99, messages_per_acquisition, notifications_per_release
  points/point-N.toml  the scenario of point N (0-based, as in sweep.json) when it has failing
                     seeds: the replay commands run it

The terminal gets one summary line per point and algorithm. The scenario's [expect] blocks are
not judged in a sweep.

Exit codes: 0 ran; 2 bad command line or scenario (nothing ran); 3 a seed panicked in some point
(reported; the outputs are still written); 130 interrupted by Ctrl-C (the finished points, and
the finished seeds of the point in progress, are written).

Examples:
  sim sweep scenarios/failover.toml --param models.redis.ttl_ms=5000..30000:5000 --out out/ttl
  sim sweep FILE --param faults.0.duration_ms=0..2000:500 --param workload.clients=2,10 --out DIR";

#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct SweepArgs {
    /// The scenario file (TOML).
    pub file: PathBuf,
    /// A parameter to sweep: KEY=FROM..TO:STEP or KEY=a,b,c (see below). Repeatable: several
    /// give every combination, the first varying slowest.
    #[arg(long = "param", value_name = "KEY=FROM..TO:STEP", required = true)]
    pub params: Vec<String>,
    /// Seeds to run at every point: N (seeds 0..N) or A..B (A to B-1). Default: the file's `seeds`.
    #[arg(long, value_name = "N|A..B")]
    pub seeds: Option<String>,
    /// Run only this algorithm or variant label (repeatable).
    #[arg(long = "algorithm", value_name = "LABEL")]
    pub algorithms: Vec<String>,
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, value_name = "N")]
    pub threads: Option<usize>,
    /// The directory to write sweep.csv, sweep.json and the charts to (created if absent).
    #[arg(long, value_name = "DIR", required = true)]
    pub out: PathBuf,
}

/// A point's rows, after `--algorithm` filtering; every wanted label must exist at every point.
fn select_runs<'a>(
    scenario: &'a Scenario,
    wanted: &[String],
    at: &dyn Fn() -> String,
) -> Result<Vec<&'a RunSpec>, CliError> {
    let labels: Vec<&str> = scenario.runs.iter().map(|r| r.label.as_str()).collect();
    if let Some(w) = wanted.iter().find(|w| !labels.contains(&w.as_str())) {
        return Err(CliError::bad_input(format!(
            "--algorithm {w}: no such algorithm or variant in {}{}; valid labels: {}",
            scenario.file.display(),
            at(),
            labels.join(", ")
        )));
    }
    Ok(scenario.runs.iter().filter(|r| wanted.is_empty() || wanted.contains(&r.label)).collect())
}

/// `--param k=v --param k2=v2` for one point.
fn describe_point(params: &[SweepParam], values: &[SweepValue]) -> String {
    params.iter().zip(values).map(|(p, v)| format!("--param {}={v}", p.key)).collect::<Vec<_>>().join(" ")
}

pub fn sweep(args: SweepArgs) -> Result<i32, CliError> {
    let models = locksim_algorithms::registry();
    // The file as written must be valid on its own (its errors keep their real lines).
    let base = load_file(&args.file, &models)?;
    let file = args.file.display().to_string();
    let params: Vec<SweepParam> =
        args.params.iter().map(|t| parse_param(t)).collect::<Result<_, _>>().map_err(CliError::bad_input)?;
    for p in &params {
        if let Some(why) = refused(&p.key) {
            return Err(CliError::bad_input(format!("--param {}: key `{}`: {why}", p.text, p.key)));
        }
    }
    let points = values::points(&params).map_err(CliError::bad_input)?;
    let seeds = match &args.seeds {
        Some(text) => parse_seeds(text)?,
        None => 0..base.seeds,
    };
    let text = std::fs::read_to_string(&args.file)
        .map_err(|e| CliError::bad_input(format!("{file}: cannot read the scenario file: {e}")))?;
    let doc: DocumentMut =
        text.parse().map_err(|e| CliError::bad_input(format!("{file}: cannot be edited as TOML: {e}")))?;

    // Every point's scenario through the parser, and its rows, before anything runs.
    let mut scenarios: Vec<(Scenario, String)> = Vec::with_capacity(points.len());
    for values in &points {
        scenarios.push(point_scenario(&file, &doc, &params, values, &models).map_err(CliError::bad_input)?);
    }
    let mut runs: Vec<Vec<&RunSpec>> = Vec::with_capacity(points.len());
    for ((scenario, _), values) in scenarios.iter().zip(&points) {
        runs.push(select_runs(scenario, &args.algorithms, &|| format!(" with {}", describe_point(&params, values)))?);
    }
    let pool = thread_pool(args.threads)?;
    crate::out_dir::prepare(&args.out, "--out").map_err(CliError::bad_input)?;

    let n_seeds = seeds.end - seeds.start;
    let total: u64 = runs.iter().map(|r| r.len() as u64 * n_seeds).sum();
    let progress = progress_bar(total);
    let mut results: Vec<PointResults> = Vec::new();
    let mut notes = Notes::default();
    let mut finished = 0u64;
    let mut interrupted = false;
    for (i, ((scenario, point_text), values)) in scenarios.iter().zip(&points).enumerate() {
        let outcome = run_rows(scenario, &runs[i], seeds.clone(), &pool, &progress, false);
        finished += outcome.finished;
        interrupted = outcome.interrupted;
        if outcome.finished == 0 && interrupted {
            break;
        }
        let mut rows = ResultsJson::from_scenario(scenario, seeds.clone(), &outcome.totals, Vec::new()).algorithms;
        let at = params.iter().zip(values).map(|(p, v)| format!("{}={v}", p.key)).collect::<Vec<_>>().join(" ");
        // Replays name the point's own scenario: the original file would not reproduce them.
        let mut scenario_file = None;
        if rows.iter().any(|r| r.replay.is_some()) {
            let header = format!("# sim sweep: {file} with {}\n", describe_point(&params, values));
            let path = output::write_point_scenario(&args.out, i, &header, point_text).map_err(CliError::bad_input)?;
            let shown = path.display().to_string();
            for (row, t) in rows.iter_mut().zip(&outcome.totals) {
                row.replay = t.first_failing_seed().map(|s| replay_command(&shown, &row.label, s));
            }
            scenario_file = Some(shown);
        }
        notes.add(&at, &rows);
        results.push(PointResults { values: values.clone(), rows, complete: !interrupted, scenario_file });
        if interrupted {
            break;
        }
    }
    progress.finish_and_clear();

    let seed_range = SeedRange { from: seeds.start, to: seeds.end };
    let csv = output::csv(&params, &results);
    let json = output::json(&base.name, &file, seed_range, &params, &results, interrupted);
    output::write_tables(&args.out, &csv, &json).map_err(CliError::bad_input)?;
    output::charts(&args.out, &base.name, &params, &results).map_err(CliError::bad_input)?;

    let mut text = String::new();
    text.push_str(&format!(
        "sweep {file}: {} point{} × {} seeds ({}..{}){}\n\n",
        points.len(),
        if points.len() == 1 { "" } else { "s" },
        n_seeds,
        seeds.start,
        seeds.end,
        if base.expect.is_empty() { "" } else { "; the file's [expect] blocks are not judged in a sweep" }
    ));
    if interrupted {
        text.push_str(&format!(
            "# interrupted: {finished} of {total} seed-runs finished; {} of {} points below{}\n",
            results.len(),
            points.len(),
            if results.last().is_some_and(|p| !p.complete) { " (the last one partly)" } else { "" }
        ));
    }
    text.push_str(&summary_table(&params, &results));
    text.push_str(&notes.render());
    text.push_str(&written_files(&args.out, &results));
    print_out(&text);
    Ok(if interrupted {
        INTERRUPTED
    } else if notes.panicked {
        MODEL_FAILED
    } else {
        OK
    })
}

/// Failing seeds and panics, collected point by point for the lines under the table.
#[derive(Default)]
struct Notes {
    lines: Vec<String>,
    panicked: bool,
}

impl Notes {
    fn add(&mut self, at: &str, rows: &[AlgorithmJson]) {
        for r in rows {
            if let Some(replay) = &r.replay {
                let seeds: Vec<String> = r.failing_seeds.iter().map(|s| s.to_string()).collect();
                self.lines.push(format!(
                    "{at}, {}: violations in {} of {} runs; first failing seeds: {}\n  replay: {replay}\n",
                    r.label,
                    r.failing_runs,
                    r.runs,
                    seeds.join(", ")
                ));
            }
            if r.panicked_runs > 0 {
                self.panicked = true;
                self.lines.push(format!("{at}, {}: {} seed(s) PANICKED\n", r.label, r.panicked_runs));
                for p in &r.panicked_seeds {
                    self.lines.push(format!("  seed {}: {}\n", p.seed, p.message));
                }
            }
        }
    }

    fn render(&self) -> String {
        if self.lines.is_empty() {
            return String::new();
        }
        format!("\n{}", self.lines.concat())
    }
}

/// The compact table: one line per point and algorithm.
fn summary_table(params: &[SweepParam], points: &[PointResults]) -> String {
    let mut header: Vec<String> = params.iter().map(|p| p.key.clone()).collect();
    let n_params = header.len();
    header.extend(
        ["label", "runs", "overlap", "stale unfenced", "stale fenced", "lost", "thru/s", "p50/p99 ms", "msgs/acq"]
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
            row.push(if a.runs == 0 { "-".to_string() } else { a.lost_updates.to_string() });
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
    out
}

/// Where the outputs went.
fn written_files(dir: &std::path::Path, points: &[PointResults]) -> String {
    let rows: usize = points.iter().map(|p| p.rows.len()).sum();
    let scenarios = points.iter().filter(|p| p.scenario_file.is_some()).count();
    let mut s = format!(
        "\nwrote {} ({rows} rows) and {}\ncharts (.svg and .png) in {}: {}\n",
        dir.join("sweep.csv").display(),
        dir.join("sweep.json").display(),
        dir.display(),
        output::chart_names().join(", ")
    );
    if scenarios > 0 {
        s.push_str(&format!(
            "scenarios of the {scenarios} point(s) with failing seeds, for their replay commands: {}\n",
            dir.join("points").display()
        ));
    }
    s
}
