//! `sim sweep`'s machinery, apart from the command itself (the binary's `commands::sweep`, which
//! parses the arguments, runs the points and prints):
//!
//! - [`values`]: the `--param KEY=FROM..TO:STEP` / `KEY=a,b,c` syntax, and the points of a sweep
//!   (the cartesian product of the parameters' values, the first parameter varying slowest)
//! - [`path`]: setting a dotted key path (`faults.0.duration_ms`, `models.redis.ttl_ms`) in the
//!   scenario's TOML document, and building the scenario of one point through the parser
//! - [`output`]: the files a sweep writes: `sweep.csv`, `sweep.json`, `sweep.parquet`, the charts, and the
//!   scenarios of points with failing seeds
//! - [`rows`]: one row of the sweep table, typed: what `sweep.csv`, the summaries in
//!   `sweep.json` and `sweep.parquet` are written from
//! - [`table_parquet`]: `sweep.parquet`, the CSV's rows with typed columns
//! - [`progress`]: the record of finished points that `--resume` skips
//! - [`summary`]: what the terminal gets: one line per point and algorithm, the failing seeds
//!   and panics under it, and where the files went
//! - [`finish`]: what every sweep ends with (run, resumed or merged): the files and the summary
//!
//! [`params_and_points`] is the first step of a sweep: every `--param` checked and the points
//! listed, before any scenario is built.

pub mod finish;
pub mod output;
pub mod path;
pub mod progress;
pub mod rows;
pub mod summary;
pub mod table_parquet;
pub mod values;

use values::{parse_param, points, SweepParam, SweepValue};

/// Parses every `--param` (in order), refuses keys a sweep cannot change ([`path::refused`]), and
/// lists the points: every combination of the values, the first parameter varying slowest. The
/// error names the `--param` at fault.
pub fn params_and_points(texts: &[String]) -> Result<(Vec<SweepParam>, Vec<Vec<SweepValue>>), String> {
    let params: Vec<SweepParam> = texts.iter().map(|t| parse_param(t)).collect::<Result<_, _>>()?;
    for p in &params {
        if let Some(why) = path::refused(&p.key) {
            return Err(format!("--param {}: key `{}`: {why}", p.text, p.key));
        }
    }
    let points = points(&params)?;
    Ok((params, points))
}
