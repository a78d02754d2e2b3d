//! `sim exhaust`: a systematic, bounded search of one row's schedules. Where `sim run` and `sim
//! explore` draw schedules at random, this enumerates them: which of the events due at one
//! instant happens first, each message's delay from a small set of boundary values, and up to K
//! faults from a menu, each started just before an event of its target. It ends with either the
//! shortest counterexample, written as a scenario `sim run` replays exactly, or a certificate of
//! what was covered ("no violation in every schedule within these bounds"; never "proved").
//! docs/exhaustive.md says what is enumerated and what is abstracted.
//!
//! - [`bounds`]: the bounds and the fault menu, read against the row's parameters
//! - [`search`]: depth-first with a visited set, iterative deepening, the shortest violation; a
//!   model's panic caught, the search stopped, and the path to it kept
//! - [`replay_file`]: a found path as a replayable scenario file
//! - [`times`]: hold and think times chosen at each acquisition
//! - `test_panic` (debug builds only): a world that panics on demand, for the command's tests
//!
//! A panic while the first world is built (the model's setup, its first fingerprint) is caught
//! too, before the search starts: reported like one during the search, but with no path (so no
//! replay file).
//!
//! Symmetry over interchangeable clients is an option (`Bounds::symmetry`): the visited set is
//! then keyed by the world's client-symmetric fingerprint, which renames clients only where the
//! model's state is typed (the report says whether it applied). Partial-order reduction is not
//! done (docs/exhaustive.md says why).

pub mod bounds;
pub mod replay_file;
pub mod search;
#[cfg(debug_assertions)]
pub mod test_panic;
pub mod times;

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use locksim_simulator::batch::panic_message;
use locksim_simulator::directory::{NodeId, NodeKind};
use locksim_simulator::dist::Dist;
use locksim_simulator::scenario::{RunSpec, Scenario};
use locksim_simulator::search::SearchWorld;
use locksim_simulator::setup::Setup;

pub use bounds::{Bounds, MenuFault, Property, Targets};
pub use search::{Found, Incomplete, Panicked, Stats, Step};

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
    /// The counterexample (or the path to the model's panic) as a scenario file's text.
    pub scenario: Option<String>,
    /// The counterexample's faults and the checkers' first violation (or the panic path's
    /// faults), for the report.
    pub story: Vec<String>,
    /// Wall time of the search.
    pub wall: Duration,
    /// Whether the client-symmetric fingerprint renamed clients in this row's world (read at
    /// its start): `false` where symmetry was asked for but the model's state is not typed.
    pub symmetry_applies: bool,
    /// The model panicked while its first world was built, before the search took a step
    /// (`found.panicked` holds the message, with no path, and nothing is written).
    pub first_world_panicked: bool,
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

/// The setting a search runs through with its hold and think times: each set's first value as
/// the workload's constant (a set of one is every acquisition's time; of more, the time a step
/// takes when the search gives none, see [`times`]); an empty set leaves the workload's own.
pub fn timed_setup(base: &Setup, bounds: &Bounds) -> Setup {
    let mut setup = base.clone();
    if let Some(&h) = bounds.holds_ms.first() {
        setup.workload.hold_ms = Dist::Const(h);
    }
    if let Some(&t) = bounds.thinks_ms.first() {
        setup.workload.think_ms = Dist::Const(t);
    }
    setup
}

