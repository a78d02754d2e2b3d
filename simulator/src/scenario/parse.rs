//! TOML text to a validated [`Scenario`]: the top level, and the order of the checks. The file is
//! parsed with toml_edit (which keeps spans) and walked by hand, so every error knows its key path
//! and position; each section lives in its own module:
//!
//! - [`walk`](super::walk): key paths, spans to line:column, typed access, unknown keys
//! - [`values`](super::values): numbers, ranges, distributions
//! - [`runs`](super::runs) and [`params`](super::params): algorithms, `[models.NAME]`, variants
//! - [`sections`](super::sections): `[network]`, `[workload]`, `[clocks]`
//! - [`faults`](super::faults), [`nodes`](super::nodes): faults, selectors, node existence
//! - [`expect`](super::expect): `[expect.LABEL]`
//! - [`explore`](super::explore): `[explore]`, `sim explore`'s bounds
//! - [`exhaust`](super::exhaust): `[exhaust]`, `sim exhaust`'s bounds
//! - [`replay`](super::replay): `[replay]`, a recorded path of choices (`sim exhaust`)

use std::path::{Path, PathBuf};

use toml_edit::ImDocument;

use crate::model::DynModel;
use crate::scenario::error::ScenarioError;
use crate::scenario::nodes::{self, Mentions};
use crate::scenario::read::read_scenario_text;
use crate::scenario::types::{Scenario, Setup};
use crate::scenario::values::{int_in, name};
use crate::scenario::walk::{show_number, Node, Res, Source};
use crate::scenario::{exhaust, expect, explore, faults, replay, runs, sections, syntax};
use crate::time::MAX_TIME_MS;

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "duration_ms",
    "seeds",
    "algorithms",
    "models",
    "variants",
    "network",
    "workload",
    "clocks",
    "faults",
    "expect",
    "explore",
    "exhaust",
    "replay",
];

/// Reads and parses a scenario file. `models` is the registry of known models. A file that cannot
/// be read, or is larger than [`crate::scenario::MAX_SCENARIO_BYTES`], has no line; a file that is
/// not UTF-8 is placed at its first bad byte.
pub fn load_file(path: &Path, models: &[&'static dyn DynModel]) -> Result<Scenario, ScenarioError> {
    load_file_with_text(path, models).map(|(scenario, _)| scenario)
}

/// [`load_file`], also returning the text it parsed: what a results file records, read once so
/// it is exactly the text that ran.
pub fn load_file_with_text(path: &Path, models: &[&'static dyn DynModel]) -> Result<(Scenario, String), ScenarioError> {
    let label = path.display().to_string();
    let text = read_scenario_text(path)?;
    let scenario = parse_str(&label, &text, models)?;
    Ok((scenario, text))
}

/// Parses scenario text; `file` is used in error messages and kept in the scenario.
///
/// Runs come out in file order: every `algorithms` entry (its model's defaults overridden by
/// `[models.NAME]`), then every `[[variants]]` table. A variant starts from its model's
/// defaults, NOT from `[models.NAME]`, so its table alone says what it runs.
///
/// Extension of the format: `[workload] acquisitions_per_client` (integer >= 1).
///
/// Returns the first error found; the checks run section by section, not strictly in file order.
pub fn parse_str(file: &str, text: &str, models: &[&'static dyn DynModel]) -> Result<Scenario, ScenarioError> {
    let src = Source::new(file, text);
    let empty = || {
        src.error(
            &(0..0),
            "",
            "the scenario file is empty: expected at least `name`, `duration_ms` and `algorithms` (or a [[variants]] table)",
        )
    };
    if text.trim().is_empty() {
        return Err(empty());
    }
    let doc = ImDocument::parse(text).map_err(|e| {
        let at = e.span().unwrap_or(0..0);
        // toml_edit's message may span lines ("invalid table header\nexpected `.`, `]`").
        let why: Vec<&str> = e.message().lines().map(str::trim).filter(|l| !l.is_empty()).collect();
        let key = syntax::key_near(text, at.start).unwrap_or_default();
        src.error(&at, &key, format!("TOML syntax error: {}", syntax::explain(text, at.start, &why.join("; "))))
    })?;
    let root = Node::root(doc.as_table()).as_table(&src, "a table")?;
    if root.is_empty() {
        return Err(empty());
    }
    root.check_keys(&src, TOP_KEYS)?;

    let name = name(&src, root.required(&src, "name", "a string naming the scenario")?)?.to_string();
    let description = match root.get("description") {
        Some(n) => n.as_str(&src, "a string")?.to_string(),
        None => String::new(),
    };
    let duration_ms =
        duration(&src, root.required(&src, "duration_ms", "the simulated time of one run, in milliseconds")?)?;
    let seeds = match root.get("seeds") {
        Some(n) => int_in(&src, n, 1, i64::MAX)? as u64,
        None => 100,
    };

    let workload = sections::workload(&src, &root)?;
    let mut mentions = Mentions::default();
    let network = sections::network(&src, &root, &mut mentions)?;
    let clocks = sections::clocks(&src, &root)?;
    let runs = runs::runs(&src, &root, models, &workload)?;
    if workload.read_fraction > 0.0 {
        if let Some(run) = runs.iter().find(|r| !r.model.shared_locks(&r.spec.params)) {
            let tab = root.get("workload").map(|n| n.as_table(&src, "a table")).transpose()?;
            let node = tab.as_ref().and_then(|t| t.get("read_fraction")).expect("read_fraction > 0 was written");
            return Err(node.err(
                &src,
                format!(
                    "`{}` ({}) has no shared (read) locks with these parameters, so read_fraction must be 0 \
                     while it runs, not {}; `sim list {}` says which parameters give shared locks, if any",
                    run.spec.label,
                    run.spec.model.name(),
                    workload.read_fraction,
                    run.spec.model.name()
                ),
            ));
        }
    }
    let faults = faults::faults(&src, &root, &mut mentions)?;
    let explore = explore::explore(&src, &root, duration_ms, &mut mentions)?;
    let replay = replay::replay(&src, &root)?;
    let exhaust = exhaust::exhaust(&src, &root)?;
    crate::scenario::zero_time::check(&src, &root, &network, &workload, runs.iter().map(|r| &r.spec))?;
    nodes::check(&src, &runs, workload.clients, &mentions)?;
    let labels: Vec<String> = runs.iter().map(|r| r.spec.label.clone()).collect();
    let expect = expect::expectations(&src, &root, &labels)?;

    Ok(Scenario {
        name,
        description,
        file: PathBuf::from(file),
        seeds,
        runs: runs.into_iter().map(|r| r.spec).collect(),
        setup: Setup { duration_ms, network, workload, clocks, faults, replay },
        expect,
        explore,
        exhaust,
    })
}

/// `duration_ms`: a plain number above 0 (one run's length is not drawn), at most
/// [`MAX_TIME_MS`] as every time is: nanoseconds of true time must fit in 64 bits with room to
/// spare (about 31 years of simulated time).
fn duration(src: &Source, node: &Node) -> Res<f64> {
    let expected = "a number of milliseconds above 0 and at most 1e12";
    if node.is_table() {
        return Err(node.mismatch(src, &format!("{expected} (a distribution is not accepted here)")));
    }
    let v = node.as_number(src, expected)?;
    if v <= 0.0 || v > MAX_TIME_MS {
        return Err(node.err(src, format!("expected {expected}, found {}", show_number(v))));
    }
    Ok(v)
}
