//! What every sweep ends with, whether its points ran here, were resumed, or were folded from
//! shards by `sim merge`: the files in DIR written, and the summary the terminal gets.

use std::ops::Range;
use std::path::Path;

use crate::json::SeedRange;
use crate::sweep::output::{self, PointResults};
use crate::sweep::path::Point;
use crate::sweep::summary::{notes, summary_table, written_files};
use crate::sweep::values::SweepParam;
use crate::AlgorithmTotals;

/// A sweep's outputs and what they describe.
pub struct SweepRun<'a> {
    /// `--out DIR`.
    pub out: &'a Path,
    /// The scenario's name.
    pub name: &'a str,
    /// The scenario file as the user named it.
    pub file: &'a str,
    /// The seeds of every point.
    pub seeds: Range<u64>,
    /// The `--param`s.
    pub params: &'a [SweepParam],
    /// Every point with its scenario.
    pub points: &'a [Point],
    /// The file has `[expect]` blocks (not judged in a sweep: the summary says so).
    pub has_expect: bool,
    /// `--full`: sweep.json keeps the whole results rows.
    pub full: bool,
}

/// A finished sweep: what to print, and whether a seed panicked.
pub struct Finished {
    /// The summary for the terminal.
    pub text: String,
    /// A seed of some point panicked or was stuck.
    pub panicked: bool,
}

/// Writes the sweep's files and returns its summary. `done` holds the rows of each point that
/// ran (all of them unless interrupted) and whether it ran to its end; `finished` of `total`
/// seed-runs ran. The error says which file could not be written.
pub fn finish(
    sweep: &SweepRun,
    done: &[(Vec<AlgorithmTotals>, bool)],
    interrupted: bool,
    finished: u64,
    total: u64,
) -> Result<Finished, String> {
    let (points, params, seeds, file) = (sweep.points, sweep.params, sweep.seeds.clone(), sweep.file);
    let mut results: Vec<PointResults> = Vec::new();
    for (i, (totals, complete)) in done.iter().enumerate() {
        results.push(output::point_results(sweep.out, i, &points[i], params, seeds.clone(), totals, *complete)?);
    }
    let seed_range = SeedRange { from: seeds.start, to: seeds.end };
    let json_text = output::json(sweep.name, file, seed_range, params, &results, interrupted, sweep.full);
    output::write_all(sweep.out, sweep.name, params, &results, &json_text)?;

    let n_seeds = seeds.end - seeds.start;
    let notes = notes(params, &results);
    let mut text = String::new();
    text.push_str(&format!(
        "sweep {file}: {} point{} × {} seeds ({}..{}){}\n\n",
        points.len(),
        if points.len() == 1 { "" } else { "s" },
        n_seeds,
        seeds.start,
        seeds.end,
        if sweep.has_expect { "; the file's [expect] blocks are not judged in a sweep" } else { "" }
    ));
    if interrupted {
        text.push_str(&format!(
            "# interrupted: {finished} of {} finished; {} of {} below{}\n",
            crate::num::count(total, "seed-run"),
            results.len(),
            crate::num::count(points.len() as u64, "point"),
            if results.last().is_some_and(|p| !p.complete) { " (the last one partly)" } else { "" }
        ));
    }
    text.push_str(&summary_table(params, &results));
    text.push_str(&notes.text);
    text.push_str(&written_files(sweep.out, &results));
    Ok(Finished { text, panicked: notes.panicked })
}
