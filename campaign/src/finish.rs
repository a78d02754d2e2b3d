//! What a campaign's outcome becomes, whether its seeds ran here or in shards that were merged:
//! the verdict, the text for the terminal (the interrupted lines, the table, `--verify`'s
//! verdict), the results JSON and the report directory; and the texts of a shard's run and of
//! `--trace`'s seeds. Rendering is `locksim-reports`'; this module decides what is rendered and
//! written for a campaign, so that the binary only prints and maps the [`Class`] to its exit code.

use std::ops::Range;
use std::path::Path;

use locksim_reports::report::TimelineSource;
use locksim_reports::shard::Shard;
use locksim_reports::{render_table, timeline_note, write_report, ReportError, ResultsJson};
use locksim_simulator::scenario::Scenario;

use crate::replay::recordings;
use crate::rows::{Campaign, Outcome};
use crate::seed::RunMode;
use crate::verdict::Class;

/// Where a run's results are written.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outputs<'a> {
    /// `--json FILE`.
    pub json: Option<&'a Path>,
    /// `--report DIR` (already checked to be writable, and locked).
    pub report: Option<&'a Path>,
    /// `--timeline-seed S`.
    pub timeline_seed: Option<u64>,
}

/// A finished run: what it amounts to.
#[derive(Clone, Debug)]
pub struct Finished {
    /// Where the report went (`report: DIR/index.html (timeline: seed S)`), for stderr.
    pub report_line: Option<String>,
    /// The result's class (the exit code).
    pub class: Class,
}

/// Judges `outcome` against `scenario`'s expectations (rows filtered by `algorithms`), hands its
/// text (interrupted lines, the table, the `--verify` verdict) to `print`, then writes the results
/// JSON and the report: in that order, so that `--json -` puts the JSON after the table on
/// standard output. A report's explanations and timeline are the seeds it names
/// (`locksim_reports::report::wanted`), recorded here: replays of the very seeds counted.
/// Errors: an output that cannot be written ([`ReportError::Io`]) or a chart that fails to draw.
pub fn finish(
    scenario: &Scenario,
    scenario_text: String,
    algorithms: &[String],
    outcome: &Outcome,
    outputs: &Outputs,
    print: impl FnOnce(&str),
) -> Result<Finished, ReportError> {
    let verdict = outcome.judge(scenario, algorithms);
    let file = scenario.file.display().to_string();
    let mut text = String::new();
    if outcome.interrupted {
        text.push_str(&format!(
            "# interrupted: {} of {} finished; the results below cover those\n",
            outcome.finished,
            locksim_reports::num::count(outcome.total, "seed-run")
        ));
        if verdict.unstarted > 0 {
            text.push_str(&format!(
                "# {} expectation(s) of rows that never started are not judged\n",
                verdict.unstarted
            ));
        }
    }
    text.push_str(&render_table(&file, &outcome.totals, &verdict.expectations));
    if outcome.verified {
        text.push_str(&outcome.verify_text());
    }
    print(&text);
    let mut report_line = None;
    if outputs.json.is_some() || outputs.report.is_some() {
        let json = ResultsJson::from_scenario(scenario, outcome.seeds.clone(), &outcome.totals, verdict.expectations)
            .with_scenario_text(scenario_text)
            .with_interrupted(outcome.interrupted);
        if let Some(path) = outputs.json {
            locksim_reports::write_atomic(path, json.to_pretty_string())
                .map_err(|e| ReportError::Io(format!("cannot write the results JSON to {}: {e}", path.display())))?;
        }
        if let Some(dir) = outputs.report {
            let wanted = locksim_reports::report::wanted(&json, outputs.timeline_seed);
            let recordings = recordings(scenario, wanted, RunMode::default());
            let written =
                write_report(dir, &json, TimelineSource::Recordings(scenario, recordings), outputs.timeline_seed)?;
            report_line = Some(format!("report: {}{}", written.index.display(), timeline_note(written.timeline_seed)));
        }
    }
    Ok(Finished { report_line, class: verdict.class })
}

/// The text of a shard's run (`sim run --shard K/N`): which block, where the part went, the
/// interruption if any, and the table (nothing judged: `sim merge` judges the whole run).
pub fn shard_text(
    file: &str,
    shard: Shard,
    seeds: Range<u64>,
    part_file: &Path,
    outcome: &Outcome,
    seed_runs: u64,
) -> String {
    let part = shard.seeds(seeds.clone());
    let mut text = format!(
        "# shard {shard}: seeds {}..{} of {}..{}; partial results in {} (expectations are judged by `sim merge`)\n",
        part.start,
        part.end,
        seeds.start,
        seeds.end,
        part_file.display()
    );
    if outcome.interrupted {
        text.push_str(&format!(
            "# interrupted: {} of {} of shard {shard} finished; the part holds those and is marked interrupted (`sim merge` says which seeds are missing)\n",
            outcome.finished,
            locksim_reports::num::count(seed_runs, "seed-run")
        ));
    }
    text.push_str(&render_table(file, &outcome.totals, &[]));
    text
}

/// `--trace`: `seed` of every row of `campaign` recorded with its trace, as text (a header line
/// and the trace per row) or as JSON lines (`jsonl`: one object per entry, with its row).
pub fn traces_text(campaign: &Campaign, seed: u64, jsonl: bool) -> String {
    let mut out = String::new();
    for (run, outcome) in campaign.traced(seed) {
        let Ok(outcome) = outcome else {
            out.push_str(&format!("# {}: seed {seed} panicked; see the results below\n", run.label));
            continue;
        };
        let trace = outcome.trace.expect("trace requested");
        if jsonl {
            for e in &trace.entries {
                let mut v = serde_json::to_value(e).expect("trace entry serialises");
                v["algorithm"] = serde_json::Value::from(run.label.clone());
                out.push_str(&v.to_string());
                out.push('\n');
            }
        } else {
            out.push_str(&format!(
                "# trace: {} seed {seed} ({} events, hash {:016x})\n",
                run.label,
                trace.entries.len(),
                outcome.trace_hash
            ));
            out.push_str(&trace.render_text());
            out.push('\n');
        }
    }
    out
}
