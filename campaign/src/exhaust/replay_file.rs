//! A counterexample as a scenario file `sim run` replays exactly: the search's path taken again
//! from the start to learn each step's event key and every latency, then the original scenario
//! rewritten: only the searched row, the workload bound, the path's faults at fixed times and
//! lengths as `[[faults]]`, the path as `[replay]` (with the hold and think times chosen at each
//! acquisition, when they were choices), and an `[expect]` that the violation shows. A path on
//! which the model panicked is taken again inside a panic boundary ([`take_to_panic`]) and
//! written the same way, with no `[expect]`: `sim run` replays it to the panic (exit 3).

use std::panic::{catch_unwind, AssertUnwindSafe};

use locksim_simulator::batch::panic_message;
use locksim_simulator::checker::SeedMetrics;
use locksim_simulator::process::CrashKind;
use locksim_simulator::search::{ChosenTimes, Injection, SearchWorld};
use locksim_simulator::setup::FaultKind;
use locksim_simulator::time::Nanos;
use toml_edit::{value, Array, ArrayOfTables, DocumentMut, Item, Table};

use super::bounds::{Bounds, Property};
use super::search::{judge, Step};
use super::times::TimeChoices;

/// A path taken again: what `[replay]` and `[[faults]]` need, and how the run ended.
#[derive(Clone, Debug)]
pub struct Taken {
    /// Each step's event key.
    pub keys: Vec<String>,
    /// Every latency, in the order the network needed them.
    pub delays_ns: Vec<Nanos>,
    /// The faults, in the order started, with their start times.
    pub faults: Vec<(Injection, Nanos, String)>,
    /// The hold times chosen, in the order the run needed them, each with the node whose step
    /// started it (a fault's end: its key); empty when hold times were no choice.
    pub holds: Vec<(String, Nanos)>,
    /// The think times chosen, likewise.
    pub thinks: Vec<(String, Nanos)>,
    /// The checkers' measure of the path's history.
    pub metrics: SeedMetrics,
}

impl Taken {
    /// No step taken yet, with `metrics` standing for the history so far.
    fn nothing(metrics: SeedMetrics) -> Taken {
        Taken {
            keys: Vec::new(),
            delays_ns: Vec::new(),
            faults: Vec::new(),
            holds: Vec::new(),
            thinks: Vec::new(),
            metrics,
        }
    }
}

/// Takes `path` again from `root` (a copy of it), recording keys, latencies, faults and the
/// hold and think times `choices` chose from.
pub fn take(root: &dyn SearchWorld, path: &[Step], first_delay_ns: Nanos, choices: &TimeChoices) -> Taken {
    let mut world = root.box_clone();
    let mut taken = Taken::nothing(judge(world.as_ref(), false));
    take_into(world.as_mut(), path, first_delay_ns, choices, &mut taken);
    let at_end = world.enabled().is_empty();
    taken.metrics = judge(world.as_ref(), at_end);
    taken
}

/// Latencies written past a panicking step's own: how many the step may need is unknown (it did
/// not return), and past the list `sim run` would draw them; the run ends at the panic, so
/// spares are never read.
const SPARE_DELAYS: usize = 64;

/// Takes `path`, on which the model panicked at its last step, again from `root` inside a panic
/// boundary: what the replay file needs up to the panic (the last step's key, its own latencies
/// and times given, then [`SPARE_DELAYS`] first delays), and the panic's message (`None`: it did
/// not panic this time). The world is dropped at the panic; `metrics` stay empty (unused).
pub fn take_to_panic(
    root: &dyn SearchWorld,
    path: &[Step],
    first_delay_ns: Nanos,
    choices: &TimeChoices,
) -> (Taken, Option<String>) {
    let mut taken = Taken::nothing(SeedMetrics::empty(root.seed(), 0, false));
    let result = catch_unwind(AssertUnwindSafe(|| {
        let mut world = root.box_clone();
        take_into(world.as_mut(), path, first_delay_ns, choices, &mut taken);
    }));
    let message = result.err().map(|payload| panic_message(payload.as_ref()));
    if message.is_some() && taken.keys.len() == path.len() {
        // The last step's key was recorded before it panicked; its latencies and times were not.
        if let Some(Step::Event { delays_ns, times, .. } | Step::Fault { delays_ns, times, .. }) = path.last() {
            taken.delays_ns.extend(delays_ns.iter().copied().chain(std::iter::repeat_n(first_delay_ns, SPARE_DELAYS)));
            let on = taken.keys.last().cloned().unwrap_or_default();
            taken.holds.extend(times.holds_ns.iter().map(|&ns| (on.clone(), ns)));
            taken.thinks.extend(times.thinks_ns.iter().map(|&ns| (on.clone(), ns)));
        }
    }
    (taken, message)
}

