//! `sim shrink`'s machinery: from a scenario, a row and a seed that shows a violation (or fails
//! an `[expect]` line: an outage, a lock never granted again), the smallest scenario found that
//! still shows a violation of the same kind (fails the same line) on some seed, on the same
//! library preset (delta debugging, greedy and repeated until nothing more can go).
//!
//! - [`numbers`]: the smaller and rounder numbers tried in place of a number
//! - [`doc`]: reading and editing the TOML document by path, keeping the user's layout
//! - [`candidates`]: the families of edits, in the order a pass tries them
//! - [`trial`]: running one candidate (parsed by the real parser) over a few seeds, and what it
//!   must show ([`Target`])
//! - [`header`]: the comment block and the one-line summary at the top of the output
//!
//! The loop: the row is isolated first (the other rows, `[expect]` and `[explore]` removed);
//! then each family in turn lists its candidates for the current document, and the first one
//! that still fails is kept and the family asked again, until it has nothing that fails; passes
//! over every family repeat until one changes nothing, the budget of seed-runs is spent, or the
//! caller's stop flag is set (Ctrl-C). Each candidate runs on the current witness seed first,
//! then seeds 0, 1, … ([`SEEDS_PER_CANDIDATE`] in all), so a shrink does not hang on one lucky
//! seed; the first failing seed in that order becomes the witness. Candidates, seeds and their
//! order are fixed, so the output depends only on the inputs (not on the thread count).

pub mod candidates;
pub mod doc;
pub mod header;
pub mod numbers;
pub mod trial;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};

use locksim_simulator::model::DynModel;
use locksim_simulator::scenario::{parse_str, Scenario};
use toml_edit::{Array, DocumentMut, Item, Value};

use crate::seed::{run_seed_stoppable, RunMode, SeedResult};
use candidates::{Context, FAMILIES};
use doc::{path, Seg};
pub use header::Size;
pub use trial::Target;
use trial::{run_one, try_text, Bounds, Trial, Witness, EXPECT_PREFIX};

/// Seeds each candidate is tried on (the witness first).
pub const SEEDS_PER_CANDIDATE: usize = 8;

/// The default `--budget`: seed-runs for the whole shrink.
pub const DEFAULT_BUDGET: u64 = 3_000;

/// What to shrink.
pub struct Request<'a> {
    /// The scenario's file name as the user wrote it (errors, the comment block).
    pub file: &'a str,
    /// The scenario's text.
    pub text: &'a str,
    /// Every known model.
    pub models: &'a [&'static dyn DynModel],
    /// The row (algorithm or variant label).
    pub label: &'a str,
    /// The seed that shows the violation.
    pub seed: u64,
    /// The failure to keep: a violation kind (`overlap`; `None`: the seed's first violation's
    /// kind), or an `[expect]` line that fails on the seed, `expect:METRIC` (the row's own line)
    /// or `expect:METRIC EXPECTED` (`expect:outage_ms < 1_000`): see [`Target`].
    pub kind: Option<&'a str>,
    /// Seed-runs the shrink may spend.
    pub budget: u64,
    /// The file the result will be written to, for the replay command.
    pub out_file: &'a str,
}

/// The smallest scenario found.
pub struct Shrunk {
    /// The output file's text: the comment block, then the scenario.
    pub text: String,
    /// The failure kept, in words ([`Target::name`]: `overlap`, `outage_ms "< 1_000" failing`).
    pub kind: String,
    /// The seed that shows it in the output scenario.
    pub witness: Witness,
    /// The one-line reduction summary (`clients 10 → 2, faults 3 → 1, duration 60 s → 6 s`).
    pub summary: String,
    /// Every edit kept, in order.
    pub steps: Vec<String>,
    /// Seed-runs spent.
    pub seed_runs: u64,
    /// The budget ran out before a pass changed nothing.
    pub budget_spent: bool,
    /// The stop flag cut the shrink short.
    pub interrupted: bool,
}

/// Why a shrink wrote nothing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NotShrunk {
    /// The user's input (exit 2): a scenario the parser refuses, an unknown label or kind, a
    /// seed that shows no such violation; the message says which.
    Input(String),
    /// The stop flag was raised before the search had its first witness (the seed's own run,
    /// or the row alone): there is nothing smaller to write yet.
    InterruptedBeforeStart,
}

impl From<String> for NotShrunk {
    fn from(message: String) -> Self {
        NotShrunk::Input(message)
    }
}