/// Searches `row` of `scenario` (whose file text is `text`) within `bounds`; `stop` (Ctrl-C) ends
/// it early with a partial certificate; `progress` is called every few thousand states. Hold and
/// think sets of more than one value are choices at each acquisition ([`times`]).
pub fn exhaust(
    scenario: &Scenario,
    text: &str,
    row: &RunSpec,
    bounds: &Bounds,
    stop: &AtomicBool,
    progress: &mut (dyn FnMut(&Stats) + Send),
) -> Result<Report, String> {
    let setup = timed_setup(&bounded_setup(&scenario.setup, bounds)?, bounds);
    #[allow(clippy::disallowed_methods)] // the search's own wall time, not a run's: no run reads it
    let started = std::time::Instant::now();
    // The model's own setup runs here, outside the search's panic boundary: a panic in it is the
    // model's failure too, reported the same way (exit 3), not an unwinding out of the command.
    let built = catch_unwind(AssertUnwindSafe(|| {
        let mut root = row.model.search_world(&setup, &row.params, bounds.seed);
        let pins = menu_pins(bounds, root.nodes());
        root.pin_for_symmetry(&pins);
        #[cfg(debug_assertions)]
        let root = test_panic::wrap(root);
        root
    }));
    let root = match built {
        Ok(root) => root,
        Err(payload) => return Ok(Report::first_world_panic(row, bounds, panic_message(payload.as_ref()), started)),
    };
    check_named_targets(root.as_ref(), bounds)?;
    exhaust_from(root.as_ref(), text, row, bounds, stop, progress)
}

/// `Err` when a menu entry targets a node by a name the row's world does not have (it would
/// never be chosen, and the certificate would cover no such fault): the valid names listed.
fn check_named_targets(root: &dyn SearchWorld, bounds: &Bounds) -> Result<(), String> {
    for m in &bounds.menu {
        if let Targets::Named(name) = &m.targets {
            if !root.nodes().iter().any(|(n, _)| n == name) {
                let names: Vec<&str> = root.nodes().iter().map(|(n, _)| n.as_str()).collect();
                return Err(format!(
                    "--fault {}: no node `{name}` in this row's world ({} clients); valid targets: clients, waiters, \
                     blocked, holders, servers, leader or a node name: {}",
                    m.text,
                    bounds.clients,
                    names.join(", ")
                ));
            }
        }
    }
    Ok(())
}

/// The nodes the fault menu treats apart from their class, kept out of the symmetric
/// fingerprint's renaming (`SearchWorld::pin_for_symmetry`): a node it names (`crash@server-0`),
/// and for `leader` every server (in a leaderless model `leader` is `server-0`). Merging such a
/// node's state with another's would let the search skip faults only one of them can take.
fn menu_pins(bounds: &Bounds, nodes: &[(String, NodeKind)]) -> Vec<NodeId> {
    let mut pins = Vec::new();
    for item in &bounds.menu {
        for (id, (name, kind)) in nodes.iter().enumerate() {
            let named = match &item.targets {
                Targets::Named(want) => want == name,
                Targets::Leader => *kind == NodeKind::Server,
                _ => false,
            };
            if named && !pins.contains(&id) {
                pins.push(id);
            }
        }
    }
    pins
}