/// Takes `path` on `world`, recording into `taken` as it goes (a step's key before the step).
fn take_into(
    world: &mut dyn SearchWorld,
    path: &[Step],
    first_delay_ns: Nanos,
    choices: &TimeChoices,
    taken: &mut Taken,
) {
    for step in path {
        let enabled = world.enabled();
        let (seq, delays, times) = match step {
            Step::Event { seq, delays_ns, times } => (*seq, delays_ns, times),
            Step::Fault { injection, at_ns, delays_ns, times } => {
                let seq = world.inject_fault(injection, *at_ns);
                world.enabled();
                let name = world.nodes()[injection.target].0.clone();
                taken.faults.push((injection.clone(), *at_ns, name));
                (seq, delays_ns, times)
            }
        };
        let key = world.event_key(seq).expect("a path's event is queued");
        let on = match enabled.iter().find(|e| e.seq == seq).and_then(|e| e.node) {
            Some(n) => world.nodes()[n].0.clone(),
            None => key.clone(),
        };
        taken.keys.push(key);
        let n = world.step_timed(seq, delays, first_delay_ns, times);
        taken.delays_ns.extend((0..n.latencies).map(|i| delays.get(i).copied().unwrap_or(first_delay_ns)));
        let ChosenTimes { holds_ns, thinks_ns } = choices.used(times, n);
        taken.holds.extend(holds_ns.into_iter().map(|ns| (on.clone(), ns)));
        taken.thinks.extend(thinks_ns.into_iter().map(|ns| (on.clone(), ns)));
    }
}

/// How a fault reads in a report line: `pause client-0 at 12.000 ms for 9999.000 ms`.
pub fn describe_fault(inj: &Injection, at_ns: Nanos, name: &str) -> String {
    let what = match &inj.kind {
        FaultKind::ClockJump { .. } => format!("clock_jump {name} by {} ms", inj.value),
        k => format!("{} {name}", k.label()),
    };
    let length = match inj.duration_ns {
        Some(d) if !matches!(inj.kind, FaultKind::ClockJump { .. }) => format!(" for {:.3} ms", d as f64 / 1e6),
        _ => String::new(),
    };
    format!("{what} at {:.3} ms{length}", at_ns as f64 / 1e6)
}