/// Shrinks `req`'s scenario. `progress` is told each edit kept; `stop` ends the search early
/// with the smallest scenario found so far: it cuts the seeds in progress (a candidate cut so
/// counts as showing nothing), and when it comes before the first witness the result is
/// [`NotShrunk::InterruptedBeforeStart`].
pub fn shrink(
    req: &Request,
    pool: &rayon::ThreadPool,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&str),
) -> Result<Shrunk, NotShrunk> {
    let original = parse_str(req.file, req.text, req.models).map_err(|e| e.to_string())?;
    let run = original.row_labelled(req.label).map_err(|e| e.to_string())?;
    let target = first_target(req, &original, stop)?;
    let witness = run_one(&original, req.label, req.seed, &target, stop);
    if stop.load(Ordering::SeqCst) {
        return Err(NotShrunk::InterruptedBeforeStart);
    }
    let Some(witness) = witness else {
        let what = match &target {
            Target::Violation(kind) => format!("shows no {kind} violation"),
            Target::Expect(e) => format!(
                "does not fail [expect] {} \"{}\" (a shrink keeps a failing line; to keep a failure that \
                 the row's line asserts, write the opposite out: --expect '{} EXPECTED')",
                e.metric.name(),
                e.expected,
                e.metric.name()
            ),
        };
        return Err(format!("seed {} of {} in {} {what}", req.seed, req.label, req.file).into());
    };
    let kind = target.name();
    let params = run.model.params();
    let mut doc: DocumentMut = req.text.parse().map_err(|e| format!("{}: {e}", req.file))?;
    let (row_table, isolated) = isolate(&mut doc, &original, req.label);

    let mut state = State {
        req,
        pool,
        target: &target,
        library: trial::library(&original, req.label),
        doc,
        witness,
        steps: isolated,
        seed_runs: 1,
        nodes: trial::nodes(&original, req.label),
        seen: BTreeSet::new(),
        budget_spent: false,
    };
    // The isolated row runs exactly as it did among the others (every stream is named by node
    // and purpose, not by row), but the parser has the last word.
    let start = state.doc.to_string();
    let first = state.trial(&start, usize::MAX, stop);
    if stop.load(Ordering::SeqCst) {
        return Err(NotShrunk::InterruptedBeforeStart);
    }
    let Some(w) = first else {
        return Err(NotShrunk::Input(format!(
            "seed {} of {} shows {kind} in {}, but not once the other rows are removed; \
             shrink the whole file by hand",
            req.seed, req.label, req.file
        )));
    };
    state.witness = w;
    state.seen.insert(start);
    let mut interrupted = false;
    'passes: loop {
        let mut changed = false;
        for (name, family) in FAMILIES {
            // A server count that changes no node (sentinels without replicas) is no reduction.
            let strict = *name == candidates::FEWER_SERVERS;
            loop {
                if stop.load(Ordering::Relaxed) {
                    interrupted = true;
                    break 'passes;
                }
                if state.budget_spent {
                    break 'passes;
                }
                let cx = Context { row_table: row_table.clone(), params, witness_at_ms: state.witness.at_ms };
                let mut kept = false;
                for c in family(&state.doc, &cx) {
                    if stop.load(Ordering::Relaxed) || state.budget_spent {
                        break;
                    }
                    let text = c.doc.to_string();
                    if !state.seen.insert(text.clone()) {
                        continue;
                    }
                    let max_nodes = if strict { state.nodes.saturating_sub(1) } else { state.nodes };
                    if let Some(w) = state.trial(&text, max_nodes, stop) {
                        progress(&format!(
                            "{} (seed {}; {} of {} seed-runs spent)",
                            c.what, w.seed, state.seed_runs, req.budget
                        ));
                        state.nodes = parse_str(req.file, &text, req.models)
                            .map(|s| trial::nodes(&s, req.label))
                            .unwrap_or(state.nodes);
                        state.doc = c.doc;
                        state.witness = w;
                        state.steps.push(c.what);
                        kept = true;
                        changed = true;
                        break;
                    }
                }
                if !kept {
                    break;
                }
            }
        }
        if !changed {
            break;
        }
    }

    retitle(&mut state.doc, req, &target);
    let mut final_text = state.doc.to_string();
    if !final_text.ends_with('\n') {
        final_text.push('\n');
    }
    // A stop raised during the last candidate (which then counts as showing nothing) ends the
    // search as one raised between candidates does.
    interrupted |= stop.load(Ordering::SeqCst);
    let shrunk = parse_str(req.file, &final_text, req.models).map_err(|e| e.to_string())?;
    let summary = header::summary(&Size::of(&original), &Size::of(&shrunk));
    let text = header::render(req, &target, &state.witness, &summary, &state.steps, interrupted || state.budget_spent)
        + &final_text;
    Ok(Shrunk {
        text,
        kind,
        witness: state.witness,
        summary,
        steps: state.steps,
        seed_runs: state.seed_runs,
        budget_spent: state.budget_spent,
        interrupted,
    })
}

/// Renames the scenario `NAME-shrunk` and replaces its description (which describes the
/// original) with one line saying where it came from.
fn retitle(doc: &mut DocumentMut, req: &Request, target: &Target) {
    let name = doc::value(doc, &path("name")).and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default();
    doc::set(doc, &path("name"), Value::from(format!("{name}-shrunk")));
    let description = format!(
        "Shrunk by `sim shrink` from {} (row {}, seed {}): the smallest scenario found in which {}; \
         the comment block at the top says what went.",
        req.file,
        req.label,
        req.seed,
        target.still()
    );
    if !doc::set(doc, &path("description"), Value::from(description.clone())) {
        doc.insert("description", toml_edit::value(description));
    }
}