/// As [`exhaust`], from `root`, the row's world in its bounded setting (a test may wrap it).
pub fn exhaust_from(
    root: &dyn SearchWorld,
    text: &str,
    row: &RunSpec,
    bounds: &Bounds,
    stop: &AtomicBool,
    progress: &mut (dyn FnMut(&Stats) + Send),
) -> Result<Report, String> {
    #[allow(clippy::disallowed_methods)] // the search's own wall time, not a run's: no run reads it
    let started = std::time::Instant::now();
    // The first world's own reads, before the search's boundary: its copy, fingerprint (the one
    // the visited set keys it by) and whether symmetry applies.
    let first_look = catch_unwind(AssertUnwindSafe(|| {
        let copy = root.box_clone();
        let _ = if bounds.symmetry { copy.fingerprint_symmetric() } else { copy.fingerprint() };
        copy.symmetry_applies()
    }));
    let symmetry_applies = match first_look {
        Ok(applies) => applies,
        Err(payload) => return Ok(Report::first_world_panic(row, bounds, panic_message(payload.as_ref()), started)),
    };
    let found = search::search(root, bounds, stop, progress);
    let wall = started.elapsed();
    let mut story = Vec::new();
    let mut scenario_text = None;
    if let Some(panicked) = &found.panicked {
        // Taken again inside a panic boundary: the replay file up to the panic.
        let choices = times::TimeChoices::of(bounds);
        let (taken, _) = replay_file::take_to_panic(root, &panicked.path, bounds.delays_ns[0], &choices);
        for (inj, at_ns, name) in &taken.faults {
            story.push(format!("fault: {}", replay_file::describe_fault(inj, *at_ns, name)));
        }
        if let Some(key) = taken.keys.last() {
            story.push(format!("panicked at step {}: {key}", taken.keys.len()));
        }
        let file = replay_file::scenario_text(text, &row.label, bounds, &taken, Some(&panicked.message))?;
        scenario_text = Some(file);
    } else if let Some(path) = &found.counterexample {
        let choices = times::TimeChoices::of(bounds);
        let taken = replay_file::take(root, path, bounds.delays_ns[0], &choices);
        if !bounds.holds_ms.is_empty() || !bounds.thinks_ms.is_empty() {
            story.push(format!("workload: {}", pair_words(bounds)));
        }
        for (what, list) in [("hold", &taken.holds), ("think", &taken.thinks)] {
            if !list.is_empty() {
                let each: Vec<String> = list.iter().map(|(who, ns)| format!("{who} {}", ns_words(*ns))).collect();
                story.push(format!("{what} times chosen, in order: {}", each.join(", ")));
            }
        }
        for (inj, at_ns, name) in &taken.faults {
            story.push(format!("fault: {}", replay_file::describe_fault(inj, *at_ns, name)));
        }
        if let Some(v) = taken.metrics.violations.first() {
            story.push(format!("{} at {:.3} ms: {}", v.kind, v.at_ns as f64 / 1e6, v.detail));
        }
        scenario_text = Some(replay_file::scenario_text(text, &row.label, bounds, &taken, None)?);
    }
    Ok(Report {
        label: row.label.clone(),
        model: row.model.name(),
        bounds: bounds.clone(),
        found,
        scenario: scenario_text,
        story,
        wall,
        symmetry_applies,
        first_world_panicked: false,
    })
}

/// A chosen time in words: `500 ms` (fractions only where there are some).
fn ns_words(ns: u64) -> String {
    format!("{} ms", ns as f64 / 1e6)
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
    /// The report of a model that panicked (with `message`) while its first world was built,
    /// before the search took a step: no path, so no replay file.
    fn first_world_panic(row: &RunSpec, bounds: &Bounds, message: String, started: std::time::Instant) -> Report {
        Report {
            label: row.label.clone(),
            model: row.model.name(),
            bounds: bounds.clone(),
            found: Found {
                counterexample: None,
                stats: Stats::default(),
                incomplete: None,
                panicked: Some(Panicked { message, path: Vec::new() }),
            },
            scenario: None,
            story: vec![
                "no replay file written: the panic came before the search's first step, so there is no path to replay"
                    .to_string(),
            ],
            wall: started.elapsed(),
            symmetry_applies: false,
            first_world_panicked: true,
        }
    }

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
            (true, true) => {
                "clients (states that differ by a renaming of interchangeable clients, or of interchangeable servers \
                 such as Redlock's masters under parallel requests, explored once)"
            }
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
            _ if self.found.panicked.is_some() => {
                let p = self.found.panicked.as_ref().expect("matched");
                if self.first_world_panicked {
                    writeln!(
                        f,
                        "{} ({}): the model panicked building the first world, before the search: {}",
                        self.label, self.model, p.message
                    )?;
                    for line in &self.story {
                        writeln!(f, "  {line}")?;
                    }
                    return write!(f, "  bounds: {}", self.bounds_line());
                }
                writeln!(
                    f,
                    "{} ({}): the model panicked, search stopped (path of {} steps): {}",
                    self.label,
                    self.model,
                    p.path.len(),
                    p.message
                )?;
                for line in &self.story {
                    writeln!(f, "  {line}")?;
                }
            }
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
