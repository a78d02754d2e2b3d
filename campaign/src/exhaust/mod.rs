//! `sim exhaust`: a systematic, bounded search of one row's schedules. Where `sim run` and `sim
//! explore` draw schedules at random, this enumerates them: which of the events due at one
//! instant happens first, each message's delay from a small set of boundary values, and up to K
//! faults from a menu, each started just before an event of its target. It ends with either the
//! shortest counterexample, written as a scenario `sim run` replays exactly, or a certificate of
//! what was covered ("no violation in every schedule within these bounds"; never "proved").
//! docs/exhaustive.md says what is enumerated and what is abstracted.
//!
//! - [`bounds`]: the bounds and the fault menu, read against the row's parameters
//! - [`search`]: depth-first with a visited set, iterative deepening, the shortest violation
//! - [`replay_file`]: a found path as a replayable scenario file
//!
//! Symmetry over interchangeable clients is an option (`Bounds::symmetry`): the visited set is
//! then keyed by the world's client-symmetric fingerprint, which renames clients only where the
//! model's state is typed (the report says whether it applied). Partial-order reduction is not
//! done (docs/exhaustive.md says why).

pub mod bounds;
pub mod replay_file;
pub mod search;

use std::fmt;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use locksim_simulator::dist::Dist;
use locksim_simulator::scenario::{RunSpec, Scenario};
use locksim_simulator::setup::Setup;

pub use bounds::{Bounds, MenuFault, Property, Targets};
pub use search::{Found, Incomplete, Stats, Step};

/// One search's result, ready to print.
#[derive(Clone, Debug)]
pub struct Report {
    /// The row searched.
    pub label: String,
    /// Its model.
    pub model: &'static str,
    /// The bounds.
    pub bounds: Bounds,
    /// What the search found and counted.
    pub found: Found,
    /// The counterexample as a scenario file's text, when one was found.
    pub scenario: Option<String>,
    /// The counterexample's faults and the checkers' first violation, for the report.
    pub story: Vec<String>,
    /// Wall time of the search.
    pub wall: Duration,
    /// Whether the client-symmetric fingerprint renamed clients in this row's world (read at
    /// its start): `false` where symmetry was asked for but the model's state is not typed.
    pub symmetry_applies: bool,
}

/// The setting a search runs the row through: the scenario's, with the workload bounded and its
/// own `[[faults]]` and `[replay]` dropped (the fault menu replaces them). `Err`: a setting the
/// search cannot enumerate (loss or duplication, which it does not choose).
pub fn bounded_setup(setup: &Setup, bounds: &Bounds) -> Result<Setup, String> {
    let n = &setup.network;
    if n.loss > 0.0
        || n.duplicate > 0.0
        || n.links.iter().any(|l| l.loss.unwrap_or(0.0) > 0.0 || l.duplicate.unwrap_or(0.0) > 0.0)
    {
        return Err(
            "[network] loss and duplicate must be 0 for sim exhaust: it chooses delays, not losses (a lost message \
             on these TCP links is a delay; give it as a --delays value)"
                .to_string(),
        );
    }
    let mut s = setup.clone();
    s.workload.clients = bounds.clients;
    s.workload.acquisitions_per_client = Some(bounds.acquisitions);
    s.faults.clear();
    s.replay = None;
    Ok(s)
}

/// The hold and think times to search, each pair in turn: every pair of `bounds.holds_ms` and
/// `bounds.thinks_ms` (`None`: the workload's own, when a set is empty).
pub fn workload_pairs(bounds: &Bounds) -> Vec<(Option<f64>, Option<f64>)> {
    let some = |v: &[f64]| if v.is_empty() { vec![None] } else { v.iter().copied().map(Some).collect() };
    let thinks = some(&bounds.thinks_ms);
    some(&bounds.holds_ms).into_iter().flat_map(|h| thinks.iter().map(move |&t| (h, t))).collect()
}