/// `--kind` (or `--expect`), checked; else the kind of the seed's first violation (the seed's
/// run is cut by `stop`, and then there is no kind yet).
fn first_target(req: &Request, scenario: &Scenario, stop: &AtomicBool) -> Result<Target, NotShrunk> {
    if let Some(spec) = req.kind.and_then(|k| k.strip_prefix(EXPECT_PREFIX)) {
        return Ok(Target::Expect(trial::parse_expect(spec, scenario, req.label)?));
    }
    if let Some(k) = req.kind {
        return Ok(Target::Violation(trial::parse_kind(k)?));
    }
    let run = scenario.runs.iter().find(|r| r.label == req.label).expect("checked by the caller");
    let metrics = match run_seed_stoppable(scenario, run, req.seed, stop, RunMode::default()) {
        None => return Err(NotShrunk::InterruptedBeforeStart),
        Some(SeedResult::Panicked { message, .. }) => {
            return Err(format!(
                "seed {} of {} panicked: {message}; there is no violation to shrink",
                req.seed, req.label
            )
            .into())
        }
        Some(SeedResult::Done { metrics }) => metrics,
    };
    let first = metrics.violations.iter().find_map(|v| trial::VIOLATION_KINDS.iter().find(|k| **k == v.kind));
    let first = first.copied().ok_or_else(|| {
        format!(
            "seed {} of {} in {} shows no violation ({}), so there is nothing to shrink; \
             `sim run {} --algorithm {}` lists the failing seeds",
            req.seed,
            req.label,
            req.file,
            trial::VIOLATION_KINDS.join(", "),
            req.file,
            req.label
        )
    })?;
    Ok(Target::Violation(first))
}

/// Leaves only `label`'s row (and drops `[expect]`, `[explore]`); returns where its parameters
/// are written and what was removed.
fn isolate(doc: &mut DocumentMut, scenario: &Scenario, label: &str) -> (Vec<Seg>, Vec<String>) {
    let mut removed = Vec::new();
    let others: Vec<&str> = scenario.runs.iter().map(|r| r.label.as_str()).filter(|l| *l != label).collect();
    if !others.is_empty() {
        removed.push(format!("removed the other rows: {}", others.join(", ")));
    }
    let variants = doc::len(doc, &path("variants"));
    let variant_at = (0..variants).find(|i| {
        doc::value(doc, &path(&format!("variants.{i}.name"))).and_then(|v| v.as_str().map(str::to_string))
            == Some(label.to_string())
    });
    let row_table = match variant_at {
        Some(i) => {
            for j in (0..variants).rev().filter(|j| *j != i) {
                doc::remove(doc, &path(&format!("variants.{j}")));
            }
            doc.remove("algorithms");
            doc.remove("models");
            path("variants.0")
        }
        None => {
            doc.remove("variants");
            let mut algorithms = Array::new();
            algorithms.push(label);
            if let Some(Item::Value(v)) = doc.get_mut("algorithms") {
                let decor = v.decor().clone();
                *v = Value::Array(algorithms);
                *v.decor_mut() = decor;
            }
            for other in doc::keys(doc, &path("models")).into_iter().filter(|k| k != label) {
                doc::remove(doc, &[Seg::Key("models".into()), Seg::Key(other)]);
            }
            vec![Seg::Key("models".into()), Seg::Key(label.to_string())]
        }
    };
    for table in ["expect", "explore"] {
        if doc.remove(table).is_some() {
            removed.push(format!("removed [{table}]"));
        }
    }
    (row_table, removed)
}

struct State<'a> {
    req: &'a Request<'a>,
    pool: &'a rayon::ThreadPool,
    target: &'a Target,
    /// The row's library preset: every candidate keeps it.
    library: Option<String>,
    doc: DocumentMut,
    witness: Witness,
    steps: Vec<String>,
    seed_runs: u64,
    /// The current row's node count (services and clients): no candidate may add nodes.
    nodes: usize,
    seen: BTreeSet<String>,
    budget_spent: bool,
}

impl State<'_> {
    /// The witness of `text` on the current witness seed, then 0, 1, … within the budget;
    /// none when `stop` cut it.
    fn trial(&mut self, text: &str, max_nodes: usize, stop: &AtomicBool) -> Option<Witness> {
        let left = self.req.budget.saturating_sub(self.seed_runs);
        if left == 0 {
            self.budget_spent = true;
            return None;
        }
        let mut seeds = vec![self.witness.seed];
        seeds.extend((0..).filter(|s| *s != self.witness.seed).take(SEEDS_PER_CANDIDATE - 1));
        seeds.truncate(left.min(SEEDS_PER_CANDIDATE as u64) as usize);
        let req = self.req;
        let bounds = Bounds { max_nodes, library: &self.library };
        match try_text(self.pool, stop, req.file, text, req.models, req.label, self.target, &seeds, &bounds) {
            Trial::Refused | Trial::Stopped => None,
            Trial::Ran { runs, witness } => {
                self.seed_runs += runs;
                witness
            }
        }
    }
}