/// The original scenario `text` rewritten to replay `taken` for the row `label` (see the module
/// docs). `Err`: the text is not TOML (it parsed once, so this does not happen in practice).
/// `panic`: the path ends with the model's panic (this message), not a violation: the file has
/// no `[expect]`, and its run panics (exit 3).
pub fn scenario_text(
    text: &str,
    label: &str,
    bounds: &Bounds,
    taken: &Taken,
    panic: Option<&str>,
) -> Result<String, String> {
    let mut doc: DocumentMut = text.parse().map_err(|e| format!("the scenario does not parse as TOML again: {e}"))?;
    keep_only_row(&mut doc, label);
    let root = doc.as_table_mut();
    let name = root.get("name").and_then(Item::as_str).unwrap_or("scenario").to_string();
    let seed = if bounds.seed == 0 { String::new() } else { format!(" --seed {}", bounds.seed) };
    let (suffix, what) = match panic {
        None => ("counterexample", format!("The shortest {} sim exhaust found", bounds.property.name())),
        Some(message) => ("panic", format!("The path on which the model panicked ({message}) in sim exhaust")),
    };
    root.insert("name", value(format!("{name}-{label}-{suffix}")));
    root.insert(
        "description",
        value(format!(
            "{what} for `{label}` ({} steps), replayed exactly: the search's faults at fixed times below, and \
             its path of events and message delays in [replay]. Run it with `sim run FILE{seed}`; `sim run \
             FILE --trace` shows every step.",
            taken.keys.len(),
        )),
    );
    root.insert("seeds", value(1));
    root.remove("expect");
    root.remove("explore");
    root.remove("exhaust");
    root.remove("faults");

    let workload = root.entry("workload").or_insert(Item::Table(Table::new()));
    if let Some(w) = workload.as_table_like_mut() {
        w.insert("clients", value(bounds.clients as i64));
        w.insert("acquisitions_per_client", value(bounds.acquisitions as i64));
        // The search's hold and think times, when it was given them: a set of one is every
        // acquisition's; of more, the first is the workload's past the `[replay]` lists below
        // (as in the search).
        if let Some(&h) = bounds.holds_ms.first() {
            w.insert("hold_ms", value(h));
        }
        if let Some(&t) = bounds.thinks_ms.first() {
            w.insert("think_ms", value(t));
        }
    }

    if !taken.faults.is_empty() {
        let mut faults = ArrayOfTables::new();
        for (inj, at_ns, target) in &taken.faults {
            let mut t = Table::new();
            t.insert("kind", value(inj.kind.name()));
            t.insert("target", value(target.as_str()));
            t.insert("at_ms", value(*at_ns as f64 / 1e6));
            match &inj.kind {
                FaultKind::ClockJump { .. } => {
                    t.insert("by_ms", value(inj.value));
                }
                FaultKind::Crash { mode } => {
                    t.insert("mode", value(if *mode == CrashKind::Machine { "machine" } else { "process" }));
                }
                _ => {}
            }
            if let (Some(d), false) = (inj.duration_ns, matches!(inj.kind, FaultKind::ClockJump { .. })) {
                t.insert("duration_ms", value(d as f64 / 1e6));
            }
            faults.push(t);
        }
        root.insert("faults", Item::ArrayOfTables(faults));
    }

    let mut replay = replay_table(&taken.keys, &taken.delays_ns);
    // The hold and think times chosen, in the order the run needs them (over every client).
    for (key, list) in [("hold_ms", &taken.holds), ("think_ms", &taken.thinks)] {
        if !list.is_empty() {
            let times: Array = list.iter().map(|(_, ns)| *ns as f64 / 1e6).collect();
            replay.insert(key, value(times));
        }
    }
    root.insert("replay", Item::Table(replay));
    if panic.is_some() {
        return Ok(doc.to_string());
    }

    let mut expect = Table::new();
    expect.set_implicit(true);
    let mut row = Table::new();
    row.insert(property_metric(bounds.property), value("all"));
    expect.insert(label, Item::Table(row));
    root.insert("expect", Item::Table(expect));
    Ok(doc.to_string())
}

fn property_metric(p: Property) -> &'static str {
    p.metric()
}

/// `doc` with only the row `label`: `algorithms` reduced to it, or `[[variants]]` to its block
/// (a `[replay]` table applies to every row of a file, and a path fits one row), `[models]`
/// dropped with the algorithms.
pub fn keep_only_row(doc: &mut DocumentMut, label: &str) {
    let root = doc.as_table_mut();
    let row_is_algorithm =
        root.get("algorithms").and_then(Item::as_array).is_some_and(|a| a.iter().any(|v| v.as_str() == Some(label)));
    if row_is_algorithm {
        let mut only = Array::new();
        only.push(label);
        root.insert("algorithms", value(only));
        root.remove("variants");
    } else {
        // A variant does not start from `[models.NAME]` (docs/scenario-format.md), and the
        // parser refuses a `[models.NAME]` for an algorithm not listed: both go.
        root.remove("algorithms");
        root.remove("models");
        if let Some(Item::ArrayOfTables(variants)) = root.get_mut("variants") {
            variants.retain(|t| t.get("name").and_then(Item::as_str) == Some(label));
        }
    }
}

/// A `[replay]` table: each step's event key, one a line, and every latency in ms.
pub fn replay_table(keys: &[String], delays_ns: &[Nanos]) -> Table {
    let mut replay = Table::new();
    let mut events = Array::new();
    for k in keys {
        events.push(k.as_str());
    }
    for v in events.iter_mut() {
        v.decor_mut().set_prefix("\n  ");
    }
    events.set_trailing("\n");
    events.set_trailing_comma(true);
    let mut delays = Array::new();
    for d in delays_ns {
        delays.push(*d as f64 / 1e6);
    }
    replay.insert("events", value(events));
    replay.insert("delays_ms", value(delays));
    replay
}