/// Searches `row` of `scenario` (whose file text is `text`) within `bounds`; `stop` (Ctrl-C) ends
/// it early with a partial certificate; `progress` is called every few thousand states. With
/// sets of hold or think times, each pair is searched in turn (every client holding and
/// thinking that long): the counts add up, and once a pair gave a counterexample the next ones
/// search only for a shorter one, so the one reported is the shortest over all pairs.
pub fn exhaust(
    scenario: &Scenario,
    text: &str,
    row: &RunSpec,
    bounds: &Bounds,
    stop: &AtomicBool,
    progress: &mut (dyn FnMut(&Stats) + Send),
) -> Result<Report, String> {
    let base = bounded_setup(&scenario.setup, bounds)?;
    #[allow(clippy::disallowed_methods)] // the search's own wall time, not a run's: no run reads it
    let started = std::time::Instant::now();
    let mut total = Stats::default();
    let mut incomplete = None;
    let mut best: Option<(Vec<Step>, Bounds, Setup)> = None;
    let mut symmetry_applies = false;
    for (hold_ms, think_ms) in workload_pairs(bounds) {
        let mut setup = base.clone();
        let mut pair = bounds.clone();
        pair.holds_ms = hold_ms.into_iter().collect();
        pair.thinks_ms = think_ms.into_iter().collect();
        if let Some(h) = hold_ms {
            setup.workload.hold_ms = Dist::Const(h);
        }
        if let Some(t) = think_ms {
            setup.workload.think_ms = Dist::Const(t);
        }
        if let Some((path, ..)) = &best {
            // Only a shorter counterexample can replace the one found.
            if path.len() <= 1 {
                break;
            }
            pair.max_depth = pair.max_depth.min(path.len() as u32 - 1);
            pair.start_depth = pair.start_depth.min(pair.max_depth);
        }
        let root = row.model.search_world(&setup, &row.params, bounds.seed);
        symmetry_applies = root.symmetry_applies();
        let found = search::search(root.as_ref(), &pair, stop, progress);
        total.states += found.stats.states;
        total.unique += found.stats.unique;
        total.max_depth = total.max_depth.max(found.stats.max_depth);
        total.rounds += found.stats.rounds;
        total.limit = found.stats.limit;
        match (found.counterexample, found.incomplete) {
            (Some(path), _) => best = Some((path, pair, setup)),
            // A pair cut at a depth lowered by an earlier counterexample is not incomplete: it
            // has nothing shorter, which is all that was asked of it.
            (None, Some(Incomplete::DepthBound)) if best.is_some() => {}
            (None, Some(why)) => {
                let stopped = why == Incomplete::Stopped;
                incomplete.get_or_insert(why);
                if stopped {
                    break;
                }
            }
            (None, None) => {}
        }
    }
    let wall = started.elapsed();
    let mut story = Vec::new();
    let mut scenario_text = None;
    let mut counterexample = None;
    if let Some((path, pair, setup)) = best {
        let root = row.model.search_world(&setup, &row.params, bounds.seed);
        let taken = replay_file::take(root.as_ref(), &path, bounds.delays_ns[0]);
        if !bounds.holds_ms.is_empty() || !bounds.thinks_ms.is_empty() {
            story.push(format!("workload: {}", pair_words(&pair)));
        }
        for (inj, at_ns, name) in &taken.faults {
            story.push(format!("fault: {}", replay_file::describe_fault(inj, *at_ns, name)));
        }
        if let Some(v) = taken.metrics.violations.first() {
            story.push(format!("{} at {:.3} ms: {}", v.kind, v.at_ns as f64 / 1e6, v.detail));
        }
        scenario_text = Some(replay_file::scenario_text(text, &row.label, &pair, &taken)?);
        counterexample = Some(path);
        incomplete = None;
    }
    Ok(Report {
        label: row.label.clone(),
        model: row.model.name(),
        bounds: bounds.clone(),
        found: Found { counterexample, stats: total, incomplete },
        scenario: scenario_text,
        story,
        wall,
        symmetry_applies,
    })
}

/// The hold and think times of a search, in words (`hold {100, 500} ms, think {0} ms`); empty
/// when both are the workload's own.
fn pair_words(b: &Bounds) -> String {
    let set = |v: &[f64]| {
        if v.is_empty() {
            "the workload's".to_string()
        } else {
            format!("{{{}}} ms", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
        }
    };
    if b.holds_ms.is_empty() && b.thinks_ms.is_empty() {
        return String::new();
    }
    format!("hold {}, think {}", set(&b.holds_ms), set(&b.thinks_ms))
}

impl Report {
    /// The bounds in one line.
    pub fn bounds_line(&self) -> String {
        let b = &self.bounds;
        let menu: Vec<&str> = b.menu.iter().map(|m| m.text.as_str()).collect();
        format!(
            "{} clients x {} acquisition{}{}, at most {} fault{}{} from [{}], delays {{{}}} (at most {} message{} off the first), depth <= {} steps, seed {}",
            b.clients,
            b.acquisitions,
            if b.acquisitions == 1 { "" } else { "s" },
            match pair_words(b) {
                w if w.is_empty() => w,
                w => format!(" ({w})"),
            },
            b.faults,
            if b.faults == 1 { "" } else { "s" },
            if b.distinct_faults { " (each entry at most once)" } else { "" },
            menu.join(" "),
            b.delays_text,
            b.slow_messages,
            if b.slow_messages == 1 { "" } else { "s" },
            b.max_depth,
            b.seed
        )
    }

    /// What the visited set merged: `off`, `clients` (interchangeable clients renamed), or on
    /// but not applied (the model's state has no typed fingerprint to rename clients in).
    pub fn symmetry_words(&self) -> &'static str {
        match (self.bounds.symmetry, self.symmetry_applies) {
            (false, _) => "off",
            (true, true) => "clients (states that differ by a renaming of interchangeable clients explored once)",
            (true, false) => "asked for, not applied (this model's state has no typed fingerprint yet)",
        }
    }

    /// Unique states per second of wall time.
    pub fn unique_per_s(&self) -> f64 {
        self.found.stats.unique as f64 / self.wall.as_secs_f64().max(1e-9)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.found.stats;
        let prop = self.bounds.property.name();
        match (&self.found.counterexample, &self.found.incomplete) {
            (Some(path), _) => {
                writeln!(f, "{} ({}): {prop} found, shortest path {} steps", self.label, self.model, path.len())?;
                for line in &self.story {
                    writeln!(f, "  {line}")?;
                }
            }
            (None, None) => writeln!(
                f,
                "{} ({}): no {prop} in every schedule within these bounds (search complete)",
                self.label, self.model
            )?,
            (None, Some(why)) => {
                let why = match why {
                    Incomplete::DepthBound => "a path was still going at the depth bound",
                    Incomplete::VisitedFull => "the visited set reached its memory bound (--max-states)",
                    Incomplete::Stopped => "interrupted",
                };
                writeln!(
                    f,
                    "{} ({}): search incomplete ({why}); no {prop} in the schedules searched",
                    self.label, self.model
                )?;
            }
        }
        writeln!(f, "  bounds: {}", self.bounds_line())?;
        writeln!(f, "  symmetry: {}", self.symmetry_words())?;
        writeln!(
            f,
            "  states explored {}, unique states {} (branch points), largest depth {}, rounds {} (last depth limit {})",
            s.states, s.unique, s.max_depth, s.rounds, s.limit
        )?;
        write!(f, "  wall time {:.2} s ({:.0} unique states/s)", self.wall.as_secs_f64(), self.unique_per_s())
    }
}
